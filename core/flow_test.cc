// flow_test.cc — flow propagation and conservation checks on hand-made CFGs
// with hand-derived counts (core/flow.cc).
#include "core/flow.h"

#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

// An edge with its true execution count; `counted` = naive mode gives it a
// counter.
struct E {
  uint32_t src, dst;
  uint32_t flags;
  uint64_t truth;
};

Function Make(uint32_t n_blocks, const std::vector<E>& es) {
  Function f;
  f.name = "f";
  f.blocks.resize(n_blocks);
  int64_t next = 0;
  for (const E& e : es) {
    Edge x;
    x.src = e.src;
    x.dst = e.dst;
    x.flags = e.flags;
    const bool countable =
        !(e.flags & (kEdgeEh | kEdgeAbnormal | kEdgeFake | kEdgeIgnored));
    x.counter = countable ? next++ : kNoCounter;
    f.edges.push_back(x);
  }
  return f;
}

std::vector<uint64_t> Counters(const Function& f, const std::vector<E>& es) {
  std::vector<uint64_t> c;
  for (size_t i = 0; i < es.size(); ++i)
    if (f.edges[i].counter >= 0) c.push_back(es[i].truth);
  return c;
}

FlowResult SolveNaive(const Function& f, const std::vector<E>& es) {
  const std::vector<uint64_t> c = Counters(f, es);
  return SolveFlow(f, KnownFromCounters(f, c.data(), c.size()));
}

void ExpectAllEdges(const FlowResult& r, const std::vector<E>& es) {
  ASSERT_EQ(r.edges.size(), es.size());
  for (size_t i = 0; i < es.size(); ++i) {
    if (es[i].flags & kEdgeIgnored) {
      EXPECT_FALSE(r.edges[i].has_value()) << "edge " << i;
      continue;
    }
    ASSERT_TRUE(r.edges[i].has_value()) << "edge " << i;
    EXPECT_EQ(*r.edges[i], es[i].truth) << "edge " << i;
  }
}

// Counters only on the chords of a spanning tree of the closed graph (the
// virtual edge and fake/EH/abnormal edges preferred for the tree, as GCC's
// find_spanning_tree does); returns the known vector.
std::vector<Count> ChordsOnly(const Function& f, const std::vector<E>& es,
                              size_t* n_chords) {
  const size_t nb = f.blocks.size();
  std::vector<uint32_t> parent(nb);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  parent[find(kExitBlock)] = find(kEntryBlock);  // virtual edge on the tree
  std::vector<bool> tree(es.size(), false);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < es.size(); ++i) {
      const bool uncountable =
          es[i].flags & (kEdgeEh | kEdgeAbnormal | kEdgeFake);
      if ((es[i].flags & kEdgeIgnored) || (pass == 0) != uncountable) continue;
      const uint32_t a = find(es[i].src), b = find(es[i].dst);
      if (a != b) {
        parent[a] = b;
        tree[i] = true;
      }
    }
  }
  std::vector<Count> known(es.size());
  *n_chords = 0;
  for (size_t i = 0; i < es.size(); ++i)
    if (!tree[i] && !(es[i].flags & kEdgeIgnored)) {
      known[i] = es[i].truth;
      ++*n_chords;
    }
  return known;
}

void ExpectChordsRestoreAll(uint32_t nb, const std::vector<E>& es) {
  const Function f = Make(nb, es);
  size_t n_chords = 0;
  const std::vector<Count> known = ChordsOnly(f, es, &n_chords);
  size_t n_used = 0;
  for (const E& e : es) n_used += !(e.flags & kEdgeIgnored);
  // |E| + 1 (virtual) - |V| + 1 chords in a connected closed graph.
  EXPECT_EQ(n_chords, n_used + 1 - nb + 1);
  const FlowResult r = SolveFlow(f, known);
  ExpectAllEdges(r, es);
  EXPECT_TRUE(CheckConservation(f, r).empty());
}

const uint32_t FT = kEdgeFallthru, T = kEdgeTrue, F = kEdgeFalse;

// 0 -> 2; 2 -T-> 3, 2 -F-> 4; 3,4 -> 5; 5 -> 1.
const std::vector<E> kDiamond = {{0, 2, FT, 10}, {2, 3, T, 7}, {2, 4, F, 3},
                                 {3, 5, FT, 7},  {4, 5, FT, 3}, {5, 1, FT, 10}};

TEST(Flow, DiamondNaive) {
  const Function f = Make(6, kDiamond);
  const FlowResult r = SolveNaive(f, kDiamond);
  ExpectAllEdges(r, kDiamond);
  ASSERT_TRUE(r.virtual_edge.has_value());
  EXPECT_EQ(*r.virtual_edge, 10u);
  const uint64_t blocks[] = {10, 10, 10, 7, 3, 10};
  for (int b = 0; b < 6; ++b) {
    ASSERT_TRUE(r.blocks[b].has_value()) << b;
    EXPECT_EQ(*r.blocks[b], blocks[b]) << b;
  }
  EXPECT_TRUE(CheckConservation(f, r).empty());
}

