// test_path_checks.cc — the checks of test_path_checks.h.
#include "core/test_path_checks.h"

#include <gmpxx.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace path_testing {
namespace {

// The tree: a spanning forest of the DAG plus the virtual EXIT->ENTRY
// edge, with the chord count of TOPLAS'94.
void CheckTreeShape(const PathDag& dag, const PathIncrements& inc) {
  const size_t ne = dag.edges.size();
  // A spanning forest of a graph with |V| vertices and c
  // components has |V| - c edges.  The forest spans the DAG's edges plus the
  // virtual EXIT->ENTRY edge, which always joins it (first), so it holds
  // |V| - c - 1 DAG edges and the chords (DAG edges not in it) number
  //   |E_dag| - (|V| - c - 1) = |E_dag| - |V| + c + 1,
  // i.e. |E_dag| - |V| + 2 for a connected DAG: TOPLAS'94's |E| - |V| + 1 of
  // the closed graph, which has |E_dag| + 1 edges.
  const size_t c = Components(dag);
  size_t tree = 0;
  Sets s(dag.n_vertices);
  ASSERT_TRUE(s.Union(kEntryBlock, kExitBlock));
  for (size_t e = 0; e < ne; ++e) {
    if (!inc.in_tree[e]) continue;
    ++tree;
    EXPECT_TRUE(s.Union(dag.edges[e].src, dag.edges[e].dst))
        << "tree edge " << e << " closes a cycle";
  }
  EXPECT_EQ(tree + 1, dag.n_vertices - c);
  EXPECT_EQ(ne - tree, ne + 1 + c - dag.n_vertices);
  if (c == 1) {
    EXPECT_EQ(ne - tree + dag.n_vertices, ne + 2);
  }
}

// The tree is maximal (cycle property) for the weights PlaceIncrements
// documents.
void CheckMaximality(const Function& f, const PathDag& dag,
                     const PathIncrements& inc,
                     const std::vector<uint64_t>& weights) {
  const size_t ne = dag.edges.size();
  // Maximality (cycle property): every tree edge on the tree path between a
  // chord's ends weighs at least the chord, unless it is forced (the
  // virtual edge, a fake ENTRY edge).
  const std::vector<uint64_t> w = DagWeights(f, dag, weights);
  constexpr size_t kVirtual = SIZE_MAX;
  std::vector<std::vector<std::pair<uint32_t, size_t>>> adj(dag.n_vertices);
  adj[kEntryBlock].push_back({kExitBlock, kVirtual});
  adj[kExitBlock].push_back({kEntryBlock, kVirtual});
  for (size_t e = 0; e < ne; ++e)
    if (inc.in_tree[e]) {
      adj[dag.edges[e].src].push_back({dag.edges[e].dst, e});
      adj[dag.edges[e].dst].push_back({dag.edges[e].src, e});
    }
  for (size_t e = 0; e < ne; ++e) {
    if (inc.in_tree[e]) continue;
    const DagEdge& d = dag.edges[e];
    std::vector<std::pair<uint32_t, size_t>> parent(
        dag.n_vertices, {UINT32_MAX, 0});
    std::vector<uint32_t> queue{d.src};
    parent[d.src] = {d.src, kVirtual};
    for (size_t q = 0; q < queue.size(); ++q)
      for (auto [x, te] : adj[queue[q]])
        if (parent[x].first == UINT32_MAX) {
          parent[x] = {queue[q], te};
          queue.push_back(x);
        }
    ASSERT_NE(parent[d.dst].first, UINT32_MAX) << "chord " << e;
    for (uint32_t x = d.dst; x != d.src; x = parent[x].first) {
      const size_t te = parent[x].second;
      if (te == kVirtual || IsFakeEntry(f, dag.edges[te])) continue;
      EXPECT_GE(w[te], w[e]) << "tree edge " << te << " lighter than chord "
                             << e;
    }
  }
}

// On every path given (or on 200 sampled ones), sum of Inc == number.
void CheckPathSums(const PathDag& dag, const PathNumbering& num,
                   const PathIncrements& inc, const std::vector<Path>& paths,
                   bool enumerated, gmp_randclass* rnd) {
  // Sum of Inc along a path, modulo 2^64, is its number.
  auto check_path = [&](const Path& p, const mpz_class& id) {
    uint64_t r = 0;
    for (uint32_t e : p) r += inc.inc[e];
    EXPECT_EQ(r, Low64(id)) << "path " << id;
  };
  if (enumerated) {
    for (size_t k = 0; k < paths.size(); ++k) check_path(paths[k], Z(k));
  } else {
    for (int k = 0; k < 200; ++k) {
      const mpz_class id = rnd->get_z_range(num.total());
      Path p;
      ASSERT_TRUE(DecodePath(dag, num, id, &p));
      check_path(p, id);
    }
  }
}

// PlaceIncrements with `weights`: values, tree shape, chord count, maximality
// and, on every path given (or on sampled paths), sum of Inc == number.
void CheckIncrements(const Function& f, const PathDag& dag,
                     const PathNumbering& num,
                     const std::vector<uint64_t>& weights,
                     const std::vector<Path>& paths, bool enumerated,
                     gmp_randclass* rnd) {
  PathIncrements inc;
  std::string err;
  ASSERT_TRUE(PlaceIncrements(f, dag, weights, &inc, &err)) << err;
  const size_t ne = dag.edges.size();
  ASSERT_EQ(inc.val.size(), ne);
  ASSERT_EQ(inc.inc.size(), ne);
  ASSERT_EQ(inc.in_tree.size(), ne);
  EXPECT_EQ(Z(inc.n_paths), num.total());
  for (size_t e = 0; e < ne; ++e) {
    EXPECT_EQ(Z(inc.val[e]), num.val[e]) << "Val of DAG edge " << e;
    if (inc.in_tree[e]) {
      EXPECT_EQ(inc.inc[e], 0u) << "tree edge " << e;
    }
    // An abnormal re-entry starts with r = 0: its fake ENTRY edge must carry
    // no increment.
    if (IsFakeEntry(f, dag.edges[e])) {
      EXPECT_TRUE(inc.in_tree[e]) << "fake ENTRY edge " << e;
      EXPECT_EQ(inc.inc[e], 0u);
    }
  }
  CheckTreeShape(dag, inc);
  if (::testing::Test::HasFatalFailure()) return;
  CheckMaximality(f, dag, inc, weights);
  if (::testing::Test::HasFatalFailure()) return;
  CheckPathSums(dag, num, inc, paths, enumerated, rnd);
}

// The DAG's vertices and edges: every path edge of f as its kCfg edge (or
// kBackEnd for a cut edge), one kStart per block a path starts at, one
// kCutEnd per cut block, and nothing else.
void CheckDagEdges(const Function& f, const PathCuts& cuts,
                   const PathDag& dag) {
  const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
  EXPECT_EQ(dag.n_blocks, nb);
  EXPECT_EQ(dag.n_vertices, nb + cuts.blocks.size());
  EXPECT_TRUE(Acyclic(dag));
  std::vector<bool> is_cut_block(nb, false), is_cut_edge(f.edges.size(), false);
  std::vector<bool> starts(nb, false);
  for (uint32_t b : cuts.blocks) is_cut_block[b] = starts[b] = true;
  for (uint32_t i : cuts.edges) {
    is_cut_edge[i] = true;
    starts[f.edges[i].dst] = true;
  }
  for (uint32_t b = 0; b < nb; ++b) {
    if (is_cut_block[b]) {
      const size_t k = std::find(cuts.blocks.begin(), cuts.blocks.end(), b) -
                       cuts.blocks.begin();
      EXPECT_EQ(dag.in_vertex[b], nb + k);
    } else {
      EXPECT_EQ(dag.in_vertex[b], b);
    }
    EXPECT_EQ(dag.BlockOf(dag.in_vertex[b]), b);
  }
  size_t n_path_edges = 0, n_starts = 0;
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    const int64_t d = dag.dag_edge_of_cfg[i];
    if (!InDag(e)) {
      EXPECT_EQ(d, -1) << "abnormal/ignored edge " << i << " in the DAG";
      continue;
    }
    ++n_path_edges;
    ASSERT_GE(d, 0) << "edge " << i;
    const DagEdge& x = dag.edges[d];
    EXPECT_EQ(x.ref, i);
    EXPECT_EQ(x.src, e.src);
    if (is_cut_edge[i]) {
      EXPECT_EQ(x.kind, DagEdge::kBackEnd);
      EXPECT_EQ(x.dst, kExitBlock);
    } else {
      EXPECT_EQ(x.kind, DagEdge::kCfg);
      EXPECT_EQ(x.dst, dag.in_vertex[e.dst]);
    }
  }
  for (uint32_t b = 0; b < nb; ++b) {
    n_starts += starts[b];
    if (starts[b]) {
      ASSERT_GE(dag.start_edge[b], 0) << "block " << b;
      const DagEdge& x = dag.edges[dag.start_edge[b]];
      EXPECT_EQ(x.kind, DagEdge::kStart);
      EXPECT_EQ(x.src, kEntryBlock);
      EXPECT_EQ(x.dst, b);
      EXPECT_EQ(x.ref, b);
    } else {
      EXPECT_EQ(dag.start_edge[b], -1) << "block " << b;
    }
    if (is_cut_block[b]) {
      ASSERT_GE(dag.cut_end_edge[b], 0) << "block " << b;
      const DagEdge& x = dag.edges[dag.cut_end_edge[b]];
      EXPECT_EQ(x.kind, DagEdge::kCutEnd);
      EXPECT_EQ(x.src, dag.in_vertex[b]);
      EXPECT_EQ(x.dst, kExitBlock);
      EXPECT_EQ(x.ref, b);
    } else {
      EXPECT_EQ(dag.cut_end_edge[b], -1) << "block " << b;
    }
  }
  EXPECT_EQ(dag.edges.size(), n_path_edges + n_starts + cuts.blocks.size());
}

