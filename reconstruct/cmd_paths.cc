// cmd_paths.cc — `ballarus-reconstruct paths PROFILE [--top N] [--program]
// [--source] [--function REGEX] [filters] [--json] [--decode ID]`.
//
// Per function with path data, its executed paths by count: number (exact
// decimal), count, its share of the function's path executions and of the
// program's (every path-mode function of the profile), blocks and source
// lines (--source: with their text).  --program: one ranking across
// functions, the N hottest paths of the program.  --json: the document of
// `show --json` with path fields added to each path-mode function (with
// --program: the ranking).  --decode ID: any path number of the selected
// function(s), executed or not.  Text output opens with a legend of the
// notation.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmpxx.h>

#include "reconstruct/commands.h"
#include "reconstruct/json_writer.h"
#include "reconstruct/test_reports.h"
#include "reconstruct/source_text.h"
#include "reconstruct/text_writer.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::PathProfileReport;
using report::PathReport;
using report::Report;

const char* StartName(PathReport::Start s) {
  switch (s) {
    case PathReport::kAfterBackEdge:
      return "back_edge";
    case PathReport::kAfterCut:
      return "cut";
    case PathReport::kAtCutLoop:
      return "loop_header";
    default:
      return "entry";
  }
}

const char* EndName(PathReport::End e) {
  switch (e) {
    case PathReport::kNoReturn:
      return "no_return";
    case PathReport::kAbnormal:
      return "abnormal";
    case PathReport::kBackEdge:
      return "back_edge";
    case PathReport::kLoopEntry:
      return "loop_entry";
    case PathReport::kCut:
      return "cut";
    default:
      return "return";
  }
}

// count / total, or 0 for an empty total.
double Share(uint64_t count, long double total) {
  return total > 0 ? static_cast<double>(count / total) : 0.0;
}

// "36.4%", or "-" for an empty total.
std::string Percent(uint64_t count, long double total) {
  if (!(total > 0)) return "-";
  return fmt::format("{:.1f}%", static_cast<double>(100 * count / total));
}

// Sum of the in-range path counts of every path-mode function (residues
// modulo 2^64 taken as they are; a true count never nears 2^64).
long double ProgramTotal(const Report& r) {
  long double total = 0;
  for (const FunctionReport& f : r.functions)
    if (f.paths) total += static_cast<long double>(f.paths->total);
  return total;
}

constexpr const char* kLegend =
    "Legend: a path is one run through a function's blocks that never goes "
    "round a\n"
    "  loop.  It starts at ENTRY (a call) or, marked \"^\", at the block "
    "listed first:\n"
    "  a loop's next iteration, a loop entered, or a cut block.  It ends at "
    "EXIT (a\n"
    "  return); \"-> back edge to B\": the iteration ended, going back to "
    "the loop's\n"
    "  header B; \"-> loop entry to B\": the program entered the loop at B "
    "(the loop's\n"
    "  iterations are counted apart from the code before it); \"-> cut at "
    "B\": the\n"
    "  program entered block B, where paths are cut (a call that may not "
    "return, or a\n"
    "  function with more paths than its table holds), and the next path "
    "starts\n"
    "  there; \"(did not return)\": a call there never returned (exit, "
    "abort, longjmp\n"
    "  or an exception); \"(abnormal jump)\": a computed goto, a nonlocal "
    "goto or a\n"
    "  longjmp back to a setjmp left it, and the next path starts at ENTRY, "
    "then the\n"
    "  block jumped to.  \"% fn\": share of the function's path executions; "
    "\"% all\":\n"
    "  share of the program's (every path-mode function).  README: \"Which "
    "paths a\n"
    "  profile holds\".\n\n";

ojson PathJson(const Report& r, const PathReport& p, bool with_lines,
               long double function_total = 0, long double program_total = 0,
               SourceCache* sources = nullptr) {
  ojson j;
  j["id"] = std::to_string(p.number);
  j["count"] = p.count;
  if (program_total > 0) {
    j["function_share"] = Share(p.count, function_total);
    j["program_share"] = Share(p.count, program_total);
  }
  j["blocks"] = p.blocks;
  j["start"] = StartName(p.start);
  j["end"] = EndName(p.end);
  if (p.end == PathReport::kBackEdge || p.end == PathReport::kLoopEntry ||
      p.end == PathReport::kCut)
    j["to"] = p.target;
  if (with_lines || sources) {
    ojson lines = ojson::array();
    for (const report::SourceLine& l : p.lines) {
      ojson line{{"file", r.file_name(l.file)}, {"line", l.line}};
      if (sources) {
        const std::string* text = sources->Line(l.file, l.line);
        line["source"] = text ? ojson(*text) : ojson(nullptr);
      }
      lines.push_back(line);
    }
    j["lines"] = lines;
  }
  return j;
}

