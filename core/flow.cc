// flow.cc — flow propagation over the closed CFG (see flow.h).
//
// Ball & Larus TOPLAS'94 Fig. 6 ("propagate counts"), done with a worklist:
// each vertex keeps the number of its incident edges still unknown; a vertex
// whose number drops to one solves that edge as
//     in-edge:   count = sum(known out) - sum(known in)
//     out-edge:  count = sum(known in)  - sum(known out)
// and the solved edge's other endpoint is re-examined.  The virtual edge
// EXIT->ENTRY is an ordinary edge here (index |E|).  A self-loop is on both
// sides of its vertex and cancels out of the equation: it can never be
// solved, only counted (it is always a chord of a spanning tree, so edge
// mode counts it).  Sums are exact (128-bit); a derivation that would be
// negative is recorded and leaves the edge unknown, never wraps.
#include "core/flow.h"

#include <algorithm>
#include <deque>

namespace ballarus {
namespace {

using u128 = unsigned __int128;

uint64_t Clamp(u128 v) {
  return v > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(v);
}

// The closed graph: vertex incidence lists over edge indices, |E| = virtual.
struct Closed {
  size_t n_edges = 0;  // real edges; index n_edges is the virtual edge
  std::vector<std::vector<size_t>> in, out;
  std::vector<uint32_t> src, dst;
  std::vector<bool> used;  // false for ignored edges

  explicit Closed(const Function& f) {
    const size_t nb = f.blocks.size();
    n_edges = f.edges.size();
    in.resize(nb);
    out.resize(nb);
    src.resize(n_edges + 1);
    dst.resize(n_edges + 1);
    used.assign(n_edges + 1, true);
    for (size_t i = 0; i < n_edges; ++i) {
      const Edge& e = f.edges[i];
      src[i] = e.src;
      dst[i] = e.dst;
      if ((e.flags & kEdgeIgnored) || e.src >= nb || e.dst >= nb) {
        used[i] = false;
        continue;
      }
      out[e.src].push_back(i);
      in[e.dst].push_back(i);
    }
    if (nb > kExitBlock) {
      src[n_edges] = kExitBlock;
      dst[n_edges] = kEntryBlock;
      out[kExitBlock].push_back(n_edges);
      in[kEntryBlock].push_back(n_edges);
    } else {
      used[n_edges] = false;
    }
  }
};

// Sum of the known edges of `list`; *all_known tells whether none is unknown.
u128 SumKnown(const std::vector<size_t>& list, const std::vector<Count>& v,
              bool* all_known) {
  u128 s = 0;
  *all_known = true;
  for (size_t e : list) {
    if (v[e])
      s += *v[e];
    else
      *all_known = false;
  }
  return s;
}

}  // namespace

std::vector<Count> KnownFromCounters(const Function& f,
                                     const uint64_t* counters,
                                     size_t n_counters) {
  std::vector<Count> known(f.edges.size());
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const int64_t c = f.edges[i].counter;
    if (c >= 0 && static_cast<uint64_t>(c) < n_counters)
      known[i] = counters[c];
  }
  return known;
}

