// cmd_overlap.cc — `ballarus-reconstruct overlap A [B] [--test-a NAME]
// [--test-b NAME] [--test NAME] [--json] [--top N] [filters]`: how much two
// profiles, or two tests, agree, as `llvm-profdata overlap` and `gcov-tool
// overlap` measure it (reconstruct/overlap.h): the whole program's
// overlap of edge executions, and per function its own overlap, its share
// of each side and the overlap it loses, largest loss first.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/overlap_view.h"
#include "reconstruct/profile_pair.h"

namespace ballarus {
namespace {

// The counts of the functions in both sides, one side only, or changed.
struct Matching {
  size_t both = 0, same_cfg = 0, only_a = 0, only_b = 0;
};

Matching Match(const std::vector<FunctionPair>& pairs) {
  Matching m;
  for (const FunctionPair& p : pairs) {
    if (p.a && p.b) ++m.both;
    if (p.same_cfg) ++m.same_cfg;
    if (!p.b) ++m.only_a;
    if (!p.a) ++m.only_b;
  }
  return m;
}

void PrintJson(const Side& A, const Side& B, const Matching& m,
               const OverlapView& v) {
  ojson root;
  root["a"] = SideJson(A);
  root["b"] = SideJson(B);
  root["matched_functions"] = m.both;
  root["unchanged_cfgs"] = m.same_cfg;
  root["only_in_a"] = m.only_a;
  root["only_in_b"] = m.only_b;
  const ojson o = OverlapJson(A, B, v);
  for (const auto& [key, value] : o.items()) root[key] = value;
  std::cout << JsonDump(root) << "\n";
  std::cout.flush();
}

void PrintText(const Side& A, const Side& B, const Matching& m,
               const OverlapView& v) {
  fmt::print("overlap of A {} ({} runs) and B {} ({} runs)\n",
             SideLabel(A), A.r().runs, SideLabel(B), B.r().runs);
  fmt::print("functions: {} in both ({} with the same CFG), {} only in A, {} "
             "only in B\n",
             m.both, m.same_cfg, m.only_a, m.only_b);
  fmt::print("{}\n", OverlapLine(v));
  PrintOverlapFunctions(A, B, v);
  std::cout.flush();
}

}  // namespace

int RunOverlap(const DiffSides& sides, bool json, uint64_t top,
               const FilterOptions& filter) {
  Side A, B;
  LoadSide(sides.a, filter, &A);
  LoadSide(sides.b, filter, &B);
  const std::vector<FunctionPair> pairs = PairFunctions(A, B);
  const OverlapView v = ComputeOverlapView(A, B, pairs, top);
  const Matching m = Match(pairs);
  if (json)
    PrintJson(A, B, m, v);
  else
    PrintText(A, B, m, v);
  return 0;
}

}  // namespace ballarus
