// path_profile.cc — see path_profile.h.
#include "core/path_profile.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/disjoint_sets.h"

namespace ballarus {

namespace {

using u128 = unsigned __int128;

constexpr u128 kSaturated = ~static_cast<u128>(0);

u128 SatAdd(u128 a, u128 b) {
  u128 s = a + b;
  return s < a ? kSaturated : s;
}

// Number of paths per vertex, saturating at 2^128 - 1.
std::vector<u128> CountPaths128(const PathDag& dag) {
  std::vector<u128> np(dag.n_vertices, 0);
  np[kExitBlock] = 1;
  for (size_t i = dag.topo.size(); i-- > 0;) {
    uint32_t v = dag.topo[i];
    if (v == kExitBlock) continue;
    u128 s = 0;
    for (uint32_t e : dag.out[v]) s = SatAdd(s, np[dag.edges[e].dst]);
    np[v] = s;
  }
  return np;
}

}  // namespace

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

bool PlanPaths(const Function& fn, const std::vector<bool>& may_cut_block,
               uint64_t max_paths, PathPlan* plan, std::string* error) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  auto may_cut = [&](uint32_t b) {
    if (b == kEntryBlock || b == kExitBlock || b >= nb) return false;
    return may_cut_block.empty() || (b < may_cut_block.size() &&
                                     may_cut_block[b]);
  };
  const std::vector<uint32_t> back = FindBackEdges(fn);
  if (max_paths == 0) max_paths = 1;

  // The DAG with back edges cut only: its topological order is the order in
  // which the greedy pass below visits blocks (vertex cuts never reorder).
  PathCuts base;
  base.edges = back;
  PathDag dag0;
  if (!BuildPathDag(fn, base, &dag0, error)) return false;

  u128 limit = max_paths;
  for (int round = 0; round < 130; ++round) {
    // Greedy, in reverse topological order: when a block's paths exceed
    // `limit`, cut its successors with the most paths (a cut successor
    // contributes one path: the one ending at its cut) until they are far
    // below it.
    std::vector<bool> cut(nb, false);
    std::vector<u128> np(nb, 0);
    np[kExitBlock] = 1;
    for (size_t i = dag0.topo.size(); i-- > 0;) {
      uint32_t v = dag0.topo[i];
      if (v == kExitBlock || v >= nb) continue;
      struct Succ {
        u128 paths;
        uint32_t block;  // UINT32_MAX: not cuttable
      };
      std::vector<Succ> succ;
      u128 sum = 0;
      for (uint32_t e : dag0.out[v]) {
        const DagEdge& d = dag0.edges[e];
        u128 p;
        uint32_t w = UINT32_MAX;
        if (d.kind == DagEdge::kBackEnd) {
          p = 1;
        } else if (d.kind == DagEdge::kCfg) {
          w = d.dst;
          p = cut[w] ? 1 : np[w];
          if (cut[w] || !may_cut(w) || p <= 1) w = UINT32_MAX;
        } else {  // kStart from ENTRY
          p = np[d.dst];
        }
        succ.push_back({p, w});
        sum = SatAdd(sum, p);
      }
      // Once over the limit, cut down to far below it: cutting just enough
      // would leave v near the limit and force a cut at every predecessor.
      const u128 low = limit >> 16;
      bool over = sum > limit;
      while (over && sum > low) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < succ.size(); ++k)
          if (succ[k].block != UINT32_MAX &&
              (best == SIZE_MAX || succ[k].paths > succ[best].paths))
            best = k;
        if (best == SIZE_MAX) break;  // nothing left to cut here
        uint32_t w = succ[best].block;
        cut[w] = true;
        // Every edge of v into w now contributes 1.
        sum = 0;
        for (Succ& s : succ) {
          if (s.block == w) {
            s.paths = 1;
            s.block = UINT32_MAX;
          }
          sum = SatAdd(sum, s.paths);
        }
      }
      np[v] = sum;
    }
    // Exact count with these cuts (back edges into cut blocks stop being
    // cut edges: the vertex cut ends those paths).
    PathCuts cuts;
    for (uint32_t i : back)
      if (!cut[fn.edges[i].dst]) cuts.edges.push_back(i);
    for (uint32_t b = 0; b < nb; ++b)
      if (cut[b]) cuts.blocks.push_back(b);
    PathDag dag;
    if (!BuildPathDag(fn, cuts, &dag, error)) return false;
    u128 total = CountPaths128(dag)[kEntryBlock];
    if (total <= max_paths) {
      plan->cuts = std::move(cuts);
      plan->n_paths = static_cast<uint64_t>(total);
      return true;
    }
    if (limit <= 1) break;
    // The paths starting at ENTRY and at every cut still add up to too
    // many: ask every block for fewer.
    limit /= 2;
  }
  *error = "cannot cut the function's paths below " +
           std::to_string(max_paths);
  return false;
}

