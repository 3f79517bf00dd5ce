// counter_emit.cc — the counter update, the one piece of GIMPLE every
// counter of ballarus goes through (edge counters, edge_counters.cc; dense
// path counts, path_emit.cc; re-entry counts, reentry.cc; loop registers'
// flushes, loop_registers.cc): how a counter is incremented is decided here
// and nowhere else.
//
// The update policy: update=single (load, add, store), update=atomic (one
// relaxed __atomic_fetch_add_8) or update=thread (a plain add into the
// running thread's copy, thread_counters.cc), and without update= what the
// compile asked for: per-thread counters where gcc's
// -fprofile-update=prefer-atomic would choose atomic ones.
//
// The loop barrier: in a loop that may touch counter memory a plain update
// is followed by an empty asm on that counter (AppendCounterAdd,
// JudgeLoops).

#include <cstdio>
#include <cstring>
#include <set>

#include "plugin/options.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"

namespace ballarus::plugin {

namespace {

// True when this compilation asked for thread-safe counters the way gcc's
// -fprofile-update=prefer-atomic does: -pthread (which the driver turns
// into -D_REENTRANT for cc1) or an explicit -fprofile-update=atomic.
bool CompileWantsAtomic() {
  if (global_options_set.x_flag_profile_update &&
      flag_profile_update != PROFILE_UPDATE_SINGLE)
    return true;
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const cl_decoded_option& o = save_decoded_options[i];
    if (o.opt_index == OPT_D && o.arg != nullptr &&
        strcmp(o.arg, "_REENTRANT") == 0)
      return true;
    if (o.opt_index == OPT_pthread) return true;
  }
  return false;
}

}  // namespace

UpdateMode ChosenUpdate() {
  switch (g_options.update) {
    case Update::kSingle:
      return UpdateMode::kSingle;
    case Update::kAtomic:
      return UpdateMode::kAtomic;
    case Update::kThread:
    case Update::kTls:
      if (flag_generate_lto && !ThreadCountsThroughGs()) {
        error_at(UNKNOWN_LOCATION,
                 "ballarus: %<-fplugin-arg-ballarus-update=%s%> works with "
                 "%<-flto%> only in x86-64 code for executables, counting "
                 "through %%gs; use %<update=atomic%>",
                 g_options.update == Update::kTls ? "tls" : "thread");
        return UpdateMode::kAtomic;
      }
      return UpdateMode::kThread;
    case Update::kDefault:
      // Under -flto, per-thread counts only through %gs: the thread
      // pointers' table is top-level asm naming the TU's static symbols,
      // which LTO renames.
      if (!CompileWantsAtomic()) return UpdateMode::kSingle;
      return flag_generate_lto && !ThreadCountsThroughGs()
                 ? UpdateMode::kAtomic
                 : UpdateMode::kThread;
  }
  return UpdateMode::kSingle;
}

const char* UpdateName(UpdateMode mode) {
  switch (mode) {
    case UpdateMode::kSingle:
      return "single";
    case UpdateMode::kAtomic:
      return "atomic";
    case UpdateMode::kThread:
      return "thread";
  }
  return "?";
}

namespace {

// Whether loop L (or a loop inside it) reads or writes memory a counter
// may be: a call or asm that touches memory, an access through a
// character type or one in unsigned long long's alias set.  Only in such
// a loop can GCC neither keep a counter in a register across iterations
// (LIM's store motion, which needs every other access disambiguated) nor
// leave it alone: PRE forwards the stored value to the next iteration's
// load.  JudgeLoops judges every loop before any code is inserted (the
// counters' own accesses would conflict).
struct LoopJudgement {
  function* fn = nullptr;
  std::set<int> touching;  // numbers of the loops that may touch counters
} g_loops;

// Whether code in loop L (the root: none) runs on every iteration of a
// loop that may touch counter memory.
bool PerIterationIn(class loop* L) {
  gcc_assert(g_loops.fn == cfun);
  return L != NULL && loop_depth(L) > 0 && g_loops.touching.count(L->num);
}

// Whether bb reads or writes memory a counter may be.
bool TouchesCounters(basic_block bb, alias_set_type counter_set) {
  for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
       gsi_next(&gsi)) {
    gimple* stmt = gsi_stmt(gsi);
    if (is_gimple_debug(stmt) || !gimple_vuse(stmt)) continue;
    if (is_gimple_call(stmt) || gimple_code(stmt) == GIMPLE_ASM) return true;
    if (!is_gimple_assign(stmt)) continue;
    for (tree ref : {gimple_assign_lhs(stmt), gimple_assign_rhs1(stmt)}) {
      if (ref == NULL_TREE || !(REFERENCE_CLASS_P(ref) || DECL_P(ref)))
        continue;
      tree base = get_base_address(ref);
      if (base != NULL_TREE && DECL_P(base) && !is_global_var(base))
        continue;  // a local: never a counter
      if (alias_sets_conflict_p(get_alias_set(ref), counter_set)) return true;
    }
  }
  return false;
}

}  // namespace

