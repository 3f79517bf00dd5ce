// path_correlation_test.cc — definite flow and branch correlation
// (core/path_correlation.h) on hand-made graphs, every figure derived by
// hand in a comment; and the definite-flow bound against an exhaustive
// search of the integer path profiles with the same edge counts (the
// bound is claimed exact on a DAG: path_correlation.h).
#include "core/path_correlation.h"

#include <gmpxx.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

// A function's path DAG (back edges cut) and every one of its paths.
struct Graph {
  Function fn;
  PathDag dag;
  std::vector<std::vector<uint32_t>> paths;  // DAG edges, by path number
};

Graph Build(uint32_t n_blocks, const std::vector<E>& edges) {
  Graph g;
  g.fn = Make(n_blocks, edges);
  PathCuts cuts;
  cuts.edges = FindBackEdges(g.fn);
  std::string err;
  EXPECT_TRUE(BuildPathDag(g.fn, cuts, &g.dag, &err)) << err;
  const PathNumbering num = NumberPaths(g.dag);
  for (mpz_class id = 0; id < num.total(); ++id) {
    g.paths.emplace_back();
    EXPECT_TRUE(DecodePath(g.dag, num, id, &g.paths.back()));
  }
  return g;
}

// The path whose blocks (PathBlocks) are `blocks`; fails the test if none.
const std::vector<uint32_t>* PathOf(const Graph& g,
                                    const std::vector<uint32_t>& blocks) {
  for (const std::vector<uint32_t>& p : g.paths)
    if (PathBlocks(g.dag, p) == blocks) return &p;
  ADD_FAILURE() << "no such path";
  return &g.paths.front();
}

// Two diamonds in a row: `if (x) A else B; if (y) C else D;`.
//   ENTRY 0, EXIT 1, first test 2, A 3, B 4, second test 5, C 6, D 7.
Graph TwoDiamonds() {
  return Build(8, {{0, 2, kEdgeFallthru},
                   {2, 3, kEdgeTrue},
                   {2, 4, kEdgeFalse},
                   {3, 5, kEdgeFallthru},
                   {4, 5, kEdgeFallthru},
                   {5, 6, kEdgeTrue},
                   {5, 7, kEdgeFalse},
                   {6, 1, kEdgeFallthru},
                   {7, 1, kEdgeFallthru}});
}

// The two-diamond paths through A/B and C/D.
struct Diamonds {
  const std::vector<uint32_t>*ac, *ad, *bc, *bd;
};
Diamonds PathsOf(const Graph& g) {
  return {PathOf(g, {0, 2, 3, 5, 6, 1}), PathOf(g, {0, 2, 3, 5, 7, 1}),
          PathOf(g, {0, 2, 4, 5, 6, 1}), PathOf(g, {0, 2, 4, 5, 7, 1})};
}

const BranchCorrelation* BranchAt(const PathCorrelation& c, uint32_t block) {
  for (const BranchCorrelation& b : c.branches)
    if (b.block == block) return &b;
  return nullptr;
}

