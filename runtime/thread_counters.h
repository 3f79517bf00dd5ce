/* thread_counters.h — the runtime's side of update=thread, per-thread
   counter copies (internal to libballarus_rt.a, hidden like the rest of the
   runtime).  Instrumented code only calls __ballarus_tc_register
   (ballarus_format.h); rt_dump.c and rt_register.c drive the rest through
   the functions below, at dumps, resets and module exit.

   Another module's copy of the runtime calls ballarus_tc_sync of this
   module (through the root's function pointer, see rt_register.c) when it
   dumps or resets the master chain, so its signature is part of the
   inter-copy contract versioned by MASTER_VERSION
   (ballarus_rt_internal.h).  */

#ifndef BALLARUS_RUNTIME_THREAD_COUNTERS_H
#define BALLARUS_RUNTIME_THREAD_COUNTERS_H

#include <stdint.h>

/* ballarus_tc_sync operations.  */
#define BALLARUS_TC_FOLD 0  /* add what every live thread copy counted since
                               the last fold to the shared counters */
#define BALLARUS_TC_RESET 1 /* discard what they counted, and zero the
                               module's thread-mode shared counters */

/* Folds (or resets) every live thread copy of this module's thread-mode
   counters.  Exact while their threads keep counting: each copy is only
   written by its thread, and what was already folded is remembered per
   module (its array G) by the folder, never by the counting thread.
   Returns the array a dump reads (and subtracts what it wrote from) in
   place of the thread-mode range [lo, hi), at the same offsets: the range
   itself, or, while the module's owner thread counts into it, another
   array (thread_counters.c, "The owner"); NULL when the module has no
   such range.  Takes the module's thread-copy lock; callers may hold the
   master lock (lock order: master, then thread copies).  */
uint64_t *ballarus_tc_sync(int op);

/* This module's thread-mode counter range [*lo, *hi) (both NULL when it has
   none).  rt_register.c's reset leaves those counters to
   ballarus_tc_sync(BALLARUS_TC_RESET), which zeroes them under the lock
   that thread exits take.  */
void ballarus_tc_range(uint64_t **lo, uint64_t **hi);

#endif /* BALLARUS_RUNTIME_THREAD_COUNTERS_H */
