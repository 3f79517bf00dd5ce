// path_cuts_test.cc — where paths are cut to fit a table (core/
// path_cuts.h): PlanPaths against an exact DP for the fewest paths a
// diamond chain can be cut into, on random graphs and beyond 2^128 paths;
// PlanPathsWeighted's cuts where the estimated frequencies are low; and
// EstimatePlanCost by hand.
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

// The fewest paths any set of cut blocks allowed by `may_cut` (empty: all)
// gives the diamond chain — an exact DP independent of PlanPaths.  Walking
// down the chain, P counts the path prefixes arriving at a block: cutting
// the block ends those P paths and starts 1; a diamond leads each arm's
// prefixes (P, or 1 if the arm is cut, having ended P) to the next head.
// UINT64_MAX if the minimum exceeds `cap`.
uint64_t MinChainPaths(uint32_t n, const std::vector<bool>& may_cut,
                       uint64_t cap) {
  auto can = [&](uint32_t b) { return may_cut.empty() || may_cut[b]; };
  std::map<uint64_t, uint64_t> st{{1, 0}};  // P at h_i -> least paths ended
  auto put = [&](std::map<uint64_t, uint64_t>* m, uint64_t p, uint64_t c) {
    if (p > cap || c > cap) return;  // every completion has > cap paths
    auto it = m->find(p);
    if (it == m->end() || c < it->second) (*m)[p] = c;
  };
  for (uint32_t i = 0;; ++i) {
    const uint32_t h = 2 + 3 * i;
    std::map<uint64_t, uint64_t> nx;
    for (auto [p, c] : st) {
      put(&nx, p, c);
      if (can(h)) put(&nx, 1, c + p);
    }
    st.swap(nx);
    if (i == n) break;
    nx.clear();
    for (auto [p, c] : st)
      for (int ca = 0; ca <= (can(h + 1) ? 1 : 0); ++ca)
        for (int cb = 0; cb <= (can(h + 2) ? 1 : 0); ++cb)
          put(&nx, (ca ? 1 : p) + (cb ? 1 : p),
              c + (ca ? p : 0) + (cb ? p : 0));
    st.swap(nx);
  }
  uint64_t best = UINT64_MAX;
  for (auto [p, c] : st)
    if (c + p <= cap) best = std::min(best, c + p);
  return best;
}

TEST(MinChainPaths, SmallChainsByHand) {
  // One diamond: 2 paths; a cut only adds the path it starts.
  EXPECT_EQ(MinChainPaths(1, {}, 100), 2u);
  // Two diamonds: 4 uncut; no cut helps (cutting h1: 2 + 2).
  EXPECT_EQ(MinChainPaths(2, {}, 100), 4u);
  // Three: 8 uncut; cutting h1 gives 2 + 4 = 6, h2 4 + 2 = 6.
  EXPECT_EQ(MinChainPaths(3, {}, 100), 6u);
  // Nothing cuttable: 2^n.
  EXPECT_EQ(MinChainPaths(5, std::vector<bool>(20, false), 100), 32u);
  EXPECT_EQ(MinChainPaths(7, std::vector<bool>(30, false), 100), UINT64_MAX);
}

TEST(PlanPaths, SeventyDiamonds) {
  const Function f = DiamondChain(kDiamonds);
  const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
  std::vector<bool> heads(nb, false), arms(nb, false), sparse(nb, false);
  for (uint32_t b = 2; b < nb; ++b) {
    const bool head = (b - 2) % 3 == 0;
    heads[b] = head;
    arms[b] = !head;
    sparse[b] = (b - 2) / 3 % 4 == 0;  // only every 4th diamond's blocks
  }
  struct Mask {
    const char* name;
    std::vector<bool> may_cut;
  } masks[] = {{"all", {}},
               {"heads", heads},
               {"arms", arms},
               {"every 4th diamond", sparse},
               {"none", std::vector<bool>(nb, false)}};
  int n_ok = 0, n_fail = 0;
  for (const Mask& m : masks) {
    for (uint64_t limit :
         {uint64_t{10}, uint64_t{100}, uint64_t{1000}, uint64_t{10000},
          uint64_t{1} << 20, uint64_t{1} << 40, kMaxInstrumentedPaths}) {
      SCOPED_TRACE(std::string(m.name) + " limit " + std::to_string(limit));
      // The fewest paths possible, exactly when within reach of the DP.
      const uint64_t least = MinChainPaths(kDiamonds, m.may_cut,
                                           std::min<uint64_t>(limit, 10000));
      PathPlan plan;
      std::string err;
      const bool ok = PlanPaths(f, m.may_cut, limit, &plan, &err);
      if (limit <= 10000) {
        EXPECT_EQ(ok, least <= limit) << err << " least " << least;
      }
      if (!ok) {
        ++n_fail;
        EXPECT_NE(err.find("cannot cut"), std::string::npos) << err;
        continue;
      }
      ++n_ok;
      EXPECT_TRUE(plan.cuts.edges.empty());
      if (least != UINT64_MAX) {
        EXPECT_GE(plan.n_paths, least);
      }
      CheckPlan(f, plan, m.may_cut, limit, limit);
    }
  }
  EXPECT_GT(n_ok, 10);
  EXPECT_GT(n_fail, 7);
}

