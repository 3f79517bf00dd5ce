// path_profile_test.cc — Ball–Larus path numbering (core/path_profile.cc).
//
// The papers' examples with every number derived by hand in a comment
// (Ball & Larus, "Efficient Path Profiling", MICRO 1996, as reproduced by
// Weber's and Preuss's reports in /work/shared/papers), the cases the papers
// leave open (several back edges into one header, a latch that also returns,
// self-loops, parallel edges, irreducible regions, fake and abnormal edges,
// cut blocks), a function with 2^70 paths, and several hundred seeded random
// CFGs.  On every graph small enough, every ENTRY->EXIT path of the DAG is
// enumerated and checked against oracles written independently of the
// implementation: path counts by a memoised DP over the DAG's edge list,
// per-edge path counts as paths(ENTRY->u) * paths(w->EXIT), dominators for
// the back edges of reducible loops, an exact DP for the fewest paths a
// diamond chain can be cut into, and the cycle property for the maximum
// spanning tree.
#include "core/path_profile.h"

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
#include "core/test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using Path = std::vector<uint32_t>;  // DAG edges, ENTRY to EXIT
using U = std::vector<uint32_t>;

static_assert(sizeof(unsigned long) == 8, "mpz_class(unsigned long) is 64-bit");
mpz_class Z(uint64_t v) { return mpz_class(static_cast<unsigned long>(v)); }

mpz_class Pow2(unsigned k) {
  mpz_class r;
  mpz_ui_pow_ui(r.get_mpz_t(), 2, k);
  return r;
}

// v modulo 2^64 (v >= 0).
uint64_t Low64(const mpz_class& v) {
  mpz_class r;
  mpz_fdiv_r_2exp(r.get_mpz_t(), v.get_mpz_t(), 64);
  return r.get_ui();
}

// -x modulo 2^64, for expected increments.
constexpr uint64_t Neg(uint64_t x) { return uint64_t{0} - x; }

// Written independently of IsPathEdge: abnormal and ignored edges are not in
// the path DAG.
bool InDag(const Edge& e) {
  return (e.flags & kEdgeAbnormal) == 0 && (e.flags & kEdgeIgnored) == 0;
}

PathCuts BackEdgeCuts(const Function& f) {
  PathCuts c;
  c.edges = FindBackEdges(f);
  return c;
}

// ---------------------------------------------------------------------------
// Oracles.

// Paths from ENTRY to each vertex and from each vertex to EXIT, by memoised
// recursion over the DAG's edge list (not dag.out, dag.topo or NumberPaths).
struct Counts {
  std::vector<mpz_class> from_entry;
  std::vector<mpz_class> to_exit;
};

Counts CountByDp(const PathDag& dag) {
  const uint32_t n = dag.n_vertices;
  std::vector<std::vector<uint32_t>> succ(n), pred(n);
  for (const DagEdge& d : dag.edges) {
    succ[d.src].push_back(d.dst);
    pred[d.dst].push_back(d.src);
  }
  Counts c;
  c.from_entry.assign(n, 0);
  c.to_exit.assign(n, 0);
  std::vector<bool> done_f(n, false), done_t(n, false);
  std::function<mpz_class(uint32_t)> to_exit = [&](uint32_t v) {
    if (!done_t[v]) {
      mpz_class s = v == kExitBlock ? 1 : 0;
      for (uint32_t w : succ[v]) s += to_exit(w);
      c.to_exit[v] = s;
      done_t[v] = true;
    }
    return c.to_exit[v];
  };
  std::function<mpz_class(uint32_t)> from_entry = [&](uint32_t v) {
    if (!done_f[v]) {
      mpz_class s = v == kEntryBlock ? 1 : 0;
      for (uint32_t u : pred[v]) s += from_entry(u);
      c.from_entry[v] = s;
      done_f[v] = true;
    }
    return c.from_entry[v];
  };
  for (uint32_t v = 0; v < n; ++v) {
    to_exit(v);
    from_entry(v);
  }
  return c;
}

// True if the DAG's edge list has no directed cycle (own DFS).
bool Acyclic(const PathDag& dag) {
  std::vector<std::vector<uint32_t>> succ(dag.n_vertices);
  for (const DagEdge& d : dag.edges) succ[d.src].push_back(d.dst);
  std::vector<int> colour(dag.n_vertices, 0);
  std::function<bool(uint32_t)> dfs = [&](uint32_t v) {
    colour[v] = 1;
    for (uint32_t w : succ[v]) {
      if (colour[w] == 1) return false;
      if (colour[w] == 0 && !dfs(w)) return false;
    }
    colour[v] = 2;
    return true;
  };
  for (uint32_t v = 0; v < dag.n_vertices; ++v)
    if (colour[v] == 0 && !dfs(v)) return false;
  return true;
}

// Every ENTRY->EXIT path, by DFS over dag.out (pruned at vertices without a
// path to EXIT).  False if there are more than `cap`.
bool AllPaths(const PathDag& dag, const Counts& counts, size_t cap,
              std::vector<Path>* paths) {
  paths->clear();
  Path cur;
  bool ok = true;
  std::function<void(uint32_t)> dfs = [&](uint32_t v) {
    if (!ok) return;
    if (v == kExitBlock) {
      if (paths->size() >= cap) {
        ok = false;
        return;
      }
      paths->push_back(cur);
      return;
    }
    for (uint32_t e : dag.out[v]) {
      if (counts.to_exit[dag.edges[e].dst] == 0) continue;
      cur.push_back(e);
      dfs(dag.edges[e].dst);
      cur.pop_back();
    }
  };
  if (counts.to_exit[kEntryBlock] != 0) dfs(kEntryBlock);
  return ok;
}

// Union-find for the tree checks.
struct Sets {
  std::vector<uint32_t> p;
  explicit Sets(size_t n) : p(n) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  }
  uint32_t Find(uint32_t x) {
    while (p[x] != x) x = p[x] = p[p[x]];
    return x;
  }
  bool Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    p[a] = b;
    return true;
  }
};

// Components of the undirected graph (DAG vertices; DAG edges and the
// virtual EXIT->ENTRY edge).
size_t Components(const PathDag& dag) {
  Sets s(dag.n_vertices);
  size_t c = dag.n_vertices;
  c -= s.Union(kEntryBlock, kExitBlock);
  for (const DagEdge& d : dag.edges) c -= s.Union(d.src, d.dst);
  return c;
}

// The weight PlaceIncrements documents for each DAG edge: a CFG edge's own;
// a dummy edge what the CFG edges it stands for weigh (kBackEnd: its back
// edge; kStart w: the cut edges into w, or every edge into w if w is a cut
// block; kCutEnd w: every edge into w).
std::vector<uint64_t> DagWeights(const Function& f, const PathDag& dag,
                                 const std::vector<uint64_t>& cfg) {
  auto wcfg = [&](uint32_t i) { return i < cfg.size() ? cfg[i] : 0; };
  std::vector<uint64_t> into(dag.n_blocks, 0), cut_into(dag.n_blocks, 0);
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const int64_t d = dag.dag_edge_of_cfg[i];
    if (d < 0) continue;
    into[f.edges[i].dst] += wcfg(static_cast<uint32_t>(i));
    if (dag.edges[d].kind == DagEdge::kBackEnd)
      cut_into[f.edges[i].dst] += wcfg(static_cast<uint32_t>(i));
  }
  std::vector<uint64_t> w(dag.edges.size());
  for (size_t e = 0; e < dag.edges.size(); ++e) {
    const DagEdge& d = dag.edges[e];
    switch (d.kind) {
      case DagEdge::kCfg:
      case DagEdge::kBackEnd:
        w[e] = wcfg(d.ref);
        break;
      case DagEdge::kStart:
        w[e] = dag.cut_end_edge[d.ref] >= 0 ? into[d.ref] : cut_into[d.ref];
        break;
      case DagEdge::kCutEnd:
        w[e] = into[d.ref];
        break;
    }
  }
  return w;
}

bool IsFakeEntry(const Function& f, const DagEdge& d) {
  return d.kind == DagEdge::kCfg && d.src == kEntryBlock &&
         (f.edges[d.ref].flags & kEdgeFake);
}

// ---------------------------------------------------------------------------
// The exhaustive checker.

constexpr size_t kEnumerateCap = 20000;

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

  // Tree shape.  A spanning forest of a graph with |V| vertices and c
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

struct Checked {
  bool built = false;
  bool enumerated = false;
  mpz_class total;
};

