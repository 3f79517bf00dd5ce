// path_plan_steps_test.cc — the GCC-free parts of path planning's steps
// (core/path_plan_steps.cc) on hand-made graphs.  Oracles: the register
// values are checked against every prefix enumerated over the DAG's edge
// list; the paths a pre-count or an entry cut lands on are checked by
// decoding them with the numbering (DecodePath) into the DAG edges the
// path must take, written out by hand.
#include "core/path_plan_steps.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using U64 = std::vector<uint64_t>;
using U32 = std::vector<uint32_t>;

struct Numbered {
  PathDag dag;
  PathIncrements inc;
};

Numbered NumberFor(const Function& f, const PathCuts& cuts,
                   const U64& weights = {}) {
  Numbered n;
  std::string err;
  EXPECT_TRUE(BuildPathDag(f, cuts, &n.dag, &err)) << err;
  EXPECT_TRUE(PlaceIncrements(f, n.dag, weights, &n.inc, &err)) << err;
  return n;
}

// Every prefix's register (sum of increments from ENTRY) per vertex, by
// recursion over the DAG's edge list.
std::vector<std::set<uint64_t>> EnumeratePrefixSums(const Numbered& n) {
  std::vector<std::set<uint64_t>> sums(n.dag.n_vertices);
  std::function<void(uint32_t, uint64_t)> walk = [&](uint32_t v,
                                                     uint64_t r) {
    sums[v].insert(r);
    for (size_t d = 0; d < n.dag.edges.size(); ++d)
      if (n.dag.edges[d].src == v) walk(n.dag.edges[d].dst, r + n.inc.inc[d]);
  };
  walk(kEntryBlock, 0);
  return sums;
}

// The DAG edges of path `id`.
U32 Decode(const Numbered& n, uint64_t id) {
  std::vector<uint32_t> edges;
  EXPECT_TRUE(DecodePath(n.dag, NumberPaths(n.dag),
                         mpz_class(static_cast<unsigned long>(id)), &edges));
  return edges;
}

// Two diamonds in a row: 2 -> {3,4} -> 5 -> {6,7} -> 8 -> EXIT.
Function TwoDiamonds() {
  return Make(9, {{0, 2, 0}, {2, 3, 0}, {2, 4, 0}, {3, 5, 0}, {4, 5, 0},
                  {5, 6, 0}, {5, 7, 0}, {6, 8, 0}, {7, 8, 0}, {8, 1, 0}});
}

TEST(PrefixRegisterSets, MatchEveryPrefixWhereFewReach) {
  const Function f = TwoDiamonds();
  const Numbered n = NumberFor(f, {});
  const std::vector<std::set<uint64_t>> oracle = EnumeratePrefixSums(n);
  for (size_t max : {1, 2, 4}) {
    const std::vector<U64> sets = PrefixRegisterSets(n.dag, n.inc, max);
    ASSERT_EQ(sets.size(), n.dag.n_vertices);
    for (uint32_t v = 0; v < n.dag.n_vertices; ++v) {
      const U64 want(oracle[v].begin(), oracle[v].end());
      if (want.size() <= max)
        EXPECT_EQ(sets[v], want) << "vertex " << v << " max " << max;
      else
        EXPECT_TRUE(sets[v].empty()) << "vertex " << v << " max " << max;
    }
  }
  // Blocks 5 and 6 are reached by 2 prefixes, 8 and EXIT by 4.
  EXPECT_EQ(oracle[5].size(), 2u);
  EXPECT_EQ(oracle[8].size(), 4u);
  EXPECT_EQ(oracle[kExitBlock].size(), 4u);
}

TEST(PrefixRegisterSets, ManyBeforeStaysMany) {
  // 5 is reached by 2 prefixes; with max 1 so are all vertices after it,
  // even 6, which one edge from 5 reaches.
  const Function f = TwoDiamonds();
  const Numbered n = NumberFor(f, {});
  const std::vector<U64> sets = PrefixRegisterSets(n.dag, n.inc, 1);
  EXPECT_EQ(sets[2].size(), 1u);
  EXPECT_EQ(sets[3].size(), 1u);
  EXPECT_TRUE(sets[5].empty());
  EXPECT_TRUE(sets[6].empty());
  EXPECT_TRUE(sets[8].empty());
}

TEST(PrefixRegisters, KnownWhereOnePrefixReaches) {
  const std::vector<U64> sets = {{0}, {}, {7}, {3, 9}, {}};
  EXPECT_EQ(PrefixRegisters(sets), (U64{0, 0, 7, 0, 0}));
}

