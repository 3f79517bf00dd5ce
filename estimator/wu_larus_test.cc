// wu_larus_test.cc — Wu & Larus' estimate (wu_larus.cc) on hand-made CFGs:
// which heuristics apply, the Dempster–Shafer combination against values
// worked out by hand, frequencies through loops, and sane weights on random
// CFGs (irreducible ones too).
#include "estimator/wu_larus.h"

#include <cmath>
#include <random>
#include <vector>

#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

constexpr double B = kActivationWeight;

BranchHints NoHints(const Function& f) {
  BranchHints h;
  h.blocks.resize(f.blocks.size());
  h.guard_use.assign(f.edges.size(), false);
  return h;
}

std::vector<Heuristic> Names(const std::vector<AppliedHeuristic>& a) {
  std::vector<Heuristic> r;
  for (const AppliedHeuristic& x : a) r.push_back(x.heuristic);
  return r;
}

TEST(WuLarus, CombineEvidenceByHand) {
  // 0.88 * 0.84 / (0.88 * 0.84 + 0.12 * 0.16) = 0.7392 / 0.7584.
  EXPECT_NEAR(CombineEvidence(0.88, 0.84), 0.7392 / 0.7584, 1e-12);
  EXPECT_DOUBLE_EQ(CombineEvidence(0.5, 0.72), 0.72);
  // Opposite evidence of equal strength cancels.
  EXPECT_NEAR(CombineEvidence(0.78, 0.22), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(CombineEvidence(1.0, 0.0), 0.5);
}

// if (c) then 3 else 4; join 5.  Nothing applies: even odds.
TEST(WuLarus, IfThenElseWithoutEvidenceIsEven) {
  const Function f = Make(6, {{0, 2, kEdgeFallthru},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 5, kEdgeFallthru},
                              {4, 5, kEdgeFallthru},
                              {5, 1, kEdgeFallthru}});
  const BranchHints h = NoHints(f);
  EXPECT_TRUE(AppliedHeuristics(f, h)[2].empty());
  const Weights w = WuLarusWeights(f, h);
  EXPECT_EQ(w.edges, (std::vector<uint64_t>{720720, 360360, 360360, 360360,
                                            360360, 720720}));
  EXPECT_EQ(w.virtual_edge, kActivationWeight);
}

// The call heuristic: a successor that calls is avoided, unless it
// post-dominates the branch (then it runs either way).
TEST(WuLarus, CallAvoidedUnlessPostDominating) {
  // 2 -> 3 (call) | 4;  3 -> 4;  4 -> EXIT.  4 post-dominates 2.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 4, 0},
                              {4, 1, 0}});
  BranchHints h = NoHints(f);
  h.blocks[3].call = true;
  std::vector<AppliedHeuristic> a = AppliedHeuristics(f, h)[2];
  // (Both successors return: 3's only successor is 4, which does; the
  // return heuristic does not apply.)
  ASSERT_EQ(Names(a), (std::vector<Heuristic>{Heuristic::kCall}));
  EXPECT_EQ(a[0].likelier_edge, 2u);  // 2->4
  const std::vector<double> p = WuLarusProbabilities(f, h);
  EXPECT_NEAR(p[2], 0.78, 1e-12);
  EXPECT_NEAR(p[1], 0.22, 1e-12);
  // The call in the post-dominating block 4 tells nothing.
  h.blocks[3].call = false;
  h.blocks[4].call = true;
  EXPECT_TRUE(AppliedHeuristics(f, h)[2].empty());
}

// The pointer and opcode hints pick the true or the false edge; store and
// guard need a successor that does not post-dominate.
TEST(WuLarus, ConditionHintsStoreAndGuard) {
  // 2 -> 3 (false edge listed first) | 4;  3 -> 5;  4 -> 5;  5 -> EXIT.
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, kEdgeFalse},
                              {2, 4, kEdgeTrue},
                              {3, 5, 0},
                              {4, 5, 0},
                              {5, 1, 0}});
  BranchHints h = NoHints(f);
  h.blocks[2].pointer = -1;  // p == q: the false edge is likelier
  h.blocks[2].opcode = +1;
  h.blocks[4].store = true;
  h.guard_use[1] = true;  // 2->3 uses the compared value
  const std::vector<AppliedHeuristic> a = AppliedHeuristics(f, h)[2];
  ASSERT_EQ(Names(a),
            (std::vector<Heuristic>{Heuristic::kPointer, Heuristic::kOpcode,
                                    Heuristic::kStore, Heuristic::kGuard}));
  EXPECT_EQ(a[0].likelier_edge, 1u);
  EXPECT_EQ(a[1].likelier_edge, 2u);
  EXPECT_EQ(a[2].likelier_edge, 1u);
  EXPECT_EQ(a[3].likelier_edge, 1u);
  double p = 0.5;
  p = CombineEvidence(p, 0.60);
  p = CombineEvidence(p, 1 - 0.84);
  p = CombineEvidence(p, 0.55);
  p = CombineEvidence(p, 0.62);
  EXPECT_NEAR(WuLarusProbabilities(f, h)[1], p, 1e-12);
  // The weights follow: 2->3 carries p of the activation.
  const Weights w = WuLarusWeights(f, h);
  EXPECT_EQ(w.edges[1], static_cast<uint64_t>(std::llround(p * B)));
  EXPECT_EQ(w.edges[5], kActivationWeight);
}

