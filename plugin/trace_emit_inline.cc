// trace_emit_inline.cc — the trace hooks inlined (trace_emit.h
// InlineTraceHooks): the witness, the enter and the leave as GIMPLE that
// reads and writes the runtime's thread state (runtime/trace_buffer.h).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/trace_events.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/gimple_build.h"
#include "plugin/trace_emit.h"
#include "plugin/trace_emit_internal.h"

namespace ballarus::plugin {

namespace {

// The TLS model of the runtime's thread state (runtime/trace_buffer.h):
// initial-exec in code for shared libraries; local-exec in code for
// executables, a %fs-relative access with no register holding the
// variable's offset.  The executable links its own copy of the runtime
// (trace_buffer.h), which every module binds to when it exports it, and the
// linker turns an executable's initial-exec accesses to its own definition
// into local-exec ones anyway.
tls_model RuntimeTlsModel() {
  return flag_shlib ? TLS_MODEL_INITIAL_EXEC : TLS_MODEL_LOCAL_EXEC;
}

// The runtime's thread state, runtime/trace_buffer.h: the types are built
// field for field as the header declares them, and GCC lays them out for
// the target as it lays out the header's structs.
//   struct ballarus_trace_frame { uint32_t tag_fn, stamp, depth, site; };
//   struct ballarus_trace_stack { uint32_t depth, site, cap;
//                                 ballarus_trace_frame *frames; };
//   extern __thread ballarus_trace_stack __ballarus_trace_stack2
//       (RuntimeTlsModel, default visibility: one per process).
struct TraceStackDecls {
  tree stack = NULL_TREE;  // the TLS variable
  tree depth = NULL_TREE, site = NULL_TREE, cap = NULL_TREE,
       frames = NULL_TREE;   // its fields
  tree frame = NULL_TREE;   // ballarus_trace_frame
};

// The struct `name` of fields `names` in order, each of type unsigned but
// the last (of `last_type`); their FIELD_DECLs in *fields, in order.
tree BuildStruct(const char* name, const std::vector<const char*>& names,
                 tree last_type, std::vector<tree>* fields) {
  tree type = make_node(RECORD_TYPE);
  tree chain = NULL_TREE;  // finish_builtin_struct takes them reversed
  for (size_t k = 0; k < names.size(); ++k) {
    tree f = build_decl(BUILTINS_LOCATION, FIELD_DECL,
                        get_identifier(names[k]),
                        k + 1 == names.size() ? last_type : unsigned_type_node);
    DECL_CHAIN(f) = chain;
    chain = f;
    fields->push_back(f);
  }
  finish_builtin_struct(type, name, chain, NULL_TREE);
  return type;
}

const TraceStackDecls& TraceStack() {
  static TraceStackDecls d;
  if (d.stack != NULL_TREE) return d;
  std::vector<tree> ff, sf;
  d.frame = BuildStruct("ballarus_trace_frame",
                        {"tag_fn", "stamp", "depth", "site"},
                        unsigned_type_node, &ff);
  tree type = BuildStruct("ballarus_trace_stack",
                          {"depth", "site", "cap", "frames"},
                          build_pointer_type(d.frame), &sf);
  d.depth = sf[0];
  d.site = sf[1];
  d.cap = sf[2];
  d.frames = sf[3];
  d.stack = ExternThreadLocal("__ballarus_trace_stack2", type,
                              VISIBILITY_DEFAULT, RuntimeTlsModel());
  return d;
}

// __ballarus_trace_stack2.FIELD; a store through it is volatile
// (SiteStore says why).
tree StackField(tree field, bool store) {
  tree ref = build3(COMPONENT_REF, TREE_TYPE(field), TraceStack().stack,
                    field, NULL_TREE);
  if (store) TREE_THIS_VOLATILE(ref) = 1;
  return ref;
}

}  // namespace

// In code for executables an asm, `movl $block, %fs:stack@tpoff+4`: a
// GIMPLE store to the field makes GCC put the variable's offset in a
// register, which RTL PRE and loop invariant motion keep live through the
// function (a callee-saved register, pushed and popped per call).  The
// memory clobber keeps it before the call, which reads and writes memory
// anyway.  Elsewhere a volatile store.
gimple* SiteStore(uint32_t block) {
  const TraceStackDecls& st = TraceStack();
  if (RuntimeTlsModel() != TLS_MODEL_LOCAL_EXEC || !TARGET_LP64)
    return gimple_build_assign(StackField(st.site, true), U32(block));
  const std::string text =
      "movl $" + std::to_string(block) + ", %%fs:" +
      IDENTIFIER_POINTER(DECL_NAME(st.stack)) + "@tpoff+" +
      std::to_string(int_byte_position(st.site));
  return VolatileAsm(text, NULL, {"memory"});
}

// In code for executables an asm, `incl %fs:stack@tpoff`: the enter's
// depth + 1 in one instruction (the depth is still the one the enter read:
// nothing between writes it, and a signal handler's traced code leaves it
// as it found it).  Elsewhere a volatile store of dep + 1.
gimple* DepthIncrement(gimple_stmt_iterator* gsi, tree dep) {
  const TraceStackDecls& st = TraceStack();
  if (RuntimeTlsModel() != TLS_MODEL_LOCAL_EXEC || !TARGET_LP64 ||
      int_byte_position(st.depth) != 0) {
    tree u = unsigned_type_node;
    tree dep1 = make_temp_ssa_name(u, NULL, "BLRS_ed1");
    gsi_insert_after(gsi, gimple_build_assign(dep1, PLUS_EXPR, dep,
                                              build_one_cst(u)),
                     GSI_NEW_STMT);
    return gimple_build_assign(StackField(st.depth, true), dep1);
  }
  const std::string text = std::string("incl %%fs:") +
                           IDENTIFIER_POINTER(DECL_NAME(st.stack)) + "@tpoff";
  return VolatileAsm(text, NULL, {"memory", "cc"});
}

// x86-64 is little-endian: the depth, the stack's first field, is ds's low
// half.
gimple* DepthFrom(tree depth, tree ds) {
  static_assert(!BYTES_BIG_ENDIAN, "the depth is ds's low half");
  return gimple_build_assign(depth, NOP_EXPR, ds);
}

namespace {

// extern __thread uint32_t *__ballarus_trace_pos2 (RuntimeTlsModel)
// (trace_buffer.h).
tree TracePosDecl() {
  static tree decl = NULL_TREE;
  if (decl != NULL_TREE) return decl;
  // Default visibility: a program and its shared libraries share the
  // runtime's one position (a hidden reference would make the linker keep
  // a module's own copy).
  decl = ExternThreadLocal("__ballarus_trace_pos2",
                           build_pointer_type(unsigned_type_node),
                           VISIBILITY_DEFAULT, RuntimeTlsModel());
  return decl;
}

bool IsRuntimeCall(gimple* stmt, const char* name) {
  if (!is_gimple_call(stmt)) return false;
  tree fn = gimple_call_fndecl(stmt);
  return fn != NULL_TREE &&
         strcmp(IDENTIFIER_POINTER(DECL_NAME(fn)), name) == 0;
}

// cfun's calls to the runtime function `name`.
std::vector<gcall*> RuntimeCalls(const char* name) {
  std::vector<gcall*> calls;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi))
      if (IsRuntimeCall(gsi_stmt(gsi), name))
        calls.push_back(as_a<gcall*>(gsi_stmt(gsi)));
  }
  return calls;
}

