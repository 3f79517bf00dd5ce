// html_functions.cc — each source function once (see html_functions.h).
#include "reconstruct/html_functions.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace ballarus {

namespace {

using report::FunctionReport;
using report::PathReport;

// a + b, unknown when either is.
Count AddCounts(const Count& a, const Count& b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

// The same CFG: the same blocks on the same lines, the same edges and the
// same Ball–Larus numbering, so counts of one block or path of the two
// copies mean the same.
bool SameCfg(const FunctionReport& a, const FunctionReport& b) {
  if (a.checksum != b.checksum || a.blocks.size() != b.blocks.size() ||
      a.edges.size() != b.edges.size() || a.lines.size() != b.lines.size() ||
      a.paths.has_value() != b.paths.has_value())
    return false;
  for (size_t i = 0; i < a.blocks.size(); ++i)
    if (a.blocks[i].lines != b.blocks[i].lines) return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].src != b.edges[i].src || a.edges[i].dst != b.edges[i].dst ||
        a.edges[i].flags != b.edges[i].flags)
      return false;
  for (size_t i = 0; i < a.lines.size(); ++i)
    if (a.lines[i].where != b.lines[i].where) return false;
  return !a.paths || (a.paths->n_paths == b.paths->n_paths &&
                      a.paths->cut_edges == b.paths->cut_edges &&
                      a.paths->cut_blocks == b.paths->cut_blocks);
}

// Adds b's path counts into a's: executed paths by number, then re-ranked
// (count descending, ties by ascending number, as the model ranks them).
void AddPaths(report::PathProfileReport* a, const report::PathProfileReport& b) {
  a->total += b.total;
  a->updates += b.updates;
  a->out_of_range += b.out_of_range;
  std::map<uint64_t, size_t> at;
  for (size_t k = 0; k < a->executed.size(); ++k) at[a->executed[k].number] = k;
  for (const PathReport& p : b.executed) {
    auto it = at.find(p.number);
    if (it == at.end()) {
      at[p.number] = a->executed.size();
      a->executed.push_back(p);
    } else {
      a->executed[it->second].count += p.count;
    }
  }
  std::stable_sort(a->executed.begin(), a->executed.end(),
                   [](const PathReport& x, const PathReport& y) {
                     return std::tie(y.count, x.number) < std::tie(x.count, y.number);
                   });
}

// Adds copy b's counts into a (SameCfg(*a, b)).
void AddCopy(FunctionReport* a, const FunctionReport& b) {
  a->execution_count = AddCounts(a->execution_count, b.execution_count);
  a->exit_to_entry = AddCounts(a->exit_to_entry, b.exit_to_entry);
  for (size_t i = 0; i < a->blocks.size(); ++i)
    a->blocks[i].count = AddCounts(a->blocks[i].count, b.blocks[i].count);
  for (size_t i = 0; i < a->edges.size(); ++i) {
    a->edges[i].count = AddCounts(a->edges[i].count, b.edges[i].count);
    a->edges[i].path_derived += b.edges[i].path_derived;
  }
  for (size_t i = 0; i < a->lines.size(); ++i)
    a->lines[i].count += b.lines[i].count;
  a->flow_issues.insert(a->flow_issues.end(), b.flow_issues.begin(),
                        b.flow_issues.end());
  if (a->paths) AddPaths(&*a->paths, *b.paths);
  a->increments += b.increments;
  a->tus.insert(a->tus.end(), b.tus.begin(), b.tus.end());
  std::sort(a->tus.begin(), a->tus.end());
  a->tus.erase(std::unique(a->tus.begin(), a->tus.end()), a->tus.end());
  a->loaded = nullptr;  // no single loaded function holds the sum
}

// "build K of N: TU SOURCE (record R), ..." for each copy of a function
// whose builds differ.
std::string BuildLabel(const report::Report& r, const FunctionReport& f,
                       size_t k, size_t n) {
  std::string tus;
  for (uint32_t t : f.tus)
    tus += fmt::format("{}{} (profile record {})", tus.empty() ? "" : ", ",
                       r.tus[t].source, t + 1);
  return fmt::format("build {} of {}: {}", k, n, tus);
}

}  // namespace

std::vector<ShownFunction> GroupFunctionCopies(
    const report::Report& r, const std::vector<size_t>& functions) {
  std::vector<ShownFunction> out;
  // (file, line, name) -> the builds of that function found so far.
  std::map<std::tuple<uint32_t, uint32_t, std::string>, std::vector<size_t>>
      builds;
  for (size_t fi : functions) {
    const FunctionReport& f = r.functions[fi];
    std::vector<size_t>& mine = builds[{f.file, f.line, f.name}];
    auto same = std::find_if(mine.begin(), mine.end(), [&](size_t k) {
      return SameCfg(out[k].f, f);
    });
    if (same != mine.end()) {
      AddCopy(&out[*same].f, f);
      out[*same].copies.push_back(fi);
      continue;
    }
    mine.push_back(out.size());
    out.push_back({f, {fi}, ""});
  }
  for (const auto& [key, mine] : builds)
    if (mine.size() > 1)
      for (size_t k = 0; k < mine.size(); ++k)
        out[mine[k]].build = BuildLabel(r, out[mine[k]].f, k + 1, mine.size());
  return out;
}

}  // namespace ballarus
