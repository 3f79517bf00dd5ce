// path_loops_test.cc — loops of the path DAG (core/path_loops.h): one-path
// loops counted in a local, checked by simulating their counting against
// the true path counts, and loops whose entry edges can be cut.
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

// ---------------------------------------------------------------------------
// FindCountedLoops: loops whose iterations take one path, counted in a
// local instead of a memory update per iteration.

// Everything FindCountedLoops needs, for a function cut at its back edges.
struct Planned {
  PathCuts cuts;
  PathDag dag;
  PathIncrements inc;
};
Planned PlanForLoops(const Function& f, const std::vector<uint64_t>& w = {}) {
  Planned p;
  std::string err;
  p.cuts.edges = FindBackEdges(f);
  EXPECT_TRUE(BuildPathDag(f, p.cuts, &p.dag, &err)) << err;
  std::vector<uint64_t> weights = w;
  if (weights.empty()) weights.assign(f.edges.size(), 1);
  EXPECT_TRUE(PlaceIncrements(f, p.dag, weights, &p.inc, &err)) << err;
  return p;
}

TEST(FindCountedLoops, OnePathLoopsOnly) {
  // ENTRY->2; 2->3 (header) ; 3->4 body, 4->3 back; 3->5 exit; 5->EXIT.
  const Function simple = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 4, kEdgeTrue},
                                   {3, 5, kEdgeFalse},
                                   {4, 3, kEdgeFallthru},
                                   {5, 1, kEdgeFallthru}});
  Planned p = PlanForLoops(simple);
  std::vector<CountedLoop> loops =
      FindCountedLoops(simple, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].back_edge, 4u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[0].exits, (U{3}));
  // K is the number of the path "3 4 back": decode it.
  const PathNumbering num = NumberPaths(p.dag);
  EXPECT_EQ(BlocksOf(p.dag, num, loops[0].iteration), (U{3, 4}));
  EXPECT_EQ(loops[0].iteration - loops[0].start, loops[0].first_offset);
  // The first iteration, from ENTRY: register at the header 0 + Val... its
  // number is s + first_offset for s the register on entering (here the
  // increments of 0->2 and 2->3, a tree path: whatever they sum to).
  Path first;
  ASSERT_TRUE(DecodePath(p.dag, num, Z(0), &first));

  // An if inside the body: two paths per iteration, not counted.
  const Function two = Make(7, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 6, kEdgeFalse},
                                {3, 4, kEdgeTrue},
                                {3, 5, kEdgeFalse},
                                {4, 5, kEdgeFallthru},
                                {5, 2, kEdgeFallthru},
                                {6, 1, kEdgeFallthru}});
  p = PlanForLoops(two);
  EXPECT_TRUE(FindCountedLoops(two, p.dag, p.cuts, p.inc, {}).empty());

  // The simple loop with a call in its body (block 4) that may not return:
  // excluded by the caller -> not counted; a call that always returns
  // (same fake edge, not excluded) is fine.
  Function call = simple;
  call.edges.insert(call.edges.begin() + 5, Edge{4, 1, kEdgeFake, kNoCounter});
  p = PlanForLoops(call);
  std::vector<bool> excluded(6, false);
  excluded[4] = true;
  EXPECT_TRUE(FindCountedLoops(call, p.dag, p.cuts, p.inc, excluded).empty());
  loops = FindCountedLoops(call, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].exits, (U{3}));  // the fake edge is no exit

  // Nested: the inner one-path loop is counted, the outer is not (it holds
  // the inner header).  0->2 2->3 3->3 (self loop) 3->4 4->2 (back) 4->5
  // 5->EXIT.
  const Function nested = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 3, kEdgeTrue},
                                   {3, 4, kEdgeFalse},
                                   {4, 2, kEdgeTrue},
                                   {4, 5, kEdgeFalse},
                                   {5, 1, kEdgeFallthru}});
  p = PlanForLoops(nested);
  loops = FindCountedLoops(nested, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[0].exits, (U{3}));
  EXPECT_EQ(loops[0].first_offset, loops[0].iteration - loops[0].start);

  // Two entries (irreducible): 0->2, 2->3, 2->4, 3->4, 4->3 (back), 4->5.
  const Function irr = Make(6, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 4, kEdgeFalse},
                                {3, 4, kEdgeFallthru},
                                {4, 3, kEdgeTrue},
                                {4, 5, kEdgeFalse},
                                {5, 1, kEdgeFallthru}});
  p = PlanForLoops(irr);
  EXPECT_TRUE(FindCountedLoops(irr, p.dag, p.cuts, p.inc, {}).empty());

  // An abnormal re-entry into the body (fake ENTRY edge): not counted.
  Function reentered = simple;
  reentered.edges.insert(reentered.edges.begin() + 1,
                         Edge{0, 4, kEdgeFake, kNoCounter});
  p = PlanForLoops(reentered);
  EXPECT_TRUE(
      FindCountedLoops(reentered, p.dag, p.cuts, p.inc, {}).empty());
}

