// cmd_paths.cc — `ballarus-reconstruct paths PROFILE [--top N] [--function
// REGEX] [--json] [--decode ID]`.
//
// Per function with path data, its executed paths by count: number (exact
// decimal), count, blocks and source lines.  --json: the document of
// `show --json` with path fields added to each path-mode function.
// --decode ID: any path number of the selected function(s), executed or
// not.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmpxx.h>

#include "reconstruct/commands.h"
#include "reconstruct/json_writer.h"
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
    default:
      return "entry";
  }
}

const char* EndName(PathReport::End e) {
  switch (e) {
    case PathReport::kNoReturn:
      return "no_return";
    case PathReport::kBackEdge:
      return "back_edge";
    case PathReport::kCut:
      return "cut";
    default:
      return "return";
  }
}

ojson PathJson(const Report& r, const PathReport& p, bool with_lines) {
  ojson j;
  j["id"] = std::to_string(p.number);
  j["count"] = p.count;
  j["blocks"] = p.blocks;
  j["start"] = StartName(p.start);
  j["end"] = EndName(p.end);
  if (p.end == PathReport::kBackEdge || p.end == PathReport::kCut)
    j["to"] = p.target;
  if (with_lines) {
    ojson lines = ojson::array();
    for (const report::SourceLine& l : p.lines)
      lines.push_back(ojson{{"file", r.file_name(l.file)}, {"line", l.line}});
    j["lines"] = lines;
  }
  return j;
}

// The executed paths listed: the first `top` (0 = all).
size_t Listed(const PathProfileReport& pp, uint64_t top) {
  return top == 0 || pp.executed.size() < top ? pp.executed.size()
                                               : static_cast<size_t>(top);
}

void AddPathFields(const Report& r, const FunctionReport& f, uint64_t top,
                   ojson* j) {
  const PathProfileReport& pp = *f.paths;
  (*j)["n_paths"] = std::to_string(pp.n_paths);
  (*j)["path_storage"] = report::PathStorageName(pp.storage);
  ojson flags = ojson::array();
  if (pp.early_termination) flags.push_back("early_termination");
  (*j)["path_flags"] = flags;
  ojson cut_edges = ojson::array();
  for (uint32_t e : pp.cut_edges)
    cut_edges.push_back(
        ojson{{"edge", e}, {"src", f.edges[e].src}, {"dst", f.edges[e].dst}});
  (*j)["cut_edges"] = cut_edges;
  (*j)["cut_blocks"] = pp.cut_blocks;
  (*j)["distinct_paths"] = pp.executed.size();
  (*j)["path_count_total"] = pp.total;
  (*j)["path_out_of_range"] = pp.out_of_range;
  ojson paths = ojson::array();
  for (size_t i = 0; i < Listed(pp, top); ++i)
    paths.push_back(PathJson(r, pp.executed[i], false));
  (*j)["paths"] = paths;
}

std::string CutsText(const FunctionReport& f) {
  std::string edges, blocks;
  for (uint32_t e : f.paths->cut_edges)
    edges += (edges.empty() ? "" : " ") + EdgeText(f, e);
  for (uint32_t b : f.paths->cut_blocks)
    blocks += (blocks.empty() ? "" : " ") + std::to_string(b);
  return fmt::format("back edges {}, cut blocks {}",
                     edges.empty() ? "none" : edges,
                     blocks.empty() ? "none" : blocks);
}

void PrintPathsText(const Report& r, const FunctionReport& f, uint64_t top) {
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
  for (size_t i = 0; i < Listed(pp, top); ++i) {
    const PathReport& p = pp.executed[i];
    fmt::print("  {:>20}  path {}: {}\n", p.count, p.number, PathText(p));
    const std::string lines = LinesText(r, p.lines);
    if (!lines.empty()) fmt::print("  {:>20}  lines {}\n", "", lines);
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
    std::cout << root.dump(1) << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace

int RunPaths(const std::string& path, const std::string& regex, uint64_t top,
             bool json, const std::string& decode, bool decode_given) {
  LoadedReport loaded;
  LoadReport(path, &loaded);
  const Report& r = loaded.report;
  if (decode_given && regex.empty())
    Fail("", "--decode needs --function: which function's path?");
  const std::vector<const FunctionReport*> fs = Select(r, regex);
  std::vector<const FunctionReport*> with_paths;
  for (const FunctionReport* f : fs)
    if (f->paths) with_paths.push_back(f);
  if (with_paths.empty())
    Fail(path, regex.empty()
                   ? std::string("no path data (build with "
                                 "-fplugin-arg-ballarus-mode=path or "
                                 "mode=edge,path)")
                   : "no function with path data matches '" + regex + "'");
  if (decode_given) return RunDecode(r, with_paths, decode, json);
  if (json) {
    ojson root;
    root["profile"] = path;
    root["runs"] = r.runs;
    ojson arr = ojson::array();
    for (const FunctionReport* f : fs) {
      ojson j = FunctionJson(r, *f);
      if (f->paths) AddPathFields(r, *f, top, &j);
      arr.push_back(j);
    }
    root["functions"] = arr;
    if (regex.empty()) root["lines"] = FileLinesJson(r);
    std::cout << root.dump(1) << "\n";
  } else {
    fmt::print("profile {}: {} runs, {} functions with path data\n\n", path,
               r.runs, with_paths.size());
    for (const FunctionReport* f : with_paths) PrintPathsText(r, *f, top);
  }
  std::cout.flush();
  return 0;
}

}  // namespace ballarus
