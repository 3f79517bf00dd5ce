// thread_counters.cc — update=thread: per-thread counters (docs/DESIGN.md
// has the measurements behind them).  A counter update is the same plain
// add as update=single, into the running thread's own copy of the TU's
// counters.  Each TU gets a thread-local pointer to its counters, __ballarus_tc, which starts out pointing at the shared
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
// In x86-64 code for executables the check reads the runtime's
// thread-local pointer to the thread's copy instead, `cmpq $0,
// %fs:__ballarus_tc_mine@tpoff` (no address of the array to form), and the
// call is an asm that keeps every register (runtime/keep_regs.h), after
// which the function reloads its pointer.
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
//
// update=tls, in code for executables: the TU's counters
// themselves are thread-local, static __thread __ballarus_tls_ctrs[N] in
// static TLS, and a count is `addq $1, %fs:__ballarus_tls_ctrs@tpoff+56`,
// one instruction like update=single's, no pointer to load.  The pointer
// and its check stay, as the "registered?" test; the second table,
// BALLARUS_TLS_TABLE_SECTION, {&__ballarus_counters, DTPOFF of the array,
// N}, lets the runtime fold the array.  Not the default: glibc gives every
// thread the executable's whole static TLS at creation, cleared, out of the
// thread's stack size (a thread whose stack is smaller fails to start).
//
// Through %gs (tune-thread-gs, on by default), in x86-64 code for
// executables (elsewhere update=thread as above): the counters stay in the
// shared section, and a count is update=single's load, add and store
// through GCC's %gs address space (__seg_gs), `addq $1,
// %gs:__ballarus_counters+56(%rip)`.  The runtime
// sets a registered thread's %gs base to its copy's address minus the
// section's start, so the same instruction adds into the thread's copy;
// with base 0 (a thread not yet registered, or the thread that owns the
// shared counters) it adds into the shared array, as the pointer does.
// Being ordinary memory accesses, GCC optimises these adds as it does
// update=single's (inlining, scheduling), but for an empty asm after each
// (counter_emit.cc: GCC 12's SLP vectoriser loses the %gs of a vector add's
// load), and loops take loop registers as under update=single, each flush
// one add.  Path mode keeps its pointer register (path_emit.cc),
// a pointer into the shared array converted to the %gs address space where
// it counts.  The pointer __ballarus_tc, its check and the table stay
// (registration points the pointer and sets %gs), and the TU lists its
// counters in BALLARUS_GS_SECTION, which tells the module's runtime to set
// %gs (runtime/thread_gs.c).

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ballarus_format.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/gimple_build.h"
#include "plugin/options.h"
#include "plugin/thread_counters.h"