// Builds the DAG of `f` cut at `cuts` and checks everything on it.
void CheckDagInto(const Function& f, const PathCuts& cuts, uint64_t seed,
                  Checked* result) {
  Checked& out = *result;
  PathDag dag;
  std::string err;
  out.built = BuildPathDag(f, cuts, &dag, &err);
  EXPECT_TRUE(out.built) << err;
  if (!out.built) return;
  const uint32_t nb = static_cast<uint32_t>(f.blocks.size());

  // ---- Structure.
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
  // Out-edge order: a block's edges in model order, then (ENTRY) its kStart
  // edges by block; both are creation order, i.e. ascending DAG index.
  for (uint32_t v = 0; v < dag.n_vertices; ++v) {
    U want;
    for (uint32_t e = 0; e < dag.edges.size(); ++e)
      if (dag.edges[e].src == v) want.push_back(e);
    EXPECT_EQ(dag.out[v], want) << "vertex " << v;
  }
  {
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
  }
  // topo: a permutation with every edge forward.
  {
    ASSERT_EQ(dag.topo.size(), dag.n_vertices);
    std::vector<int64_t> pos(dag.n_vertices, -1);
    for (size_t k = 0; k < dag.topo.size(); ++k) pos[dag.topo[k]] = k;
    for (uint32_t v = 0; v < dag.n_vertices; ++v) EXPECT_GE(pos[v], 0);
    for (const DagEdge& x : dag.edges) EXPECT_LT(pos[x.src], pos[x.dst]);
  }

  // ---- Numbering against the DP.
  const PathNumbering num = NumberPaths(dag);
  const Counts dp = CountByDp(dag);
  out.total = num.total();
  EXPECT_EQ(num.total(), dp.to_exit[kEntryBlock]);
  for (uint32_t v = 0; v < dag.n_vertices; ++v) {
    EXPECT_EQ(num.num_paths[v], dp.to_exit[v]) << "vertex " << v;
    mpz_class before = 0;
    for (uint32_t e : dag.out[v]) {
      EXPECT_EQ(num.val[e], before) << "Val of DAG edge " << e;
      before += dp.to_exit[dag.edges[e].dst];
    }
  }

  // ---- Every path.
  std::vector<Path> paths;
  if (num.total() <= kEnumerateCap)
    out.enumerated = AllPaths(dag, dp, kEnumerateCap, &paths);
  gmp_randclass rnd(gmp_randinit_mt);
  rnd.seed(Z(seed));
  Path back;
  if (out.enumerated) {
    EXPECT_EQ(Z(paths.size()), num.total());
    std::vector<uint64_t> counts(f.edges.size(), 0);
    std::vector<uint64_t> direct(f.edges.size(), 0);
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
  } else {
    for (int k = 0; k < 100; ++k) {
      const mpz_class id = rnd.get_z_range(num.total());
      ASSERT_TRUE(DecodePath(dag, num, id, &back)) << id;
      EXPECT_EQ(EncodePath(num, back), id);
      ASSERT_FALSE(back.empty());
      EXPECT_EQ(dag.edges[back.front()].src, kEntryBlock);
      EXPECT_EQ(dag.edges[back.back()].dst, kExitBlock);
      for (size_t j = 1; j < back.size(); ++j)
        EXPECT_EQ(dag.edges[back[j]].src, dag.edges[back[j - 1]].dst);
    }
  }
  EXPECT_FALSE(DecodePath(dag, num, num.total(), &back));
  EXPECT_FALSE(DecodePath(dag, num, mpz_class(num.total() + 1), &back));
  EXPECT_FALSE(DecodePath(dag, num, -1, &back));

  // ---- Increments, three weightings: uniform, random, none.
  if (num.total() <= Z(kMaxInstrumentedPaths)) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> uniform(f.edges.size(), 1), random(f.edges.size());
    for (uint64_t& x : random) x = rng() % 8;  // many ties
    for (const auto* w : {&uniform, &random}) {
      SCOPED_TRACE(w == &uniform ? "uniform weights" : "random weights");
      CheckIncrements(f, dag, num, *w, paths, out.enumerated, &rnd);
    }
    SCOPED_TRACE("no weights");
    CheckIncrements(f, dag, num, {}, paths, out.enumerated, &rnd);
  } else {
    PathIncrements inc;
    EXPECT_FALSE(PlaceIncrements(f, dag, {}, &inc, &err));
    EXPECT_NE(err.find("too many paths"), std::string::npos) << err;
  }
}

Checked CheckDag(const Function& f, const PathCuts& cuts, uint64_t seed) {
  Checked c;
  CheckDagInto(f, cuts, seed, &c);
  return c;
}

// ---------------------------------------------------------------------------
// Hand-made graphs.

// The blocks of path `id`.
U BlocksOf(const PathDag& dag, const PathNumbering& num, unsigned id) {
  Path p;
  EXPECT_TRUE(DecodePath(dag, num, Z(id), &p)) << id;
  return PathBlocks(dag, p);
}

mpz_class ValOf(const PathDag& dag, const PathNumbering& num, uint32_t edge) {
  return num.val[dag.dag_edge_of_cfg[edge]];
}

// MICRO'96 Figure 1: A->B, A->C, B->C, B->D, C->D, D->E, D->F, E->F, with A
// the entry and F the exit, here between ENTRY and EXIT.  Successors are
// listed so that the paper's encoding comes out: A->C before A->B, D->F
// before D->E.
//   blocks: ENTRY 0, EXIT 1, A 2, B 3, C 4, D 5, E 6, F 7.
Function PaperFigure1() {
  return Make(8, {{0, 2, kEdgeFallthru},  // 0 ENTRY->A
                  {2, 4, kEdgeFalse},     // 1 A->C
                  {2, 3, kEdgeTrue},      // 2 A->B
                  {3, 4, kEdgeFalse},     // 3 B->C
                  {3, 5, kEdgeTrue},      // 4 B->D
                  {4, 5, kEdgeFallthru},  // 5 C->D
                  {5, 7, kEdgeFalse},     // 6 D->F
                  {5, 6, kEdgeTrue},      // 7 D->E
                  {6, 7, kEdgeFallthru},  // 8 E->F
                  {7, 1, kEdgeFallthru}});  // 9 F->EXIT
}

TEST(PathNumbering, PaperFigure1) {
  const Function f = PaperFigure1();
  EXPECT_TRUE(FindBackEdges(f).empty());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NumPaths, bottom up: F = 1, E = 1 (E->F), D = F + E = 2, C = D = 2,
  // B = C + D = 4, A = C + B = 6, ENTRY = A = 6.
  const int want_np[] = {6, 1, 6, 4, 2, 2, 1, 1};
  for (uint32_t v = 0; v < 8; ++v) EXPECT_EQ(num.num_paths[v], want_np[v]);
  EXPECT_EQ(num.total(), 6);
  // Val(e_i) = NumPaths of the targets of v's earlier out-edges:
  // A->C 0, A->B = NP(C) = 2; B->C 0, B->D = NP(C) = 2; C->D 0;
  // D->F 0, D->E = NP(F) = 1; E->F, ENTRY->A, F->EXIT 0.
  const int want_val[] = {0, 0, 2, 0, 2, 0, 0, 1, 0, 0};
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(ValOf(dag, num, i), want_val[i]);
  // The paper's table: ACDF 0, ACDEF 1, ABCDF 2, ABCDEF 3, ABDF 4, ABDEF 5
  // (e.g. ABDEF = Val(A->B) + Val(B->D) + Val(D->E) = 2 + 2 + 1 = 5).
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 4, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 4, 5, 6, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 4, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{0, 2, 3, 4, 5, 6, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{0, 2, 3, 5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{0, 2, 3, 5, 6, 7, 1}));
  CheckDag(f, {}, 1);
}

TEST(PathIncrements, PaperFigure1Uniform) {
  const Function f = PaperFigure1();
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(10, 1), &inc,
                              &err))
      << err;
  // DAG edges are the model edges d0..d9.  Kruskal after the virtual edge,
  // equal weights by index: d0 ENTRY-A, d1 A-C, d2 A-B tree; d3 B-C closes
  // B-A-C: chord; d4 B-D tree; d5 C-D chord; d6 D-F, d7 D-E tree; d8 E-F
  // chord; d9 F-EXIT chord (F and EXIT both joined to ENTRY).  4 chords =
  // |E| - |V| + 2 = 10 - 8 + 2.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, true, true, false, true,
                                            false, true, true, false, false}));
  // Potentials along the tree: ENTRY = EXIT = A = C = 0, B = Val(A->B) = 2,
  // D = 2 + Val(B->D) = 4, F = 4 + 0 = 4, E = 4 + Val(D->E) = 5.
  // Inc(u->v) = pot(u) + Val - pot(v): B->C 2 + 0 - 0 = 2; C->D 0 + 0 - 4
  // = -4; E->F 5 + 0 - 4 = 1; F->EXIT 4 + 0 - 0 = 4.
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, 0, 2, 0, Neg(4), 0, 0, 1,
                                            4}));
  // E.g. ACDEF: -4 + 1 + 4 = 1; ABDF: 4.
}

TEST(PathIncrements, PaperFigure1HotPathGetsOneIncrement) {
  // A profile in which ABDEF is hot: the spanning tree takes its edges and
  // the increments land on the cold edges, as MICRO'96 §3.3 intends.
  const Function f = PaperFigure1();
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  PathIncrements inc;
  //                              0   1  2  3  4  5  6  7  8  9
  const std::vector<uint64_t> w{10, 1, 9, 1, 8, 2, 3, 7, 7, 10};
  ASSERT_TRUE(PlaceIncrements(f, dag, w, &inc, &err)) << err;
  // Kruskal by decreasing weight (ties by index): d0, d9 (10) tree; d2 A-B,
  // d4 B-D, d7 D-E tree; d8 E-F chord (E reaches F through D-B-A-ENTRY-
  // EXIT-F); d6 D-F (3) chord; d5 C-D (2) tree; d1 A-C, d3 B-C (1) chords.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, false, true, false, true,
                                            true, false, true, false, true}));
  // Potentials: ENTRY = EXIT = A = 0, F = 0 (F->EXIT, Val 0), B = 2, D = 4,
  // E = 5, C = D - Val(C->D) = 4.
  // Inc: A->C 0 + 0 - 4 = -4; B->C 2 + 0 - 4 = -2; D->F 4 + 0 - 0 = 4;
  // E->F 5 + 0 - 0 = 5.  The hot path ABDEF executes only r += 5.
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, Neg(4), 0, Neg(2), 0, 0, 4, 0,
                                            5, 0}));
  CheckDag(f, {}, 2);
}

// The loop of Weber's report (MICRO'96 §3.2): A->B, B->C, B->D, back edge
// C->B, D the exit.  Dummy edges ENTRY->B and C->EXIT replace the back edge.
//   blocks: ENTRY 0, EXIT 1, A 2, B 3, C 4, D 5.
Function PaperLoop() {
  return Make(6, {{0, 2, kEdgeFallthru},  // 0 ENTRY->A
                  {2, 3, kEdgeFallthru},  // 1 A->B
                  {3, 4, kEdgeTrue},      // 2 B->C
                  {3, 5, kEdgeFalse},     // 3 B->D
                  {4, 3, kEdgeFallthru},  // 4 C->B (back edge)
                  {5, 1, kEdgeFallthru}});  // 5 D->EXIT
}

