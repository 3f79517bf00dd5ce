// trace_plan_test.cc — witness placement (core/trace_plan.cc): the paper's
// two properties checked by independent searches on every hand-made graph,
// and the placements the paper prescribes on small ones.
#include "core/trace_plan.h"

#include <random>
#include <vector>

#include "core/trace_test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using V = std::vector<size_t>;

std::vector<bool> CallBlocks(const TestFunction& t) {
  std::vector<bool> calls(t.callee.size());
  for (size_t b = 0; b < calls.size(); ++b) calls[b] = t.callee[b] >= 0;
  return calls;
}

// Blocks reached from `from` along flow edges without a witness; also
// returns (through `extra`) how many such edges exceed a tree's count —
// non-zero iff a diamond or a directed cycle starts at `from`.
std::vector<bool> WitnessFree(const Function& f, const TracePlan& p,
                              uint32_t from, size_t* extra) {
  std::vector<bool> reached(f.blocks.size(), false);
  reached[from] = true;
  std::vector<uint32_t> stack{from};
  size_t edges = 0, vertices = 1;
  while (!stack.empty()) {
    const uint32_t x = stack.back();
    stack.pop_back();
    for (size_t i = 0; i < f.edges.size(); ++i) {
      const Edge& e = f.edges[i];
      if (e.src != x || !IsTraceFlowEdge(e)) continue;
      if (p.witness_of_edge[i] != kNoWitness) continue;
      ++edges;
      if (!reached[e.dst]) {
        reached[e.dst] = true;
        ++vertices;
        stack.push_back(e.dst);
      }
    }
  }
  *extra = edges - (vertices - 1);
  return reached;
}

// Trace(Ewit) (no diamond, no directed cycle in E - Ewit) and the blocking
// property (no witness-free path from a predicate's out-edge to a call
// block or EXIT), checked independently of the placement algorithm.
void ExpectTraceable(const TestFunction& t, const TracePlan& p) {
  const Function& f = t.fn;
  const std::vector<uint32_t> out = FlowOutDegrees(f);
  for (uint32_t s = 0; s < f.blocks.size(); ++s) {
    size_t extra = 0;
    WitnessFree(f, p, s, &extra);
    EXPECT_EQ(extra, 0u) << f.name << ": diamond or cycle from " << s;
    if (out[s] < 2) continue;
    for (const Edge& e : f.edges) {
      if (e.src != s || !IsTraceFlowEdge(e)) continue;
      const size_t i = &e - f.edges.data();
      if (p.witness_of_edge[i] != kNoWitness) continue;
      const std::vector<bool> r = WitnessFree(f, p, e.dst, &extra);
      EXPECT_FALSE(r[kExitBlock]) << f.name << ": " << s << " reaches EXIT";
      for (uint32_t b = 0; b < f.blocks.size(); ++b)
        EXPECT_FALSE(r[b] && t.callee[b] >= 0)
            << f.name << ": " << s << " reaches call block " << b;
    }
  }
  EXPECT_TRUE(p.unwitnessable.empty());
  for (size_t w = 0; w < p.witness_edges.size(); ++w)
    EXPECT_EQ(p.witness_of_edge[p.witness_edges[w]], static_cast<int64_t>(w));
}

TEST(TracePlan, EveryTestGraphIsTraceable) {
  for (const TestFunction& t :
       {IfElse(), WhileLoop(), NestedLoops(), EarlyExitLoop(), MultipleExits(),
        Figure13(), SwitchLoop(), CallInLoop(0), CallingSelfLoop(0),
        Recursive(0, 1), CallsBelowBranches(0), ComputedGotoLoop(0),
        TwoDispatchBlocks(), DispatchOrDirect()}) {
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<uint64_t> w(t.fn.edges.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = (i * 7 + seed * 13) % 10;
      ExpectTraceable(t, PlanTrace(t.fn, w, CallBlocks(t)));
    }
  }
}

TEST(TracePlan, RandomGraphsAreTraceable) {
  std::mt19937 rng(2024);
  for (int i = 0; i < 500; ++i) {
    const TestFunction t = RandomCfg(rng);
    std::vector<uint64_t> w(t.fn.edges.size());
    for (uint64_t& x : w) x = rng() % 100;
    ExpectTraceable(t, PlanTrace(t.fn, w, CallBlocks(t)));
  }
}

