// spanning_tree_test.cc — maximum spanning tree / chords (core/spanning_tree.cc)
// on hand-made graphs, against brute force, and with the flow solver.
#include "core/spanning_tree.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "core/flow.h"
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

// Undirected components of the closed graph, computed independently.
size_t Components(const Function& f) {
  const size_t nb = f.blocks.size();
  std::vector<size_t> comp(nb, SIZE_MAX);
  std::vector<std::vector<uint32_t>> adj(nb);
  for (const Edge& e : f.edges) {
    if (e.flags & kEdgeIgnored) continue;
    adj[e.src].push_back(e.dst);
    adj[e.dst].push_back(e.src);
  }
  if (nb > 1) adj[0].push_back(1), adj[1].push_back(0);
  size_t n = 0;
  for (size_t s = 0; s < nb; ++s) {
    if (comp[s] != SIZE_MAX) continue;
    std::vector<size_t> stack{s};
    comp[s] = n;
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      for (uint32_t w : adj[v])
        if (comp[w] == SIZE_MAX) comp[w] = n, stack.push_back(w);
    }
    ++n;
  }
  return n;
}

size_t UsedEdges(const Function& f) {
  size_t n = 1;  // the virtual edge
  for (const Edge& e : f.edges) n += !(e.flags & kEdgeIgnored);
  return n;
}

void ExpectChordFormula(const Function& f, const SpanningTree& t) {
  const size_t comps = Components(f);
  EXPECT_EQ(t.components, comps);
  EXPECT_EQ(t.chords.size() + t.uncountable_chords.size(),
            UsedEdges(f) - f.blocks.size() + comps);
  size_t tree = 0;
  for (size_t i = 0; i < f.edges.size(); ++i) tree += t.in_tree[i];
  // Tree edges + the virtual edge = |V| - components.
  EXPECT_EQ(tree + 1, f.blocks.size() - comps);
  // Every used edge is exactly one of: tree edge, chord, uncountable chord.
  std::vector<int> seen(f.edges.size(), 0);
  for (size_t i = 0; i < f.edges.size(); ++i) seen[i] += t.in_tree[i];
  for (size_t c : t.chords) {
    ++seen[c];
    EXPECT_FALSE(IsUncountableEdge(f.edges[c])) << c;
  }
  for (size_t c : t.uncountable_chords) {
    ++seen[c];
    EXPECT_TRUE(IsUncountableEdge(f.edges[c])) << c;
  }
  for (size_t i = 0; i < f.edges.size(); ++i)
    EXPECT_EQ(seen[i], (f.edges[i].flags & kEdgeIgnored) ? 0 : 1) << i;
}

using V = std::vector<size_t>;

