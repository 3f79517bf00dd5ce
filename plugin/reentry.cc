// reentry.cc — re-entries gcov's graph does not show.
//
// gcov's CFG (cfg_prep.cc) stands abnormal re-entries in for fake ENTRY
// edges, but only into blocks no ENTRY edge reaches, and knows nothing of
// processes: its counts need not be a circulation, and ballarus' `verify`
// checks that they are.  Two kinds of re-entry break it:
//
//   * A setjmp (or vfork, also returns-twice) in the function's first
//     block: the block is entered from ENTRY, so gcov adds no fake ENTRY
//     edge, and the longjmps (the parent's return from vfork) re-enter it
//     through abnormal edges gcov ignores (GCC's gcov-7.c: "edge 2->1 would
//     need a negative count").  ballarus adds the fake ENTRY edge to its
//     model only (GCC's CFG cannot hold two ENTRY->B edges); like gcov's own
//     fake edges it holds no counter, flow conservation derives it.
//
//   * A call after which the activation goes on while its earlier counts
//     are gone: fork() in the child, whose counters the runtime zeroes at
//     the fork (as gcov's __gcov_fork does), and __ballarus_reset() /
//     __gcov_reset().  The rest of the activation is counted, its start is
//     not.  ballarus adds a model edge ENTRY->C for the call's block C and
//     counts it: the runtime bumps an epoch (__ballarus_epoch) in a forked
//     child and at every reset; the plugin reads it before the call and,
//     on the call's way out, adds (epoch changed) to the edge's counter:
//
//       <bb C>:                          <bb C>:
//       pid_1 = fork ();                 BLRS_epoch_5 ={v} __ballarus_epoch;
//                                        pid_1 = fork ();
//       <bb N>:                          <bb N>:
//       ...                              BLRS_epoch_6 ={v} __ballarus_epoch;
//                                        BLRS_re_7 = BLRS_epoch_6 != BLRS_epoch_5;
//                                        BLRS_re_8 = (long long unsigned) BLRS_re_7;
//                                        __ballarus_counters[k] += BLRS_re_8
//
//     Functions of the same TU that fork or reset (directly or through
//     each other) count their callers' re-entries the same way, so a child
//     returning through them stays a circulation all the way up to the
//     first frame outside the TU.  Path profiling starts a new path there
//     (path_entries.cc, PlanReentryCalls).
//
// Both edges are flagged kEdgeReentry and listed after ENTRY's real
// successors; gcov's line counts leave them out (core/gcov_lines.cc), the
// arc comparisons with gcov skip them.
//
// Limits (README "Limits"): a fork or reset reached through a function of
// another TU, or through a function pointer, is not seen, and neither is a
// reset by another thread while this activation runs.

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/reentry.h"

namespace ballarus::plugin {

namespace {

// Callees known by name: they fork and return in the child, or reset the
// counters.  (_Fork runs no atfork handlers, so the child keeps the
// parent's counts and nothing is re-entered; vfork and setjmp are
// returns-twice calls, seen as abnormal re-entries.)
bool IsReentryCalleeByName(tree fndecl) {
  if (fndecl == NULL_TREE) return false;
  if (fndecl_built_in_p(fndecl, BUILT_IN_FORK)) return true;
  if (DECL_NAME(fndecl) == NULL_TREE) return false;
  const char* name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
  static const char* const kNames[] = {
      "fork",   "__fork",           "__libc_fork",  "daemon",
      "forkpty", "__ballarus_reset", "__gcov_reset",
  };
  for (const char* n : kNames)
    if (strcmp(name, n) == 0) return true;
  return false;
}

gimple* LastStmt(basic_block bb) {
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
  return gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
}

bool HasFakeExitEdge(basic_block bb) {
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->succs)
    if ((e->flags & EDGE_FAKE) && e->dest == EXIT_BLOCK_PTR_FOR_FN(cfun))
      return true;
  return false;
}

}  // namespace

void ReentryCallees::Compute() {
  std::vector<cgraph_node*> nodes;
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    if (gimple_has_body_p(node->decl) && DECL_STRUCT_FUNCTION(node->decl) &&
        DECL_STRUCT_FUNCTION(node->decl)->cfg)
      nodes.push_back(node);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (cgraph_node* n : nodes) {
      if (in_tu_.count(n->decl)) continue;
      function* f = DECL_STRUCT_FUNCTION(n->decl);
      basic_block bb;
      bool reenters = false;
      FOR_EACH_BB_FN(bb, f) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb);
             !gsi_end_p(gsi) && !reenters; gsi_next(&gsi))
          if (is_gimple_call(gsi_stmt(gsi)) && MayReenter(gsi_stmt(gsi)))
            reenters = true;
        if (reenters) break;
      }
      if (reenters) {
        in_tu_.insert(n->decl);
        changed = true;
      }
    }
  }
}

bool ReentryCallees::MayReenter(const gimple* call) const {
  tree fndecl = gimple_call_fndecl(call);
  return fndecl != NULL_TREE &&
         (IsReentryCalleeByName(fndecl) || in_tu_.count(fndecl) != 0);
}