// Removes `call`, the block's code after it going to a new block: returns
// that block (the join of the code that replaces the call).
basic_block RemoveSplitting(gcall* call) {
  basic_block join = split_block(gimple_bb(call), call)->dest;
  gimple_stmt_iterator gsi = gsi_for_stmt(call);
  unlink_stmt_vdef(call);
  gsi_remove(&gsi, true);
  return join;
}

tree Assign(gimple_stmt_iterator* gsi, tree lhs, tree_code code, tree a,
            tree b = NULL_TREE) {
  gsi_insert_after(gsi, gimple_build_assign(lhs, code, a, b), GSI_NEW_STMT);
  return lhs;
}

tree Temp(tree type, const char* name) {
  return make_temp_ssa_name(type, NULL, name);
}

// `pushq $v` for the 32-bit constant v (sign-extended: the trampoline
// reads the low half).
std::string PushImmediate(tree v) {
  const int32_t x = static_cast<int32_t>(TREE_INT_CST_LOW(v) & 0xffffffffu);
  return "\n\tpushq $" + std::to_string(x);
}

// A slow path of the inline hooks (the witness's: one argument; kEnter's:
// two), its arguments constants: on x86-64, an asm that steps over the red
// zone, pushes the arguments and calls the runtime's trampoline `target`,
// which pops them and keeps every register but rax
// (runtime/trace_regs.c), so that the rare slow path takes and clobbers no
// register in the function's eyes.  Elsewhere a call of `fallback`.
gimple* SlowPath(const char* target, tree fallback, tree arg0,
                 tree arg1 = NULL_TREE) {
  if (!TARGET_LP64 || TREE_CODE(arg0) != INTEGER_CST ||
      (arg1 != NULL_TREE && TREE_CODE(arg1) != INTEGER_CST))
    return arg1 == NULL_TREE ? gimple_build_call(fallback, 1, arg0)
                             : gimple_build_call(fallback, 2, arg0, arg1);
  std::string text = "leaq -128(%%rsp), %%rsp";
  if (arg1 != NULL_TREE) text += PushImmediate(arg1);
  text += PushImmediate(arg0) + "\n\tcall " + target +
          "\n\tleaq 128(%%rsp), %%rsp";
  return VolatileAsm(text, NULL, {"rax", "memory", "cc"});
}