namespace ballarus::plugin {

namespace {

// update=thread: the TU's declarations, and the function being
// instrumented.
struct ThreadCounters {
  tree counters = NULL_TREE;     // the TU's counter array
  tree tc = NULL_TREE;           // static __thread uint64_t (*__ballarus_tc)[N]
  tree register_fn = NULL_TREE;  // __ballarus_tc_register
  tree tls = NULL_TREE;  // static TLS: static __thread uint64_t [N], or none
  bool gs = false;       // tune-thread-gs: counts through %gs
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

// Puts the TU's counter array into the section of all thread-mode arrays
// of a module, so that a thread's copy of them is one mapping.  GCC would
// give a named section PROGBITS (file space for the zeros); declaring it
// BSS first, with SECTION_OVERRIDE, makes get_named_section return this
// one for the array (varasm.cc get_section), emitted as @nobits.
void MoveToThreadSection(tree counters) {
  // The pointer's initial value takes the array's address.
  DECL_NONALIASED(counters) = 0;
  DeclareThreadSection();
  set_decl_section_name(counters, BALLARUS_THREAD_SECTION);
}

// static __thread uint64_t (*__ballarus_tc)[N] = &__ballarus_counters;
tree DefineThreadPointer(tree counters) {
  tree tc = StaticArtificialVar("__ballarus_tc",
                                build_pointer_type(TREE_TYPE(counters)));
  // The runtime writes it: it must be neither found read-only (and folded
  // to its initial value: it is addressable) nor dropped.
  DECL_PRESERVE_P(tc) = 1;
  DECL_INITIAL(tc) = build_fold_addr_expr(counters);
  set_decl_tls_model(tc, decl_default_tls_model(tc));
  varpool_node::finalize_decl(tc);
  if (flag_shlib) UseTlsDescriptors();
  return tc;
}

// static __thread uint64_t __ballarus_tls_ctrs[N]; (zero: .tbss), in
// static TLS: local-exec in code for executables.
tree DefineThreadArray(tree counters) {
  tree tls = StaticArtificialVar("__ballarus_tls_ctrs", TREE_TYPE(counters));
  // Only the runtime reads it: its stores must not be found dead (it is
  // addressable) nor the array dropped.
  DECL_PRESERVE_P(tls) = 1;
  set_decl_tls_model(tls, decl_default_tls_model(tls));
  varpool_node::finalize_decl(tls);
  return tls;
}

// Top-level asm adding `entry` to section `section`.
void AddTableEntry(const char* section, const std::string& entry) {
  std::string table = std::string("\t.pushsection\t") + section +
                      ",\"aw\"\n\t.balign\t8\n" + entry + "\t.popsection";
  symtab->finalize_toplevel_asm(
      build_string(table.size(), table.c_str()));
}

const char* AsmName(tree decl) {
  return IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(decl));
}

// static void *__ballarus_gs_tu = &counters, in section
// BALLARUS_GS_SECTION: the TU's entry in the module's list of arrays
// counted through %gs, a variable (not asm), so that LTO renames the
// array's symbol in it too.
void DefineGsEntry(tree counters) {
  tree entry = StaticArtificialVar("__ballarus_gs_tu", ptr_type_node);
  DECL_PRESERVE_P(entry) = 1;
  SET_DECL_ALIGN(entry, 64);
  DECL_USER_ALIGN(entry) = 1;
  DECL_INITIAL(entry) =
      build_fold_addr_expr_with_type(counters, ptr_type_node);
  set_decl_section_name(entry, BALLARUS_GS_SECTION);
  varpool_node::finalize_decl(entry);
}

// The TU's entry in the module's table of thread pointers (not under
// -flto: its DTPOFF can only be spelled in asm, which names symbols LTO
// renames; there the TU counts through %gs and registers through the %gs
// list), its entry in the list of arrays counted through %gs, and with
// static TLS its entry in the table of thread-local arrays.
void AddThreadTableEntries(tree counters, tree tc, tree tls, bool gs) {
  if (!flag_generate_lto)
    AddTableEntry(BALLARUS_TC_TABLE_SECTION,
                  std::string("\t.quad\t") + AsmName(counters) +
                      "\n\t.quad\t" + AsmName(tc) + "@dtpoff\n");
  if (gs) DefineGsEntry(counters);
  if (tls == NULL_TREE) return;
  unsigned HOST_WIDE_INT words =
      tree_to_uhwi(TYPE_SIZE_UNIT(TREE_TYPE(counters))) / 8;
  AddTableEntry(BALLARUS_TLS_TABLE_SECTION,
                std::string("\t.quad\t") + AsmName(counters) +
                    "\n\t.quad\t" + AsmName(tls) + "@dtpoff\n\t.quad\t" +
                    std::to_string(words) + "\n");
}

// Splits cfun's entry edge into ENTRY -> cond -> slow -> (the old first
// block) and cond -> old first block, slow very unlikely; returns cond and
// slow.
std::pair<basic_block, basic_block> SplitEntryForCheck() {
  basic_block cond_bb =
      split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun)));
  basic_block slow_bb = Diamond(single_succ_edge(cond_bb),
                                profile_probability::very_unlikely());
  return {cond_bb, slow_bb};
}

// Whether the registration is the asm call of the runtime's trampoline
// (runtime/keep_regs.h) that keeps every register but rax: x86-64 code for
// executables, where the thread pointer is local-exec; not under -flto
// (the asm names the TU's symbols, which LTO renames).
bool RegisterKeepsRegisters() {
  return TARGET_LP64 && !flag_shlib && !flag_generate_lto;
}

// Whether the registration check reads the runtime's thread-local pointer
// to the thread's copy: x86-64 code for executables.
bool CheckReadsRuntimeCopy() { return TARGET_LP64 && !flag_shlib; }

// extern __thread void *__ballarus_tc_mine (hidden, local-exec): the
// runtime's pointer to the thread's copy, NULL until it registers.
tree RuntimeCopyDecl() {
  static tree decl = NULL_TREE;
  if (decl == NULL_TREE)
    decl = ExternThreadLocal("__ballarus_tc_mine", ptr_type_node,
                             VISIBILITY_HIDDEN, TLS_MODEL_LOCAL_EXEC);
  return decl;
}

