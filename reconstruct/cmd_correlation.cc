// cmd_correlation.cc — `ballarus-reconstruct correlation PROFILE...
// [--function REGEX] [--top N] [filters] [--json]`.
//
// Where a path profile knows more than an edge profile (core/
// path_correlation.h has the definitions): per function with path data and
// for the program (every selected path-mode function), the path executions,
// the share of them the edge counts leave undetermined (1 - definite flow /
// executions), and the branch directions of conditional blocks an
// edge-based static prediction misses (miss_edge) against a prediction
// qualified by the path prefix up to the branch (miss_path).  Functions are
// ranked by the gain, miss_edge - miss_path; --top N lists the first N (0:
// all), each with its blocks of largest gain.  --json: the same figures.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/path_correlation.h"
#include "reconstruct/commands.h"
#include "reconstruct/json_writer.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::Report;

// Blocks of largest gain listed per function.
constexpr size_t kBranchesListed = 5;

struct Row {
  const FunctionReport* f = nullptr;
  size_t distinct_paths = 0;
  PathCorrelation c;
};

PathCorrelation CorrelateFunction(const FunctionReport& f) {
  const LoadedPaths& lp = *f.loaded->paths;
  std::vector<ExecutedPath> paths;
  paths.reserve(lp.counts.size());
  for (const auto& [number, count] : lp.counts)
    paths.push_back({&lp.decoded.at(number), count});
  return Correlate(*f.loaded->function, lp.dag, paths);
}

// Gain descending, then undetermined executions descending, then report
// order.
void Rank(std::vector<Row>* rows) {
  std::stable_sort(rows->begin(), rows->end(), [](const Row& a, const Row& b) {
    if (a.c.gain() != b.c.gain()) return a.c.gain() > b.c.gain();
    return a.c.executions - a.c.determined > b.c.executions - b.c.determined;
  });
}

// "12.3%", or "-" when there is nothing to share.
std::string Percent(double share, bool defined) {
  return defined ? fmt::format("{:.1f}%", 100 * share) : "-";
}

// "a.c:12", the first line of block b, or "" when it has none.
std::string BlockLine(const Report& r, const FunctionReport& f, uint32_t b) {
  if (b >= f.blocks.size() || f.blocks[b].lines.empty()) return "";
  const report::SourceLine& l = f.blocks[b].lines.front();
  return fmt::format("{}:{}", r.file_name(l.file), l.line);
}

ojson FiguresJson(const PathCorrelation& c) {
  ojson j;
  j["executions"] = c.executions;
  j["determined"] = c.determined;
  j["undetermined_share"] = c.UndeterminedShare();
  j["branch_executions"] = c.branch_executions;
  j["miss_edge"] = c.miss_edge;
  j["miss_path"] = c.miss_path;
  j["gain"] = c.gain();
  j["gain_share"] = c.GainShare();
  return j;
}

ojson RowJson(const Report& r, const Row& row) {
  const FunctionReport& f = *row.f;
  ojson j;
  j["name"] = f.name;
  j["demangled"] = f.demangled;
  j["file"] = r.file_name(f.file);
  j["line"] = f.line;
  j["distinct_paths"] = row.distinct_paths;
  const ojson figures = FiguresJson(row.c);
  for (auto it = figures.begin(); it != figures.end(); ++it)
    j[it.key()] = it.value();
  ojson branches = ojson::array();
  for (size_t i = 0; i < row.c.branches.size() && i < kBranchesListed; ++i) {
    const BranchCorrelation& b = row.c.branches[i];
    if (b.gain() == 0) break;
    branches.push_back(ojson{{"block", b.block},
                             {"where", BlockLine(r, f, b.block)},
                             {"executions", b.executions},
                             {"miss_edge", b.miss_edge},
                             {"miss_path", b.miss_path},
                             {"gain", b.gain()}});
  }
  j["branches"] = branches;
  return j;
}

void PrintJson(const Report& r, const std::vector<Row>& rows, size_t listed,
               const PathCorrelation& program) {
  ojson root;
  root["profile"] = r.profile;
  root["runs"] = r.runs;
  ojson p = FiguresJson(program);
  p["functions"] = rows.size();
  root["program"] = p;
  ojson arr = ojson::array();
  for (size_t i = 0; i < listed; ++i) arr.push_back(RowJson(r, rows[i]));
  root["functions"] = arr;
  std::cout << JsonDump(root) << "\n";
}

