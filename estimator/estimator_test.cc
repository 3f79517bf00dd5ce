// estimator_test.cc — the Ball–Larus heuristic weighting (estimator.cc) on
// hand-made CFGs with hand-derived weights, and exact conservation on
// random CFGs (reducible and irreducible).
#include "estimator/estimator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "core/flow.h"
#include "core/spanning_tree.h"
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

constexpr uint64_t B = kActivationWeight;  // one activation: 720720

// Conservation everywhere, >= 1 on every used edge, and the same answer
// twice.
void ExpectSoundFlow(const Function& f, const Weights& w) {
  EXPECT_TRUE(ConservationViolations(f, w).empty());
  ASSERT_EQ(w.edges.size(), f.edges.size());
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    const bool used = !(e.flags & kEdgeIgnored) && e.src < f.blocks.size() &&
                      e.dst < f.blocks.size();
    if (used)
      EXPECT_GE(w.edges[i], 1u) << "edge " << i;
    else
      EXPECT_EQ(w.edges[i], 0u) << "edge " << i;
  }
  for (const ExtraEdge& x : w.extra) EXPECT_GE(x.weight, 1u);
  EXPECT_GE(w.virtual_edge, 1u);
  const Weights again = HeuristicWeights(f);
  EXPECT_EQ(again.edges, w.edges);
  EXPECT_EQ(again.virtual_edge, w.virtual_edge);
  EXPECT_EQ(again.extra.size(), w.extra.size());
}

using W = std::vector<uint64_t>;

TEST(Estimator, IfThenElse) {
  const Function f = Make(6, {{0, 2, kEdgeFallthru},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 5, kEdgeFallthru},
                              {4, 5, kEdgeFallthru},
                              {5, 1, kEdgeFallthru}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, B / 2, B / 2, B / 2, B / 2, B}));
  EXPECT_EQ(w.virtual_edge, B);
  EXPECT_TRUE(w.extra.empty());
  ExpectSoundFlow(f, w);
}

TEST(Estimator, WhileLoop) {
  // while (c) body;  GCC -O0 shape: 2 jumps to the condition 3 (header);
  // 3 -> 4 (body) | 5 (exit); 4 -> 3.  Header 10B; rule 3: the body gets
  // 10B - B (the exit's share) = 9B.
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, kEdgeTrue},
                              {3, 5, kEdgeFalse},
                              {4, 3, 0},
                              {5, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, B, 9 * B, B, 9 * B, B}));
  EXPECT_EQ(w.virtual_edge, B);
  ExpectSoundFlow(f, w);
}

TEST(Estimator, DoWhileBodyIsTenTimesTheEntry) {
  // do body(2) while (c(3));  3 -> 2 | 4.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 2, kEdgeTrue},
                              {3, 4, kEdgeFalse},
                              {4, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, 10 * B, 9 * B, B, B}));
  ExpectSoundFlow(f, w);
}

TEST(Estimator, NestedLoopsAreHundredTimesTheEntry) {
  // do { do { } while (c1 /*4*/); } while (c2 /*5*/);
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, 0},
                              {4, 3, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 2, kEdgeTrue},
                              {5, 6, kEdgeFalse},
                              {6, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges,
            (W{B, 10 * B, 100 * B, 90 * B, 10 * B, 9 * B, B, B}));
  ExpectSoundFlow(f, w);
}

TEST(Estimator, LoopWithBreak) {
  // while (c /*2*/) { if (d /*3*/) break; body /*4*/; }  exits 2->5, 3->5
  // share the entry weight: B/2 each (rule 2); the header's other edge gets
  // 10B - B/2 (rule 3).
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 5, kEdgeFalse},
                              {3, 5, kEdgeTrue},
                              {3, 4, kEdgeFalse},
                              {4, 2, 0},
                              {5, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges,
            (W{B, 9 * B + B / 2, B / 2, B / 2, 9 * B, 9 * B, B}));
  ExpectSoundFlow(f, w);
}

