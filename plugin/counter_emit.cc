// counter_emit.cc — edge counters, from the choice of the edges that hold
// one to the GIMPLE that increments them; and AppendCounterAdd, the one
// builder of a counter update, which path emission (path_emit.cc) uses for
// its dense counts too: how a counter is incremented (single, atomic or
// per-thread) is decided here and nowhere else.
//
// Edge mode (the default) places counters only on the chords of a maximum
// spanning tree of the closed CFG (Knuth 1973; Ball & Larus, TOPLAS 1994),
// weighted by estimator/ (or GCC's frequencies, or an earlier profile):
// |E|-|V|+1 counters per function, on the edges the weights call cold;
// ballarus-reconstruct derives every other edge by flow conservation.
// Edges that cannot hold a counter (fake, EH, abnormal) go into the tree
// first.  Naive mode places one 64-bit counter on every edge that can hold
// one.  Instrumentation of a counted edge, before and after:
//
//   <bb 3>:                          <bb 3>:
//   if (x_1 > 0) goto <bb 4>;        if (x_1 > 0) goto <bb 4>;
//   else goto <bb 5>;                else goto <bb 5>;
//                                    <bb 4>:            (edge 3->4 had one pred)
//   <bb 4>:                          BLRS_ctr_1 = __ballarus_counters[7];
//   ...                              BLRS_ctr_2 = BLRS_ctr_1 + 1;
//                                    __ballarus_counters[7] = BLRS_ctr_2;
//                                    ...
//
// (with update=atomic the three statements are one
// __atomic_fetch_add_8 (&__ballarus_counters[7], 1, RELAXED)).  Edge
// insertions go through gsi_insert_on_edge, so an edge is split only when
// neither its source nor its target can hold the code.
//
// update=thread (per-thread counters; docs/DESIGN.md has the measurements
// behind it): the update is the same plain add, into the running thread's
// own copy of the TU's counters.  Each TU gets a thread-local pointer to
// its counters, __ballarus_tc, which starts out pointing at the shared
// array itself and which the runtime points at the thread's copy when the
// thread registers (runtime/thread_counters.c).  Every instrumented
// function loads it once:
//
//   <bb 2>:                                  <bb 7>:
//   ...                                      BLRS_tc_1 = __ballarus_tc;
//                                            <bb 2>:
//                                            ...
//
// and a counter update is then `(*BLRS_tc_1)[7] += 1`: on x86-64 one
// `movq %fs:__ballarus_tc@tpoff, %rax` per activation, then `addq $1,
// 56(%rax)` per update, where update=single has `addq $1,
// __ballarus_counters+56(%rip)`.  A thread registers in the functions
// through which it can enter the TU's code from code that is not
// instrumented (ThreadEntryCheck: main, functions whose address is taken
// (thread start routines, callbacks, virtual functions), constructors and
// destructors, and in -fPIC code the functions other modules can call):
//
//   <bb 7>:
//   BLRS_tc_1 = __ballarus_tc;
//   if (BLRS_tc_1 == &__ballarus_counters) goto <bb 8>; else goto <bb 9>;
//   <bb 8>:  [very unlikely]
//   BLRS_tc_2 = __ballarus_tc_register (&__ballarus_counters, &__ballarus_tc);
//   <bb 9>:
//   # BLRS_tc_3 = PHI <BLRS_tc_1(7), BLRS_tc_2(8)>
//
// Registration points every TU pointer of the module at the thread's copy
// (the runtime finds them through the table below), so the other
// functions need no check.  A thread that reaches a TU's code before any
// check (constructors that run before main, code called by name from
// uninstrumented code) counts into the shared array, unsynchronised, like
// update=single, until it passes one; so does a thread whose copy cannot be
// mapped.
//
// The table: each TU adds {&__ballarus_counters, offset of __ballarus_tc
// in the module's TLS block} to section BALLARUS_TC_TABLE_SECTION (top-level
// asm: an R_X86_64_DTPOFF64 offset, which C cannot spell).  The pointer's
// TLS model is GCC's default: local-exec in code for executables (the
// `movq %fs:` above), and in -fPIC code a dynamic model through TLS
// descriptors (-mtls-dialect=gnu2), which stays correct when the library
// is dlopen'ed: initial-exec would move the library's whole TLS segment
// (its own thread-locals too) into glibc's static TLS surplus, about
// 1.6 KB, and dlopen fails once that is used up.

// The update policy: update=single, update=atomic or update=thread, and
// without update= what the compile asked for: per-thread counters where
// gcc's -fprofile-update=prefer-atomic would choose atomic ones.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/spanning_tree.h"
#include "plugin/options.h"
#include "runtime/ballarus_format.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/path_returns.h"

