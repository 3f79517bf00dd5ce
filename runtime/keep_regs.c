/* keep_regs.c — the body of the trampolines through which x86-64
   instrumented code calls a rare slow path keeping every register but rax
   (keep_regs.h): the trace hooks' (trace_regs.c) and update=thread's
   registration (thread_counters.c).  */
#include <pthread.h>
#include <stdint.h>

#include "runtime/keep_regs.h"

#if defined(__x86_64__) && defined(__LP64__)

/* The bytes xsave needs for the enabled components (cpuid 0xd, 0: ebx),
   or 1 when the system has no xsave (fxsave's 512 bytes then); 0 until
   the first slow path asks.  */
HIDDEN uint32_t ballarus_keep_regs_xsave_bytes;

/* The body's call of an entry's C function, with cancellation disabled:
   no thread is cancelled with the runtime's state half updated.  */
HIDDEN uint64_t ballarus_keep_regs_call(keep_regs_fn *fn, uint64_t arg0,
                                        uint64_t arg1);

uint64_t ballarus_keep_regs_call(keep_regs_fn *fn, uint64_t arg0,
                                 uint64_t arg1) {
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  uint64_t result = fn(arg0, arg1);
  pthread_setcancelstate(old, &old);
  return result;
}

/* Stack in the body: the entry's return address at 8(%rbp), the caller's
   at 16(%rbp), the arguments at 24(%rbp) and 32(%rbp) (a word of the
   caller's skipped red zone when there is one argument), rbp at 0(%rbp),
   then rcx, rdx, rsi, rdi, r8, r9, r10, r11, rbx down to -72(%rbp), then
   the aligned save area.  The arguments are read as words: a 32-bit
   parameter reads the low half of a sign-extended immediate.  */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl ballarus_keep_regs_body\n"
    ".hidden ballarus_keep_regs_body\n"
    ".type ballarus_keep_regs_body, @function\n"
    "ballarus_keep_regs_body:\n"
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
    "  movl ballarus_keep_regs_xsave_bytes(%rip), %eax\n"
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
    "  movl %eax, ballarus_keep_regs_xsave_bytes(%rip)\n"
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
    "  movq %r11, %rdi\n"
    "  movq 24(%rbp), %rsi\n"
    "  movq 32(%rbp), %rdx\n"
    "  call ballarus_keep_regs_call\n"
    "  cmpl $1, ballarus_keep_regs_xsave_bytes(%rip)\n"
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
    ".size ballarus_keep_regs_body, .-ballarus_keep_regs_body\n");

#endif
