/* rt_oldtu.c — a program whose TU descriptors have the layout of an older
   plugin (three pointers, before path tables), RT_OLD_TUS of them: the
   runtime must recognise that the section is not made of its descriptors,
   warn, and profile nothing rather than read garbage.  Built with 2 TUs
   (48 bytes: not a whole number of descriptors) and 5 TUs (120 bytes: three
   descriptors, the first of which has a valid anchor by coincidence).
   `rt_oldtu N` counts N in every TU.  */

#include <stdint.h>
#include <stdlib.h>

#include "runtime/testdata/rt_test_tus.h"

#ifndef RT_OLD_TUS
#error "define RT_OLD_TUS"
#endif

typedef struct {
  const unsigned char *metadata;
  uint64_t *counters;
  const void *anchor;
} old_desc;

/* Valid metadata blobs (the stamp does not matter: never read).  */
static struct {
  ballarus_meta_header h;
  char body[4];
} blob[RT_OLD_TUS];
static uint64_t counters[RT_OLD_TUS][2];

#define OLD_DESC(i)                                                         \
  __attribute__((used, section(BALLARUS_TU_SECTION), aligned(8)))          \
  static old_desc desc##i = {(const unsigned char *)&blob[i], counters[i], \
                             &__ballarus_runtime_anchor};

OLD_DESC(0)
OLD_DESC(1)
#if RT_OLD_TUS > 2
OLD_DESC(2)
OLD_DESC(3)
OLD_DESC(4)
#endif

int main(int argc, char **argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  for (int t = 0; t < RT_OLD_TUS; t++) {
    blob[t].h = (ballarus_meta_header){BALLARUS_META_MAGIC,
                                       BALLARUS_META_VERSION,
                                       BALLARUS_META_HEADER_SIZE,
                                       0,
                                       BALLARUS_META_HEADER_SIZE + 4,
                                       2,
                                       (uint64_t)t + 1,
                                       BALLARUS_META_F_NAIVE,
                                       0};
    for (long i = 0; i < n; i++) counters[t][i & 1] += 1;
  }
  return 0;
}