namespace ballarus::plugin {

namespace {

// Fake edges do not exist at run time and abnormal edges cannot be split;
// neither can hold a counter.  EH edges can: GIMPLE splits them by giving
// the new block its own landing pad, as gcov relies on too.  Counting them
// matters: a block ending in a throwing call that may also not return has
// an EH and a fake successor, and landing pads shared by several such
// blocks would otherwise close cycles of unknown edges.
bool CanHoldCounter(uint32_t flags) {
  return !(flags & (ballarus::kEdgeAbnormal | ballarus::kEdgeFake |
                    ballarus::kEdgeIgnored));
}

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

// Builds `counters[index] += 1` on edge E, queued with gsi_insert_on_edge.
void QueueIncrement(edge e, tree counters, uint64_t index, bool atomic) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  gimple_seq seq = NULL;
  if (const int loop = RegisterLoopOf(e); loop >= 0) {
    AppendRegisterAdd(&seq, loop, counters, index, build_int_cst(u64, 1));
    gsi_insert_seq_on_edge(e, seq);
    return;
  }
  tree ref = build4(ARRAY_REF, u64, counters,
                    build_int_cst(integer_type_node, index), NULL_TREE,
                    NULL_TREE);
  AppendCounterAdd(&seq, ref, build_int_cst(u64, 1), atomic,
                   RunsPerIteration(e));
  gsi_insert_seq_on_edge(e, seq);
}

// update=thread: the TU's declarations, and the function being
// instrumented.
struct ThreadCounters {
  tree counters = NULL_TREE;     // the TU's counter array
  tree tc = NULL_TREE;           // static __thread uint64_t (*__ballarus_tc)[N]
  tree register_fn = NULL_TREE;  // __ballarus_tc_register
  bool active = false;           // cfun: updates go to the thread's copy
  bool used = false;             // cfun: some update did
};
ThreadCounters g_thread;

// -mtls-dialect=gnu2 for this TU (x86-64): TLS descriptors for every
// dynamic-model TLS access, ours and the TU's own (same semantics).  The
// dialect is a target option saved per function, so the default node that
// functions without a target attribute restore is updated too.
void UseTlsDescriptors() {
  ix86_tls_dialect = TLS_DIALECT_GNU2;
  if (target_option_default_node != NULL_TREE)
    TREE_TARGET_OPTION(target_option_default_node)->x_ix86_tls_dialect =
        TLS_DIALECT_GNU2;
  if (target_option_current_node != NULL_TREE)
    TREE_TARGET_OPTION(target_option_current_node)->x_ix86_tls_dialect =
        TLS_DIALECT_GNU2;
}

// Whether a thread can enter cfun's TU here from code that is not
// instrumented, so that cfun must make sure the thread is registered.
bool ThreadEntryCheck(std::string* why) {
  tree decl = current_function_decl;
  cgraph_node* node = cgraph_node::get(decl);
  if (MAIN_NAME_P(DECL_NAME(decl)) && DECL_FILE_SCOPE_P(decl)) {
    *why = "main";
    return true;
  }
  if (node != nullptr && node->address_taken) {
    *why = "address taken";
    return true;
  }
  if (DECL_STATIC_CONSTRUCTOR(decl) || DECL_STATIC_DESTRUCTOR(decl)) {
    *why = "constructor or destructor";
    return true;
  }
  if (DECL_PRESERVE_P(decl)) {
    *why = "used attribute";
    return true;
  }
  if (flag_shlib && TREE_PUBLIC(decl) &&
      (DECL_VISIBILITY(decl) == VISIBILITY_DEFAULT ||
       DECL_VISIBILITY(decl) == VISIBILITY_PROTECTED)) {
    *why = "exported from a shared library";
    return true;
  }
  return false;
}

// A hidden, external declaration of the runtime's (every module links its
// own copy of the runtime, so the reference resolves inside the module).
void MakeRuntimeDecl(tree decl) {
  DECL_EXTERNAL(decl) = 1;
  TREE_PUBLIC(decl) = 1;
  DECL_ARTIFICIAL(decl) = 1;
  DECL_VISIBILITY(decl) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(decl) = 1;
}

}  // namespace