// while (c) body;  3 -> 4 (body) | 5 (exit, returns);  4 -> 3.
TEST(WuLarus, WhileLoopIteratesByItsExitProbability) {
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, kEdgeTrue},
                              {3, 5, kEdgeFalse},
                              {4, 3, 0},
                              {5, 1, 0}});
  const BranchHints h = NoHints(f);
  const std::vector<AppliedHeuristic> a = AppliedHeuristics(f, h)[3];
  // 3->4 enters the latch 4 (GIMPLE's loops have such latches): the loop
  // branch.
  ASSERT_EQ(Names(a), (std::vector<Heuristic>{Heuristic::kLoopBranch,
                                              Heuristic::kReturn}));
  EXPECT_EQ(a[0].likelier_edge, 2u);
  // Stay 0.88, and 5 returns: 0.88*0.72 / (0.88*0.72 + 0.12*0.28).
  const double stay = 0.6336 / 0.6672;
  EXPECT_NEAR(WuLarusProbabilities(f, h)[2], stay, 1e-12);
  // Header frequency 1 / (1 - stay); its exit carries exactly one
  // activation; the body stay / (1 - stay).
  const Weights w = WuLarusWeights(f, h);
  EXPECT_NEAR(double(w.edges[3]), B, 1.0);
  EXPECT_NEAR(double(w.edges[2]), B * stay / (1 - stay), 1.0);
  EXPECT_EQ(w.edges[4], w.edges[2]);
}

// do { do body while (c1); } while (c2): the inner header's frequency is
// the outer one's times the inner loop's iterations.
TEST(WuLarus, NestedLoopsMultiply) {
  // 2 outer header -> 3 inner header;  3 -> 3 (back, true) | 4 (false);
  // 4 -> 2 (back, true) | 5 (false);  5 -> EXIT.
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 3, kEdgeTrue},
                              {3, 4, kEdgeFalse},
                              {4, 2, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 1, 0}});
  const BranchHints h = NoHints(f);
  EXPECT_EQ(Names(AppliedHeuristics(f, h)[3]),
            (std::vector<Heuristic>{Heuristic::kLoopBranch}));
  // 4: the loop branch (back to 2) and the return heuristic (5 returns)
  // agree.
  EXPECT_EQ(Names(AppliedHeuristics(f, h)[4]),
            (std::vector<Heuristic>{Heuristic::kLoopBranch,
                                    Heuristic::kReturn}));
  const double outer = CombineEvidence(0.88, 0.72);
  const double outer_iters = 1 / (1 - outer), inner_iters = 1 / (1 - 0.88);
  const Weights w = WuLarusWeights(f, h);
  EXPECT_NEAR(double(w.edges[1]), B * outer_iters, 2.0);
  EXPECT_NEAR(double(w.edges[2]), B * outer_iters * inner_iters * 0.88,
              2.0);
  EXPECT_NEAR(double(w.edges[3]), B * outer_iters, 2.0);
  EXPECT_NEAR(double(w.edges[5]), B, 2.0);
}

// A break leaves the loop: the loop exit heuristic stays in it.
TEST(WuLarus, BreakIsALoopExit) {
  // 3 header -> 4 (true) | 7 (false);  4 -> 5 (true) | 7 (false: break);
  // 5 -> 6;  6 -> 3 (latch);  7 -> EXIT.
  const Function f = Make(8, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, kEdgeTrue},
                              {3, 7, kEdgeFalse},
                              {4, 5, kEdgeTrue},
                              {4, 7, kEdgeFalse},
                              {5, 6, 0},
                              {6, 3, 0},
                              {7, 1, 0}});
  const std::vector<AppliedHeuristic> a = AppliedHeuristics(f, NoHints(f))[4];
  ASSERT_EQ(Names(a), (std::vector<Heuristic>{Heuristic::kLoopExit,
                                              Heuristic::kReturn}));
  EXPECT_EQ(a[0].likelier_edge, 4u);
  EXPECT_EQ(a[1].likelier_edge, 4u);
}

// A loop header (or its pre-header) is entered rather than skipped.
TEST(WuLarus, LoopHeaderAndPreHeader) {
  // 2 -> 3 (pre-header) | 6;  3 -> 4 (header);  4 -> 5 | 6;  5 -> 4;
  // 6 -> EXIT.
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 6, kEdgeFalse},
                              {3, 4, 0},
                              {4, 5, kEdgeTrue},
                              {4, 6, kEdgeFalse},
                              {5, 4, 0},
                              {6, 1, 0}});
  const BranchHints h = NoHints(f);
  const std::vector<AppliedHeuristic> a = AppliedHeuristics(f, h)[2];
  ASSERT_EQ(Names(a), (std::vector<Heuristic>{Heuristic::kReturn,
                                              Heuristic::kLoopHeader}));
  EXPECT_EQ(a[0].likelier_edge, 1u);
  EXPECT_EQ(a[1].likelier_edge, 1u);
}