TEST(Estimator, ExitDeepInTheBodyStillGetsItsShare) {
  // Neustifter Fig. 4.3: the loop's second exit sits below four 50/50
  // branches.  Ball & Larus would preset it to B/2 at the header; the
  // through-flow here routes B/2 to it whatever the nesting.
  // 2: header, -> 3 | 1 (exit 1); 3 -> 4 | 7; 4 -> 5 | 7; 5 -> 6 | 7;
  // 6 -> 1 (exit 2) | 7; 7 -> 2 (latch).
  const Function f = Make(8, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 1, kEdgeFalse},
                              {3, 4, kEdgeTrue},
                              {3, 7, kEdgeFalse},
                              {4, 5, kEdgeTrue},
                              {4, 7, kEdgeFalse},
                              {5, 6, kEdgeTrue},
                              {5, 7, kEdgeFalse},
                              {6, 1, kEdgeTrue},
                              {6, 7, kEdgeFalse},
                              {7, 2, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges[2], B / 2);  // exit at the header
  EXPECT_EQ(w.edges[9], B / 2);  // exit deep in the body
  EXPECT_EQ(w.edges[2] + w.edges[9], B);
  // Header 10B: 10B - B/2 into the body.
  EXPECT_EQ(w.edges[1], 10 * B - B / 2);
  EXPECT_EQ(w.edges[11], 9 * B);  // the back edge
  ExpectSoundFlow(f, w);
}

TEST(Estimator, LoopWithoutExitGetsANominalExit) {
  // for (;;) body;  no path to EXIT: a nominal exit from the latch 3.
  const Function f = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 2, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, 10 * B, 9 * B}));
  ASSERT_EQ(w.extra.size(), 1u);
  EXPECT_EQ(w.extra[0].src, 3u);
  EXPECT_EQ(w.extra[0].dst, kExitBlock);
  EXPECT_EQ(w.extra[0].weight, B);
  EXPECT_EQ(w.virtual_edge, B);
  ExpectSoundFlow(f, w);
}

TEST(Estimator, InfiniteLoopWithFakeExitUsesIt) {
  // for (;;) f();  GCC adds a fake edge 3->EXIT after the call: it is the
  // loop's only exit, so it carries the entry weight.
  const Function f =
      Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 2, 0}, {3, 1, kEdgeFake}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, 10 * B, 9 * B, B}));
  EXPECT_TRUE(w.extra.empty());
  ExpectSoundFlow(f, w);
}

TEST(Estimator, FakeAndEhEdgesGetMinimalWeight) {
  // 2 calls g(): fake 2->EXIT (may not return), EH 2->4 (landing pad 4
  // resumes to EXIT).  Each gets a unit cycle through ENTRY->2.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeFallthru},
                              {2, 1, kEdgeFake},
                              {2, 4, kEdgeEh},
                              {3, 1, 0},
                              {4, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B + 2, B, 1, 1, B, 1}));
  EXPECT_EQ(w.virtual_edge, B + 2);
  ExpectSoundFlow(f, w);
}

TEST(Estimator, IrreducibleRegion) {
  // 2 -> 3 | 4; 3 <-> 4; 4 -> 5.  The cycle {3,4} is entered at both: DFS
  // reaches 3 first, so 3 is its header and 4->3 its back edge.  Entry B/2
  // at 3 and B/2 at 4; what enters at 4 goes round to the header first;
  // then B leaves from the header to the exit 4->5, circulation 9B.
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 4, 0},
                              {4, 3, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 1, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, B / 2, B / 2, 10 * B, 9 * B + B / 2, B, B}));
  ExpectSoundFlow(f, w);
}

TEST(Estimator, SwitchSplitsEvenly) {
  // 2 switches to 3..7, all join at 8.
  std::vector<E> es{{0, 2, 0}};
  for (uint32_t c = 3; c <= 7; ++c) es.push_back({2, c, kEdgeSwitch});
  for (uint32_t c = 3; c <= 7; ++c) es.push_back({c, 8, 0});
  es.push_back({8, 1, 0});
  const Function f = Make(9, es);
  const Weights w = HeuristicWeights(f);
  for (size_t i = 1; i <= 10; ++i) EXPECT_EQ(w.edges[i], B / 5) << i;
  ExpectSoundFlow(f, w);
}

TEST(Estimator, SwitchRemainderGoesToTheFirstCases) {
  // 17 cases: 720720 = 17 * 42395 + 5; cases 0..4 get 42396.
  std::vector<E> es{{0, 2, 0}};
  for (uint32_t c = 0; c < 17; ++c) es.push_back({2, 3 + c, kEdgeSwitch});
  for (uint32_t c = 0; c < 17; ++c) es.push_back({3 + c, 20, 0});
  es.push_back({20, 1, 0});
  const Function f = Make(21, es);
  const Weights w = HeuristicWeights(f);
  for (uint32_t c = 0; c < 17; ++c) {
    const uint64_t expect = c < 5 ? 42396 : 42395;
    EXPECT_EQ(w.edges[1 + c], expect) << c;
    EXPECT_EQ(w.edges[18 + c], expect) << c;
  }
  ExpectSoundFlow(f, w);
}