UpdateMode ChosenUpdate() {
  switch (g_options.update) {
    case Update::kSingle:
      return UpdateMode::kSingle;
    case Update::kAtomic:
      return UpdateMode::kAtomic;
    case Update::kThread:
      if (flag_generate_lto) {
        error_at(UNKNOWN_LOCATION,
                 "ballarus: %<-fplugin-arg-ballarus-update=thread%> does not "
                 "work with %<-flto%>; use %<update=atomic%>");
        return UpdateMode::kAtomic;
      }
      return UpdateMode::kThread;
    case Update::kDefault:
      // Under -flto, atomic: the table of thread pointers is top-level
      // asm naming the TU's static symbols, which LTO renames.
      if (!CompileWantsAtomic()) return UpdateMode::kSingle;
      return flag_generate_lto ? UpdateMode::kAtomic : UpdateMode::kThread;
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

void PrepareThreadCounters(tree counters) {
  g_thread.counters = counters;
  // The pointer's initial value takes the array's address.
  DECL_NONALIASED(counters) = 0;
  // All thread-mode arrays of a module in one section, so that a thread's
  // copy of them is one mapping.  GCC would give a named section PROGBITS
  // (file space for the zeros); declaring it BSS first, with
  // SECTION_OVERRIDE, makes get_named_section return this one for the
  // array (varasm.cc get_section), emitted as @nobits.
  get_section(BALLARUS_THREAD_SECTION,
              SECTION_WRITE | SECTION_BSS | SECTION_OVERRIDE, NULL);
  set_decl_section_name(counters, BALLARUS_THREAD_SECTION);

  // static __thread uint64_t (*__ballarus_tc)[N] = &__ballarus_counters;
  tree ptr_type = build_pointer_type(TREE_TYPE(counters));
  tree tc = build_decl(BUILTINS_LOCATION, VAR_DECL,
                       get_identifier("__ballarus_tc"), ptr_type);
  TREE_STATIC(tc) = 1;
  TREE_PUBLIC(tc) = 0;
  DECL_ARTIFICIAL(tc) = 1;
  DECL_IGNORED_P(tc) = 1;
  TREE_USED(tc) = 1;
  // The runtime writes it: it must be neither found read-only (and folded
  // to its initial value) nor dropped.
  TREE_ADDRESSABLE(tc) = 1;
  DECL_PRESERVE_P(tc) = 1;
  DECL_INITIAL(tc) = build_fold_addr_expr(counters);
  set_decl_tls_model(tc, decl_default_tls_model(tc));
  varpool_node::finalize_decl(tc);
  if (flag_shlib) UseTlsDescriptors();
  g_thread.tc = tc;

  // The TU's entry in the module's table of thread pointers.
  const char* ctr_name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(counters));
  const char* tc_name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(tc));
  std::string table = std::string("\t.pushsection\t") +
                      BALLARUS_TC_TABLE_SECTION +
                      ",\"aw\"\n\t.balign\t8\n\t.quad\t" + ctr_name +
                      "\n\t.quad\t" + tc_name + "@dtpoff\n\t.popsection";
  symtab->finalize_toplevel_asm(
      build_string(table.size(), table.c_str()));

  tree fntype = build_function_type_list(ptr_type_node, ptr_type_node,
                                         ptr_type_node, NULL_TREE);
  tree fn = build_fn_decl("__ballarus_tc_register", fntype);
  MakeRuntimeDecl(fn);
  TREE_NOTHROW(fn) = 1;
  g_thread.register_fn = fn;
}

void BeginThreadCounters() {
  gcc_assert(g_thread.counters != NULL_TREE && !g_thread.active);
  g_thread.active = true;
  g_thread.used = false;
}

bool ThreadCountersActive() { return g_thread.active; }

void EndThreadCounters() {
  g_thread.active = false;
  std::string why;
  if (!g_thread.used || !ThreadEntryCheck(&why)) return;
  // ENTRY -> cond -> slow -> (the old first block), cond -> old first
  // block.
  basic_block cond_bb =
      split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun)));
  basic_block slow_bb = split_edge(single_succ_edge(cond_bb));
  edge to_slow = single_succ_edge(cond_bb);
  basic_block join_bb = single_succ(slow_bb);
  to_slow->flags &= ~EDGE_FALLTHRU;
  to_slow->flags |= EDGE_TRUE_VALUE;
  to_slow->probability = profile_probability::very_unlikely();
  edge to_join = make_edge(cond_bb, join_bb, EDGE_FALSE_VALUE);
  to_join->probability = to_slow->probability.invert();
  slow_bb->count = cond_bb->count.apply_probability(to_slow->probability);

  tree type = TREE_TYPE(g_thread.tc);
  tree shared = build_fold_addr_expr(g_thread.counters);
  tree p1 = make_temp_ssa_name(type, NULL, "BLRS_tc");
  gimple_stmt_iterator gsi = gsi_start_bb(cond_bb);
  gsi_insert_after(&gsi, gimple_build_assign(p1, g_thread.tc), GSI_NEW_STMT);
  gsi_insert_after(
      &gsi, gimple_build_cond(EQ_EXPR, p1, shared, NULL_TREE, NULL_TREE),
      GSI_NEW_STMT);

  // &__ballarus_tc is per thread, not a GIMPLE invariant: computed apart.
  tree tc_addr = make_temp_ssa_name(ptr_type_node, NULL, "BLRS_tc");
  gcall* call = gimple_build_call(
      g_thread.register_fn, 2,
      build_fold_addr_expr_with_type(g_thread.counters, ptr_type_node),
      tc_addr);
  gsi = gsi_start_bb(slow_bb);
  gsi_insert_after(
      &gsi,
      gimple_build_assign(
          tc_addr, build_fold_addr_expr_with_type(g_thread.tc, ptr_type_node)),
      GSI_NEW_STMT);
  gsi_insert_after(&gsi, call, GSI_NEW_STMT);
  if (dump_file)
    fprintf(dump_file,
            "  per-thread counters: registration check (%s) in new entry "
            "blocks %d, %d\n",
            why.c_str(), cond_bb->index, slow_bb->index);
}

