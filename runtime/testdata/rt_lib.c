/* rt_lib.c — a shared library with its own hand-built TU (lib) and its own
   copy of the runtime, dlopen'ed by rt_host.c.  With RT_LIB_COUNT_AT_EXIT
   set, its destructor counts once more (rt_lib_work(1)), as a library's
   static destructors count after the executable is finalised.  */

#include <stdlib.h>

#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(lib, RT_LIB_BODY, RT_LIB_N)

/* lib[j] += n * (j + 1).  */
__attribute__((visibility("default"))) void rt_lib_work(long n) {
  for (long i = 0; i < n; i++)
    for (int j = 0; j < RT_LIB_N; j++) lib_counters[j] += (uint64_t)j + 1;
}

__attribute__((destructor)) static void count_at_exit(void) {
  if (getenv("RT_LIB_COUNT_AT_EXIT") != NULL) rt_lib_work(1);
}
