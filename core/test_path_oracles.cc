// test_path_oracles.cc — the oracles and graphs of test_path_checks.h.
#include <gmpxx.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"
#include "core/test_graphs.h"
#include "core/test_path_checks.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace path_testing {

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


// The blocks of path `id`.
U BlocksOf(const PathDag& dag, const PathNumbering& num, unsigned id) {
  Path p;
  EXPECT_TRUE(DecodePath(dag, num, Z(id), &p)) << id;
  return PathBlocks(dag, p);
}

mpz_class ValOf(const PathDag& dag, const PathNumbering& num, uint32_t edge) {
  return num.val[dag.dag_edge_of_cfg[edge]];
}

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

}  // namespace path_testing
}  // namespace ballarus