// The lines of a path with their text: "      a.c:3 |   x++;".
void PrintSource(const Report& r, const PathReport& p, SourceCache* sources,
                 const std::string& indent) {
  for (const report::SourceLine& l : p.lines) {
    const std::string* text = sources->Line(l.file, l.line);
    fmt::print("{}{}:{} | {}\n", indent, Printable(r.file_name(l.file)), l.line,
               text ? Printable(*text) : std::string("(source not found)"));
  }
}

// The executed paths listed: the first `top` (0 = all).
size_t Listed(const PathProfileReport& pp, uint64_t top) {
  return top == 0 || pp.executed.size() < top ? pp.executed.size()
                                               : static_cast<size_t>(top);
}

void AddPathFields(const Report& r, const FunctionReport& f, uint64_t top,
                   long double program_total, SourceCache* sources, ojson* j) {
  const PathProfileReport& pp = *f.paths;
  (*j)["n_paths"] = std::to_string(pp.n_paths);
  (*j)["path_storage"] = report::PathStorageName(pp.storage);
  ojson flags = ojson::array();
  if (pp.early_termination) flags.push_back("early_termination");
  if (pp.derived_paths != 0) flags.push_back("derived_counts");
  if (pp.balanced_paths != 0) flags.push_back("balanced_starts");
  if (pp.entry_balanced_paths != 0) flags.push_back("entry_balanced");
  (*j)["path_flags"] = flags;
  // Paths whose count the edge counters give (path-derive).
  (*j)["derived_paths"] = pp.derived_paths;
  // Truncated paths counted by their start's balance (path-balance).
  (*j)["balanced_paths"] = pp.balanced_paths;
  // A truncated path from the entry counted by the function's calls
  // (path-entry-balance): 0 or 1.
  (*j)["entry_balanced_paths"] = pp.entry_balanced_paths;
  ojson cut_edges = ojson::array();
  for (uint32_t e : pp.cut_edges)
    cut_edges.push_back(ojson{
        {"edge", e},
        {"src", f.edges[e].src},
        {"dst", f.edges[e].dst},
        {"kind", std::binary_search(pp.loop_entry_edges.begin(),
                                    pp.loop_entry_edges.end(), e)
                     ? "loop_entry"
                     : "back_edge"}});
  (*j)["cut_edges"] = cut_edges;
  (*j)["cut_blocks"] = pp.cut_blocks;
  (*j)["distinct_paths"] = pp.executed.size();
  (*j)["path_count_total"] = pp.total;
  (*j)["path_out_of_range"] = pp.out_of_range;
  ojson paths = ojson::array();
  for (size_t i = 0; i < Listed(pp, top); ++i)
    paths.push_back(PathJson(r, pp.executed[i], false,
                             static_cast<long double>(pp.total), program_total,
                             sources));
  (*j)["paths"] = paths;
}

std::string CutsText(const FunctionReport& f) {
  const PathProfileReport& pp = *f.paths;
  std::string edges, entries, blocks;
  for (uint32_t e : pp.cut_edges) {
    std::string& to = std::binary_search(pp.loop_entry_edges.begin(),
                                         pp.loop_entry_edges.end(), e)
                          ? entries
                          : edges;
    to += (to.empty() ? "" : " ") + EdgeText(f, e);
  }
  for (uint32_t b : pp.cut_blocks)
    blocks += (blocks.empty() ? "" : " ") + std::to_string(b);
  return fmt::format("back edges {}, {}cut blocks {}",
                     edges.empty() ? "none" : edges,
                     entries.empty() ? "" : "loop entry edges " + entries + ", ",
                     blocks.empty() ? "none" : blocks);
}