TEST(SpanningTree, Diamond) {
  // 0 -> 2; 2 -> 3 | 4; 3,4 -> 5; 5 -> 1.  Heavy then-branch.
  const Function f = Make(6, {{0, 2, kEdgeFallthru},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 5, kEdgeFallthru},
                              {4, 5, kEdgeFallthru},
                              {5, 1, kEdgeFallthru}});
  const SpanningTree t = MaximumSpanningTree(f, {10, 7, 3, 7, 3, 10});
  // Order: 0->2, 5->1, 2->3, 3->5 (closes 2-3-5-1-0-2: chord), 2->4,
  // 4->5 (chord).
  EXPECT_EQ(t.chords, (V{3, 4}));
  EXPECT_TRUE(t.uncountable_chords.empty());
  EXPECT_EQ(t.in_tree, (std::vector<bool>{true, true, true, false, false,
                                          true}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, DiamondCountersOnLightSide) {
  // Entry/exit edges light: the counters go to the cheap edges.
  const Function f = Make(6, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 5, 0},
                              {4, 5, 0},
                              {5, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {1, 9, 1, 9, 1, 1});
  // 2->3, 3->5, then ties of weight 1 by index: 0->2, 2->4, 4->5 (chord),
  // 5->1 (chord).
  EXPECT_EQ(t.chords, (V{4, 5}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, WhileLoop) {
  // 0 -> 2 (header); 2 -> 3 (body) | 4 (exit); 3 -> 2; 4 -> 1.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse},
                              {3, 2, 0},
                              {4, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {1, 9, 1, 9, 1});
  // 2->3 tree, 3->2 chord (the back edge), then 0->2, 2->4 tree, 4->1 chord.
  EXPECT_EQ(t.chords, (V{3, 4}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, NestedLoops) {
  // do { do { } while (c1) /*4->3*/; } while (c2) /*5->2*/;
  // 0->2, 2->3, 3->4, 4->3, 4->5, 5->2, 5->6, 6->1.
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, 0},
                              {4, 3, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 2, kEdgeTrue},
                              {5, 6, kEdgeFalse},
                              {6, 1, 0}});
  const SpanningTree t =
      MaximumSpanningTree(f, {1, 10, 100, 90, 10, 9, 1, 1});
  // 3->4 (100), 4->3 (90: chord, inner back edge), 2->3, 4->5 (10), 5->2
  // (9: chord, outer back edge), then weight-1 ties: 0->2, 5->6, 6->1
  // (chord).
  EXPECT_EQ(t.chords, (V{3, 5, 7}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, FakeAndAbnormalEdgesGoIntoTheTreeFirst) {
  // 2 calls a function that may not return (fake 2->1) and may jump
  // abnormally (2->4, e.g. a nonlocal goto); 4 returns to 1.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeFallthru},
                              {2, 1, kEdgeFake},
                              {2, 4, kEdgeAbnormal},
                              {3, 1, 0},
                              {4, 1, 0}});
  // Heavy weights on the countable edges cannot displace the uncountable.
  const SpanningTree t = MaximumSpanningTree(f, {100, 100, 1, 1, 100, 100});
  EXPECT_TRUE(t.in_tree[2]);
  EXPECT_TRUE(t.in_tree[3]);
  // After virtual, 2->1, 2->4: {0,1,2,4}; 0->2 chord, 2->3 tree, 3->1
  // chord, 4->1 chord.
  EXPECT_EQ(t.chords, (V{0, 4, 5}));
  EXPECT_TRUE(t.uncountable_chords.empty());
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, CycleOfFakeEdgesIsReported) {
  // Fake ENTRY->3 (abnormal entry) and fake 3->EXIT close a cycle with the
  // virtual edge made of uncounted edges only.
  const Function f = Make(4, {{0, 2, 0},
                              {2, 3, 0},
                              {0, 3, kEdgeFake},
                              {3, 1, kEdgeFake},
                              {2, 1, kEdgeIgnored}});
  const SpanningTree t = MaximumSpanningTree(f, {5, 5, 0, 0, 0});
  EXPECT_TRUE(t.in_tree[2]);
  EXPECT_FALSE(t.in_tree[3]);
  EXPECT_FALSE(t.in_tree[4]);  // ignored: neither tree nor chord
  EXPECT_EQ(t.uncountable_chords, (V{3}));
  // 0->2 tree, 2->3 chord.
  EXPECT_EQ(t.chords, (V{1}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, SelfLoopIsAlwaysAChord) {
  const Function f = Make(3, {{0, 2, 0}, {2, 2, kEdgeTrue}, {2, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {1, 1000, 1});
  EXPECT_EQ(t.chords, (V{1, 2}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, CriticalEdgesWinTies) {
  // 2 -> 3 | 4, 3 -> 4: edge 2->4 is critical.  Equal weights.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse | kEdgeCritical},
                              {3, 4, 0},
                              {4, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {1, 1, 1, 1, 1});
  EXPECT_TRUE(t.in_tree[2]);  // the critical edge, in the tree
  EXPECT_EQ(t.chords, (V{3, 4}));
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, DisconnectedBlockAndEmptyFunction) {
  // Block 3 has no edges at all: a second component.
  const Function f = Make(4, {{0, 2, 0}, {2, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {1, 1});
  EXPECT_EQ(t.components, 2u);
  EXPECT_EQ(t.chords, (V{1}));
  ExpectChordFormula(f, t);

  const Function empty = Make(2, {});
  const SpanningTree te = MaximumSpanningTree(empty, {});
  EXPECT_EQ(te.components, 1u);
  EXPECT_TRUE(te.chords.empty());
  EXPECT_EQ(MaximumSpanningTree(Function{}, {}).components, 0u);
}

// ---------------------------------------------------------------------------
// Random graphs.

// A random CFG: a spine 0 -> 2 -> ... -> n-1 -> 1 keeps everything reachable
// and co-reachable; extra edges anywhere (forward, backward, self loops,
// parallel), some fake/EH/ignored.
Function RandomCfg(std::mt19937& rng, uint32_t n_blocks, size_t n_extra,
                   bool uncounted) {
  std::vector<E> es;
  uint32_t prev = 0;
  for (uint32_t b = 2; b < n_blocks; ++b) {
    es.push_back({prev, b, kEdgeFallthru});
    prev = b;
  }
  es.push_back({prev, 1, 0});
  std::uniform_int_distribution<uint32_t> any(0, n_blocks - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  for (size_t k = 0; k < n_extra; ++k) {
    uint32_t s = any(rng), d = any(rng);
    if (s == kExitBlock) s = kEntryBlock;  // nothing leaves EXIT
    if (d == kEntryBlock) d = kExitBlock;  // nothing enters ENTRY
    uint32_t flags = 0;
    if (uncounted) {
      const int k2 = kind(rng);
      if (k2 == 0) flags = kEdgeFake;
      if (k2 == 1) flags = kEdgeAbnormal;
      if (k2 == 2) flags = kEdgeIgnored;
    }
    if (kind(rng) == 3) flags |= kEdgeCritical;
    es.push_back({s, d, flags});
  }
  return Make(n_blocks, es);
}

std::vector<uint64_t> RandomWeights(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<uint64_t> w(0, 6);  // many ties
  std::vector<uint64_t> ws(n);
  for (auto& x : ws) x = w(rng);
  return ws;
}

// Brute force: maximum total weight over all spanning trees containing the
// virtual edge (graphs without uncounted edges).
uint64_t BruteForceMaxTree(const Function& f,
                           const std::vector<uint64_t>& w) {
  const size_t ne = f.edges.size();
  const size_t need = f.blocks.size() - 2;  // tree edges besides virtual
  uint64_t best = 0;
  bool found = false;
  for (uint32_t mask = 0; mask < (1u << ne); ++mask) {
    if (static_cast<size_t>(__builtin_popcount(mask)) != need) continue;
    std::vector<size_t> comp(f.blocks.size());
    std::iota(comp.begin(), comp.end(), size_t{0});
    auto find = [&](size_t x) {
      while (comp[x] != x) x = comp[x];
      return x;
    };
    comp[1] = 0;
    bool ok = true;
    uint64_t total = 0;
    for (size_t i = 0; i < ne && ok; ++i) {
      if (!(mask >> i & 1)) continue;
      const size_t a = find(f.edges[i].src), b = find(f.edges[i].dst);
      if (a == b) ok = false;
      comp[a] = b;
      total += w[i];
    }
    if (ok) {
      found = true;
      best = std::max(best, total);
    }
  }
  EXPECT_TRUE(found);
  return best;
}

TEST(SpanningTree, MaximumAgainstBruteForce) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 300; ++iter) {
    const uint32_t nb = 3 + rng() % 5;             // 3..7 blocks
    const size_t extra = rng() % (15 - nb);        // <= 14 edges in all
    const Function f = RandomCfg(rng, nb, extra, false);
    const std::vector<uint64_t> w = RandomWeights(rng, f.edges.size());
    const SpanningTree t = MaximumSpanningTree(f, w);
    ExpectChordFormula(f, t);
    uint64_t total = 0;
    for (size_t i = 0; i < f.edges.size(); ++i)
      if (t.in_tree[i]) total += w[i];
    EXPECT_EQ(total, BruteForceMaxTree(f, w)) << "iteration " << iter;
  }
}

TEST(SpanningTree, NoTreeEdgeCanBeSwappedForAHeavierChord) {
  // Cycle property: every tree edge on the tree path between a chord's
  // endpoints weighs at least as much as the chord.
  std::mt19937 rng(777);
  for (int iter = 0; iter < 200; ++iter) {
    const Function f = RandomCfg(rng, 3 + rng() % 20, rng() % 40, false);
    const std::vector<uint64_t> w = RandomWeights(rng, f.edges.size());
    const SpanningTree t = MaximumSpanningTree(f, w);
    const size_t nb = f.blocks.size();
    // Tree adjacency (virtual edge weighs "infinity").
    std::vector<std::vector<std::pair<size_t, uint64_t>>> adj(nb);
    for (size_t i = 0; i < f.edges.size(); ++i) {
      if (!t.in_tree[i]) continue;
      adj[f.edges[i].src].push_back({f.edges[i].dst, w[i]});
      adj[f.edges[i].dst].push_back({f.edges[i].src, w[i]});
    }
    adj[0].push_back({1, UINT64_MAX});
    adj[1].push_back({0, UINT64_MAX});
    for (size_t c : t.chords) {
      // Minimum weight on the tree path src -> dst (DFS).
      const uint32_t s = f.edges[c].src, d = f.edges[c].dst;
      std::vector<uint64_t> minw(nb, 0);
      std::vector<bool> seen(nb, false);
      std::vector<size_t> stack{s};
      seen[s] = true;
      minw[s] = UINT64_MAX;
      while (!stack.empty()) {
        size_t v = stack.back();
        stack.pop_back();
        for (auto [x, wx] : adj[v])
          if (!seen[x]) {
            seen[x] = true;
            minw[x] = std::min(minw[v], wx);
            stack.push_back(x);
          }
      }
      ASSERT_TRUE(seen[d]);
      EXPECT_GE(minw[d], w[c]) << "iteration " << iter << " chord " << c;
    }
  }
}

TEST(SpanningTree, Deterministic) {
  std::mt19937 rng(4242);
  for (int iter = 0; iter < 50; ++iter) {
    const Function f = RandomCfg(rng, 2 + rng() % 30, rng() % 60, true);
    const std::vector<uint64_t> w = RandomWeights(rng, f.edges.size());
    const SpanningTree a = MaximumSpanningTree(f, w);
    const SpanningTree b = MaximumSpanningTree(f, w);
    EXPECT_EQ(a.in_tree, b.in_tree);
    EXPECT_EQ(a.chords, b.chords);
    EXPECT_EQ(a.uncountable_chords, b.uncountable_chords);
  }
}

// A random consistent flow: a sum of random cycles, each made of the spine
// path ENTRY -> u, one edge u -> v, the spine path v -> EXIT and the virtual
// edge.  Returns per-edge counts (0 for ignored edges) and the virtual count.
std::vector<uint64_t> RandomFlow(std::mt19937& rng, const Function& f,
                                 uint64_t* virt) {
  const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
  std::vector<uint64_t> c(f.edges.size(), 0);
  // Spine edges are the first nb-1 edges: i -> the edge into block i+2 ...
  // spine[k] goes from position k to k+1 in the order 0, 2, 3, ..., nb-1, 1.
  std::vector<uint32_t> pos(nb);
  pos[0] = 0;
  for (uint32_t b = 2; b < nb; ++b) pos[b] = b - 1;
  pos[1] = nb - 1;
  *virt = 0;
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    if (e.flags & kEdgeIgnored) continue;
    const uint64_t amount = rng() % 4 + (i < nb - 1 ? 1 : 0);
    if (amount == 0) continue;
    for (uint32_t k = 0; k < pos[e.src]; ++k) c[k] += amount;  // ENTRY -> u
    c[i] += amount;
    for (uint32_t k = pos[e.dst]; k < nb - 1; ++k) c[k] += amount;  // v -> EXIT
    *virt += amount;
  }
  return c;
}

TEST(SpanningTree, ChordCountsRestoreEveryEdge) {
  std::mt19937 rng(2024);
  int checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const Function f =
        RandomCfg(rng, 2 + rng() % 25, rng() % 50, iter % 2 == 1);
    uint64_t virt = 0;
    const std::vector<uint64_t> truth = RandomFlow(rng, f, &virt);
    const SpanningTree t =
        MaximumSpanningTree(f, RandomWeights(rng, f.edges.size()));
    ExpectChordFormula(f, t);
    if (!t.uncountable_chords.empty()) continue;  // cannot be restored
    std::vector<Count> known(f.edges.size());
    for (size_t c : t.chords) known[c] = truth[c];
    const FlowResult r = SolveFlow(f, known);
    EXPECT_TRUE(r.negatives.empty());
    for (size_t i = 0; i < f.edges.size(); ++i) {
      if (f.edges[i].flags & kEdgeIgnored) continue;
      ASSERT_TRUE(r.edges[i].has_value()) << "iteration " << iter << " edge "
                                          << i;
      EXPECT_EQ(*r.edges[i], truth[i]) << "iteration " << iter << " edge "
                                       << i;
    }
    ASSERT_TRUE(r.virtual_edge.has_value());
    EXPECT_EQ(*r.virtual_edge, virt);
    EXPECT_TRUE(CheckConservation(f, r).empty());
    ++checked;
  }
  EXPECT_GT(checked, 200);  // 232 with this seed
}

TEST(SpanningTree, EhEdgesCanBeChords) {
  // EH edges can hold a counter (GIMPLE splits them with a new landing
  // pad), so a light EH edge becomes a chord like any other edge.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeFallthru},
                              {2, 4, kEdgeEh},
                              {3, 1, 0},
                              {4, 1, 0}});
  const SpanningTree t = MaximumSpanningTree(f, {100, 100, 1, 100, 100});
  EXPECT_FALSE(t.in_tree[2]);
  EXPECT_TRUE(t.uncountable_chords.empty());
  ExpectChordFormula(f, t);
}

TEST(SpanningTree, UncountableCyclesLoseTheirExitEdge) {
  // A setjmp receiver 3: abnormal re-entries (fake ENTRY->3) and calls that
  // may longjmp away (fake 3->EXIT) close a cycle with the virtual edge.
  Function f = Make(5, {{0, 2, 0},
                        {2, 3, kEdgeFallthru},
                        {0, 3, kEdgeFake},
                        {3, 4, 0},
                        {3, 1, kEdgeFake},
                        {4, 1, 0}});
  EXPECT_EQ(IgnoreUncountableCycles(&f), (V{4}));
  EXPECT_TRUE(f.edges[4].flags & kEdgeIgnored);
  EXPECT_FALSE(f.edges[2].flags & kEdgeIgnored);
  const SpanningTree t = MaximumSpanningTree(f, {1, 1, 1, 1, 1, 1});
  EXPECT_TRUE(t.uncountable_chords.empty());
  // Now every edge is derivable from the chords: the re-entries included.
  // True flow: 1 call, 4 re-entries, 5 executions of 3 and 4.
  const std::vector<uint64_t> truth = {1, 1, 4, 5, 0, 5};
  std::vector<Count> known(f.edges.size());
  for (size_t c : t.chords) known[c] = truth[c];
  const FlowResult r = SolveFlow(f, known);
  for (size_t i = 0; i < truth.size(); ++i) {
    if (i == 4) continue;  // ignored
    ASSERT_TRUE(r.edges[i].has_value()) << i;
    EXPECT_EQ(*r.edges[i], truth[i]) << i;
  }
  // Idempotent: nothing left to drop.
  EXPECT_TRUE(IgnoreUncountableCycles(&f).empty());
}

}  // namespace
}  // namespace ballarus