TEST(Estimator, IgnoredEdgesTakeNoPart) {
  const Function f =
      Make(4, {{0, 2, 0}, {2, 3, kEdgeIgnored}, {2, 1, 0}, {3, 1, kEdgeFake},
               {0, 3, kEdgeFake}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges[1], 0u);
  EXPECT_EQ(w.edges[0], B);
  EXPECT_EQ(w.edges[2], B);
  // Fake ENTRY->3->EXIT: one unit cycle.
  EXPECT_EQ(w.edges[3], 1u);
  EXPECT_EQ(w.edges[4], 1u);
  EXPECT_EQ(w.virtual_edge, B + 1);
  ExpectSoundFlow(f, w);
}

TEST(Estimator, UnreachableBlockGetsANominalEntry) {
  const Function f = Make(4, {{0, 2, 0}, {2, 1, 0}, {3, 2, 0}});
  const Weights w = HeuristicWeights(f);
  EXPECT_EQ(w.edges, (W{B, B + 1, 1}));
  ASSERT_EQ(w.extra.size(), 1u);
  EXPECT_EQ(w.extra[0].src, kEntryBlock);
  EXPECT_EQ(w.extra[0].dst, 3u);
  EXPECT_EQ(w.extra[0].weight, 1u);
  ExpectSoundFlow(f, w);
}

TEST(Estimator, DeepNestStaysInRange) {
  // 30 nested do-while loops: headers h_i = 2+i, conditions c_i = 32+i;
  // h_i -> h_{i+1}, h_29 -> c_29, c_i -> h_i (back), c_i -> c_{i-1}, c_0 ->
  // EXIT.  Loops deeper than kMaxMultipliedLoopDepth are not multiplied.
  const uint32_t n = 30;
  std::vector<E> es{{0, 2, 0}};
  for (uint32_t i = 0; i + 1 < n; ++i) es.push_back({2 + i, 3 + i, 0});
  es.push_back({2 + n - 1, 32 + n - 1, 0});
  for (uint32_t i = 0; i < n; ++i) {
    es.push_back({32 + i, 2 + i, kEdgeTrue});
    es.push_back(i > 0 ? E{32 + i, 31 + i, kEdgeFalse}
                       : E{32, 1, kEdgeFalse});
  }
  const Function f = Make(32 + n, es);
  const Weights w = HeuristicWeights(f);
  ExpectSoundFlow(f, w);
  uint64_t scale = 1;
  for (int d = 0; d < kMaxMultipliedLoopDepth; ++d) scale *= kLoopMultiplier;
  // Edge 1 + i is h_i -> h_{i+1}: it carries the header weight of h_i.
  // The back edges of the unmultiplied loops get minimal weights: one unit
  // cycle per loop, passing h_0 .. h_29 -> c_29 at most twice each.
  EXPECT_GE(w.edges[1], 10 * B);
  EXPECT_LE(w.edges[1], 10 * B + 2 * n);
  const uint64_t h11 = w.edges[1 + kMaxMultipliedLoopDepth - 1];
  EXPECT_GE(h11, scale * B);
  EXPECT_LE(h11, scale * B + 2 * n);
  const uint64_t h29 = w.edges[1 + n - 1];  // no growth below depth 12
  EXPECT_GE(h29, scale * B);
  EXPECT_LE(h29, scale * B + 2 * n);
  for (uint64_t x : w.edges) EXPECT_LE(x, uint64_t{1} << 62);
}

TEST(Estimator, UniformWeights) {
  const Function f =
      Make(4, {{0, 2, 0}, {2, 3, kEdgeIgnored}, {2, 1, 0}, {3, 1, 0}});
  const Weights w = UniformWeights(f);
  EXPECT_EQ(w.edges, (W{1, 0, 1, 1}));
  EXPECT_EQ(w.virtual_edge, 1u);
}

TEST(Estimator, ConservationViolationsFindsTheBadBlock) {
  const Function f = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 1, 0}});
  Weights w;
  w.edges = {5, 5, 4};
  w.virtual_edge = 5;
  EXPECT_EQ(ConservationViolations(f, w), (std::vector<uint32_t>{1, 3}));
  w.edges[2] = 5;
  EXPECT_TRUE(ConservationViolations(f, w).empty());
}