void AddReentryEdges(ballarus::Function* fn, std::vector<edge>* gcc_edges,
                     const ReentryCallees& callees,
                     std::vector<ReentryCall>* calls) {
  std::vector<ballarus::Edge> added;
  std::vector<ReentryCall> found;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    bool normal_from_entry = false, fake_from_entry = false;
    bool abnormal_in = false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->preds) {
      if (e->src == ENTRY_BLOCK_PTR_FOR_FN(cfun)) {
        if (e->flags & EDGE_FAKE)
          fake_from_entry = true;
        else
          normal_from_entry = true;
      } else if (e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) {
        abnormal_in = true;
      }
    }
    if (abnormal_in && normal_from_entry && !fake_from_entry) {
      ballarus::Edge me;
      me.src = ballarus::kEntryBlock;
      me.dst = bb->index;
      me.flags = ballarus::kEdgeFake | ballarus::kEdgeReentry;
      added.push_back(me);
      if (dump_file)
        fprintf(dump_file,
                "  re-entry edge 0->%d (fake, model only): bb %d is entered "
                "from ENTRY and abnormally (returns-twice call), gcov gives "
                "it no fake ENTRY edge\n",
                bb->index, bb->index);
    }
    gimple* last = LastStmt(bb);
    if (last && is_gimple_call(last) && callees.MayReenter(last) &&
        HasFakeExitEdge(bb)) {
      ballarus::Edge me;
      me.src = ballarus::kEntryBlock;
      me.dst = bb->index;
      me.flags = ballarus::kEdgeReentry;
      ReentryCall rc;
      rc.block = bb;
      rc.call = last;
      rc.model_edge = added.size();  // offset, fixed below
      found.push_back(rc);
      added.push_back(me);
      if (dump_file) {
        tree callee = gimple_call_fndecl(last);
        fprintf(dump_file,
                "  re-entry edge 0->%d (model only): the call to %s may "
                "return in a forked child or after a counter reset\n",
                bb->index,
                callee && DECL_NAME(callee)
                    ? IDENTIFIER_POINTER(DECL_NAME(callee))
                    : "?");
      }
    }
  }
  if (added.empty()) return;
  size_t at = 0;
  while (at < fn->edges.size() && fn->edges[at].src == ballarus::kEntryBlock)
    ++at;
  fn->edges.insert(fn->edges.begin() + at, added.begin(), added.end());
  gcc_edges->insert(gcc_edges->begin() + at, added.size(), nullptr);
  for (ReentryCall& rc : found) {
    rc.model_edge += at;
    calls->push_back(rc);
  }
}

tree EpochDecl() {
  tree type = build_qualified_type(long_long_unsigned_type_node,
                                   TYPE_QUAL_VOLATILE);
  tree decl = build_decl(BUILTINS_LOCATION, VAR_DECL,
                         get_identifier("__ballarus_epoch"), type);
  DECL_EXTERNAL(decl) = 1;
  TREE_PUBLIC(decl) = 1;
  TREE_THIS_VOLATILE(decl) = 1;
  TREE_USED(decl) = 1;
  DECL_ARTIFICIAL(decl) = 1;
  DECL_IGNORED_P(decl) = 1;
  DECL_VISIBILITY(decl) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(decl) = 1;
  varpool_node::get_create(decl);
  return decl;
}

void EmitEpochReads(const ballarus::Function& fn, bool paths, tree epoch,
                    std::vector<ReentryCall>* calls) {
  for (ReentryCall& c : *calls) {
    const bool counted = fn.edges[c.model_edge].counter != ballarus::kNoCounter;
    if (!counted && !paths) continue;
    tree t = make_temp_ssa_name(long_long_unsigned_type_node, NULL,
                                "BLRS_epoch");
    gimple_stmt_iterator gsi = gsi_for_stmt(c.call);
    gsi_insert_before(&gsi, gimple_build_assign(t, epoch), GSI_SAME_STMT);
    c.epoch_before = t;
  }
}

tree AppendEpochChanged(gimple_seq* seq, const ReentryCall& c, tree epoch) {
  tree now = make_temp_ssa_name(long_long_unsigned_type_node, NULL,
                                "BLRS_epoch");
  gimple_seq_add_stmt(seq, gimple_build_assign(now, epoch));
  tree changed = make_temp_ssa_name(boolean_type_node, NULL, "BLRS_re");
  gimple_seq_add_stmt(
      seq, gimple_build_assign(changed, NE_EXPR, now, c.epoch_before));
  return changed;
}

std::vector<edge> CodeSuccessors(basic_block bb) {
  std::vector<edge> out;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->succs)
    if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
      out.push_back(e);
  return out;
}

void QueueReentryCounts(const std::vector<ReentryCall>& calls,
                        const ballarus::Function& fn, tree counters,
                        tree epoch, bool atomic) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  for (const ReentryCall& c : calls) {
    const int64_t k = fn.edges[c.model_edge].counter;
    if (k == ballarus::kNoCounter) continue;
    gcc_assert(c.epoch_before != NULL_TREE);
    for (edge e : CodeSuccessors(c.block)) {
      gimple_seq seq = NULL;
      tree changed = AppendEpochChanged(&seq, c, epoch);
      tree delta = make_temp_ssa_name(u64, NULL, "BLRS_re");
      gimple_seq_add_stmt(&seq, gimple_build_assign(delta, NOP_EXPR, changed));
      tree ref = build4(ARRAY_REF, u64, counters,
                        build_int_cst(integer_type_node, k), NULL_TREE,
                        NULL_TREE);
      AppendCounterAdd(&seq, ref, delta, atomic);
      gsi_insert_seq_on_edge(e, seq);
      if (dump_file)
        fprintf(dump_file,
                "  re-entry edge 0->%d counter #%lld: epoch check on edge "
                "%d->%d\n",
                c.block->index, (long long)k, e->src->index,
                e->dest->index);
    }
  }
}

}  // namespace ballarus::plugin
