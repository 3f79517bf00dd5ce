// trace_emit.cc — mode=trace's plan and emission (trace_emit.h).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/model.h"
#include "core/trace_plan.h"
#include "runtime/trace_events.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/trace_emit.h"

namespace ballarus::plugin {

namespace {

// Whether the statement is a call that may run traced code, longjmp or
// throw: every call but GCC's internal functions (over-approximating is
// safe: it only adds blocking witnesses).
bool IsTracedCall(gimple* stmt) {
  return is_gimple_call(stmt) && !gimple_call_internal_p(stmt);
}

std::vector<bool> CallBlocks(size_t n_blocks) {
  std::vector<bool> calls(n_blocks, false);
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    if (static_cast<size_t>(bb->index) >= n_blocks) continue;
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsTracedCall(gsi_stmt(gsi))) calls[bb->index] = true;
  }
  return calls;
}

void PutWord(uint32_t v, std::vector<uint8_t>* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <typename T>
void PutList(const std::vector<T>& v, std::vector<uint8_t>* out) {
  PutWord(static_cast<uint32_t>(v.size()), out);
  for (const T& x : v) PutWord(static_cast<uint32_t>(x), out);
}

std::vector<uint8_t> EncodePlan(const ballarus::TracePlan& plan, bool naive) {
  std::vector<uint32_t> calls;
  for (size_t b = 0; b < plan.call_block.size(); ++b)
    if (plan.call_block[b]) calls.push_back(static_cast<uint32_t>(b));
  std::vector<uint8_t> out;
  PutWord(naive ? BALLARUS_TRACE_PLAN_NAIVE : 0u, &out);
  PutList(calls, &out);
  PutList(plan.witness_edges, &out);
  PutList(plan.unwitnessable, &out);
  return out;
}

// void NAME(unsigned, ...) with n_args (0 to 2) arguments.
tree RuntimeFn(const char* name, int n_args) {
  tree u = unsigned_type_node;
  tree type = n_args == 0 ? build_function_type_list(void_type_node, NULL_TREE)
              : n_args == 1
                  ? build_function_type_list(void_type_node, u, NULL_TREE)
                  : build_function_type_list(void_type_node, u, u, NULL_TREE);
  tree fn = build_fn_decl(name, type);
  TREE_NOTHROW(fn) = 1;
  DECL_VISIBILITY(fn) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(fn) = 1;
  return fn;
}

tree U32(uint32_t v) { return build_int_cst(unsigned_type_node, v); }

// __ballarus_trace_site(block) before each traced call.
void EmitSites(const TraceWork& work, tree site_fn) {
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    const size_t b = static_cast<size_t>(bb->index);
    if (b >= work.call_block.size() || !work.call_block[b]) continue;
    std::vector<gimple*> calls;
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsTracedCall(gsi_stmt(gsi))) calls.push_back(gsi_stmt(gsi));
    for (gimple* call : calls) {
      gimple_stmt_iterator gsi = gsi_for_stmt(call);
      gsi_insert_before(&gsi, gimple_build_call(site_fn, 1, U32(b)),
                        GSI_SAME_STMT);
    }
  }
}

