/* thread_gs.h — tune-thread-gs: the %gs base through which x86-64 code for
   executables adds to the calling thread's counter copy (thread_gs.c).
   Internal to libballarus_rt.a; thread_counters.c is the only caller.  */

#ifndef BALLARUS_RUNTIME_THREAD_GS_H
#define BALLARUS_RUNTIME_THREAD_GS_H

#include <stdint.h>

/* At the module's first registration.  0: the module has no %gs code.
   1: it has, and the %gs base is free: registrations set it.  2: the base
   was in use already (the program or another tool set it): a warning was
   printed, registrations leave %gs alone, and the %gs code's counts go to
   the area *foreign (mapped here at the base plus the counters' range),
   which the caller folds like a thread's copy.  A base whose area cannot
   be mapped ends the process with a message: the counts would overwrite
   the program's memory.  */
int ballarus_gs_init(uint64_t **foreign);

/* Points the calling thread's %gs code at `copy` (the thread's copy of the
   range), or with NULL at the shared counters (base 0).  0 on success, -1
   when the kernel refuses the base (a copy below the range).  */
int ballarus_gs_point(const uint64_t *copy);

/* Whether `counters` is a TU's array the module's %gs code counts
   (section BALLARUS_GS_SECTION).  */
int ballarus_gs_listed(const uint64_t *counters);

#endif /* BALLARUS_RUNTIME_THREAD_GS_H */