// Replaces the call `__ballarus_trace_w(id)` by trace_buffer.h's
// ballarus_trace_witness: p = pos; if ((p & BALLARUS_TRACE_FULL_MASK) == 0)
// __ballarus_trace_slow(id) (very unlikely); else *p = id, pos = p + 1.
void InlineWitness(gcall* call, tree slow_fn) {
  tree id = gimple_call_arg(call, 0);
  basic_block bb = gimple_bb(call);
  basic_block join = RemoveSplitting(call);
  gimple_stmt_iterator gsi;
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
                                                     BALLARUS_TRACE_FULL_MASK)),
                   GSI_NEW_STMT);
  gsi_insert_after(&gsi,
                   gimple_build_cond(EQ_EXPR, t,
                                     build_int_cst(pointer_sized_int_node, 0),
                                     NULL_TREE, NULL_TREE),
                   GSI_NEW_STMT);
  basic_block slow =
      Diamond(single_succ_edge(bb), profile_probability::very_unlikely());
  basic_block fast = split_edge(find_edge(bb, join));
  gsi = gsi_start_bb(slow);
  gsi_insert_after(&gsi,
                   SlowPath("__ballarus_trace_slow_rs", slow_fn, id),
                   GSI_NEW_STMT);
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

// The stack's depth and site as one 8-byte word (they are adjacent:
// runtime/trace_hooks.c checks it), read or written (volatile) in place.
tree DepthSiteRef(bool store) {
  tree ref = build2(MEM_REF, uint64_type_node,
                    build_fold_addr_expr(TraceStack().stack),
                    build_int_cst(ptr_type_node, 0));
  if (store) TREE_THIS_VOLATILE(ref) = 1;
  return ref;
}

// Replaces the call `__ballarus_trace_pop_to(ds)` by the store of ds: one
// activation fewer (the depth its enter found) and the caller's site back
// (the site its enter found), what the runtime's __ballarus_trace_leave
// does (runtime/trace_hooks.c) when the stack is as the enter left it.
void InlineLeave(gcall* call) {
  gimple_stmt_iterator gsi = gsi_for_stmt(call);
  gsi_insert_before(
      &gsi, gimple_build_assign(DepthSiteRef(true), gimple_call_arg(call, 0)),
      GSI_SAME_STMT);
  unlink_stmt_vdef(call);
  gsi_remove(&gsi, true);
}

