/* ballarus_rt_internal.h — entry points of ballarus_rt.c that other files
   of the runtime use (hidden: every module keeps its own copy).  */
#ifndef BALLARUS_RT_INTERNAL_H
#define BALLARUS_RT_INTERNAL_H

#define BALLARUS_HIDDEN __attribute__((visibility("hidden")))

/* gcov's __gcov_dump(): dumps every module of this module's master unless
   the master is in the gcov-dumped state, then enters it (no dump at exit,
   no further gcov dump) until ballarus_rt_gcov_reset().  */
BALLARUS_HIDDEN void ballarus_rt_gcov_dump(void);

/* gcov's __gcov_reset(): __ballarus_reset(), and leaves the gcov-dumped
   state.  */
BALLARUS_HIDDEN void ballarus_rt_gcov_reset(void);

#endif /* BALLARUS_RT_INTERNAL_H */