void PlaceEdgeCounters(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       uint64_t* next_counter, EdgeCounters* out,
                       bool spanning_tree) {
  std::vector<bool> counted(fn->edges.size(), false);
  if (g_options.mode == Mode::kNone && !spanning_tree) {
    // Path mode alone: no edge counters.
  } else if (g_options.mode == Mode::kNaive) {
    for (size_t i = 0; i < fn->edges.size(); ++i)
      counted[i] = CanHoldCounter(fn->edges[i].flags);
  } else {
    ballarus::SpanningTree tree = ballarus::MaximumSpanningTree(*fn, weights);
    for (size_t i : tree.chords) counted[i] = true;
    if (dump_file) {
      fprintf(dump_file,
              "  maximum spanning tree: %zu chords get counters "
              "(|E|-|V|+1 with the virtual EXIT->ENTRY edge)\n",
              tree.chords.size());
      for (size_t i = 0; i < fn->edges.size(); ++i)
        if (tree.in_tree[i])
          fprintf(dump_file, "  edge %u->%u on tree (weight %llu)\n",
                  fn->edges[i].src, fn->edges[i].dst,
                  (unsigned long long)weights[i]);
    }
    for (size_t i : tree.uncountable_chords) {
      // Only when fake/EH/abnormal edges alone close a cycle (gcov drops
      // such a fake edge).  Its count stays unknown; verify reports it.
      if (dump_file)
        fprintf(dump_file,
                "  edge %u->%u is a chord but cannot hold a counter: its "
                "count is not derivable\n",
                fn->edges[i].src, fn->edges[i].dst);
    }
  }

  for (size_t i = 0; i < fn->edges.size(); ++i) {
    ballarus::Edge& me = fn->edges[i];
    if (counted[i]) {
      me.counter = static_cast<int64_t>(*next_counter);
      // A re-entry edge (no GCC edge) is counted at its call's return
      // (reentry.cc), not by an increment on an edge.
      if (gcc_edges[i] != nullptr) {
        out->counted.emplace_back(gcc_edges[i], *next_counter);
        out->counted_model_edge.push_back(i);
      }
      ++*next_counter;
    } else if (dump_file && !CanHoldCounter(me.flags)) {
      const char* why = (me.flags & ballarus::kEdgeIgnored)
                            ? "abnormal, replaced by fake edges; count unknown"
                        : (me.flags & ballarus::kEdgeFake)
                            ? "fake; derived by flow conservation"
                            : "abnormal; derived by flow conservation";
      fprintf(dump_file, "  edge %d->%d no counter (%s)\n", me.src, me.dst,
              why);
    }
  }
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
      g_loops.touching.insert(L->num);
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

// Loop registers: the loops of cfun that take them (natural loops found
// here from the dominators: GCC's loop tree may await a fixup, which could
// change the CFG the plan refers to), the innermost such loop of each
// block, the loops' exits (listed before any edge is split: an exit edge
// stays the edge out of the loop's block when its target side is split
// off), and the local of each (loop, counter) pair used so far.
struct LoopRegisters {
  function* fn = nullptr;
  RegisterLoops loops;
  std::map<std::pair<int, uint64_t>, tree> local;  // per (loop, counter)
  struct Pair {
    int loop;
    RegisterPair locals;
    std::function<void(gimple_seq*, tree, tree)> flush;
  };
  std::vector<Pair> pairs;  // NewRegisterPair
} g_registers;

// GCC's estimate of a loop's iterations per entry below which the locals'
// flush on exit (an add to memory per counter) is not worth it.
constexpr int64_t kRegisterMinIterations = 4;
// The same for a loop of two blocks (header and latch: one path per
// iteration), whose count costs one add per iteration in memory too: only
// where GCC knows a long trip (lua's nil-filling loops, `for (; narg <
// nfixparams; narg++)`, guessed ~9 and run 0 to 2 times, cost luaD_precall
// 26 M instructions in flushes).
constexpr int64_t kRegisterMinIterationsOnePath = 32;
// ... unless its body is long enough (an unrolled loop: bzip2's radix
// counting, `for (; i >= 3; i -= 4)`, 4 elements per iteration over the
// whole block) that one flush weighs little against even one iteration.
constexpr size_t kRegisterLongBodyStatements = 16;

bool BadEdge(edge e) {
  return (e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL | EDGE_EH |
                      EDGE_FAKE)) != 0;
}

