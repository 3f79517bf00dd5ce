// path_entries.cc — path planning's steps at the places where a path
// starts other than at the function's entry: calls that may return as
// re-entries (fork, reset: reentry.h), blocks entered abnormally (setjmp
// receivers, nonlocal labels, computed-goto targets), and the prefix
// analysis of the final DAG that the steps after them read.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/path_plan_steps.h"
#include "core/path_profile.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/options.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

// Calls that may return as re-entries (fork, reset; reentry.h): the path
// cut short by the call is pre-counted as for any call that may not
// return; on the way out, a changed epoch means the counts (the pre-count
// with them) are gone and the path starts afresh at the call's block,
// through its re-entry edge (SettlePrecounts knows such a path begins
// after the call); otherwise the path goes on, and reconstruct settles the
// pre-count.
void PlanReentryCalls(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  s->reentry_block.assign(s->nb, false);
  for (size_t c = 0; c < s->reentry.size(); ++c) {
    const ReentryCall& rc = s->reentry[c];
    const uint32_t u = rc.block->index;
    s->reentry_block[u] = true;
    const int re_dag = s->dag.dag_edge_of_cfg[rc.model_edge];
    if (re_dag < 0)
      internal_error("ballarus: path DAG for %s lacks the re-entry edge into block %d",
                     fn.name.c_str(), static_cast<int>(u));
    int fake_dag = -1;
    for (size_t i = 0; i < fn.edges.size(); ++i)
      if (fn.edges[i].src == u && fn.edges[i].dst == ballarus::kExitBlock &&
          (fn.edges[i].flags & ballarus::kEdgeFake))
        fake_dag = s->dag.dag_edge_of_cfg[i];
    const bool pre = g_options.early_termination && fake_dag >= 0;
    const uint64_t a = pre ? s->inc.inc[fake_dag] : 0;
    if (pre) {
      s->InBlock(u, PathAction::kPreCount, a, 0);
      s->work->info.precount_edges.push_back(
          static_cast<uint32_t>(s->dag.edges[fake_dag].ref));
    }
    const std::vector<edge> out = CodeSuccessors(rc.block);
    for (edge n : out) {
      PathAction act{PathAction::kReentry, a, s->inc.inc[re_dag]};
      act.call = static_cast<int>(c);
      s->work->on_edges.push_back({n, act});
    }
    if (dump_file)
      fprintf(dump_file, "  path: block %u: its call may return as a "
              "re-entry: %s, the epoch checked on %zu edges\n", u,
              pre ? "pre-counted" : "no pre-count", out.size());
  }
}

// How many prefixes reach each vertex of the final DAG and what the
// register holds where few do, the chords, the model edge of each GCC
// edge, and whether loops take registers (loop-registers).
void AnalysePrefixes(PathPlanState* s) {
  s->prefixes = ballarus::CountPrefixes(s->dag);
  s->prefix_sets = ballarus::PrefixRegisterSets(s->dag, s->inc,
                                                kMaxCountChoices);
  s->prefix_reg = ballarus::PrefixRegisters(s->prefix_sets);
  s->chord_edges = ChordEdges(*s);
  s->loop_registers =
      LoopRegistersWanted(ChosenUpdate() == UpdateMode::kAtomic,
                          ChosenUpdate() == UpdateMode::kThread);
  for (size_t i = 0; i < s->gcc_edges.size(); ++i)
    if (s->gcc_edges[i] != NULL) s->model_edge_of[s->gcc_edges[i]] = i;
  if (!dump_file) return;
  uint32_t one = 0, two = 0;
  for (uint32_t v = 0; v < s->dag.n_vertices; ++v) {
    one += s->prefix_sets[v].size() == 1;
    two += s->prefix_sets[v].size() == 2;
  }
  fprintf(dump_file, "  path: of %u DAG vertices %u are reached by one "
          "prefix, %u by two; %zu chord edges; loop registers %s\n",
          s->dag.n_vertices, one, two, s->chord_edges.size(),
          s->loop_registers ? "on" : "off");
}

namespace {

// A block left by abnormal edges only, and not by a call (a computed goto;
// GCC factors them into one `goto *x` block).
bool IsGotoEnd(const PathPlanState& s, uint32_t u) {
  if (u < 2 || u >= s.nb || s.bbs[u] == NULL || s.returns_twice[u] ||
      s.dispatcher[u] || s.reentry_block[u])
    return false;
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb(s.bbs[u]);
  gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
  if (last != NULL && is_gimple_call(last)) return false;
  edge e;
  edge_iterator ei;
  bool abnormal = false;
  FOR_EACH_EDGE(e, ei, s.bbs[u]->succs) {
    if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
      return false;
    abnormal = abnormal || (e->flags & EDGE_ABNORMAL);
  }
  return abnormal;
}

}  // namespace

