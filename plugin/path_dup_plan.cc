// path_dup_plan.cc — see path_dup_plan.h.
#include "plugin/path_dup_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/path_dag.h"

namespace ballarus {

namespace {

// One executed path as the CFG edges it takes (a back edge that ends it
// included), with its count.
struct PathSeq {
  std::vector<uint32_t> edges;
  uint64_t count = 0;
};

// Where a path passes: path index, position of the edge in it.
struct Occ {
  uint32_t path;
  uint32_t pos;
};

std::vector<PathSeq> EdgeSequences(const LoadedPaths& lp) {
  std::vector<PathSeq> out;
  for (const auto& [number, dag_edges] : lp.decoded) {
    auto c = lp.counts.find(number);
    if (c == lp.counts.end() || c->second == 0) continue;
    PathSeq s;
    s.count = c->second;
    for (uint32_t d : dag_edges) {
      const DagEdge& de = lp.dag.edges[d];
      if (de.kind == DagEdge::kCfg || de.kind == DagEdge::kBackEnd)
        s.edges.push_back(de.ref);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A real control-flow edge GCC keeps after reading the profile: in the
// path DAG and not a fake edge standing for a call that may not return.
bool RealEdge(const Edge& e) { return IsPathEdge(e) && !(e.flags & kEdgeFake); }

class Planner {
 public:
  Planner(const PathDupInput& in, const PathDupLimits& limits)
      : fn_(*in.fn), lp_(*in.paths), limits_(limits) {
    seqs_ = EdgeSequences(lp_);
    const size_t nb = fn_.blocks.size();
    out_.resize(nb);
    preds_.assign(nb, 0);
    for (uint32_t i = 0; i < fn_.edges.size(); ++i) {
      const Edge& e = fn_.edges[i];
      if (!RealEdge(e)) continue;
      out_[e.src].push_back(i);
      ++preds_[e.dst];
    }
    cut_edge_.assign(fn_.edges.size(), false);
    for (uint32_t e : lp_.info.cut_edges) cut_edge_[e] = true;
    cut_block_.assign(nb, false);
    for (uint32_t b : lp_.info.cut_blocks) cut_block_[b] = true;
  }

  uint64_t TotalBranch() const {
    uint64_t t = 0;
    for (uint32_t v = 0; v < out_.size(); ++v)
      if (out_[v].size() >= 2)
        for (uint32_t e : out_[v]) t += T(e);
    return t;
  }

  uint32_t TotalSize() const {
    uint32_t t = 0;
    for (uint32_t s : limits_.size) t += s;
    return t;
  }

  // Per entry edge into a join: where the paths take it.
  std::map<uint32_t, std::vector<Occ>> EntryOccurrences() const {
    std::map<uint32_t, std::vector<Occ>> occ;
    for (uint32_t p = 0; p < seqs_.size(); ++p)
      for (uint32_t i = 0; i + 1 < seqs_[p].edges.size(); ++i) {
        const uint32_t a = seqs_[p].edges[i];
        const uint32_t j = fn_.edges[a].dst;
        if (preds_[j] >= 2 && !cut_edge_[a] && Copyable(j))
          occ[a].push_back({p, i});
      }
    return occ;
  }

  DupChain Grow(uint32_t a, std::vector<Occ> cur) const;

 private:
  uint64_t T(uint32_t e) const { return lp_.derived[e]; }
  bool Copyable(uint32_t v) const {
    return v >= 2 && v < limits_.copyable.size() && limits_.copyable[v] &&
           !cut_block_[v];
  }
  uint64_t Gain(uint32_t v, const std::map<uint32_t, uint64_t>& s) const;

  const Function& fn_;
  const LoadedPaths& lp_;
  const PathDupLimits& limits_;
  std::vector<PathSeq> seqs_;
  std::vector<std::vector<uint32_t>> out_;  // real out-edges per block
  std::vector<uint32_t> preds_;             // real in-edges per block
  std::vector<bool> cut_edge_, cut_block_;
};

uint64_t Planner::Gain(uint32_t v,
                       const std::map<uint32_t, uint64_t>& s) const {
  if (out_[v].size() < 2) return 0;
  uint64_t tv = 0, max_t = 0, sv = 0, max_s = 0, rv = 0, max_r = 0;
  for (uint32_t e : out_[v]) {
    const uint64_t t = T(e);
    auto it = s.find(e);
    const uint64_t se = it == s.end() ? 0 : std::min(it->second, t);
    tv += t;
    sv += se;
    rv += t - se;
    max_t = std::max(max_t, t);
    max_s = std::max(max_s, se);
    max_r = std::max(max_r, t - se);
  }
  const uint64_t before = tv - max_t, after = (sv - max_s) + (rv - max_r);
  return before > after ? before - after : 0;
}

// The chain entered by `a`: from j, the successor the paths through the
// chain so far take most, while blocks can be copied; cut back to the
// prefix with the largest gain.
DupChain Planner::Grow(uint32_t a, std::vector<Occ> cur) const {
  DupChain c;
  c.entry_edge = a;
  uint32_t v = fn_.edges[a].dst;
  uint64_t gain = 0, best_gain = 0;
  uint32_t cost = 0, best_cost = 0;
  size_t best_len = 0;
  std::set<uint32_t> in_chain;
  while (c.blocks.size() < limits_.max_chain && Copyable(v) &&
         in_chain.insert(v).second) {
    uint64_t sv = 0;
    std::map<uint32_t, uint64_t> s;
    for (const Occ& o : cur) {
      const PathSeq& p = seqs_[o.path];
      sv += p.count;
      if (o.pos + 1 < p.edges.size()) s[p.edges[o.pos + 1]] += p.count;
    }
    c.blocks.push_back(v);
    c.copy_count.push_back(sv);
    c.copy_out.emplace_back();
    for (uint32_t e : out_[v])
      c.copy_out.back().push_back({e, s.count(e) ? s[e] : 0});
    cost += limits_.size[v];
    gain += Gain(v, s);
    if (gain > best_gain) {
      best_gain = gain;
      best_cost = cost;
      best_len = c.blocks.size();
    }
    uint32_t next = 0;
    uint64_t next_count = 0;
    for (const auto& [e, n] : s)
      if (n > next_count && RealEdge(fn_.edges[e])) next = e, next_count = n;
    if (next_count == 0 || cut_edge_[next]) break;
    std::vector<Occ> kept;
    for (const Occ& o : cur)
      if (o.pos + 1 < seqs_[o.path].edges.size() &&
          seqs_[o.path].edges[o.pos + 1] == next)
        kept.push_back({o.path, o.pos + 1});
    cur.swap(kept);
    c.edges.push_back(next);
    v = fn_.edges[next].dst;
  }
  c.blocks.resize(best_len);
  c.copy_count.resize(best_len);
  c.copy_out.resize(best_len);
  c.edges.resize(best_len > 0 ? best_len - 1 : 0);
  c.gain = best_gain;
  c.cost = best_cost;
  return c;
}

}  // namespace

std::vector<DupChain> PlanPathDuplication(const PathDupInput& in,
                                          const PathDupLimits& limits,
                                          PathDupStats* stats) {
  Planner planner(in, limits);
  PathDupStats st;
  st.branch = planner.TotalBranch();
  st.min_gain = std::max<uint64_t>(
      limits.min_gain, st.branch / 1000 * limits.min_gain_permille);
  std::vector<DupChain> candidates;
  for (auto& [a, occ] : planner.EntryOccurrences()) {
    DupChain c = planner.Grow(a, occ);
    ++st.entries;
    st.best_gain = std::max(st.best_gain, c.gain);
    st.sum_gain += c.gain;
    if (!c.blocks.empty() && c.gain >= st.min_gain)
      candidates.push_back(std::move(c));
  }
  if (stats) *stats = st;
  // Best gain first; of equal gains (the two sides of a two-way join split
  // it alike) the hotter entry, whose copy then carries the hot path.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const DupChain& x, const DupChain& y) {
                     if (x.gain != y.gain) return x.gain > y.gain;
                     return x.copy_count[0] > y.copy_count[0];
                   });
  const uint32_t budget = std::max<uint32_t>(
      limits.min_growth, planner.TotalSize() * limits.growth_percent / 100);
  std::set<uint32_t> copied, sources;
  std::vector<DupChain> chosen;
  uint32_t spent = 0;
  for (DupChain& c : candidates) {
    const uint32_t src = in.fn->edges[c.entry_edge].src;
    bool ok = spent + c.cost <= budget && !copied.count(src);
    for (uint32_t b : c.blocks)
      ok = ok && !copied.count(b) && !sources.count(b);
    if (!ok) continue;
    spent += c.cost;
    copied.insert(c.blocks.begin(), c.blocks.end());
    sources.insert(src);
    chosen.push_back(std::move(c));
  }
  return chosen;
}

}  // namespace ballarus
