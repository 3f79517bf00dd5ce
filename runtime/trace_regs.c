/* trace_regs.c — the slow paths of the inline witness and kEnter as
   instrumented x86-64 code reaches them (plugin/trace_emit.cc): through
   an asm statement that calls a trampoline here, which preserves every
   register but rax (the flags excepted, as any asm may change them).

   Why: a real call to the slow path, rare as it is, makes GCC treat every
   caller-saved register as clobbered in a function that otherwise calls
   nothing, so that a small leaf function saves and restores callee-saved
   registers at each of its calls to keep its values across the slow path
   it almost never takes.  The asm tells GCC that nothing but rax and
   memory changes.

   The instrumented code steps over its red zone and pushes the arguments
   (constants: the witness id, or the function index and TU stamp) before
   the call, so that no register of its own is taken for them:
     lea -128(%rsp), %rsp; push $arg1; push $arg0; call TRAMPOLINE;
     lea 128(%rsp), %rsp
   (the trampoline's return pops the arguments).
   The trampoline saves the general registers the ABI lets a callee
   change, the vector and x87 state (xsave of every component the system
   enabled, or fxsave where there is no xsave), aligns the stack, calls
   the slow path in C and restores them.  The C side runs with cancellation disabled: the caller's
   unwind information does not describe the asm's stack adjustment, so no
   unwinding may start inside it.  */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdint.h>

#include "runtime/trace_internal.h"

#if defined(__x86_64__) && defined(__LP64__)

/* Hidden, as all of the runtime but trace_buffer.h's shared entry points:
   each module's trampolines call its own copies, which call the process's
   one runtime.  Reached from the asm below only.  */
HIDDEN uint32_t ballarus_trace_slow_witness_nc(uint32_t id);
HIDDEN uint32_t ballarus_trace_slow_enter_nc(uint32_t fn_index,
                                             uint32_t tu_stamp);
HIDDEN extern uint32_t ballarus_trace_xsave_bytes;

/* The witness slow path (trace_buffer.h ballarus_trace_witness).  */
uint32_t ballarus_trace_slow_witness_nc(uint32_t id) {
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  __ballarus_trace_slow(id);
  pthread_setcancelstate(old, &old);
  return 0;
}

/* kEnter when it does not fit in the chunk: the activation's depth.  */
uint32_t ballarus_trace_slow_enter_nc(uint32_t fn_index,
                                      uint32_t tu_stamp) {
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  uint32_t depth = __ballarus_trace_enter(fn_index, tu_stamp);
  pthread_setcancelstate(old, &old);
  return depth;
}

/* The bytes xsave needs for the enabled components (cpuid 0xd, 0: ebx),
   or 1 when the system has no xsave (fxsave's 512 bytes then); 0 until
   the first slow path asks.  */
uint32_t ballarus_trace_xsave_bytes;

/* The caller pushes the arguments (32-bit immediates, sign-extended),
   the first last, and calls an entry, which puts its C function in rax,
   calls the common body and returns popping them.  Stack in the body:
   the entry's return address at 8(%rbp), the caller's at 16(%rbp), the
   arguments at 24(%rbp) and 32(%rbp) (a word of the caller's skipped red
   zone when there is one argument), rbp at 0(%rbp), then rcx, rdx, rsi,
   rdi, r8, r9, r10, r11, rbx down to -72(%rbp), then the aligned save
   area.  */
#define ENTRY(name, target, arg_bytes)                       \
  ".p2align 4\n"                                             \
  ".globl " name "\n"                                        \
  ".hidden " name "\n"                                       \
  ".type " name ", @function\n"                              \
  name ":\n"                                                 \
  "  .cfi_startproc\n"                                       \
  "  leaq " target "(%rip), %rax\n"                          \
  "  call ballarus_trace_regs_body\n"                        \
  "  ret $" arg_bytes "\n"                                   \
  "  .cfi_endproc\n"                                         \
  ".size " name ", .-" name "\n"