// FindLoopEntries: every loop entered at its header alone, whatever its
// paths per iteration, with its entry edges (for multi-path loop entry
// cuts); cutting them keeps the DAG acyclic and never adds paths.
TEST(FindLoopEntries, LoopsEnteredAtTheirHeaderWithAnyPaths) {
  // Two paths per iteration: 0->2 2->3 (header) 3->4 3->7 (exit) 4->5
  // 4->6 5->6 6->3 (back, from the latch 6 where both paths merge) 7->EXIT.
  // Edge indices in this order.
  const Function two = Make(8, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeFallthru},
                                {3, 4, kEdgeTrue},
                                {3, 7, kEdgeFalse},
                                {4, 5, kEdgeTrue},
                                {4, 6, kEdgeFalse},
                                {5, 6, kEdgeFallthru},
                                {6, 3, kEdgeFallthru},
                                {7, 1, kEdgeFallthru}});
  PathCuts cuts;
  cuts.edges = FindBackEdges(two);
  ASSERT_EQ(cuts.edges, (U{7}));
  std::vector<LoopEntries> loops = FindLoopEntries(two, cuts);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].back_edge, 7u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  U body = loops[0].body;
  std::sort(body.begin(), body.end());
  EXPECT_EQ(body, (U{3, 4, 5, 6}));
  // Cut the entry too: still a DAG, no more paths than before.
  Planned before = PlanForLoops(two);
  PathCuts with = cuts;
  with.edges.push_back(1);
  std::sort(with.edges.begin(), with.edges.end());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(two, with, &dag, &err)) << err;
  EXPECT_LE(NumberPaths(dag).total(), NumberPaths(before.dag).total());
  // Once the entry is cut, the header has two cut edges into it: not
  // listed again.
  EXPECT_TRUE(FindLoopEntries(two, with).empty());

  // Nested: both the inner self loop (3->3, entered by 2->3) and the outer
  // loop (back edge 4->2, entered by 0->2 from ENTRY) are listed.
  const Function nested = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 3, kEdgeTrue},
                                   {3, 4, kEdgeFalse},
                                   {4, 2, kEdgeTrue},
                                   {4, 5, kEdgeFalse},
                                   {5, 1, kEdgeFallthru}});
  cuts.edges = FindBackEdges(nested);
  loops = FindLoopEntries(nested, cuts);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[1].header, 2u);
  EXPECT_EQ(loops[1].entries, (U{0}));  // out of ENTRY
  body = loops[1].body;
  std::sort(body.begin(), body.end());
  EXPECT_EQ(body, (U{2, 3, 4}));

  // Entered elsewhere than at its header (irreducible): not listed.
  const Function irr = Make(6, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 4, kEdgeFalse},
                                {3, 4, kEdgeFallthru},
                                {4, 3, kEdgeTrue},
                                {4, 5, kEdgeFalse},
                                {5, 1, kEdgeFallthru}});
  cuts.edges = FindBackEdges(irr);
  EXPECT_TRUE(FindLoopEntries(irr, cuts).empty());

  // Re-entered abnormally (a fake ENTRY edge into the body, or into the
  // header): not listed.
  Function reentered = two;
  reentered.edges.insert(reentered.edges.begin() + 1,
                         Edge{0, 4, kEdgeFake, kNoCounter});
  cuts.edges = FindBackEdges(reentered);
  EXPECT_TRUE(FindLoopEntries(reentered, cuts).empty());
  Function header_reentered = two;
  header_reentered.edges.insert(header_reentered.edges.begin() + 1,
                                Edge{0, 3, kEdgeFake, kNoCounter});
  cuts.edges = FindBackEdges(header_reentered);
  EXPECT_TRUE(FindLoopEntries(header_reentered, cuts).empty());

  // A header that is a cut block: not listed.
  cuts.edges = FindBackEdges(two);
  cuts.blocks = {3};
  // (the back edge may not target a cut block: the caller never asks; a
  // loop whose header is cut has nothing to gain)
  EXPECT_TRUE(FindLoopEntries(two, cuts).empty());
}

// On random CFGs, cutting every listed loop's entry edges as well as the
// back edges gives a valid DAG with no more paths, and each listed loop's
// header is entered only by its back edge and its entries.
TEST(FindLoopEntries, EntryCutsStayValidOnRandomCfgs) {
  std::mt19937_64 rng(0x6c0095);
  int listed = 0;
  for (int g = 0; g < 300; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/g % 2 == 0);
    PathCuts cuts;
    cuts.edges = FindBackEdges(f);
    PathDag dag;
    std::string err;
    if (!BuildPathDag(f, cuts, &dag, &err)) continue;
    const mpz_class before = NumberPaths(dag).total();
    PathCuts with = cuts;
    for (const LoopEntries& L : FindLoopEntries(f, cuts)) {
      ++listed;
      EXPECT_FALSE(L.entries.empty());
      for (uint32_t i : L.entries) {
        EXPECT_EQ(f.edges[i].dst, L.header);
        EXPECT_FALSE(f.edges[i].flags & kEdgeFake);
        EXPECT_NE(i, L.back_edge);
        with.edges.push_back(i);
      }
    }
    std::sort(with.edges.begin(), with.edges.end());
    with.edges.erase(std::unique(with.edges.begin(), with.edges.end()),
                     with.edges.end());
    PathDag cut_dag;
    ASSERT_TRUE(BuildPathDag(f, with, &cut_dag, &err)) << err;
    EXPECT_LE(NumberPaths(cut_dag).total(), before);
  }
  EXPECT_GT(listed, 50);
}

