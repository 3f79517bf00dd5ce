/* rt_badtu.c — a program with one valid TU (beta), one whose metadata
   header has a bad magic, one that claims a hashed path table but has
   no array of them, and one of a metadata version after this build's:
   the runtime must skip the bad ones with a warning and still profile the
   good one, and the TU of metadata version 2 (`oldver`: an object of a
   build before metadata compression), which is valid.  `rt_badtu N` counts like rt_prog.  */

#include <stdlib.h>
#include <string.h>

#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(beta, RT_BETA_BODY, RT_BETA_N)
RT_DEFINE_TU(broken, RT_ALPHA_BODY, RT_ALPHA_N)
RT_DEFINE_TU_WITH_PATHS(nopaths, "nopaths", RT_HOST_BODY, RT_HOST_N, NULL, 1)
RT_DEFINE_TU(oldver, RT_LIB_BODY, RT_LIB_N)
RT_DEFINE_TU(newver, RT_LIB_BODY, RT_LIB_N)

__attribute__((constructor(102))) static void break_magic(void) {
  memcpy(broken_blob.h.magic, "NOTMETA!", 8);
  oldver_blob.h.version = 2; /* not covered by the stamp */
  newver_blob.h.version = BALLARUS_META_VERSION + 1;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  for (long i = 0; i < n; i++) {
    for (int j = 0; j < RT_BETA_N; j++) beta_counters[j] += 1;
    broken_counters[0] += 1;
    nopaths_counters[0] += 1;
    for (int j = 0; j < RT_LIB_N; j++) oldver_counters[j] += 1;
    newver_counters[0] += 1;
  }
  beta_counters[1] += 1;
  beta_counters[2] += 2;
  return 0;
}