TEST(Flow, DiamondChords) { ExpectChordsRestoreAll(6, kDiamond); }

// while loop run 4 times per call, 2 calls:
// 0->2; 2->3; 3 -T-> 4 (body), 4->3 (back); 3 -F-> 5; 5->1.
const std::vector<E> kLoop = {{0, 2, FT, 2}, {2, 3, FT, 2}, {3, 4, T, 8},
                              {4, 3, FT, 8}, {3, 5, F, 2},  {5, 1, FT, 2}};

TEST(Flow, LoopNaiveAndChords) {
  const Function f = Make(6, kLoop);
  const FlowResult r = SolveNaive(f, kLoop);
  ExpectAllEdges(r, kLoop);
  EXPECT_EQ(r.blocks[3], Count(10));  // header: 2 entries + 8 back edges
  EXPECT_EQ(r.blocks[4], Count(8));
  ExpectChordsRestoreAll(6, kLoop);
}

// Outer loop 3 iterations, inner loop 4 iterations each, one call.
const std::vector<E> kNested = {
    {0, 2, FT, 1}, {2, 3, FT, 1},  {3, 4, T, 3}, {3, 8, F, 1},
    {4, 5, FT, 3}, {5, 6, T, 12},  {5, 7, F, 3}, {6, 5, FT, 12},
    {7, 3, FT, 3}, {8, 1, FT, 1}};

TEST(Flow, NestedLoops) {
  const Function f = Make(9, kNested);
  const FlowResult r = SolveNaive(f, kNested);
  ExpectAllEdges(r, kNested);
  EXPECT_EQ(r.blocks[3], Count(4));
  EXPECT_EQ(r.blocks[5], Count(15));
  EXPECT_EQ(r.blocks[6], Count(12));
  ExpectChordsRestoreAll(9, kNested);
}

// A self loop (single-block loop body): always a chord, never solvable.
TEST(Flow, SelfLoop) {
  const std::vector<E> es = {
      {0, 2, FT, 3}, {2, 2, T, 30}, {2, 1, F, 3}};
  const Function f = Make(3, es);
  const FlowResult r = SolveNaive(f, es);
  ExpectAllEdges(r, es);
  EXPECT_EQ(r.blocks[2], Count(33));
  ExpectChordsRestoreAll(3, es);
  // Without its counter the self loop stays unknown, the rest is solved.
  std::vector<Count> known = {std::nullopt, std::nullopt, Count(3)};
  const FlowResult u = SolveFlow(f, known);
  EXPECT_EQ(u.edges[0], Count(3));
  EXPECT_FALSE(u.edges[1].has_value());
  const std::vector<FlowIssue> issues = CheckConservation(f, u);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, FlowIssue::kUnknown);
  EXPECT_EQ(issues[0].edge, 1u);
}

// Early exit: block 2 calls exit() 2 times out of 5 (fake edge 2->EXIT).
const std::vector<E> kEarlyExit = {
    {0, 2, FT, 5}, {2, 3, FT, 3}, {2, 1, kEdgeFake, 2}, {3, 1, FT, 3}};

TEST(Flow, FakeEdgeToExit) {
  const Function f = Make(4, kEarlyExit);
  EXPECT_EQ(f.edges[2].counter, kNoCounter);
  const FlowResult r = SolveNaive(f, kEarlyExit);
  ExpectAllEdges(r, kEarlyExit);
  EXPECT_EQ(r.blocks[2], Count(5));
  EXPECT_EQ(r.blocks[3], Count(3));
  EXPECT_EQ(r.blocks[kExitBlock], Count(5));
  EXPECT_EQ(r.virtual_edge, Count(5));
  EXPECT_TRUE(CheckConservation(f, r).empty());
  ExpectChordsRestoreAll(4, kEarlyExit);
}

// A call in block 2 throws 4 times out of 10 to landing pad 4 (EH edge),
// which rethrows... here simply returns.
const std::vector<E> kEh = {{0, 2, FT, 10},
                            {2, 3, FT, 6},
                            {2, 4, kEdgeEh | kEdgeAbnormal, 4},
                            {3, 5, FT, 6},
                            {4, 5, FT, 4},
                            {5, 1, FT, 10}};

TEST(Flow, EhEdges) {
  const Function f = Make(6, kEh);
  const FlowResult r = SolveNaive(f, kEh);
  ExpectAllEdges(r, kEh);
  EXPECT_EQ(r.blocks[4], Count(4));
  EXPECT_TRUE(CheckConservation(f, r).empty());
  ExpectChordsRestoreAll(6, kEh);
}

// setjmp receiver 4 reached by an abnormal edge 3->4, which gcov ignores and
// replaces by fake edges 3->EXIT and ENTRY->4.
const std::vector<E> kAbnormal = {{0, 2, FT, 5},
                                  {0, 4, kEdgeFake, 2},
                                  {2, 3, FT, 5},
                                  {3, 1, kEdgeFake, 5},
                                  {3, 4, kEdgeAbnormal | kEdgeIgnored, 0},
                                  {4, 1, FT, 2}};

