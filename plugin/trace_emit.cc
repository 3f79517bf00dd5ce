// trace_emit.cc — mode=trace's plan and emission (trace_emit.h).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/trace_ids.h"
#include "core/trace_plan.h"
#include "runtime/trace_events.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/trace_emit.h"
#include "plugin/trace_emit_internal.h"

namespace ballarus::plugin {

// NAME(unsigned, ...) with n_args (0 to 2) arguments, returning `ret`.
tree RuntimeFn(const char* name, int n_args, tree ret) {
  tree u = unsigned_type_node;
  tree type = n_args == 0 ? build_function_type_list(ret, NULL_TREE)
              : n_args == 1
                  ? build_function_type_list(ret, u, NULL_TREE)
                  : build_function_type_list(ret, u, u, NULL_TREE);
  tree fn = build_fn_decl(name, type);
  TREE_NOTHROW(fn) = 1;
  DECL_VISIBILITY(fn) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(fn) = 1;
  return fn;
}

tree U32(uint32_t v) { return build_int_cst(unsigned_type_node, v); }

namespace {

// Whether the statement is a call that may run traced code, longjmp or
// throw: every call but GCC's internal functions (over-approximating is
// safe: it only adds site stores, and blocking witnesses in plans that
// block calls).
bool IsTracedCall(gimple* stmt) {
  return is_gimple_call(stmt) && !gimple_call_internal_p(stmt);
}

// A resx that leaves the function (no EH successor here) goes on
// unwinding, as a call that throws does: its block is a call block, and
// the site stored before it tells the outer landing where the activation
// stopped.  One whose handler is in this function is a plain jump once GCC
// lowers it (lower_resx); marking it too is harmless.
bool IsResx(gimple* stmt) { return gimple_code(stmt) == GIMPLE_RESX; }

std::vector<bool> CallBlocks(size_t n_blocks) {
  std::vector<bool> calls(n_blocks, false);
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    if (static_cast<size_t>(bb->index) >= n_blocks) continue;
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsTracedCall(gsi_stmt(gsi)) || IsResx(gsi_stmt(gsi)))
        calls[bb->index] = true;
  }
  return calls;
}


// __ballarus_trace_stack2.site = block before each traced call and each
// resx (what the runtime's __ballarus_trace_site(block) does).
void EmitSites(const TraceWork& work) {
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    const size_t b = static_cast<size_t>(bb->index);
    if (b >= work.call_block.size() || !work.call_block[b]) continue;
    std::vector<gimple*> calls;
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsTracedCall(gsi_stmt(gsi)) || IsResx(gsi_stmt(gsi)))
        calls.push_back(gsi_stmt(gsi));
    for (gimple* call : calls) {
      gimple_stmt_iterator gsi = gsi_for_stmt(call);
      gsi_insert_before(
          &gsi,
          SiteStore(static_cast<uint32_t>(b)),
          GSI_SAME_STMT);
    }
  }
}

// A computed goto's abnormal edges cannot hold code: each target block
// writes its block witness at its start, whichever edge entered it (an
// edge witness of a flow edge into it is committed before it).
void EmitBlockWitnesses(const TraceWork& work, tree w_fn) {
  const size_t first = work.witness_edges.size();
  for (size_t k = 0; k < work.witness_blocks.size(); ++k) {
    basic_block bb = BASIC_BLOCK_FOR_FN(cfun, work.witness_blocks[k]);
    gimple_stmt_iterator gsi = gsi_after_labels(bb);
    gsi_insert_before(&gsi, gimple_build_call(w_fn, 1, U32(first + k)),
                      GSI_SAME_STMT);
    if (dump_file)
      fprintf(dump_file, "ballarus: trace: block witness %zu at the start "
              "of block %u\n", first + k, work.witness_blocks[k]);
  }
}

