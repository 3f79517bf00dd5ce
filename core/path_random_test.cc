// path_random_test.cc — Ball–Larus numbering beyond hand-made graphs: a
// function with 2^70 paths, and several hundred seeded random CFGs, every
// one checked by CheckDag (every ENTRY->EXIT path enumerated where there
// are few enough) against oracles written independently of the
// implementation (test_path_checks.h): path counts by a memoised DP over
// the DAG's edge list, per-edge path counts as paths(ENTRY->u) *
// paths(w->EXIT), dominators for the back edges of reducible loops, and
// the cycle property for the maximum spanning tree.
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

TEST(PathNumbering, SeventyDiamondsHave2To70Paths) {
  const Function f = DiamondChain(kDiamonds);
  ASSERT_EQ(f.blocks.size(), 213u);
  EXPECT_TRUE(FindBackEdges(f).empty());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  const mpz_class total = Pow2(kDiamonds);
  EXPECT_EQ(num.total(), total);
  EXPECT_EQ(CountByDp(dag).to_exit[kEntryBlock], total);
  // NP(h_i) = 2^(70-i), so Val(h_i->b_i) = NP(a_i) = 2^(69-i): bit 69-i of
  // a path's number says whether it takes b_i.
  for (uint32_t i = 0; i < kDiamonds; ++i) {
    EXPECT_EQ(num.num_paths[2 + 3 * i], Pow2(kDiamonds - i));
    EXPECT_EQ(ValOf(dag, num, 2 + 4 * i), Pow2(kDiamonds - 1 - i));
  }
  gmp_randclass rnd(gmp_randinit_mt);
  rnd.seed(20240917);
  const mpz_class two64 = Pow2(64);
  std::vector<mpz_class> ids = {0,         1,         two64 - 1, two64,
                                two64 + 1, Pow2(69),  total - 2, total - 1};
  for (int k = 0; k < 300; ++k) ids.push_back(rnd.get_z_range(total));
  int above_64_bits = 0;
  for (const mpz_class& id : ids) {
    Path p;
    ASSERT_TRUE(DecodePath(dag, num, id, &p)) << id;
    ASSERT_EQ(p.size(), 2 + 2 * kDiamonds);
    EXPECT_EQ(EncodePath(num, p), id);
    above_64_bits += id >= two64;
    const U blocks = PathBlocks(dag, p);
    ASSERT_EQ(blocks.size(), 3 + 2 * kDiamonds);
    for (uint32_t i = 0; i < kDiamonds; ++i) {
      const bool b = mpz_tstbit(id.get_mpz_t(), kDiamonds - 1 - i);
      EXPECT_EQ(blocks[2 + 2 * i], (b ? 4u : 3u) + 3 * i) << id;
    }
  }
  EXPECT_GT(above_64_bits, 250);
  Path p;
  for (const mpz_class& bad :
       {total, mpz_class(total + 1), Pow2(100), mpz_class(-1),
        mpz_class(-total)}) {
    EXPECT_FALSE(DecodePath(dag, num, bad, &p)) << bad;
    EXPECT_TRUE(p.empty());
  }
  PathIncrements inc;
  EXPECT_FALSE(PlaceIncrements(f, dag, {}, &inc, &err));
  EXPECT_NE(err.find("too many paths"), std::string::npos) << err;
}

TEST(PathNumbering, RandomCfgsExhaustively) {
  std::mt19937_64 rng(0xba11a5);
  int enumerated = 0, reducible = 0, irreducible = 0, with_loops = 0;
  int plans_ok = 0, plans_failed = 0, with_cut_blocks = 0, no_paths = 0;
  constexpr int kGraphs = 400;
  for (int g = 0; g < kGraphs; ++g) {
    const bool well_formed = g % 2 == 0;
    const Function f = RandomCfg(rng, well_formed);
    SCOPED_TRACE("graph " + std::to_string(g));
    for (size_t i = 1; i < f.edges.size(); ++i)
      ASSERT_LE(f.edges[i - 1].src, f.edges[i].src);

    // Back edges: ascending path edges; the dominator back edges always
    // among them (a block's dominator is its DFS ancestor); for a reducible
    // graph exactly those (within the part ENTRY reaches).
    const U back = FindBackEdges(f);
    for (size_t k = 0; k < back.size(); ++k) {
      if (k > 0) {
        EXPECT_LT(back[k - 1], back[k]);
      }
      EXPECT_TRUE(InDag(f.edges[back[k]]));
    }
    const Loops loops = FindLoops(f);
    U back_reached;
    for (uint32_t i : back)
      if (loops.reachable[f.edges[i].src]) back_reached.push_back(i);
    for (uint32_t i : loops.dominator_back_edges)
      EXPECT_TRUE(std::binary_search(back.begin(), back.end(), i)) << i;
    if (loops.reducible) {
      ++reducible;
      EXPECT_EQ(back_reached, loops.dominator_back_edges);
    } else {
      ++irreducible;
    }
    with_loops += !back.empty();

    // The DAG cut at the back edges: acyclic, exhaustively checked.
    const Checked c = CheckDag(f, BackEdgeCuts(f), g);
    ASSERT_TRUE(c.built);
    enumerated += c.enumerated;
    no_paths += c.total == 0;
    if (well_formed) {
      EXPECT_GT(c.total, 0);
    }

    // PlanPaths with the default limit keeps the back-edge DAG.
    PathPlan plan;
    std::string err;
    ASSERT_TRUE(PlanPaths(f, {}, kMaxInstrumentedPaths, &plan, &err)) << err;
    EXPECT_EQ(plan.cuts.edges, back);
    EXPECT_TRUE(plan.cuts.blocks.empty());
    EXPECT_EQ(Z(plan.n_paths), c.total);

    // Small limits, with or without a mask.  Cutting every block leaves
    // one path per path edge (start at its source, take it, end), so any
    // limit >= |path edges| must succeed when every block may be cut.
    std::vector<bool> mask;
    if (rng() % 2) {
      mask.resize(f.blocks.size());
      for (size_t b = 0; b < mask.size(); ++b) mask[b] = rng() % 3 != 0;
    }
    const uint64_t n_edges = CountPathEdges(f);
    for (uint64_t limit : {uint64_t{1} + rng() % 8, n_edges}) {
      SCOPED_TRACE("limit " + std::to_string(limit));
      const bool ok = PlanPaths(f, mask, limit, &plan, &err);
      if (mask.empty() && limit >= n_edges) {
        EXPECT_TRUE(ok) << err;
      }
      if (!ok) {
        ++plans_failed;
        EXPECT_FALSE(err.empty());
        continue;
      }
      ++plans_ok;
      with_cut_blocks += !plan.cuts.blocks.empty();
      CheckPlan(f, plan, mask, limit, g * 7 + limit);
    }
  }
  // The generator covers what it should.
  EXPECT_GT(enumerated, kGraphs * 9 / 10);
  EXPECT_GT(reducible, 50);
  EXPECT_GT(irreducible, 20);
  EXPECT_GT(with_loops, 100);
  EXPECT_GT(no_paths, 5);
  EXPECT_GT(plans_ok, 300);
  EXPECT_GT(plans_failed, 20);
  EXPECT_GT(with_cut_blocks, 100);
}

}  // namespace
}  // namespace ballarus