// if (var == unregistered) goto slow: the end of the check's block.
void InsertUnregisteredTest(gimple_stmt_iterator* gsi, tree var,
                            tree unregistered) {
  tree v = make_temp_ssa_name(TREE_TYPE(var), NULL, "BLRS_tc");
  gsi_insert_after(gsi, gimple_build_assign(v, var), GSI_NEW_STMT);
  gsi_insert_after(gsi,
                   gimple_build_cond(EQ_EXPR, v,
                                     fold_convert(TREE_TYPE(var), unregistered),
                                     NULL_TREE, NULL_TREE),
                   GSI_NEW_STMT);
}

// __ballarus_tc_register(&__ballarus_counters, &__ballarus_tc): a call.
void InsertRegisterCall(gimple_stmt_iterator* gsi) {
  // &__ballarus_tc is per thread, not a GIMPLE invariant: computed apart.
  tree tc_addr = make_temp_ssa_name(ptr_type_node, NULL, "BLRS_tc");
  gsi_insert_after(
      gsi,
      gimple_build_assign(
          tc_addr, build_fold_addr_expr_with_type(g_thread.tc, ptr_type_node)),
      GSI_NEW_STMT);
  gsi_insert_after(
      gsi,
      gimple_build_call(
          g_thread.register_fn, 2,
          build_fold_addr_expr_with_type(g_thread.counters, ptr_type_node),
          tc_addr),
      GSI_NEW_STMT);
}

// The same registration as an asm that steps over the red zone, pushes
// the two addresses through rax and calls __ballarus_tc_register_rs, which
// pops them; the registration points __ballarus_tc at the thread's copy
// (or leaves it at the shared array), so the caller reloads it.  A rare
// path then takes no register of the function: without it, the call makes
// a small leaf function keep its arguments in saved registers.
void InsertRegisterKeepingRegisters(gimple_stmt_iterator* gsi) {
  const std::string text =
      std::string("leaq -128(%%rsp), %%rsp\n\tmovq %%fs:0, %%rax") +
      "\n\tleaq " + AsmName(g_thread.tc) + "@tpoff(%%rax), %%rax" +
      "\n\tpushq %%rax\n\tleaq " + AsmName(g_thread.counters) +
      "(%%rip), %%rax\n\tpushq %%rax" +
      "\n\tcall __ballarus_tc_register_rs\n\tleaq 128(%%rsp), %%rsp";
  gsi_insert_after(gsi, VolatileAsm(text, NULL, {"rax", "memory", "cc"}),
                   GSI_NEW_STMT);
}

}  // namespace

void PrepareThreadCounters(tree counters) {
  g_thread.counters = counters;
  MoveToThreadSection(counters);
  g_thread.tc = DefineThreadPointer(counters);
  // The add is x86-64 asm; code for shared libraries keeps the pointer.
  const bool exe64 = !flag_shlib && TARGET_64BIT;
  g_thread.tls = g_options.update == Update::kTls && exe64
                     ? DefineThreadArray(counters)
                     : NULL_TREE;
  g_thread.gs = ThreadCountsThroughGs();
  AddThreadTableEntries(counters, g_thread.tc, g_thread.tls, g_thread.gs);

  tree fntype = build_function_type_list(ptr_type_node, ptr_type_node,
                                         ptr_type_node, NULL_TREE);
  tree fn = build_fn_decl("__ballarus_tc_register", fntype);
  MakeRuntimeDecl(fn);
  TREE_NOTHROW(fn) = 1;
  g_thread.register_fn = fn;
  if (dump_file)
    fprintf(dump_file,
            "ballarus: per-thread counters: array in section %s, thread "
            "pointer __ballarus_tc (%s), table entry in %s%s\n",
            BALLARUS_THREAD_SECTION,
            flag_shlib ? "TLS descriptors" : "GCC's TLS model",
            BALLARUS_TC_TABLE_SECTION,
            g_thread.tls != NULL_TREE
                ? ", counted in static TLS __ballarus_tls_ctrs"
            : g_thread.gs ? ", counted through %gs (tune-thread-gs)"
                          : "");
}

void BeginThreadCounters() {
  gcc_assert(g_thread.counters != NULL_TREE && !g_thread.active);
  g_thread.active = true;
  g_thread.used = false;
}