TEST(PathNumbering, PaperLoopWithDummyEdges) {
  const Function f = PaperLoop();
  EXPECT_EQ(FindBackEdges(f), (U{4}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  // DAG: d0..d3 as model edges 0..3, d4 = kBackEnd C->EXIT for edge 4, d5
  // D->EXIT, d6 = kStart ENTRY->B.
  ASSERT_EQ(dag.edges.size(), 7u);
  EXPECT_EQ(dag.edges[4].kind, DagEdge::kBackEnd);
  EXPECT_EQ(dag.dag_edge_of_cfg[4], 4);
  EXPECT_EQ(dag.start_edge[3], 6);
  EXPECT_EQ(dag.out[kEntryBlock], (U{0, 6}));
  const PathNumbering num = NumberPaths(dag);
  // NP: D = 1, C = 1 (its dummy C->EXIT), B = C + D = 2, A = 2,
  // ENTRY = A + B (via the dummy) = 4.
  EXPECT_EQ(num.total(), 4);
  // Val: ENTRY->A 0, dummy ENTRY->B = NP(A) = 2 (Weber: "the edge with
  // Val = 2 from A to B represents reinitialising r to 2 when we take the
  // back edge"), B->C 0, B->D = NP(C) = 1.
  EXPECT_EQ(num.val[0], 0);
  EXPECT_EQ(num.val[6], 2);
  EXPECT_EQ(num.val[2], 0);
  EXPECT_EQ(num.val[3], 1);
  EXPECT_EQ(num.val[4], 0);
  // Paths: ABC 0, ABD 1, BC 2, BD 3.  A path taking the back edge ends at
  // C without EXIT.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{3, 5, 1}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(6, 1), &inc,
                              &err));
  // Kruskal by index: d0 ENTRY-A, d1 A-B, d2 B-C, d3 B-D tree; d4 C-EXIT,
  // d5 D-EXIT, d6 ENTRY-B chords (3 = 7 - 6 + 2).  Potentials: all 0 but
  // D = Val(B->D) = 1.  Inc: back edge end C->EXIT 0, D->EXIT 1 + 0 - 0 = 1,
  // restart ENTRY->B 0 + 2 - 0 = 2.  So the back edge is instrumented as
  // count[r + 0]++; r = 2 — Weber's "r += backedge_inc; r = backedge_reset".
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, 0, 0, 0, 1, 2}));
  CheckDag(f, BackEdgeCuts(f), 3);
}

// Two back edges into one header, one of them from a latch that also leaves
// the function: the LLVM example of Weber's report (bb8 header, bb12 and
// bb4 latches, bb4 -> exit).
//   blocks: ENTRY 0 (bb), EXIT 1, bb8 2, bb12 3, bb18 4, bb4 5.
Function TwoLatches() {
  return Make(6, {{0, 2, kEdgeFallthru},  // 0 bb->bb8
                  {2, 3, kEdgeTrue},      // 1 bb8->bb12
                  {2, 4, kEdgeFalse},     // 2 bb8->bb18
                  {3, 2, kEdgeFallthru},  // 3 bb12->bb8 (back edge)
                  {4, 5, kEdgeFallthru},  // 4 bb18->bb4
                  {5, 2, kEdgeTrue},      // 5 bb4->bb8 (back edge)
                  {5, 1, kEdgeFalse}});   // 6 bb4->EXIT
}

TEST(PathNumbering, TwoBackEdgesIntoOneHeaderAndALatchThatReturns) {
  const Function f = TwoLatches();
  // DFS: ENTRY, bb8, bb12 (3->2 retreats), bb18, bb4 (5->2 retreats).
  EXPECT_EQ(FindBackEdges(f), (U{3, 5}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  // One kStart ENTRY->bb8 for both back edges (DAG edge 7); bb4 has two
  // DAG edges to EXIT: d5 = kBackEnd of 5 and d6 = its real exit edge.
  ASSERT_EQ(dag.edges.size(), 8u);
  EXPECT_EQ(dag.start_edge[2], 7);
  EXPECT_EQ(dag.out[5], (U{5, 6}));
  EXPECT_EQ(dag.edges[5].dst, kExitBlock);
  EXPECT_EQ(dag.edges[6].dst, kExitBlock);
  EXPECT_EQ(dag.edges[5].kind, DagEdge::kBackEnd);
  EXPECT_EQ(dag.edges[6].kind, DagEdge::kCfg);
  const PathNumbering num = NumberPaths(dag);
  // NP: bb4 = 2 (kBackEnd, exit), bb18 = 2, bb12 = 1 (kBackEnd),
  // bb8 = 1 + 2 = 3, ENTRY = bb8 + bb8 (via kStart) = 6.
  // Val: bb8->bb18 = NP(bb12) = 1; bb4's kBackEnd 0, bb4->EXIT 1; kStart 3.
  EXPECT_EQ(num.total(), 6);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(ValOf(dag, num, 5), 0);
  EXPECT_EQ(ValOf(dag, num, 6), 1);
  EXPECT_EQ(num.val[7], 3);
  // The parallel edges bb4->EXIT give paths 1 (back edge) and 2 (return):
  // they must differ (Weber's "two edges from a block to the exit block").
  //   0 bb bb8 bb12 |   1 bb bb8 bb18 bb4 |   2 bb bb8 bb18 bb4 EXIT
  //   3 bb8 bb12 |      4 bb8 bb18 bb4 |      5 bb8 bb18 bb4 EXIT
  // Unlike Weber's LLVM pass (9 paths, one restart edge per back edge),
  // the header has one restart: the path after either back edge is the same
  // path, and which back edge was taken is the previous path's end.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 3}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{2, 4, 5, 1}));
  Path p1, p2;
  ASSERT_TRUE(DecodePath(dag, num, 1, &p1));
  ASSERT_TRUE(DecodePath(dag, num, 2, &p2));
  EXPECT_EQ(p1.back(), 5u);
  EXPECT_EQ(p2.back(), 6u);
  // Edge counts of path 1: the back edge 5 is counted through its kBackEnd.
  std::vector<uint64_t> counts(7, 0);
  AddPathToEdgeCounts(dag, p1, 3, &counts);
  EXPECT_EQ(counts, (std::vector<uint64_t>{3, 0, 3, 0, 3, 3, 0}));
  // Counts add modulo 2^64: a -1 (undoing a pre-count) takes one back off.
  AddPathToEdgeCounts(dag, p1, UINT64_MAX, &counts);
  EXPECT_EQ(counts, (std::vector<uint64_t>{2, 0, 2, 0, 2, 2, 0}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(7, 1), &inc,
                              &err));
  // Weights: 1 per CFG edge; the restart ENTRY->bb8 stands for both back
  // edges: 2.  Kruskal: d7 ENTRY-bb8 (2) tree; then by index d0 ENTRY-bb8
  // chord, d1, d2 tree, d3 bb12-EXIT chord, d4 tree, d5, d6 bb4-EXIT chords
  // (4 = 8 - 6 + 2).  Potentials: ENTRY = EXIT = 0, bb8 = bb12 = Val(d7)
  // = 3, bb18 = bb4 = 3 + 1 = 4.  Inc: d0 0 + 0 - 3 = -3; d3 3 + 0 - 0 = 3;
  // d5 4 + 0 - 0 = 4; d6 4 + 1 - 0 = 5; the restart 0.  So both back edges
  // end with count[r + 3 or 4]++ and restart with r = 0, and the first
  // entry starts with r = -3.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{false, true, true, false, true,
                                            false, false, true}));
  EXPECT_EQ(inc.inc,
            (std::vector<uint64_t>{Neg(3), 0, 0, 3, 0, 4, 5, 0}));
  CheckDag(f, BackEdgeCuts(f), 4);
}

TEST(PathNumbering, SelfLoop) {
  // 0->2, 2->2 (self-loop), 2->1.
  const Function f = Make(3, {{0, 2, kEdgeFallthru},
                              {2, 2, kEdgeTrue},
                              {2, 1, kEdgeFalse}});
  EXPECT_EQ(FindBackEdges(f), (U{1}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Block 2: kBackEnd 2->EXIT (Val 0), 2->EXIT (Val 1): NP 2.
  // ENTRY: 0->2 (Val 0), kStart ENTRY->2 (Val 2): NP 4.
  EXPECT_EQ(num.total(), 4);
  EXPECT_EQ(ValOf(dag, num, 1), 0);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(num.val[dag.start_edge[2]], 2);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2}));     // enters, loops
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 1}));  // enters, returns
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{2}));        // loops again
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 1}));     // returns after a loop
  CheckDag(f, BackEdgeCuts(f), 5);

  // Two self-loops on one block and a loop around it.
  const Function g = Make(4, {{0, 2, 0},
                              {2, 2, kEdgeSwitch},
                              {2, 2, kEdgeSwitch},
                              {2, 3, kEdgeSwitch},
                              {3, 2, kEdgeTrue},
                              {3, 3, kEdgeFalse},
                              {3, 1, 0}});
  EXPECT_EQ(FindBackEdges(g), (U{1, 2, 4, 5}));
  // NP(3) = 2 back-edge ends + EXIT = 3, NP(2) = 2 + NP(3) = 5; ENTRY: 2,
  // restart at 2 (after 1, 2 or 4), restart at 3 (after 5): 5 + 5 + 3.
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 6).total, 13);
}

TEST(PathNumbering, ParallelCfgEdges) {
  // switch (x) { case 1: case 2: A; default: } — two edges 2->3.
  //   0->2; 2->3, 2->3, 2->4; 3->4; 4->1.
  const Function f = Make(5, {{0, 2, 0},
                              {2, 3, kEdgeSwitch},
                              {2, 3, kEdgeSwitch},
                              {2, 4, kEdgeSwitch},
                              {3, 4, kEdgeFallthru},
                              {4, 1, 0}});
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Block 2: NP(3) = 1, NP(3) = 1, NP(4) = 1: Val 0, 1, 2; 3 paths that
  // differ only in the switch edge taken.
  EXPECT_EQ(num.total(), 3);
  EXPECT_EQ(ValOf(dag, num, 1), 0);
  EXPECT_EQ(ValOf(dag, num, 2), 1);
  EXPECT_EQ(ValOf(dag, num, 3), 2);
  EXPECT_EQ(BlocksOf(dag, num, 0), BlocksOf(dag, num, 1));
  std::vector<uint64_t> counts(6, 0);
  for (unsigned id = 0; id < 3; ++id) {
    Path p;
    ASSERT_TRUE(DecodePath(dag, num, id, &p));
    AddPathToEdgeCounts(dag, p, 10 + id, &counts);
  }
  // Each parallel edge keeps its own count.
  EXPECT_EQ(counts, (std::vector<uint64_t>{33, 10, 11, 12, 21, 33}));
  CheckDag(f, {}, 7);
}

// Two entries into the cycle 3 <-> 4: irreducible.
//   0->2; 2->3 | 2->4; 3->4, 3->1; 4->3.
Function Irreducible(bool swap_entries) {
  const uint32_t first = swap_entries ? 4 : 3, second = swap_entries ? 3 : 4;
  return Make(5, {{0, 2, 0},
                  {2, first, kEdgeTrue},
                  {2, second, kEdgeFalse},
                  {3, 4, kEdgeTrue},
                  {3, 1, kEdgeFalse},
                  {4, 3, 0}});
}