// Computed gotos: the path ends at the goto, and each target starts a new
// one with r = Inc(ENTRY->w), which is 0 (fake ENTRY edges are tree
// edges).  Setting r at the goto hands the target a register GCC cannot
// see through (an SSA name on abnormal edges), so every count in the
// target's code goes through it.  With path-goto-targets the goto only
// counts, and each target entered by computed gotos only (self_start) sets
// r itself, at its start: a constant there, which GCC folds into the
// handler's chords and counts.  A target also entered by ordinary edges
// (saved_start) gets the setjmp receivers' treatment, with a copy: its
// ordinary entries set the re-entry flag and save r in s, and its start
// sets r = flag ? s : a -- so that r is dead at every computed goto, and
// the path ends can be counted before the goto (HoistPathEnd).  By default
// (path-goto-targets=auto) not on an earlier profile's weights: there the
// hot handlers' chords are tree edges, the register stays one constant
// through them, and GCC keeps that constant in a callee-saved register and
// copies it at every dispatch (docs/performance.md, "Computed-goto
// targets").
void FindGotoTargets(PathPlanState* s) {
  const uint32_t nb = s->nb;
  s->goto_end.assign(nb, false);
  s->self_start.assign(nb, false);
  s->saved_start.assign(nb, false);
  for (uint32_t u = 2; u < nb; ++u) s->goto_end[u] = IsGotoEnd(*s, u);
  s->sources_reset =
      !Options::IsOn(g_options.path_goto_targets, !s->measured_weights);
  for (uint32_t u = 2; u < nb && dump_file; ++u)
    if (s->goto_end[u])
      fprintf(dump_file, "  path: block %u ends with a computed goto (%s)\n",
              u, s->sources_reset ? "it resets the register"
                                  : "its targets set the register");
  for (uint32_t w = 2; w < nb && !s->sources_reset; ++w) {
    if (s->bbs[w] == NULL || s->returns_twice[w] || s->dispatcher[w])
      continue;
    bool from_goto = false, only_goto = true;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, s->bbs[w]->preds) {
      if (e->flags & EDGE_FAKE) continue;  // gcov's ENTRY->w for the gotos
      const bool g = (e->flags & EDGE_ABNORMAL) && e->src->index >= 2 &&
                     static_cast<uint32_t>(e->src->index) < nb &&
                     s->goto_end[e->src->index];
      from_goto = from_goto || g;
      only_goto = only_goto && g;
    }
    s->self_start[w] = from_goto && only_goto;
    s->saved_start[w] = from_goto && !only_goto && !s->returns_twice[w];
    if (dump_file && s->self_start[w])
      fprintf(dump_file, "  path: computed goto target %u is entered by "
              "computed gotos only: it starts its path itself\n", w);
    if (dump_file && from_goto && !only_goto)
      fprintf(dump_file, "  path: computed goto target %u is entered "
              "otherwise too: its normal entries set the re-entry flag\n",
              w);
  }
}

namespace {

// On each normal in-edge of w: `k`, then kSaveRegister where `save`.
void OnNormalInEdges(PathPlanState* s, uint32_t w, PathAction::Kind k,
                     bool save) {
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s->bbs[w]->preds)
    if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL))) {
      s->OnEdge(e, k, 0, 0);
      if (save) s->OnEdge(e, PathAction::kSaveRegister, 0, 0);
    }
}

// Whether every abnormal way into w comes from a computed goto that resets
// the register (PlanFakeExits' end_reset).
bool AllSourcesReset(const PathPlanState& s, uint32_t w) {
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s.bbs[w]->preds)
    if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
        !(e->src->index >= 0 && (uint32_t)e->src->index < s.nb &&
          s.end_reset[e->src->index]))
      return false;
  return true;
}

}  // namespace

// Fake edges out of ENTRY: abnormal re-entries (setjmp receivers, nonlocal
// labels, computed-goto targets; a fake re-entry edge, reentry.h, is one
// of these: its block is a returns-twice receiver entered from ENTRY too).
// The path starts afresh with r = Inc(ENTRY->w) = 0 (fake ENTRY edges are
// tree edges).  A normal entry sets the re-entry flag, and the block's
// start (or, for a returns-twice call, its way out) keeps r where the flag
// is set and resets it otherwise.
void PlanAbnormalEntries(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const ballarus::Edge& me = fn.edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.src != ballarus::kEntryBlock ||
        s->dag.dag_edge_of_cfg[i] < 0)
      continue;
    const uint32_t w = me.dst;
    if (s->dispatcher[w] || s->bbs[w] == NULL) continue;
    const uint64_t a = s->inc.inc[s->dag.dag_edge_of_cfg[i]];
    if (s->self_start[w]) {
      s->InBlock(w, PathAction::kStartInit, a, 0);
      continue;
    }
    if (s->saved_start[w]) {
      // Its normal entries save r for it (s), so r itself stays dead at
      // every computed goto.
      s->work->uses_flag = true;
      OnNormalInEdges(s, w, PathAction::kSetFlag, /*save=*/true);
      s->InBlock(w, PathAction::kStartCheckSaved, a, 0);
      continue;
    }
    if (AllSourcesReset(*s, w) && a == 0) {
      if (dump_file)
        fprintf(dump_file, "  path: block %u is entered abnormally only from "
                "computed gotos that reset the register: no check\n", w);
      continue;
    }
    if (dump_file)
      fprintf(dump_file, "  path: block %u is entered abnormally: re-entry "
              "flag set on its normal entries, checked %s\n", w,
              s->returns_twice[w] ? "after its returns-twice call"
                                  : "at its start");
    s->work->uses_flag = true;
    OnNormalInEdges(s, w, PathAction::kSetFlag, /*save=*/false);
    if (s->returns_twice[w]) {
      // The call returns a second time at its end: check on its way out.
      edge e;
      edge_iterator ei;
      FOR_EACH_EDGE(e, ei, s->bbs[w]->succs)
        if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
          s->OnEdge(e, PathAction::kCheckFlag, a, 0);
    } else {
      s->InBlock(w, PathAction::kStartCheckFlag, a, 0);
    }
  }
}

}  // namespace ballarus::plugin