// Whether `call` surely returns to its caller and touches no counter: an
// internal call, or one that SurelyReturns (path_returns.h).  (Calls of the
// TU's functions that always return would do too; but the loops that call
// them, bzip2's insertion sort calling mainGtU, run a few times per entry,
// and their flushes cost mainSort 33 M instructions for no time saved.)
bool ReturnsQuietly(const gimple* call) {
  return gimple_call_internal_p(call) || SurelyReturns(call);
}

// Whether bb may leave an iteration other than by its edges: a call but a
// quiet one (ReturnsQuietly), an asm, a statement that may throw.
bool MayLeave(basic_block bb) {
  for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
       gsi_next(&gsi)) {
    gimple* stmt = gsi_stmt(gsi);
    if (is_gimple_debug(stmt)) continue;
    if ((is_gimple_call(stmt) && !ReturnsQuietly(stmt)) ||
        gimple_code(stmt) == GIMPLE_ASM || stmt_could_throw_p(cfun, stmt))
      return true;
  }
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->preds) if (BadEdge(e)) return true;
  FOR_EACH_EDGE(e, ei, bb->succs) if (BadEdge(e)) return true;
  return false;
}

// Whether v is a constant or an SSA name defined outside the loop.
bool IsLoopInvariant(tree v, const std::set<int>& blocks) {
  if (TREE_CODE(v) == INTEGER_CST) return true;
  if (TREE_CODE(v) != SSA_NAME) return false;
  if (SSA_NAME_IS_DEFAULT_DEF(v)) return true;
  basic_block bb = gimple_bb(SSA_NAME_DEF_STMT(v));
  return bb != NULL && !blocks.count(bb->index);
}

// How value a (a PHI argument from inside the loop) relates to the
// header PHI's result r: 2 when it is r plus or minus an invariant (through
// conversions), 1 when it is r itself, 0 otherwise; through PHIs of blocks
// inside the loop (a merged latch) the least of their arguments' answers.
int StepsFrom(tree a, tree r, const std::set<int>& blocks, int depth) {
  auto strip = [](tree v) {
    for (int k = 0; k < 2 && TREE_CODE(v) == SSA_NAME; ++k) {
      gimple* d = SSA_NAME_DEF_STMT(v);
      if (!is_gimple_assign(d) ||
          !CONVERT_EXPR_CODE_P(gimple_assign_rhs_code(d)))
        break;
      v = gimple_assign_rhs1(d);
    }
    return v;
  };
  a = strip(a);
  if (a == r) return 1;
  if (TREE_CODE(a) != SSA_NAME) return 0;
  gimple* def = SSA_NAME_DEF_STMT(a);
  if (gphi* phi = dyn_cast<gphi*>(def)) {
    if (depth >= 2 || !blocks.count(gimple_bb(phi)->index)) return 0;
    int least = 2;
    for (unsigned i = 0; i < gimple_phi_num_args(phi) && least > 0; ++i)
      least = std::min(least, StepsFrom(gimple_phi_arg_def(phi, i), r, blocks,
                                        depth + 1));
    return least;
  }
  if (!is_gimple_assign(def)) return 0;
  const tree_code code = gimple_assign_rhs_code(def);
  if ((code == PLUS_EXPR || code == MINUS_EXPR ||
       code == POINTER_PLUS_EXPR) &&
      IsLoopInvariant(gimple_assign_rhs2(def), blocks) &&
      strip(gimple_assign_rhs1(def)) == r)
    return 2;
  return 0;
}