namespace {

// PlanPathsWeighted's greedy.  headers_free: a block's cost leaves out its
// back edges; reverse_delete: then take back the cuts not needed.
bool GreedyPlan(const Function& fn, const std::vector<bool>& may_cut_block,
                const std::vector<uint64_t>& cfg_weights, uint64_t max_paths,
                bool headers_free, bool reverse_delete, PathPlan* plan,
                std::string* error) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  if (max_paths == 0) max_paths = 1;
  auto may_cut = [&](uint32_t b) {
    if (b == kEntryBlock || b == kExitBlock || b >= nb) return false;
    return may_cut_block.empty() || (b < may_cut_block.size() &&
                                     may_cut_block[b]);
  };
  const std::vector<uint32_t> back = FindBackEdges(fn);
  // The cuts so far: back edges (minus those into cut blocks), blocks.
  std::vector<bool> cut(nb, false);
  auto cuts_of = [&]() {
    PathCuts c;
    for (uint32_t i : back)
      if (!cut[fn.edges[i].dst]) c.edges.push_back(i);
    for (uint32_t b = 0; b < nb; ++b)
      if (cut[b]) c.blocks.push_back(b);
    return c;
  };
  PathDag dag;
  if (!BuildPathDag(fn, cuts_of(), &dag, error)) return false;
  u128 total = CountPaths128(dag)[kEntryBlock];
  if (total > (static_cast<u128>(1) << 120)) {
    // Beyond what the estimates below handle well: coarse cuts first.
    PathPlan coarse;
    if (!PlanPaths(fn, may_cut_block, kMaxInstrumentedPaths, &coarse, error))
      return false;
    for (uint32_t b : coarse.cuts.blocks) cut[b] = true;
    if (!BuildPathDag(fn, cuts_of(), &dag, error)) return false;
    total = CountPaths128(dag)[kEntryBlock];
  }
  // What a cut at each block costs: the estimated frequency of what enters
  // it along path edges, except its back edges -- their paths end there
  // already (a counted back edge), and a cut block ends them instead.  So
  // a loop header costs only its entries from outside the loop.
  std::vector<bool> is_back(fn.edges.size(), false);
  for (uint32_t i : back) is_back[i] = true;
  std::vector<long double> freq(nb, 0);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (e.dst < nb && IsPathEdge(e) && !(headers_free && is_back[i]))
      freq[e.dst] += i < cfg_weights.size() ? cfg_weights[i] : 1;
  }
  while (total > max_paths) {
    // Paths from every start to each vertex (in) and from it to an end
    // (out), in floating point: only to rank the candidates.
    std::vector<long double> in(dag.n_vertices, 0), out(dag.n_vertices, 0);
    in[kEntryBlock] = 1;
    for (uint32_t v : dag.topo)
      for (uint32_t e : dag.out[v]) in[dag.edges[e].dst] += in[v];
    out[kExitBlock] = 1;
    for (size_t k = dag.topo.size(); k-- > 0;) {
      const uint32_t v = dag.topo[k];
      for (uint32_t e : dag.out[v]) out[v] += out[dag.edges[e].dst];
    }
    const long double t = out[kEntryBlock];
    uint32_t best = UINT32_MAX;
    long double best_score = 0;
    for (uint32_t w = 2; w < nb; ++w) {
      if (cut[w] || !may_cut(w)) continue;
      const long double i = in[w], o = out[w];
      const long double starts = dag.start_edge[w] >= 0 ? 1 : 0;
      // Paths through w become prefixes ending at w and suffixes from it.
      const long double after = t - i * o + (i - starts) + o;
      if (!(after < t) || after < 1) continue;
      const long double score = (logl(t) - logl(after)) / (freq[w] + 1);
      if (score > best_score) {
        best_score = score;
        best = w;
      }
    }
    if (best == UINT32_MAX) {
      // No single cut helps: take the coarse planner's cuts (then trimmed
      // below like the greedy's).
      PathPlan coarse;
      if (!PlanPaths(fn, may_cut_block, max_paths, &coarse, error))
        return false;
      std::fill(cut.begin(), cut.end(), false);
      for (uint32_t b : coarse.cuts.blocks) cut[b] = true;
      total = coarse.n_paths;
      break;
    }
    cut[best] = true;
    if (!BuildPathDag(fn, cuts_of(), &dag, error)) return false;
    total = CountPaths128(dag)[kEntryBlock];
  }
  // Greedy adds cuts that later ones make unnecessary: take back every cut
  // the function still fits without, the costliest first (reverse delete).
  // On sqlite3VdbeExec (1681 blocks, path-table-max 4096) it takes back
  // 187 of 259 cuts.
  std::vector<uint32_t> taken;
  for (uint32_t b = 0; b < nb && reverse_delete; ++b)
    if (cut[b]) taken.push_back(b);
  std::stable_sort(taken.begin(), taken.end(), [&](uint32_t a, uint32_t b) {
    return freq[a] > freq[b];
  });
  // One pass.  Not monotone (a cut where one prefix arrives, or whence one
  // suffix leaves, adds a path), so a cut kept early could sometimes go
  // after later ones; repeating the pass until nothing changes takes back
  // more cuts on sqlite3VdbeExec but executes 76 M instructions more
  // (cold cuts make the register a known constant downstream).
  for (uint32_t b : taken) {
    cut[b] = false;
    PathDag without;
    u128 n = 0;
    if (BuildPathDag(fn, cuts_of(), &without, error) &&
        (n = CountPaths128(without)[kEntryBlock]) <= max_paths) {
      total = n;
    } else {
      cut[b] = true;
    }
  }
  error->clear();
  plan->cuts = cuts_of();
  plan->n_paths = static_cast<uint64_t>(total);
  return true;
}

}  // namespace