void EmitWitnesses(const TraceWork& work) {
  tree w_fn = RuntimeFn("__ballarus_trace_w", 1);
  for (size_t id = 0; id < work.witness_edges.size(); ++id) {
    const auto& se = work.witness_edges[id];
    edge e = find_edge(BASIC_BLOCK_FOR_FN(cfun, se.first),
                       BASIC_BLOCK_FOR_FN(cfun, se.second));
    gcc_assert(e != NULL);
    // An abnormal edge, or an EH edge into a shared landing pad, cannot be
    // split: its witness is not written (regeneration stops there).
    if ((e->flags & EDGE_ABNORMAL) ||
        ((e->flags & EDGE_EH) && !single_pred_p(e->dest))) {
      if (dump_file)
        fprintf(dump_file, "ballarus: trace: witness %zu on edge %u->%u "
                "not written (abnormal)\n", id, se.first, se.second);
      continue;
    }
    gsi_insert_on_edge(e, gimple_build_call(w_fn, 1, U32(id)));
  }
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

// extern __thread uint32_t *__ballarus_trace_pos, initial-exec
// (trace_buffer.h).
tree TracePosDecl() {
  static tree decl = NULL_TREE;
  if (decl != NULL_TREE) return decl;
  tree type = build_pointer_type(unsigned_type_node);
  decl = build_decl(BUILTINS_LOCATION, VAR_DECL,
                    get_identifier("__ballarus_trace_pos"), type);
  DECL_EXTERNAL(decl) = 1;
  TREE_PUBLIC(decl) = 1;
  DECL_ARTIFICIAL(decl) = 1;
  DECL_VISIBILITY(decl) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(decl) = 1;
  set_decl_tls_model(decl, TLS_MODEL_INITIAL_EXEC);
  varpool_node::get_create(decl);
  return decl;
}

bool IsWitnessCall(gimple* stmt) {
  if (!is_gimple_call(stmt)) return false;
  tree fn = gimple_call_fndecl(stmt);
  return fn != NULL_TREE &&
         strcmp(IDENTIFIER_POINTER(DECL_NAME(fn)), "__ballarus_trace_w") == 0;
}

// Replaces the call `__ballarus_trace_w(id)` by trace_buffer.h's
// ballarus_trace_witness: p = pos; if ((p & (chunk bytes - 1)) == 0)
// __ballarus_trace_slow(id) (very unlikely); else *p = id, pos = p + 1.
void InlineWitness(gcall* call, tree slow_fn) {
  tree id = gimple_call_arg(call, 0);
  basic_block bb = gimple_bb(call);
  basic_block join = split_block(bb, call)->dest;
  gimple_stmt_iterator gsi = gsi_for_stmt(call);
  unlink_stmt_vdef(call);
  gsi_remove(&gsi, true);
  tree pos = TracePosDecl();
  tree ptype = TREE_TYPE(pos);
  tree p = make_temp_ssa_name(ptype, NULL, "BLRS_tp");
  tree a = make_temp_ssa_name(pointer_sized_int_node, NULL, "BLRS_ta");
  tree t = make_temp_ssa_name(pointer_sized_int_node, NULL, "BLRS_tt");
  gsi = gsi_last_bb(bb);
  gsi_insert_after(&gsi, gimple_build_assign(p, pos), GSI_NEW_STMT);
  gsi_insert_after(&gsi, gimple_build_assign(a, NOP_EXPR, p), GSI_NEW_STMT);
  gsi_insert_after(&gsi,
                   gimple_build_assign(t, BIT_AND_EXPR, a,
                                       build_int_cst(pointer_sized_int_node,
                                                     BALLARUS_TRACE_CHUNK_BYTES -
                                                         1)),
                   GSI_NEW_STMT);
  gsi_insert_after(&gsi,
                   gimple_build_cond(EQ_EXPR, t,
                                     build_int_cst(pointer_sized_int_node, 0),
                                     NULL_TREE, NULL_TREE),
                   GSI_NEW_STMT);
  basic_block slow = split_edge(single_succ_edge(bb));
  edge to_slow = single_succ_edge(bb);
  to_slow->flags &= ~EDGE_FALLTHRU;
  to_slow->flags |= EDGE_TRUE_VALUE;
  to_slow->probability = profile_probability::very_unlikely();
  edge to_fast = make_edge(bb, join, EDGE_FALSE_VALUE);
  to_fast->probability = to_slow->probability.invert();
  slow->count = bb->count.apply_probability(to_slow->probability);
  basic_block fast = split_edge(to_fast);
  gsi = gsi_start_bb(slow);
  gsi_insert_after(&gsi, gimple_build_call(slow_fn, 1, id), GSI_NEW_STMT);
  tree next = make_temp_ssa_name(ptype, NULL, "BLRS_tn");
  gsi = gsi_start_bb(fast);
  gsi_insert_after(&gsi,
                   gimple_build_assign(build_simple_mem_ref(p), id),
                   GSI_NEW_STMT);
  gsi_insert_after(&gsi,
                   gimple_build_assign(next, POINTER_PLUS_EXPR, p,
                                       size_int(4)),
                   GSI_NEW_STMT);
  gsi_insert_after(&gsi, gimple_build_assign(pos, next), GSI_NEW_STMT);
}

}  // namespace

void InlineTraceWitnesses() {
  std::vector<gcall*> calls;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsWitnessCall(gsi_stmt(gsi)))
        calls.push_back(as_a<gcall*>(gsi_stmt(gsi)));
  }
  if (calls.empty()) return;
  free_dominance_info(CDI_DOMINATORS);
  free_dominance_info(CDI_POST_DOMINATORS);
  tree slow_fn = RuntimeFn("__ballarus_trace_slow", 1);
  for (gcall* call : calls) InlineWitness(call, slow_fn);
}

void PlanFunctionTrace(ballarus::Function* fn,
                       const std::vector<uint64_t>& weights,
                       uint32_t fn_index, bool naive, TraceWork* work) {
  ballarus::TracePlan plan =
      ballarus::PlanTrace(*fn, weights, CallBlocks(fn->blocks.size()));
  work->enabled = true;
  work->naive = naive;
  work->fn_index = fn_index;
  work->call_block = plan.call_block;
  for (size_t e : plan.witness_edges)
    work->witness_edges.emplace_back(fn->edges[e].src, fn->edges[e].dst);
  fn->extensions.push_back({BALLARUS_TRACE_EXTENSION_TAG, EncodePlan(plan, naive)});
  if (dump_file)
    fprintf(dump_file,
            "ballarus: trace %s: %zu witnesses (%zu blocking), %zu "
            "unwitnessable\n",
            fn->demangled.c_str(), plan.witness_edges.size(),
            plan.blocking.size(), plan.unwitnessable.size());
}

void EmitTrace(const TraceWork& work, uint32_t tu_stamp) {
  if (!work.enabled) return;
  EmitSites(work, RuntimeFn("__ballarus_trace_site", 1));
  if (work.naive)
    EmitBlockIndices(work);
  else
    EmitWitnesses(work);
  tree leave = RuntimeFn("__ballarus_trace_leave", 0);
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, EXIT_BLOCK_PTR_FOR_FN(cfun)->preds)
    if (!(e->flags & (EDGE_ABNORMAL | EDGE_FAKE)))
      gsi_insert_on_edge(e, gimple_build_call(leave, 0));
  tree enter = RuntimeFn("__ballarus_trace_enter", 2);
  gsi_insert_on_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun)),
                     gimple_build_call(enter, 2, U32(work.fn_index),
                                       U32(tu_stamp)));
}

}  // namespace ballarus::plugin