void EmitWitnesses(const TraceWork& work) {
  tree w_fn = RuntimeFn("__ballarus_trace_w", 1);
  for (size_t id = 0; id < work.witness_edges.size(); ++id) {
    const auto& se = work.witness_edges[id];
    edge e = find_edge(BASIC_BLOCK_FOR_FN(cfun, se.first),
                       BASIC_BLOCK_FOR_FN(cfun, se.second));
    if (e == NULL) {  // a model-only edge: IsTraceFlowEdge keeps them out
      if (dump_file)
        fprintf(dump_file, "ballarus: trace: witness %zu on edge %u->%u "
                "not written (not in GCC's CFG)\n", id, se.first, se.second);
      continue;
    }
    // An abnormal edge cannot be split: its witness is not written
    // (regeneration stops there).  An EH edge can: GCC gives the new block
    // a landing pad of its own.
    if (e->flags & EDGE_ABNORMAL) {
      if (dump_file)
        fprintf(dump_file, "ballarus: trace: witness %zu on edge %u->%u "
                "not written (abnormal)\n", id, se.first, se.second);
      continue;
    }
    gsi_insert_on_edge(e, gimple_build_call(w_fn, 1, U32(id)));
  }
  EmitBlockWitnesses(work, w_fn);
}

// mode=trace-naive: each block's index at its start.
void EmitBlockIndices(const TraceWork& work) {
  tree w_fn = RuntimeFn("__ballarus_trace_w", 1);
  std::vector<basic_block> blocks;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    if (static_cast<size_t>(bb->index) < work.call_block.size())
      blocks.push_back(bb);
  }
  for (basic_block b : blocks) {
    gimple_stmt_iterator gsi = gsi_after_labels(b);
    gsi_insert_before(&gsi, gimple_build_call(w_fn, 1, U32(b->index)),
                      GSI_SAME_STMT);
  }
}

// The activation's depth, the one its kEnter carries: an SSA name made on
// first use (defined after the enter, emitted last, from its ds).
tree DepthName(tree* depth) {
  if (*depth == NULL_TREE)
    *depth = make_temp_ssa_name(unsigned_type_node, NULL, "BLRS_depth");
  return *depth;
}

// Whether control takes EH edge `e` by unwinding out of a traced call, the
// last statement of its source (a call block, whose site names it): such
// an edge gets a kLand.  An EH edge out of a resx is a plain jump once GCC
// lowers it; a statement that throws by itself (-fnon-call-exceptions) is
// no call block, and gets none.
bool UnwindsFromCall(edge e) {
  if (!(e->flags & EDGE_EH)) return false;
  gimple* last = last_stmt(e->src);
  return last != NULL && IsTracedCall(last);
}

// kLand{L} for each landing pad L: once at L's start when every edge into
// L unwinds from a call and none carries a witness; otherwise on each
// unwinding edge, before the edge's witness (queued later).
void EmitEhLandings(const TraceWork& work, tree land_fn, tree* depth) {
  const std::set<std::pair<uint32_t, uint32_t>> witnessed(
      work.witness_edges.begin(), work.witness_edges.end());
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    std::vector<edge> unwinding;
    bool at_start = true;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->preds) {
      if (!UnwindsFromCall(e)) {
        at_start = false;
        continue;
      }
      unwinding.push_back(e);
      if (!work.naive && witnessed.count({e->src->index, e->dest->index}))
        at_start = false;
    }
    if (unwinding.empty()) continue;
    const uint32_t b = static_cast<uint32_t>(bb->index);
    if (at_start) {
      gimple_stmt_iterator gsi = gsi_after_labels(bb);
      gsi_insert_before(&gsi,
                        gimple_build_call(land_fn, 2, U32(b), DepthName(depth)),
                        GSI_SAME_STMT);
    } else {
      for (edge u : unwinding)
        gsi_insert_on_edge(
            u, gimple_build_call(land_fn, 2, U32(b), DepthName(depth)));
    }
    if (dump_file)
      fprintf(dump_file, "ballarus: trace: kLand into landing pad %u %s\n", b,
              at_start ? "at its start" : "on each edge unwinding from a call");
  }
}

