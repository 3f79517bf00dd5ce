/* keep_regs.h — rare slow paths that x86-64 instrumented code reaches
   through an asm statement calling a trampoline, which preserves every
   register but rax (the flags excepted, as any asm may change them): the
   trace hooks' witness and kEnter slow paths (trace_regs.c), and
   update=thread's registration of a thread entering a TU
   (thread_counters.c).

   Why: a real call to the slow path, rare as it is, makes GCC treat every
   caller-saved register as clobbered in a function that otherwise calls
   nothing, so that a small leaf function saves and restores callee-saved
   registers at each of its calls to keep its values across the slow path
   it almost never takes.  The asm tells GCC that nothing but rax and
   memory changes.

   The instrumented code steps over its red zone and pushes the arguments,
   the first last, as words (immediates, or addresses through rax), so
   that no register of its own is taken for them:
     lea -128(%rsp), %rsp; push ARG1; push ARG0; call ENTRY;
     lea 128(%rsp), %rsp
   An entry (KEEP_REGS_ENTRY) puts its C function in rax, calls the common
   body (keep_regs.c) and returns popping the arguments.  The body saves
   the general registers the ABI lets a callee change and the vector and
   x87 state (xsave of every component the system enabled, or fxsave where
   there is no xsave), aligns the stack, calls the C function with the two
   words as its arguments and cancellation disabled (so that no thread is
   cancelled with the runtime's state half updated), and restores them.
   An entry's unwind
   information says where the caller's stack pointer was before the asm
   (128 bytes and the arguments above the entry's return address), so
   that debuggers, profilers and the unwinder see through a slow path to
   the instrumented function and its callers.  */
#ifndef BALLARUS_RUNTIME_KEEP_REGS_H_
#define BALLARUS_RUNTIME_KEEP_REGS_H_

#ifndef HIDDEN
#define HIDDEN __attribute__((visibility("hidden")))
#endif

#include <stdint.h>

/* An entry's C function: the two words pushed, as unsigned words (a
   32-bit argument is the low half of a sign-extended immediate).  */
typedef uint64_t keep_regs_fn(uint64_t arg0, uint64_t arg1);

/* Top-level asm of one entry: `name` calls the C function `target` (a
   hidden keep_regs_fn, which may ignore its second word) and
   pops its `n_args` (1 or 2) words of arguments.  Hidden: each module's
   instrumented code calls its own.  The unwind rule, DW_CFA_val_offset_sf
   spelled as bytes (clang's assembler has no .cfi_val_offset): the
   caller's rsp = CFA + 128 + 8 * n_args, the factored offset -(16 +
   n_args) for the data alignment -8, as one SLEB128 byte.  */
#define KEEP_REGS_ENTRY(name, target, n_args)                  \
  ".p2align 4\n"                                               \
  ".globl " name "\n"                                          \
  ".hidden " name "\n"                                         \
  ".type " name ", @function\n"                                \
  name ":\n"                                                   \
  "  .cfi_startproc\n"                                         \
  "  .cfi_escape 0x15, 0x07, " KEEP_REGS_SP_RULE_##n_args "\n" \
  "  leaq " target "(%rip), %rax\n"                            \
  "  call ballarus_keep_regs_body\n"                           \
  "  ret $" KEEP_REGS_ARG_BYTES_##n_args "\n"                  \
  "  .cfi_endproc\n"                                           \
  ".size " name ", .-" name "\n"
#define KEEP_REGS_ARG_BYTES_1 "8"
#define KEEP_REGS_ARG_BYTES_2 "16"
#define KEEP_REGS_SP_RULE_1 "0x6f" /* -17 */
#define KEEP_REGS_SP_RULE_2 "0x6e" /* -18 */

#endif