void PrintPathsText(const Report& r, const FunctionReport& f, uint64_t top,
                    long double program_total, SourceCache* sources) {
  const PathProfileReport& pp = *f.paths;
  fmt::print(
      "{} ({}:{}): {} paths, {} executed, {} path counts, {} storage{}; "
      "cuts: {}\n",
      f.display_name(), r.file_name(f.file), f.line, pp.n_paths,
      pp.executed.size(), pp.total, report::PathStorageName(pp.storage),
      pp.early_termination ? ", early termination counted" : "", CutsText(f));
  if (pp.out_of_range != 0)
    fmt::print(
        "  {} counts of out-of-range path numbers (instrumentation "
        "error; see verify)\n",
        pp.out_of_range);
  if (Listed(pp, top) > 0)
    fmt::print("  {:>20} {:>6} {:>6}  path\n", "count", "% fn", "% all");
  const long double function_total = static_cast<long double>(pp.total);
  for (size_t i = 0; i < Listed(pp, top); ++i) {
    const PathReport& p = pp.executed[i];
    fmt::print("  {:>20} {:>6} {:>6}  path {}: {}\n", p.count,
               Percent(p.count, function_total),
               Percent(p.count, program_total), p.number, PathText(p));
    const std::string lines = LinesText(r, p.lines);
    if (!lines.empty())
      fmt::print("  {:>34}  lines {}\n", "", Printable(lines));
    if (sources) PrintSource(r, p, sources, std::string(40, ' '));
  }
  if (top != 0 && pp.executed.size() > top)
    fmt::print("  ({} more executed paths; --top 0 lists all)\n",
               pp.executed.size() - top);
  fmt::print("\n");
}

int RunDecode(const Report& r, const std::vector<const FunctionReport*>& fs,
              const std::string& text, bool json) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    Fail("", "--decode: '" + text + "' is not a decimal path number");
  const mpz_class id(text, 10);
  for (const FunctionReport* f : fs) {
    const mpz_class n_paths(static_cast<unsigned long>(f->paths->n_paths));
    if (id >= n_paths)
      Fail(r.profile,
           fmt::format("{} ({}:{}): path {} is out of range: the "
                       "function has {} paths (0 to {})",
                       f->display_name(), r.file_name(f->file), f->line,
                       id.get_str(), n_paths.get_str(),
                       mpz_class(n_paths - 1).get_str()));
  }
  ojson decoded = ojson::array();
  for (const FunctionReport* f : fs) {
    PathReport p;
    if (!DecodePathReport(*f, id.get_ui(), &p))
      Fail("", "internal error: path " + id.get_str() + " of " + f->name +
                   " cannot be decoded");
    if (json) {
      ojson j;
      j["name"] = f->name;
      j["demangled"] = f->demangled;
      j["file"] = r.file_name(f->file);
      j["line"] = f->line;
      j["n_paths"] = std::to_string(f->paths->n_paths);
      j["path"] = PathJson(r, p, true);
      decoded.push_back(j);
      continue;
    }
    fmt::print("{} ({}:{}): path {} of {}, executed {} times\n  blocks {}\n",
               f->display_name(), r.file_name(f->file), f->line, p.number,
               f->paths->n_paths, p.count, PathText(p));
    const std::string lines = LinesText(r, p.lines);
    if (!lines.empty()) fmt::print("  lines {}\n", lines);
  }
  if (json) {
    ojson root;
    root["profile"] = r.profile;
    root["decoded"] = decoded;
    std::cout << JsonDump(root) << "\n";
  }
  std::cout.flush();
  return 0;
}

// --program: the hottest executed paths across every selected function.
struct Ranked {
  const FunctionReport* f;
  const PathReport* p;
};

std::vector<Ranked> Rank(const std::vector<const FunctionReport*>& fs,
                         uint64_t top) {
  std::vector<Ranked> all;
  for (const FunctionReport* f : fs)
    for (const PathReport& p : f->paths->executed) all.push_back({f, &p});
  // Count descending; ties in report order (file, line, name), then by
  // path number — each function's list is already in that order.
  std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
    return a.p->count > b.p->count;
  });
  if (top != 0 && all.size() > top) all.resize(top);
  return all;
}

void PrintProgramText(const Report& r, const std::vector<Ranked>& ranked,
                      size_t executed, long double program_total,
                      SourceCache* sources) {
  fmt::print("{:>5} {:>20} {:>6} {:>6}  function and path\n", "rank", "count",
             "% fn", "% all");
  for (size_t i = 0; i < ranked.size(); ++i) {
    const FunctionReport& f = *ranked[i].f;
    const PathReport& p = *ranked[i].p;
    fmt::print("{:>5} {:>20} {:>6} {:>6}  {} ({}:{}) path {}: {}\n", i + 1,
               p.count, Percent(p.count, static_cast<long double>(f.paths->total)),
               Percent(p.count, program_total), Printable(f.display_name()),
               Printable(r.file_name(f.file)), f.line, p.number, PathText(p));
    const std::string lines = LinesText(r, p.lines);
    if (!lines.empty()) fmt::print("{:>42}lines {}\n", "", Printable(lines));
    if (sources) PrintSource(r, p, sources, std::string(44, ' '));
  }
  if (ranked.size() < executed)
    fmt::print("({} more executed paths; --top 0 lists all)\n",
               executed - ranked.size());
}

}  // namespace

