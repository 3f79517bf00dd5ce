/* rt_lib.c — a shared library with its own hand-built TU (lib) and its own
   copy of the runtime, dlopen'ed by rt_host.c.  */

#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(lib, RT_LIB_BODY, RT_LIB_N)

/* lib[j] += n * (j + 1).  */
__attribute__((visibility("default"))) void rt_lib_work(long n) {
  for (long i = 0; i < n; i++)
    for (int j = 0; j < RT_LIB_N; j++) lib_counters[j] += (uint64_t)j + 1;
}