// Out-edge order: a block's edges in model order, then (ENTRY) its kStart
// edges by block; both are creation order, i.e. ascending DAG index.  And
// topo: a permutation with every edge forward.
void CheckDagOrder(const PathDag& dag) {
  for (uint32_t v = 0; v < dag.n_vertices; ++v) {
    U want;
    for (uint32_t e = 0; e < dag.edges.size(); ++e)
      if (dag.edges[e].src == v) want.push_back(e);
    EXPECT_EQ(dag.out[v], want) << "vertex " << v;
  }
  bool seen_start = false;
  uint32_t last_start = 0;
  for (uint32_t e : dag.out[kEntryBlock]) {
    const DagEdge& x = dag.edges[e];
    if (x.kind == DagEdge::kStart) {
      if (seen_start) {
        EXPECT_LT(last_start, x.dst);
      }
      seen_start = true;
      last_start = x.dst;
    } else {
      EXPECT_FALSE(seen_start) << "kCfg edge after a kStart edge";
    }
  }
  ASSERT_EQ(dag.topo.size(), dag.n_vertices);
  std::vector<int64_t> pos(dag.n_vertices, -1);
  for (size_t k = 0; k < dag.topo.size(); ++k) pos[dag.topo[k]] = k;
  for (uint32_t v = 0; v < dag.n_vertices; ++v) EXPECT_GE(pos[v], 0);
  for (const DagEdge& x : dag.edges) EXPECT_LT(pos[x.src], pos[x.dst]);
}