constexpr const char* kLegend =
    "Legend: \"undet.\": share of the path executions on paths the edge "
    "profile does\n"
    "  not determine (1 - definite flow / executions); \"branches\": "
    "directions taken at\n"
    "  conditional blocks; \"miss edge\": those an edge-based prediction "
    "(each block's\n"
    "  most frequent direction) misses; \"miss path\": those a prediction "
    "qualified by\n"
    "  the path's prefix up to the block misses; \"gain\": their "
    "difference, and its\n"
    "  share of the branches.  README: \"Where paths are correlated\".\n\n";

void PrintFiguresLine(const PathCorrelation& c) {
  fmt::print(
      "{} path executions, {} undetermined; {} branches, miss edge {}, "
      "miss path {}, gain {} ({})\n",
      c.executions, Percent(c.UndeterminedShare(), c.executions != 0),
      c.branch_executions, c.miss_edge, c.miss_path, c.gain(),
      Percent(c.GainShare(), c.branch_executions != 0));
}

void PrintText(const Report& r, const std::vector<Row>& rows, size_t listed,
               const PathCorrelation& program) {
  fmt::print("profile {}: {} runs, {} functions with path data\n\n{}",
             Printable(r.profile), r.runs, rows.size(), kLegend);
  fmt::print("program: ");
  PrintFiguresLine(program);
  fmt::print("\n{:>5} {:>14} {:>6} {:>14} {:>14} {:>16} {:>6}  function\n",
             "rank", "gain", "gain%", "miss edge", "miss path", "executions",
             "undet.");
  for (size_t i = 0; i < listed; ++i) {
    const Row& row = rows[i];
    const PathCorrelation& c = row.c;
    fmt::print("{:>5} {:>14} {:>6} {:>14} {:>14} {:>16} {:>6}  {} ({}:{})\n",
               i + 1, c.gain(), Percent(c.GainShare(), c.branch_executions != 0),
               c.miss_edge, c.miss_path, c.executions,
               Percent(c.UndeterminedShare(), c.executions != 0),
               Printable(row.f->display_name()),
               Printable(r.file_name(row.f->file)), row.f->line);
    for (size_t k = 0; k < c.branches.size() && k < kBranchesListed; ++k) {
      const BranchCorrelation& b = c.branches[k];
      if (b.gain() == 0) break;
      const std::string where = BlockLine(r, *row.f, b.block);
      fmt::print("{:>28}block {}{}: gain {}, miss edge {}, miss path {} of "
                 "{}\n",
                 "", b.block, where.empty() ? "" : " (" + Printable(where) + ")",
                 b.gain(), b.miss_edge, b.miss_path, b.executions);
    }
  }
  if (listed < rows.size())
    fmt::print("({} more functions; --top 0 lists all)\n",
               rows.size() - listed);
}

}  // namespace

int RunCorrelation(const ProfileInputs& in, const CorrelationOptions& o,
                   const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const Report& r = loaded.report;
  const FileFilter filter(r, filter_options);
  std::vector<Row> rows;
  PathCorrelation program;
  for (const FunctionReport* f : Select(r, o.regex)) {
    if (!f->paths || !filter.KeepFunction(*f) || f->loaded == nullptr ||
        !f->loaded->paths)
      continue;
    Row row;
    row.f = f;
    row.distinct_paths = f->paths->executed.size();
    row.c = CorrelateFunction(*f);
    program.Add(row.c);
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    Fail(r.profile, !r.has_paths
                        ? std::string("no path data (build with "
                                      "-fplugin-arg-ballarus-mode=path or "
                                      "mode=edge,path)")
                        : "no function with path data is selected "
                          "(--function, --include, --exclude; --all-files "
                          "for files outside the project)");
  Rank(&rows);
  const size_t listed =
      o.top == 0 || rows.size() < o.top ? rows.size() : static_cast<size_t>(o.top);
  if (o.json)
    PrintJson(r, rows, listed, program);
  else
    PrintText(r, rows, listed, program);
  std::cout.flush();
  return 0;
}

}  // namespace ballarus