// kLand{B} right after each returns-twice call (setjmp, vfork ...) of
// block B, which returns there both times: the regenerator takes the
// first return's kLand for a no-op (core/trace_plan.h).
void EmitReturnsTwiceLandings(tree land_fn, tree* depth) {
  std::vector<gimple*> calls;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (is_gimple_call(gsi_stmt(gsi)) &&
          (gimple_call_flags(gsi_stmt(gsi)) & ECF_RETURNS_TWICE))
        calls.push_back(gsi_stmt(gsi));
  }
  for (gimple* call : calls) {
    basic_block b = gimple_bb(call);
    const uint32_t index = static_cast<uint32_t>(b->index);
    gimple_stmt_iterator gsi = gsi_for_stmt(call);
    gimple_stmt_iterator next = gsi;
    gsi_next_nondebug(&next);
    if (!gsi_end_p(next)) {
      gsi_insert_after(
          &gsi, gimple_build_call(land_fn, 2, U32(index), DepthName(depth)),
          GSI_SAME_STMT);
    } else {
      edge e;
      edge_iterator ei;
      FOR_EACH_EDGE(e, ei, b->succs)
        if (!(e->flags & (EDGE_ABNORMAL | EDGE_EH | EDGE_FAKE)))
          gsi_insert_on_edge(e, gimple_build_call(land_fn, 2, U32(index),
                                                  DepthName(depth)));
    }
    if (dump_file)
      fprintf(dump_file,
              "ballarus: trace: kLand after the returns-twice call of "
              "block %u\n",
              index);
  }
}

// Every landing of cfun (trace_emit.h); *depth is set if there is one.
void EmitLandings(const TraceWork& work, tree* depth) {
  tree land_fn = RuntimeFn("__ballarus_trace_land", 2);
  EmitEhLandings(work, land_fn, depth);
  EmitReturnsTwiceLandings(land_fn, depth);
}

// The placeholders of the enter and leave hooks, which InlineTraceHooks
// always replaces (no call of them is emitted):
//   uint64 __ballarus_trace_push(fn, stamp)   kEnter and the frame; returns
//                                             the stack's depth and site
//                                             before it, as one 8-byte word
//   __ballarus_trace_pop_to(uint64 ds)        depth and site back to ds
tree PlaceholderFn(bool push) {
  tree u = unsigned_type_node, u64 = uint64_type_node;
  tree type = push ? build_function_type_list(u64, u, u, NULL_TREE)
                   : build_function_type_list(void_type_node, u64, NULL_TREE);
  tree fn = build_fn_decl(push ? kPushPlaceholder : kPopPlaceholder,
                          type);
  TREE_NOTHROW(fn) = 1;
  DECL_VISIBILITY(fn) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(fn) = 1;
  return fn;
}

// __ballarus_trace_pop_to(ds) on every edge into EXIT, ds the depth and
// site the activation's enter found; in mode=trace-naive the word 1
// (EXIT's index) before it, so that a naive stream pops its activations
// by itself.  (A witness on such an edge was queued earlier, so it is
// written before the leave too.)
void EmitLeaves(bool naive, tree ds) {
  tree leave = PlaceholderFn(false);
  tree w_fn = RuntimeFn("__ballarus_trace_w", 1);
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, EXIT_BLOCK_PTR_FOR_FN(cfun)->preds) {
    if (e->flags & (EDGE_ABNORMAL | EDGE_FAKE)) continue;
    if (naive)
      gsi_insert_on_edge(e, gimple_build_call(w_fn, 1, U32(kExitBlock)));
    gsi_insert_on_edge(e, gimple_build_call(leave, 1, ds));
  }
}

// Whether `stmt` calls one of the exec family: the trace must be written
// before it replaces the process (as GCC's gcov wraps them in
// __gcov_execl ... to dump its counters first).
bool IsExecCall(gimple* stmt) {
  if (!gimple_call_builtin_p(stmt, BUILT_IN_NORMAL)) return false;
  switch (DECL_FUNCTION_CODE(gimple_call_fndecl(stmt))) {
    case BUILT_IN_EXECL:
    case BUILT_IN_EXECLP:
    case BUILT_IN_EXECLE:
    case BUILT_IN_EXECV:
    case BUILT_IN_EXECVP:
    case BUILT_IN_EXECVE:
      return true;
    default:
      return false;
  }
}