// NumPaths and Val against the DP.
void CheckNumbering(const PathDag& dag, const PathNumbering& num,
                    const Counts& dp) {
  EXPECT_EQ(num.total(), dp.to_exit[kEntryBlock]);
  for (uint32_t v = 0; v < dag.n_vertices; ++v) {
    EXPECT_EQ(num.num_paths[v], dp.to_exit[v]) << "vertex " << v;
    mpz_class before = 0;
    for (uint32_t e : dag.out[v]) {
      EXPECT_EQ(num.val[e], before) << "Val of DAG edge " << e;
      before += dp.to_exit[dag.edges[e].dst];
    }
  }
}

// Every path, enumerated in numbering order: its number, its decoding, its
// blocks, and the edge counts of all paths once each.
void CheckEnumeratedPaths(const Function& f, const PathDag& dag,
                          const PathNumbering& num, const Counts& dp,
                          const std::vector<Path>& paths) {
  EXPECT_EQ(Z(paths.size()), num.total());
  std::vector<uint64_t> counts(f.edges.size(), 0);
  std::vector<uint64_t> direct(f.edges.size(), 0);
  Path back;
  for (size_t k = 0; k < paths.size(); ++k) {
    const Path& p = paths[k];
    // The DFS visits out-edges in numbering order, so the k-th path found
    // must carry number k; with paths.size() == total this is the proof
    // that the numbers are unique and exactly cover [0, total).
    EXPECT_EQ(EncodePath(num, p), Z(k));
    ASSERT_TRUE(DecodePath(dag, num, Z(k), &back)) << "id " << k;
    EXPECT_EQ(back, p) << "id " << k;
    // PathBlocks, rebuilt from the model edges the path takes.
    U blocks;
    size_t from = 0;
    if (dag.edges[p[0]].kind == DagEdge::kStart) {
      blocks.push_back(dag.edges[p[0]].ref);
      from = 1;
    } else {
      blocks.push_back(kEntryBlock);
    }
    for (size_t j = from; j < p.size(); ++j) {
      const DagEdge& x = dag.edges[p[j]];
      EXPECT_NE(x.kind, DagEdge::kStart);
      if (x.kind == DagEdge::kCfg) {
        EXPECT_EQ(f.edges[x.ref].src, blocks.back());
        blocks.push_back(f.edges[x.ref].dst);
      }
      if (x.kind == DagEdge::kCfg || x.kind == DagEdge::kBackEnd)
        ++direct[x.ref];
      if (x.kind == DagEdge::kBackEnd) {
        EXPECT_EQ(f.edges[x.ref].src, blocks.back());
      }
    }
    EXPECT_EQ(PathBlocks(dag, p), blocks) << "id " << k;
    AddPathToEdgeCounts(dag, p, 1, &counts);
  }
  // Per CFG edge: the paths through its DAG edge d = u->w number
  // paths(ENTRY->u) * paths(w->EXIT) (back edges through their kBackEnd).
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const int64_t d = dag.dag_edge_of_cfg[i];
    const mpz_class want =
        d < 0 ? mpz_class(0)
              : mpz_class(dp.from_entry[dag.edges[d].src] *
                          dp.to_exit[dag.edges[d].dst]);
    EXPECT_EQ(Z(counts[i]), want) << "CFG edge " << i;
    EXPECT_EQ(direct[i], counts[i]) << "CFG edge " << i;
  }
}