// CallDecision::kSite: Trace(Ewit), EXIT blocked, and the call blocks a
// predicate's out-edges reach witness-free pairwise disjoint (each found
// by its own search), with no more witnesses than the paper's placement.
void ExpectSiteDecided(const TestFunction& t, const std::vector<uint64_t>& w) {
  const Function& f = t.fn;
  const TracePlan p = PlanTrace(f, w, CallBlocks(t), CallDecision::kSite);
  const TracePlan old = PlanTrace(f, w, CallBlocks(t));
  EXPECT_EQ(p.calls, CallDecision::kSite) << f.name;
  EXPECT_LE(p.witness_edges.size(), old.witness_edges.size()) << f.name;
  EXPECT_TRUE(SitesDisjoint(f, p)) << f.name;
  const std::vector<uint32_t> out = FlowOutDegrees(f);
  for (uint32_t s = 0; s < f.blocks.size(); ++s) {
    size_t extra = 0;
    WitnessFree(f, p, s, &extra);
    EXPECT_EQ(extra, 0u) << f.name << ": diamond or cycle from " << s;
    if (out[s] < 2) continue;
    std::vector<int> owner(f.blocks.size(), -1);
    for (const Edge& e : f.edges) {
      if (e.src != s || !IsTraceFlowEdge(e)) continue;
      const size_t i = &e - f.edges.data();
      if (p.witness_of_edge[i] != kNoWitness) continue;
      const std::vector<bool> r = WitnessFree(f, p, e.dst, &extra);
      EXPECT_FALSE(r[kExitBlock]) << f.name << ": " << s << " reaches EXIT";
      for (uint32_t b = 0; b < f.blocks.size(); ++b) {
        if (!r[b] || t.callee[b] < 0) continue;
        EXPECT_EQ(owner[b], -1) << f.name << ": " << s << " reaches call "
                                << b << " by two out-edges";
        owner[b] = static_cast<int>(i);
      }
    }
  }
}

TEST(TracePlan, SiteDecidedPlansAreTraceable) {
  for (const TestFunction& t :
       {IfElse(), WhileLoop(), CallInLoop(0), CallingSelfLoop(0),
        Recursive(0, 1), CallsBelowBranches(0), ComputedGotoLoop(0)})
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<uint64_t> w(t.fn.edges.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = (i * 7 + seed * 13) % 10;
      ExpectSiteDecided(t, w);
    }
  std::mt19937 rng(2025);
  for (int i = 0; i < 500; ++i) {
    const TestFunction t = RandomCfg(rng);
    std::vector<uint64_t> w(t.fn.edges.size());
    for (uint64_t& x : w) x = rng() % 100;
    ExpectSiteDecided(t, w);
  }
}

TEST(TracePlan, SitesInsteadOfCallBlockers) {
  // Figure 15 again: only EXIT's blockers 5->7 and 6->7; the diamond
  // 2->3->5, 2->4->5 needs one chord, and 5 is reached from one side.
  const TestFunction t = CallsBelowBranches(0);
  const TracePlan p = PlanTrace(t.fn, {}, CallBlocks(t), CallDecision::kSite);
  EXPECT_EQ(p.calls, CallDecision::kSite);
  EXPECT_EQ(p.blocking, (V{5, 6}));
  EXPECT_EQ(p.witness_edges.size(), 3u);  // the paper's placement: 4
}

TEST(TracePlan, SitesDisjointSeesACallBelowADiamond) {
  // Without witnesses both out-edges of 2 reach the call at 5 (through 3
  // and 4), and 6 past it.
  const TestFunction t = CallsBelowBranches(0);
  TracePlan none;
  none.witness_of_edge.assign(t.fn.edges.size(), kNoWitness);
  none.call_block = CallBlocks(t);
  EXPECT_FALSE(SitesDisjoint(t.fn, none));
  none.call_block[5] = false;  // the call at 6 is still below the diamond
  EXPECT_FALSE(SitesDisjoint(t.fn, none));
  none.call_block[6] = false;
  EXPECT_TRUE(SitesDisjoint(t.fn, none));
}

TEST(TracePlan, IfElseBlocksBothArmsForExit) {
  // 2->3 and 2->4 lead to EXIT without another predicate: both blockers.
  const TestFunction t = IfElse();
  const TracePlan p = PlanTrace(t.fn, {}, CallBlocks(t));
  EXPECT_EQ(p.blocking, (V{1, 2}));
  EXPECT_EQ(p.witness_edges, (V{1, 2}));
}

TEST(TracePlan, WhileLoopChordOnLighterCycleEdge) {
  // Blocker 2->4 (to EXIT); the cycle 2->3->2 needs one chord: with the
  // back edge lighter than the entry into the body, the back edge.
  const TestFunction t = WhileLoop();
  const TracePlan p = PlanTrace(t.fn, {1, 10, 1, 9, 1}, CallBlocks(t));
  EXPECT_EQ(p.blocking, (V{2}));
  EXPECT_EQ(p.witness_edges, (V{2, 3}));
}

TEST(TracePlan, BlockersAsFarFromCallsAsPossible) {
  // Figure 15: the call at 5 is blocked on the predicate's out-edges 2->3
  // and 2->4, not on 3->5 and 4->5; the call at 6 and EXIT by 5->6, 5->7.
  const TestFunction t = CallsBelowBranches(0);
  const TracePlan p = PlanTrace(t.fn, {}, CallBlocks(t));
  EXPECT_EQ(p.blocking, (V{1, 2, 5, 6}));
  EXPECT_EQ(p.witness_edges, (V{1, 2, 5, 6}));
}

