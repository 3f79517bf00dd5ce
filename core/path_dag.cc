// path_dag.cc — see path_dag.h.
#include "core/path_dag.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ballarus {

bool IsPathEdge(const Edge& e) {
  return !(e.flags & (kEdgeAbnormal | kEdgeIgnored));
}

uint32_t PathDag::BlockOf(uint32_t vertex) const {
  if (vertex < n_blocks) return vertex;
  return edges[out[vertex].front()].ref;  // w_in: its kCutEnd names w
}

std::vector<uint32_t> FindBackEdges(const Function& fn) {
  const size_t n = fn.blocks.size();
  std::vector<std::vector<uint32_t>> succ(n);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (e.src < n && e.dst < n && IsPathEdge(e))
      succ[e.src].push_back(static_cast<uint32_t>(i));
  }
  enum : uint8_t { kWhite, kGrey, kBlack };
  std::vector<uint8_t> colour(n, kWhite);
  std::vector<uint32_t> back;
  // Iterative DFS: (vertex, next successor position).
  std::vector<std::pair<uint32_t, size_t>> stack;
  auto run = [&](uint32_t root) {
    colour[root] = kGrey;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [v, pos] = stack.back();
      if (pos == succ[v].size()) {
        colour[v] = kBlack;
        stack.pop_back();
        continue;
      }
      uint32_t ei = succ[v][pos++];
      uint32_t w = fn.edges[ei].dst;
      if (colour[w] == kGrey) {
        back.push_back(ei);
      } else if (colour[w] == kWhite) {
        colour[w] = kGrey;
        stack.emplace_back(w, 0);
      }
    }
  };
  if (n > kEntryBlock) run(kEntryBlock);
  for (uint32_t b = 0; b < n; ++b)
    if (colour[b] == kWhite) run(b);
  std::sort(back.begin(), back.end());
  return back;
}

bool BuildPathDag(const Function& fn, const PathCuts& cuts, PathDag* dag,
                  std::string* error) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  *dag = PathDag();
  if (nb < 2) {
    *error = "function has no ENTRY/EXIT blocks";
    return false;
  }
  std::vector<int64_t> cut_index(nb, -1);
  for (size_t k = 0; k < cuts.blocks.size(); ++k) {
    uint32_t b = cuts.blocks[k];
    if (b >= nb || b == kEntryBlock || b == kExitBlock) {
      *error = "cut block " + std::to_string(b) + " is not a basic block";
      return false;
    }
    if (cut_index[b] >= 0) {
      *error = "cut block " + std::to_string(b) + " listed twice";
      return false;
    }
    cut_index[b] = static_cast<int64_t>(k);
  }
  std::vector<bool> is_cut_edge(fn.edges.size(), false);
  for (uint32_t i : cuts.edges) {
    if (i >= fn.edges.size()) {
      *error = "cut edge " + std::to_string(i) + " out of range";
      return false;
    }
    const Edge& e = fn.edges[i];
    if (!IsPathEdge(e) || e.src >= nb || e.dst >= nb ||
        e.dst == kExitBlock || e.dst == kEntryBlock) {
      *error = "cut edge " + std::to_string(i) + " cannot be cut";
      return false;
    }
    if (cut_index[e.dst] >= 0) {
      *error = "cut edge " + std::to_string(i) + " targets cut block " +
               std::to_string(e.dst);
      return false;
    }
    if (is_cut_edge[i]) {
      *error = "cut edge " + std::to_string(i) + " listed twice";
      return false;
    }
    is_cut_edge[i] = true;
  }

  dag->n_blocks = nb;
  dag->n_vertices = nb + static_cast<uint32_t>(cuts.blocks.size());
  dag->out.assign(dag->n_vertices, {});
  dag->in_vertex.resize(nb);
  for (uint32_t b = 0; b < nb; ++b)
    dag->in_vertex[b] =
        cut_index[b] >= 0 ? nb + static_cast<uint32_t>(cut_index[b]) : b;
  dag->dag_edge_of_cfg.assign(fn.edges.size(), -1);
  dag->start_edge.assign(nb, -1);
  dag->cut_end_edge.assign(nb, -1);

  auto add = [&](uint32_t src, uint32_t dst, DagEdge::Kind kind,
                 uint32_t ref) {
    DagEdge d;
    d.src = src;
    d.dst = dst;
    d.kind = kind;
    d.ref = ref;
    dag->out[src].push_back(static_cast<uint32_t>(dag->edges.size()));
    dag->edges.push_back(d);
    return static_cast<int64_t>(dag->edges.size() - 1);
  };
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (e.src >= nb || e.dst >= nb || !IsPathEdge(e)) continue;
    if (is_cut_edge[i])
      dag->dag_edge_of_cfg[i] =
          add(e.src, kExitBlock, DagEdge::kBackEnd, static_cast<uint32_t>(i));
    else
      dag->dag_edge_of_cfg[i] = add(e.src, dag->in_vertex[e.dst],
                                    DagEdge::kCfg, static_cast<uint32_t>(i));
  }
  std::vector<bool> starts(nb, false);
  for (uint32_t i : cuts.edges) starts[fn.edges[i].dst] = true;
  for (uint32_t b : cuts.blocks) starts[b] = true;
  for (uint32_t b = 0; b < nb; ++b)
    if (starts[b]) dag->start_edge[b] = add(kEntryBlock, b, DagEdge::kStart, b);
  for (uint32_t b : cuts.blocks)
    dag->cut_end_edge[b] =
        add(dag->in_vertex[b], kExitBlock, DagEdge::kCutEnd, b);

  // Topological order (Kahn; ties by vertex index for determinism).
  std::vector<uint32_t> indeg(dag->n_vertices, 0);
  for (const DagEdge& d : dag->edges) ++indeg[d.dst];
  std::vector<uint32_t> ready;
  for (uint32_t v = dag->n_vertices; v-- > 0;)
    if (indeg[v] == 0) ready.push_back(v);
  while (!ready.empty()) {
    uint32_t v = ready.back();
    ready.pop_back();
    dag->topo.push_back(v);
    for (uint32_t e : dag->out[v])
      if (--indeg[dag->edges[e].dst] == 0) ready.push_back(dag->edges[e].dst);
  }
  if (dag->topo.size() != dag->n_vertices) {
    *error = "the cuts leave a cycle in the CFG";
    return false;
  }
  if (!dag->out[kExitBlock].empty()) {
    *error = "EXIT has successors";
    return false;
  }
  return true;
}