TEST(IncrementsFitSigned, SumOfMagnitudesBelow2To62) {
  PathIncrements inc;
  inc.inc = {1, uint64_t{0} - 5, 0, uint64_t{1} << 40};
  EXPECT_TRUE(IncrementsFitSigned(inc));
  inc.inc = {uint64_t{1} << 61, uint64_t{1} << 61};  // sum 2^62
  EXPECT_FALSE(IncrementsFitSigned(inc));
  inc.inc = {uint64_t{1} << 61, uint64_t{0} - ((uint64_t{1} << 61) - 1)};
  EXPECT_TRUE(IncrementsFitSigned(inc));  // 2^62 - 1
  inc.inc = {uint64_t{1} << 63};  // magnitude 2^63
  EXPECT_FALSE(IncrementsFitSigned(inc));
  inc.inc = {};
  EXPECT_TRUE(IncrementsFitSigned(inc));
}

// A loop: 2 preheader, 3 header, 4 body, back edge 4->3, exit 3->5.
// Edges: e0 0->2, e1 2->3 (entry), e2 3->4, e3 4->3 (back), e4 3->5,
// e5 5->1.
Function SimpleLoop(uint32_t entry_flags = 0) {
  return Make(6, {{0, 2, 0}, {2, 3, entry_flags}, {3, 4, 0}, {4, 3, 0},
                  {3, 5, 0}, {5, 1, 0}});
}

TEST(WeighLoopEntries, SumsEntriesAndChecksEachEntry) {
  const Function f = SimpleLoop();
  const std::vector<bool> not_cut(f.edges.size(), false);
  const std::vector<bool> code(f.edges.size(), true);
  LoopEntryWeights w =
      WeighLoopEntries(f, {1}, 3, {10, 4, 40, 36, 4, 4}, not_cut, code);
  EXPECT_TRUE(w.cuttable);
  EXPECT_EQ(w.entries, 4u);
  EXPECT_EQ(w.back, 36u);
  // Missing weights count 1.
  w = WeighLoopEntries(f, {1}, 3, {}, not_cut, code);
  EXPECT_EQ(w.entries, 1u);
  EXPECT_EQ(w.back, 1u);
  // An entry cut already, without GCC edge, fake or re-entry: not cuttable.
  std::vector<bool> cut = not_cut;
  cut[1] = true;
  EXPECT_FALSE(WeighLoopEntries(f, {1}, 3, {}, cut, code).cuttable);
  std::vector<bool> no_code = code;
  no_code[1] = false;
  EXPECT_FALSE(WeighLoopEntries(f, {1}, 3, {}, not_cut, no_code).cuttable);
  EXPECT_FALSE(WeighLoopEntries(f, {1}, 3, {}, not_cut, {}).cuttable);
  EXPECT_FALSE(WeighLoopEntries(SimpleLoop(kEdgeFake), {1}, 3, {}, not_cut,
                                code)
                   .cuttable);
  EXPECT_FALSE(WeighLoopEntries(SimpleLoop(kEdgeReentry), {1}, 3, {},
                                not_cut, code)
                   .cuttable);
}

// A loop whose entry and back edges are cut, with calls that may not
// return in the preheader (2) and in the body (4):
//   e0 0->2, e1 2->3 (entry, cut), e2 3->4, e3 4->1 (fake), e4 4->3 (back,
//   cut), e5 3->5, e6 5->1, e7 2->1 (fake).
Function CallingLoop() {
  return Make(6, {{0, 2, 0}, {2, 3, 0}, {3, 4, 0}, {4, 1, kEdgeFake},
                  {4, 3, 0}, {3, 5, 0}, {5, 1, 0}, {2, 1, kEdgeFake}});
}
PathCuts CallingLoopCuts() {
  PathCuts c;
  c.edges = {1, 4};
  return c;
}