TEST(Estimator, SpanningTreeOnEstimatePutsCountersOffTheHotPath) {
  // if (a) { while (c) body; }  The loop edges are heavy; the counters of
  // the loop's cycle and of the if's go where the estimate is lowest.
  // 2 -> 3 | 7; 3 -> 4 (header); 4 -> 5 | 6; 5 -> 4; 6 -> 7; 7 -> 1.
  const Function f = Make(8, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 7, kEdgeFalse},
                              {3, 4, 0},
                              {4, 5, kEdgeTrue},
                              {4, 6, kEdgeFalse},
                              {5, 4, 0},
                              {6, 7, 0},
                              {7, 1, 0}});
  const Weights w = HeuristicWeights(f);
  ExpectSoundFlow(f, w);
  const SpanningTree t = MaximumSpanningTree(f, w.edges);
  // |E| - |V| + 1 = 10 - 8 + 1 = 3 counters: the back edge 5->4 (the loop's
  // cycle, all of whose edges weigh 9B/2) and two of the B/2 edges.
  ASSERT_EQ(t.chords.size(), 3u);
  for (size_t c : t.chords) EXPECT_LE(w.edges[c], 9 * B / 2) << c;
  EXPECT_TRUE(t.in_tree[0]);  // ENTRY->2, weight B: never counted
  EXPECT_TRUE(t.in_tree[8]);  // 7->EXIT, weight B
}

// ---------------------------------------------------------------------------
// Random CFGs.

// Reducible iff every DFS retreating edge's target dominates its source
// (iterative dominators, fine for small graphs).
bool IsReducible(const Function& f) {
  const size_t nb = f.blocks.size();
  std::vector<std::vector<uint32_t>> succ(nb), pred(nb);
  for (const Edge& e : f.edges) {
    if ((e.flags & kEdgeIgnored) || e.dst == kEntryBlock ||
        e.src == kExitBlock)
      continue;
    succ[e.src].push_back(e.dst);
    pred[e.dst].push_back(e.src);
  }
  std::vector<std::vector<bool>> dom(nb, std::vector<bool>(nb, true));
  dom[0].assign(nb, false);
  dom[0][0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 1; b < nb; ++b) {
      std::vector<bool> d(nb, true);
      for (uint32_t p : pred[b])
        for (size_t x = 0; x < nb; ++x) d[x] = d[x] && dom[p][x];
      if (pred[b].empty()) d.assign(nb, false);
      d[b] = true;
      if (d != dom[b]) dom[b] = d, changed = true;
    }
  }
  // DFS, retreating edges = edges to a block on the stack.
  std::vector<int> state(nb, 0);
  bool ok = true;
  std::vector<std::pair<uint32_t, size_t>> st{{0, 0}};
  state[0] = 1;
  while (!st.empty()) {
    auto& [v, i] = st.back();
    if (i < succ[v].size()) {
      const uint32_t w = succ[v][i++];
      if (state[w] == 1 && !dom[v][w]) ok = false;
      if (state[w] == 0) {
        state[w] = 1;
        st.push_back({w, 0});
      }
    } else {
      state[v] = 2;
      st.pop_back();
    }
  }
  return ok;
}

Function RandomCfg(std::mt19937& rng, bool spine) {
  const uint32_t nb = 2 + rng() % 24;
  std::vector<E> es;
  if (spine) {
    uint32_t prev = 0;
    for (uint32_t b = 2; b < nb; ++b) {
      es.push_back({prev, b, 0});
      prev = b;
    }
    es.push_back({prev, 1, 0});
  }
  const size_t extra = rng() % (3 * nb);
  for (size_t k = 0; k < extra; ++k) {
    uint32_t s = rng() % nb, d = rng() % nb;
    if (rng() % 8 != 0) {  // mostly no edges into ENTRY / out of EXIT
      if (s == kExitBlock) s = kEntryBlock;
      if (d == kEntryBlock) d = kExitBlock;
    }
    uint32_t flags = 0;
    switch (rng() % 12) {
      case 0: flags = kEdgeFake; break;
      case 1: flags = kEdgeEh; break;
      case 2: flags = kEdgeAbnormal; break;
      case 3: flags = kEdgeIgnored; break;
      default: break;
    }
    es.push_back({s, d, flags});
  }
  return Make(nb, es);
}