// *p's 32-bit word k.
tree PosWord(tree p, uint32_t k) {
  return build2(MEM_REF, unsigned_type_node, p,
                build_int_cst(TREE_TYPE(p), 4 * k));
}

// The 8-byte word at byte `offset` of `base`, aligned to 4 bytes only.
tree Word64At(tree base, uint32_t offset) {
  tree type = build_aligned_type(uint64_type_node, 32);
  return build2(MEM_REF, type, base, build_int_cst(ptr_type_node, offset));
}

// The field of *frame.
tree FrameField(tree frame, tree field) {
  const TraceStackDecls& st = TraceStack();
  return build3(COMPONENT_REF, unsigned_type_node,
                build2(MEM_REF, st.frame, frame,
                       build_int_cst(TREE_TYPE(st.frames), 0)),
                field, NULL_TREE);
}


// The enter's usual path at the start of `fast`: kEnter's words at p
// (words 0 and 1, then ds: the stack's depth and site), the position past
// them.
void EmitEnterEvent(basic_block fast, tree p, const tree* words, tree ds) {
  tree pos = TracePosDecl();
  gimple_stmt_iterator gsi = gsi_start_bb(fast);
  for (uint32_t k = 0; k < 2; ++k)
    gsi_insert_after(&gsi, gimple_build_assign(PosWord(p, k), words[k]),
                     GSI_NEW_STMT);
  gsi_insert_after(&gsi, gimple_build_assign(Word64At(p, 8), ds),
                   GSI_NEW_STMT);
  tree next = Assign(&gsi, Temp(TREE_TYPE(pos), "BLRS_en"), POINTER_PLUS_EXPR,
                     p, size_int(BALLARUS_TRACE_ENTER_WORDS * 4));
  gsi_insert_after(&gsi, gimple_build_assign(pos, next), GSI_NEW_STMT);
}

// stack.frames[dep & mask] = kEnter's words, after the event in `fast`
// (runtime/trace_buffer.h: no bound test; readers check the frame's
// depth).
void EmitEnterPush(basic_block fast, tree dep, const tree* words, tree ds) {
  const TraceStackDecls& st = TraceStack();
  gimple_stmt_iterator gsi = gsi_last_bb(fast);
  tree fptr = TREE_TYPE(st.frames);
  tree frames = Temp(fptr, "BLRS_ef");
  gsi_insert_after(&gsi,
                   gimple_build_assign(frames, StackField(st.frames, false)),
                   GSI_NEW_STMT);
  tree u = unsigned_type_node;
  tree slot = Assign(&gsi, Temp(u, "BLRS_ek"), BIT_AND_EXPR, dep,
                     U32(BALLARUS_TRACE_FRAME_MASK));
  tree off = Assign(&gsi, Temp(sizetype, "BLRS_eo"), NOP_EXPR, slot);
  off = Assign(&gsi, Temp(sizetype, "BLRS_eo"), MULT_EXPR, off,
               fold_convert(sizetype, TYPE_SIZE_UNIT(st.frame)));
  tree frame = Assign(&gsi, Temp(fptr, "BLRS_eq"), POINTER_PLUS_EXPR, frames,
                      off);
  tree field = TYPE_FIELDS(st.frame);
  for (uint32_t k = 0; k < 2; ++k, field = DECL_CHAIN(field))
    gsi_insert_after(&gsi,
                     gimple_build_assign(FrameField(frame, field), words[k]),
                     GSI_NEW_STMT);
  gsi_insert_after(&gsi, gimple_build_assign(Word64At(frame, 8), ds),
                   GSI_NEW_STMT);
}


