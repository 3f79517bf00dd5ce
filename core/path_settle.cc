// path_settle.cc — see path_settle.h.
#include "core/path_settle.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ballarus {

bool SettlePrecounts(const PathDag& dag, const PathNumbering& num,
                     const Function& fn,
                     const std::vector<uint32_t>& precount_edges,
                     std::map<uint64_t, uint64_t>* counts,
                     std::string* error) {
  if (precount_edges.empty() || counts->empty()) return true;
  // Per vertex: the DAG edge of its pre-counted fake edge, or -1.
  std::vector<int64_t> fake_of(dag.n_vertices, -1);
  for (uint32_t e : precount_edges) {
    const int64_t d = e < dag.dag_edge_of_cfg.size() ? dag.dag_edge_of_cfg[e]
                                                     : -1;
    if (d < 0 || dag.edges[d].kind != DagEdge::kCfg ||
        dag.edges[d].dst != kExitBlock || !(fn.edges[e].flags & kEdgeFake) ||
        dag.edges[d].src == kEntryBlock) {
      *error = "pre-count edge " + std::to_string(e) +
               " is not a fake edge from a block to EXIT";
      return false;
    }
    fake_of[dag.edges[d].src] = d;
  }
  // Val per DAG edge as uint64 (every number is below total < 2^63 here).
  std::vector<uint64_t> val(dag.edges.size());
  for (size_t d = 0; d < dag.edges.size(); ++d)
    val[d] = num.val[d].fits_ulong_p() ? num.val[d].get_ui() : 0;
  std::map<uint64_t, uint64_t> settled = *counts;
  std::vector<uint32_t> edges;
  for (const auto& [number, count] : *counts) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(number)),
                    &edges)) {
      *error = "path " + std::to_string(number) + " cannot be decoded";
      return false;
    }
    uint64_t prefix = 0, target = 0;
    bool found = false;
    // A path that starts through a re-entry edge (kEdgeReentry: after a
    // fork or a counter reset, plugin/reentry.cc) into a pre-counting block
    // starts after that block's call: the call's pre-count went with the
    // old counts, nothing to settle there.
    uint32_t after_call = UINT32_MAX;
    if (!edges.empty()) {
      const DagEdge& first = dag.edges[edges.front()];
      if (first.kind == DagEdge::kCfg && (fn.edges[first.ref].flags & kEdgeReentry))
        after_call = first.dst;
    }
    for (uint32_t d : edges) {
      const int64_t f = fake_of[dag.edges[d].src];
      // Leaving a pre-counting block by any edge but its fake one: the
      // call returned (normally or into a landing pad).
      if (f >= 0 && f != static_cast<int64_t>(d) &&
          dag.edges[d].src != after_call) {
        target = prefix + val[f];
        found = true;
      }
      prefix += val[d];
    }
    if (found) settled[target] -= count;  // modulo 2^64, like every count
  }
  counts->clear();
  for (const auto& [number, count] : settled)
    if (count != 0) counts->emplace_hint(counts->end(), number, count);
  return true;
}

