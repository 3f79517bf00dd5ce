/* correlated.c — a branch pair the edge profile cannot see: in step(), the
   second branch (on b[i]) goes the way the first one (on a[i]) went, because
   main fills b from a; each branch alone is taken half of the time.  The
   path profile shows the pair; path-guided duplication copies the block
   between them, with its call, for the edge from one side of the first
   branch.  */
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static int a[N], b[N];

/* A local function IPA-SRA looks at: its call in the copied join must get
   a call-graph edge.  */
__attribute__((noinline)) static long mix(long acc) { return acc ^ (acc >> 7); }

__attribute__((noinline)) static long step(int i, long acc) {
  if (a[i] > 0)
    acc += a[i] * 3;
  else
    acc -= a[i] >> 1;
  acc = mix(acc); /* the join both sides reach, with a call */
  if (b[i] > 0)
    acc += b[i] + 11;
  else
    acc = acc * 5 - b[i];
  return acc;
}

int main(int argc, char** argv) {
  unsigned seed = 12345;
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  for (int i = 0; i < N; ++i) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (int)((seed >> 16) & 0xff) - 128;
    b[i] = a[i] > 0 ? (int)(seed >> 24) + 1 : -(int)(seed >> 25);
  }
  long acc = 0;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < N; ++i) acc = step(i, acc);
  printf("%ld\n", acc);
  return 0;
}
