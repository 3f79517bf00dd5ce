// path_ends.cc — path planning's steps at the path ends and along the DAG:
// computed gotos and early-termination pre-counts (the fake edges into
// EXIT), loops counted in locals, and the DAG's own edges (the register's
// initialisation, the chords' increments, returns, back edges and cut
// blocks).  Where a count may move off its block onto edges where the
// register is known, path_hoist.cc says where.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/path_profile.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/options.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

namespace {

gimple* LastStmt(basic_block bb) {
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
  return gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
}

bool IsTailCall(gimple* call) {
  return gimple_call_tail_p(as_a<gcall*>(call)) ||
         gimple_call_must_tail_p(as_a<gcall*>(call));
}

// A computed goto's path end (block u, fake edge increment a): counted
// deep before the goto where its targets start their own paths
// (path-goto-targets: HoistPathEnd), else on the edges into GCC's factored
// `goto *` block, which then stays small enough for the RTL passes to
// duplicate it back into each predecessor, else before the goto.
void PlanGotoEnd(PathPlanState* s, uint32_t u, uint64_t a) {
  std::vector<std::pair<edge, uint64_t>> sites;
  std::vector<edge> hoisted;
  int depth = 0;
  if (!s->sources_reset && HoistPathEnd(s, u, a, &sites, &depth)) {
    for (const auto& [h, ha] : sites) s->OnEdge(h, PathAction::kCount, ha, 0);
    s->work->goto_end_hoisted = true;
    if (dump_file)
      fprintf(dump_file, "  path: computed goto at block %u: its path "
              "end counted on %zu edges, up to %d blocks before its "
              "in-edges\n", u, sites.size(), depth);
  } else if (HoistOnto(s, u, /*any_preds=*/true, /*onto_chords=*/false,
                       &hoisted)) {
    for (edge h : hoisted)
      s->OnEdge(h, s->sources_reset ? PathAction::kCountReset
                                    : PathAction::kCount, a, 0);
    if (dump_file)
      fprintf(dump_file, "  path: computed goto at block %u: its path end "
              "counted on the %zu edges into it\n", u, hoisted.size());
  } else {
    s->InBlock(u, s->sources_reset ? PathAction::kEndCountReset
                                   : PathAction::kEndCount, a, 0);
    if (dump_file)
      fprintf(dump_file, "  path: computed goto at block %u: its path end "
              "counted before the goto\n", u);
  }
  s->end_reset[u] = s->sources_reset;
}

// Pre-count hoisting (path-precount-hoist): where several prefixes reach
// the call's block u its register is a PHI, and the pre-count an indexed
// increment through a materialised base; on the edges into u, or further
// back through blocks with one way on, the prefix is known and the count
// one increment of a fixed counter.  Nothing between those edges and the
// call can leave (gcov's CFG ends a block at every call that may not
// return), so the count is the same.  Only where every site ends up with a
// constant register and no edge needs splitting: a site that stays
// indexed keeps the register live on more edges (docs/performance.md,
// "Pre-count hoisting").  Model edge i is the call's fake edge.
bool HoistPreCount(PathPlanState* s, size_t i, uint32_t u, uint64_t a) {
  std::vector<std::pair<edge, uint64_t>> sites;
  int depth = 0;
  if (!HoistPathEnd(s, u, a, &sites, &depth, HoistFrom::kPreCount))
    return false;
  size_t fixed = 0;
  for (const auto& [h, ha] : sites) fixed += s->prefixes[h->src->index] == 1;
  if (fixed != sites.size()) return false;
  for (const auto& [h, ha] : sites) s->OnEdge(h, PathAction::kCount, ha, 0);
  s->work->info.precount_edges.push_back(static_cast<uint32_t>(i));
  if (dump_file)
    fprintf(dump_file, "  path: block %u: pre-count made on %zu "
            "edges (%zu fixed), up to %d blocks before it\n", u,
            sites.size(), fixed, depth);
  return true;
}

// The pre-count of the call ending block u (fake edge i, increment a;
// `normal`: the block goes on by an ordinary edge).  A callee of this TU
// that always returns cannot cut the path short -- unless the path has no
// other way on, or the call is a tail call (a thunk's: GCC jumps to the
// callee, which returns to our caller, and the code after the call never
// runs: the fake edge is where the path ends).
void PlanPreCount(PathPlanState* s, size_t i, uint32_t u, uint64_t a,
                  gimple* last, bool normal) {
  if (normal && last && is_gimple_call(last) && !IsTailCall(last) &&
      s->returning.AlwaysReturns(last)) {
    s->may_leave[u] = false;
    if (dump_file)
      fprintf(dump_file, "  path: block %u: the callee always returns: no "
              "pre-count\n", u);
    return;
  }
  if (s->prefixes[u] != 1 && HoistPreCount(s, i, u, a)) return;
  // Reconstruct subtracts the executions that went on past the call
  // (SettlePrecounts, core/path_profile.h).
  s->InBlock(u, PathAction::kPreCount, a, 0);
  s->work->info.precount_edges.push_back(static_cast<uint32_t>(i));
  if (dump_file)
    fprintf(dump_file, "  path: block %u: pre-count before its call (%s)\n",
            u, s->prefixes[u] == 1 ? "one prefix reaches it"
                                   : "not hoisted: several prefixes");
}

}  // namespace