FlowResult SolveFlow(const Function& f, const std::vector<Count>& known,
                     Count known_virtual) {
  const Closed g(f);
  const size_t nb = f.blocks.size();
  const size_t ne = g.n_edges;
  std::vector<Count> v(ne + 1);
  for (size_t i = 0; i < ne && i < known.size(); ++i) v[i] = known[i];
  v[ne] = known_virtual;

  FlowResult r;
  // Unknown incident edges per vertex; a self-loop counts twice so that it
  // never looks solvable.
  std::vector<size_t> unknown(nb, 0);
  for (size_t b = 0; b < nb; ++b) {
    for (size_t e : g.in[b])
      if (!v[e]) ++unknown[b];
    for (size_t e : g.out[b])
      if (!v[e]) ++unknown[b];
  }
  std::deque<uint32_t> work;
  for (size_t b = 0; b < nb; ++b)
    if (unknown[b] == 1) work.push_back(static_cast<uint32_t>(b));
  std::vector<bool> done(nb, false);
  while (!work.empty()) {
    const uint32_t b = work.front();
    work.pop_front();
    if (done[b] || unknown[b] != 1) continue;
    done[b] = true;
    bool all;
    const u128 in_sum = SumKnown(g.in[b], v, &all);
    const u128 out_sum = SumKnown(g.out[b], v, &all);
    size_t e = ne + 1;
    bool is_in = false;
    for (size_t x : g.in[b])
      if (!v[x]) e = x, is_in = true;
    for (size_t x : g.out[b])
      if (!v[x]) e = x, is_in = false;
    const u128 have = is_in ? out_sum : in_sum;
    const u128 minus = is_in ? in_sum : out_sum;
    if (have < minus) {
      FlowIssue issue;
      issue.kind = FlowIssue::kNegative;
      issue.block = b;
      issue.edge = e == ne ? kVirtualEdge : e;
      issue.in_sum = Clamp(in_sum);
      issue.out_sum = Clamp(out_sum);
      r.negatives.push_back(issue);
      continue;
    }
    v[e] = Clamp(have - minus);
    for (uint32_t end : {g.src[e], g.dst[e]}) {
      --unknown[end];
      if (unknown[end] == 1 && !done[end]) work.push_back(end);
    }
  }

  r.edges.assign(v.begin(), v.begin() + ne);
  for (size_t i = 0; i < ne; ++i)
    if (!g.used[i]) r.edges[i] = i < known.size() ? known[i] : std::nullopt;
  r.virtual_edge = v[ne];

  r.blocks.resize(nb);
  for (size_t b = 0; b < nb; ++b) {
    bool in_all, out_all;
    const u128 in_sum = SumKnown(g.in[b], v, &in_all);
    const u128 out_sum = SumKnown(g.out[b], v, &out_all);
    // ENTRY's count is the activations that started: its out-flow.
    if (b == kEntryBlock && out_all && !g.out[b].empty())
      r.blocks[b] = Clamp(out_sum);
    else if (in_all && !g.in[b].empty())
      r.blocks[b] = Clamp(in_sum);
    else if (out_all && !g.out[b].empty())
      r.blocks[b] = Clamp(out_sum);
    else if (g.in[b].empty() && g.out[b].empty())
      r.blocks[b] = 0;
  }
  return r;
}

std::vector<FlowIssue> CheckConservation(const Function& f,
                                         const FlowResult& r) {
  const Closed g(f);
  const size_t ne = g.n_edges;
  std::vector<Count> v(ne + 1);
  for (size_t i = 0; i < ne && i < r.edges.size(); ++i)
    if (g.used[i]) v[i] = r.edges[i];
  v[ne] = r.virtual_edge;

  std::vector<FlowIssue> issues;
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    bool in_all, out_all;
    const u128 in_sum = SumKnown(g.in[b], v, &in_all);
    const u128 out_sum = SumKnown(g.out[b], v, &out_all);
    if (in_all && out_all && in_sum != out_sum) {
      FlowIssue issue;
      issue.kind = FlowIssue::kImbalance;
      issue.block = static_cast<uint32_t>(b);
      issue.in_sum = Clamp(in_sum);
      issue.out_sum = Clamp(out_sum);
      issues.push_back(issue);
    }
  }
  issues.insert(issues.end(), r.negatives.begin(), r.negatives.end());
  for (size_t i = 0; i < ne; ++i) {
    if (!g.used[i] || v[i]) continue;
    FlowIssue issue;
    issue.kind = FlowIssue::kUnknown;
    issue.block = f.edges[i].src;
    issue.edge = i;
    issues.push_back(issue);
  }
  std::stable_sort(issues.begin(), issues.end(),
                   [](const FlowIssue& a, const FlowIssue& b) {
                     return a.block < b.block;
                   });
  return issues;
}

}  // namespace ballarus