TEST(PlanPaths, BeyondTwoTo128Paths) {
  // 150 diamonds: 2^150 paths, past the planner's saturating 128-bit counts.
  const Function f = DiamondChain(150);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  EXPECT_EQ(num.total(), Pow2(150));
  Path p;
  ASSERT_TRUE(DecodePath(dag, num, Pow2(150) - 1, &p));
  EXPECT_EQ(EncodePath(num, p), Pow2(150) - 1);
  for (uint64_t limit : {kMaxInstrumentedPaths, uint64_t{5000}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    PathPlan plan;
    ASSERT_TRUE(PlanPaths(f, {}, limit, &plan, &err)) << err;
    CheckPlan(f, plan, {}, limit, limit);
  }
}

TEST(PlanPaths, RandomLargeCfgs) {
  // 60..150 blocks, each with edges to the next three (about 1.84^n paths)
  // and a few random back, parallel, abnormal and fake edges: path counts
  // mostly far beyond 2^63, sampled rather than enumerated.
  std::mt19937_64 rng(0x5eed);
  int over_64_bits = 0, cut = 0;
  for (int g = 0; g < 40; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const uint32_t nb = 60 + static_cast<uint32_t>(rng() % 91);
    auto block = [&] { return 2 + static_cast<uint32_t>(rng() % (nb - 2)); };
    std::vector<E> es{{kEntryBlock, 2, kEdgeFallthru}};
    for (uint32_t u = 2; u < nb; ++u)
      for (uint32_t w : {u + 1, u + 2, u + 3})
        es.push_back({u, w < nb ? w : kExitBlock,
                      rng() % 20 == 0 ? kEdgeAbnormal : kEdgeTrue});
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
      const uint32_t u = block(), w = block();
      es.push_back({std::max(u, w), std::min(u, w), kEdgeFalse});  // a loop
    }
    es.push_back(es[1 + rng() % (es.size() - 1)]);  // parallel
    es.push_back({kEntryBlock, block(), kEdgeFake});
    es.push_back({block(), kExitBlock, kEdgeFake});
    std::stable_sort(es.begin(), es.end(),
                     [](const E& a, const E& b) { return a.src < b.src; });
    const Function f = Make(nb, es);
    const Checked all = CheckDag(f, BackEdgeCuts(f), g);
    ASSERT_TRUE(all.built);
    over_64_bits += all.total > Z(kMaxInstrumentedPaths);
    std::vector<bool> mask;
    if (g % 3 == 0) {
      mask.resize(nb);
      for (uint32_t b = 0; b < nb; ++b) mask[b] = rng() % 2;
    }
    for (uint64_t limit : {kMaxInstrumentedPaths, uint64_t{1} << 32,
                           uint64_t{4} * f.edges.size()}) {
      SCOPED_TRACE("limit " + std::to_string(limit));
      PathPlan plan;
      std::string err;
      const bool ok = PlanPaths(f, mask, limit, &plan, &err);
      if (mask.empty()) {
        ASSERT_TRUE(ok) << err;
      }
      if (!ok) continue;
      cut += !plan.cuts.blocks.empty();
      if (all.total <= Z(limit)) {
        EXPECT_TRUE(plan.cuts.blocks.empty());
      }
      CheckPlan(f, plan, mask, limit, g + limit);
    }
  }
  EXPECT_GT(over_64_bits, 10);
  EXPECT_GT(cut, 30);
}

// ---------------------------------------------------------------------------
// PlanPathsWeighted: cuts where the estimated frequencies are low.