bool ThreadCountersActive() { return g_thread.active; }

void DeclareThreadSection() {
  get_section(BALLARUS_THREAD_SECTION,
              SECTION_WRITE | SECTION_BSS | SECTION_OVERRIDE, NULL);
}

bool ThreadCountersThroughGs() { return g_thread.active && g_thread.gs; }

bool ThreadCountsThroughGs() {
  // x86-64 LP64 code for executables (x32 keeps the pointer: its 32-bit
  // addresses are untested with a %gs base).
  return g_options.thread_gs && g_options.update != Update::kTls &&
         !flag_shlib && TARGET_64BIT && TARGET_LP64;
}

void EndThreadCounters() {
  g_thread.active = false;
  std::string why;
  if (!g_thread.used) return;
  if (!ThreadEntryCheck(&why)) {
    if (dump_file)
      fprintf(dump_file,
              "  per-thread counters: no registration check (no entry from "
              "uninstrumented code)\n");
    return;
  }
  const auto [cond_bb, slow_bb] = SplitEntryForCheck();

  gimple_stmt_iterator gsi = gsi_start_bb(cond_bb);
  if (CheckReadsRuntimeCopy()) {
    InsertUnregisteredTest(&gsi, RuntimeCopyDecl(), null_pointer_node);
    gsi = gsi_start_bb(slow_bb);
    if (RegisterKeepsRegisters())
      InsertRegisterKeepingRegisters(&gsi);
    else
      InsertRegisterCall(&gsi);
  } else {
    InsertUnregisteredTest(&gsi, g_thread.tc,
                           build_fold_addr_expr(g_thread.counters));
    gsi = gsi_start_bb(slow_bb);
    InsertRegisterCall(&gsi);
  }
  if (dump_file)
    fprintf(dump_file,
            "  per-thread counters: registration check (%s) in new entry "
            "blocks %d, %d\n",
            why.c_str(), cond_bb->index, slow_bb->index);
}