// __ballarus_trace_exec() right before each exec-family call (after the
// call's site, which the thread's kEnd names).
void EmitExecHooks(tree exec_fn) {
  std::vector<gimple*> calls;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsExecCall(gsi_stmt(gsi))) calls.push_back(gsi_stmt(gsi));
  }
  for (gimple* call : calls) {
    gimple_stmt_iterator gsi = gsi_for_stmt(call);
    gsi_insert_before(&gsi, gimple_build_call(exec_fn, 0), GSI_SAME_STMT);
  }
}

// A call GCC already marked as a tail call (an expanded thunk's) would
// return past the leave queued after it: the mark is dropped.
void KeepCallsReturning() {
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (gcall* call = dyn_cast<gcall*>(gsi_stmt(gsi)))
        if (gimple_call_tail_p(call)) gimple_call_set_tail(call, false);
  }
}

}  // namespace

void PlanFunctionTrace(ballarus::Function* fn,
                       const std::vector<uint64_t>& weights,
                       uint32_t fn_index, bool naive, TraceWork* work) {
  // An extern inline body (gcov instruments it for -fprofile-use) runs only
  // where the inliner copies it; other calls reach the library's own,
  // untraced copy.  Traced, it would make the trace depend on inlining
  // decisions, which the instrumentation itself sways (a naive build and an
  // optimal one would differ): it is left untraced.
  if (DECL_EXTERNAL(current_function_decl)) {
    if (dump_file)
      fprintf(dump_file, "ballarus: trace %s: extern inline, not traced\n",
              fn->demangled.c_str());
    return;
  }
  // mode=trace-naive writes no witness: its plan stays the paper's, which
  // every reader knows.
  ballarus::TracePlan plan = ballarus::PlanTrace(
      *fn, weights, CallBlocks(fn->blocks.size()),
      naive ? ballarus::CallDecision::kBlockingWitness
            : ballarus::CallDecision::kSite);
  work->enabled = true;
  work->naive = naive;
  work->fn_index = fn_index;
  work->call_block = plan.call_block;
  for (size_t e : plan.witness_edges)
    work->witness_edges.emplace_back(fn->edges[e].src, fn->edges[e].dst);
  work->witness_blocks = plan.witness_blocks;
  fn->extensions.push_back({ballarus::kTracePlanExtensionTag,
                            ballarus::EncodeTracePlanExtension(plan, naive)});
  if (dump_file)
    fprintf(dump_file,
            "ballarus: trace %s: %zu witnesses (%zu blocking), %zu block "
            "witnesses, %zu unwitnessable, calls decided by %s\n",
            fn->demangled.c_str(), plan.witness_edges.size(),
            plan.blocking.size(), plan.witness_blocks.size(),
            plan.unwitnessable.size(),
            plan.calls == ballarus::CallDecision::kSite ? "sites"
                                                        : "blocking witnesses");
}

void EmitTrace(const TraceWork& work, uint32_t tu_stamp) {
  if (!work.enabled) return;
  KeepCallsReturning();
  EmitSites(work);
  EmitExecHooks(RuntimeFn("__ballarus_trace_exec", 0));
  if (work.naive) EmitBlockIndices(work);
  // The landings go after the block indices (a kLand at a block's start
  // comes before its index) and before the witnesses (on an EH edge, the
  // kLand comes before the edge's witness).
  tree depth = NULL_TREE;
  EmitLandings(work, &depth);
  if (!work.naive) EmitWitnesses(work);
  tree ds = make_temp_ssa_name(uint64_type_node, NULL, "BLRS_ds");
  EmitLeaves(work.naive, ds);
  gcall* call = gimple_build_call(PlaceholderFn(true), 2, U32(work.fn_index),
                                  U32(tu_stamp));
  gimple_call_set_lhs(call, ds);
  edge entry = single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun));
  gsi_insert_on_edge(entry, call);
  // The landings' depth (the enter is split off before it).
  if (depth != NULL_TREE) gsi_insert_on_edge(entry, DepthFrom(depth, ds));
}

}  // namespace ballarus::plugin