void JudgeLoops() {
  g_loops.fn = cfun;
  g_loops.touching.clear();
  if (current_loops == NULL) return;
  const alias_set_type counter_set =
      get_alias_set(long_long_unsigned_type_node);
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    if (bb->loop_father == NULL || loop_depth(bb->loop_father) == 0 ||
        !TouchesCounters(bb, counter_set))
      continue;
    for (class loop* L = bb->loop_father; loop_depth(L) > 0;
         L = loop_outer(L))
      if (g_loops.touching.insert(L->num).second && dump_file)
        fprintf(dump_file,
                "  loop at block %d may touch counter memory (block %d): "
                "%s\n",
                L->header->index, bb->index,
                g_options.loop_barrier
                    ? "an update on each iteration is followed by a barrier"
                    : "no barrier (loop-barrier=off)");
  }
}

bool RunsPerIteration(basic_block bb) {
  return current_loops != NULL && PerIterationIn(bb->loop_father);
}

bool RunsPerIteration(edge e) {
  if (current_loops == NULL || e->src->loop_father == NULL ||
      e->dest->loop_father == NULL)
    return false;
  return PerIterationIn(
      find_common_loop(e->src->loop_father, e->dest->loop_father));
}

namespace {

// Appends to seq the relaxed atomic add of delta to ref.
void AppendAtomicAdd(gimple_seq* seq, tree ref, tree delta) {
  tree addr = build_fold_addr_expr(ref);
  if (!is_gimple_min_invariant(addr)) {  // variable index: via an SSA name
    tree p = make_temp_ssa_name(TREE_TYPE(addr), NULL, "BLRS_p");
    gimple_seq_add_stmt(seq, gimple_build_assign(p, addr));
    addr = p;
  }
  tree f = builtin_decl_explicit(BUILT_IN_ATOMIC_FETCH_ADD_8);
  gimple_seq_add_stmt(
      seq, gimple_build_call(f, 3, addr, delta,
                             build_int_cst(integer_type_node,
                                           MEMMODEL_RELAXED)));
}

// Appends asm ("" : "=m" (ref) : "m" (ref)) to seq: not volatile, no
// clobbers, a compiler barrier for ref alone.
void AppendBarrier(gimple_seq* seq, tree ref) {
  vec<tree, va_gc>* outputs = NULL;
  vec<tree, va_gc>* inputs = NULL;
  vec_safe_push(outputs,
                build_tree_list(build_tree_list(NULL_TREE,
                                                build_string(3, "=m")),
                                unshare_expr(ref)));
  vec_safe_push(inputs,
                build_tree_list(build_tree_list(NULL_TREE,
                                                build_string(2, "m")),
                                unshare_expr(ref)));
  gimple_seq_add_stmt(seq,
                      gimple_build_asm_vec("", inputs, outputs, NULL, NULL));
}

}  // namespace

// A load, an add and a store, or with update=atomic one relaxed
// __atomic_fetch_add_8.  In a thread-mode function the TU's array is
// redirected to the thread's copy, through the thread pointer or %gs, and
// added to plainly: only its thread writes it.  update=tls adds in one asm.
void AppendCounterAdd(gimple_seq* seq, tree ref, tree delta, bool atomic,
                      bool in_loop) {
  tree u64 = TREE_TYPE(ref);
  if (AppendSegmentAdd(seq, ref, delta)) return;
  const bool gs = RedirectThroughGs(seq, &ref);
  if (gs || RedirectToThreadCopy(seq, &ref)) atomic = false;
  if (atomic) {
    AppendAtomicAdd(seq, ref, delta);
    return;
  }
  tree t1 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t1, ref));
  tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t2, PLUS_EXPR, t1, delta));
  gimple_seq_add_stmt(seq, gimple_build_assign(unshare_expr(ref), t2));
  // Through %gs, every update: GCC 12's SLP vectoriser would join adjacent
  // counters' updates into one vector add whose load loses the %gs (seen in
  // lua, sqlite3 and bzip2), and the barrier keeps each update apart.
  if (gs || (in_loop && g_options.loop_barrier)) AppendBarrier(seq, ref);
}

}  // namespace ballarus::plugin