int RunPaths(const ProfileInputs& in, const PathsOptions& o,
             const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const Report& r = loaded.report;
  const std::string& path = r.profile;
  const FileFilter filter(r, filter_options);
  if (o.decode_given && o.regex.empty())
    Fail("", "--decode needs --function: which function's path?");
  std::vector<const FunctionReport*> fs;
  for (const FunctionReport* f : Select(r, o.regex))
    if (filter.KeepFunction(*f)) fs.push_back(f);
  std::vector<const FunctionReport*> with_paths;
  for (const FunctionReport* f : fs)
    if (f->paths) with_paths.push_back(f);
  if (with_paths.empty())
    Fail(path, !r.has_paths
                   ? std::string("no path data (build with "
                                 "-fplugin-arg-ballarus-mode=path or "
                                 "mode=edge,path)")
                   : "no function with path data is selected (--function, "
                     "--include, --exclude; --all-files for files outside "
                     "the project)");
  if (o.decode_given) return RunDecode(r, with_paths, o.decode, o.json);
  std::unique_ptr<SourceCache> sources;
  if (o.source) sources = std::make_unique<SourceCache>(r, filter);
  const long double program_total = ProgramTotal(r);
  size_t executed = 0;
  for (const FunctionReport* f : with_paths) executed += f->paths->executed.size();

  if (o.program) {
    const std::vector<Ranked> ranked = Rank(with_paths, o.top);
    if (o.json) {
      ojson root;
      root["profile"] = path;
      root["runs"] = r.runs;
      // An integer while it fits in 64 bits (a sum of 64-bit counts can
      // exceed them: then a double).
      if (program_total < 18446744073709551616.0L)
        root["path_executions"] = static_cast<uint64_t>(program_total);
      else
        root["path_executions"] = static_cast<double>(program_total);
      root["executed_paths"] = executed;
      ojson arr = ojson::array();
      for (size_t i = 0; i < ranked.size(); ++i) {
        const FunctionReport& f = *ranked[i].f;
        ojson j;
        j["rank"] = i + 1;
        j["name"] = f.name;
        j["demangled"] = f.demangled;
        j["file"] = r.file_name(f.file);
        j["line"] = f.line;
        ojson pj = PathJson(r, *ranked[i].p, true,
                            static_cast<long double>(f.paths->total),
                            program_total, sources.get());
        for (auto it = pj.begin(); it != pj.end(); ++it) j[it.key()] = it.value();
        arr.push_back(j);
      }
      root["ranking"] = arr;
      std::cout << JsonDump(root) << "\n";
    } else {
      fmt::print("profile {}: {} runs; {} path executions, {} distinct paths "
                 "in {} functions\n\n{}",
                 Printable(path), r.runs, static_cast<double>(program_total),
                 executed, with_paths.size(), kLegend);
      PrintProgramText(r, ranked, executed, program_total, sources.get());
    }
  } else if (o.json) {
    // Named runs: which tests executed each function, line and path.
    const TestProvenance tests = ComputeProvenance(loaded);
    ojson root;
    root["profile"] = path;
    root["runs"] = r.runs;
    if (!tests.empty()) root["tests"] = TestsJson(tests);
    ojson arr = ojson::array();
    for (const FunctionReport* f : fs) {
      ojson j = FunctionJson(r, *f, &tests);
      if (f->paths) {
        AddPathFields(r, *f, o.top, program_total, sources.get(), &j);
        if (!tests.empty())
          for (ojson& p : j["paths"])
            p["tests"] = PathTestsJson(
                r, *f, std::stoull(p["id"].get<std::string>()), tests);
      }
      arr.push_back(j);
    }
    root["functions"] = arr;
    if (o.regex.empty()) root["lines"] = FileLinesJson(r, &tests);
    std::cout << JsonDump(root) << "\n";
  } else {
    fmt::print("profile {}: {} runs, {} functions with path data\n\n{}",
               Printable(path), r.runs, with_paths.size(), kLegend);
    for (const FunctionReport* f : with_paths)
      PrintPathsText(r, *f, o.top, program_total, sources.get());
  }
  std::cout.flush();
  return 0;
}

}  // namespace ballarus
