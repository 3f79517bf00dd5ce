// path_dup_plan_test.cc — the duplication planner on hand-made graphs with
// hand-set path counts: two diamonds in a row, whose branches go the same
// way (a chain is copied for one side of the first), go independently (no
// chain), or whose join is too large for the growth budget (no chain).
#include "plugin/path_dup_plan.h"

#include <gmpxx.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/path_dag.h"
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

// ENTRY -> 2; 2 -> 3 | 4; 3, 4 -> 5; 5 -> 6 | 7; 6, 7 -> 8; 8 -> EXIT.
Function TwoDiamonds() {
  return Make(9, {{0, 2, 0},
                  {2, 3, kEdgeTrue},
                  {2, 4, kEdgeFalse},
                  {3, 5, 0},
                  {4, 5, 0},
                  {5, 6, kEdgeTrue},
                  {5, 7, kEdgeFalse},
                  {6, 8, 0},
                  {7, 8, 0},
                  {8, 1, 0}});
}

// The paths of fn with counts by their blocks: count(first side, second
// side), sides 3/4 and 6/7.
LoadedPaths Paths(const Function& fn, uint64_t c36, uint64_t c37,
                  uint64_t c46, uint64_t c47) {
  LoadedPaths lp;
  std::string error;
  EXPECT_TRUE(BuildPathDag(fn, PathCuts{}, &lp.dag, &error)) << error;
  lp.numbering = NumberPaths(lp.dag);
  lp.derived.assign(fn.edges.size(), 0);
  const uint64_t total = lp.numbering.total().get_ui();
  EXPECT_EQ(total, 4u);
  for (uint64_t id = 0; id < total; ++id) {
    std::vector<uint32_t> edges;
    EXPECT_TRUE(DecodePath(lp.dag, lp.numbering, mpz_class(id), &edges));
    const std::vector<uint32_t> b = PathBlocks(lp.dag, edges);
    EXPECT_EQ(b.size(), 7u);  // ENTRY 2 x 5 y 8 EXIT
    if (b.size() != 7) continue;
    const uint64_t c = b[2] == 3 ? (b[4] == 6 ? c36 : c37)
                                 : (b[4] == 6 ? c46 : c47);
    if (c == 0) continue;
    lp.counts[id] = c;
    lp.decoded[id] = edges;
    AddPathToEdgeCounts(lp.dag, edges, c, &lp.derived);
  }
  return lp;
}

PathDupLimits Limits(uint32_t join_size) {
  PathDupLimits limits;
  limits.copyable.assign(9, true);
  limits.size.assign(9, 2);
  limits.size[5] = join_size;
  limits.min_gain = 1;
  limits.min_growth = 4;
  return limits;
}

TEST(PathDupPlan, CorrelatedPairCopiesTheJoin) {
  const Function fn = TwoDiamonds();
  const LoadedPaths lp = Paths(fn, 700, 0, 0, 300);
  PathDupStats st;
  const std::vector<DupChain> chains =
      PlanPathDuplication({&fn, &lp}, Limits(2), &st);
  EXPECT_EQ(st.branch, 2000u);  // blocks 2 and 5, 1000 each
  ASSERT_EQ(chains.size(), 1u);
  const DupChain& c = chains[0];
  // Both sides gain alike (block 5's 300 mispredictions); the hotter
  // entry wins and block 5 is then taken.
  EXPECT_EQ(fn.edges[c.entry_edge].src, 3u);
  EXPECT_EQ(fn.edges[c.entry_edge].dst, 5u);
  EXPECT_EQ(c.blocks, std::vector<uint32_t>({5}));
  EXPECT_EQ(c.gain, 300u);
  EXPECT_EQ(c.cost, 2u);
  EXPECT_EQ(c.copy_count, std::vector<uint64_t>({700}));
  ASSERT_EQ(c.copy_out.size(), 1u);
  // The copy's branch: all 700 to block 6, none to 7.
  ASSERT_EQ(c.copy_out[0].size(), 2u);
  EXPECT_EQ(fn.edges[c.copy_out[0][0].first].dst, 6u);
  EXPECT_EQ(c.copy_out[0][0].second, 700u);
  EXPECT_EQ(fn.edges[c.copy_out[0][1].first].dst, 7u);
  EXPECT_EQ(c.copy_out[0][1].second, 0u);
}

TEST(PathDupPlan, OfEqualGainsTheHotterEntryIsCopied) {
  const Function fn = TwoDiamonds();
  const LoadedPaths lp = Paths(fn, 300, 0, 0, 700);
  const std::vector<DupChain> chains =
      PlanPathDuplication({&fn, &lp}, Limits(2));
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(fn.edges[chains[0].entry_edge].src, 4u);
  EXPECT_EQ(chains[0].copy_count, std::vector<uint64_t>({700}));
}

TEST(PathDupPlan, IndependentBranchesCopyNothing) {
  const Function fn = TwoDiamonds();
  const LoadedPaths lp = Paths(fn, 490, 210, 210, 90);  // 70/30 both, independent
  PathDupStats st;
  EXPECT_TRUE(PlanPathDuplication({&fn, &lp}, Limits(2), &st).empty());
  EXPECT_EQ(st.best_gain, 0u);
}

TEST(PathDupPlan, GrowthBudgetRefusesALargeJoin) {
  const Function fn = TwoDiamonds();
  const LoadedPaths lp = Paths(fn, 700, 0, 0, 300);
  // 2 + 2 + 2 + 100 + ... statements: 10 % is 11, the join alone 100.
  EXPECT_TRUE(PlanPathDuplication({&fn, &lp}, Limits(100)).empty());
}

TEST(PathDupPlan, UncopyableJoinCopiesNothing) {
  const Function fn = TwoDiamonds();
  const LoadedPaths lp = Paths(fn, 700, 0, 0, 300);
  PathDupLimits limits = Limits(2);
  limits.copyable[5] = false;
  EXPECT_TRUE(PlanPathDuplication({&fn, &lp}, limits).empty());
}

}  // namespace
}  // namespace ballarus
