// path_increments.cc — see path_increments.h.
#include "core/path_increments.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/disjoint_sets.h"
#include "core/path_count128.h"

namespace ballarus {

using count128::u128;
using count128::CountPaths128;

namespace {

// Tree adjacency: per vertex, (neighbour, DAG edge); the virtual
// EXIT->ENTRY edge is kVirtual (Val 0).
constexpr size_t kVirtual = SIZE_MAX;
using TreeAdjacency = std::vector<std::vector<std::pair<uint32_t, size_t>>>;

// The weight of each DAG edge: a CFG edge's own; a dummy edge what the CFG
// edges it stands for weigh (kBackEnd its cut edge; kStart w the cut edges
// into w, or every edge into w if w is a cut block; kCutEnd w every edge
// into w), sums saturating.
std::vector<uint64_t> DagEdgeWeights(const Function& fn, const PathDag& dag,
                                     const std::vector<uint64_t>& cfg_weights) {
  auto weight_of_cfg = [&](uint32_t i) -> uint64_t {
    return i < cfg_weights.size() ? cfg_weights[i] : 0;
  };
  auto sat = [](uint64_t a, uint64_t b) {
    uint64_t s = a + b;
    return s < a ? UINT64_MAX : s;
  };
  // Weight of what enters block w along CFG edges (for kStart/kCutEnd).
  std::vector<uint64_t> into(dag.n_blocks, 0);
  std::vector<uint64_t> cut_into(dag.n_blocks, 0);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    if (dag.dag_edge_of_cfg[i] < 0) continue;
    const DagEdge& d = dag.edges[dag.dag_edge_of_cfg[i]];
    uint32_t w = fn.edges[i].dst;
    into[w] = sat(into[w], weight_of_cfg(static_cast<uint32_t>(i)));
    if (d.kind == DagEdge::kBackEnd)
      cut_into[w] = sat(cut_into[w], weight_of_cfg(static_cast<uint32_t>(i)));
  }
  const size_t ne = dag.edges.size();
  std::vector<uint64_t> w(ne, 0);
  for (size_t e = 0; e < ne; ++e) {
    const DagEdge& d = dag.edges[e];
    switch (d.kind) {
      case DagEdge::kCfg:
      case DagEdge::kBackEnd:
        w[e] = weight_of_cfg(d.ref);
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

// The maximum spanning tree (Kruskal) of the DAG plus the virtual edge:
// the virtual edge and the fake edges out of ENTRY first, then by
// decreasing weight (ties: lower DAG edge index).  Marks out->in_tree and
// fills *adj.  False if a fake ENTRY edge cannot join the tree.
bool SpanningTree(const Function& fn, const PathDag& dag,
                  const std::vector<uint64_t>& w, PathIncrements* out,
                  TreeAdjacency* adj, std::string* error) {
  auto forced = [&](size_t e) {
    const DagEdge& d = dag.edges[e];
    return d.kind == DagEdge::kCfg && d.src == kEntryBlock &&
           (fn.edges[d.ref].flags & kEdgeFake);
  };
  std::vector<size_t> order(dag.edges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool fa = forced(a), fb = forced(b);
    if (fa != fb) return fa;
    return w[a] > w[b];
  });
  DisjointSets sets(dag.n_vertices);
  sets.Union(kExitBlock, kEntryBlock);  // the virtual EXIT->ENTRY edge
  adj->assign(dag.n_vertices, {});
  (*adj)[kEntryBlock].emplace_back(kExitBlock, kVirtual);
  (*adj)[kExitBlock].emplace_back(kEntryBlock, kVirtual);
  for (size_t e : order) {
    const DagEdge& d = dag.edges[e];
    if (sets.Union(d.src, d.dst)) {
      out->in_tree[e] = true;
      (*adj)[d.src].emplace_back(d.dst, e);
      (*adj)[d.dst].emplace_back(d.src, e);
    } else if (forced(e)) {
      *error = "a fake ENTRY edge is not on the spanning tree";
      return false;
    }
  }
  return true;
}

// Potentials: pot(ENTRY) = pot(EXIT) = 0 (the virtual edge has Val 0);
// along a tree edge u->v, pot(v) = pot(u) + Val.  Every component of the
// tree is rooted at ENTRY/EXIT or, when the DAG is disconnected (blocks no
// path reaches), at its lowest vertex.
std::vector<uint64_t> Potentials(const PathDag& dag, const TreeAdjacency& adj,
                                 const std::vector<uint64_t>& val) {
  std::vector<uint64_t> pot(dag.n_vertices, 0);
  std::vector<bool> seen(dag.n_vertices, false);
  std::vector<uint32_t> queue;
  auto flood = [&](uint32_t root) {
    seen[root] = true;
    queue.assign(1, root);
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      uint32_t u = queue[qi];
      for (auto [x, e] : adj[u]) {
        if (seen[x]) continue;
        seen[x] = true;
        if (e == kVirtual) {
          pot[x] = pot[u];
        } else {
          const DagEdge& d = dag.edges[e];
          pot[x] = d.src == u ? pot[u] + val[e] : pot[u] - val[e];
        }
        queue.push_back(x);
      }
    }
  };
  flood(kEntryBlock);
  for (uint32_t v = 0; v < dag.n_vertices; ++v)
    if (!seen[v]) flood(v);
  return pot;
}

}  // namespace

bool PlaceIncrements(const Function& fn, const PathDag& dag,
                     const std::vector<uint64_t>& cfg_weights,
                     PathIncrements* out, std::string* error) {
  std::vector<u128> np = CountPaths128(dag);
  if (np[kEntryBlock] > kMaxInstrumentedPaths) {
    *error = "too many paths for a 64-bit path register";
    return false;
  }
  out->n_paths = static_cast<uint64_t>(np[kEntryBlock]);
  const size_t ne = dag.edges.size();
  out->val.assign(ne, 0);
  out->inc.assign(ne, 0);
  out->in_tree.assign(ne, false);
  for (uint32_t v = 0; v < dag.n_vertices; ++v) {
    uint64_t s = 0;
    for (uint32_t e : dag.out[v]) {
      out->val[e] = s;
      s += static_cast<uint64_t>(np[dag.edges[e].dst]);
    }
  }
  const std::vector<uint64_t> w = DagEdgeWeights(fn, dag, cfg_weights);
  TreeAdjacency adj;
  if (!SpanningTree(fn, dag, w, out, &adj, error)) return false;
  const std::vector<uint64_t> pot = Potentials(dag, adj, out->val);
  for (size_t e = 0; e < ne; ++e) {
    if (out->in_tree[e]) continue;
    const DagEdge& d = dag.edges[e];
    out->inc[e] = pot[d.src] + out->val[e] - pot[d.dst];
  }
  return true;
}

}  // namespace ballarus
