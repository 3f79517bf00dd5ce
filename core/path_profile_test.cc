// path_profile_test.cc — Ball–Larus path numbering (core/path_dag.h) on
// hand-made graphs: the papers' examples with every number derived by hand
// in a comment (Ball & Larus, "Efficient Path Profiling", MICRO 1996, as
// reproduced by Weber's and Preuss's reports), and the cases the papers
// leave open (several back edges into one header, a latch that also
// returns, self-loops, parallel edges, irreducible regions, fake and
// abnormal edges, cut blocks).  Each graph also goes through CheckDag
// (test_path_checks.h), whose oracles are written independently of the
// implementation.
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

// MICRO'96 Figure 1: A->B, A->C, B->C, B->D, C->D, D->E, D->F, E->F, with A
// the entry and F the exit, here between ENTRY and EXIT.  Successors are
// listed so that the paper's encoding comes out: A->C before A->B, D->F
// before D->E.
//   blocks: ENTRY 0, EXIT 1, A 2, B 3, C 4, D 5, E 6, F 7.
Function PaperFigure1() {
  return Make(8, {{0, 2, kEdgeFallthru},  // 0 ENTRY->A
                  {2, 4, kEdgeFalse},     // 1 A->C
                  {2, 3, kEdgeTrue},      // 2 A->B
                  {3, 4, kEdgeFalse},     // 3 B->C
                  {3, 5, kEdgeTrue},      // 4 B->D
                  {4, 5, kEdgeFallthru},  // 5 C->D
                  {5, 7, kEdgeFalse},     // 6 D->F
                  {5, 6, kEdgeTrue},      // 7 D->E
                  {6, 7, kEdgeFallthru},  // 8 E->F
                  {7, 1, kEdgeFallthru}});  // 9 F->EXIT
}

TEST(PathNumbering, PaperFigure1) {
  const Function f = PaperFigure1();
  EXPECT_TRUE(FindBackEdges(f).empty());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NumPaths, bottom up: F = 1, E = 1 (E->F), D = F + E = 2, C = D = 2,
  // B = C + D = 4, A = C + B = 6, ENTRY = A = 6.
  const int want_np[] = {6, 1, 6, 4, 2, 2, 1, 1};
  for (uint32_t v = 0; v < 8; ++v) EXPECT_EQ(num.num_paths[v], want_np[v]);
  EXPECT_EQ(num.total(), 6);
  // Val(e_i) = NumPaths of the targets of v's earlier out-edges:
  // A->C 0, A->B = NP(C) = 2; B->C 0, B->D = NP(C) = 2; C->D 0;
  // D->F 0, D->E = NP(F) = 1; E->F, ENTRY->A, F->EXIT 0.
  const int want_val[] = {0, 0, 2, 0, 2, 0, 0, 1, 0, 0};
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(ValOf(dag, num, i), want_val[i]);
  // The paper's table: ACDF 0, ACDEF 1, ABCDF 2, ABCDEF 3, ABDF 4, ABDEF 5
  // (e.g. ABDEF = Val(A->B) + Val(B->D) + Val(D->E) = 2 + 2 + 1 = 5).
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 4, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 4, 5, 6, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 4, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{0, 2, 3, 4, 5, 6, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{0, 2, 3, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{0, 2, 3, 5, 6, 7, 1}));
  CheckDag(f, {}, 1);
}

TEST(PathIncrements, PaperFigure1Uniform) {
  const Function f = PaperFigure1();
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(10, 1), &inc,
                              &err))
      << err;
  // DAG edges are the model edges d0..d9.  Kruskal after the virtual edge,
  // equal weights by index: d0 ENTRY-A, d1 A-C, d2 A-B tree; d3 B-C closes
  // B-A-C: chord; d4 B-D tree; d5 C-D chord; d6 D-F, d7 D-E tree; d8 E-F
  // chord; d9 F-EXIT chord (F and EXIT both joined to ENTRY).  4 chords =
  // |E| - |V| + 2 = 10 - 8 + 2.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, true, true, false, true,
                                            false, true, true, false, false}));
  // Potentials along the tree: ENTRY = EXIT = A = C = 0, B = Val(A->B) = 2,
  // D = 2 + Val(B->D) = 4, F = 4 + 0 = 4, E = 4 + Val(D->E) = 5.
  // Inc(u->v) = pot(u) + Val - pot(v): B->C 2 + 0 - 0 = 2; C->D 0 + 0 - 4
  // = -4; E->F 5 + 0 - 4 = 1; F->EXIT 4 + 0 - 0 = 4.
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, 0, 2, 0, Neg(4), 0, 0, 1,
                                            4}));
  // E.g. ACDEF: -4 + 1 + 4 = 1; ABDF: 4.
}

