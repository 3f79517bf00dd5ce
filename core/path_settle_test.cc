// path_settle_test.cc — true path counts from early termination's stored
// counts (core/path_settle.h): kept pre-counts settled, left-out counts
// restored from the balance of a loop header or of the function's entry,
// by hand and against a forward simulation on random CFGs.
#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"
#include "core/test_graphs.h"
#include "core/test_path_checks.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using namespace path_testing;  // NOLINT: the shared oracles and checks

// A loop whose body calls a function that may not return (block 3, fake
// edge 3->EXIT): 0->2 2->3 3->4 4->2 (back) 4->5 5->EXIT, 3->EXIT fake.
// Paths (back edge 4->2 cut): from ENTRY 2 3 {EXIT | 4 back | 4 5 EXIT},
// from 2 (after the back edge) the same.  Three iterations, the third
// call exits the program: true paths "ENTRY 2 3 4 back" once, "2 3 4 back"
// once, "2 3 EXIT(fake)" once.  Stored with kept pre-counts: every call
// reached pre-counted its prefix (3 times), every completed path counted.
// A loop 2 -> 3 -> 4 -> 2 whose block 3 calls a function that may not
// return (fake edge 3 -> EXIT), left at 4 -> 5 -> EXIT.
Function LoopWithExitingCall() {
  return Make(6, {{0, 2, kEdgeFallthru},
                  {2, 3, kEdgeFallthru},
                  {3, 4, kEdgeFallthru},
                  {3, 1, kEdgeFake},
                  {4, 2, kEdgeTrue},
                  {4, 5, kEdgeFalse},
                  {5, 1, kEdgeFallthru}});
}

TEST(SettlePrecounts, LoopWhoseThirdCallExits) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  ASSERT_EQ(cuts.edges, (U{4}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NP: 5 = 1, 4 = back + 5 = 2, 3 = 4 + fake = 3, 2 = 3, ENTRY = 2 (via
  // 0->2) + 3 (start at 2) = 6.  Val: 3->4 = 0, 3->EXIT = NP(4) = 2;
  // 4->back 0, 4->5 1; ENTRY->2 0, start->2 3.
  ASSERT_EQ(num.total(), 6);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));     // ENTRY .. back
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 1}));     // call exited
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 3, 4}));        // 2 .. back
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{2, 3, 1}));        // call exited
  // Stored: pre-count of "ENTRY 2 3" (2) once, of "2 3" (5) twice; path 0
  // once, path 3 once.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {2, 1}, {3, 1}, {5, 2}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  // Path 0 went on past the first call: 2 loses it (0 left, dropped);
  // path 3 went on past a call reached from 2: 5 keeps 2 - 1.
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, 1}}));
  // The path-derived edge counts are then the edge profile: 3->EXIT once.
  std::vector<uint64_t> edge_counts(f.edges.size(), 0);
  Path p;
  for (const auto& [id, n] : counts) {
    ASSERT_TRUE(DecodePath(dag, num, Z(id), &p));
    AddPathToEdgeCounts(dag, p, n, &edge_counts);
  }
  EXPECT_EQ(edge_counts, (std::vector<uint64_t>{1, 3, 2, 1, 2, 0, 0}));

  // A truncated path with no pre-count stored but a continuation: the
  // residue goes negative (verify reports it), nothing is lost.
  counts = {{0, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {2, Neg(1)}}));
  // Not a fake edge into EXIT: refused.
  EXPECT_FALSE(SettlePrecounts(dag, num, f, {2}, &counts, &err));
  EXPECT_NE(err.find("pre-count edge 2"), std::string::npos) << err;
}