// 100 random path numbers of a DAG with too many paths to enumerate:
// decoded into a chain of edges ENTRY to EXIT that encodes back.
void CheckSampledPaths(const PathDag& dag, const PathNumbering& num,
                       gmp_randclass* rnd) {
  Path back;
  for (int k = 0; k < 100; ++k) {
    const mpz_class id = rnd->get_z_range(num.total());
    ASSERT_TRUE(DecodePath(dag, num, id, &back)) << id;
    EXPECT_EQ(EncodePath(num, back), id);
    ASSERT_FALSE(back.empty());
    EXPECT_EQ(dag.edges[back.front()].src, kEntryBlock);
    EXPECT_EQ(dag.edges[back.back()].dst, kExitBlock);
    for (size_t j = 1; j < back.size(); ++j)
      EXPECT_EQ(dag.edges[back[j]].src, dag.edges[back[j - 1]].dst);
  }
}

// Numbers out of [0, total) do not decode.
void CheckOutOfRangeNumbers(const PathDag& dag, const PathNumbering& num) {
  Path back;
  EXPECT_FALSE(DecodePath(dag, num, num.total(), &back));
  EXPECT_FALSE(DecodePath(dag, num, mpz_class(num.total() + 1), &back));
  EXPECT_FALSE(DecodePath(dag, num, -1, &back));
}