TEST(PathIncrements, PaperFigure1HotPathGetsOneIncrement) {
  // A profile in which ABDEF is hot: the spanning tree takes its edges and
  // the increments land on the cold edges, as MICRO'96 §3.3 intends.
  const Function f = PaperFigure1();
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  PathIncrements inc;
  //                              0   1  2  3  4  5  6  7  8  9
  const std::vector<uint64_t> w{10, 1, 9, 1, 8, 2, 3, 7, 7, 10};
  ASSERT_TRUE(PlaceIncrements(f, dag, w, &inc, &err)) << err;
  // Kruskal by decreasing weight (ties by index): d0, d9 (10) tree; d2 A-B,
  // d4 B-D, d7 D-E tree; d8 E-F chord (E reaches F through D-B-A-ENTRY-
  // EXIT-F); d6 D-F (3) chord; d5 C-D (2) tree; d1 A-C, d3 B-C (1) chords.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, false, true, false, true,
                                            true, false, true, false, true}));
  // Potentials: ENTRY = EXIT = A = 0, F = 0 (F->EXIT, Val 0), B = 2, D = 4,
  // E = 5, C = D - Val(C->D) = 4.
  // Inc: A->C 0 + 0 - 4 = -4; B->C 2 + 0 - 4 = -2; D->F 4 + 0 - 0 = 4;
  // E->F 5 + 0 - 0 = 5.  The hot path ABDEF executes only r += 5.
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, Neg(4), 0, Neg(2), 0, 0, 4, 0,
                                            5, 0}));
  CheckDag(f, {}, 2);
}

// The loop of Weber's report (MICRO'96 §3.2): A->B, B->C, B->D, back edge
// C->B, D the exit.  Dummy edges ENTRY->B and C->EXIT replace the back edge.
//   blocks: ENTRY 0, EXIT 1, A 2, B 3, C 4, D 5.
Function PaperLoop() {
  return Make(6, {{0, 2, kEdgeFallthru},  // 0 ENTRY->A
                  {2, 3, kEdgeFallthru},  // 1 A->B
                  {3, 4, kEdgeTrue},      // 2 B->C
                  {3, 5, kEdgeFalse},     // 3 B->D
                  {4, 3, kEdgeFallthru},  // 4 C->B (back edge)
                  {5, 1, kEdgeFallthru}});  // 5 D->EXIT
}

TEST(PathNumbering, PaperLoopWithDummyEdges) {
  const Function f = PaperLoop();
  EXPECT_EQ(FindBackEdges(f), (U{4}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  // DAG: d0..d3 as model edges 0..3, d4 = kBackEnd C->EXIT for edge 4, d5
  // D->EXIT, d6 = kStart ENTRY->B.
  ASSERT_EQ(dag.edges.size(), 7u);
  EXPECT_EQ(dag.edges[4].kind, DagEdge::kBackEnd);
  EXPECT_EQ(dag.dag_edge_of_cfg[4], 4);
  EXPECT_EQ(dag.start_edge[3], 6);
  EXPECT_EQ(dag.out[kEntryBlock], (U{0, 6}));
  const PathNumbering num = NumberPaths(dag);
  // NP: D = 1, C = 1 (its dummy C->EXIT), B = C + D = 2, A = 2,
  // ENTRY = A + B (via the dummy) = 4.
  EXPECT_EQ(num.total(), 4);
  // Val: ENTRY->A 0, dummy ENTRY->B = NP(A) = 2 (Weber: "the edge with
  // Val = 2 from A to B represents reinitialising r to 2 when we take the
  // back edge"), B->C 0, B->D = NP(C) = 1.
  EXPECT_EQ(num.val[0], 0);
  EXPECT_EQ(num.val[6], 2);
  EXPECT_EQ(num.val[2], 0);
  EXPECT_EQ(num.val[3], 1);
  EXPECT_EQ(num.val[4], 0);
  // Paths: ABC 0, ABD 1, BC 2, BD 3.  A path taking the back edge ends at
  // C without EXIT.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{3, 5, 1}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(6, 1), &inc,
                              &err));
  // Kruskal by index: d0 ENTRY-A, d1 A-B, d2 B-C, d3 B-D tree; d4 C-EXIT,
  // d5 D-EXIT, d6 ENTRY-B chords (3 = 7 - 6 + 2).  Potentials: all 0 but
  // D = Val(B->D) = 1.  Inc: back edge end C->EXIT 0, D->EXIT 1 + 0 - 0 = 1,
  // restart ENTRY->B 0 + 2 - 0 = 2.  So the back edge is instrumented as
  // count[r + 0]++; r = 2 — Weber's "r += backedge_inc; r = backedge_reset".
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, 0, 0, 0, 1, 2}));
  CheckDag(f, BackEdgeCuts(f), 3);
}

