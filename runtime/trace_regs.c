/* trace_regs.c — the slow paths of the inline witness and kEnter as
   x86-64 instrumented code reaches them (plugin/trace_emit_inline.cc):
   through an asm statement that calls a trampoline keeping every register
   but rax (keep_regs.h), with the witness id, or the function index and
   TU stamp, pushed as immediates.  */
#define _GNU_SOURCE

#include <stdint.h>

#include "runtime/keep_regs.h"
#include "runtime/trace_internal.h"

#if defined(__x86_64__) && defined(__LP64__)

/* Hidden, as all of the runtime but trace_buffer.h's shared entry points:
   each module's trampolines call its own copies, which call the process's
   one runtime.  Reached from the asm below only.  */
HIDDEN keep_regs_fn ballarus_trace_slow_witness_kr;
HIDDEN keep_regs_fn ballarus_trace_slow_enter_kr;

/* The witness slow path (trace_buffer.h ballarus_trace_witness).  */
uint64_t ballarus_trace_slow_witness_kr(uint64_t id, uint64_t unused) {
  (void)unused;
  __ballarus_trace_slow((uint32_t)id);
  return 0;
}

/* kEnter when it does not fit in the chunk: the activation's depth.  */
uint64_t ballarus_trace_slow_enter_kr(uint64_t fn_index, uint64_t tu_stamp) {
  return __ballarus_trace_enter((uint32_t)fn_index, (uint32_t)tu_stamp);
}

__asm__(
    ".text\n"
    KEEP_REGS_ENTRY("__ballarus_trace_slow_rs",
                    "ballarus_trace_slow_witness_kr", 1)
    KEEP_REGS_ENTRY("__ballarus_trace_enter_rs",
                    "ballarus_trace_slow_enter_kr", 2));

#endif
