/* gcov_api.c — gcov's public run-time API (gcc/gcov.h: __gcov_dump,
   __gcov_reset), which ballarus' runtime provides with gcov's semantics:
   __gcov_dump() writes the counts so far and nothing more is written until
   __gcov_reset() (so a second __gcov_dump() and the exit dump write nothing
   then); __gcov_reset() discards the counts not yet written and allows the
   next dump.  Here work(1000) runs between the dump and the reset and is
   never counted; the exit dump writes what ran after the reset.  The plain
   build links libgcov (MANIFEST: plain=-lgcov), whose functions do nothing
   in a program without gcov data.  */
#include <stdio.h>

extern void __gcov_dump(void);
extern void __gcov_reset(void);

static int work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += i % 7; /* count(110) */
  return s;
}

int main(void) {
  int v = work(10); /* count(1) */
  __gcov_dump();
  v += work(1000); /* count(0) */
  __gcov_dump();
  __gcov_reset();
  v += work(100); /* count(1) */
  printf("v=%d\n", v);
  return 0; /* count(1) */
}
