/* rt_test_tus.h — hand-built translation units for the runtime tests.

   The runtime tests do not need the plugin: a test program defines TUs the
   way the plugin would, with a metadata blob (valid header, arbitrary body),
   a counter array and a descriptor in section "ballarus_tus" pointing at
   __ballarus_runtime_anchor.  The bodies and sizes are shared with the C++
   test (ballarus_rt_test.cc), which computes the expected stamps itself.

   The blob is built by rt_make_blob from a constructor of priority 101,
   which runs before the runtime's default-priority constructor registers
   the module: C static initialisers cannot compute FNV-1a, and the names
   block depends on the environment.  With RT_HOME=DIR set, a TU `x` gets
   the home DIR/x.bprof (object DIR/x.o), as the plugin would record for
   `cd DIR && gcc -c x.c`; without it, no home (the runtime then writes to
   ballarus.profile in its start-up directory).  The C++ test builds the
   same blobs with rt_make_blob to know their stamps.  */

#ifndef BALLARUS_RUNTIME_TESTDATA_RT_TEST_TUS_H
#define BALLARUS_RUNTIME_TESTDATA_RT_TEST_TUS_H

/* Body lengths deliberately not multiples of 8 (padding in the profile).  */
#define RT_ALPHA_BODY "alpha: an arbitrary metadata body\x01\x02\x03"
#define RT_ALPHA_N 5
#define RT_BETA_BODY "beta"
#define RT_BETA_N 3
#define RT_HOST_BODY "host module TU"
#define RT_HOST_N 2
#define RT_LIB_BODY "shared library TU, its own runtime copy"
#define RT_LIB_N 4

/* rt_big.c: one TU of many counter pages (78 chunks of 512 counters).  */
#define RT_BIG_BODY "big: a counter array of many pages"
#define RT_BIG_N 40000

/* The counts the programs produce for a parameter n (see rt_prog.c).  */
#define RT_ALPHA_COUNT(n, j) ((unsigned long long)(n) * ((j) + 1))
#define RT_BETA_COUNT(n, j) ((unsigned long long)(n) + (j))

/* rt_path.c: a TU with dense counters and two hashed path tables (of the
   functions with metadata index RT_PATHS_FN0 and RT_PATHS_FN1), and a
   "twin" TU linked twice (same body, so same stamp: one profile record)
   whose copies each have one hashed table.  */
#define RT_PATHS_BODY "paths: dense counters and two hashed path tables"
#define RT_PATHS_N 2
#define RT_PATHS_FN0 0
#define RT_PATHS_FN1 3
#define RT_TWIN_BODY "twin: one TU, linked twice"
#define RT_TWIN_N 1
#define RT_TWIN_FN 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/ballarus_format.h"

/* Room for a names block.  */
#define RT_NAMES_MAX 1024

/* Builds the metadata blob of the hand-made TU `tu` into out (cap bytes):
   header, names block (profile HOME/tu.bprof, object HOME/tu.o, source
   tu.c, cwd HOME; without a home: profile and object "", source tu.c, cwd
   /rt), then `body`.  Returns its size, or 0 if it does not fit.  */
static inline size_t rt_make_blob(unsigned char *out, size_t cap,
                                  const char *home, const char *tu,
                                  const char *body, size_t body_len,
                                  uint64_t n_counters) {
  char profile[RT_NAMES_MAX / 4], object[RT_NAMES_MAX / 4],
      source[RT_NAMES_MAX / 4], cwd[RT_NAMES_MAX / 4];
  if (home != NULL && home[0] != '\0') {
    snprintf(profile, sizeof profile, "%s/%s.bprof", home, tu);
    snprintf(object, sizeof object, "%s/%s.o", home, tu);
    snprintf(cwd, sizeof cwd, "%s", home);
  } else {
    profile[0] = object[0] = '\0';
    snprintf(cwd, sizeof cwd, "/rt");
  }
  snprintf(source, sizeof source, "%s.c", tu);
  size_t lp = strlen(profile) + 1, lo = strlen(object) + 1,
         ls = strlen(source) + 1, lc = strlen(cwd) + 1;
  size_t names = lp + lo + ls + lc;
  size_t size = BALLARUS_META_HEADER_SIZE + names + body_len;
  if (size > cap) return 0;
  unsigned char *p = out + BALLARUS_META_HEADER_SIZE;
  memcpy(p, profile, lp);
  memcpy(p + lp, object, lo);
  memcpy(p + lp + lo, source, ls);
  memcpy(p + lp + lo + ls, cwd, lc);
  memcpy(p + names, body, body_len);
  ballarus_meta_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, BALLARUS_META_MAGIC, 8);
  h.version = BALLARUS_META_VERSION;
  h.header_size = BALLARUS_META_HEADER_SIZE;
  h.stamp = ballarus_hash64(p, names + body_len);
  h.size = size;
  h.n_counters = n_counters;
  h.identity = ballarus_tu_identity(profile, cwd, source);
  h.flags = BALLARUS_META_F_NAIVE;
  h.names_size = (uint32_t)names;
  memcpy(out, &h, sizeof h);
  return size;
}