TEST(FirstPreCounts, PerOriginTheFirstOnItsPrefix) {
  const Function f = CallingLoop();
  const Numbered n = NumberFor(f, CallingLoopCuts());
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  const U64 reg = PrefixRegisters(PrefixRegisterSets(n.dag, n.inc, 1));
  const uint64_t a2 = n.inc.inc[n.dag.dag_edge_of_cfg[7]];
  const uint64_t a4 = n.inc.inc[n.dag.dag_edge_of_cfg[3]];
  const std::vector<PreCountSite> sites = {{0, 2, a2, std::nullopt},
                                           {1, 4, a4, uint64_t{77}}};
  const std::vector<bool> no_reentry(6, false);
  const auto first = FirstPreCounts(f, n.dag, reg, prefixes,
                                    {5, 5, 20, 0, 15, 5, 5, 0}, no_reentry, 6,
                                    sites);
  ASSERT_EQ(first.size(), 2u);
  // From the entry: the pre-count in 2, ENTRY->2 then its fake edge.
  const FirstPreCount& e = first.at(kFromEntry);
  EXPECT_EQ(e.index, 0u);
  EXPECT_EQ(e.block, 2u);
  EXPECT_EQ(Decode(n, e.path),
            (U32{static_cast<uint32_t>(n.dag.dag_edge_of_cfg[0]),
                 static_cast<uint32_t>(n.dag.dag_edge_of_cfg[7])}));
  EXPECT_EQ(e.estimate, 5u);  // no guess: the weight of its in-edges
  // From the loop header 3 (its kStart): 3->4 then 4's fake edge.
  const FirstPreCount& l = first.at(3);
  EXPECT_EQ(l.index, 1u);
  EXPECT_EQ(l.block, 4u);
  EXPECT_EQ(Decode(n, l.path),
            (U32{static_cast<uint32_t>(n.dag.start_edge[3]),
                 static_cast<uint32_t>(n.dag.dag_edge_of_cfg[2]),
                 static_cast<uint32_t>(n.dag.dag_edge_of_cfg[3])}));
  EXPECT_EQ(l.estimate, 77u);  // GCC's guess
}

TEST(FirstPreCounts, NotAfterAnotherPreCountNorAtReentries) {
  // A chain 2 -> 3 -> 4 with calls in 3 and 4: 4's pre-count follows 3's.
  const Function f = Make(5, {{0, 2, 0}, {2, 3, 0}, {3, 4, 0}, {4, 1, 0},
                              {3, 1, kEdgeFake}, {4, 1, kEdgeFake}});
  const Numbered n = NumberFor(f, {});
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  const U64 reg = PrefixRegisters(PrefixRegisterSets(n.dag, n.inc, 1));
  const std::vector<PreCountSite> sites = {{0, 3, 0, std::nullopt},
                                           {1, 4, 0, std::nullopt}};
  std::vector<bool> reentry(5, false);
  auto first = FirstPreCounts(f, n.dag, reg, prefixes, {}, reentry, 5, sites);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.at(kFromEntry).block, 3u);
  // 3 holds a re-entry call: it is no candidate, and 4 still follows it.
  reentry[3] = true;
  first = FirstPreCounts(f, n.dag, reg, prefixes, {}, reentry, 5, sites);
  EXPECT_TRUE(first.empty());
}

TEST(FirstPreCounts, HottestOfParallelPreCounts) {
  // 2 -> {3, 4} -> 5, a call in 3 and in 4: each reached by one prefix
  // from the entry; the heavier in-edge wins.
  const Function f =
      Make(6, {{0, 2, 0}, {2, 3, 0}, {2, 4, 0}, {3, 5, 0}, {4, 5, 0},
               {5, 1, 0}, {3, 1, kEdgeFake}, {4, 1, kEdgeFake}});
  const Numbered n = NumberFor(f, {});
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  const U64 reg = PrefixRegisters(PrefixRegisterSets(n.dag, n.inc, 1));
  const std::vector<PreCountSite> sites = {{0, 3, 0, std::nullopt},
                                           {1, 4, 0, std::nullopt}};
  const std::vector<bool> no_reentry(6, false);
  auto first = FirstPreCounts(f, n.dag, reg, prefixes,
                              {100, 10, 90, 10, 90, 100, 0, 0}, no_reentry, 6,
                              sites);
  EXPECT_EQ(first.at(kFromEntry).block, 4u);
  EXPECT_EQ(first.at(kFromEntry).estimate, 90u);
  first = FirstPreCounts(f, n.dag, reg, prefixes,
                         {100, 90, 10, 90, 10, 100, 0, 0}, no_reentry, 6,
                         sites);
  EXPECT_EQ(first.at(kFromEntry).block, 3u);
  // Re-entered from ENTRY (a fake ENTRY edge): the entry is no origin.
  Function g = f;
  g.edges.push_back({});
  g.edges.back().src = 0;
  g.edges.back().dst = 5;
  g.edges.back().flags = kEdgeFake;
  const Numbered m = NumberFor(g, {});
  const std::vector<uint8_t> gp = CountPrefixes(m.dag);
  const U64 gr = PrefixRegisters(PrefixRegisterSets(m.dag, m.inc, 1));
  EXPECT_TRUE(
      FirstPreCounts(g, m.dag, gr, gp, {}, no_reentry, 6, sites).empty());
}