namespace {

// asm operand list entry: constraint and value.
void PushOperand(vec<tree, va_gc>** ops, const char* constraint, tree value) {
  vec_safe_push(*ops, build_tree_list(
                          build_tree_list(NULL_TREE,
                                          build_string(strlen(constraint) + 1,
                                                       constraint)),
                          value));
}

// The template of a static TLS add at a constant index, or (index < 0) at
// the index in operand %1; the delta is %0.
std::string SegmentAddText(HOST_WIDE_INT index) {
  std::string text = std::string("addq %0, %%fs:") + AsmName(g_thread.tls) +
                     "@tpoff";
  return index < 0 ? text + "(,%1,8)" : text + "+" + std::to_string(8 * index);
}

// asm volatile (TEXT : "er" (delta)[, "r" (index)] : "cc").  Spelled in
// asm: an ARRAY_REF of the TLS array makes GCC put sym@tpoff in a
// register, which RTL PRE and loop invariant motion then keep live through
// loops (a callee-saved register, pushed and popped per call).  Volatile:
// nothing uses its result, and only the runtime reads the counters it adds
// to.
gasm* BuildSegmentAdd(const std::string& text, tree delta, tree index) {
  vec<tree, va_gc>* inputs = NULL;
  PushOperand(&inputs, "er", delta);
  if (index != NULL_TREE) PushOperand(&inputs, "r", index);
  return VolatileAsm(text, inputs, {"cc"});
}

// type qualified with GCC's %gs address space.
tree InGs(tree type) {
  return build_qualified_type(
      type, TYPE_QUALS(type) | ENCODE_QUAL_ADDR_SPACE(ADDR_SPACE_SEG_GS));
}

// The counter at byte offset off of the TU's array, seen through %gs, as a
// reference of type ref_type (a %gs-qualified u64) whose address is the
// array's, typed as a pointer into %gs: a constant address, which GCC puts
// in the instruction (`%gs:counters+off(%rip)`).  Through an SSA pointer
// GCC would keep such addresses in registers (RTL invariant motion, CSE).
tree GsCounterRef(tree ref_type, HOST_WIDE_INT off) {
  tree base = build1(ADDR_EXPR,
                     build_pointer_type(InGs(TREE_TYPE(g_thread.counters))),
                     g_thread.counters);
  return build2(MEM_REF, ref_type, base,
                build_int_cst(build_pointer_type(ref_type), off));
}

// The byte offset in the TU's counters of the invariant address addr
// (&counters[k], &MEM[&counters + off]), or -1.
HOST_WIDE_INT CounterOffset(tree addr) {
  if (TREE_CODE(addr) != ADDR_EXPR) return -1;
  poly_int64 off;
  tree base = get_addr_base_and_unit_offset(TREE_OPERAND(addr, 0), &off);
  if (base == NULL_TREE || base != g_thread.counters || !off.is_constant())
    return -1;
  HOST_WIDE_INT o = off.to_constant();
  return o >= 0 && o % 8 == 0 ? o : -1;
}

// *p, p a %gs pointer converted from a counter's constant address (a path
// pointer register GCC's constant propagation made a constant), becomes
// that counter's reference with the address in it.  Returns the
// conversion's result, or NULL_TREE.
tree FoldGsPointer(tree* ref) {
  if (TREE_CODE(*ref) != MEM_REF ||
      TREE_CODE(TREE_OPERAND(*ref, 0)) != SSA_NAME)
    return NULL_TREE;
  tree p = TREE_OPERAND(*ref, 0);
  gassign* conv = dyn_cast<gassign*>(SSA_NAME_DEF_STMT(p));
  if (conv == nullptr ||
      gimple_assign_rhs_code(conv) != ADDR_SPACE_CONVERT_EXPR)
    return NULL_TREE;
  const HOST_WIDE_INT off = CounterOffset(gimple_assign_rhs1(conv));
  if (off < 0 || !tree_fits_shwi_p(TREE_OPERAND(*ref, 1))) return NULL_TREE;
  *ref = GsCounterRef(TREE_TYPE(*ref),
                      off + tree_to_shwi(TREE_OPERAND(*ref, 1)));
  return p;
}

// Gives a static TLS add at a constant register index that constant in
// its address.
void FoldTlsAdd(gimple_stmt_iterator* gsi, const std::string& indexed) {
  gasm* a = dyn_cast<gasm*>(gsi_stmt(*gsi));
  if (a == nullptr || gimple_asm_ninputs(a) != 2 ||
      indexed != gimple_asm_string(a))
    return;
  tree index = TREE_VALUE(gimple_asm_input_op(a, 1));
  if (!tree_fits_shwi_p(index) || tree_to_shwi(index) < 0) return;
  gsi_replace(gsi,
              BuildSegmentAdd(SegmentAddText(tree_to_shwi(index)),
                              TREE_VALUE(gimple_asm_input_op(a, 0)),
                              NULL_TREE),
              false);
}

// Folds the %gs pointers of the load or store at *gsi; each conversion
// left without uses goes to *dead.
void FoldGsAccess(gimple_stmt_iterator* gsi, std::vector<tree>* dead) {
  gassign* s = dyn_cast<gassign*>(gsi_stmt(*gsi));
  if (s == nullptr || !gimple_assign_single_p(s)) return;
  bool changed = false;
  for (tree* ref : {gimple_assign_lhs_ptr(s), gimple_assign_rhs1_ptr(s)})
    if (tree p = FoldGsPointer(ref)) {
      dead->push_back(p);
      changed = true;
    }
  if (changed) update_stmt(s);
}

// Removes the conversions in dead that no statement uses any more.
void RemoveUnusedConversions(const std::vector<tree>& dead) {
  for (tree p : dead) {
    if (SSA_NAME_IN_FREE_LIST(p) || !has_zero_uses(p)) continue;
    gimple_stmt_iterator gsi = gsi_for_stmt(SSA_NAME_DEF_STMT(p));
    gsi_remove(&gsi, true);
    release_ssa_name(p);
  }
}

// Late in the GIMPLE pipeline (after "optimized"), where GCC's constant
// propagation has made some path counts' registers constants: a static
// TLS add at a constant index gets the constant in its address,
// `%fs:sym@tpoff+8i`, and a %gs count through a constant pointer gets the
// constant address, `%gs:sym+8i(%rip)`, instead of a register loaded
// with it.
class SegmentFoldPass : public gimple_opt_pass {
 public:
  explicit SegmentFoldPass(gcc::context* ctxt)
      : gimple_opt_pass(kData, ctxt) {}
  bool gate(function*) override {
    return g_thread.tls != NULL_TREE || g_thread.gs;
  }
  unsigned int execute(function* fn) override {
    const std::string indexed =
        g_thread.tls != NULL_TREE ? SegmentAddText(-1) : std::string();
    std::vector<tree> dead;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fn) {
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
           gsi_next(&gsi)) {
        if (g_thread.tls != NULL_TREE) FoldTlsAdd(&gsi, indexed);
        if (g_thread.gs) FoldGsAccess(&gsi, &dead);
      }
    }
    RemoveUnusedConversions(dead);
    return 0;
  }

 private:
  static constexpr pass_data kData = {
      GIMPLE_PASS, "ballarus_tls", OPTGROUP_NONE, TV_NONE, PROP_cfg, 0, 0,
      0,           0};
};

}  // namespace