// The dominator back edges {u->w : w dominates u} of the blocks reachable
// from ENTRY along path edges, and whether the reachable graph is reducible
// (acyclic once they are removed).  Up to 64 blocks.
struct Loops {
  std::vector<bool> reachable;
  U dominator_back_edges;
  bool reducible = true;
};

Loops FindLoops(const Function& f) {
  const uint32_t n = static_cast<uint32_t>(f.blocks.size());
  Loops l;
  l.reachable.assign(n, false);
  std::vector<std::vector<uint32_t>> succ(n), pred(n);
  for (size_t i = 0; i < f.edges.size(); ++i)
    if (InDag(f.edges[i])) {
      succ[f.edges[i].src].push_back(static_cast<uint32_t>(i));
      pred[f.edges[i].dst].push_back(f.edges[i].src);
    }
  std::vector<uint32_t> stack{kEntryBlock};
  l.reachable[kEntryBlock] = true;
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    for (uint32_t i : succ[v])
      if (!l.reachable[f.edges[i].dst]) {
        l.reachable[f.edges[i].dst] = true;
        stack.push_back(f.edges[i].dst);
      }
  }
  uint64_t all = 0;
  for (uint32_t v = 0; v < n; ++v)
    if (l.reachable[v]) all |= uint64_t{1} << v;
  std::vector<uint64_t> dom(n, all);
  dom[kEntryBlock] = uint64_t{1} << kEntryBlock;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t v = 0; v < n; ++v) {
      if (v == kEntryBlock || !l.reachable[v]) continue;
      uint64_t d = all;
      for (uint32_t u : pred[v])
        if (l.reachable[u]) d &= dom[u];
      d |= uint64_t{1} << v;
      if (d != dom[v]) dom[v] = d, changed = true;
    }
  }
  std::vector<bool> is_back(f.edges.size(), false);
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    if (InDag(e) && l.reachable[e.src] && (dom[e.src] >> e.dst & 1)) {
      l.dominator_back_edges.push_back(static_cast<uint32_t>(i));
      is_back[i] = true;
    }
  }
  // Kahn over the reachable graph without the dominator back edges.
  std::vector<uint32_t> indeg(n, 0);
  for (size_t i = 0; i < f.edges.size(); ++i)
    if (InDag(f.edges[i]) && l.reachable[f.edges[i].src] && !is_back[i])
      ++indeg[f.edges[i].dst];
  std::vector<uint32_t> ready;
  size_t seen = 0, n_reach = 0;
  for (uint32_t v = 0; v < n; ++v)
    if (l.reachable[v]) {
      ++n_reach;
      if (indeg[v] == 0) ready.push_back(v);
    }
  while (!ready.empty()) {
    const uint32_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (uint32_t i : succ[v])
      if (!is_back[i] && --indeg[f.edges[i].dst] == 0)
        ready.push_back(f.edges[i].dst);
  }
  l.reducible = seen == n_reach;
  return l;
}

TEST(PathNumbering, IrreducibleRegion) {
  const Function f = Irreducible(false);
  const Loops loops = FindLoops(f);
  EXPECT_FALSE(loops.reducible);
  EXPECT_TRUE(loops.dominator_back_edges.empty());  // no natural loop
  // DFS ENTRY, 2, 3 (edge 1), 4 (edge 3): 4->3 retreats.  The cycle is
  // broken although neither 3 nor 4 dominates the other.
  EXPECT_EQ(FindBackEdges(f), (U{5}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NP: 4 = 1 (kBackEnd), 3 = NP(4) + EXIT = 2, 2 = NP(3) + NP(4) = 3,
  // ENTRY = NP(2) + NP(3) via kStart ENTRY->3 = 5.
  // Val: 2->4 = NP(3) = 2; 3->1 = NP(4) = 1; kStart = NP(2) = 3.
  EXPECT_EQ(num.total(), 5);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{3, 4}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{3, 1}));
  CheckDag(f, BackEdgeCuts(f), 8);

  // Entered the other way round, the DFS reaches 4 first and 3->4 retreats:
  // NP(3) = kBackEnd + EXIT = 2, NP(4) = 2, NP(2) = 4, ENTRY = 4 + NP(4).
  const Function g = Irreducible(true);
  EXPECT_EQ(FindBackEdges(g), (U{3}));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 9).total, 6);
}

TEST(FindBackEdges, ReducibleLoopsGiveExactlyTheLatches) {
  // do { do { } while (c1) /*4->3*/; } while (c2) /*5->2*/; plus a
  // `continue` in the outer loop (3->2 would be a second latch of 2).
  //   0->2, 2->3, 3->4, 3->2, 4->3, 4->5, 5->2, 5->6, 6->1.
  const Function f = Make(7, {{0, 2, 0},
                              {2, 3, 0},
                              {3, 4, kEdgeTrue},
                              {3, 2, kEdgeFalse},
                              {4, 3, kEdgeTrue},
                              {4, 5, kEdgeFalse},
                              {5, 2, kEdgeTrue},
                              {5, 6, kEdgeFalse},
                              {6, 1, 0}});
  const Loops loops = FindLoops(f);
  EXPECT_TRUE(loops.reducible);
  EXPECT_EQ(loops.dominator_back_edges, (U{3, 4, 6}));
  EXPECT_EQ(FindBackEdges(f), (U{3, 4, 6}));
  CheckDag(f, BackEdgeCuts(f), 10);

  // A cycle no path from ENTRY reaches is broken too (7 <-> 8).  Its
  // restart edge ENTRY->7 numbers its paths although they never run:
  // ENTRY 2 EXIT | 7 8 (back) | 7 8 EXIT.
  const Function g = Make(9, {{0, 2, 0},
                              {2, 1, 0},
                              {7, 8, 0},
                              {8, 7, 0},
                              {8, 1, 0}});
  EXPECT_EQ(FindBackEdges(g), (U{3}));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 11).total, 3);
}

// gcov's model of setjmp/longjmp and calls that may not return:
//   0: ENTRY->2        1: ENTRY->3 fake (abnormal entry to the receiver 3)
//   2: 2->3            3: 2->5 abnormal (not in the DAG)
//   4: 3->4            5: 3->5
//   6: 4->EXIT fake (the call in 4 may not return)
//   7: 4->3 abnormal|ignored (the longjmp, replaced by the fakes)
//   8: 4->5            9: 5->EXIT
Function FakeAndAbnormal() {
  return Make(6, {{0, 2, kEdgeFallthru},
                  {0, 3, kEdgeFake},
                  {2, 3, kEdgeFallthru},
                  {2, 5, kEdgeAbnormal},
                  {3, 4, kEdgeTrue},
                  {3, 5, kEdgeFalse},
                  {4, 1, kEdgeFake},
                  {4, 3, kEdgeAbnormal | kEdgeIgnored},
                  {4, 5, kEdgeFallthru},
                  {5, 1, kEdgeFallthru}});
}

TEST(PathNumbering, FakeEdgesInAbnormalEdgesOut) {
  const Function f = FakeAndAbnormal();
  EXPECT_TRUE(IsPathEdge(f.edges[1]));
  EXPECT_FALSE(IsPathEdge(f.edges[3]));
  EXPECT_TRUE(IsPathEdge(f.edges[6]));
  EXPECT_FALSE(IsPathEdge(f.edges[7]));
  EXPECT_FALSE(IsPathEdge(Edge{2, 3, kEdgeIgnored, kNoCounter}));
  EXPECT_TRUE(IsPathEdge(Edge{2, 3, kEdgeEh, kNoCounter}));
  // 4->3 would close a loop, but it is not a path edge.
  EXPECT_TRUE(FindBackEdges(f).empty());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, {}, &dag, &err)) << err;
  EXPECT_EQ(dag.dag_edge_of_cfg,
            (std::vector<int64_t>{0, 1, 2, -1, 3, 4, 5, -1, 6, 7}));
  const PathNumbering num = NumberPaths(dag);
  // NP: 5 = 1, 4 = EXIT + 5 = 2, 3 = 2 + 1 = 3, 2 = 3, ENTRY = 2 + 3 = 6.
  // Val: fake ENTRY->3 = NP(2) = 3; 3->5 = NP(4) = 2; 4->5 = 1.
  EXPECT_EQ(num.total(), 6);
  EXPECT_EQ(ValOf(dag, num, 1), 3);
  EXPECT_EQ(ValOf(dag, num, 5), 2);
  EXPECT_EQ(ValOf(dag, num, 8), 1);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4, 1}));  // call didn't return
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{0, 3, 4, 1}));  // abnormal entry
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{0, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{0, 3, 5, 1}));

  PathIncrements inc;
  ASSERT_TRUE(PlaceIncrements(f, dag, std::vector<uint64_t>(10, 1), &inc,
                              &err));
  // The fake ENTRY->3 joins first (d1, Inc 0: an abnormal entry sets
  // r = 0); then by index: d0 ENTRY-2 tree; d2 2-3 chord; d3 3-4, d4 3-5
  // tree; d5 4-EXIT, d6 4-5, d7 5-EXIT chords (4 = 8 - 6 + 2).
  // Potentials: ENTRY = EXIT = 2 = 0, 3 = Val(fake) = 3, 4 = 3, 5 = 3 + 2
  // = 5.  Inc: 2->3 0 + 0 - 3 = -3; 4->EXIT 3 - 0 = 3; 4->5 3 + 1 - 5 = -1;
  // 5->EXIT 5.  E.g. abnormal entry then 3 4 5: 0 - 1 + 5 = 4.
  EXPECT_EQ(inc.in_tree, (std::vector<bool>{true, true, false, true, true,
                                            false, false, false}));
  EXPECT_EQ(inc.inc, (std::vector<uint64_t>{0, 0, Neg(3), 0, 0, 3, Neg(1),
                                            5}));
  // Heavy weights elsewhere do not push the fake edge out of the tree.
  ASSERT_TRUE(PlaceIncrements(
      f, dag, {1, 0, 1000, 0, 1000, 1000, 0, 0, 1000, 1000}, &inc, &err));
  EXPECT_TRUE(inc.in_tree[1]);
  EXPECT_EQ(inc.inc[1], 0u);
  CheckDag(f, {}, 12);
}