// Whether value v (an SSA name) steps by a constant round the loop: a PHI
// of the header whose arguments from inside the loop are its own result
// plus or minus a constant (or, on some ways round, itself), or a
// conversion or constant offset of such a PHI.
bool IsInductionVariable(tree v, basic_block header,
                         const std::set<int>& blocks) {
  for (int depth = 0; depth < 3 && TREE_CODE(v) == SSA_NAME; ++depth) {
    gimple* def = SSA_NAME_DEF_STMT(v);
    if (gphi* phi = dyn_cast<gphi*>(def)) {
      if (gimple_bb(phi) != header) return false;
      bool stepped = false;
      for (unsigned i = 0; i < gimple_phi_num_args(phi); ++i) {
        if (!blocks.count(gimple_phi_arg_edge(phi, i)->src->index)) continue;
        const int how = StepsFrom(gimple_phi_arg_def(phi, i),
                                  gimple_phi_result(phi), blocks, 0);
        if (how == 0) return false;
        stepped |= how == 2;
      }
      return stepped;
    }
    if (!is_gimple_assign(def)) return false;
    const tree_code code = gimple_assign_rhs_code(def);
    if (!(CONVERT_EXPR_CODE_P(code) ||
          ((code == PLUS_EXPR || code == MINUS_EXPR ||
            code == POINTER_PLUS_EXPR) &&
           IsLoopInvariant(gimple_assign_rhs2(def), blocks))))
      return false;
    v = gimple_assign_rhs1(def);
  }
  return false;
}

// Whether one of the loop's exits is decided by an induction variable (a
// counted loop, whose iterations GCC's estimate can be trusted for: a loop
// whose exits test memory -- bzip2's bit-reader refill, `while (True) { if
// (s->bsLive >= n) break; ... }` -- is guessed to run ~9 times and runs
// once, and the flush on its exit would cost more than it saves).
bool HasCountedExit(basic_block header, const std::set<int>& blocks) {
  for (int b : blocks) {
    basic_block bb = BASIC_BLOCK_FOR_FN(cfun, b);
    gimple* last = last_stmt(bb);
    gcond* cond = last ? dyn_cast<gcond*>(last) : NULL;
    if (cond == NULL) continue;
    bool exits = false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) exits |= !blocks.count(e->dest->index);
    if (exits && (IsInductionVariable(gimple_cond_lhs(cond), header, blocks) ||
                  IsInductionVariable(gimple_cond_rhs(cond), header, blocks)))
      return true;
  }
  return false;
}

}  // namespace

bool LoopRegistersWanted(bool atomic, bool per_thread) {
  return optimize > 0 && !atomic && !per_thread &&
         Options::IsOn(g_options.loop_registers, g_options.paths);
}

RegisterLoops FindRegisterLoops(bool dump) {
  RegisterLoops out;
  const bool had_dominators = dom_info_available_p(CDI_DOMINATORS);
  if (!had_dominators) calculate_dominance_info(CDI_DOMINATORS);
  // Natural loops, one per header (all its back edges), ascending.
  std::map<int, std::set<int>> body;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) {
      if (e->dest == EXIT_BLOCK_PTR_FOR_FN(cfun) ||
          !dominated_by_p(CDI_DOMINATORS, bb, e->dest))
        continue;
      std::set<int>& blocks = body[e->dest->index];
      blocks.insert(e->dest->index);
      std::vector<basic_block> work;
      if (blocks.insert(bb->index).second) work.push_back(bb);
      while (!work.empty()) {
        basic_block x = work.back();
        work.pop_back();
        edge p;
        edge_iterator pi;
        FOR_EACH_EDGE(p, pi, x->preds)
          if (p->src != ENTRY_BLOCK_PTR_FOR_FN(cfun) &&
              blocks.insert(p->src->index).second)
            work.push_back(p->src);
      }
    }
  }
  if (!had_dominators) free_dominance_info(CDI_DOMINATORS);
  // Outer loops first, so that each block ends up in the innermost loop
  // that takes registers (natural loops with distinct headers nest or are
  // disjoint).
  std::vector<int> headers;
  for (const auto& [h, blocks] : body) headers.push_back(h);
  std::stable_sort(headers.begin(), headers.end(), [&](int x, int y) {
    return body[x].size() > body[y].size();
  });
  for (int h : headers) {
    const std::set<int>& blocks = body[h];
    bool ok = true;
    for (int b : blocks)
      ok &= !MayLeave(BASIC_BLOCK_FOR_FN(cfun, b));
    basic_block header = BASIC_BLOCK_FOR_FN(cfun, h);
    profile_count entries = profile_count::zero();
    std::vector<edge> exits;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, header->preds)
      if (!blocks.count(e->src->index)) entries += e->count();
    for (int b : blocks)
      FOR_EACH_EDGE(e, ei, BASIC_BLOCK_FOR_FN(cfun, b)->succs)
        if (!blocks.count(e->dest->index)) exits.push_back(e);
    // GCC's estimate of the iterations per entry (guessed or read).
    int64_t iterations = -1;
    if (header->count.initialized_p() && entries.initialized_p() &&
        entries.nonzero_p())
      iterations = header->count.to_gcov_type() / entries.to_gcov_type();
    // ok, and an exit decided by an induction variable
    const bool counted = ok && HasCountedExit(header, blocks);
    size_t statements = 0;  // of a one-path loop's body
    if (blocks.size() <= 2)
      for (int b : blocks)
        for (gimple_stmt_iterator gsi =
                 gsi_start_nondebug_bb(BASIC_BLOCK_FOR_FN(cfun, b));
             !gsi_end_p(gsi); gsi_next_nondebug(&gsi))
          ++statements;
    const bool takes =
        counted && !exits.empty() &&
        iterations >= (blocks.size() > 2 ||
                               statements >= kRegisterLongBodyStatements
                           ? kRegisterMinIterations
                           : kRegisterMinIterationsOnePath);
    if (dump && dump_file) {
      int line = 0;
      for (int b : blocks)
        for (gimple_stmt_iterator gsi = gsi_start_bb(BASIC_BLOCK_FOR_FN(cfun, b));
             line == 0 && !gsi_end_p(gsi); gsi_next(&gsi))
          if (gimple_has_location(gsi_stmt(gsi)))
            line = LOCATION_LINE(gimple_location(gsi_stmt(gsi)));
      fprintf(dump_file,
              "  loop at block %d (line %d, %zu blocks, ~%lld iterations): "
              "%s\n", h, line,
              blocks.size(), (long long)iterations,
              takes ? "counters with a fixed address in locals"
              : !ok ? "counters in memory (a call, asm, throw or abnormal "
                      "edge)"
              : exits.empty() ? "counters in memory (no exit)"
              : !counted ? "counters in memory (no exit decided by an "
                           "induction variable)"
                              : "counters in memory (few iterations)");
    }
    if (!takes) continue;
    for (int b : blocks) out.loop_of[b] = h;
    out.exits[h] = std::move(exits);
  }
  return out;
}