// Two back edges into one header, one of them from a latch that also leaves
// the function: the LLVM example of Weber's report (bb8 header, bb12 and
// bb4 latches, bb4 -> exit).
//   blocks: ENTRY 0 (bb), EXIT 1, bb8 2, bb12 3, bb18 4, bb4 5.
Function TwoLatches() {
  return Make(6, {{0, 2, kEdgeFallthru},  // 0 bb->bb8
                  {2, 3, kEdgeTrue},      // 1 bb8->bb12
                  {2, 4, kEdgeFalse},     // 2 bb8->bb18
                  {3, 2, kEdgeFallthru},  // 3 bb12->bb8 (back edge)
                  {4, 5, kEdgeFallthru},  // 4 bb18->bb4
                  {5, 2, kEdgeTrue},      // 5 bb4->bb8 (back edge)
                  {5, 1, kEdgeFalse}});   // 6 bb4->EXIT
}

TEST(PathNumbering, TwoBackEdgesIntoOneHeaderAndALatchThatReturns) {
  const Function f = TwoLatches();
  // DFS: ENTRY, bb8, bb12 (3->2 retreats), bb18, bb4 (5->2 retreats).
  EXPECT_EQ(FindBackEdges(f), (U{3, 5}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  // One kStart ENTRY->bb8 for both back edges (DAG edge 7); bb4 has two
  // DAG edges to EXIT: d5 = kBackEnd of 5 and d6 = its real exit edge.
  ASSERT_EQ(dag.edges.size(), 8u);
  EXPECT_EQ(dag.start_edge[2], 7);
  EXPECT_EQ(dag.out[5], (U{5, 6}));
  EXPECT_EQ(dag.edges[5].dst, kExitBlock);
  EXPECT_EQ(dag.edges[6].dst, kExitBlock);
  EXPECT_EQ(dag.edges[5].kind, DagEdge::kBackEnd);
  EXPECT_EQ(dag.edges[6].kind, DagEdge::kCfg);
  const PathNumbering num = NumberPaths(dag);
  // NP: bb4 = 2 (kBackEnd, exit), bb18 = 2, bb12 = 1 (kBackEnd),
  // bb8 = 1 + 2 = 3, ENTRY = bb8 + bb8 (via kStart) = 6.
  // Val: bb8->bb18 = NP(bb12) = 1; bb4's kBackEnd 0, bb4->EXIT 1; kStart 3.
  EXPECT_EQ(num.total(), 6);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(ValOf(dag, num, 5), 0);
  EXPECT_EQ(ValOf(dag, num, 6), 1);
  EXPECT_EQ(num.val[7], 3);
  // The parallel edges bb4->EXIT give paths 1 (back edge) and 2 (return):
  // they must differ (Weber's "two edges from a block to the exit block").
  //   0 bb bb8 bb12 |   1 bb bb8 bb18 bb4 |   2 bb bb8 bb18 bb4 EXIT
  //   3 bb8 bb12 |      4 bb8 bb18 bb4 |      5 bb8 bb18 bb4 EXIT
  // Unlike Weber's LLVM pass (9 paths, one restart edge per back edge),
  // the header has one restart: the path after either back edge is the same
  // path, and which back edge was taken is the previous path's end.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 3}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{2, 4, 5, 1}));
  Path p1, p2;
  ASSERT_TRUE(DecodePath(dag, num, 1, &p1));
  ASSERT_TRUE(DecodePath(dag, num, 2, &p2));
  EXPECT_EQ(p1.back(), 5u);
  EXPECT_EQ(p2.back(), 6u);
  // Edge counts of path 1: the back edge 5 is counted through its kBackEnd.
  std::vector<uint64_t> counts(7, 0);
  AddPathToEdgeCounts(dag, p1, 3, &counts);
  EXPECT_EQ(counts, (std::vector<uint64_t>{3, 0, 3, 0, 3, 3, 0}));
  // Counts add modulo 2^64: a -1 (undoing a pre-count) takes one back off.
  AddPathToEdgeCounts(dag, p1, UINT64_MAX, &counts);
  EXPECT_EQ(counts, (std::vector<uint64_t>{2, 0, 2, 0, 2, 2, 0}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(7, 1), &inc,
                              &err));
  // Weights: 1 per CFG edge; the restart ENTRY->bb8 stands for both back
  // edges: 2.  Kruskal: d7 ENTRY-bb8 (2) tree; then by index d0 ENTRY-bb8
  // chord, d1, d2 tree, d3 bb12-EXIT chord, d4 tree, d5, d6 bb4-EXIT chords
  // (4 = 8 - 6 + 2).  Potentials: ENTRY = EXIT = 0, bb8 = bb12 = Val(d7)
  // = 3, bb18 = bb4 = 3 + 1 = 4.  Inc: d0 0 + 0 - 3 = -3; d3 3 + 0 - 0 = 3;
  // d5 4 + 0 - 0 = 4; d6 4 + 1 - 0 = 5; the restart 0.  So both back edges
  // end with count[r + 3 or 4]++ and restart with r = 0, and the first
  // entry starts with r = -3.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{false, true, true, false, true,
                                            false, false, true}));
  EXPECT_EQ(inc.inc,
            (std::vector<uint64_t>{Neg(3), 0, 0, 3, 0, 4, 5, 0}));
  CheckDag(f, BackEdgeCuts(f), 4);
}