TEST(PathCorrelation, CorrelatedDiamonds) {
  // y == x, x true 30 times out of 100: paths A-C 30, B-D 70.
  const Graph g = TwoDiamonds();
  const Diamonds d = PathsOf(g);
  const std::vector<ExecutedPath> run = {{d.ac, 30}, {d.bd, 70}};
  // Edge counts: 0->2 100, 2->3 30, 2->4 70, 3->5 30, 4->5 70, 5->6 30,
  // 5->7 70.  definite(A-C) = 100 - (100 - 30) - (30 - 30) - (100 - 30)
  // = -40 -> 0; definite(B-D) = 100 - (100 - 70) - 0 - (100 - 70) = 40.
  // (The profiles with these edge counts: A-C t, A-D 30-t, B-C 30-t,
  // B-D 40+t, t in [0, 30]: least A-C 0, least B-D 40.)
  EXPECT_EQ(DefiniteFlows(g.dag, run), (std::vector<uint64_t>{0, 40}));
  const PathCorrelation c = Correlate(g.fn, g.dag, run);
  EXPECT_EQ(c.executions, 100u);
  EXPECT_EQ(c.determined, 40u);
  EXPECT_DOUBLE_EQ(c.UndeterminedShare(), 0.6);
  // Block 2: 100 directions, 70 the majority: 30 missed by either
  // prediction (its prefix is ENTRY->2 alone).  Block 5: 30 missed by the
  // edge prediction (always D); after A always C, after B always D: the
  // path prediction misses none.
  EXPECT_EQ(c.branch_executions, 200u);
  EXPECT_EQ(c.miss_edge, 60u);
  EXPECT_EQ(c.miss_path, 30u);
  EXPECT_EQ(c.gain(), 30u);
  EXPECT_DOUBLE_EQ(c.GainShare(), 0.15);
  ASSERT_EQ(c.branches.size(), 2u);
  EXPECT_EQ(c.branches[0].block, 5u);  // largest gain first
  EXPECT_EQ(c.branches[0].executions, 100u);
  EXPECT_EQ(c.branches[0].miss_edge, 30u);
  EXPECT_EQ(c.branches[0].miss_path, 0u);
  EXPECT_EQ(c.branches[1].block, 2u);
  EXPECT_EQ(c.branches[1].miss_edge, 30u);
  EXPECT_EQ(c.branches[1].miss_path, 30u);
}

TEST(PathCorrelation, CorrelatedDiamondsEvenSplit) {
  // y == x, half and half: the edge counts allow A-C 0 .. 50 — nothing is
  // determined, and the second branch is still fully predicted by its
  // prefix.
  const Graph g = TwoDiamonds();
  const Diamonds d = PathsOf(g);
  const PathCorrelation c = Correlate(g.fn, g.dag, {{d.ac, 50}, {d.bd, 50}});
  EXPECT_EQ(c.determined, 0u);
  EXPECT_DOUBLE_EQ(c.UndeterminedShare(), 1.0);
  // miss_edge: 50 at block 2, 50 at block 5; miss_path: 50 at block 2.
  EXPECT_EQ(c.miss_edge, 100u);
  EXPECT_EQ(c.miss_path, 50u);
  ASSERT_NE(BranchAt(c, 5), nullptr);
  EXPECT_EQ(BranchAt(c, 5)->miss_path, 0u);
}

TEST(PathCorrelation, IndependentDiamonds) {
  // x true 30 %, y true 60 %, independent: A-C 18, A-D 12, B-C 42, B-D 28.
  const Graph g = TwoDiamonds();
  const Diamonds d = PathsOf(g);
  const std::vector<ExecutedPath> run = {
      {d.ac, 18}, {d.ad, 12}, {d.bc, 42}, {d.bd, 28}};
  // Edge counts 2->3 30, 2->4 70, 5->6 60, 5->7 40.
  // A-C: 100 - 70 - 0 - 40 = -10 -> 0.  A-D: 100 - 70 - 0 - 60 -> 0.
  // B-C: 100 - 30 - 0 - 40 = 30.  B-D: 100 - 30 - 0 - 60 = 10.
  // (Profiles: A-C a, A-D 30-a, B-C 60-a, B-D 10+a, a in [0, 30].)
  EXPECT_EQ(DefiniteFlows(g.dag, run), (std::vector<uint64_t>{0, 0, 30, 10}));
  const PathCorrelation c = Correlate(g.fn, g.dag, run);
  EXPECT_EQ(c.determined, 40u);
  // miss_edge: block 2 100 - 70 = 30, block 5 100 - 60 = 40.  miss_path:
  // block 2 30; block 5 after A min(18, 12) = 12, after B min(42, 28) =
  // 28, 40: the prefix tells nothing.
  EXPECT_EQ(c.miss_edge, 70u);
  EXPECT_EQ(c.miss_path, 70u);
  EXPECT_EQ(c.gain(), 0u);
  ASSERT_NE(BranchAt(c, 5), nullptr);
  EXPECT_EQ(BranchAt(c, 5)->miss_edge, 40u);
  EXPECT_EQ(BranchAt(c, 5)->miss_path, 40u);
}