// Fake edges into EXIT: a block left by abnormal edges only (a computed
// goto), or a call that may not return (early termination: the path cut
// short there is counted before the call, and reconstruct settles it).
void PlanFakeExits(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  s->may_leave.assign(s->nb, false);
  s->end_reset.assign(s->nb, false);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const ballarus::Edge& me = fn.edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.dst != ballarus::kExitBlock ||
        s->dag.dag_edge_of_cfg[i] < 0)
      continue;
    const uint32_t u = me.src;
    s->may_leave[u] = true;  // unless its callee always returns
    if (s->returns_twice[u] || s->dispatcher[u] || s->bbs[u] == NULL)
      continue;
    if (s->reentry_block[u]) continue;  // PlanReentryCalls
    const uint64_t a = s->inc.inc[s->dag.dag_edge_of_cfg[i]];
    gimple* last = LastStmt(s->bbs[u]);
    bool normal = false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, s->bbs[u]->succs)
      normal = normal ||
               !(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL));
    if ((last == NULL || !is_gimple_call(last)) && !normal) {
      PlanGotoEnd(s, u, a);
      continue;
    }
    if (g_options.early_termination) PlanPreCount(s, i, u, a, last, normal);
  }
}

// Loops whose iterations take one path count them in locals (core/
// path_profile.h FindCountedLoops): an increment of a register per
// iteration instead of a counter update in memory.  A loop whose entry
// edges are cut starts every iteration with r = b, so all its iterations
// end path K: n = 0 on entry, n += 1 on the back edge, count[K] += n on
// each exit.  Otherwise the loop also saves the register on entry, s, and
// on exit counts the first iteration's path s + d apart.  Only where
// nothing leaves the loop but its exits (may_leave: a pending n would be
// lost).  Each run of a counted loop costs a few instructions at its entry
// and exit, more than it saves unless the loop iterates, and static
// estimates do not tell which loops do (docs/performance.md, "Loops
// counted in locals"): so by default (path-loops=profile) only an earlier
// profile's counts (weights=profile=) decide, at least 8 iterations per
// entry; path-loops=on trusts any weights (2 per entry).
void PlanCountedLoops(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  s->loop_of_back_edge.assign(fn.edges.size(), -1);
  const bool count_loops =
      g_options.path_loops == Options::PathLoops::kOn ||
      (g_options.path_loops == Options::PathLoops::kProfile &&
       s->measured_weights);
  if (!count_loops) return;
  const uint64_t min_ratio =
      g_options.path_loops == Options::PathLoops::kOn ? 2 : 8;
  // FindCountedLoops wants a loop's header to be the target of its back
  // edge only: the cuts without the entry cuts (the DAG is the final one).
  ballarus::PathCuts back_cuts = s->plan.cuts;
  back_cuts.edges.clear();
  for (uint32_t i : s->plan.cuts.edges)
    if (!std::binary_search(s->entry_cuts.begin(), s->entry_cuts.end(), i))
      back_cuts.edges.push_back(i);
  for (const ballarus::CountedLoop& L : ballarus::FindCountedLoops(
           fn, s->dag, back_cuts, s->inc, s->may_leave)) {
    bool cut = true;
    for (uint32_t i : L.entries)
      cut = cut &&
            std::binary_search(s->entry_cuts.begin(), s->entry_cuts.end(), i);
    uint64_t in_w = 0;
    for (uint32_t i : L.entries)
      in_w += i < s->weights.size() ? s->weights[i] : 1;
    const uint64_t back_w =
        L.back_edge < s->weights.size() ? s->weights[L.back_edge] : 1;
    if (back_w < min_ratio * in_w) {
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): one "
                "path per iteration, not counted in a local (back edge "
                "%llu, entries %llu: under %llu iterations per entry)\n",
                L.header, fn.edges[L.back_edge].src, L.header,
                (unsigned long long)back_w, (unsigned long long)in_w,
                (unsigned long long)min_ratio);
      continue;
    }
    const int l = static_cast<int>(s->work->loops.size());
    s->work->loops.push_back({L.start, L.iteration, L.first_offset, cut});
    s->loop_of_back_edge[L.back_edge] = l;
    auto act = [&](PathAction::Kind k) {
      PathAction x{k, 0, 0};
      x.loop = l;
      return x;
    };
    auto& on_edges = s->work->on_edges;
    for (uint32_t i : L.entries)
      on_edges.push_back({s->gcc_edges[i], act(PathAction::kLoopEnter)});
    for (uint32_t i : L.exits)
      on_edges.push_back({s->gcc_edges[i], act(PathAction::kLoopExit)});
    on_edges.push_back(
        {s->gcc_edges[L.back_edge], act(PathAction::kLoopBack)});
    if (dump_file)
      fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): one "
              "path per iteration (%llu), counted in a local%s; %zu "
              "entries, %zu exits\n",
              L.header, fn.edges[L.back_edge].src, L.header,
              (unsigned long long)L.iteration, cut ? " (entries cut)" : "",
              L.entries.size(), L.exits.size());
  }
}