TEST(PathNumbering, SelfLoop) {
  // 0->2, 2->2 (self-loop), 2->1.
  const Function f = Make(3, {{0, 2, kEdgeFallthru},
                              {2, 2, kEdgeTrue},
                              {2, 1, kEdgeFalse}});
  EXPECT_EQ(FindBackEdges(f), (U{1}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Block 2: kBackEnd 2->EXIT (Val 0), 2->EXIT (Val 1): NP 2.
  // ENTRY: 0->2 (Val 0), kStart ENTRY->2 (Val 2): NP 4.
  EXPECT_EQ(num.total(), 4);
  EXPECT_EQ(ValOf(dag, num, 1), 0);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(num.val[dag.start_edge[2]], 2);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2}));     // enters, loops
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 1}));  // enters, returns
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{2}));        // loops again
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 1}));     // returns after a loop
  CheckDag(f, BackEdgeCuts(f), 5);

  // Two self-loops on one block and a loop around it.
  const Function g = Make(4, {{0, 2, 0},
                              {2, 2, kEdgeSwitch},
                              {2, 2, kEdgeSwitch},
                              {2, 3, kEdgeSwitch},
                              {3, 2, kEdgeTrue},
                              {3, 3, kEdgeFalse},
                              {3, 1, 0}});
  EXPECT_EQ(FindBackEdges(g), (U{1, 2, 4, 5}));
  // NP(3) = 2 back-edge ends + EXIT = 3, NP(2) = 2 + NP(3) = 5; ENTRY: 2,
  // restart at 2 (after 1, 2 or 4), restart at 3 (after 5): 5 + 5 + 3.
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 6).total, 13);
}