// A loop whose body alternates A, B, A, B:
//   for (i = 0; i < 4; i++) if (i % 2 == 0) A else B;
//   ENTRY 0, EXIT 1, header 2, test 3, A 4, B 5, latch 6, after 7.
// The back edge 6->2 is cut: paths run ENTRY->2 .. 6 (then "back edge"),
// start again at 2 (the start dummy ENTRY->2) .. 6, and finally 2->7->EXIT.
Graph AlternatingLoop() {
  return Build(8, {{0, 2, kEdgeFallthru},
                   {2, 3, kEdgeTrue},
                   {2, 7, kEdgeFalse},
                   {3, 4, kEdgeTrue},
                   {3, 5, kEdgeFalse},
                   {4, 6, kEdgeFallthru},
                   {5, 6, kEdgeFallthru},
                   {6, 2, kEdgeFallthru},  // back edge
                   {7, 1, kEdgeFallthru}});
}

TEST(PathCorrelation, LoopWithBackEdges) {
  const Graph g = AlternatingLoop();
  ASSERT_EQ(FindBackEdges(g.fn), (std::vector<uint32_t>{7}));
  // Ten calls, four iterations each: per call ENTRY-2-3-4-6 (A) once, then
  // from the header 2-3-5-6 (B) twice, 2-3-4-6 (A) once, 2-7-EXIT once.
  const std::vector<uint32_t>* entry_a = PathOf(g, {0, 2, 3, 4, 6});
  const std::vector<uint32_t>* loop_a = PathOf(g, {2, 3, 4, 6});
  const std::vector<uint32_t>* loop_b = PathOf(g, {2, 3, 5, 6});
  const std::vector<uint32_t>* leave = PathOf(g, {2, 7, 1});
  const std::vector<ExecutedPath> run = {
      {entry_a, 10}, {loop_b, 20}, {loop_a, 10}, {leave, 10}};
  // DAG edge counts: ENTRY->2 10, start->2 40 (the back edge's count),
  // 2->3 40, 2->7 10, 3->4 20, 3->5 20; through 2: 50, through 3: 40.
  // entry A: 10 - (50 - 40) - (40 - 20) = -20 -> 0.
  // loop B: 40 - (50 - 40) - (40 - 20) = 10; loop A likewise 10.
  // leave: 40 - (50 - 10) = 0.
  // (Profiles: ENTRY-2-7 p, ENTRY-A q, ENTRY-B 10-p-q, loop A 20-q, loop B
  // 10+p+q, leave 10-p: least loop A and loop B 10, the others 0.)
  EXPECT_EQ(DefiniteFlows(g.dag, run),
            (std::vector<uint64_t>{0, 10, 10, 0}));
  const PathCorrelation c = Correlate(g.fn, g.dag, run);
  EXPECT_EQ(c.executions, 50u);
  EXPECT_EQ(c.determined, 20u);
  // Block 2: 40 to the body, 10 out: miss_edge 10; after ENTRY->2 always
  // the body (0), after the back edge 30 body, 10 out (10).  Block 3: 20
  // A, 20 B: miss_edge 20; after ENTRY always A (0), after the back edge
  // 10 A, 20 B (10).  The latch 6 has one successor: no branch.
  EXPECT_EQ(c.branch_executions, 90u);
  EXPECT_EQ(c.miss_edge, 30u);
  EXPECT_EQ(c.miss_path, 20u);
  EXPECT_EQ(BranchAt(c, 6), nullptr);
  ASSERT_NE(BranchAt(c, 3), nullptr);
  EXPECT_EQ(BranchAt(c, 3)->miss_path, 10u);
}