// Twenty diamonds (2^20 paths) whose false arms are cold: edges into the
// false arm weigh 1, into the true arm 999, into a head 1000.  Cutting a
// cold arm costs one count per (rare) entry; cutting a head one per
// execution.  Under 4096 paths the weighted plan cuts cold arms only;
// PlanPaths (unweighted) cuts heads.
TEST(PlanPathsWeighted, CutsColdArmsNotHotHeads) {
  const uint32_t n = 20;
  const Function f = DiamondChain(n);
  std::vector<uint64_t> w(f.edges.size());
  std::vector<uint64_t> freq(f.blocks.size(), 0);
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    const bool cold_arm = e.dst >= 2 && (e.dst - 2) % 3 == 2;
    const bool hot_arm = e.dst >= 2 && (e.dst - 2) % 3 == 1;
    w[i] = cold_arm ? 1 : hot_arm ? 999 : e.src == kEntryBlock ? 1000
           : e.dst == kExitBlock ? 1000 : e.src % 3 == 0 ? 999 : 1;
    freq[e.dst] += w[i];
  }
  for (uint32_t h = 5; h < 2 + 3 * n; h += 3) ASSERT_EQ(freq[h], 1000u) << h;
  PathPlan weighted, plain;
  std::string err;
  ASSERT_TRUE(PlanPathsWeighted(f, {}, w, 4096, &weighted, &err)) << err;
  ASSERT_TRUE(PlanPaths(f, {}, 4096, &plain, &err)) << err;
  CheckPlan(f, weighted, {}, 4096, 1);
  uint64_t cost_weighted = 0, cost_plain = 0;
  for (uint32_t b : weighted.cuts.blocks) {
    EXPECT_EQ((b - 2) % 3, 2u) << "block " << b << " is not a cold arm";
    cost_weighted += freq[b];
  }
  for (uint32_t b : plain.cuts.blocks) cost_plain += freq[b];
  EXPECT_FALSE(weighted.cuts.blocks.empty());
  EXPECT_LT(cost_weighted, 40u);
  EXPECT_GE(cost_plain, 1000u);
  // Uniform weights: the fewest cuts that do it -- one head in the middle
  // leaves 2^10 + 2^10 paths.
  ASSERT_TRUE(PlanPathsWeighted(f, {}, {}, 4096, &weighted, &err)) << err;
  EXPECT_EQ(weighted.cuts.blocks.size(), 1u);
  EXPECT_EQ(weighted.n_paths, 2048u);
  // Within the limit already: nothing is cut.
  ASSERT_TRUE(PlanPathsWeighted(f, {}, w, 1u << 20, &weighted, &err)) << err;
  EXPECT_TRUE(weighted.cuts.blocks.empty());
  EXPECT_EQ(weighted.n_paths, 1u << 20);
}

// The same graphs, masks and limits as PlanPaths: it succeeds in the same
// cases (the seventy diamonds, random graphs) or more, and every plan is
// valid.
TEST(PlanPathsWeighted, SucceedsWherePlanPathsDoes) {
  std::mt19937_64 rng(0x3e1547);
  int ok_both = 0, with_cuts = 0, better = 0;
  auto check = [&](const Function& f, const std::vector<bool>& mask,
                   uint64_t limit, uint64_t seed) {
    std::vector<uint64_t> w(f.edges.size());
    for (uint64_t& x : w) x = rng() % 4 == 0 ? 0 : rng() % 1000;
    PathPlan a, b;
    std::string ea, eb;
    const bool pa = PlanPaths(f, mask, limit, &a, &ea);
    const bool pb = PlanPathsWeighted(f, mask, w, limit, &b, &eb);
    // Never worse: it falls back on PlanPaths when stuck (and sometimes
    // succeeds where PlanPaths' coarse cuts do not).
    if (pa) {
      EXPECT_TRUE(pb) << eb;
    }
    better += pb && !pa;
    if (!pb) return;
    ++ok_both;
    with_cuts += !b.cuts.blocks.empty();
    CheckPlan(f, b, mask, limit, seed);
  };
  const Function chain = DiamondChain(kDiamonds);
  for (uint64_t limit : {uint64_t{100}, uint64_t{10000}, uint64_t{1} << 40,
                         kMaxInstrumentedPaths}) {
    SCOPED_TRACE("chain, limit " + std::to_string(limit));
    check(chain, {}, limit, limit);
  }
  for (int g = 0; g < 300; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, g % 2 == 0);
    std::vector<bool> mask;
    if (rng() % 2) {
      mask.resize(f.blocks.size());
      for (size_t b = 0; b < mask.size(); ++b) mask[b] = rng() % 3 != 0;
    }
    for (uint64_t limit : {uint64_t{1} + rng() % 8, CountPathEdges(f)})
      check(f, mask, limit, g * 7 + limit);
  }
  EXPECT_GT(ok_both, 300);
  EXPECT_GT(with_cuts, 80);
  EXPECT_GT(better, 0);
}