long double EstimatePlanCost(const Function& fn, const PathCuts& cuts,
                             const std::vector<uint64_t>& cfg_weights) {
  PathDag dag;
  std::string err;
  PathIncrements inc;
  if (!BuildPathDag(fn, cuts, &dag, &err) ||
      !PlaceIncrements(fn, dag, cfg_weights, &inc, &err))
    return HUGE_VALL;
  auto w = [&](uint32_t i) -> long double {
    return i < cfg_weights.size() ? cfg_weights[i] : 1;
  };
  std::vector<long double> freq(dag.n_blocks, 0);
  for (uint32_t i = 0; i < fn.edges.size(); ++i)
    if (fn.edges[i].dst < dag.n_blocks && IsPathEdge(fn.edges[i]))
      freq[fn.edges[i].dst] += w(i);
  // One prefix or several reach each vertex: is the register a constant?
  const std::vector<uint8_t> prefixes = CountPrefixes(dag);
  long double cost = 0;
  for (size_t d = 0; d < dag.edges.size(); ++d) {
    const DagEdge& de = dag.edges[d];
    const bool var = prefixes[de.src] > 1;
    switch (de.kind) {
      case DagEdge::kStart:
        break;
      case DagEdge::kBackEnd:
        cost += w(de.ref) * (var ? 2 : 1);
        break;
      case DagEdge::kCutEnd:
        cost += freq[de.ref] * (prefixes[de.src] > 1 ? 2 : 1);
        break;
      case DagEdge::kCfg:
        if (de.dst == kExitBlock) {
          // A return, or a call that may not return: counted before the
          // call, every time its block runs.
          const bool fake = fn.edges[de.ref].flags & kEdgeFake;
          cost += (fake ? freq[de.src] : w(de.ref)) * (var ? 2 : 1);
        } else if (!inc.in_tree[d] && inc.inc[d] != 0 && var &&
                   de.src != kEntryBlock) {
          cost += w(de.ref);  // an addition GCC cannot fold
        }
        break;
    }
  }
  return cost;
}