TEST(PathNumbering, CutBlock) {
  // Figure 1 cut at D (block 5): paths end on entering D and restart at D.
  const Function f = PaperFigure1();
  PathCuts cuts;
  cuts.blocks = {5};
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  ASSERT_EQ(dag.n_vertices, 9u);
  EXPECT_EQ(dag.in_vertex[5], 8u);  // D_in
  EXPECT_EQ(dag.BlockOf(8), 5u);
  // d4 B->D_in, d5 C->D_in, d10 kStart ENTRY->D, d11 kCutEnd D_in->EXIT.
  EXPECT_EQ(dag.edges[4].dst, 8u);
  EXPECT_EQ(dag.edges[5].dst, 8u);
  EXPECT_EQ(dag.start_edge[5], 10);
  EXPECT_EQ(dag.cut_end_edge[5], 11);
  const PathNumbering num = NumberPaths(dag);
  // NP: D_in = 1, F = E = 1, D = 2, C = 1, B = C + D_in = 2, A = C + B = 3,
  // ENTRY = A + D (kStart) = 5.  Val: A->B = 1, B->D = 1, D->E = 1,
  // kStart = 3.
  EXPECT_EQ(num.total(), 5);
  EXPECT_EQ(num.val[10], 3);
  // A path cut at D lists D last (its kCfg edge enters D_in); D's code runs
  // in the next path, which starts at D.
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 5}));
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{5, 7, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 4), (U{5, 6, 7, 1}));
  CheckDag(f, cuts, 13);

  // A loop header cut as a block: its back edge enters it like any edge.
  const Function g = PaperLoop();
  PathCuts gc;
  gc.blocks = {3};
  ASSERT_TRUE(BuildPathDag(g, gc, &dag, &err)) << err;
  EXPECT_EQ(dag.edges[dag.dag_edge_of_cfg[4]].kind, DagEdge::kCfg);
  EXPECT_EQ(dag.edges[dag.dag_edge_of_cfg[4]].dst, dag.in_vertex[3]);
  // ENTRY A B_in | B C B_in | B D EXIT.
  EXPECT_EQ(CheckDag(g, gc, 14).total, 3);
}

TEST(BuildPathDag, RejectsBadCuts) {
  const Function f = PaperLoop();
  PathDag dag;
  std::string err;
  auto fails = [&](const PathCuts& c, const std::string& text) {
    err.clear();
    EXPECT_FALSE(BuildPathDag(f, c, &dag, &err)) << text;
    EXPECT_NE(err.find(text), std::string::npos) << err;
  };
  fails({}, "cycle");                  // the loop is not cut
  fails({{1}, {}}, "cycle");           // a cut edge off the loop
  fails({{9}, {}}, "out of range");
  fails({{4, 4}, {}}, "listed twice");
  fails({{5}, {}}, "cannot be cut");   // into EXIT
  fails({{4}, {3}}, "targets cut block 3");
  fails({{}, {0}}, "not a basic block");
  fails({{}, {1}}, "not a basic block");
  fails({{}, {6}}, "not a basic block");
  fails({{}, {3, 3}}, "listed twice");
  // A cut edge that is not a path edge.
  const Function g = FakeAndAbnormal();
  err.clear();
  EXPECT_FALSE(BuildPathDag(g, {{7}, {}}, &dag, &err));
  EXPECT_NE(err.find("cannot be cut"), std::string::npos) << err;
  // No ENTRY/EXIT.
  EXPECT_FALSE(BuildPathDag(Make(1, {}), {}, &dag, &err));
}

TEST(PathNumbering, NoPathsAndEmptyFunction) {
  // EXIT unreachable (an infinite loop): no paths, nothing decodes.
  const Function f = Make(3, {{0, 2, 0}, {2, 2, 0}});
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // 2: kBackEnd 2->EXIT: 1 path; ENTRY: 0->2 and kStart ENTRY->2: 2 paths.
  EXPECT_EQ(num.total(), 2);
  const Function g = Make(3, {{0, 2, 0}, {2, 2, kEdgeAbnormal}});
  ASSERT_TRUE(BuildPathDag(g, BackEdgeCuts(g), &dag, &err)) << err;
  EXPECT_EQ(NumberPaths(dag).total(), 0);
  Path p;
  EXPECT_FALSE(DecodePath(dag, NumberPaths(dag), 0, &p));
  EXPECT_EQ(CheckDag(g, BackEdgeCuts(g), 15).total, 0);
  // ENTRY->EXIT only.
  EXPECT_EQ(CheckDag(Make(2, {{0, 1, 0}}), {}, 16).total, 1);
  EXPECT_EQ(CheckDag(Make(2, {}), {}, 17).total, 0);
}

// ---------------------------------------------------------------------------
// A function with 2^70 paths.

// A chain of n diamonds: ENTRY -> h0; h_i -> a_i | b_i -> h_{i+1};
// h_n -> EXIT.  h_i = 2 + 3i, a_i = 3 + 3i, b_i = 4 + 3i; edges by source:
// 0 ENTRY->h0, 1+4i h_i->a_i, 2+4i h_i->b_i, 3+4i a_i->h_{i+1},
// 4+4i b_i->h_{i+1}, 1+4n h_n->EXIT.
Function DiamondChain(uint32_t n) {
  std::vector<E> es{{0, 2, kEdgeFallthru}};
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = 2 + 3 * i;
    es.push_back({h, h + 1, kEdgeTrue});
    es.push_back({h, h + 2, kEdgeFalse});
    es.push_back({h + 1, h + 3, kEdgeFallthru});
    es.push_back({h + 2, h + 3, kEdgeFallthru});
  }
  es.push_back({2 + 3 * n, kExitBlock, kEdgeFallthru});
  return Make(3 + 3 * n, es);
}

constexpr uint32_t kDiamonds = 70;

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

// ---------------------------------------------------------------------------
// Random CFGs.

// A random CFG, edges grouped by source.  `well_formed`: every block
// reachable from ENTRY and reaching EXIT along path edges (a random spanning
// tree from ENTRY, and from every block an edge to EXIT or a later block);
// otherwise edges at random only.  Extra edges go anywhere (loops,
// self-loops, parallel edges) with random flags; fake edges as gcov adds
// them (ENTRY->w for distinct w, w->EXIT).
Function RandomCfg(std::mt19937_64& rng, bool well_formed) {
  const uint32_t nb = 3 + static_cast<uint32_t>(rng() % 9);
  auto pick = [&](uint32_t lo, uint32_t hi) {  // [lo, hi)
    return lo + static_cast<uint32_t>(rng() % (hi - lo));
  };
  auto some_block_or_entry = [&] {
    const uint32_t b = pick(1, nb);
    return b == kExitBlock ? kEntryBlock : b;
  };
  auto flags = [&]() -> uint32_t {
    switch (rng() % 12) {
      case 0: return kEdgeAbnormal;
      case 1: return kEdgeAbnormal | kEdgeIgnored;
      case 2: return kEdgeIgnored;
      case 3: return kEdgeEh;
      case 4: return kEdgeSwitch;
      case 5: return kEdgeTrue;
      case 6: return kEdgeFalse;
      default: return kEdgeFallthru;
    }
  };
  std::vector<E> es;
  if (well_formed) {
    for (uint32_t b = 2; b < nb; ++b) {
      uint32_t src = pick(1, b);
      if (src == kExitBlock) src = kEntryBlock;
      es.push_back({src, b, kEdgeFallthru});
      uint32_t dst = pick(b + 1, nb + 1);
      if (dst == nb) dst = kExitBlock;
      es.push_back({b, dst, kEdgeFallthru});
    }
  }
  const uint32_t extra = static_cast<uint32_t>(rng() % (nb + 3));
  for (uint32_t k = 0; k < extra; ++k)
    es.push_back({some_block_or_entry(), pick(1, nb), flags()});
  if (!es.empty() && rng() % 3 == 0) {  // a parallel copy (switch cases)
    E dup = es[rng() % es.size()];
    dup.flags = kEdgeSwitch;
    es.push_back(dup);
  }
  if (rng() % 3 == 0) {
    std::vector<bool> has_fake(nb, false);
    for (int k = 0; k < 2; ++k) {
      const uint32_t w = pick(2, nb);
      if (!has_fake[w]) es.push_back({kEntryBlock, w, kEdgeFake});
      has_fake[w] = true;
      es.push_back({pick(2, nb), kExitBlock, kEdgeFake});
    }
  }
  std::stable_sort(es.begin(), es.end(),
                   [](const E& a, const E& b) { return a.src < b.src; });
  return Make(nb, es);
}

size_t CountPathEdges(const Function& f) {
  size_t n = 0;
  for (const Edge& e : f.edges) n += InDag(e);
  return n;
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
// Kept pre-counts (SettlePrecounts).

// A loop whose body calls a function that may not return (block 3, fake
// edge 3->EXIT): 0->2 2->3 3->4 4->2 (back) 4->5 5->EXIT, 3->EXIT fake.
// Paths (back edge 4->2 cut): from ENTRY 2 3 {EXIT | 4 back | 4 5 EXIT},
// from 2 (after the back edge) the same.  Three iterations, the third
// call exits the program: true paths "ENTRY 2 3 4 back" once, "2 3 4 back"
// once, "2 3 EXIT(fake)" once.  Stored with kept pre-counts: every call
// reached pre-counted its prefix (3 times), every completed path counted.
// A loop 2 -> 3 -> 4 -> 2 whose block 3 calls a function that may not
// return (fake edge 3 -> EXIT), left at 4 -> 5 -> EXIT.
Function LoopWithExitingCall() {
  return Make(6, {{0, 2, kEdgeFallthru},
                  {2, 3, kEdgeFallthru},
                  {3, 4, kEdgeFallthru},
                  {3, 1, kEdgeFake},
                  {4, 2, kEdgeTrue},
                  {4, 5, kEdgeFalse},
                  {5, 1, kEdgeFallthru}});
}

TEST(SettlePrecounts, LoopWhoseThirdCallExits) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  ASSERT_EQ(cuts.edges, (U{4}));
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // NP: 5 = 1, 4 = back + 5 = 2, 3 = 4 + fake = 3, 2 = 3, ENTRY = 2 (via
  // 0->2) + 3 (start at 2) = 6.  Val: 3->4 = 0, 3->EXIT = NP(4) = 2;
  // 4->back 0, 4->5 1; ENTRY->2 0, start->2 3.
  ASSERT_EQ(num.total(), 6);
  EXPECT_EQ(BlocksOf(dag, num, 0), (U{0, 2, 3, 4}));     // ENTRY .. back
  EXPECT_EQ(BlocksOf(dag, num, 1), (U{0, 2, 3, 4, 5, 1}));
  EXPECT_EQ(BlocksOf(dag, num, 2), (U{0, 2, 3, 1}));     // call exited
  EXPECT_EQ(BlocksOf(dag, num, 3), (U{2, 3, 4}));        // 2 .. back
  EXPECT_EQ(BlocksOf(dag, num, 5), (U{2, 3, 1}));        // call exited
  // Stored: pre-count of "ENTRY 2 3" (2) once, of "2 3" (5) twice; path 0
  // once, path 3 once.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {2, 1}, {3, 1}, {5, 2}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  // Path 0 went on past the first call: 2 loses it (0 left, dropped);
  // path 3 went on past a call reached from 2: 5 keeps 2 - 1.
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, 1}}));
  // The path-derived edge counts are then the edge profile: 3->EXIT once.
  std::vector<uint64_t> edge_counts(f.edges.size(), 0);
  Path p;
  for (const auto& [id, n] : counts) {
    ASSERT_TRUE(DecodePath(dag, num, Z(id), &p));
    AddPathToEdgeCounts(dag, p, n, &edge_counts);
  }
  EXPECT_EQ(edge_counts, (std::vector<uint64_t>{1, 3, 2, 1, 2, 0, 0}));

  // A truncated path with no pre-count stored but a continuation: the
  // residue goes negative (verify reports it), nothing is lost.
  counts = {{0, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {2, Neg(1)}}));
  // Not a fake edge into EXIT: refused.
  EXPECT_FALSE(SettlePrecounts(dag, num, f, {2}, &counts, &err));
  EXPECT_NE(err.find("pre-count edge 2"), std::string::npos) << err;
}

