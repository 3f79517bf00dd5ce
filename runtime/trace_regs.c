/* trace_regs.c — the slow paths of the inline witness and kEnter as
   x86-64 instrumented code reaches them (plugin/trace_emit_inline.cc):
   through an asm statement that calls a trampoline keeping every register
   but rax (keep_regs.h), with the witness id, or the function index and
   TU stamp, pushed as immediates.  */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdint.h>

#include "runtime/keep_regs.h"
#include "runtime/trace_internal.h"

#if defined(__x86_64__) && defined(__LP64__)

/* Hidden, as all of the runtime but trace_buffer.h's shared entry points:
   each module's trampolines call its own copies, which call the process's
   one runtime.  Reached from the asm below only.  */
HIDDEN uint32_t ballarus_trace_slow_witness_nc(uint32_t id);
HIDDEN uint32_t ballarus_trace_slow_enter_nc(uint32_t fn_index,
                                             uint32_t tu_stamp);

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

__asm__(
    ".text\n"
    KEEP_REGS_ENTRY("__ballarus_trace_slow_rs",
                    "ballarus_trace_slow_witness_nc", 1)
    KEEP_REGS_ENTRY("__ballarus_trace_enter_rs",
                    "ballarus_trace_slow_enter_nc", 2));

#endif