TEST(PathNumbering, ParallelCfgEdges) {
  // switch (x) { case 1: case 2: A; default: } — two edges 2->3.
  //   0->2; 2->3, 2->3, 2->4; 3->4; 4->1.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeSwitch},
                              {2, 3, kEdgeSwitch},
                              {2, 4, kEdgeSwitch},
                              {3, 4, kEdgeFallthru},
                              {4, 1, 0}});
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Block 2: NP(3) = 1, NP(3) = 1, NP(4) = 1: Val 0, 1, 2; 3 paths that
  // differ only in the switch edge taken.
  EXPECT_EQ(num.total(), 3);
  EXPECT_EQ(ValOf(dag, num, 1), 0);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(ValOf(dag, num, 3), 2);
  EXPECT_EQ(BlocksOf(dag, num, 0), BlocksOf(dag, num, 1));
  std::vector<uint64_t> counts(6, 0);
  for (unsigned id = 0; id < 3; ++id) {
    Path p;
    ASSERT_TRUE(DecodePath(dag, num, id, &p));
    AddPathToEdgeCounts(dag, p, 10 + id, &counts);
  }
  // Each parallel edge keeps its own count.
  EXPECT_EQ(counts, (std::vector<uint64_t>{33, 10, 11, 12, 21, 33}));
  CheckDag(f, {}, 7);
}

// Two entries into the cycle 3 <-> 4: irreducible.
//   0->2; 2->3 | 2->4; 3->4, 3->1; 4->3.
Function Irreducible(bool swap_entries) {
  const uint32_t first = swap_entries ? 4 : 3, second = swap_entries ? 3 : 4;
  return Make(5, {{0, 2, 0},
                  {2, first, kEdgeTrue},
                  {2, second, kEdgeFalse},
                  {3, 4, kEdgeTrue},
                  {3, 1, kEdgeFalse},
                  {4, 3, 0}});
}

TEST(PathNumbering, IrreducibleRegion) {
  const Function f = Irreducible(false);
  const Loops loops = FindLoops(f);
  EXPECT_FALSE(loops.reducible);
  EXPECT_TRUE(loops.dominator_back_edges.empty());  // no natural loop
  // DFS ENTRY, 2, 3 (edge 1), 4 (edge 3): 4->3 retreats.  The cycle is
  // broken although neither 3 nor 4 dominates the other.
  EXPECT_EQ(FindBackEdges(f), (U{5}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NP: 4 = 1 (kBackEnd), 3 = NP(4) + EXIT = 2, 2 = NP(3) + NP(4) = 3,
  // ENTRY = NP(2) + NP(3) via kStart ENTRY->3 = 5.
  // Val: 2->4 = NP(3) = 2; 3->1 = NP(4) = 1; kStart = NP(2) = 3.
  EXPECT_EQ(num.total(), 5);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{3, 1}));
  CheckDag(f, BackEdgeCuts(f), 8);

  // Entered the other way round, the DFS reaches 4 first and 3->4 retreats:
  // NP(3) = kBackEnd + EXIT = 2, NP(4) = 2, NP(2) = 4, ENTRY = 4 + NP(4).
  const Function g = Irreducible(true);
  EXPECT_EQ(FindBackEdges(g), (U{3}));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 9).total, 6);
}

TEST(FindBackEdges, ReducibleLoopsGiveExactlyTheLatches) {
  // do { do { } while (c1) /*4->3*/; } while (c2) /*5->2*/; plus a
  // `continue` in the outer loop (3->2 would be a second latch of 2).
  //   0->2, 2->3, 3->4, 3->2, 4->3, 4->5, 5->2, 5->6, 6->1.
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, kEdgeTrue},
                              {3, 2, kEdgeFalse},
                              {4, 3, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 2, kEdgeTrue},
                              {5, 6, kEdgeFalse},
                              {6, 1, 0}});
  const Loops loops = FindLoops(f);
  EXPECT_TRUE(loops.reducible);
  EXPECT_EQ(loops.dominator_back_edges, (U{3, 4, 6}));
  EXPECT_EQ(FindBackEdges(f), (U{3, 4, 6}));
  CheckDag(f, BackEdgeCuts(f), 10);

  // A cycle no path from ENTRY reaches is broken too (7 <-> 8).  Its
  // restart edge ENTRY->7 numbers its paths although they never run:
  // ENTRY 2 EXIT | 7 8 (back) | 7 8 EXIT.
  const Function g = Make(9, {{0, 2, 0},
                              {2, 1, 0},
                              {7, 8, 0},
                              {8, 7, 0},
                              {8, 1, 0}});
  EXPECT_EQ(FindBackEdges(g), (U{3}));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 11).total, 3);
}