namespace {

// A return (model edge `ref` into EXIT, DAG edge d) whose path end moves
// onto the edges into its block u (HoistOnto: onto chords from branches
// too, where they are split anyway).  From a call that always returns the
// count goes before the call: nothing of the path is left after it, so
// GCC can make it a tail call, as without instrumentation.
void PlanHoistedReturn(PathPlanState* s, uint32_t u, size_t d,
                       const std::vector<edge>& hoisted) {
  for (edge h : hoisted) {
    const int pi = h->src->index;
    const uint32_t p = static_cast<uint32_t>(pi);
    gimple* last = NULL;
    if (pi >= 2 && p < s->nb && s->bbs[p] != NULL && !s->returns_twice[p] &&
        !s->dispatcher[p] && !s->reentry_block[p] &&
        RealSuccessors(s->bbs[p]) == 1)
      last = LastStmt(s->bbs[p]);
    auto m = s->model_edge_of.find(h);
    const int64_t hd = m == s->model_edge_of.end()
                           ? -1
                           : s->dag.dag_edge_of_cfg[m->second];
    if (last != NULL && is_gimple_call(last) && hd >= 0 &&
        g_options.early_termination && s->returning.AlwaysReturns(last)) {
      s->InBlock(p, PathAction::kEndCount, s->inc.inc[d] + s->inc.inc[hd], 0);
      if (dump_file)
        fprintf(dump_file, "  path: block %u: its return counted "
                "before block %u's call, which always returns\n", u, p);
      continue;
    }
    s->OnEdge(h, PathAction::kCount, s->inc.inc[d], 0);
  }
  if (dump_file && s->hoisted_onto_chords > 0)
    fprintf(dump_file, "  path: block %u: its return counted on the "
            "%zu edges into it (%zu of them chords from branches)\n",
            u, hoisted.size(), s->hoisted_onto_chords);
  else if (dump_file)
    fprintf(dump_file, "  path: block %u: its return counted on the "
            "%zu edges into it\n", u, hoisted.size());
}

// A real DAG edge: r = a out of ENTRY, a return's count, a chord's add.
void PlanCfgEdge(PathPlanState* s, size_t d) {
  const ballarus::DagEdge& de = s->dag.edges[d];
  const ballarus::Edge& me = s->fn->edges[de.ref];
  // Fake edges carry no code; a re-entry edge's is its kReentry.
  if (me.flags & (ballarus::kEdgeFake | ballarus::kEdgeReentry)) return;
  edge e = s->gcc_edges[de.ref];
  std::vector<edge> hoisted;
  if (me.src == ballarus::kEntryBlock)
    s->OnEdge(e, PathAction::kInit, s->inc.inc[d], 0);
  else if (me.dst == ballarus::kExitBlock &&
           HoistOnto(s, me.src, /*any_preds=*/false, /*onto_chords=*/true,
                     &hoisted))
    PlanHoistedReturn(s, me.src, d, hoisted);
  else if (me.dst == ballarus::kExitBlock)
    s->OnEdge(e, PathAction::kCount, s->inc.inc[d], 0);
  else if (s->inc.inc[d] != 0)
    s->OnEdge(e, PathAction::kAdd, s->inc.inc[d], 0);
}

// A loop entry cut that one prefix reaches ends one path, which the
// balance of its loop's header may count (PlanBalances): noted with the
// index the end's action is about to take.
void NoteEntryCutEnd(PathPlanState* s, size_t d) {
  const ballarus::DagEdge& de = s->dag.edges[d];
  const ballarus::Edge& me = s->fn->edges[de.ref];
  if (me.src == ballarus::kEntryBlock || me.src >= s->nb ||
      s->prefixes[me.src] != 1 ||
      !std::binary_search(s->entry_cuts.begin(), s->entry_cuts.end(),
                          static_cast<uint32_t>(de.ref)))
    return;
  uint64_t w = de.ref < s->weights.size() ? s->weights[de.ref] : 1;
  if (!s->measured_weights && s->gcc_edges[de.ref]->count().initialized_p())
    w = s->gcc_edges[de.ref]->count().to_gcov_type();
  auto [it, fresh] = s->entry_ends.try_emplace(me.dst);
  if (fresh || w > it->second.weight)
    it->second = {s->work->on_edges.size(),
                  s->prefix_reg[me.src] + s->inc.inc[d], w, me.src};
}

// A cut edge's path end (a back edge, or a loop entry cut): count and
// reset, on the edges into the latch where HoistBackEdgeEnd allows.
void PlanCutEdgeEnd(PathPlanState* s, size_t d) {
  const ballarus::DagEdge& de = s->dag.edges[d];
  const ballarus::Edge& me = s->fn->edges[de.ref];
  if (s->loop_of_back_edge[de.ref] >= 0) return;  // kLoopBack instead
  const uint64_t b = s->inc.inc[s->dag.start_edge[me.dst]];
  std::vector<edge> hoisted;
  if (HoistBackEdgeEnd(s, me, s->gcc_edges[de.ref], &hoisted)) {
    if (hoisted.size() == 1) NoteEntryCutEnd(s, d);
    for (edge h : hoisted)
      s->OnEdge(h, PathAction::kCountReset, s->inc.inc[d], b);
    if (dump_file)
      fprintf(dump_file, "  path: back edge %u->%u: its path end "
              "counted on the %zu edges into %u\n",
              me.src, me.dst, hoisted.size(), me.src);
    return;
  }
  // A cut edge out of ENTRY (a loop entry cut) ends the empty path.
  if (me.src == ballarus::kEntryBlock)
    s->OnEdge(s->gcc_edges[de.ref], PathAction::kInit, 0, 0);
  NoteEntryCutEnd(s, d);
  s->OnEdge(s->gcc_edges[de.ref], PathAction::kCountReset, s->inc.inc[d], b);
  if (dump_file)
    fprintf(dump_file, "  path: cut edge %u->%u: count and reset on the "
            "edge itself\n", me.src, me.dst);
}

// A cut block's path end: its count goes back onto the edges into the
// block, and through blocks several prefixes reach, to where the register
// is a constant (as a computed goto's end: an interpreter's switch
// dispatch is cut, and each handler's `break` then counts one fixed
// counter); the block itself only resets the register (kStartInit).
void PlanCutBlockEnd(PathPlanState* s, size_t d) {
  const uint32_t w = s->dag.edges[d].ref;
  const uint64_t b = s->inc.inc[s->dag.start_edge[w]];
  std::vector<std::pair<edge, uint64_t>> sites;
  int depth = 0;
  if (HoistPathEnd(s, w, s->inc.inc[d], &sites, &depth, HoistFrom::kCut)) {
    for (const auto& [h, ha] : sites) s->OnEdge(h, PathAction::kCount, ha, 0);
    s->work->goto_end_hoisted = true;
    s->InBlock(w, PathAction::kStartInit, b, 0);
    if (dump_file)
      fprintf(dump_file, "  path: cut block %u: its count made on %zu "
              "edges, up to %d blocks before it\n", w, sites.size(), depth);
  } else {
    s->InBlock(w, PathAction::kStartCut, s->inc.inc[d], b);
    if (dump_file)
      fprintf(dump_file, "  path: cut block %u: its count made at its "
              "start\n", w);
  }
}

}  // namespace

// The DAG's real edges and the cuts, in DAG edge order.
void PlanDagEdges(PathPlanState* s) {
  for (size_t d = 0; d < s->dag.edges.size(); ++d) {
    switch (s->dag.edges[d].kind) {
      case ballarus::DagEdge::kCfg: PlanCfgEdge(s, d); break;
      case ballarus::DagEdge::kBackEnd: PlanCutEdgeEnd(s, d); break;
      case ballarus::DagEdge::kCutEnd: PlanCutBlockEnd(s, d); break;
      case ballarus::DagEdge::kStart: break;
    }
  }
}

}  // namespace ballarus::plugin