// Replaces ds = __ballarus_trace_push(fn, stamp) by the runtime's usual
// path of __ballarus_trace_enter (runtime/trace_hooks.c), which stays for
// an event that would not fit in the chunk (ballarus_trace_room):
//   ds = {stack.depth, stack.site}; p = pos; dep = ds's depth;
//   if ((p & BALLARUS_TRACE_FULL_MASK) == 0) enter (fn, stamp);
//   else { p[0..3] = {tag | fn, stamp, ds}; pos = p + 4;
//          stack.frames[dep & mask] = the same 4 words;
//          stack.depth = dep + 1 (DepthIncrement); }
void InlineEnter(gcall* call, tree enter_fn) {
  tree u = unsigned_type_node, ds = gimple_call_lhs(call);
  tree fn = gimple_call_arg(call, 0), stamp = gimple_call_arg(call, 1);
  tree words[2] = {U32(BALLARUS_TRACE_EVENT_TAG | TREE_INT_CST_LOW(fn)),
                   stamp};
  basic_block bb = gimple_bb(call);
  basic_block join = RemoveSplitting(call);
  tree pos = TracePosDecl(), ptype = TREE_TYPE(pos);
  gimple_stmt_iterator gsi = gsi_last_bb(bb);
  gsi_insert_after(&gsi, gimple_build_assign(ds, DepthSiteRef(false)),
                   GSI_NEW_STMT);
  tree dep = Temp(u, "BLRS_edep");
  gsi_insert_after(&gsi, DepthFrom(dep, ds), GSI_NEW_STMT);
  tree p = Temp(ptype, "BLRS_ep");
  gsi_insert_after(&gsi, gimple_build_assign(p, pos), GSI_NEW_STMT);
  tree ui = pointer_sized_int_node;
  tree a = Assign(&gsi, Temp(ui, "BLRS_ea"), NOP_EXPR, p);
  // The witness's test: past the chunk's head, the 4 words fit (the last
  // 3 may go into the next chunk's head: runtime/trace_buffer.h).
  static_assert(BALLARUS_TRACE_ENTER_WORDS <= BALLARUS_TRACE_CHUNK_HEAD_WORDS,
                "kEnter ends at most 3 words past its chunk");
  a = Assign(&gsi, Temp(ui, "BLRS_ea"), BIT_AND_EXPR, a,
             build_int_cst(ui, BALLARUS_TRACE_FULL_MASK));
  gsi_insert_after(&gsi, gimple_build_cond(EQ_EXPR, a, build_int_cst(ui, 0),
                                           NULL_TREE, NULL_TREE),
                   GSI_NEW_STMT);
  basic_block slow =
      Diamond(single_succ_edge(bb), profile_probability::very_unlikely());
  basic_block fast = split_edge(find_edge(bb, join));
  gsi = gsi_start_bb(slow);
  gsi_insert_after(
      &gsi, SlowPath("__ballarus_trace_enter_rs", enter_fn, fn, stamp),
      GSI_NEW_STMT);

  EmitEnterEvent(fast, p, words, ds);
  EmitEnterPush(fast, dep, words, ds);
  gsi = gsi_last_bb(fast);
  gsi_insert_after(&gsi, DepthIncrement(&gsi, dep), GSI_NEW_STMT);
}

}  // namespace

void InlineTraceHooks() {
  std::vector<gcall*> witnesses = RuntimeCalls("__ballarus_trace_w");
  std::vector<gcall*> leaves = RuntimeCalls(kPopPlaceholder);
  std::vector<gcall*> enters = RuntimeCalls(kPushPlaceholder);
  if (witnesses.empty() && leaves.empty() && enters.empty()) return;
  free_dominance_info(CDI_DOMINATORS);
  free_dominance_info(CDI_POST_DOMINATORS);
  tree slow_fn = RuntimeFn("__ballarus_trace_slow", 1);
  for (gcall* call : witnesses) InlineWitness(call, slow_fn);
  for (gcall* call : leaves) InlineLeave(call);
  tree enter_fn = RuntimeFn("__ballarus_trace_enter", 2, unsigned_type_node);
  for (gcall* call : enters) InlineEnter(call, enter_fn);
}

}  // namespace ballarus::plugin