void BeginLoopRegisters(bool enabled) {
  g_registers.fn = cfun;
  g_registers.loops =
      enabled ? FindRegisterLoops(/*dump=*/true) : RegisterLoops{};
  g_registers.local.clear();
  g_registers.pairs.clear();
}

int RegisterLoops::Of(edge e) const {
  auto s = loop_of.find(e->src->index);
  if (s == loop_of.end()) return -1;
  auto d = loop_of.find(e->dest->index);
  return d != loop_of.end() && d->second == s->second ? s->second : -1;
}

int RegisterLoops::Of(basic_block bb) const {
  auto it = loop_of.find(bb->index);
  return it == loop_of.end() ? -1 : it->second;
}

int RegisterLoopOf(edge e) {
  gcc_assert(g_registers.fn == cfun);
  return g_registers.loops.Of(e);
}

int RegisterLoopOf(basic_block bb) {
  gcc_assert(g_registers.fn == cfun);
  return g_registers.loops.Of(bb);
}

// A local of the loop registers: addressable until update-address-taken
// (-O1 and up) makes it an SSA register, like the path register, so no
// PHIs are built here.
tree NewRegisterLocal(tree type) {
  tree local = create_tmp_var(type, "BLRS_loopc");
  TREE_ADDRESSABLE(local) = 1;
  return local;
}

void AppendRegisterAdd(gimple_seq* seq, int loop, tree counters,
                       uint64_t index, tree delta) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  tree& local = g_registers.local[{loop, index}];
  if (local == NULL_TREE) local = NewRegisterLocal(u64);
  tree t1 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
  gimple_seq_add_stmt(seq, gimple_build_assign(t1, local));
  tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
  gimple_seq_add_stmt(seq, gimple_build_assign(t2, PLUS_EXPR, t1, delta));
  gimple_seq_add_stmt(seq, gimple_build_assign(local, t2));
}

RegisterPair NewRegisterPair(
    int loop, std::function<void(gimple_seq*, tree, tree)> flush) {
  RegisterPair p;
  p.sum = NewRegisterLocal(long_long_unsigned_type_node);
  p.cnt = NewRegisterLocal(long_long_unsigned_type_node);
  g_registers.pairs.push_back({loop, p, std::move(flush)});
  return p;
}

