/* gcov_api.c — gcov's public run-time API (GCC 12's gcc/gcov.h:
   __gcov_dump, __gcov_reset), provided by the ballarus runtime with gcov's
   semantics, so that programs written for gcov (servers that dump on a
   signal, fuzzers that reset between inputs, GCC's own gcov tests) profile
   the same under ballarus.

   gcov's semantics (libgcc/libgcov-interface.c, libgcov-driver.c):
     __gcov_dump()   writes the counts so far, unless they were dumped
                     already; from then on nothing more is written — not by
                     another __gcov_dump(), not at exit — until
                     __gcov_reset().
     __gcov_reset()  zeroes the counters and allows the next dump (also the
                     one at exit).
   So counts made between a __gcov_dump() and the next __gcov_reset() are
   never written.  And, as gcov counts a process's run once
   (root->run_counted), a process adds one run to every TU it linked
   however many dumps it writes (rt_dump.c; so do __ballarus_dump()'s).
   Like gcov's, both act on every instrumented module that shares this
   module's master (rt_register.c), and are thread-safe.

   ballarus' own __ballarus_dump()/__ballarus_reset() keep their semantics
   (a dump writes what was counted since the previous one, and the exit
   dump still happens after them); mixing both APIs in one program follows
   each function's own rule.  A reset bumps the runtime's epoch, so the
   activations that go on after it are counted as re-entries and the
   profile stays flow-conserving (plugin/reentry.cc).

   Not provided: __gcov_flush (removed from GCC 11 on), __gcov_fork and
   __gcov_exec* (hidden in libgcov, called only by code gcc generates with
   -fprofile-arcs: ballarus handles fork with pthread_atfork, exec* needs an
   explicit dump), __gcov_info_to_gcda (gcov's data layout).  */

#include "runtime/ballarus_rt_internal.h"

#define PUBLIC __attribute__((visibility("default")))

PUBLIC void __gcov_dump(void) { ballarus_rt_gcov_dump(); }

PUBLIC void __gcov_reset(void) { ballarus_rt_gcov_reset(); }
