// trace_plan.cc — blocking witnesses, then maximum-spanning-tree chords
// (see trace_plan.h; Ball & Larus TOPLAS'94 §4.1–4.2).
#include "core/trace_plan.h"

#include <algorithm>
#include <utility>

#include "core/spanning_tree.h"

namespace ballarus {

bool IsTraceFlowEdge(const Edge& e) {
  return (e.flags & (kEdgeFake | kEdgeIgnored | kEdgeReentry)) == 0;
}

std::vector<uint32_t> FlowOutDegrees(const Function& fn) {
  std::vector<uint32_t> out(fn.blocks.size(), 0);
  for (const Edge& e : fn.edges)
    if (IsTraceFlowEdge(e) && e.src < out.size() && e.dst < out.size())
      ++out[e.src];
  return out;
}

int64_t BlockWitness(const TracePlan& plan, uint32_t block) {
  const auto& wb = plan.witness_blocks;
  auto it = std::lower_bound(wb.begin(), wb.end(), block);
  if (it == wb.end() || *it != block) return kNoWitness;
  return static_cast<int64_t>(plan.witness_edges.size() + (it - wb.begin()));
}

std::vector<bool> DispatchBlocks(const Function& fn) {
  const size_t nb = fn.blocks.size();
  std::vector<bool> flow_in(nb, false), flow_out(nb, false), goes(nb, false);
  for (const Edge& e : fn.edges) {
    if (e.src >= nb || e.dst >= nb) continue;
    if (IsTraceFlowEdge(e)) flow_out[e.src] = flow_in[e.dst] = true;
    if ((e.flags & kEdgeAbnormal) && e.dst != kExitBlock &&
        e.src != kEntryBlock)
      goes[e.src] = true;
  }
  std::vector<bool> d(nb, false);
  for (size_t b = 0; b < nb; ++b) d[b] = flow_in[b] && !flow_out[b] && goes[b];
  return d;
}

bool IsDispatchEdge(const Function& fn, const Edge& e) {
  if (!(e.flags & kEdgeAbnormal) || e.dst == kExitBlock ||
      e.src >= fn.blocks.size())
    return false;
  return DispatchBlocks(fn)[e.src];
}

namespace {

// The targets of dispatch blocks, ascending.
std::vector<uint32_t> WitnessBlocks(const Function& fn,
                                    const std::vector<bool>& dispatch) {
  std::vector<bool> target(fn.blocks.size(), false);
  for (const Edge& e : fn.edges)
    if (e.src < dispatch.size() && dispatch[e.src] &&
        (e.flags & kEdgeAbnormal) && e.dst < target.size() &&
        e.dst > kExitBlock)
      target[e.dst] = true;
  std::vector<uint32_t> out;
  for (uint32_t b = 0; b < target.size(); ++b)
    if (target[b]) out.push_back(b);
  return out;
}

// blockers(G, v) for every `call_block`, EXIT and each `extra` target: a
// backward search from v through non-predicates; each flow edge into a
// visited vertex from a predicate is a blocker.  A block with a block
// witness blocks every path through it: the search stops there.
std::vector<bool> BlockingEdges(const Function& fn,
                                const std::vector<bool>& call_block,
                                const std::vector<bool>& extra,
                                const std::vector<bool>& has_block_witness) {
  const size_t nb = fn.blocks.size();
  const std::vector<uint32_t> out = FlowOutDegrees(fn);
  std::vector<std::vector<size_t>> in(nb);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (IsTraceFlowEdge(e) && e.src < nb && e.dst < nb) in[e.dst].push_back(i);
  }
  std::vector<bool> blocking(fn.edges.size(), false);
  std::vector<bool> seen(nb, false);
  std::vector<uint32_t> stack;
  for (uint32_t v = 0; v < nb; ++v) {
    if (v != kExitBlock && !call_block[v] && !extra[v]) continue;
    // `seen` is shared: a non-predicate reached from one target has the
    // same blockers whichever target reached it.
    if (!seen[v]) seen[v] = true, stack.push_back(v);
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      if (has_block_witness[x]) continue;
      for (size_t i : in[x]) {
        const uint32_t p = fn.edges[i].src;
        if (out[p] >= 2) {
          blocking[i] = true;
        } else if (!seen[p]) {
          seen[p] = true;
          stack.push_back(p);
        }
      }
    }
  }
  return blocking;
}

