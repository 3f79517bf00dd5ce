// path_correlation.cc — definite flow and branch correlation of a path
// profile (see path_correlation.h).
#include "core/path_correlation.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace ballarus {
namespace {

using u128 = unsigned __int128;

uint64_t Saturate(u128 x) {
  return x > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(x);
}

uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}

// Per DAG edge: the sum of the counts of the paths over it.
std::vector<u128> EdgeCounts(const PathDag& dag,
                             const std::vector<ExecutedPath>& paths) {
  std::vector<u128> c(dag.edges.size(), 0);
  for (const ExecutedPath& p : paths)
    for (uint32_t e : *p.edges) c[e] += p.count;
  return c;
}

// Per vertex: the flow out of it (into it, for every vertex but ENTRY
// and EXIT: the counts come from whole ENTRY-to-EXIT paths).
std::vector<u128> VertexFlows(const PathDag& dag, const std::vector<u128>& c) {
  std::vector<u128> flow(dag.n_vertices, 0);
  for (size_t e = 0; e < dag.edges.size(); ++e) flow[dag.edges[e].src] += c[e];
  return flow;
}

// The executed paths sorted by their edge sequences, so that the paths
// sharing a prefix are consecutive (zero counts and empty paths left out).
std::vector<const ExecutedPath*> SortedByEdges(
    const std::vector<ExecutedPath>& paths) {
  std::vector<const ExecutedPath*> order;
  for (const ExecutedPath& p : paths)
    if (p.count != 0 && !p.edges->empty()) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const ExecutedPath* a, const ExecutedPath* b) {
              return *a->edges < *b->edges;
            });
  return order;
}

// miss_path per block: for every prefix shared by the paths of `order`,
// the decisions taken right after it that the prefix's majority direction
// misses.  An explicit stack of (first, end, depth): the paths
// order[first, end) share their first `depth` edges and go on.
std::map<uint32_t, u128> PathMisses(const PathDag& dag,
                                    const std::vector<int64_t>& direction,
                                    const std::vector<const ExecutedPath*>& order) {
  std::map<uint32_t, u128> miss;
  std::vector<std::tuple<size_t, size_t, size_t>> stack;
  if (!order.empty()) stack.emplace_back(0, order.size(), 0);
  auto edge_at = [&](size_t i, size_t depth) { return (*order[i]->edges)[depth]; };
  while (!stack.empty()) {
    const auto [first, end, depth] = stack.back();
    stack.pop_back();
    u128 taken = 0, majority = 0;
    uint32_t block = 0;
    for (size_t i = first; i < end;) {
      const uint32_t e = edge_at(i, depth);
      size_t j = i;
      u128 run = 0;
      for (; j < end && edge_at(j, depth) == e; ++j) run += order[j]->count;
      if (direction[e] >= 0) {
        taken += run;
        majority = std::max(majority, run);
        block = dag.edges[e].src;
      }
      // A path that ends here sorts before the longer ones with its edges.
      size_t k = i;
      while (k < j && order[k]->edges->size() == depth + 1) ++k;
      if (k < j) stack.emplace_back(k, j, depth + 1);
      i = j;
    }
    if (taken != 0) miss[block] += taken - majority;
  }
  return miss;
}

}  // namespace

double PathCorrelation::UndeterminedShare() const {
  if (executions == 0) return 0;
  return 1.0 - static_cast<double>(static_cast<long double>(determined) /
                                   executions);
}

double PathCorrelation::GainShare() const {
  if (branch_executions == 0) return 0;
  return static_cast<double>(static_cast<long double>(gain()) /
                             branch_executions);
}

void PathCorrelation::Add(const PathCorrelation& o) {
  executions = SatAdd(executions, o.executions);
  determined = SatAdd(determined, o.determined);
  branch_executions = SatAdd(branch_executions, o.branch_executions);
  miss_edge = SatAdd(miss_edge, o.miss_edge);
  miss_path = SatAdd(miss_path, o.miss_path);
}