bool PlanPathsWeighted(const Function& fn,
                       const std::vector<bool>& may_cut_block,
                       const std::vector<uint64_t>& cfg_weights,
                       uint64_t max_paths, PathPlan* plan,
                       std::string* error) {
  // Two plans, the cheaper by EstimatePlanCost: the greedy pricing a cut
  // by everything entering its block, and the greedy pricing loop headers
  // by their entries only, then trimmed (reverse delete).
  PathPlan a, b;
  if (!GreedyPlan(fn, may_cut_block, cfg_weights, max_paths, false, false,
                  &a, error))
    return false;
  if (a.cuts.blocks.empty() ||
      !GreedyPlan(fn, may_cut_block, cfg_weights, max_paths, true, true, &b,
                  error)) {
    error->clear();
    *plan = std::move(a);
    return true;
  }
  const long double ca = EstimatePlanCost(fn, a.cuts, cfg_weights);
  const long double cb = EstimatePlanCost(fn, b.cuts, cfg_weights);
  *plan = cb < ca ? std::move(b) : std::move(a);
  return true;
}

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
  auto forced = [&](size_t e) {
    const DagEdge& d = dag.edges[e];
    return d.kind == DagEdge::kCfg && d.src == kEntryBlock &&
           (fn.edges[d.ref].flags & kEdgeFake);
  };
  std::vector<size_t> order(ne);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool fa = forced(a), fb = forced(b);
    if (fa != fb) return fa;
    return w[a] > w[b];
  });
  DisjointSets sets(dag.n_vertices);
  sets.Union(kExitBlock, kEntryBlock);  // the virtual EXIT->ENTRY edge
  // Tree adjacency; the virtual EXIT->ENTRY edge is kVirtual (Val 0).
  constexpr size_t kVirtual = SIZE_MAX;
  std::vector<std::vector<std::pair<uint32_t, size_t>>> adj(dag.n_vertices);
  adj[kEntryBlock].emplace_back(kExitBlock, kVirtual);
  adj[kExitBlock].emplace_back(kEntryBlock, kVirtual);
  for (size_t e : order) {
    const DagEdge& d = dag.edges[e];
    if (sets.Union(d.src, d.dst)) {
      out->in_tree[e] = true;
      adj[d.src].emplace_back(d.dst, e);
      adj[d.dst].emplace_back(d.src, e);
    } else if (forced(e)) {
      *error = "a fake ENTRY edge is not on the spanning tree";
      return false;
    }
  }
  // Potentials: pot(ENTRY) = pot(EXIT) = 0 (the virtual edge has Val 0);
  // along a tree edge u->v, pot(v) = pot(u) + Val.  Every component of the
  // tree is rooted at ENTRY/EXIT or, when the DAG is disconnected (blocks
  // no path reaches), at its lowest vertex.
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
          pot[x] = d.src == u ? pot[u] + out->val[e] : pot[u] - out->val[e];
        }
        queue.push_back(x);
      }
    }
  };
  flood(kEntryBlock);
  for (uint32_t v = 0; v < dag.n_vertices; ++v)
    if (!seen[v]) flood(v);
  for (size_t e = 0; e < ne; ++e) {
    if (out->in_tree[e]) continue;
    const DagEdge& d = dag.edges[e];
    out->inc[e] = pot[d.src] + out->val[e] - pot[d.dst];
  }
  return true;
}

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

