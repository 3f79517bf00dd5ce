// html_writer.cc — the HTML report (see html_writer.h).
#include "reconstruct/html_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/coverage_summary.h"
#include "reconstruct/html_assets.h"
#include "reconstruct/html_cfg.h"
#include "reconstruct/html_functions.h"
#include "reconstruct/html_tests.h"
#include "reconstruct/output_file.h"
#include "reconstruct/progress.h"
#include "reconstruct/source_text.h"
#include "reconstruct/text_writer.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

std::string HtmlEscape(const std::string& raw) {
  const std::string s = Printable(raw);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

using report::FunctionReport;
using report::PathReport;
using report::Report;

std::string Head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>" +
         HtmlEscape(title) +
         "</title><link rel=\"stylesheet\" href=\"report.css\">"
         "<script src=\"report.js\"></script></head>\n<body>\n";
}

std::string Percent(uint64_t hit, uint64_t total) {
  if (total == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * hit / total);
}

std::string RateClass(uint64_t hit, uint64_t total) {
  if (total == 0) return "";
  const double r = static_cast<double>(hit) / total;
  return r >= 0.9 ? "hi" : r >= 0.75 ? "mid" : "lo";
}

// One "hit / total  %" group of cells, sortable by the percentage.
std::string RateCells(uint64_t hit, uint64_t total) {
  const double v = total ? 100.0 * hit / total : -1;
  const int width = total ? static_cast<int>(60.0 * hit / total + 0.5) : 0;
  return fmt::format(
      "<td data-v=\"{:.4f}\"><span class=\"barbg\"><span class=\"bar\" "
      "style=\"width:{}px\"></span></span></td><td data-v=\"{:.4f}\" "
      "class=\"{}\">{}</td><td data-v=\"{}\">{} / {}</td>",
      v, width, v, RateClass(hit, total), Percent(hit, total), total, hit,
      total);
}

std::string RateHeader(const char* what) {
  return fmt::format("<th></th><th>{}</th><th>hit / total</th>", what);
}

// Writes `path` whole (reconstruct/output_file.h); Fail names it otherwise.
void WriteFile(const std::string& path, const std::string& text) {
  WriteOutputFileOrFail(path, text);
}