// gcov's model of setjmp/longjmp and calls that may not return:
//   0: ENTRY->2        1: ENTRY->3 fake (abnormal entry to the receiver 3)
//   2: 2->3            3: 2->5 abnormal (not in the DAG)
//   4: 3->4            5: 3->5
//   6: 4->EXIT fake (the call in 4 may not return)
//   7: 4->3 abnormal|ignored (the longjmp, replaced by the fakes)
//   8: 4->5            9: 5->EXIT
Function FakeAndAbnormal() {
  return Make(6, {{0, 2, kEdgeFallthru},
                  {0, 3, kEdgeFake},
                  {2, 3, kEdgeFallthru},
                  {2, 5, kEdgeAbnormal},
                  {3, 4, kEdgeTrue},
                  {3, 5, kEdgeFalse},
                  {4, 1, kEdgeFake},
                  {4, 3, kEdgeAbnormal | kEdgeIgnored},
                  {4, 5, kEdgeFallthru},
                  {5, 1, kEdgeFallthru}});
}

TEST(PathNumbering, FakeEdgesInAbnormalEdgesOut) {
  const Function f = FakeAndAbnormal();
  EXPECT_TRUE(IsPathEdge(f.edges[1]));
  EXPECT_FALSE(IsPathEdge(f.edges[3]));
  EXPECT_TRUE(IsPathEdge(f.edges[6]));
  EXPECT_FALSE(IsPathEdge(f.edges[7]));
  EXPECT_FALSE(IsPathEdge(Edge{2, 3, kEdgeIgnored, kNoCounter}));
  EXPECT_TRUE(IsPathEdge(Edge{2, 3, kEdgeEh, kNoCounter}));
  // 4->3 would close a loop, but it is not a path edge.
  EXPECT_TRUE(FindBackEdges(f).empty());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  EXPECT_EQ(dag.dag_edge_of_cfg,
            (std::vector<int64_t>{0, 1, 2, -1, 3, 4, 5, -1, 6, 7}));
  const PathNumbering num = NumberPaths(dag);
  // NP: 5 = 1, 4 = EXIT + 5 = 2, 3 = 2 + 1 = 3, 2 = 3, ENTRY = 2 + 3 = 6.
  // Val: fake ENTRY->3 = NP(2) = 3; 3->5 = NP(4) = 2; 4->5 = 1.
  EXPECT_EQ(num.total(), 6);
  EXPECT_EQ(ValOf(dag, num, 1), 3);
  EXPECT_EQ(ValOf(dag, num, 5), 2);
  EXPECT_EQ(ValOf(dag, num, 8), 1);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4, 1}));  // call didn't return
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{0, 3, 4, 1}));  // abnormal entry
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{0, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{0, 3, 5, 1}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(10, 1), &inc,
                              &err));
  // The fake ENTRY->3 joins first (d1, Inc 0: an abnormal entry sets
  // r = 0); then by index: d0 ENTRY-2 tree; d2 2-3 chord; d3 3-4, d4 3-5
  // tree; d5 4-EXIT, d6 4-5, d7 5-EXIT chords (4 = 8 - 6 + 2).
  // Potentials: ENTRY = EXIT = 2 = 0, 3 = Val(fake) = 3, 4 = 3, 5 = 3 + 2
  // = 5.  Inc: 2->3 0 + 0 - 3 = -3; 4->EXIT 3 - 0 = 3; 4->5 3 + 1 - 5 = -1;
  // 5->EXIT 5.  E.g. abnormal entry then 3 4 5: 0 - 1 + 5 = 4.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, true, false, true, true,
                                            false, false, false}));
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, Neg(3), 0, 0, 3, Neg(1),
                                            5}));
  // Heavy weights elsewhere do not push the fake edge out of the tree.
  ASSERT_TRUE(PlaceIncrements(
      f, dag, {1, 0, 1000, 0, 1000, 1000, 0, 0, 1000, 1000}, &inc, &err));
  EXPECT_TRUE(inc.in_tree[1]);
  EXPECT_EQ(inc.inc[1], 0u);
  CheckDag(f, {}, 12);
}