TEST(PrecountsMadeBefore, FollowsOnePrefixPaths) {
  const Function f = CallingLoop();
  const Numbered n = NumberFor(f, CallingLoopCuts());
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  // The pre-counts of 2 (fake edge e7) and 4 (e3).
  std::vector<bool> made =
      PrecountsMadeBefore(f, n.dag, prefixes, {3, 7}, {}, 6);
  EXPECT_TRUE(made[2]);
  EXPECT_FALSE(made[3]);  // the loop's paths start afresh at its header
  EXPECT_TRUE(made[4]);
  made = PrecountsMadeBefore(f, n.dag, prefixes, {3, 7}, {2}, 6);
  EXPECT_FALSE(made[2]);
  EXPECT_TRUE(made[4]);
}

TEST(ChooseBalances, PreCountOrEntryCutEndPerStart) {
  const Function f = CallingLoop();
  const Numbered n = NumberFor(f, CallingLoopCuts());
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  const U64 reg = PrefixRegisters(PrefixRegisterSets(n.dag, n.inc, 1));
  const uint64_t a4 = n.inc.inc[n.dag.dag_edge_of_cfg[3]];
  const std::map<uint32_t, FirstPreCount> first = {
      {kFromEntry, {0, 2, 5, 10}}, {3, {1, 4, reg[4] + a4, 50}}};
  // The path ENTRY->2 ending at the entry cut 2->3.
  const uint64_t end_path = reg[2] + n.inc.inc[n.dag.dag_edge_of_cfg[1]];
  EXPECT_EQ(Decode(n, end_path),
            (U32{static_cast<uint32_t>(n.dag.dag_edge_of_cfg[0]),
                 static_cast<uint32_t>(n.dag.dag_edge_of_cfg[1])}));
  const uint64_t n_paths = n.inc.n_paths;
  // The pre-count is hotter than the entry cut: it goes; the entry's own
  // is left to the entry balance.
  std::map<uint32_t, EntryCutEnd> ends = {{3, {9, end_path, 20, 2}}};
  auto c = ChooseBalances(first, ends, f, n.dag, prefixes, {3}, 6, n_paths);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->pre_counts.size(), 1u);
  EXPECT_EQ(c->pre_counts.count(3), 1u);
  EXPECT_TRUE(c->ends.empty());
  ASSERT_EQ(c->balanced.size(), 1u);
  EXPECT_EQ(c->balanced[0].path, reg[4] + a4);
  EXPECT_EQ(c->balanced[0].start, 3u);
  // The entry cut is hotter: its end goes instead.
  ends[3].weight = 80;
  c = ChooseBalances(first, ends, f, n.dag, prefixes, {3}, 6, n_paths);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->pre_counts.empty());
  ASSERT_EQ(c->ends.size(), 1u);
  EXPECT_EQ(c->ends.at(3).index, 9u);
  EXPECT_EQ(c->balanced[0].path, end_path);
  // ... unless a pre-count still made lies on its path (2's): nothing.
  c = ChooseBalances(first, ends, f, n.dag, prefixes, {3, 7}, 6, n_paths);
  EXPECT_FALSE(c.has_value());
}

TEST(ChooseBalances, NothingOnAPathOutOfRangeOrTwice) {
  const Function f = CallingLoop();
  const Numbered n = NumberFor(f, CallingLoopCuts());
  const std::vector<uint8_t> prefixes = CountPrefixes(n.dag);
  std::map<uint32_t, FirstPreCount> first = {{3, {1, 4, 2, 50}},
                                             {4, {2, 4, 2, 50}}};
  EXPECT_FALSE(
      ChooseBalances(first, {}, f, n.dag, prefixes, {}, 6, 100).has_value());
  first.erase(4);
  EXPECT_TRUE(
      ChooseBalances(first, {}, f, n.dag, prefixes, {}, 6, 100).has_value());
  EXPECT_FALSE(
      ChooseBalances(first, {}, f, n.dag, prefixes, {}, 6, 2).has_value());
  EXPECT_FALSE(ChooseBalances({}, {}, f, n.dag, prefixes, {}, 6, 100)
                   .has_value());
}

}  // namespace
}  // namespace ballarus