// The loop of LoopWhoseThirdCallExits, its call cut short once from the
// header (path 5) with that pre-count not made: settling leaves path 5 at
// minus the one iteration that went on past the call, and the balance of
// block 2 (2 path ends at the back edge into it, paths from it 1 - 1)
// gives it back its 1.
TEST(BalanceStarts, TruncatedPathFromTheLoopHeader) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // True: ENTRY 2 3 4 back (0) once, 2 3 4 back (3) once, 2 3 cut short
  // (5) once.  Stored: the pre-count of "ENTRY 2 3" (2) once, 0 and 3
  // once, nothing at 5.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {2, 1}, {3, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, Neg(1)}}));
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{5, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {5, 1}}));
  // Nothing cut short: the balance adds nothing and keeps no zero.
  counts = {{0, 1}, {2, 1}, {3, 2}, {4, 1}};  // 3 twice; 4 = 2 3 4 5 EXIT
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{5, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 2}, {4, 1}}));
  // A listed path must start at the block and end cut short at a call,
  // or end into the block without starting there: not 2 3 4 back.
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{3, 2}}, &counts, &err));
  EXPECT_NE(err.find("balanced path 3 is neither a path from block 2 cut "
                     "short at a call nor one ending into it"),
            std::string::npos)
      << err;
  // Nor may a block balance two paths.
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{0, 2}, {5, 2}}, &counts, &err));
  EXPECT_NE(err.find("block 2 balances two paths"), std::string::npos)
      << err;
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{2, 2}}, &counts, &err));
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{5, 3}}, &counts, &err));
  EXPECT_FALSE(BalanceStarts(dag, num, f, {{6, 2}}, &counts, &err));
  EXPECT_NE(err.find("balanced path 6 cannot be decoded"), std::string::npos)
      << err;
}

// The other side of the balance: a path ending into block 2 (at the back
// edge) without starting there, its count not made.  One invocation that
// goes round twice and returns, no call cut short (no pre-counts): true
// ENTRY 2 3 4 back (0) once, 2 3 4 back (3) once, 2 3 4 5 EXIT (4) once;
// stored without path 0.  Ends into 2: 0 + 1, paths from 2: 1 + 1, so
// path 0 gets 1.
TEST(BalanceStarts, PathEndingIntoTheLoopHeader) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  std::map<uint64_t, uint64_t> counts{{3, 1}, {4, 1}};
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{0, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {3, 1}, {4, 1}}));
  // Three invocations, each straight through (ENTRY 2 3 4 5 EXIT, path 1):
  // path 0 never ran, and gets nothing.
  counts = {{1, 3}};
  ASSERT_TRUE(BalanceStarts(dag, num, f, {{0, 2}}, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{1, 3}}));
}

// LoopWithExitingCall invoked 3 times: ENTRY 2 3 4 back (0) then 2 3 4 5
// EXIT (4); ENTRY 2 3 cut short at the call (2); ENTRY 2 3 4 5 EXIT (1).
// Path 2's pre-count is not made (entry balance): settling leaves it at
// minus the 2 entries that went on past the call, and the 3 invocations
// give it back 3.
TEST(BalanceEntry, TruncatedPathFromTheEntry) {
  const Function f = LoopWithExitingCall();
  PathCuts cuts;
  cuts.edges = FindBackEdges(f);
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, cuts, &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // Stored: 0, 4 and 1 once; the pre-count of "2 3" (5) once (the second
  // round of the first invocation); nothing at 2.
  std::map<uint64_t, uint64_t> counts{{0, 1}, {1, 1}, {4, 1}, {5, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  EXPECT_EQ(counts,
            (std::map<uint64_t, uint64_t>{{0, 1}, {1, 1}, {2, Neg(2)}, {4, 1}}));
  ASSERT_TRUE(BalanceEntry(dag, num, f, 2, 3, &counts, &err)) << err;
  EXPECT_EQ(counts,
            (std::map<uint64_t, uint64_t>{{0, 1}, {1, 1}, {2, 1}, {4, 1}}));
  // Nothing cut short: the balance adds nothing and keeps no zero.
  counts = {{0, 1}, {1, 2}, {4, 1}, {5, 1}};
  ASSERT_TRUE(SettlePrecounts(dag, num, f, {3}, &counts, &err)) << err;
  ASSERT_TRUE(BalanceEntry(dag, num, f, 2, 3, &counts, &err)) << err;
  EXPECT_EQ(counts, (std::map<uint64_t, uint64_t>{{0, 1}, {1, 2}, {4, 1}}));
  // The path must start at the entry edge and end cut short at a call.
  for (uint64_t path : {0u, 1u, 5u}) {
    EXPECT_FALSE(BalanceEntry(dag, num, f, path, 3, &counts, &err));
    EXPECT_NE(err.find("entry-balanced path " + std::to_string(path) +
                       " is not a path from the function's entry cut short "
                       "at a call"),
              std::string::npos)
        << err;
  }
  EXPECT_FALSE(BalanceEntry(dag, num, f, 6, 3, &counts, &err));
  EXPECT_NE(err.find("entry-balanced path 6 cannot be decoded"),
            std::string::npos)
      << err;
}

// Random CFGs with random calls that may not return and random cuts: the
// stored counts are simulated forward from random true path counts (every
// pre-counting block a path reaches counts its prefix, every path not cut
// short counts itself), and settling must give the true counts back.
TEST(SettlePrecounts, RandomCfgsAgainstForwardSimulation) {
  std::mt19937_64 rng(0x5e771e);
  int checked = 0, with_precounts = 0, with_cut_blocks = 0;
  for (int g = 0; g < 300; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    Function f = RandomCfg(rng, /*well_formed=*/true);
    const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
    // Calls that may not return: fake edges block->EXIT (one per block).
    std::vector<bool> fake(nb, false);
    for (const Edge& e : f.edges)
      if ((e.flags & kEdgeFake) && e.dst == kExitBlock) fake[e.src] = true;
    for (uint32_t b = 2; b < nb; ++b)
      if (!fake[b] && rng() % 2) {
        f.edges.push_back(Edge{b, kExitBlock, kEdgeFake, kNoCounter});
        fake[b] = true;
      }
    std::stable_sort(f.edges.begin(), f.edges.end(),
                     [](const Edge& a, const Edge& b) { return a.src < b.src; });
    U precount;
    for (uint32_t i = 0; i < f.edges.size(); ++i)
      if ((f.edges[i].flags & kEdgeFake) && f.edges[i].dst == kExitBlock &&
          f.edges[i].src != kEntryBlock && rng() % 4 != 0)
        precount.push_back(i);
    PathPlan plan;
    std::string err;
    // Half the graphs cut at blocks too (any limit >= |path edges| plans).
    const uint64_t limit = rng() % 2 ? kMaxInstrumentedPaths
                                     : CountPathEdges(f) + rng() % 3;
    if (!PlanPaths(f, {}, limit, &plan, &err)) continue;
    PathDag dag;
    ASSERT_TRUE(BuildPathDag(f, plan.cuts, &dag, &err)) << err;
    const PathNumbering num = NumberPaths(dag);
    std::vector<Path> paths;
    if (!AllPaths(dag, CountByDp(dag), 2000, &paths)) continue;
    std::vector<int64_t> fake_of(dag.n_vertices, -1);
    for (uint32_t e : precount)
      if (dag.dag_edge_of_cfg[e] >= 0)
        fake_of[dag.edges[dag.dag_edge_of_cfg[e]].src] =
            dag.dag_edge_of_cfg[e];
    std::map<uint64_t, uint64_t> truth, stored;
    for (const Path& p : paths) {
      if (rng() % 3 == 0) continue;
      const uint64_t n = 1 + rng() % 5;
      truth[Low64(EncodePath(num, p))] += n;
      mpz_class prefix = 0;
      bool cut_short = false;
      for (uint32_t d : p) {
        const int64_t fk = fake_of[dag.edges[d].src];
        if (fk >= 0) {  // the call is reached: its pre-count runs
          stored[Low64(prefix + num.val[fk])] += n;
          cut_short = fk == static_cast<int64_t>(d);
        }
        prefix += num.val[d];
      }
      if (!cut_short) stored[Low64(prefix)] += n;  // the path's own end
    }
    with_precounts += !precount.empty();
    with_cut_blocks += !plan.cuts.blocks.empty();
    ASSERT_TRUE(SettlePrecounts(dag, num, f, precount, &stored, &err)) << err;
    EXPECT_EQ(stored, truth);
    ++checked;
  }
  EXPECT_GT(checked, 250);
  EXPECT_GT(with_precounts, 200);
  EXPECT_GT(with_cut_blocks, 30);
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

// ---------------------------------------------------------------------------
// FindCountedLoops: loops whose iterations take one path, counted in a
// local instead of a memory update per iteration.

// Everything FindCountedLoops needs, for a function cut at its back edges.
struct Planned {
  PathCuts cuts;
  PathDag dag;
  PathIncrements inc;
};
Planned PlanForLoops(const Function& f, const std::vector<uint64_t>& w = {}) {
  Planned p;
  std::string err;
  p.cuts.edges = FindBackEdges(f);
  EXPECT_TRUE(BuildPathDag(f, p.cuts, &p.dag, &err)) << err;
  std::vector<uint64_t> weights = w;
  if (weights.empty()) weights.assign(f.edges.size(), 1);
  EXPECT_TRUE(PlaceIncrements(f, p.dag, weights, &p.inc, &err)) << err;
  return p;
}

TEST(FindCountedLoops, OnePathLoopsOnly) {
  // ENTRY->2; 2->3 (header) ; 3->4 body, 4->3 back; 3->5 exit; 5->EXIT.
  const Function simple = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 4, kEdgeTrue},
                                   {3, 5, kEdgeFalse},
                                   {4, 3, kEdgeFallthru},
                                   {5, 1, kEdgeFallthru}});
  Planned p = PlanForLoops(simple);
  std::vector<CountedLoop> loops =
      FindCountedLoops(simple, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].back_edge, 4u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[0].exits, (U{3}));
  // K is the number of the path "3 4 back": decode it.
  const PathNumbering num = NumberPaths(p.dag);
  EXPECT_EQ(BlocksOf(p.dag, num, loops[0].iteration), (U{3, 4}));
  EXPECT_EQ(loops[0].iteration - loops[0].start, loops[0].first_offset);
  // The first iteration, from ENTRY: register at the header 0 + Val... its
  // number is s + first_offset for s the register on entering (here the
  // increments of 0->2 and 2->3, a tree path: whatever they sum to).
  Path first;
  ASSERT_TRUE(DecodePath(p.dag, num, Z(0), &first));

  // An if inside the body: two paths per iteration, not counted.
  const Function two = Make(7, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 6, kEdgeFalse},
                                {3, 4, kEdgeTrue},
                                {3, 5, kEdgeFalse},
                                {4, 5, kEdgeFallthru},
                                {5, 2, kEdgeFallthru},
                                {6, 1, kEdgeFallthru}});
  p = PlanForLoops(two);
  EXPECT_TRUE(FindCountedLoops(two, p.dag, p.cuts, p.inc, {}).empty());

  // The simple loop with a call in its body (block 4) that may not return:
  // excluded by the caller -> not counted; a call that always returns
  // (same fake edge, not excluded) is fine.
  Function call = simple;
  call.edges.insert(call.edges.begin() + 5, Edge{4, 1, kEdgeFake, kNoCounter});
  p = PlanForLoops(call);
  std::vector<bool> excluded(6, false);
  excluded[4] = true;
  EXPECT_TRUE(FindCountedLoops(call, p.dag, p.cuts, p.inc, excluded).empty());
  loops = FindCountedLoops(call, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].exits, (U{3}));  // the fake edge is no exit

  // Nested: the inner one-path loop is counted, the outer is not (it holds
  // the inner header).  0->2 2->3 3->3 (self loop) 3->4 4->2 (back) 4->5
  // 5->EXIT.
  const Function nested = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 3, kEdgeTrue},
                                   {3, 4, kEdgeFalse},
                                   {4, 2, kEdgeTrue},
                                   {4, 5, kEdgeFalse},
                                   {5, 1, kEdgeFallthru}});
  p = PlanForLoops(nested);
  loops = FindCountedLoops(nested, p.dag, p.cuts, p.inc, {});
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[0].exits, (U{3}));
  EXPECT_EQ(loops[0].first_offset, loops[0].iteration - loops[0].start);

  // Two entries (irreducible): 0->2, 2->3, 2->4, 3->4, 4->3 (back), 4->5.
  const Function irr = Make(6, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 4, kEdgeFalse},
                                {3, 4, kEdgeFallthru},
                                {4, 3, kEdgeTrue},
                                {4, 5, kEdgeFalse},
                                {5, 1, kEdgeFallthru}});
  p = PlanForLoops(irr);
  EXPECT_TRUE(FindCountedLoops(irr, p.dag, p.cuts, p.inc, {}).empty());

  // An abnormal re-entry into the body (fake ENTRY edge): not counted.
  Function reentered = simple;
  reentered.edges.insert(reentered.edges.begin() + 1,
                         Edge{0, 4, kEdgeFake, kNoCounter});
  p = PlanForLoops(reentered);
  EXPECT_TRUE(
      FindCountedLoops(reentered, p.dag, p.cuts, p.inc, {}).empty());
}