bool BalanceStarts(const PathDag& dag, const PathNumbering& num,
                   const Function& fn,
                   const std::vector<std::pair<uint64_t, uint32_t>>& balanced,
                   std::map<uint64_t, uint64_t>* counts, std::string* error) {
  if (balanced.empty()) return true;
  std::vector<uint32_t> edges;
  // The block a path's last DAG edge leads into anew: the target of a cut
  // edge (kBackEnd), or a cut block (kCutEnd); UINT32_MAX otherwise.
  auto ends_into = [&](const DagEdge& last) {
    if (last.kind == DagEdge::kBackEnd) return fn.edges[last.ref].dst;
    if (last.kind == DagEdge::kCutEnd) return last.ref;
    return UINT32_MAX;
  };
  // The listed paths first: each must start at its S and end at a fake
  // edge into EXIT (truncated: it makes up what the paths from S lack), or
  // end into S without starting there (an end into S: it makes up what
  // the starts lack).  One per S.
  std::map<uint32_t, bool> truncated;  // per S
  for (const auto& [path, start] : balanced) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(path)),
                    &edges) ||
        edges.empty()) {
      *error = "balanced path " + std::to_string(path) + " cannot be decoded";
      return false;
    }
    const DagEdge& first = dag.edges[edges.front()];
    const DagEdge& last = dag.edges[edges.back()];
    const bool from_s = first.kind == DagEdge::kStart && first.ref == start;
    const bool cut_short = from_s && last.kind == DagEdge::kCfg &&
                           last.dst == kExitBlock &&
                           (fn.edges[last.ref].flags & kEdgeFake);
    const bool end_into = !from_s && ends_into(last) == start;
    if (!cut_short && !end_into) {
      *error = "balanced path " + std::to_string(path) +
               " is neither a path from block " + std::to_string(start) +
               " cut short at a call nor one ending into it";
      return false;
    }
    if (!truncated.emplace(start, cut_short).second) {
      *error = "block " + std::to_string(start) + " balances two paths";
      return false;
    }
  }
  // Per counted path: the block its first DAG edge starts anew (a kStart
  // dummy's) and the one its last leads into anew (UINT32_MAX if none).
  struct Ends {
    uint32_t from = UINT32_MAX, into = UINT32_MAX;
  };
  auto ends_of = [&](uint64_t number, Ends* e) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(number)),
                    &edges) ||
        edges.empty())
      return false;
    const DagEdge& first = dag.edges[edges.front()];
    e->from = first.kind == DagEdge::kStart ? first.ref : UINT32_MAX;
    e->into = ends_into(dag.edges[edges.back()]);
    return true;
  };
  std::map<uint64_t, Ends> ends;
  for (const auto& [number, count] : *counts)
    if (!ends_of(number, &ends[number])) {
      *error = "path " + std::to_string(number) + " cannot be decoded";
      return false;
    }
  for (const auto& [path, start] : balanced)
    if (!ends.count(path)) ends_of(path, &ends[path]);  // decoded above
  // A listed path may be among the paths of another listed S's balance (a
  // loop entry cut's end that starts at an outer loop's header): solve an
  // S once no other unsolved listed path takes part in its balance.
  std::map<uint32_t, uint64_t> unsolved;  // S -> its path
  for (const auto& [path, start] : balanced) unsolved[start] = path;
  while (!unsolved.empty()) {
    bool progress = false;
    for (auto it = unsolved.begin(); it != unsolved.end();) {
      const uint32_t start = it->first;
      const uint64_t path = it->second;
      bool ready = true;
      for (const auto& [s2, p2] : unsolved)
        if (p2 != path &&
            (ends[p2].from == start || ends[p2].into == start))
          ready = false;
      if (!ready) {
        ++it;
        continue;
      }
      // The starts (paths ending at a cut edge into S or at its cut) and
      // the counts of the paths from S, modulo 2^64.
      uint64_t starts = 0, from = 0;
      for (const auto& [number, count] : *counts) {
        if (ends[number].from == start) from += count;
        if (ends[number].into == start) starts += count;
      }
      const uint64_t add =
          truncated[start] ? starts - from : from - starts;
      if (add != 0) {
        uint64_t& c = (*counts)[path];
        c += add;
        if (c == 0) counts->erase(path);
      }
      it = unsolved.erase(it);
      progress = true;
    }
    if (!progress) {
      *error = "balanced paths of blocks " +
               std::to_string(unsolved.begin()->first) +
               " and others depend on each other";
      return false;
    }
  }
  return true;
}

bool BalanceEntry(const PathDag& dag, const PathNumbering& num,
                  const Function& fn, uint64_t path, uint64_t invocations,
                  std::map<uint64_t, uint64_t>* counts, std::string* error) {
  std::vector<uint32_t> edges;
  if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(path)),
                  &edges) ||
      edges.empty()) {
    *error = "entry-balanced path " + std::to_string(path) +
             " cannot be decoded";
    return false;
  }
  const uint32_t entry = edges.front();
  const DagEdge& first = dag.edges[entry];
  const DagEdge& last = dag.edges[edges.back()];
  if (first.kind != DagEdge::kCfg || first.src != kEntryBlock ||
      (fn.edges[first.ref].flags & kEdgeFake) || last.kind != DagEdge::kCfg ||
      last.dst != kExitBlock || !(fn.edges[last.ref].flags & kEdgeFake)) {
    *error = "entry-balanced path " + std::to_string(path) +
             " is not a path from the function's entry cut short at a call";
    return false;
  }
  uint64_t from_entry = 0;
  for (const auto& [number, count] : *counts) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(number)),
                    &edges) ||
        edges.empty()) {
      *error = "path " + std::to_string(number) + " cannot be decoded";
      return false;
    }
    if (edges.front() == entry) from_entry += count;
  }
  const uint64_t add = invocations - from_entry;
  if (add != 0) {
    uint64_t& c = (*counts)[path];
    c += add;
    if (c == 0) counts->erase(path);
  }
  return true;
}

}  // namespace ballarus