// The placement, call blocks blocked or not (trace_plan.h).
TracePlan Place(const Function& fn, const std::vector<uint64_t>& weights,
                const std::vector<bool>& call_blocks, bool block_calls) {
  const size_t nb = fn.blocks.size();
  const size_t ne = fn.edges.size();
  TracePlan plan;
  plan.call_block.assign(nb, false);
  for (size_t b = 0; b < nb && b < call_blocks.size(); ++b)
    plan.call_block[b] = call_blocks[b];

  const std::vector<bool> dispatch = DispatchBlocks(fn);
  plan.witness_blocks = WitnessBlocks(fn, dispatch);
  std::vector<bool> has_bw(nb, false);
  for (uint32_t b : plan.witness_blocks) has_bw[b] = true;
  // One dispatch block is a merge the spanning tree sees; two or more
  // could be reached from one predicate on witness-free paths.
  const bool block_dispatch =
      std::count(dispatch.begin(), dispatch.end(), true) >= 2;
  const std::vector<bool> none(nb, false);
  const std::vector<bool> blocking =
      BlockingEdges(fn, block_calls ? plan.call_block : none,
                    block_dispatch ? dispatch : none, has_bw);
  // Flow edges into a witnessed block: a witness of their own.
  std::vector<bool> forced(ne, false);
  for (size_t i = 0; i < ne; ++i) {
    const Edge& e = fn.edges[i];
    forced[i] = IsTraceFlowEdge(e) && e.dst < nb && has_bw[e.dst];
  }
  // Step 2: the spanning tree may use neither blocking edges nor edges that
  // are not flow edges; flag them ignored in a copy.
  // The virtual edge EXIT->ENTRY would make one edge of every ENTRY->EXIT
  // path a chord, a witness Trace(Ewit) does not need (a cycle through it
  // is no directed cycle of the CFG): EXIT is renamed to a new block, so
  // the virtual edge joins ENTRY to an isolated vertex.
  Function g = fn;
  g.blocks.emplace_back();
  const uint32_t exit_alias = static_cast<uint32_t>(nb);
  for (size_t i = 0; i < ne; ++i) {
    Edge& e = g.edges[i];
    if (blocking[i] || forced[i] || !IsTraceFlowEdge(e))
      e.flags |= kEdgeIgnored;
    if (e.dst == kExitBlock) e.dst = exit_alias;
    if (e.src == kExitBlock) e.src = exit_alias;
  }
  const SpanningTree t = MaximumSpanningTree(g, weights);

  std::vector<bool> wit = blocking;
  for (size_t i = 0; i < ne; ++i) wit[i] = wit[i] || forced[i];
  for (size_t c : t.chords) wit[c] = true;
  for (size_t c : t.uncountable_chords) wit[c] = true;
  plan.witness_of_edge.assign(ne, kNoWitness);
  for (size_t i = 0; i < ne; ++i) {
    if (!wit[i]) continue;
    if (blocking[i]) plan.blocking.push_back(i);
    if (IsUncountableEdge(fn.edges[i])) {
      plan.unwitnessable.push_back(i);
      continue;
    }
    plan.witness_of_edge[i] = static_cast<int64_t>(plan.witness_edges.size());
    plan.witness_edges.push_back(i);
  }
  return plan;
}

}  // namespace

TracePlan PlanTrace(const Function& fn, const std::vector<uint64_t>& weights,
                    const std::vector<bool>& call_blocks, CallDecision calls) {
  if (calls == CallDecision::kBlockingWitness)
    return Place(fn, weights, call_blocks, true);
  TracePlan plan = Place(fn, weights, call_blocks, false);
  plan.calls = CallDecision::kSite;
  if (SitesDisjoint(fn, plan)) return plan;
  return Place(fn, weights, call_blocks, true);
}

bool SitesDisjoint(const Function& fn, const TracePlan& plan) {
  const size_t nb = fn.blocks.size();
  std::vector<std::vector<size_t>> succ(nb);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (IsTraceFlowEdge(e) && e.src < nb && e.dst < nb) succ[e.src].push_back(i);
  }
  // Per predicate: which out-edge reached each block first (`owner`, valid
  // where stamp == round), kShared once two of them have.  A block reached
  // from two goes on as shared, so that a call block past it is found.
  constexpr size_t kShared = ~size_t{0};
  std::vector<size_t> owner(nb, 0);
  std::vector<uint32_t> stamp(nb, 0);
  uint32_t round = 0;
  std::vector<std::pair<size_t, size_t>> stack;  // (edge, owner)
  for (size_t p = 0; p < nb; ++p) {
    if (succ[p].size() < 2) continue;
    ++round;
    for (size_t k = 0; k < succ[p].size(); ++k) stack.emplace_back(succ[p][k], k);
    while (!stack.empty()) {
      const auto [e, k] = stack.back();
      stack.pop_back();
      const uint32_t x = fn.edges[e].dst;
      if (plan.witness_of_edge[e] != kNoWitness ||
          BlockWitness(plan, x) != kNoWitness)
        continue;
      size_t now = k;
      if (stamp[x] == round) {
        if (owner[x] == k || owner[x] == kShared) continue;
        now = kShared;
      }
      if (now == kShared && x < plan.call_block.size() && plan.call_block[x])
        return false;
      stamp[x] = round, owner[x] = now;
      for (size_t next : succ[x]) stack.emplace_back(next, now);
    }
  }
  return true;
}

}  // namespace ballarus