// FindLoopEntries: every loop entered at its header alone, whatever its
// paths per iteration, with its entry edges (for multi-path loop entry
// cuts); cutting them keeps the DAG acyclic and never adds paths.
TEST(FindLoopEntries, LoopsEnteredAtTheirHeaderWithAnyPaths) {
  // Two paths per iteration: 0->2 2->3 (header) 3->4 3->7 (exit) 4->5
  // 4->6 5->6 6->3 (back, from the latch 6 where both paths merge) 7->EXIT.
  // Edge indices in this order.
  const Function two = Make(8, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeFallthru},
                                {3, 4, kEdgeTrue},
                                {3, 7, kEdgeFalse},
                                {4, 5, kEdgeTrue},
                                {4, 6, kEdgeFalse},
                                {5, 6, kEdgeFallthru},
                                {6, 3, kEdgeFallthru},
                                {7, 1, kEdgeFallthru}});
  PathCuts cuts;
  cuts.edges = FindBackEdges(two);
  ASSERT_EQ(cuts.edges, (U{7}));
  std::vector<LoopEntries> loops = FindLoopEntries(two, cuts);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].back_edge, 7u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  U body = loops[0].body;
  std::sort(body.begin(), body.end());
  EXPECT_EQ(body, (U{3, 4, 5, 6}));
  // Cut the entry too: still a DAG, no more paths than before.
  Planned before = PlanForLoops(two);
  PathCuts with = cuts;
  with.edges.push_back(1);
  std::sort(with.edges.begin(), with.edges.end());
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(two, with, &dag, &err)) << err;
  EXPECT_LE(NumberPaths(dag).total(), NumberPaths(before.dag).total());
  // Once the entry is cut, the header has two cut edges into it: not
  // listed again.
  EXPECT_TRUE(FindLoopEntries(two, with).empty());

  // Nested: both the inner self loop (3->3, entered by 2->3) and the outer
  // loop (back edge 4->2, entered by 0->2 from ENTRY) are listed.
  const Function nested = Make(6, {{0, 2, kEdgeFallthru},
                                   {2, 3, kEdgeFallthru},
                                   {3, 3, kEdgeTrue},
                                   {3, 4, kEdgeFalse},
                                   {4, 2, kEdgeTrue},
                                   {4, 5, kEdgeFalse},
                                   {5, 1, kEdgeFallthru}});
  cuts.edges = FindBackEdges(nested);
  loops = FindLoopEntries(nested, cuts);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].header, 3u);
  EXPECT_EQ(loops[0].entries, (U{1}));
  EXPECT_EQ(loops[1].header, 2u);
  EXPECT_EQ(loops[1].entries, (U{0}));  // out of ENTRY
  body = loops[1].body;
  std::sort(body.begin(), body.end());
  EXPECT_EQ(body, (U{2, 3, 4}));

  // Entered elsewhere than at its header (irreducible): not listed.
  const Function irr = Make(6, {{0, 2, kEdgeFallthru},
                                {2, 3, kEdgeTrue},
                                {2, 4, kEdgeFalse},
                                {3, 4, kEdgeFallthru},
                                {4, 3, kEdgeTrue},
                                {4, 5, kEdgeFalse},
                                {5, 1, kEdgeFallthru}});
  cuts.edges = FindBackEdges(irr);
  EXPECT_TRUE(FindLoopEntries(irr, cuts).empty());

  // Re-entered abnormally (a fake ENTRY edge into the body, or into the
  // header): not listed.
  Function reentered = two;
  reentered.edges.insert(reentered.edges.begin() + 1,
                         Edge{0, 4, kEdgeFake, kNoCounter});
  cuts.edges = FindBackEdges(reentered);
  EXPECT_TRUE(FindLoopEntries(reentered, cuts).empty());
  Function header_reentered = two;
  header_reentered.edges.insert(header_reentered.edges.begin() + 1,
                                Edge{0, 3, kEdgeFake, kNoCounter});
  cuts.edges = FindBackEdges(header_reentered);
  EXPECT_TRUE(FindLoopEntries(header_reentered, cuts).empty());

  // A header that is a cut block: not listed.
  cuts.edges = FindBackEdges(two);
  cuts.blocks = {3};
  // (the back edge may not target a cut block: the caller never asks; a
  // loop whose header is cut has nothing to gain)
  EXPECT_TRUE(FindLoopEntries(two, cuts).empty());
}

// On random CFGs, cutting every listed loop's entry edges as well as the
// back edges gives a valid DAG with no more paths, and each listed loop's
// header is entered only by its back edge and its entries.
TEST(FindLoopEntries, EntryCutsStayValidOnRandomCfgs) {
  std::mt19937_64 rng(0x6c0095);
  int listed = 0;
  for (int g = 0; g < 300; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/g % 2 == 0);
    PathCuts cuts;
    cuts.edges = FindBackEdges(f);
    PathDag dag;
    std::string err;
    if (!BuildPathDag(f, cuts, &dag, &err)) continue;
    const mpz_class before = NumberPaths(dag).total();
    PathCuts with = cuts;
    for (const LoopEntries& L : FindLoopEntries(f, cuts)) {
      ++listed;
      EXPECT_FALSE(L.entries.empty());
      for (uint32_t i : L.entries) {
        EXPECT_EQ(f.edges[i].dst, L.header);
        EXPECT_FALSE(f.edges[i].flags & kEdgeFake);
        EXPECT_NE(i, L.back_edge);
        with.edges.push_back(i);
      }
    }
    std::sort(with.edges.begin(), with.edges.end());
    with.edges.erase(std::unique(with.edges.begin(), with.edges.end()),
                     with.edges.end());
    PathDag cut_dag;
    ASSERT_TRUE(BuildPathDag(f, with, &cut_dag, &err)) << err;
    EXPECT_LE(NumberPaths(cut_dag).total(), before);
  }
  EXPECT_GT(listed, 50);
}