opt_pass* MakeSegmentFoldPass(gcc::context* ctxt) {
  return new SegmentFoldPass(ctxt);
}

bool AppendSegmentAdd(gimple_seq* seq, tree ref, tree delta) {
  if (!g_thread.active || g_thread.tls == NULL_TREE ||
      TREE_CODE(ref) != ARRAY_REF || TREE_OPERAND(ref, 0) != g_thread.counters)
    return false;
  g_thread.used = true;
  tree index = TREE_OPERAND(ref, 1);
  delta = fold_convert(TREE_TYPE(ref), delta);
  if (tree_fits_shwi_p(index) && tree_to_shwi(index) >= 0) {
    gimple_seq_add_stmt(
        seq, BuildSegmentAdd(SegmentAddText(tree_to_shwi(index)), delta,
                             NULL_TREE));
    return true;
  }
  tree i64 = make_temp_ssa_name(long_integer_type_node, NULL, "BLRS_i");
  gimple_seq_add_stmt(seq, gimple_build_assign(i64, NOP_EXPR, index));
  gimple_seq_add_stmt(seq, BuildSegmentAdd(SegmentAddText(-1), delta, i64));
  return true;
}

bool RedirectThroughGs(gimple_seq* seq, tree* ref) {
  const bool element = TREE_CODE(*ref) == ARRAY_REF &&
                       TREE_OPERAND(*ref, 0) == g_thread.counters;
  const bool pointed = TREE_CODE(*ref) == MEM_REF &&
                       TREE_CODE(TREE_OPERAND(*ref, 0)) == SSA_NAME &&
                       integer_zerop(TREE_OPERAND(*ref, 1));
  if (!g_thread.active || !g_thread.gs || !(element || pointed)) return false;
  g_thread.used = true;
  tree u64 = TREE_TYPE(*ref);
  tree gs_ptr = build_pointer_type(InGs(u64));
  tree index = element ? TREE_OPERAND(*ref, 1) : NULL_TREE;
  if (index != NULL_TREE && tree_fits_uhwi_p(index)) {
    *ref = GsCounterRef(InGs(u64), 8 * tree_to_uhwi(index));
    return true;
  }
  tree addr = pointed ? TREE_OPERAND(*ref, 0) : NULL_TREE;
  if (addr == NULL_TREE) {
    addr = make_temp_ssa_name(build_pointer_type(u64), NULL, "BLRS_a");
    gimple_seq_add_stmt(
        seq, gimple_build_assign(addr, build_fold_addr_expr(*ref)));
  }
  tree p = make_temp_ssa_name(gs_ptr, NULL, "BLRS_gs");
  gimple_seq_add_stmt(
      seq, gimple_build_assign(p, ADDR_SPACE_CONVERT_EXPR, addr));
  *ref = build_simple_mem_ref(p);
  return true;
}

bool RedirectToThreadCopy(gimple_seq* seq, tree* ref) {
  if (!g_thread.active || TREE_CODE(*ref) != ARRAY_REF ||
      TREE_OPERAND(*ref, 0) != g_thread.counters)
    return false;
  g_thread.used = true;
  tree u64 = TREE_TYPE(*ref);
  tree t = make_temp_ssa_name(TREE_TYPE(g_thread.tc), NULL, "BLRS_tc");
  gimple_seq_add_stmt(seq, gimple_build_assign(t, g_thread.tc));
  tree copy = build2(MEM_REF, TREE_TYPE(g_thread.counters), t,
                     build_int_cst(TREE_TYPE(t), 0));
  *ref = build4(ARRAY_REF, u64, copy, TREE_OPERAND(*ref, 1), NULL_TREE,
                NULL_TREE);
  return true;
}

}  // namespace ballarus::plugin