TEST(PathCorrelation, FakeEdgesAreNoDirection) {
  // Block 2 calls a function that may not return (fake edge to EXIT) and
  // falls through to 3: not a conditional block.  Paths: 2-3 8 times,
  // the fake exit twice.
  const Graph g = Build(4, {{0, 2, kEdgeFallthru},
                            {2, 3, kEdgeFallthru},
                            {2, 1, kEdgeFake},
                            {3, 1, kEdgeFallthru}});
  const std::vector<int64_t> dir = BranchDirections(g.fn, g.dag);
  EXPECT_TRUE(std::all_of(dir.begin(), dir.end(),
                          [](int64_t d) { return d < 0; }));
  const PathCorrelation c = Correlate(
      g.fn, g.dag, {{PathOf(g, {0, 2, 3, 1}), 8}, {PathOf(g, {0, 2, 1}), 2}});
  EXPECT_EQ(c.branch_executions, 0u);
  EXPECT_EQ(c.miss_edge, 0u);
  // Each path has an edge of its own (2->3, 2->EXIT): both determined.
  EXPECT_EQ(c.determined, 10u);
  EXPECT_DOUBLE_EQ(c.UndeterminedShare(), 0.0);
}

// The least count of each path over every integer path profile with the
// same DAG edge counts as `counts` (counts per path number).
std::vector<uint64_t> ExhaustiveMinimum(const Graph& g,
                                        const std::vector<uint64_t>& counts) {
  auto edge_counts = [&](const std::vector<uint64_t>& cs) {
    std::vector<uint64_t> c(g.dag.edges.size(), 0);
    for (size_t p = 0; p < cs.size(); ++p)
      for (uint32_t e : g.paths[p]) c[e] += cs[p];
    return c;
  };
  const std::vector<uint64_t> want = edge_counts(counts);
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  std::vector<uint64_t> best(counts.size(), total), cur(counts.size(), 0);
  // Every vector of counts with the same total (the entry's flow).
  std::function<void(size_t, uint64_t)> assign = [&](size_t p,
                                                     uint64_t left) {
    if (p + 1 == cur.size()) {
      cur[p] = left;
      if (edge_counts(cur) == want)
        for (size_t i = 0; i < cur.size(); ++i)
          best[i] = std::min(best[i], cur[i]);
      return;
    }
    for (uint64_t c = 0; c <= left; ++c) {
      cur[p] = c;
      assign(p + 1, left - c);
    }
  };
  assign(0, total);
  return best;
}

// Three graphs: two diamonds, three diamonds in a row, and a diamond whose
// arms are joined and skipped (paths of different lengths that share
// edges); and the alternating loop.  Random small profiles of each.
TEST(PathCorrelation, BoundIsTheExhaustiveMinimum) {
  std::vector<Graph> graphs;
  graphs.push_back(TwoDiamonds());
  graphs.push_back(Build(11, {{0, 2, kEdgeFallthru},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 5, kEdgeFallthru},
                              {4, 5, kEdgeFallthru},
                              {5, 6, kEdgeTrue},
                              {5, 7, kEdgeFalse},
                              {6, 8, kEdgeFallthru},
                              {7, 8, kEdgeFallthru},
                              {8, 9, kEdgeTrue},
                              {8, 10, kEdgeFalse},
                              {9, 1, kEdgeFallthru},
                              {10, 1, kEdgeFallthru}}));
  graphs.push_back(Build(7, {{0, 2, kEdgeFallthru},
                             {2, 3, kEdgeTrue},
                             {2, 4, kEdgeFalse},
                             {3, 4, kEdgeTrue},
                             {3, 5, kEdgeFalse},
                             {4, 5, kEdgeTrue},
                             {4, 6, kEdgeFalse},
                             {5, 6, kEdgeFallthru},
                             {2, 6, kEdgeSwitch},
                             {6, 1, kEdgeFallthru}}));
  graphs.push_back(AlternatingLoop());
  std::mt19937 rng(36);
  size_t checked = 0;
  for (const Graph& g : graphs) {
    ASSERT_LE(g.paths.size(), 8u);
    for (int round = 0; round < 40; ++round) {
      std::vector<uint64_t> counts(g.paths.size());
      std::vector<ExecutedPath> run;
      for (size_t p = 0; p < counts.size(); ++p) {
        counts[p] = rng() % (g.paths.size() > 6 ? 2 : 3);
        run.push_back({&g.paths[p], counts[p]});
      }
      EXPECT_EQ(DefiniteFlows(g.dag, run), ExhaustiveMinimum(g, counts));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 160u);
}

}  // namespace
}  // namespace ballarus