__asm__(
    ".text\n"
    ENTRY("__ballarus_trace_slow_rs", "ballarus_trace_slow_witness_nc", "8")
    ENTRY("__ballarus_trace_enter_rs", "ballarus_trace_slow_enter_nc", "16")
    ".p2align 4\n"
    ".type ballarus_trace_regs_body, @function\n"
    "ballarus_trace_regs_body:\n"
    "  .cfi_startproc\n"
    "  pushq %rbp\n"
    "  .cfi_def_cfa_offset 16\n"
    "  .cfi_offset %rbp, -16\n"
    "  movq %rsp, %rbp\n"
    "  .cfi_def_cfa_register %rbp\n"
    "  pushq %rcx\n"
    "  pushq %rdx\n"
    "  pushq %rsi\n"
    "  pushq %rdi\n"
    "  pushq %r8\n"
    "  pushq %r9\n"
    "  pushq %r10\n"
    "  pushq %r11\n"
    "  pushq %rbx\n"
    "  .cfi_offset %rbx, -88\n"
    "  movq %rax, %r11\n"
    "  movl ballarus_trace_xsave_bytes(%rip), %eax\n"
    "  testl %eax, %eax\n"
    "  jnz 2f\n"
    /* cpuid 1: ecx bit 27 (OSXSAVE); then cpuid 0xd, 0: ebx.  */
    "  movl $1, %eax\n"
    "  cpuid\n"
    "  movl $1, %eax\n"
    "  btl $27, %ecx\n"
    "  jnc 1f\n"
    "  movl $0xd, %eax\n"
    "  xorl %ecx, %ecx\n"
    "  cpuid\n"
    "  movl %ebx, %eax\n"
    "1:\n"
    "  movl %eax, ballarus_trace_xsave_bytes(%rip)\n"
    "2:\n"
    "  cmpl $1, %eax\n"
    "  je 3f\n"
    /* xsave: the header (bytes 512-575) zero, every enabled component. */
    "  subq %rax, %rsp\n"
    "  andq $-64, %rsp\n"
    "  xorl %eax, %eax\n"
    "  movq %rax, 512(%rsp)\n"
    "  movq %rax, 520(%rsp)\n"
    "  movq %rax, 528(%rsp)\n"
    "  movq %rax, 536(%rsp)\n"
    "  movq %rax, 544(%rsp)\n"
    "  movq %rax, 552(%rsp)\n"
    "  movq %rax, 560(%rsp)\n"
    "  movq %rax, 568(%rsp)\n"
    "  movl $-1, %eax\n"
    "  movl $-1, %edx\n"
    "  xsave64 (%rsp)\n"
    "  jmp 4f\n"
    "3:\n"
    "  subq $512, %rsp\n"
    "  andq $-64, %rsp\n"
    "  fxsave64 (%rsp)\n"
    "4:\n"
    "  movl 24(%rbp), %edi\n"
    "  movl 32(%rbp), %esi\n"
    "  call *%r11\n"
    "  cmpl $1, ballarus_trace_xsave_bytes(%rip)\n"
    "  je 5f\n"
    "  movl $-1, %eax\n"
    "  movl $-1, %edx\n"
    "  xrstor64 (%rsp)\n"
    "  jmp 6f\n"
    "5:\n"
    "  fxrstor64 (%rsp)\n"
    "6:\n"
    "  leaq -72(%rbp), %rsp\n"
    "  popq %rbx\n"
    "  popq %r11\n"
    "  popq %r10\n"
    "  popq %r9\n"
    "  popq %r8\n"
    "  popq %rdi\n"
    "  popq %rsi\n"
    "  popq %rdx\n"
    "  popq %rcx\n"
    "  popq %rbp\n"
    "  .cfi_def_cfa %rsp, 8\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size ballarus_trace_regs_body, .-ballarus_trace_regs_body\n");

#endif