/* The deterministic random path workload of rt_path.c, shared so that the
   C++ test replays it single-threaded for the expected counts.  Step i of a
   thread with PRNG state *s counts one path of table `table` (0 or 1);
   table 0's keys are in [0, RT_WORK_KEYS), table 1's just below 2^63.  The
   mix is chosen for contention: a quarter of the steps count one of 8 hot
   paths (all threads adding to the same slots), a quarter follow a key
   sequence that depends only on i (threads started together claim the
   same new keys, and reach each table's growth, at about the same time),
   the rest are random.  A step with `cut` also counts path key^1 "before a
   call" and undoes it (-1) one step later, as path mode does when the call
   returns: those cancel in the profile.  */
#define RT_WORK_KEYS 3000u

static inline uint64_t rt_splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct rt_step {
  int table;
  uint64_t key;
  int cut;
} rt_step;

static inline rt_step rt_work_step(uint64_t *s, uint64_t i) {
  uint64_t x = rt_splitmix64(s);
  uint64_t shared = i;
  shared = rt_splitmix64(&shared);
  rt_step st;
  uint64_t k;
  switch ((x >> 4) & 3) {
    case 0: /* hot */
      k = (x >> 8) % 8;
      st.table = (int)(x & 1);
      break;
    case 1: /* the same for every thread at step i */
      k = (shared >> 8) % RT_WORK_KEYS;
      st.table = (int)(shared & 1);
      break;
    default:
      k = (x >> 8) % RT_WORK_KEYS;
      st.table = (int)(x & 1);
      break;
  }
  st.key = st.table == 0 ? k : (1ull << 63) - 1 - k;
  st.cut = ((x >> 2) & 3) == 0;
  return st;
}

#ifndef __cplusplus
#include <stddef.h>
#include <stdlib.h>

extern const char __ballarus_runtime_anchor __attribute__((visibility("hidden")));

#define RT_DEFINE_TU(name, BODY, N)                                            \
  RT_DEFINE_TU_WITH_PATHS(name, #name, BODY, N, NULL, 0)

/* TU: the TU's name (its source is TU.c, its home RT_HOME/TU.bprof); two
   variables with one TU name and body are one TU linked twice.  HASHES: a
   ballarus_path_hash array of N_HASHES (or NULL, 0).  */
#define RT_DEFINE_TU_WITH_PATHS(name, TU, BODY, N, HASHES, N_HASHES)           \
  static struct {                                                              \
    ballarus_meta_header h;                                                    \
    unsigned char rest[RT_NAMES_MAX + sizeof(BODY)];                           \
  } name##_blob __attribute__((aligned(8)));                                   \
  uint64_t name##_counters[N];                                                 \
  static ballarus_tu_desc name##_desc                                          \
      __attribute__((used, section(BALLARUS_TU_SECTION), aligned(8))) = {      \
          (const unsigned char *)&name##_blob, name##_counters,                \
          &__ballarus_runtime_anchor, (HASHES), (N_HASHES)};                   \
  __attribute__((constructor(101))) static void name##_make(void) {            \
    rt_make_blob((unsigned char *)&name##_blob, sizeof name##_blob,            \
                 getenv("RT_HOME"), TU, BODY, sizeof(BODY) - 1, (N));          \
  }

#endif /* !__cplusplus */

#endif