namespace {

// The paths' edge vectors (rows: DAG edges, columns: path numbers), with
// one more column for the right-hand side, reduced in place by exact
// Gauss-Jordan elimination.  Returns the rank; pivot[c] is the row of
// column c's pivot, or -1.
size_t ReducePathSystem(std::vector<std::vector<mpq_class>>* rows,
                        size_t n_cols, std::vector<int64_t>* pivot) {
  std::vector<std::vector<mpq_class>>& m = *rows;
  pivot->assign(n_cols, -1);
  size_t rank = 0;
  for (size_t c = 0; c < n_cols && rank < m.size(); ++c) {
    size_t p = rank;
    while (p < m.size() && sgn(m[p][c]) == 0) ++p;
    if (p == m.size()) continue;
    std::swap(m[p], m[rank]);
    const mpq_class lead = m[rank][c];
    for (mpq_class& x : m[rank]) x /= lead;
    for (size_t r = 0; r < m.size(); ++r) {
      if (r == rank || sgn(m[r][c]) == 0) continue;
      const mpq_class f = m[r][c];
      for (size_t k = c; k < m[r].size(); ++k) m[r][k] -= f * m[rank][k];
    }
    (*pivot)[c] = static_cast<int64_t>(rank);
    ++rank;
  }
  return rank;
}

// The system of PathsDeterminedByEdges / PathCountsFromEdges: rows are
// the DAG edges some path takes; false if the DAG has a cut block or more
// than max_paths paths.
bool PathSystem(const PathDag& dag, const PathNumbering& num,
                uint64_t max_paths, std::vector<std::vector<mpq_class>>* rows,
                std::vector<uint32_t>* row_edge, uint64_t* n_paths) {
  for (const DagEdge& e : dag.edges)
    if (e.kind == DagEdge::kCutEnd) return false;
  if (num.total() > mpz_class(static_cast<unsigned long>(max_paths)))
    return false;
  const uint64_t n = num.total().get_ui();
  *n_paths = n;
  std::vector<std::vector<uint32_t>> paths(n);
  std::vector<int64_t> row_of(dag.edges.size(), -1);
  row_edge->clear();
  for (uint64_t p = 0; p < n; ++p) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(p)),
                    &paths[p]))
      return false;
    for (uint32_t d : paths[p])
      if (row_of[d] < 0) {
        row_of[d] = static_cast<int64_t>(row_edge->size());
        row_edge->push_back(d);
      }
  }
  rows->assign(row_edge->size(), std::vector<mpq_class>(n + 1));
  for (uint64_t p = 0; p < n; ++p)
    for (uint32_t d : paths[p]) (*rows)[row_of[d]][p] = 1;
  return true;
}

}  // namespace

bool PathsDeterminedByEdges(const PathDag& dag, const PathNumbering& num,
                            uint64_t max_paths) {
  std::vector<std::vector<mpq_class>> rows;
  std::vector<uint32_t> row_edge;
  uint64_t n = 0;
  if (!PathSystem(dag, num, max_paths, &rows, &row_edge, &n)) return false;
  std::vector<int64_t> pivot;
  return ReducePathSystem(&rows, n, &pivot) == n;
}

bool PathCountsFromEdges(const PathDag& dag, const PathNumbering& num,
                         const Function& fn,
                         const std::vector<std::optional<uint64_t>>& edge_counts,
                         std::map<uint64_t, uint64_t>* counts,
                         std::string* error) {
  counts->clear();
  std::vector<std::vector<mpq_class>> rows;
  std::vector<uint32_t> row_edge;
  uint64_t n = 0;
  if (!PathSystem(dag, num, ~uint64_t{0} >> 1, &rows, &row_edge, &n)) {
    *error = "the paths are not determined by the edge counts (a cut block)";
    return false;
  }
  auto model_count = [&](uint32_t e, mpz_class* out) {
    if (e >= edge_counts.size() || !edge_counts[e]) {
      *error = "the count of edge " + std::to_string(fn.edges[e].src) +
               "->" + std::to_string(fn.edges[e].dst) + " is unknown";
      return false;
    }
    *out += mpz_class(static_cast<unsigned long>(*edge_counts[e]));
    return true;
  };
  for (size_t r = 0; r < row_edge.size(); ++r) {
    const DagEdge& d = dag.edges[row_edge[r]];
    mpz_class b = 0;
    if (d.kind == DagEdge::kStart) {
      for (const DagEdge& x : dag.edges)
        if (x.kind == DagEdge::kBackEnd && fn.edges[x.ref].dst == d.ref &&
            !model_count(x.ref, &b))
          return false;
    } else if (!model_count(d.ref, &b)) {
      return false;
    }
    rows[r][n] = b;
  }
  std::vector<int64_t> pivot;
  if (ReducePathSystem(&rows, n, &pivot) != n) {
    *error = "the paths are not determined by the edge counts";
    return false;
  }
  for (size_t r = n; r < rows.size(); ++r)
    if (sgn(rows[r][n]) != 0) {
      *error = "the edge counts are not a sum of whole paths (their flow "
               "does not balance)";
      return false;
    }
  for (uint64_t p = 0; p < n; ++p) {
    const mpq_class& x = rows[pivot[p]][n];
    if (x.get_den() != 1 || sgn(x) < 0 ||
        x.get_num() > mpz_class(static_cast<unsigned long>(~uint64_t{0}))) {
      *error = "the edge counts give path " + std::to_string(p) +
               " the count " + x.get_str() + ", not a whole count";
      return false;
    }
    if (sgn(x) != 0) (*counts)[p] = x.get_num().get_ui();
  }
  return true;
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
