// html_combined.cc — the pages of the combined-profile HTML report (see
// html_combined.h).
#include "reconstruct/html_combined.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/html_assets.h"
#include "reconstruct/html_combined_items.h"
#include "reconstruct/html_writer.h"
#include "reconstruct/output_file.h"

namespace ballarus {

namespace {

// What the pages share.
struct Site {
  const CombinedProfile& c;
  const CombinedHtmlOptions& o;
  std::string title;
  std::vector<ListedFunction> fns;
  PathLines path_lines;
  SourceFiles sources;

  std::string PageName(const ListedFunction& f) const {
    return fmt::format("fn{}.html", f.page);
  }
  // The function's name, linked to its page when it ever ran; its TU when
  // another TU has a function of that name.
  std::string Link(const ListedFunction& f, const std::string& anchor = "") const {
    std::string name = HtmlEscape(f.name());
    if (f.same_name_elsewhere)
      name += " <span class=\"note\">(" + HtmlEscape(f.tu->tu.source) + ")</span>";
    if (!f.stats->touched()) return name;
    return fmt::format("<a href=\"{}{}\">{}</a>", PageName(f), anchor, name);
  }
  std::string Where(const ListedFunction& f) const {
    return HtmlEscape(f.file()) + ":" + std::to_string(f.fn->line);
  }
};

std::string Head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>" +
         HtmlEscape(title) +
         "</title><link rel=\"stylesheet\" href=\"report.css\">"
         "<script src=\"report.js\"></script></head>\n<body>\n";
}

const char* kFoot = "</body></html>\n";

// The observations, and how to read the statistics.
std::string Observations(const Site& s) {
  std::string h = fmt::format(
      "<p class=\"note\">Combined profile <code>{}</code>: <b id=\"n\">{}</b> "
      "observations (runs or named tests), histograms of {} bins.  Per "
      "function, path, branch and line: the mean count over the "
      "observations, the standard deviation (population), CV = stddev / "
      "mean, the smallest and largest count, how many observations never "
      "executed it, and a histogram of the counts (bin 0 holds the zeros, "
      "the others ranges growing by powers of two; hover a column for its "
      "bounds).  <a href=\"varies.html\">What varies most</a>.</p>\n",
      HtmlEscape(s.o.profile), s.c.n(), s.c.bins());
  h += "<details><summary>Observations</summary><ol id=\"observations\">";
  for (const std::string& label : s.c.labels())
    h += "<li>" + HtmlEscape(label) + "</li>";
  return h + "</ol></details>\n";
}

// index.html: every function, most called (mean entry count) first.
std::string IndexPage(const Site& s) {
  std::vector<size_t> order(s.fns.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return s.fns[a].entry->sum() > s.fns[b].entry->sum();
  });
  std::string h = Head(s.title) + "<h1>" + HtmlEscape(s.title) + "</h1>\n";
  h += Observations(s);
  h += "<h2>Functions</h2>\n<p class=\"note\">Calls (the entry count) per "
       "observation; most called first.</p>\n<table class=\"sortable\" "
       "id=\"functions\"><thead><tr><th class=\"l\">function</th><th "
       "class=\"l\">where</th>" +
       StatsHeaderCells() + "</tr></thead><tbody>\n";
  for (size_t k : order) {
    const ListedFunction& f = s.fns[k];
    h += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>{}</tr>\n",
                     s.Link(f), s.Where(f), StatsCells(*f.entry));
  }
  return h + "</tbody></table>\n" + kFoot;
}

// A function's paths by mean (sum) descending, ties by number; the first
// `top`.
std::vector<std::pair<uint64_t, const CombinedStats*>> HotPaths(
    const ListedFunction& f, uint64_t top) {
  std::vector<std::pair<uint64_t, const CombinedStats*>> paths;
  for (const auto& [number, stats] : f.stats->paths)
    paths.emplace_back(number, &stats);
  std::stable_sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) {
    return a.second->sum() > b.second->sum();
  });
  if (paths.size() > top) paths.resize(top);
  return paths;
}