// The counted-loop instrumentation, simulated on random walks through
// random CFGs, gives exactly the path counts of the plain Ball-Larus
// instrumentation (each walk's paths decoded independently as the oracle).
TEST(FindCountedLoops, SimulatedCountsEqualTruePathCounts) {
  std::mt19937_64 rng(0x100b5);
  int graphs_with_loops = 0, loop_runs = 0, multi_iterations = 0;
  for (int g = 0; g < 400; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/true);
    const uint32_t nb = static_cast<uint32_t>(f.blocks.size());
    std::vector<uint64_t> w(f.edges.size());
    for (uint64_t& x : w) x = rng() % 100;
    Planned p = PlanForLoops(f, w);
    const PathNumbering num = NumberPaths(p.dag);
    if (num.total() > Z(1000000)) continue;
    std::vector<bool> excluded(nb, false);
    for (const Edge& e : f.edges)
      if ((e.flags & kEdgeFake) && e.dst == kExitBlock && rng() % 2)
        excluded[e.src] = true;
    const std::vector<CountedLoop> loops =
        FindCountedLoops(f, p.dag, p.cuts, p.inc, excluded);
    if (loops.empty()) continue;
    ++graphs_with_loops;
    // Per model edge: the loops it enters / leaves / closes.
    std::vector<std::vector<size_t>> enters(f.edges.size()),
        leaves(f.edges.size());
    std::vector<int> closes(f.edges.size(), -1);
    for (size_t l = 0; l < loops.size(); ++l) {
      for (uint32_t i : loops[l].entries) enters[i].push_back(l);
      for (uint32_t i : loops[l].exits) leaves[i].push_back(l);
      closes[loops[l].back_edge] = static_cast<int>(l);
    }
    std::vector<bool> is_cut(f.edges.size(), false);
    for (uint32_t i : p.cuts.edges) is_cut[i] = true;
    std::vector<std::vector<uint32_t>> succ(nb);
    for (uint32_t i = 0; i < f.edges.size(); ++i)
      if (IsPathEdge(f.edges[i]) && !(f.edges[i].flags & kEdgeFake))
        succ[f.edges[i].src].push_back(i);
    std::map<uint64_t, uint64_t> truth, counted;
    for (int walk = 0; walk < 30; ++walk) {
      // A random walk ENTRY .. EXIT of at most 300 edges.
      std::vector<uint32_t> edges;
      uint32_t v = kEntryBlock;
      while (v != kExitBlock && edges.size() < 300 && !succ[v].empty()) {
        const uint32_t i = succ[v][rng() % succ[v].size()];
        edges.push_back(i);
        v = f.edges[i].dst;
      }
      if (v != kExitBlock) continue;
      // Oracle: the walk's DAG paths, numbered.
      mpz_class id = 0;
      for (uint32_t i : edges) {
        const int64_t d = p.dag.dag_edge_of_cfg[i];
        id += num.val[d];
        if (is_cut[i] || f.edges[i].dst == kExitBlock) {
          ++truth[Low64(id)];
          if (is_cut[i]) id = num.val[p.dag.start_edge[f.edges[i].dst]];
        }
      }
      // The instrumentation, with counted loops.
      uint64_t r = 0;
      std::vector<uint64_t> s(loops.size(), 0), n(loops.size(), 0);
      for (uint32_t i : edges) {
        const uint64_t a = p.inc.inc[p.dag.dag_edge_of_cfg[i]];
        for (size_t l : leaves[i]) {
          const CountedLoop& L = loops[l];
          const uint64_t went_round = n[l] != 0;
          counted[s[l] + L.first_offset] += went_round;
          counted[L.iteration] += n[l] - went_round;
          if (!went_round) r += s[l] - L.start;
          loop_runs += 1;
          multi_iterations += n[l] > 1;
        }
        const Edge& e = f.edges[i];
        if (closes[i] >= 0) {
          ++n[closes[i]];
          r = loops[closes[i]].start;
        } else if (is_cut[i]) {
          ++counted[r + a];
          r = p.inc.inc[p.dag.start_edge[e.dst]];
        } else {
          r = e.src == kEntryBlock ? a : r + a;
          if (e.dst == kExitBlock) ++counted[r];
        }
        for (size_t l : enters[i]) {
          s[l] = r;
          r = loops[l].start;
          n[l] = 0;
        }
      }
    }
    for (auto it = counted.begin(); it != counted.end();)
      it = it->second == 0 ? counted.erase(it) : std::next(it);
    EXPECT_EQ(counted, truth);
  }
  EXPECT_GT(graphs_with_loops, 40);
  EXPECT_GT(loop_runs, 500);
  EXPECT_GT(multi_iterations, 100);
}


// Paths determined by edge counts (PathsDeterminedByEdges,
// PathCountsFromEdges).  By hand: one diamond has 2 paths in a 2-dimension
// flow space (6 edges, 5 vertices: 6 - 5 + 2 = 2, EXIT->ENTRY closing it),
// so its edge counts give both; two diamonds in a row have 4 paths in 3
// dimensions (a1 b2 + b1 a2 and a1 a2 + b1 b2 take the same edges).
TEST(PathsFromEdges, OneDiamondYesTwoNo) {
  for (uint32_t n : {1u, 2u}) {
    const Function f = DiamondChain(n);
    PathDag dag;
    std::string err;
    ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
    const PathNumbering num = NumberPaths(dag);
    EXPECT_EQ(PathsDeterminedByEdges(dag, num, 64), n == 1) << n;
    // Not above the limit.
    EXPECT_FALSE(PathsDeterminedByEdges(dag, num, 1)) << n;
  }
}

TEST(PathsFromEdges, DiamondCountsByHand) {
  const Function f = DiamondChain(1);  // edges 0->2, 2->3, 2->4, 3->5, 4->5, 5->1
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // 7 runs through a (block 3), 3 through b (block 4).
  std::vector<std::optional<uint64_t>> counts = {10, 7, 3, 7, 3, 10};
  std::map<uint64_t, uint64_t> paths;
  ASSERT_TRUE(PathCountsFromEdges(dag, num, f, counts, &paths, &err)) << err;
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& [id, count] : paths) {
    std::vector<uint32_t> edges;
    ASSERT_TRUE(DecodePath(dag, num, mpz_class(static_cast<unsigned long>(id)),
                           &edges));
    bool via_a = false;
    for (uint32_t d : edges)
      via_a = via_a || (dag.edges[d].kind == DagEdge::kCfg &&
                        dag.edges[d].ref == 1);
    EXPECT_EQ(count, via_a ? 7u : 3u) << id;
  }
  // Counts that do not balance (8 leave a, 7 enter it), or one unknown.
  counts[3] = 8;
  EXPECT_FALSE(PathCountsFromEdges(dag, num, f, counts, &paths, &err));
  EXPECT_NE(err.find("not a sum of whole paths"), std::string::npos) << err;
  counts[3] = 7;
  counts[2] = std::nullopt;
  EXPECT_FALSE(PathCountsFromEdges(dag, num, f, counts, &paths, &err));
  EXPECT_NE(err.find("edge 2->4 is unknown"), std::string::npos) << err;
  // No path runs at all: every count 0, no path listed.
  counts.assign(6, uint64_t{0});
  ASSERT_TRUE(PathCountsFromEdges(dag, num, f, counts, &paths, &err)) << err;
  EXPECT_TRUE(paths.empty());
}

// On random CFGs (loops, fake edges) cut at their back edges: wherever
// PathsDeterminedByEdges holds, random path counts are recovered from the
// edge counts they add up to (kCfg and kBackEnd edges count their model
// edge; a kStart edge's count is its block's cut edges').  Wherever it does
// not, two path vectors give the same edge counts: checked by finding a
// nonzero integer combination of the paths with zero edge sum -- here
// simply that the path count exceeds the DAG's flow dimension.
TEST(PathsFromEdges, RandomCountsRecovered) {
  std::mt19937_64 rng(20261123);
  int determined = 0, not_determined = 0;
  for (int g = 0; g < 600; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/true);
    PathDag dag;
    std::string err;
    if (!BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) continue;
    const PathNumbering num = NumberPaths(dag);
    if (num.total() > 64) continue;
    const uint64_t n = num.total().get_ui();
    // The flow dimension of the DAG's used part: edges some path takes,
    // minus the vertices they touch, plus 2 (EXIT->ENTRY closes it).
    std::vector<bool> edge_used(dag.edges.size(), false);
    std::vector<bool> vertex_used(dag.n_vertices, false);
    std::vector<std::vector<uint32_t>> paths(n);
    for (uint64_t p = 0; p < n; ++p) {
      ASSERT_TRUE(DecodePath(dag, num, mpz_class(static_cast<unsigned long>(p)),
                             &paths[p]));
      for (uint32_t d : paths[p]) {
        edge_used[d] = true;
        vertex_used[dag.edges[d].src] = vertex_used[dag.edges[d].dst] = true;
      }
    }
    const int64_t dim = std::count(edge_used.begin(), edge_used.end(), true) -
                        std::count(vertex_used.begin(), vertex_used.end(), true) +
                        2;
    const bool det = PathsDeterminedByEdges(dag, num, 64);
    EXPECT_EQ(det, static_cast<int64_t>(n) == dim) << n << " paths, dim " << dim;
    if (!det) {
      ++not_determined;
      continue;
    }
    ++determined;
    std::map<uint64_t, uint64_t> truth;
    std::vector<std::optional<uint64_t>> edge_counts(f.edges.size(), uint64_t{0});
    for (uint64_t p = 0; p < n; ++p) {
      const uint64_t c = rng() % 3 == 0 ? 0 : rng() % 1000;
      if (c) truth[p] = c;
      for (uint32_t d : paths[p])
        if (dag.edges[d].kind == DagEdge::kCfg ||
            dag.edges[d].kind == DagEdge::kBackEnd)
          *edge_counts[dag.edges[d].ref] += c;
    }
    std::map<uint64_t, uint64_t> got;
    ASSERT_TRUE(PathCountsFromEdges(dag, num, f, edge_counts, &got, &err))
        << err;
    EXPECT_EQ(got, truth);
  }
  // Both kinds occur (the test is not vacuous).
  EXPECT_GE(determined, 30);
  EXPECT_GE(not_determined, 30);
}

}  // namespace
}  // namespace ballarus