std::vector<uint8_t> CountPrefixes(const PathDag& dag) {
  std::vector<uint8_t> prefixes(dag.n_vertices, 0);
  prefixes[kEntryBlock] = 1;
  for (uint32_t v : dag.topo)
    for (uint32_t d : dag.out[v]) {
      uint8_t& p = prefixes[dag.edges[d].dst];
      p = static_cast<uint8_t>(std::min(2, p + prefixes[v]));
    }
  return prefixes;
}

PathNumbering NumberPaths(const PathDag& dag) {
  PathNumbering num;
  num.num_paths.assign(dag.n_vertices, 0);
  num.val.assign(dag.edges.size(), 0);
  num.num_paths[kExitBlock] = 1;
  for (size_t i = dag.topo.size(); i-- > 0;) {
    uint32_t v = dag.topo[i];
    if (v == kExitBlock) continue;
    mpz_class s = 0;
    for (uint32_t e : dag.out[v]) {
      num.val[e] = s;
      s += num.num_paths[dag.edges[e].dst];
    }
    num.num_paths[v] = s;
  }
  return num;
}

bool DecodePath(const PathDag& dag, const PathNumbering& num,
                const mpz_class& id, std::vector<uint32_t>* edges) {
  edges->clear();
  if (id < 0 || id >= num.total()) return false;
  mpz_class rest = id;
  uint32_t v = kEntryBlock;
  while (v != kExitBlock) {
    const std::vector<uint32_t>& out = dag.out[v];
    // The last out-edge with Val <= rest whose target has paths: Val is
    // non-decreasing along `out`.
    size_t lo = 0, hi = out.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (num.val[out[mid]] <= rest)
        lo = mid + 1;
      else
        hi = mid;
    }
    // out[lo-1] is the last with Val <= rest; skip back over edges into
    // vertices without paths (same Val as their successor edge).
    size_t k = lo;
    while (k > 0 && num.num_paths[dag.edges[out[k - 1]].dst] == 0) --k;
    if (k == 0) return false;
    uint32_t e = out[k - 1];
    rest -= num.val[e];
    if (rest >= num.num_paths[dag.edges[e].dst]) return false;
    edges->push_back(e);
    v = dag.edges[e].dst;
  }
  return rest == 0;
}

mpz_class EncodePath(const PathNumbering& num,
                     const std::vector<uint32_t>& edges) {
  mpz_class s = 0;
  for (uint32_t e : edges) s += num.val[e];
  return s;
}

std::vector<uint32_t> PathBlocks(const PathDag& dag,
                                 const std::vector<uint32_t>& edges) {
  std::vector<uint32_t> blocks;
  if (edges.empty()) return blocks;
  const DagEdge& first = dag.edges[edges.front()];
  size_t from = 0;
  if (first.kind == DagEdge::kStart) {
    blocks.push_back(first.dst);
    from = 1;
  } else {
    blocks.push_back(kEntryBlock);
  }
  for (size_t i = from; i < edges.size(); ++i) {
    const DagEdge& d = dag.edges[edges[i]];
    if (d.kind == DagEdge::kCfg) blocks.push_back(dag.BlockOf(d.dst));
  }
  return blocks;
}

void AddPathToEdgeCounts(const PathDag& dag, const std::vector<uint32_t>& edges,
                         uint64_t count, std::vector<uint64_t>* edge_counts) {
  for (uint32_t e : edges) {
    const DagEdge& d = dag.edges[e];
    if (d.kind == DagEdge::kCfg || d.kind == DagEdge::kBackEnd) {
      (*edge_counts)[d.ref] += count;  // modulo 2^64, like profile counts
    }
  }
}

}  // namespace ballarus