std::string PathsSection(Site* s, const ListedFunction& f) {
  if (f.stats->paths.empty()) return "";
  std::string h = fmt::format(
      "<h2>Hottest paths</h2>\n<p class=\"note\">Ball–Larus paths by mean "
      "count; {} of them ran in some observation.  Lines: the source lines "
      "the path goes through.</p>\n<table class=\"sortable\" id=\"paths\">"
      "<thead><tr><th>path</th><th class=\"l\">lines</th>{}</tr></thead>"
      "<tbody>\n",
      f.stats->paths.size(), StatsHeaderCells());
  for (const auto& [number, stats] : HotPaths(f, s->o.paths_per_function))
    h += fmt::format(
        "<tr id=\"path-{}\"><td data-v=\"{}\">{}</td><td class=\"l\">{}</td>"
        "{}</tr>\n",
        number, number, number,
        HtmlEscape(s->path_lines.Text(*f.fn, f.tu->tu, number)),
        StatsCells(*stats));
  return h + "</tbody></table>\n";
}

std::string BranchesSection(const Site& s, const ListedFunction& f) {
  const std::vector<size_t> branches = BranchEdges(*f.fn);
  if (branches.empty()) return "";
  std::string h =
      "<h2>Branches</h2>\n<table class=\"sortable\" id=\"branches\"><thead>"
      "<tr><th class=\"l\">branch</th>" +
      StatsHeaderCells() + "</tr></thead><tbody>\n";
  for (size_t e : branches)
    h += fmt::format("<tr id=\"edge-{}\"><td class=\"l\">{}</td>{}</tr>\n", e,
                     HtmlEscape(BranchLabel(*f.fn, e)),
                     StatsCells(s.c.Edge(*f.stats, e)));
  return h + "</tbody></table>\n";
}

// Its lines: mean ± stddev and the rest, with the source text.
std::string LinesSection(Site* s, const ListedFunction& f) {
  if (f.stats->lines.empty()) return "";
  std::string h =
      "<h2>Lines</h2>\n<table class=\"src\" id=\"lines\"><thead><tr><th>line"
      "</th><th>mean ± stddev</th><th>min–max</th><th>zero in</th><th "
      "class=\"l\">histogram</th><th class=\"l\">source</th></tr></thead>"
      "<tbody>\n";
  for (const auto& [where, stats] : f.stats->lines) {
    const auto [file, line] = where;
    const std::string* text = s->sources.Line(SourcePath(f.tu->tu, file), line);
    h += fmt::format(
        "<tr id=\"L{}{}\"><td class=\"ln\">{}</td>{}<td class=\"range\">{}–{}"
        "</td><td class=\"zeros\">{}</td><td>{}</td><td class=\"code\">{}</td>"
        "</tr>\n",
        file == f.fn->file ? "" : fmt::format("{}-", file), line, line,
        MeanSpreadCell(stats), stats.min(), stats.max(), stats.histogram()[0],
        HistogramSvg(stats), text ? HtmlEscape(*text) : "");
  }
  return h + "</tbody></table>\n";
}

// fn<K>.html: one function that ran in some observation.
std::string FunctionPage(Site* s, const ListedFunction& f) {
  std::string h = Head(f.name() + " — " + s->title);
  h += "<p><a href=\"index.html\">index</a> · <a href=\"varies.html\">varies "
       "most</a></p>\n<h1>" +
       HtmlEscape(f.name()) + "</h1>\n";
  h += fmt::format(
      "<p class=\"note\">{}, translation unit <code>{}</code>; {} "
      "observations.</p>\n",
      s->Where(f), HtmlEscape(f.tu->tu.source), s->c.n());
  h += "<table id=\"entry\"><thead><tr><th class=\"l\"></th>" +
       StatsHeaderCells() + "</tr></thead><tbody><tr><td class=\"l\">calls"
       "</td>" + StatsCells(*f.entry) + "</tr></tbody></table>\n";
  h += PathsSection(s, f);
  h += BranchesSection(*s, f);
  h += LinesSection(s, f);
  return h + kFoot;
}

// A path or a branch, for the varies-most page.
struct Candidate {
  const ListedFunction* f;
  bool path;
  uint64_t id;  // path number or edge index
  const CombinedStats* stats;
};

std::vector<Candidate> Candidates(const Site& s) {
  std::vector<Candidate> out;
  for (const ListedFunction& f : s.fns) {
    if (!f.stats->touched()) continue;
    for (const auto& [number, stats] : f.stats->paths)
      out.push_back({&f, true, number, &stats});
    for (size_t e : BranchEdges(*f.fn))
      out.push_back({&f, false, e, &s.c.Edge(*f.stats, e)});
  }
  return out;
}

