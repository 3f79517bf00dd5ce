// path_loops.cc — see path_loops.h.
#include "core/path_loops.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ballarus {

std::vector<CountedLoop> FindCountedLoops(const Function& fn,
                                          const PathDag& dag,
                                          const PathCuts& cuts,
                                          const PathIncrements& inc,
                                          const std::vector<bool>& excluded) {
  std::vector<CountedLoop> loops;
  const uint32_t nb = dag.n_blocks;
  if (cuts.edges.empty()) return loops;
  std::vector<bool> cut_block(nb, false);
  for (uint32_t b : cuts.blocks) cut_block[b] = true;
  std::vector<uint32_t> back_into(nb, 0);  // cut edges per target
  for (uint32_t i : cuts.edges) ++back_into[fn.edges[i].dst];
  std::vector<std::vector<uint32_t>> preds(nb), succs(nb);
  for (uint32_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (e.src >= nb || e.dst >= nb) continue;
    preds[e.dst].push_back(i);
    succs[e.src].push_back(i);
  }
  std::vector<uint8_t> in_loop(nb, 0);
  for (uint32_t back : cuts.edges) {
    const uint32_t u = fn.edges[back].src, h = fn.edges[back].dst;
    if (back_into[h] != 1 || cut_block[h] || h >= nb) continue;
    // The natural loop: h and every block reaching u without passing h.
    std::vector<uint32_t> body{h};
    std::fill(in_loop.begin(), in_loop.end(), 0);
    in_loop[h] = 1;
    if (!in_loop[u]) {
      in_loop[u] = 1;
      body.push_back(u);
    }
    for (size_t k = 1; k < body.size(); ++k)
      for (uint32_t i : preds[body[k]]) {
        const uint32_t x = fn.edges[i].src;
        if (!IsPathEdge(fn.edges[i]) || (fn.edges[i].flags & kEdgeFake) ||
            in_loop[x])
          continue;
        in_loop[x] = 1;
        body.push_back(x);
      }
    bool ok = true;
    CountedLoop loop;
    loop.header = h;
    loop.back_edge = back;
    for (uint32_t x : body) {
      if (x == kEntryBlock || cut_block[x] || (x != h && back_into[x]) ||
          (x < excluded.size() && excluded[x]))
        ok = false;
      for (uint32_t i : preds[x]) {
        const Edge& e = fn.edges[i];
        if (e.flags & (kEdgeAbnormal | kEdgeIgnored | kEdgeEh))
          ok = false;
        else if (!in_loop[e.src] && (x != h || (e.flags & kEdgeFake)))
          ok = false;  // a second entry, or an abnormal re-entry
        else if (!in_loop[e.src])
          loop.entries.push_back(i);
      }
      for (uint32_t i : succs[x]) {
        const Edge& e = fn.edges[i];
        if (e.flags & (kEdgeAbnormal | kEdgeIgnored | kEdgeEh)) ok = false;
        if (e.flags & kEdgeFake) continue;  // a call that always returns
        if (!in_loop[e.dst]) loop.exits.push_back(i);
      }
      if (!ok) break;
    }
    if (!ok || loop.entries.empty()) continue;
    // Exactly one DAG path from h to the back edge: count paths to u
    // within the loop (saturating at 2), in reverse topological order.
    std::vector<uint8_t> to_u(dag.n_vertices, 0);
    for (size_t k = dag.topo.size(); k-- > 0;) {
      const uint32_t v = dag.topo[k];
      if (v >= nb || !in_loop[v]) continue;
      unsigned n = v == u ? 1 : 0;
      for (uint32_t d : dag.out[v]) {
        const DagEdge& de = dag.edges[d];
        if (de.kind == DagEdge::kCfg && de.dst < nb && in_loop[de.dst] &&
            de.dst != h)
          n += to_u[de.dst];
      }
      to_u[v] = static_cast<uint8_t>(std::min(2u, n));
    }
    if (to_u[h] != 1) continue;
    // Walk it, summing the increments, then the back edge's own.
    uint64_t c = 0;
    for (uint32_t v = h; v != u;) {
      uint32_t next = UINT32_MAX;
      for (uint32_t d : dag.out[v]) {
        const DagEdge& de = dag.edges[d];
        if (de.kind == DagEdge::kCfg && de.dst < nb && in_loop[de.dst] &&
            de.dst != h && to_u[de.dst] == 1) {
          c += inc.inc[d];
          next = de.dst;
          break;
        }
      }
      if (next == UINT32_MAX) break;  // cannot happen: to_u[v] == 1
      v = next;
    }
    c += inc.inc[dag.dag_edge_of_cfg[back]];
    loop.start = inc.inc[dag.start_edge[h]];
    loop.first_offset = c;
    loop.iteration = loop.start + c;
    std::sort(loop.entries.begin(), loop.entries.end());
    std::sort(loop.exits.begin(), loop.exits.end());
    loops.push_back(std::move(loop));
  }
  return loops;
}