std::string Dirname(const std::string& p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string CommonDir(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  std::string common = Dirname(paths[0]);
  for (const std::string& p : paths)
    while (!common.empty() && common != "/" &&
           !(p.size() > common.size() && p.compare(0, common.size(), common) == 0 &&
             p[common.size()] == '/'))
      common = Dirname(common);
  return common;
}

std::string Relative(const std::string& path, const std::string& root) {
  if (!root.empty() && root != "/" && path.size() > root.size() &&
      path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
    return path.substr(root.size() + 1);
  return path;
}

long double CountOf(const Count& c) {
  return c ? static_cast<long double>(*c) : 0;
}

std::string CountText(long double c) {
  return fmt::format("{:.0f}", static_cast<double>(c));
}

// A path's lines in file `file` as the space-separated list report.js
// highlights.
std::string PathLines(const PathReport& p, uint32_t file_page,
                      const std::vector<int64_t>& page_of_file) {
  std::string s;
  std::set<uint32_t> seen;
  for (const report::SourceLine& l : p.lines)
    if (page_of_file[l.file] == file_page && seen.insert(l.line).second)
      s += (s.empty() ? "" : " ") + std::to_string(l.line);
  return s;
}

std::string PathId(size_t function, size_t rank) {
  return fmt::format("path-{}-{}", function, rank);
}

// The dot source of function fi's CFG when its picture was not drawn.
std::string GvName(size_t fi) { return fmt::format("cfg{}.gv", fi); }

// A hot path of the program: (function, rank within the function).
struct Hot {
  size_t function, rank;
};

// What the pages share: the report and the choices, which page shows
// which file, the functions and paths shown, the CFG pictures.
struct Site {
  Site(const Report& report, const FileFilter& file_filter,
       const HtmlOptions& options)
      : r(report), filter(file_filter), o(options) {}

  const Report& r;
  const FileFilter& filter;
  const HtmlOptions& o;
  coverage::Summary summary;
  std::string title;
  std::string root;                   // the files' common directory
  std::vector<int64_t> page_of_file;  // Report file -> page, or -1
  // Functions shown, each source function once (html_functions.h);
  // indices into it are the pages' function numbers.
  std::vector<ShownFunction> fns;
  std::vector<size_t> shown;          // 0 .. fns.size() - 1
  std::vector<size_t> hottest;        // the same, most calls first
  long double program_paths = 0;      // the program's path executions
  std::vector<Hot> hot_paths;         // the index's, hottest first
  std::map<size_t, CfgPicture> cfg_of;  // function -> its CFG picture
  bool any_paths = false;             // some function shown has paths
  const TestProvenance* tests = nullptr;  // named runs, or null

  const FunctionReport& F(size_t fi) const { return fns[fi].f; }
  std::string PageName(size_t page) const {
    return fmt::format("f{}.html", page);
  }
  std::string FunctionLink(size_t fi) const {
    const FunctionReport& f = fns[fi].f;
    return fmt::format("<a href=\"{}#fn{}\">{}</a>",
                       PageName(page_of_file[f.file]), fi,
                       HtmlEscape(f.display_name()));
  }
  std::string Where(const FunctionReport& f) const {
    return fmt::format(
        "<a href=\"{}#L{}\">{}:{}</a>", PageName(page_of_file[f.file]), f.line,
        HtmlEscape(Relative(summary.files[page_of_file[f.file]].path, root)),
        f.line);
  }
  // Paths listed per function: the page's own, and those the index links.
  uint64_t PathsKept() const {
    return std::max<uint64_t>(o.paths_per_function, o.top_paths);
  }
};

// Pages: one per file of the summary; their common directory.
void PlanPages(Site* s) {
  std::vector<std::string> paths;
  for (const coverage::FileCoverage& f : s->summary.files)
    paths.push_back(f.path);
  s->root = CommonDir(paths);
  std::map<std::string, size_t> page_of_path;
  for (size_t i = 0; i < s->summary.files.size(); ++i)
    page_of_path[s->summary.files[i].path] = i;
  s->page_of_file.assign(s->r.files.size(), -1);
  for (size_t f = 0; f < s->r.files.size(); ++f) {
    if (!s->filter.Keep(static_cast<uint32_t>(f))) continue;
    auto it = page_of_path.find(s->filter.AbsolutePath(static_cast<uint32_t>(f)));
    if (it != page_of_path.end())
      s->page_of_file[f] = static_cast<int64_t>(it->second);
  }
}

// Functions shown (each once), hottest first; the program's hottest paths
// among them.
void ChooseFunctionsAndPaths(Site* s) {
  const Report& r = s->r;
  std::vector<size_t> kept;
  for (size_t i = 0; i < r.functions.size(); ++i)
    if (s->filter.KeepFunction(r.functions[i]) &&
        s->page_of_file[r.functions[i].file] >= 0)
      kept.push_back(i);
  s->fns = GroupFunctionCopies(r, kept);
  for (size_t fi = 0; fi < s->fns.size(); ++fi) s->shown.push_back(fi);
  s->hottest = s->shown;
  std::stable_sort(s->hottest.begin(), s->hottest.end(), [&](size_t a, size_t b) {
    return CountOf(s->F(a).execution_count) > CountOf(s->F(b).execution_count);
  });
  for (const FunctionReport& f : r.functions)
    if (f.paths) s->program_paths += static_cast<long double>(f.paths->total);
  for (size_t fi : s->shown)
    if (s->F(fi).paths)
      for (size_t k = 0; k < s->F(fi).paths->executed.size() && k < s->PathsKept();
           ++k)
        s->hot_paths.push_back({fi, k});
  std::stable_sort(s->hot_paths.begin(), s->hot_paths.end(),
                   [&](const Hot& a, const Hot& b) {
                     return s->F(a.function).paths->executed[a.rank].count >
                            s->F(b.function).paths->executed[b.rank].count;
                   });
  if (s->hot_paths.size() > s->o.top_paths) s->hot_paths.resize(s->o.top_paths);
  for (const ShownFunction& f : s->fns) s->any_paths |= f.f.paths.has_value();
}

// The modes the profile's translation units were built in: "edge",
// "naive and edge", ...
std::string BuildModes(const Report& r) {
  uint32_t flags = 0;
  for (const report::TuReport& tu : r.tus) flags |= tu.flags;
  std::vector<std::string> modes;
  if (flags & BALLARUS_META_F_NAIVE) modes.push_back("naive");
  if (flags & BALLARUS_META_F_EDGE) modes.push_back("edge");
  if (flags & BALLARUS_META_F_PATH) modes.push_back("path");
  std::string out;
  for (size_t k = 0; k < modes.size(); ++k)
    out += (k == 0 ? "" : k + 1 == modes.size() ? " and " : ", ") + modes[k];
  return out.empty() ? "a mode without paths" : out + " mode";
}

// " [build 1 of 2: ...]" for a function whose copies differ in CFG.
std::string BuildNote(const ShownFunction& f) {
  if (f.build.empty()) return "";
  return " <span class=\"build\">[" + HtmlEscape(f.build) + "]</span>";
}

// Said where paths would be shown when no function shown has any.
std::string NoPathsNote(const Site& s) {
  return fmt::format(
      "<p class=\"note\" id=\"no-paths\"><b>No path profile:</b> this "
      "profile was built in {}, which counts edges, not Ball–Larus paths, so "
      "there are no hottest paths and no per-path columns.  To see them, "
      "rebuild with <code>-fplugin-arg-ballarus-mode=edge,path</code> (both "
      "profiles from one run) or <code>mode=path</code>, run the program "
      "again and write the report again.</p>\n",
      BuildModes(s.r));
}

// A function's "paths executed" cell: "K of N", or why there are none.
std::string PathsExecutedCell(const FunctionReport& f) {
  if (!f.paths)
    return "<td title=\"built without path mode: no path profile\">-</td>";
  return fmt::format("<td>{} of {}</td>", f.paths->executed.size(),
                     f.paths->n_paths);
}

// The functions pictured, hottest first: the --cfg-functions hottest that
// ran, then those of the index's hottest paths.
std::vector<size_t> CfgFunctions(const Site& s) {
  std::vector<size_t> chosen;
  std::set<size_t> seen;
  for (size_t k = 0; k < s.hottest.size() && chosen.size() < s.o.cfg_functions;
       ++k)
    if (CountOf(s.F(s.hottest[k]).execution_count) > 0 &&
        seen.insert(s.hottest[k]).second)
      chosen.push_back(s.hottest[k]);
  if (s.o.cfg_functions > 0)
    for (const Hot& h : s.hot_paths)
      if (seen.insert(h.function).second) chosen.push_back(h.function);
  return chosen;
}

// The CFG pictures, drawn side by side within the time limit; the dot
// source of each picture not drawn is written beside the pages.
void DrawCfgs(Site* s) {
  const std::vector<size_t> chosen = CfgFunctions(*s);
  std::vector<std::string> graphs;
  for (size_t fi : chosen) graphs.push_back(CfgDot(s->F(fi), fi));
  CfgDrawOptions draw;
  draw.dot = s->o.dot;
  draw.jobs = s->o.cfg_jobs;
  draw.time_limit = s->o.CfgTimeLimit();
  draw.quiet = s->o.quiet;
  const std::vector<CfgPicture> pictures = DrawCfgPictures(graphs, draw);
  size_t late = 0;
  for (size_t k = 0; k < chosen.size(); ++k) {
    if (pictures[k].status == CfgPicture::kNotRun) continue;
    if (pictures[k].status == CfgPicture::kTimedOut) {
      WriteFile(s->o.out_dir + "/" + GvName(chosen[k]), graphs[k]);
      ++late;
    }
    s->cfg_of[chosen[k]] = pictures[k];
  }
  if (late && !s->o.quiet)
    std::fprintf(stderr,
                 "%s: html: %zu of %zu CFG pictures not drawn within %g s "
                 "(--cfg-time); the report links their dot sources\n",
                 kProg, late, chosen.size(), draw.time_limit);
}

// The lines, functions and branches rows of a totals table.
std::string TotalsRows(const coverage::Totals& t) {
  std::string h;
  for (auto [name, hit, total] :
       {std::make_tuple("Lines", t.lines_hit, t.lines),
        std::make_tuple("Functions", t.functions_hit, t.functions),
        std::make_tuple("Branches", t.branches_hit, t.branches)})
    h += fmt::format("<tr><td class=\"l\">{}</td>{}</tr>\n", name,
                     RateCells(hit, total));
  return h;
}

// One row of a directory or file table: lines, functions, branches.
std::string RateRow(const std::string& first_cell, const coverage::Totals& t) {
  return fmt::format("<tr><td class=\"l\">{}</td>{}{}{}</tr>\n", first_cell,
                     RateCells(t.lines_hit, t.lines),
                     RateCells(t.functions_hit, t.functions),
                     RateCells(t.branches_hit, t.branches));
}

std::string DirectoriesAndFiles(const Site& s) {
  std::map<std::string, coverage::Totals> dirs;
  for (const coverage::FileCoverage& f : s.summary.files)
    dirs[Dirname(Relative(f.path, s.root))].Add(f.totals);
  std::string h =
      "<h2>Directories</h2>\n<table class=\"sortable\" id=\"dirs\"><thead>"
      "<tr><th class=\"l\">directory</th>" +
      RateHeader("lines") + RateHeader("functions") + RateHeader("branches") +
      "</tr></thead><tbody>\n";
  for (const auto& [dir, t] : dirs) h += RateRow(HtmlEscape(dir), t);
  h += "</tbody></table>\n";
  h += "<h2>Files</h2>\n<table class=\"sortable\" id=\"files\"><thead><tr>"
       "<th class=\"l\">file</th>" +
       RateHeader("lines") + RateHeader("functions") + RateHeader("branches") +
       "</tr></thead><tbody>\n";
  for (size_t i = 0; i < s.summary.files.size(); ++i) {
    const coverage::FileCoverage& f = s.summary.files[i];
    h += RateRow(fmt::format("<a href=\"{}\">{}</a>", s.PageName(i),
                             HtmlEscape(Relative(f.path, s.root))),
                 f.totals);
  }
  return h + "</tbody></table>\n";
}

std::string HottestFunctions(const Site& s) {
  std::string h = fmt::format(
      "<h2>Hottest functions</h2>\n<p class=\"note\">By calls; "
      "<a href=\"functions.html\">all {} functions</a>.</p>\n",
      s.shown.size());
  h += "<table class=\"sortable\" id=\"hot-functions\"><thead><tr><th>#</th>"
       "<th class=\"l\">function</th><th class=\"l\">where</th><th>calls</th>"
       "<th>% of calls</th></tr></thead><tbody>\n";
  long double calls = 0;
  for (size_t fi : s.shown) calls += CountOf(s.F(fi).execution_count);
  for (size_t k = 0; k < s.hottest.size() && k < s.o.top_functions; ++k) {
    const FunctionReport& f = s.F(s.hottest[k]);
    const long double c = CountOf(f.execution_count);
    h += fmt::format(
        "<tr><td data-v=\"{}\">{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td data-v=\"{}\">{}</td><td>{}</td></tr>\n",
        k + 1, k + 1, s.FunctionLink(s.hottest[k]), s.Where(f), CountText(c),
        CountText(c),
        calls > 0 ? fmt::format("{:.1f}%", static_cast<double>(100 * c / calls))
                  : "-");
  }
  return h + "</tbody></table>\n";
}

std::string HottestPaths(const Site& s) {
  if (s.hot_paths.empty()) return "";
  std::string h = fmt::format(
      "<h2>Hottest paths</h2>\n<p class=\"note\">Ball–Larus paths by count, "
      "across functions; % fn: share of the function's path executions, % "
      "all: of the program's ({} path executions).  A path is one run "
      "through a function's blocks that never goes round a loop.  It starts "
      "at ENTRY (a call) or, marked \"^\", at the block listed first: a "
      "loop's next iteration, a loop entered, or a cut block.  It ends at "
      "EXIT (a return); \"-&gt; back edge to B\": the iteration ended, "
      "going back to the loop's header B; \"-&gt; loop entry to B\": the "
      "program entered the loop at B (the loop's iterations are counted "
      "apart from the code before it); \"-&gt; cut at B\": the program "
      "entered block B, where paths are cut (a call that may not return, or "
      "a function with more paths than its table holds), and the next path "
      "starts there; \"(did not return)\": a call there never returned "
      "(exit, abort, longjmp or an exception); \"(abnormal jump)\": a "
      "computed goto, a nonlocal goto or a longjmp back to a setjmp left it, "
      "and the next path starts at ENTRY, then the block jumped to.  "
      "The link highlights the path on its source.</p>\n",
      CountText(s.program_paths));
  h += "<table class=\"sortable\" id=\"hot-paths\"><thead><tr><th>#</th>"
       "<th>count</th><th>% fn</th><th>% all</th><th class=\"l\">function"
       "</th><th class=\"l\">path</th></tr></thead><tbody>\n";
  for (size_t k = 0; k < s.hot_paths.size(); ++k) {
    const FunctionReport& f = s.F(s.hot_paths[k].function);
    const PathReport& p = f.paths->executed[s.hot_paths[k].rank];
    const long double ft = static_cast<long double>(f.paths->total);
    h += fmt::format(
        "<tr><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td>{}</td>"
        "<td>{}</td><td class=\"l\">{}</td><td class=\"l\"><a "
        "href=\"{}#{}\"><code>path {}: {}</code></a></td></tr>\n",
        k + 1, k + 1, p.count, p.count,
        ft > 0 ? fmt::format("{:.1f}%", static_cast<double>(100 * p.count / ft)) : "-",
        s.program_paths > 0
            ? fmt::format("{:.1f}%",
                          static_cast<double>(100 * p.count / s.program_paths))
            : "-",
        s.FunctionLink(s.hot_paths[k].function), s.PageName(s.page_of_file[f.file]),
        PathId(s.hot_paths[k].function, s.hot_paths[k].rank), p.number,
        HtmlEscape(PathText(p)));
  }
  return h + "</tbody></table>\n";
}

// index.html: totals, directories, files, hottest functions and paths.
std::string IndexPage(const Site& s) {
  const Report& r = s.r;
  std::string h = Head(s.title);
  h += "<h1>" + HtmlEscape(s.title) + "</h1>\n";
  h += fmt::format(
      "<p class=\"note\">Profile <code>{}</code>: {} runs, {} translation "
      "units, {} functions shown{}.  Root: <code>{}</code>.</p>\n",
      HtmlEscape(r.profile), r.runs, r.tus.size(), s.shown.size(),
      r.has_paths ? ", with Ball–Larus path profiles" : "", HtmlEscape(s.root));
  if (!r.test.empty())
    h += "<p class=\"note\" id=\"test\">The counts of test <code>" +
         HtmlEscape(r.test) + "</code> alone (BALLARUS_TEST).</p>\n";
  h += "<h2>Summary</h2>\n<table id=\"totals\"><thead><tr><th class=\"l\">"
       "</th>" + RateHeader("%") + "</tr></thead><tbody>\n";
  h += TotalsRows(s.summary.totals);
  h += "</tbody></table>\n";
  h += DirectoriesAndFiles(s);
  h += HottestFunctions(s);
  h += s.any_paths ? HottestPaths(s) : "<h2>Hottest paths</h2>\n" + NoPathsNote(s);
  if (s.tests) h += TestsSection(*s.tests, s.summary);
  h += "<p class=\"note\">Line, function and branch figures are lcov's for "
       "the same counts (gcov's line counts).  Written by "
       "ballarus-reconstruct html.</p>\n</body></html>\n";
  return h;
}

// functions.html: every function shown, sortable.
std::string FunctionsPage(const Site& s) {
  std::string h = Head("functions — " + s.title);
  h += "<p><a href=\"index.html\">index</a></p><h1>Functions</h1>\n";
  if (!s.any_paths) h += NoPathsNote(s);
  h += "<table class=\"sortable\" id=\"functions\"><thead><tr><th "
       "class=\"l\">function</th><th class=\"l\">where</th><th>calls</th>"
       "<th>blocks executed</th>";
  h += s.any_paths ? "<th>paths executed</th>" : "";
  h += "</tr></thead><tbody>\n";
  for (size_t fi : s.shown) {
    const FunctionReport& f = s.F(fi);
    size_t executed = 0;
    for (size_t b = 2; b < f.blocks.size(); ++b)
      executed += f.blocks[b].count && *f.blocks[b].count > 0;
    const size_t nb = f.blocks.size() > 2 ? f.blocks.size() - 2 : 0;
    h += fmt::format(
        "<tr><td class=\"l\">{}{}</td><td class=\"l\">{}</td><td "
        "data-v=\"{}\">{}</td><td data-v=\"{}\">{} / {}</td>{}</tr>\n",
        s.FunctionLink(fi), BuildNote(s.fns[fi]), s.Where(f),
        CountText(CountOf(f.execution_count)),
        f.execution_count ? CountText(CountOf(f.execution_count)) : "?",
        executed, executed, nb, s.any_paths ? PathsExecutedCell(f) : "");
  }
  h += "</tbody></table>\n</body></html>\n";
  return h;
}

// A function's hottest paths on file page `page`, as buttons that
// highlight their lines.
std::string PathButtons(const Site& s, size_t fi, size_t page) {
  const FunctionReport& f = s.F(fi);
  std::string buttons;
  if (!f.paths) return buttons;
  const long double ft = static_cast<long double>(f.paths->total);
  for (size_t k = 0; k < f.paths->executed.size() && k < s.PathsKept(); ++k) {
    const PathReport& p = f.paths->executed[k];
    // Paths beyond the per-function limit are there for the index's
    // links only.
    const bool hidden = k >= s.o.paths_per_function;
    buttons += fmt::format(
        "<button class=\"path\" id=\"{}\" data-lines=\"{}\"{}>{} × "
        "({:.1f}% fn{}) path {}: {}</button>",
        PathId(fi, k), PathLines(p, static_cast<uint32_t>(page), s.page_of_file),
        hidden ? " hidden" : "", p.count,
        ft > 0 ? static_cast<double>(100 * p.count / ft) : 0.0,
        s.program_paths > 0
            ? fmt::format(", {:.1f}% all",
                          static_cast<double>(100 * p.count / s.program_paths))
            : "",
        p.number, HtmlEscape(PathText(p)));
  }
  return buttons;
}

// The functions of a file page, with their hottest paths (a click
// highlights the path's lines in the source below).
std::string FileFunctions(const Site& s, size_t page,
                          const std::vector<size_t>& fns) {
  if (fns.empty()) return "";
  std::string h = "<h2>Functions</h2>\n";
  if (!s.any_paths) h += NoPathsNote(s);
  h += "<table class=\"sortable\" id=\"file-functions\"><thead><tr><th "
       "class=\"l\">function</th><th>line</th><th>calls</th>";
  h += s.any_paths ? "<th>paths executed</th><th class=\"l\">hottest paths "
                     "(click: highlight)</th>"
                   : "";
  h += s.tests ? "<th class=\"l\">executed by</th>" : "";
  h += "</tr></thead><tbody>\n";
  for (size_t fi : fns) {
    const FunctionReport& f = s.F(fi);
    h += fmt::format(
        "<tr id=\"fn{}\"><td class=\"l\">{}{}{}</td><td data-v=\"{}\"><a "
        "href=\"#L{}\">{}</a></td><td data-v=\"{}\">{}</td>{}{}</tr>\n",
        fi, HtmlEscape(f.display_name()), BuildNote(s.fns[fi]),
        s.cfg_of.count(fi) ? fmt::format(" <a href=\"#cfg{}\">(CFG)</a>", fi)
                           : std::string(),
        f.line, f.line, f.line, CountText(CountOf(f.execution_count)),
        f.execution_count ? CountText(CountOf(f.execution_count)) : "?",
        s.any_paths ? PathsExecutedCell(f) + "<td class=\"l\">" +
                          PathButtons(s, fi, page) + "</td>"
                    : std::string(),
        s.tests ? "<td class=\"l\">" +
                      ExecutedByCell(*s.tests,
                                     TestsOfFunctions(*s.tests, s.fns[fi].copies)) +
                      "</td>"
                : std::string());
  }
  return h + "</tbody></table>\n";
}

// A source line's branches: taken (count), never taken (0), not executed.
std::string BranchCells(const std::vector<coverage::Branch>& branches) {
  std::string out;
  for (size_t k = 0; k < branches.size(); ++k) {
    const coverage::Branch& br = branches[k];
    if (!br.executed)
      out += fmt::format(
          "<span class=\"bx\" title=\"branch {} not executed\">-</span>", k);
    else if (br.count > 0)
      out += fmt::format(
          "<span class=\"bt\" title=\"branch {} taken {} times\">{}</span>", k,
          br.count, br.count);
    else
      out += fmt::format(
          "<span class=\"bn\" title=\"branch {} never taken\">0</span>", k);
  }
  return out;
}

// The annotated source: count, hit or miss, branches, text per line.
std::string SourceTable(const coverage::FileCoverage& fc,
                        const std::vector<std::string>* text,
                        const TestProvenance* tests) {
  std::string h = "<h2>Source</h2>\n<table class=\"src\" id=\"source\"><tbody>\n";
  size_t n_lines = text ? text->size() : 0;
  if (!fc.lines.empty()) n_lines = std::max<size_t>(n_lines, fc.lines.rbegin()->first);
  for (uint32_t ln = 1; ln <= n_lines; ++ln) {
    auto it = fc.lines.find(ln);
    std::string cls, count;
    if (it != fc.lines.end()) {
      cls = it->second > 0 ? "hit" : "miss";
      count = it->second > 0 ? std::to_string(it->second) : "#####";
    }
    auto b = fc.branches.find(ln);
    const std::string branches =
        b != fc.branches.end() ? BranchCells(b->second) : std::string();
    const std::string code =
        text && ln <= text->size() ? HtmlEscape((*text)[ln - 1]) : "";
    const std::string by =
        tests ? "<td class=\"tests\">" +
                    ExecutedByCell(*tests, TestsOfLine(*tests, fc.file, ln)) +
                    "</td>"
              : std::string();
    h += fmt::format(
        "<tr id=\"L{}\"{}><td class=\"ln\">{}</td><td class=\"cnt\">{}</td>"
        "<td class=\"br\">{}</td>{}<td class=\"code\">{}</td></tr>\n",
        ln, cls.empty() ? "" : " class=\"" + cls + "\"", ln, count, branches,
        by, code);
  }
  if (!text)
    h += std::string("<tr><td></td><td></td><td></td>") +
         (tests ? "<td></td>" : "") +
         "<td class=\"code\">(source not found)</td></tr>\n";
  return h + "</tbody></table>\n";
}

// The CFG pictures of the page's functions that have one; for a picture
// not drawn, why, and its dot source.
std::string CfgSections(const Site& s, const std::vector<size_t>& fns) {
  std::string h;
  for (size_t fi : fns) {
    auto pic = s.cfg_of.find(fi);
    if (pic == s.cfg_of.end()) continue;
    const FunctionReport& f = s.F(fi);
    h += fmt::format(
        "<h2 id=\"cfg{}\">CFG of {}{} <span class=\"note\">line {}, {} "
        "calls; blocks coloured by count, edges as wide as their count, the "
        "hottest path in red</span></h2>\n",
        fi, HtmlEscape(f.display_name()), BuildNote(s.fns[fi]), f.line,
        f.execution_count ? CountText(CountOf(f.execution_count)) : "?");
    switch (pic->second.status) {
      case CfgPicture::kDrawn:
        h += "<div class=\"svg\">" + pic->second.svg + "</div>\n";
        break;
      case CfgPicture::kTimedOut:
        h += fmt::format(
            "<p class=\"note cfg-missing\">Not drawn within the time limit "
            "({} blocks); its Graphviz source is <a href=\"{}\">{}</a> "
            "(<code>dot -Tsvg {} -o {}.svg</code>), or write the report "
            "again with a longer <code>--cfg-time</code>.</p>\n",
            f.blocks.size(), GvName(fi), GvName(fi), GvName(fi), GvName(fi));
        break;
      case CfgPicture::kFailed:
      case CfgPicture::kNotRun:
        h += "<p class=\"note cfg-missing\">Graphviz <code>dot</code> could "
             "not draw it.</p>\n";
        break;
    }
  }
  return h;
}

// f<page>.html: the file's totals, functions, source and CFG pictures.
std::string SourcePage(const Site& s, size_t page, const std::vector<size_t>& fns,
                       SourceCache* sources) {
  const coverage::FileCoverage& fc = s.summary.files[page];
  const std::string rel = Relative(fc.path, s.root);
  std::string h = Head(rel + " — " + s.title);
  h += "<p><a href=\"index.html\">index</a></p>\n<h1>" + HtmlEscape(rel) +
       "</h1>\n";
  h += "<table id=\"file-totals\"><thead><tr><th class=\"l\"></th>" +
       RateHeader("%") + "</tr></thead><tbody>\n";
  h += TotalsRows(fc.totals);
  h += "</tbody></table>\n";
  h += FileFunctions(s, page, fns);
  h += SourceTable(fc, sources->Lines(fc.file), s.tests);
  h += CfgSections(s, fns);
  h += "</body></html>\n";
  return h;
}

}  // namespace

size_t WriteHtmlReport(const Report& r, const FileFilter& filter,
                       const HtmlOptions& o, const TestProvenance* tests) {
  if (mkdir(o.out_dir.c_str(), 0755) != 0 && errno != EEXIST)
    Fail(o.out_dir, "cannot create the directory");
  struct stat st;
  if (stat(o.out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    Fail(o.out_dir, "not a directory");
  Site s(r, filter, o);
  if (tests && !tests->empty()) s.tests = tests;
  s.summary = coverage::Summarize(r, filter);
  SourceCache sources(r, filter);
  s.title = !o.title.empty() ? o.title
            : r.test.empty()  ? "ballarus report: " + r.profile
                              : "ballarus report: " + r.profile + ", test " + r.test;
  PlanPages(&s);
  ChooseFunctionsAndPaths(&s);
  DrawCfgs(&s);

  size_t pages = 0;
  WriteFile(o.out_dir + "/report.css",
            s.tests ? std::string(kReportCss) + kTestsCss : kReportCss);
  WriteFile(o.out_dir + "/report.js", kReportJs);
  WriteFile(o.out_dir + "/index.html", IndexPage(s));
  ++pages;
  WriteFile(o.out_dir + "/functions.html", FunctionsPage(s));
  ++pages;
  std::vector<std::vector<size_t>> functions_of_page(s.summary.files.size());
  for (size_t fi : s.shown)
    functions_of_page[s.page_of_file[s.F(fi).file]].push_back(fi);
  Progress progress(std::string(kProg) + ": html: writing pages",
                    s.summary.files.size(), o.quiet);
  for (size_t page = 0; page < s.summary.files.size(); ++page) {
    WriteFile(o.out_dir + "/" + s.PageName(page),
              SourcePage(s, page, functions_of_page[page], &sources));
    ++pages;
    progress.Step(page + 1);
  }
  progress.Done();
  return pages;
}

}  // namespace ballarus