// The cyclic probability is capped: a loop predicted to (almost) never
// leave still gets at most 101 iterations per entry.
TEST(WuLarus, CyclicProbabilityIsCapped) {
  // 2 -> 2 (back) | 3 ;  3 -> EXIT, with every hint for staying.
  const Function f = Make(4, {{0, 2, 0},
                              {2, 2, kEdgeTrue},
                              {2, 3, kEdgeFalse},
                              {3, 1, 0}});
  BranchHints h = NoHints(f);
  h.blocks[2].pointer = +1;
  h.blocks[2].opcode = +1;
  h.guard_use[1] = true;
  const double stay = WuLarusProbabilities(f, h)[1];
  ASSERT_GT(stay, 1 - 1 / 101.0);
  const Weights w = WuLarusWeights(f, h);
  // 101 header entries per activation, the exit taking 101 * (1 - stay).
  EXPECT_NEAR(double(w.edges[0]), B, 1.0);
  EXPECT_NEAR(double(w.edges[1]), 101 * B * stay, 2.0);
  EXPECT_NEAR(double(w.edges[2]), 101 * B * (1 - stay), 2.0);
}

// Fake, EH and abnormal edges are rare ways out; a switch splits evenly.
TEST(WuLarus, LowPriorityEdgesAndSwitches) {
  // 2 (call that may not return) -> 3 | EXIT (fake);  3 switch -> 4 5 6;
  // 4, 5, 6 -> EXIT.
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, kEdgeFallthru},
                              {2, 1, kEdgeFake},
                              {3, 4, kEdgeSwitch},
                              {3, 5, kEdgeSwitch},
                              {3, 6, kEdgeSwitch},
                              {4, 1, 0},
                              {5, 1, 0},
                              {6, 1, 0}});
  const std::vector<double> p = WuLarusProbabilities(f, NoHints(f));
  EXPECT_DOUBLE_EQ(p[1], 1.0);
  EXPECT_DOUBLE_EQ(p[2], 0.0);
  EXPECT_DOUBLE_EQ(p[3], 1.0 / 3);
  const Weights w = WuLarusWeights(f, NoHints(f));
  EXPECT_EQ(w.edges[2], 1u);  // never 0 on a used edge
  EXPECT_EQ(w.edges[3], 240240u);
}

// Random CFGs (irreducible ones and edges into ENTRY / out of EXIT too):
// every used edge weighs at least 1, ignored ones 0, each block's
// probabilities sum to 1, and the answer is the same twice.
TEST(WuLarus, RandomCfgsGiveSaneWeights) {
  std::mt19937 rng(35);
  for (int iter = 0; iter < 2000; ++iter) {
    const uint32_t nb = 2 + rng() % 20;
    std::vector<E> es;
    for (uint32_t b = 2; b < nb; ++b) es.push_back({b - 1 == 1 ? 0 : b - 1, b, 0});
    es.push_back({nb > 2 ? nb - 1 : 0, 1, 0});
    const size_t extra = rng() % (3 * nb);
    for (size_t k = 0; k < extra; ++k) {
      const uint32_t flags[] = {0, 0, kEdgeTrue, kEdgeFalse, kEdgeFake,
                                kEdgeEh, kEdgeIgnored};
      es.push_back({static_cast<uint32_t>(rng() % nb),
                    static_cast<uint32_t>(rng() % nb), flags[rng() % 7]});
    }
    const Function f = Make(nb, es);
    BranchHints h = NoHints(f);
    for (BlockHint& b : h.blocks) {
      b.call = rng() % 3 == 0;
      b.store = rng() % 3 == 0;
      b.pointer = static_cast<int8_t>(int(rng() % 3) - 1);
      b.opcode = static_cast<int8_t>(int(rng() % 3) - 1);
    }
    for (size_t e = 0; e < f.edges.size(); ++e) h.guard_use[e] = rng() % 4 == 0;
    const Weights w = WuLarusWeights(f, h);
    ASSERT_EQ(w.edges.size(), f.edges.size());
    for (size_t e = 0; e < f.edges.size(); ++e) {
      if (f.edges[e].flags & kEdgeIgnored)
        EXPECT_EQ(w.edges[e], 0u);
      else
        EXPECT_GE(w.edges[e], 1u);
    }
    const std::vector<double> p = WuLarusProbabilities(f, h);
    std::vector<double> sum(nb, 0);
    std::vector<bool> has(nb, false);
    for (size_t e = 0; e < f.edges.size(); ++e) {
      const Edge& x = f.edges[e];
      if ((x.flags & kEdgeIgnored) || x.dst == kEntryBlock ||
          x.src == kExitBlock)
        continue;
      sum[x.src] += p[e];
      has[x.src] = true;
    }
    for (uint32_t b = 0; b < nb; ++b)
      if (has[b]) EXPECT_NEAR(sum[b], 1.0, 1e-9) << "iter " << iter;
    EXPECT_EQ(WuLarusWeights(f, h).edges, w.edges);
  }
}

}  // namespace
}  // namespace ballarus