TEST(Flow, IgnoredAbnormalEdges) {
  const Function f = Make(5, kAbnormal);
  const FlowResult r = SolveNaive(f, kAbnormal);
  ExpectAllEdges(r, kAbnormal);
  EXPECT_FALSE(r.edges[4].has_value());
  EXPECT_EQ(r.blocks[kEntryBlock], Count(7));
  EXPECT_EQ(r.blocks[4], Count(2));  // the ignored edge is not counted in
  EXPECT_EQ(r.virtual_edge, Count(7));
  // The ignored edge is not reported as unknown.
  EXPECT_TRUE(CheckConservation(f, r).empty());
  ExpectChordsRestoreAll(5, kAbnormal);
}

// Two uncounted edges forming a cycle: conservation cannot split the flow.
TEST(Flow, UncountedCycleStaysUnknown) {
  Function f = Make(4, {{0, 2, FT, 1}, {2, 3, FT, 0}, {3, 2, FT, 0},
                        {2, 1, FT, 1}});
  f.edges[1].counter = kNoCounter;
  f.edges[2].counter = kNoCounter;
  f.edges[3].counter = 1;
  const uint64_t c[] = {1, 1};
  const FlowResult r = SolveFlow(f, KnownFromCounters(f, c, 2));
  EXPECT_EQ(r.edges[0], Count(1));
  EXPECT_EQ(r.edges[3], Count(1));
  EXPECT_FALSE(r.edges[1].has_value());
  EXPECT_FALSE(r.edges[2].has_value());
  EXPECT_FALSE(r.blocks[2].has_value());
  EXPECT_FALSE(r.blocks[3].has_value());
  EXPECT_EQ(r.blocks[kExitBlock], Count(1));
  const std::vector<FlowIssue> issues = CheckConservation(f, r);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].kind, FlowIssue::kUnknown);
  EXPECT_EQ(issues[0].block, 2u);
  EXPECT_EQ(issues[0].edge, 1u);
  EXPECT_EQ(issues[1].kind, FlowIssue::kUnknown);
  EXPECT_EQ(issues[1].block, 3u);
  EXPECT_EQ(issues[1].edge, 2u);
}

TEST(Flow, InconsistentCountsReported) {
  std::vector<E> es = kDiamond;
  es[1].truth = 8;  // 2->3 says 8, 3->5 says 7
  const Function f = Make(6, es);
  const FlowResult r = SolveNaive(f, es);
  const std::vector<FlowIssue> issues = CheckConservation(f, r);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].kind, FlowIssue::kImbalance);
  EXPECT_EQ(issues[0].block, 2u);
  EXPECT_EQ(issues[0].in_sum, 10u);
  EXPECT_EQ(issues[0].out_sum, 11u);
  EXPECT_EQ(issues[1].block, 3u);
  EXPECT_EQ(issues[1].in_sum, 8u);
  EXPECT_EQ(issues[1].out_sum, 7u);
}

TEST(Flow, NegativeDerivationReportedNotWrapped) {
  std::vector<E> es = kEarlyExit;
  es[1].truth = 7;  // 2->3 = 7 > 5 entries of block 2
  es[3].truth = 7;
  const Function f = Make(4, es);
  const FlowResult r = SolveNaive(f, es);
  EXPECT_FALSE(r.edges[2].has_value());  // the fake edge would be -2
  ASSERT_EQ(r.negatives.size(), 2u);
  EXPECT_EQ(r.negatives[0].kind, FlowIssue::kNegative);
  EXPECT_EQ(r.negatives[0].block, 2u);
  EXPECT_EQ(r.negatives[0].edge, 2u);
  EXPECT_EQ(r.negatives[0].in_sum, 5u);
  EXPECT_EQ(r.negatives[0].out_sum, 7u);
  EXPECT_EQ(r.negatives[1].block, kExitBlock);
  const std::vector<FlowIssue> issues = CheckConservation(f, r);
  // Two negatives plus the fake edge left unknown.
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].block, kExitBlock);
  EXPECT_EQ(issues[1].block, 2u);
  EXPECT_EQ(issues[2].kind, FlowIssue::kUnknown);
}

TEST(Flow, SumsDoNotOverflow) {
  const uint64_t big = UINT64_MAX - 1;
  const std::vector<E> es = {{0, 2, FT, big}, {2, 3, T, big}, {2, 4, F, 0},
                             {3, 5, FT, big}, {4, 5, FT, 0},  {5, 1, FT, big}};
  const Function f = Make(6, es);
  const FlowResult r = SolveNaive(f, es);
  ExpectAllEdges(r, es);
  EXPECT_TRUE(CheckConservation(f, r).empty());
}

}  // namespace
}  // namespace ballarus