// Increments, three weightings: uniform, random, none; or, past
// kMaxInstrumentedPaths, PlaceIncrements' refusal.
void CheckIncrementWeightings(const Function& f, const PathDag& dag,
                              const PathNumbering& num,
                              const std::vector<Path>& paths, bool enumerated,
                              uint64_t seed, gmp_randclass* rnd) {
  if (num.total() <= Z(kMaxInstrumentedPaths)) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> uniform(f.edges.size(), 1), random(f.edges.size());
    for (uint64_t& x : random) x = rng() % 8;  // many ties
    for (const auto* w : {&uniform, &random}) {
      SCOPED_TRACE(w == &uniform ? "uniform weights" : "random weights");
      CheckIncrements(f, dag, num, *w, paths, enumerated, rnd);
    }
    SCOPED_TRACE("no weights");
    CheckIncrements(f, dag, num, {}, paths, enumerated, rnd);
  } else {
    PathIncrements inc;
    std::string err;
    EXPECT_FALSE(PlaceIncrements(f, dag, {}, &inc, &err));
    EXPECT_NE(err.find("too many paths"), std::string::npos) << err;
  }
}

// Builds the DAG of `f` cut at `cuts` and checks everything on it, step by
// step; a step that fails fatally ends the check.
void CheckDagInto(const Function& f, const PathCuts& cuts, uint64_t seed,
                  Checked* result) {
  using ::testing::Test;
  Checked& out = *result;
  PathDag dag;
  std::string err;
  out.built = BuildPathDag(f, cuts, &dag, &err);
  EXPECT_TRUE(out.built) << err;
  if (!out.built) return;
  CheckDagEdges(f, cuts, dag);
  if (Test::HasFatalFailure()) return;
  CheckDagOrder(dag);
  if (Test::HasFatalFailure()) return;

  const PathNumbering num = NumberPaths(dag);
  const Counts dp = CountByDp(dag);
  out.total = num.total();
  CheckNumbering(dag, num, dp);

  std::vector<Path> paths;
  if (num.total() <= kEnumerateCap)
    out.enumerated = AllPaths(dag, dp, kEnumerateCap, &paths);
  gmp_randclass rnd(gmp_randinit_mt);
  rnd.seed(Z(seed));
  if (out.enumerated)
    CheckEnumeratedPaths(f, dag, num, dp, paths);
  else
    CheckSampledPaths(dag, num, &rnd);
  if (Test::HasFatalFailure()) return;
  CheckOutOfRangeNumbers(dag, num);
  CheckIncrementWeightings(f, dag, num, paths, out.enumerated, seed, &rnd);
}

}  // namespace

Checked CheckDag(const Function& f, const PathCuts& cuts, uint64_t seed) {
  Checked c;
  CheckDagInto(f, cuts, seed, &c);
  return c;
}

// Checks a plan: valid cuts, a DAG, the count it claims, the limit.
void CheckPlan(const Function& f, const PathPlan& plan,
               const std::vector<bool>& may_cut, uint64_t limit,
               uint64_t seed) {
  EXPECT_LE(plan.n_paths, limit);
  EXPECT_TRUE(std::is_sorted(plan.cuts.edges.begin(), plan.cuts.edges.end()));
  EXPECT_TRUE(
      std::is_sorted(plan.cuts.blocks.begin(), plan.cuts.blocks.end()));
  for (uint32_t b : plan.cuts.blocks) {
    EXPECT_TRUE(b != kEntryBlock && b != kExitBlock && b < f.blocks.size());
    if (!may_cut.empty()) {
      EXPECT_TRUE(b < may_cut.size() && may_cut[b]) << b;
    }
  }
  // Cut edges are back edges whose targets are not cut blocks.
  const U back = FindBackEdges(f);
  for (uint32_t i : plan.cuts.edges)
    EXPECT_TRUE(std::binary_search(back.begin(), back.end(), i)) << i;
  for (uint32_t i : back)
    EXPECT_NE(std::binary_search(plan.cuts.edges.begin(),
                                 plan.cuts.edges.end(), i),
              std::binary_search(plan.cuts.blocks.begin(),
                                 plan.cuts.blocks.end(), f.edges[i].dst))
        << "back edge " << i;
  const Checked c = CheckDag(f, plan.cuts, seed);
  ASSERT_TRUE(c.built);
  EXPECT_EQ(c.total, Z(plan.n_paths));
  EXPECT_EQ(c.enumerated, plan.n_paths <= kEnumerateCap);
}

}  // namespace path_testing
}  // namespace ballarus