// The loop of LoopWhoseThirdCallExits, its call cut short once from the
// header (path 5) with that pre-count not made: settling leaves path 5 at
// minus the one iteration that went on past the call, and the balance of
// block 2 (2 path ends at the back edge into it, paths from it 1 - 1)
// gives it back its 1.
TEST(BalanceStarts, TruncatedPathFromTheLoopHeader) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // True: ENTRY 2 3 4 back (0) once, 2 3 4 back (3) once, 2 3 cut short
  // (5) once.  Stored: the pre-count of "ENTRY 2 3" (2) once, 0 and 3
  // once, nothing at 5.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {2, 1}, {3, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, Neg(1)}}));
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{5, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, 1}}));
  // Nothing cut short: the balance adds nothing and keeps no zero.
  counts = {{0, 1}, {2, 1}, {3, 2}, {4, 1}};  // 3 twice; 4 = 2 3 4 5 EXIT
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{5, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 2}, {4, 1}}));
  // A listed path must start at the block and end cut short at a call,
  // or end into the block without starting there: not 2 3 4 back.
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{3, 2}}, &counts, &err));
  EXPECT_NE(err.find("balanced path 3 is neither a path from block 2 cut "
                     "short at a call nor one ending into it"),
            std::string::npos)
      << err;
  // Nor may a block balance two paths.
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{0, 2}, {5, 2}}, &counts, &err));
  EXPECT_NE(err.find("block 2 balances two paths"), std::string::npos)
      << err;
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{2, 2}}, &counts, &err));
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{5, 3}}, &counts, &err));
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{6, 2}}, &counts, &err));
  EXPECT_NE(err.find("balanced path 6 cannot be decoded"), std::string::npos)
      << err;
}

// The other side of the balance: a path ending into block 2 (at the back
// edge) without starting there, its count not made.  One invocation that
// goes round twice and returns, no call cut short (no pre-counts): true
// ENTRY 2 3 4 back (0) once, 2 3 4 back (3) once, 2 3 4 5 EXIT (4) once;
// stored without path 0.  Ends into 2: 0 + 1, paths from 2: 1 + 1, so
// path 0 gets 1.
TEST(BalanceStarts, PathEndingIntoTheLoopHeader) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  std::map<uint64_t, uint64_t> counts{{3, 1}, {4, 1}};
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{0, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {4, 1}}));
  // Three invocations, each straight through (ENTRY 2 3 4 5 EXIT, path 1):
  // path 0 never ran, and gets nothing.
  counts = {{1, 3}};
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{0, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{1, 3}}));
}

// LoopWithExitingCall invoked 3 times: ENTRY 2 3 4 back (0) then 2 3 4 5
// EXIT (4); ENTRY 2 3 cut short at the call (2); ENTRY 2 3 4 5 EXIT (1).
// Path 2's pre-count is not made (entry balance): settling leaves it at
// minus the 2 entries that went on past the call, and the 3 invocations
// give it back 3.
TEST(BalanceEntry, TruncatedPathFromTheEntry) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Stored: 0, 4 and 1 once; the pre-count of "2 3" (5) once (the second
  // round of the first invocation); nothing at 2.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {1, 1}, {4, 1}, {5, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts,
            (std::map<uint64_t, uint64_t>{{0, 1}, {1, 1}, {2, Neg(2)}, {4, 1}}));
  ASSERT_TRUE(BalanceEntry(dag, num, f, 2, 3, &counts, &err)) << err;
  EXPECT_EQ(counts,
            (std::map<uint64_t, uint64_t>{{0, 1}, {1, 1}, {2, 1}, {4, 1}}));
  // Nothing cut short: the balance adds nothing and keeps no zero.
  counts = {{0, 1}, {1, 2}, {4, 1}, {5, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  ASSERT_TRUE(BalanceEntry(dag, num, f, 2, 3, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {1, 2}, {4, 1}}));
  // The path must start at the entry edge and end cut short at a call.
  for (uint64_t path : {0u, 1u, 5u}) {
    EXPECT_FALSE(BalanceEntry(dag, num, f, path, 3, &counts, &err));
    EXPECT_NE(err.find("entry-balanced path " + std::to_string(path) +
                       " is not a path from the function's entry cut short "
                       "at a call"),
              std::string::npos)
        << err;
  }
  EXPECT_FALSE(BalanceEntry(dag, num, f, 6, 3, &counts, &err));
  EXPECT_NE(err.find("entry-balanced path 6 cannot be decoded"),
            std::string::npos)
      << err;
}