TEST(Estimator, RandomCfgsConserveExactly) {
  std::mt19937 rng(31337);
  int irreducible = 0, with_extra = 0, checked_by_flow = 0, estimated = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const Function f = RandomCfg(rng, iter % 2 == 0);
    SCOPED_TRACE(iter);
    irreducible += !IsReducible(f);
    const Weights w = HeuristicWeights(f);
    ExpectSoundFlow(f, w);
    with_extra += !w.extra.empty();
    // Not fallen back to minimal weights alone (estimator.cc step 5).
    estimated += w.virtual_edge >= B;
    if (iter % 2 == 0) {
      // With the spine every block is reachable and reaches EXIT.
      EXPECT_TRUE(w.extra.empty());
    }
    if (w.extra.empty()) {
      // Independent oracle: core/flow's conservation check.
      FlowResult r;
      for (uint64_t x : w.edges) r.edges.push_back(x);
      for (size_t i = 0; i < f.edges.size(); ++i)
        if (f.edges[i].flags & kEdgeIgnored) r.edges[i].reset();
      r.virtual_edge = w.virtual_edge;
      r.blocks.resize(f.blocks.size());
      EXPECT_TRUE(CheckConservation(f, r).empty());
      ++checked_by_flow;
    }
  }
  EXPECT_GT(irreducible, 50);
  EXPECT_GT(with_extra, 20);
  EXPECT_GT(checked_by_flow, 200);
  EXPECT_GE(estimated, 390);
  printf("random CFGs: %d irreducible, %d with nominal edges, %d checked by "
         "core/flow, %d estimated (not minimal-only)\n",
         irreducible, with_extra, checked_by_flow, estimated);
}

TEST(Estimator, RandomReducibleLoopsGetTheirMultiplier) {
  // Structured random programs: sequences, if-else and do-while loops
  // nested at random.  Every do-while's body (its header) weighs 10x what
  // enters it (no rounding: the weights divide evenly or the check allows
  // for the split remainders).
  std::mt19937 rng(99);
  for (int iter = 0; iter < 100; ++iter) {
    std::vector<E> es;
    uint32_t next = 2;
    std::vector<std::pair<size_t, size_t>> loops;  // (entry edge, back edge)
    // Builds a region from block `from`; returns its last block.
    std::function<uint32_t(uint32_t, int)> build = [&](uint32_t from,
                                                       int depth) {
      uint32_t cur = from;
      const int parts = 1 + rng() % 3;
      for (int p = 0; p < parts; ++p) {
        const int kind = depth >= 3 ? 0 : rng() % 3;
        if (kind == 0) {  // straight
          const uint32_t b = next++;
          es.push_back({cur, b, 0});
          cur = b;
        } else if (kind == 1) {  // if-else
          const uint32_t t = next++, e2 = next++, j = next++;
          es.push_back({cur, t, kEdgeTrue});
          es.push_back({cur, e2, kEdgeFalse});
          const uint32_t te = build(t, depth + 1);
          const uint32_t ee = build(e2, depth + 1);
          es.push_back({te, j, 0});
          es.push_back({ee, j, 0});
          cur = j;
        } else {  // do { } while
          const uint32_t h = next++;
          const size_t entry = es.size();
          es.push_back({cur, h, 0});
          const uint32_t last = build(h, depth + 1);
          const uint32_t c = next++;
          es.push_back({last, c, 0});
          const size_t back = es.size();
          es.push_back({c, h, kEdgeTrue});
          loops.push_back({entry, back});
          const uint32_t x = next++;
          es.push_back({c, x, kEdgeFalse});
          cur = x;
        }
      }
      return cur;
    };
    const uint32_t last = build(kEntryBlock, 0);
    es.push_back({last, kExitBlock, 0});
    const Function f = Make(next, es);
    ASSERT_TRUE(IsReducible(f));
    const Weights w = HeuristicWeights(f);
    ExpectSoundFlow(f, w);
    EXPECT_TRUE(w.extra.empty());
    for (auto [entry, back] : loops) {
      // Header weight = entry + back = 10 * entry (back = 9 * entry).
      EXPECT_EQ(w.edges[back], 9 * w.edges[entry]) << "iteration " << iter;
    }
  }
}

}  // namespace
}  // namespace ballarus