TEST(TracePlan, Figure13HasThePapersWitnessCount) {
  // The paper's placement has three witnesses (t, u, v) and EOF, which
  // here is the blocker 5->1 (C->EXIT).  The other 7 edges join 5 blocks
  // (EXIT only through the blocker): 3 chords.
  const TestFunction t = Figure13();
  const TracePlan p = PlanTrace(t.fn, {}, CallBlocks(t));
  EXPECT_EQ(p.blocking, (V{7}));
  EXPECT_EQ(p.witness_edges.size(), 4u);
}

TEST(TracePlan, StraightLineNeedsNoWitness) {
  // A function without predicates writes nothing (the edge-profiling
  // spanning tree would count its entries on one chord).
  const Function f = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 1, 0}});
  EXPECT_TRUE(PlanTrace(f, {}, {false, false, true, false}).witness_edges.empty());
}

TEST(TracePlan, FakeEdgesTakeNoPart) {
  // A call at 3 that may not return has a fake edge to EXIT: not a flow
  // edge, so 3 is no predicate and the fake edge holds no witness.
  const Function f = Make(5, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse},
                              {3, 4, 0}, {3, 1, kEdgeFake}, {4, 1, 0}});
  const TracePlan p = PlanTrace(f, {}, {false, false, false, true, false});
  EXPECT_EQ(p.witness_of_edge[4], kNoWitness);
  EXPECT_EQ(FlowOutDegrees(f)[3], 1u);
  // 2->3 blocks the call; 2->4 blocks EXIT; 2->3 also EXIT's blocker.
  EXPECT_EQ(p.blocking, (V{1, 2}));
}

TEST(TracePlan, ReentryEdgesTakeNoPart) {
  // A fork() at 2 gets the model-only re-entry edge ENTRY->2 (reentry.h):
  // the child's trace goes on with the parent's state, so ENTRY stays no
  // predicate and that edge holds no witness.
  const Function f = Make(4, {{0, 2, 0}, {0, 2, kEdgeReentry}, {2, 3, 0},
                              {3, 1, 0}});
  const TracePlan p = PlanTrace(f, {}, {false, false, true, false});
  EXPECT_EQ(FlowOutDegrees(f)[0], 1u);
  EXPECT_TRUE(p.witness_edges.empty());
}

TEST(TracePlan, ComputedGotoTargetsGetBlockWitnesses) {
  const TestFunction t = ComputedGotoLoop(0);
  EXPECT_EQ(DispatchBlocks(t.fn),
            (std::vector<bool>{false, false, false, true, false, false, false,
                               false, false}));
  const TracePlan p = PlanTrace(t.fn, {}, CallBlocks(t));
  EXPECT_EQ(p.witness_blocks, (std::vector<uint32_t>{4, 5, 6, 7}));
  const int64_t first = static_cast<int64_t>(p.witness_edges.size());
  EXPECT_EQ(BlockWitness(p, 4), first);
  EXPECT_EQ(BlockWitness(p, 7), first + 3);
  EXPECT_EQ(BlockWitness(p, 3), kNoWitness);
  // The flow edge 5->6 into a target has its own witness; the abnormal
  // edges 3->4..7 (edges 2..5) none.
  EXPECT_NE(p.witness_of_edge[8], kNoWitness);
  for (size_t e = 2; e <= 5; ++e) EXPECT_EQ(p.witness_of_edge[e], kNoWitness);
  EXPECT_TRUE(IsDispatchEdge(t.fn, t.fn.edges[3]));
  EXPECT_FALSE(IsDispatchEdge(t.fn, t.fn.edges[13]));  // 3->EXIT, fake
  // One dispatch block: no blocker for it, i.e. 6->3 (the branch 6 goes
  // to EXIT or dispatches) is not blocking; 6->EXIT is, for EXIT.
  EXPECT_EQ(p.blocking, (V{10}));
}

TEST(TracePlan, TwoDispatchBlocksAreBlocked) {
  // 2 reaches both dispatch blocks, whose targets are the same: both of
  // its out-edges need a witness.
  const TracePlan p = PlanTrace(TwoDispatchBlocks().fn, {}, {});
  EXPECT_EQ(p.blocking, (V{1, 2}));
  EXPECT_EQ(p.witness_blocks, (std::vector<uint32_t>{4, 5}));
}

TEST(TracePlan, FlowEdgeIntoATargetHasItsWitness) {
  // 2->5 and 2->3->(5) would both first meet 5's block witness.
  const TracePlan p = PlanTrace(DispatchOrDirect().fn, {}, {});
  EXPECT_NE(p.witness_of_edge[1], kNoWitness);
  EXPECT_EQ(p.witness_of_edge[2], kNoWitness);
}

}  // namespace
}  // namespace ballarus