std::vector<uint64_t> DefiniteFlows(const PathDag& dag,
                                    const std::vector<ExecutedPath>& paths) {
  const std::vector<u128> c = EdgeCounts(dag, paths);
  const std::vector<u128> flow = VertexFlows(dag, c);
  std::vector<uint64_t> out;
  out.reserve(paths.size());
  for (const ExecutedPath& p : paths) {
    const std::vector<uint32_t>& es = *p.edges;
    // c(e1), less what leaves p at each later vertex (never negative:
    // flow[v] >= c(e) for every out-edge e of v).
    u128 left = es.empty() || p.count == 0 ? 0 : c[es[0]];
    for (size_t i = 1; i < es.size() && left != 0; ++i) {
      const u128 leaves = flow[dag.edges[es[i]].src] - c[es[i]];
      left = left > leaves ? left - leaves : 0;
    }
    out.push_back(Saturate(left));
  }
  return out;
}

std::vector<int64_t> BranchDirections(const Function& fn, const PathDag& dag) {
  auto is_direction = [&](const Edge& e) {
    return IsPathEdge(e) && (e.flags & (kEdgeFake | kEdgeEh)) == 0;
  };
  std::vector<uint32_t> directions(fn.blocks.size(), 0);
  for (const Edge& e : fn.edges)
    if (is_direction(e)) ++directions[e.src];
  std::vector<int64_t> out(dag.edges.size(), -1);
  for (size_t i = 0; i < dag.edges.size(); ++i) {
    const DagEdge& d = dag.edges[i];
    if (d.kind != DagEdge::kCfg && d.kind != DagEdge::kBackEnd) continue;
    const Edge& e = fn.edges[d.ref];
    if (is_direction(e) && directions[e.src] >= 2) out[i] = d.ref;
  }
  return out;
}

PathCorrelation Correlate(const Function& fn, const PathDag& dag,
                          const std::vector<ExecutedPath>& paths) {
  PathCorrelation r;
  u128 executions = 0, determined = 0;
  const std::vector<uint64_t> definite = DefiniteFlows(dag, paths);
  for (size_t i = 0; i < paths.size(); ++i) {
    executions += paths[i].count;
    determined += definite[i];
  }
  r.executions = Saturate(executions);
  r.determined = Saturate(determined);

  // Per conditional block: its directions' counts (edge-based prediction).
  const std::vector<int64_t> direction = BranchDirections(fn, dag);
  const std::vector<u128> c = EdgeCounts(dag, paths);
  std::map<uint32_t, std::pair<u128, u128>> taken_and_best;
  for (size_t e = 0; e < dag.edges.size(); ++e) {
    if (direction[e] < 0) continue;
    auto& [taken, best] = taken_and_best[dag.edges[e].src];
    taken += c[e];
    best = std::max(best, c[e]);
  }
  const std::map<uint32_t, u128> path_miss =
      PathMisses(dag, direction, SortedByEdges(paths));
  u128 branch_executions = 0, miss_edge = 0, miss_path = 0;
  for (const auto& [block, tb] : taken_and_best) {
    BranchCorrelation b;
    b.block = block;
    b.executions = Saturate(tb.first);
    b.miss_edge = Saturate(tb.first - tb.second);
    auto it = path_miss.find(block);
    b.miss_path = it == path_miss.end() ? 0 : Saturate(it->second);
    branch_executions += tb.first;
    miss_edge += tb.first - tb.second;
    miss_path += it == path_miss.end() ? 0 : it->second;
    if (b.miss_edge != 0) r.branches.push_back(b);
  }
  r.branch_executions = Saturate(branch_executions);
  r.miss_edge = Saturate(miss_edge);
  r.miss_path = Saturate(miss_path);
  std::stable_sort(r.branches.begin(), r.branches.end(),
                   [](const BranchCorrelation& a, const BranchCorrelation& b) {
                     return a.gain() > b.gain();
                   });
  return r;
}

}  // namespace ballarus