void EndLoopRegisters(tree counters) {
  gcc_assert(g_registers.fn == cfun);
  if (g_registers.local.empty() && g_registers.pairs.empty()) return;
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  gimple_seq init = NULL;
  auto zero = [&](gimple_seq* seq, tree local) {
    gimple_seq_add_stmt(seq, gimple_build_assign(
                                 local, build_int_cst(TREE_TYPE(local), 0)));
  };
  for (const auto& [key, local] : g_registers.local) {
    zero(&init, local);
    for (edge e : g_registers.loops.exits.at(key.first)) {
      gimple_seq seq = NULL;
      tree ref = build4(ARRAY_REF, u64, counters,
                        build_int_cst(integer_type_node, key.second),
                        NULL_TREE, NULL_TREE);
      tree v = make_temp_ssa_name(u64, NULL, "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(v, local));
      AppendCounterAdd(&seq, ref, v, /*atomic=*/false);
      zero(&seq, local);
      gsi_insert_seq_on_edge(e, seq);
    }
  }
  for (const auto& pair : g_registers.pairs) {
    zero(&init, pair.locals.sum);
    zero(&init, pair.locals.cnt);
    for (edge e : g_registers.loops.exits.at(pair.loop)) {
      gimple_seq seq = NULL;
      tree sum = make_temp_ssa_name(TREE_TYPE(pair.locals.sum), NULL,
                                    "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(sum, pair.locals.sum));
      tree cnt = make_temp_ssa_name(TREE_TYPE(pair.locals.cnt), NULL,
                                    "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(cnt, pair.locals.cnt));
      pair.flush(&seq, sum, cnt);
      zero(&seq, pair.locals.sum);
      zero(&seq, pair.locals.cnt);
      gsi_insert_seq_on_edge(e, seq);
    }
  }
  gsi_insert_seq_on_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun)),
                         init);
  g_registers.local.clear();
  g_registers.pairs.clear();
}

// Appends `ref += delta` to seq: a load, an add and a store, or with
// update=atomic one relaxed __atomic_fetch_add_8.  ref is an element of a
// counter array (constant or SSA index).  In a thread-mode function
// (BeginThreadCounters) an element of the TU's array is redirected to the
// thread's copy and added to plainly: only its thread writes it.
void AppendCounterAdd(gimple_seq* seq, tree ref, tree delta, bool atomic,
                      bool in_loop) {
  tree u64 = TREE_TYPE(ref);
  if (g_thread.active && TREE_CODE(ref) == ARRAY_REF &&
      TREE_OPERAND(ref, 0) == g_thread.counters) {
    // The thread's copy: BLRS_tc = __ballarus_tc; (*BLRS_tc)[index], a
    // plain add.  The pointer is loaded here rather than once per
    // activation: GCC merges the loads between calls (a counter, unsigned
    // long long, cannot alias the pointer under strict aliasing) and
    // reloads after a call instead of keeping it in a callee-saved
    // register across it.
    tree t = make_temp_ssa_name(TREE_TYPE(g_thread.tc), NULL, "BLRS_tc");
    gimple_seq_add_stmt(seq, gimple_build_assign(t, g_thread.tc));
    tree copy = build2(MEM_REF, TREE_TYPE(g_thread.counters), t,
                       build_int_cst(TREE_TYPE(t), 0));
    ref = build4(ARRAY_REF, u64, copy, TREE_OPERAND(ref, 1), NULL_TREE,
                 NULL_TREE);
    g_thread.used = true;
    atomic = false;
  }
  if (atomic) {
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
    return;
  }
  tree t1 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t1, ref));
  tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t2, PLUS_EXPR, t1, delta));
  gimple_seq_add_stmt(seq, gimple_build_assign(unshare_expr(ref), t2));
  if (in_loop && g_options.loop_barrier) {
    // asm ("" : "=m" (ref) : "m" (ref)): not volatile, no clobbers.
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
}

void EmitEdgeCounters(const EdgeCounters& work, ballarus::Function* fn,
                      tree counters, bool atomic) {
  for (const auto& ec : work.counted)
    QueueIncrement(ec.first, counters, ec.second, atomic);
  for (size_t i = 0; i < work.counted.size(); ++i) {
    edge e = work.counted[i].first;
    int src = e->src->index, dst = e->dest->index;
    // Where gimple_find_edge_insert_loc will put the code, for the dump.
    const char* where =
        (single_pred_p(e->dest) && gimple_seq_empty_p(phi_nodes(e->dest)) &&
         e->dest != EXIT_BLOCK_PTR_FOR_FN(cfun))
            ? "in target block"
            : "in source block";
    basic_block new_bb = NULL;
    gsi_commit_one_edge_insert(e, &new_bb);
    ballarus::Edge& me = fn->edges[work.counted_model_edge[i]];
    if (new_bb) {
      me.flags |= ballarus::kEdgeSplit;
      where = "edge split";
    }
    if (dump_file)
      fprintf(dump_file, "  edge %d->%d counter #%llu (%s)\n", src, dst,
              (unsigned long long)work.counted[i].second, where);
  }
}

}  // namespace ballarus::plugin