// The counted-loop instrumentation, simulated on random walks through
// random CFGs, gives exactly the path counts of the plain Ball-Larus
// instrumentation (each walk's paths decoded independently as the oracle).
TEST(FindCountedLoops, SimulatedCountsEqualTruePathCounts) {
  std::mt19937_64 rng(0x100b5);
  int graphs_with_loops = 0, loop_runs = 0, multi_iterations = 0;
  for (int g = 0; g < 400; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/true);
    const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
    std::vector<uint64_t> w(f.edges.size());
    for (uint64_t& x : w) x = rng() % 100;
    Planned p = PlanForLoops(f, w);
    const PathNumbering num = NumberPaths(p.dag);
    if (num.total() > Z(1000000)) continue;
    std::vector<bool> excluded(nb, false);
    for (const Edge& e : f.edges)
      if ((e.flags & kEdgeFake) && e.dst == kExitBlock && rng() % 2)
        excluded[e.src] = true;
    const std::vector<CountedLoop> loops =
        FindCountedLoops(f, p.dag, p.cuts, p.inc, excluded);
    if (loops.empty()) continue;
    ++graphs_with_loops;
    // Per model edge: the loops it enters / leaves / closes.
    std::vector<std::vector<size_t>> enters(f.edges.size()),
        leaves(f.edges.size());
    std::vector<int> closes(f.edges.size(), -1);
    for (size_t l = 0; l < loops.size(); ++l) {
      for (uint32_t i : loops[l].entries) enters[i].push_back(l);
      for (uint32_t i : loops[l].exits) leaves[i].push_back(l);
      closes[loops[l].back_edge] = static_cast<int>(l);
    }
    std::vector<bool> is_cut(f.edges.size(), false);
    for (uint32_t i : p.cuts.edges) is_cut[i] = true;
    std::vector<std::vector<uint32_t>> succ(nb);
    for (uint32_t i = 0; i < f.edges.size(); ++i)
      if (IsPathEdge(f.edges[i]) && !(f.edges[i].flags & kEdgeFake))
        succ[f.edges[i].src].push_back(i);
    std::map<uint64_t, uint64_t> truth, counted;
    for (int walk = 0; walk < 30; ++walk) {
      // A random walk ENTRY .. EXIT of at most 300 edges.
      std::vector<uint32_t> edges;
      uint32_t v = kEntryBlock;
      while (v != kExitBlock && edges.size() < 300 && !succ[v].empty()) {
        const uint32_t i = succ[v][rng() % succ[v].size()];
        edges.push_back(i);
        v = f.edges[i].dst;
      }
      if (v != kExitBlock) continue;
      // Oracle: the walk's DAG paths, numbered.
      mpz_class id = 0;
      for (uint32_t i : edges) {
        const int64_t d = p.dag.dag_edge_of_cfg[i];
        id += num.val[d];
        if (is_cut[i] || f.edges[i].dst == kExitBlock) {
          ++truth[Low64(id)];
          if (is_cut[i]) id = num.val[p.dag.start_edge[f.edges[i].dst]];
        }
      }
      // The instrumentation, with counted loops.
      uint64_t r = 0;
      std::vector<uint64_t> s(loops.size(), 0), n(loops.size(), 0);
      for (uint32_t i : edges) {
        const uint64_t a = p.inc.inc[p.dag.dag_edge_of_cfg[i]];
        for (size_t l : leaves[i]) {
          const CountedLoop& L = loops[l];
          const uint64_t went_round = n[l] != 0;
          counted[s[l] + L.first_offset] += went_round;
          counted[L.iteration] += n[l] - went_round;
          if (!went_round) r += s[l] - L.start;
          loop_runs += 1;
          multi_iterations += n[l] > 1;
        }
        const Edge& e = f.edges[i];
        if (closes[i] >= 0) {
          ++n[closes[i]];
          r = loops[closes[i]].start;
        } else if (is_cut[i]) {
          ++counted[r + a];
          r = p.inc.inc[p.dag.start_edge[e.dst]];
        } else {
          r = e.src == kEntryBlock ? a : r + a;
          if (e.dst == kExitBlock) ++counted[r];
        }
        for (size_t l : enters[i]) {
          s[l] = r;
          r = loops[l].start;
          n[l] = 0;
        }
      }
    }
    for (auto it = counted.begin(); it != counted.end();)
      it = it->second == 0 ? counted.erase(it) : std::next(it);
    EXPECT_EQ(counted, truth);
  }
  EXPECT_GT(graphs_with_loops, 40);
  EXPECT_GT(loop_runs, 500);
  EXPECT_GT(multi_iterations, 100);
}

}  // namespace
}  // namespace ballarus
