/* rt_test_tus.h — hand-built translation units for the runtime tests.

   The runtime tests do not need the plugin: a test program defines TUs the
   way the plugin would, with a metadata blob (valid header, arbitrary body),
   a counter array and a descriptor in section "ballarus_tus" pointing at
   __ballarus_runtime_anchor.  The bodies and sizes are shared with the C++
   test (ballarus_rt_test.cc), which computes the expected stamps itself.

   C static initialisers cannot compute FNV-1a, so RT_DEFINE_TU fills the
   stamp from a constructor of priority 101, which runs before the runtime's
   default-priority constructor registers the module.  */

#ifndef BALLARUS_RUNTIME_TESTDATA_RT_TEST_TUS_H
#define BALLARUS_RUNTIME_TESTDATA_RT_TEST_TUS_H

/* Body lengths deliberately not multiples of 8 (padding in the profile).  */
#define RT_ALPHA_BODY "alpha: an arbitrary metadata body\x01\x02\x03"
#define RT_ALPHA_N 5
#define RT_ALPHA_IDENTITY 0xa1a1a1a1a1a1a1a1ull
#define RT_BETA_BODY "beta"
#define RT_BETA_N 3
#define RT_BETA_IDENTITY 0xbebebebebebebebeull
#define RT_HOST_BODY "host module TU"
#define RT_HOST_N 2
#define RT_HOST_IDENTITY 0x4848484848484848ull
#define RT_LIB_BODY "shared library TU, its own runtime copy"
#define RT_LIB_N 4
#define RT_LIB_IDENTITY 0x4c4c4c4c4c4c4c4cull

/* The counts the programs produce for a parameter n (see rt_prog.c).  */
#define RT_ALPHA_COUNT(n, j) ((unsigned long long)(n) * ((j) + 1))
#define RT_BETA_COUNT(n, j) ((unsigned long long)(n) + (j))

#ifndef __cplusplus
#include <stdint.h>

#include "runtime/ballarus_format.h"

extern const char __ballarus_runtime_anchor __attribute__((visibility("hidden")));

#define RT_DEFINE_TU(name, BODY, N, IDENTITY)                                  \
  static struct {                                                              \
    ballarus_meta_header h;                                                    \
    char body[sizeof(BODY) - 1];                                               \
  } name##_blob = {{BALLARUS_META_MAGIC, BALLARUS_META_VERSION,                \
                    BALLARUS_META_HEADER_SIZE, 0,                              \
                    BALLARUS_META_HEADER_SIZE + sizeof(BODY) - 1, (N),         \
                    (IDENTITY), BALLARUS_META_F_NAIVE, 0},                     \
                   BODY};                                                      \
  uint64_t name##_counters[N];                                                 \
  static ballarus_tu_desc name##_desc                                          \
      __attribute__((used, section(BALLARUS_TU_SECTION), aligned(8))) = {      \
          (const unsigned char *)&name##_blob, name##_counters,                \
          &__ballarus_runtime_anchor};                                         \
  __attribute__((constructor(101))) static void name##_stamp(void) {           \
    name##_blob.h.stamp =                                                      \
        ballarus_hash64(name##_blob.body, sizeof name##_blob.body);            \
  }

#endif /* !__cplusplus */

#endif
