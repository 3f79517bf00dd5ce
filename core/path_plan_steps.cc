// path_plan_steps.cc — the GCC-free parts of path planning's steps: see
// path_plan_steps.h.
#include "core/path_plan_steps.h"

#include <algorithm>
#include <iterator>

namespace ballarus {

std::vector<std::vector<uint64_t>> PrefixRegisterSets(
    const PathDag& dag, const PathIncrements& inc, size_t max) {
  std::vector<std::vector<uint64_t>> vals(dag.n_vertices);
  std::vector<bool> many(dag.n_vertices, false);
  vals[kEntryBlock] = {0};
  for (uint32_t v : dag.topo) {
    for (uint32_t d : dag.out[v]) {
      const uint32_t w = dag.edges[d].dst;
      if (many[w]) continue;
      if (many[v]) {
        many[w] = true;
        vals[w].clear();
        continue;
      }
      for (uint64_t x : vals[v]) vals[w].push_back(x + inc.inc[d]);
      std::sort(vals[w].begin(), vals[w].end());
      vals[w].erase(std::unique(vals[w].begin(), vals[w].end()),
                    vals[w].end());
      if (vals[w].size() > max) {
        many[w] = true;
        vals[w].clear();
      }
    }
  }
  return vals;
}

std::vector<uint64_t> PrefixRegisters(
    const std::vector<std::vector<uint64_t>>& sets) {
  std::vector<uint64_t> reg(sets.size(), 0);
  for (size_t v = 0; v < sets.size(); ++v)
    if (sets[v].size() == 1) reg[v] = sets[v].front();
  return reg;
}

bool IncrementsFitSigned(const PathIncrements& inc) {
  const uint64_t kLimit = uint64_t{1} << 62;
  uint64_t sum = 0;
  for (uint64_t x : inc.inc) {
    const int64_t v = static_cast<int64_t>(x);
    const uint64_t mag = v < 0 ? uint64_t{0} - x : x;
    sum = mag >= kLimit || sum + mag >= kLimit ? kLimit : sum + mag;
  }
  return sum < kLimit;
}

LoopEntryWeights WeighLoopEntries(const Function& fn,
                                  const std::vector<uint32_t>& entries,
                                  uint32_t back_edge,
                                  const std::vector<uint64_t>& weights,
                                  const std::vector<bool>& is_cut,
                                  const std::vector<bool>& has_code_edge) {
  LoopEntryWeights out;
  for (uint32_t i : entries) {
    out.entries += i < weights.size() ? weights[i] : 1;
    out.cuttable = out.cuttable && !is_cut[i] &&
                   !(fn.edges[i].flags & (kEdgeFake | kEdgeReentry)) &&
                   i < has_code_edge.size() && has_code_edge[i];
  }
  out.back = back_edge < weights.size() ? weights[back_edge] : 1;
  return out;
}

namespace {

// Per one-prefix vertex: the origin of its prefix (kNone if it starts at a
// re-entry, or at the entry of a function that has re-entries), and
// whether a pre-count lies on it before the vertex.
constexpr uint32_t kNone = UINT32_MAX;
struct PrefixOrigins {
  std::vector<uint32_t> origin;
  std::vector<bool> before;
};

PrefixOrigins FindPrefixOrigins(const Function& fn, const PathDag& dag,
                                const std::vector<uint8_t>& prefixes,
                                const std::vector<bool>& pre_block,
                                uint32_t nb) {
  PrefixOrigins o{std::vector<uint32_t>(dag.n_vertices, kNone),
                  std::vector<bool>(dag.n_vertices, false)};
  // The entry is an origin where it is the only way in: one ENTRY edge of
  // the CFG, not fake.
  size_t entry_edges = 0;
  bool reentered = false;
  for (uint32_t d : dag.out[kEntryBlock]) {
    const DagEdge& de = dag.edges[d];
    if (de.kind != DagEdge::kCfg) continue;
    ++entry_edges;
    reentered = reentered || (fn.edges[de.ref].flags & kEdgeFake);
  }
  for (uint32_t d : dag.out[kEntryBlock]) {
    const DagEdge& de = dag.edges[d];
    if (prefixes[de.dst] != 1) continue;
    if (de.kind == DagEdge::kStart) o.origin[de.dst] = de.ref;
    if (de.kind == DagEdge::kCfg && entry_edges == 1 && !reentered)
      o.origin[de.dst] = kFromEntry;
  }
  for (uint32_t v : dag.topo) {
    if (v == kEntryBlock || prefixes[v] != 1 || o.origin[v] == kNone)
      continue;
    for (uint32_t d : dag.out[v]) {
      const uint32_t w = dag.edges[d].dst;
      if (prefixes[w] != 1 || w == kExitBlock) continue;
      o.origin[w] = o.origin[v];
      o.before[w] = o.before[v] || (v < nb && pre_block[v]);
    }
  }
  return o;
}

}  // namespace

std::map<uint32_t, FirstPreCount> FirstPreCounts(
    const Function& fn, const PathDag& dag, const std::vector<uint64_t>& reg,
    const std::vector<uint8_t>& prefixes, const std::vector<uint64_t>& weights,
    const std::vector<bool>& reentry_block, uint32_t nb,
    const std::vector<PreCountSite>& sites) {
  std::vector<bool> pre_block(nb, false);
  for (const PreCountSite& s : sites)
    if (s.block < nb) pre_block[s.block] = true;
  const PrefixOrigins o = FindPrefixOrigins(fn, dag, prefixes, pre_block, nb);
  // Per block: the weight of its in-edges.
  std::vector<uint64_t> block_weight(nb, 0);
  for (size_t i = 0; i < fn.edges.size() && i < weights.size(); ++i)
    if (fn.edges[i].dst < nb) block_weight[fn.edges[i].dst] += weights[i];
  std::map<uint32_t, FirstPreCount> first;
  std::map<uint32_t, uint64_t> first_weight;
  for (const PreCountSite& s : sites) {
    const uint32_t u = s.block;
    if (u < 2 || u >= nb || reentry_block[u] || prefixes[u] != 1 ||
        o.origin[u] == kNone || o.before[u])
      continue;
    const uint64_t w = block_weight[u];
    auto it = first_weight.find(o.origin[u]);
    if (it == first_weight.end() || w > it->second) {
      first[o.origin[u]] = {s.index, u, reg[u] + s.a, s.guess.value_or(w)};
      first_weight[o.origin[u]] = w;
    }
  }
  return first;
}

std::vector<bool> PrecountsMadeBefore(const Function& fn, const PathDag& dag,
                                      const std::vector<uint8_t>& prefixes,
                                      const std::vector<uint32_t>& precounts,
                                      const std::vector<uint32_t>& dropped,
                                      uint32_t nb) {
  std::vector<bool> made(dag.n_vertices, false);
  for (uint32_t i : precounts) {
    const uint32_t u = fn.edges[i].src;
    if (u < nb && !std::binary_search(dropped.begin(), dropped.end(), u))
      made[u] = true;
  }
  for (uint32_t v : dag.topo) {
    if (prefixes[v] != 1 || !made[v]) continue;
    for (uint32_t d : dag.out[v])
      if (prefixes[dag.edges[d].dst] == 1) made[dag.edges[d].dst] = true;
  }
  return made;
}

std::optional<BalanceChoice> ChooseBalances(
    const std::map<uint32_t, FirstPreCount>& first,
    const std::map<uint32_t, EntryCutEnd>& entry_ends, const Function& fn,
    const PathDag& dag, const std::vector<uint8_t>& prefixes,
    const std::vector<uint32_t>& precount_edges, uint32_t nb,
    uint64_t n_paths) {
  BalanceChoice c;
  c.pre_counts = first;
  c.pre_counts.erase(kFromEntry);
  for (const auto& [s, end] : entry_ends) {
    auto it = c.pre_counts.find(s);
    if (it != c.pre_counts.end() && it->second.estimate > end.weight)
      continue;
    if (it != c.pre_counts.end()) c.pre_counts.erase(it);
    c.ends[s] = end;
  }
  if (!c.ends.empty()) {
    std::vector<uint32_t> dropped;
    for (const auto& [s, pick] : c.pre_counts) dropped.push_back(pick.block);
    std::sort(dropped.begin(), dropped.end());
    const std::vector<bool> made =
        PrecountsMadeBefore(fn, dag, prefixes, precount_edges, dropped, nb);
    for (auto it = c.ends.begin(); it != c.ends.end();)
      it = made[it->second.src] ? c.ends.erase(it) : std::next(it);
  }
  if (c.pre_counts.empty() && c.ends.empty()) return std::nullopt;
  for (const auto& [s, pick] : c.pre_counts) {
    if (pick.path >= n_paths) return std::nullopt;
    c.balanced.push_back({pick.path, s});
  }
  for (const auto& [s, end] : c.ends) {
    if (end.path >= n_paths) return std::nullopt;
    c.balanced.push_back({end.path, s});
  }
  std::sort(c.balanced.begin(), c.balanced.end(),
            [](const auto& x, const auto& y) { return x.path < y.path; });
  for (size_t i = 1; i < c.balanced.size(); ++i)
    if (c.balanced[i].path == c.balanced[i - 1].path) return std::nullopt;
  return c;
}

}  // namespace ballarus