std::vector<LoopEntries> FindLoopEntries(const Function& fn,
                                         const PathCuts& cuts) {
  std::vector<LoopEntries> loops;
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  std::vector<bool> cut_block(nb, false);
  for (uint32_t b : cuts.blocks)
    if (b < nb) cut_block[b] = true;
  std::vector<uint32_t> back_into(nb, 0);  // cut edges per target
  for (uint32_t i : cuts.edges)
    if (fn.edges[i].dst < nb) ++back_into[fn.edges[i].dst];
  std::vector<std::vector<uint32_t>> preds(nb);
  for (uint32_t i = 0; i < fn.edges.size(); ++i)
    if (fn.edges[i].src < nb && fn.edges[i].dst < nb)
      preds[fn.edges[i].dst].push_back(i);
  std::vector<uint8_t> in_loop(nb, 0);
  std::vector<uint32_t> sorted = cuts.edges;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t back : sorted) {
    const uint32_t u = fn.edges[back].src, h = fn.edges[back].dst;
    if (h >= nb || u >= nb || h == kEntryBlock || h == kExitBlock ||
        back_into[h] != 1 || cut_block[h])
      continue;
    LoopEntries loop;
    loop.header = h;
    loop.back_edge = back;
    loop.body = {h};
    std::fill(in_loop.begin(), in_loop.end(), 0);
    in_loop[h] = 1;
    if (!in_loop[u]) {
      in_loop[u] = 1;
      loop.body.push_back(u);
    }
    for (size_t k = 1; k < loop.body.size(); ++k)
      for (uint32_t i : preds[loop.body[k]]) {
        const uint32_t x = fn.edges[i].src;
        if (!IsPathEdge(fn.edges[i]) || (fn.edges[i].flags & kEdgeFake) ||
            in_loop[x])
          continue;
        in_loop[x] = 1;
        loop.body.push_back(x);
      }
    bool ok = !in_loop[kEntryBlock];
    for (uint32_t x : loop.body) {
      for (uint32_t i : preds[x]) {
        const Edge& e = fn.edges[i];
        if (in_loop[e.src]) continue;
        if (x != h) {
          // Entered elsewhere than at h (irreducible), or re-entered
          // abnormally: h's register is not all that reaches the body.
          if (IsPathEdge(e) || (e.flags & (kEdgeFake | kEdgeAbnormal)))
            ok = false;
          continue;
        }
        if (e.flags & (kEdgeFake | kEdgeAbnormal | kEdgeEh | kEdgeIgnored) ||
            !IsPathEdge(e))
          ok = false;
        else
          loop.entries.push_back(i);
      }
      if (!ok) break;
    }
    if (!ok || loop.entries.empty()) continue;
    std::sort(loop.entries.begin(), loop.entries.end());
    loops.push_back(std::move(loop));
  }
  return loops;
}

}  // namespace ballarus