TEST(PathNumbering, CutBlock) {
  // Figure 1 cut at D (block 5): paths end on entering D and restart at D.
  const Function f = PaperFigure1();
  PathCuts cuts;
  cuts.blocks = {5};
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  ASSERT_EQ(dag.n_vertices, 9u);
  EXPECT_EQ(dag.in_vertex[5], 8u);  // D_in
  EXPECT_EQ(dag.BlockOf(8), 5u);
  // d4 B->D_in, d5 C->D_in, d10 kStart ENTRY->D, d11 kCutEnd D_in->EXIT.
  EXPECT_EQ(dag.edges[4].dst, 8u);
  EXPECT_EQ(dag.edges[5].dst, 8u);
  EXPECT_EQ(dag.start_edge[5], 10);
  EXPECT_EQ(dag.cut_end_edge[5], 11);
  const PathNumbering num = NumberPaths(dag);
  // NP: D_in = 1, F = E = 1, D = 2, C = 1, B = C + D_in = 2, A = C + B = 3,
  // ENTRY = A + D (kStart) = 5.  Val: A->B = 1, B->D = 1, D->E = 1,
  // kStart = 3.
  EXPECT_EQ(num.total(), 5);
  EXPECT_EQ(num.val[10], 3);
  // A path cut at D lists D last (its kCfg edge enters D_in); D's code runs
  // in the next path, which starts at D.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{5, 6, 7, 1}));
  CheckDag(f, cuts, 13);

  // A loop header cut as a block: its back edge enters it like any edge.
  const Function g = PaperLoop();
  PathCuts gc;
  gc.blocks = {3};
  ASSERT_TRUE(BuildPathDag(g, gc, &dag, &err)) << err;
  EXPECT_EQ(dag.edges[dag.dag_edge_of_cfg[4]].kind, DagEdge::kCfg);
  EXPECT_EQ(dag.edges[dag.dag_edge_of_cfg[4]].dst, dag.in_vertex[3]);
  // ENTRY A B_in | B C B_in | B D EXIT.
  EXPECT_EQ(CheckDag(g, gc, 14).total, 3);
}

TEST(BuildPathDag, RejectsBadCuts) {
  const Function f = PaperLoop();
  PathDag dag;
  std::string err;
  auto fails = [&](const PathCuts& c, const std::string& text) {
    err.clear();
    EXPECT_FALSE(BuildPathDag(f, c, &dag, &err)) << text;
    EXPECT_NE(err.find(text), std::string::npos) << err;
  };
  fails({}, "cycle");                  // the loop is not cut
  fails({{1}, {}}, "cycle");           // a cut edge off the loop
  fails({{9}, {}}, "out of range");
  fails({{4, 4}, {}}, "listed twice");
  fails({{5}, {}}, "cannot be cut");   // into EXIT
  fails({{4}, {3}}, "targets cut block 3");
  fails({{}, {0}}, "not a basic block");
  fails({{}, {1}}, "not a basic block");
  fails({{}, {6}}, "not a basic block");
  fails({{}, {3, 3}}, "listed twice");
  // A cut edge that is not a path edge.
  const Function g = FakeAndAbnormal();
  err.clear();
  EXPECT_FALSE(BuildPathDag(g, {{7}, {}}, &dag, &err));
  EXPECT_NE(err.find("cannot be cut"), std::string::npos) << err;
  // No ENTRY/EXIT.
  EXPECT_FALSE(BuildPathDag(Make(1, {}), {}, &dag, &err));
}

TEST(PathNumbering, NoPathsAndEmptyFunction) {
  // EXIT unreachable (an infinite loop): no paths, nothing decodes.
  const Function f = Make(3, {{0, 2, 0}, {2, 2, 0}});
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // 2: kBackEnd 2->EXIT: 1 path; ENTRY: 0->2 and kStart ENTRY->2: 2 paths.
  EXPECT_EQ(num.total(), 2);
  const Function g = Make(3, {{0, 2, 0}, {2, 2, kEdgeAbnormal}});
  ASSERT_TRUE(BuildPathDag(g, BackEdgeCuts(g), &dag, &err)) << err;
  EXPECT_EQ(NumberPaths(dag).total(), 0);
  Path p;
  EXPECT_FALSE(DecodePath(dag, NumberPaths(dag), 0, &p));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 15).total, 0);
  // ENTRY->EXIT only.
  EXPECT_EQ(CheckDag(Make(2, {{0, 1, 0}}), {}, 16).total, 1);
  EXPECT_EQ(CheckDag(Make(2, {}), {}, 17).total, 0);
}

}  // namespace
}  // namespace ballarus