// Random CFGs with random calls that may not return and random cuts: the
// stored counts are simulated forward from random true path counts (every
// pre-counting block a path reaches counts its prefix, every path not cut
// short counts itself), and settling must give the true counts back.
TEST(SettlePrecounts, RandomCfgsAgainstForwardSimulation) {
  std::mt19937_64 rng(0x5e771e);
  int checked = 0, with_precounts = 0, with_cut_blocks = 0;
  for (int g = 0; g < 300; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    Function f = RandomCfg(rng, /*well_formed=*/true);
    const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
    // Calls that may not return: fake edges block->EXIT (one per block).
    std::vector<bool> fake(nb, false);
    for (const Edge& e : f.edges)
      if ((e.flags & kEdgeFake) && e.dst == kExitBlock) fake[e.src] = true;
    for (uint32_t b = 2; b < nb; ++b)
      if (!fake[b] && rng() % 2) {
        f.edges.push_back(Edge{b, kExitBlock, kEdgeFake, kNoCounter});
        fake[b] = true;
      }
    std::stable_sort(f.edges.begin(), f.edges.end(),
                     [](const Edge& a, const Edge& b) { return a.src < b.src; });
    U precount;
    for (uint32_t i = 0; i < f.edges.size(); ++i)
      if ((f.edges[i].flags & kEdgeFake) && f.edges[i].dst == kExitBlock &&
          f.edges[i].src != kEntryBlock && rng() % 4 != 0)
        precount.push_back(i);
    PathPlan plan;
    std::string err;
    // Half the graphs cut at blocks too (any limit >= |path edges| plans).
    const uint64_t limit = rng() % 2 ? kMaxInstrumentedPaths
                                     : CountPathEdges(f) + rng() % 3;
    if (!PlanPaths(f, {}, limit, &plan, &err)) continue;
    PathDag dag;
    ASSERT_TRUE(BuildPathDag(f, plan.cuts, &dag, &err)) << err;
    const PathNumbering num = NumberPaths(dag);
    std::vector<Path> paths;
    if (!AllPaths(dag, CountByDp(dag), 2000, &paths)) continue;
    std::vector<int64_t> fake_of(dag.n_vertices, -1);
    for (uint32_t e : precount)
      if (dag.dag_edge_of_cfg[e] >= 0)
        fake_of[dag.edges[dag.dag_edge_of_cfg[e]].src] =
            dag.dag_edge_of_cfg[e];
    std::map<uint64_t, uint64_t> truth, stored;
    for (const Path& p : paths) {
      if (rng() % 3 == 0) continue;
      const uint64_t n = 1 + rng() % 5;
      truth[Low64(EncodePath(num, p))] += n;
      mpz_class prefix = 0;
      bool cut_short = false;
      for (uint32_t d : p) {
        const int64_t fk = fake_of[dag.edges[d].src];
        if (fk >= 0) {  // the call is reached: its pre-count runs
          stored[Low64(prefix + num.val[fk])] += n;
          cut_short = fk == static_cast<int64_t>(d);
        }
        prefix += num.val[d];
      }
      if (!cut_short) stored[Low64(prefix)] += n;  // the path's own end
    }
    with_precounts += !precount.empty();
    with_cut_blocks += !plan.cuts.blocks.empty();
    ASSERT_TRUE(SettlePrecounts(dag, num, f, precount, &stored, &err)) << err;
    EXPECT_EQ(stored, truth);
    ++checked;
  }
  EXPECT_GT(checked, 250);
  EXPECT_GT(with_precounts, 200);
  EXPECT_GT(with_cut_blocks, 30);
}

}  // namespace
}  // namespace ballarus