// EstimatePlanCost by hand.  A diamond ENTRY->2, 2->3 | 2->4, ->5, 5->EXIT
// weighing 4, 3, 1, 3, 1, 4.  Spanning tree (heaviest first, then index):
// ENTRY->2, 5->EXIT, 2->3, 2->4; chords 3->5 and 4->5, whose sources one
// prefix each reaches: the register is a constant there, no cost.  The
// return: two prefixes reach 5, an indexed count, 2 * 4 = 8.  Cutting 5:
// its cut count indexed (2 * 4), then a return one prefix reaches (4): 12.
TEST(EstimatePlanCost, Diamond) {
  const Function f = DiamondChain(1);
  const std::vector<uint64_t> w{4, 3, 1, 3, 1, 4};
  EXPECT_EQ(EstimatePlanCost(f, PathCuts{}, w), 8.0L);
  EXPECT_EQ(EstimatePlanCost(f, PathCuts{{}, {5}}, w), 12.0L);
  // A chord out of a block two prefixes reach costs its weight: cut 3 and
  // nothing else changes but the count at 3 (one prefix: 3) and the path
  // from 3 (ENTRY->2->3 and the start at 3 both reach 5: still indexed).
  EXPECT_EQ(EstimatePlanCost(f, PathCuts{{}, {3}}, w), 11.0L);
  PathCuts bad{{}, {7}};
  EXPECT_EQ(EstimatePlanCost(f, bad, w), HUGE_VALL);
}

// A loop after a chain of k diamonds, its body a chain of m diamonds:
// ENTRY -> k diamonds -> H; H -> EXIT or -> m diamonds -> L; L -> H (the
// back edge).  Blocks: diamond heads at 2 + 3i (arms +1, +2), H = 2 + 3k,
// the body's heads from H + 1, L = H + 1 + 3m.
Function LoopAfterDiamonds(uint32_t k, uint32_t m) {
  std::vector<E> es{{0, 2, kEdgeFallthru}};
  auto diamond = [&](uint32_t h) {
    es.push_back({h, h + 1, kEdgeTrue});
    es.push_back({h, h + 2, kEdgeFalse});
    es.push_back({h + 1, h + 3, kEdgeFallthru});
    es.push_back({h + 2, h + 3, kEdgeFallthru});
  };
  for (uint32_t i = 0; i < k; ++i) diamond(2 + 3 * i);
  const uint32_t h = 2 + 3 * k, l = h + 1 + 3 * m;
  es.push_back({h, h + 1, kEdgeTrue});
  es.push_back({h, kExitBlock, kEdgeFalse});
  for (uint32_t i = 0; i < m; ++i) diamond(h + 1 + 3 * i);
  es.push_back({l, h, kEdgeFallthru});
  return Make(l + 1, es);
}

// The loop runs 100 times per call.  Its header H is entered 101 times, 100
// of them by the back edge, whose path ends there anyway: cutting H costs
// its one entry from outside and separates the 2^k prefixes from the 2^m
// iterations (2^k + 2^m + 1 paths).  Counting all 101 entries (the former
// cost), cuts in the once-per-call prefix looked cheaper, and the greedy's
// first cuts were not all needed in the end.
TEST(PlanPathsWeighted, CutsALoopHeaderAtTheCostOfItsEntries) {
  const uint32_t k = 8, m = 8;
  const Function f = LoopAfterDiamonds(k, m);
  const uint32_t h = 2 + 3 * k, l = h + 1 + 3 * m;
  std::vector<uint64_t> w(f.edges.size());
  auto arm = [&](uint32_t b) {
    return (b >= 2 && b < h && (b - 2) % 3 != 0) ||
           (b > h && b < l && (b - h - 1) % 3 != 0);
  };
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    const bool half = arm(e.src) || arm(e.dst);
    if (e.src >= h && e.dst != kExitBlock)
      w[i] = half ? 50 : 100;  // in the loop
    else
      w[i] = e.dst == kExitBlock ? 1 : half ? 1 : 2;  // once per call
  }
  PathPlan plan;
  std::string err;
  ASSERT_TRUE(PlanPathsWeighted(f, {}, w, 4096, &plan, &err)) << err;
  CheckPlan(f, plan, {}, 4096, 7);
  EXPECT_EQ(plan.cuts.blocks, U{h});
  EXPECT_TRUE(plan.cuts.edges.empty());  // the back edge ends at H's cut
  EXPECT_EQ(plan.n_paths, (1u << k) + (1u << m) + 1);
}

}  // namespace
}  // namespace ballarus