std::string CandidateRows(Site* s, const std::vector<Candidate>& all,
                          const std::vector<size_t>& chosen) {
  std::string h;
  for (size_t k : chosen) {
    const Candidate& c = all[k];
    const std::string what =
        c.path ? fmt::format("path {}: lines {}", c.id,
                             s->path_lines.Text(*c.f->fn, c.f->tu->tu, c.id))
               : BranchLabel(*c.f->fn, c.id);
    h += fmt::format(
        "<tr class=\"{}\"><td class=\"l\">{}</td><td class=\"l\"><a "
        "href=\"{}#{}-{}\">{}</a></td>{}</tr>\n",
        c.path ? "path" : "branch", s->Link(*c.f), s->PageName(*c.f),
        c.path ? "path" : "edge", c.id, HtmlEscape(what), StatsCells(*c.stats));
  }
  return h;
}

std::string CandidateTable(const char* id, const std::string& rows) {
  return fmt::format(
      "<table class=\"sortable\" id=\"{}\"><thead><tr><th class=\"l\">"
      "function</th><th class=\"l\">path or branch</th>{}</tr></thead><tbody>"
      "\n{}</tbody></table>\n",
      id, StatsHeaderCells(), rows);
}

// varies.html: hot in some observations and never in others; then the
// most variable by CV.
std::string VariesPage(Site* s) {
  const VariationOptions& v = s->o.variation;
  const std::vector<Candidate> all = Candidates(*s);
  std::vector<const CombinedStats*> stats;
  for (const Candidate& c : all) stats.push_back(c.stats);
  const std::vector<size_t> hot_never = RankHotAndNever(stats, v.hot);
  const std::vector<size_t> variable = RankByVariation(stats, v);
  std::string h = Head("varies most — " + s->title);
  h += "<p><a href=\"index.html\">index</a></p>\n<h1>What varies most</h1>\n";
  h += fmt::format(
      "<p class=\"note\">Ball–Larus paths and branches over the {} "
      "observations.</p>\n<h2>Hot in some, never in others</h2>\n<p "
      "class=\"note\">Every path and branch that no observation executed "
      "in some of them (min 0) and that one executed at least {} times "
      "(max ≥ {}, <code>--hot</code>); largest max first.  {} of "
      "them.</p>\n",
      s->c.n(), std::max<uint64_t>(v.hot, 1), std::max<uint64_t>(v.hot, 1),
      hot_never.size());
  h += CandidateTable("hot-and-never", CandidateRows(s, all, hot_never));
  h += fmt::format(
      "<h2>Most variable</h2>\n<p class=\"note\">By coefficient of "
      "variation (CV = stddev / mean), among those with a mean of at "
      "least {} (<code>--vary-floor</code>); the first {} "
      "(<code>--vary-top</code>).  A count in one observation out of N, "
      "zero in the others, has the largest CV: √(N−1).</p>\n",
      v.mean_floor, v.top);
  h += CandidateTable("most-variable", CandidateRows(s, all, variable));
  return h + kFoot;
}

void WritePage(const std::string& dir, const std::string& name,
               const std::string& text) {
  WriteOutputFileOrFail(dir + "/" + name, text);
}

}  // namespace

size_t WriteCombinedHtmlReport(const CombinedProfile& c,
                               const CombinedHtmlOptions& o) {
  if (mkdir(o.out_dir.c_str(), 0755) != 0 && errno != EEXIST)
    Fail(o.out_dir, "cannot create the directory");
  struct stat st;
  if (stat(o.out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    Fail(o.out_dir, "not a directory");
  Site s{c, o, o.title.empty() ? "ballarus combined report: " + o.profile : o.title,
         ListFunctions(c), {}, {}};
  WritePage(o.out_dir, "report.css", std::string(kReportCss) + kCombinedCss);
  WritePage(o.out_dir, "report.js", kReportJs);
  WritePage(o.out_dir, "index.html", IndexPage(s));
  WritePage(o.out_dir, "varies.html", VariesPage(&s));
  size_t pages = 2;
  for (const ListedFunction& f : s.fns)
    if (f.stats->touched()) {
      WritePage(o.out_dir, s.PageName(f), FunctionPage(&s, f));
      ++pages;
    }
  return pages;
}

}  // namespace ballarus
