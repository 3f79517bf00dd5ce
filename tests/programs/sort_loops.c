/* sort_loops.c — call-free counted loops that store through pointers,
   after bzip2's blocksort.c: set_quadrant() is mainSort's quadrant loop
   (two paths per iteration, the second rare: `if (a < OVERSHOOT)`),
   partition() mainQSort3's three-way partition (loops with two back edges
   each, merged with the outer loop's header), find() a counted loop left
   in its middle by a return, copy_buckets() mainSort's copyStart loop
   (two choices per iteration, a rare wrap then a skip: four paths, two
   prefixes on each way into the latch, each counted by a pair of locals).  Our counters escape, so GCC cannot keep
   them in registers through these loops; ballarus counts them in locals
   added to the counters on each exit (tune-loop-registers, plugin/loop_registers.cc).
   Prints a checksum.  Counts: 20 rounds of 4096 in set_quadrant, of which
   34 per round take the branch; 50 rounds of partition and find over
   1000 values; 10 rounds of 4096 in copy_buckets, of which one per round
   wraps and 256 skip. */
#include <stdio.h>

#define OVERSHOOT 34
#define N 4096

static unsigned short quadrant[N + OVERSHOOT];
static int ptr[N];

__attribute__((noinline)) static void set_quadrant(int n, int shifts) {
  for (int j = n - 1; j >= 0; j--) {
    int a = ptr[j];                                 /* count(81920) */
    unsigned short q = (unsigned short)(j >> shifts);
    quadrant[a] = q;
    if (a < OVERSHOOT) quadrant[a + n] = q;         /* count(81920) */
  }
}

/* Three-way partition of v[lo..hi] around med; returns a checksum of the
   bounds it ends with. */
__attribute__((noinline)) static int partition(int* v, int lo, int hi,
                                               int med) {
  int unLo = lo, ltLo = lo, unHi = hi, gtHi = hi;
  for (;;) {
    while (unLo <= unHi) {
      int n = v[unLo] - med;
      if (n == 0) {
        int t = v[unLo]; v[unLo] = v[ltLo]; v[ltLo] = t;
        ltLo++; unLo++;
        continue;
      }
      if (n > 0) break;
      unLo++;
    }
    while (unLo <= unHi) {
      int n = v[unHi] - med;
      if (n == 0) {
        int t = v[unHi]; v[unHi] = v[gtHi]; v[gtHi] = t;
        gtHi--; unHi--;
        continue;
      }
      if (n < 0) break;
      unHi--;
    }
    if (unLo > unHi) break;
    int t = v[unLo]; v[unLo] = v[unHi]; v[unHi] = t;
    unLo++; unHi--;
  }
  return ltLo * 7 + gtHi;
}

/* Appends each ptr[j] - 1 (wrapped to nblock - 1 when negative) to the
   bucket of its low four bits, but for bucket 5. */
static int bucket_fill[16];
static int buckets[N];
__attribute__((noinline)) static void copy_buckets(int n, int nblock) {
  for (int j = 0; j < n; j++) {
    int k = ptr[j] - 1;                             /* count(40960) */
    if (k < 0) k += nblock;
    int c = k & 15;
    if (c != 5) buckets[bucket_fill[c]++ & (N - 1)] = k;
  }
}

/* The first index of x in v[0..n), or -1. */
__attribute__((noinline)) static int find(const int* v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

int main(void) {
  unsigned seed = 12345;
  for (int i = 0; i < N; i++) ptr[i] = i;
  for (int i = N - 1; i > 0; i--) {  /* a permutation of 0..N-1 */
    seed = seed * 1103515245u + 12345u;
    int k = (int)((seed >> 16) % (unsigned)(i + 1));
    int t = ptr[i]; ptr[i] = ptr[k]; ptr[k] = t;
  }
  long sum = 0;
  for (int r = 0; r < 20; r++) set_quadrant(N, r % 3);  /* count(21) */
  for (int i = 0; i < N + OVERSHOOT; i++) sum += quadrant[i];
  for (int r = 0; r < 10; r++) copy_buckets(N, N);  /* count(11) */
  for (int i = 0; i < N; i++) sum += buckets[i] * (long)(i % 7);
  for (int i = 0; i < 16; i++) sum += bucket_fill[i];
  int v[1000];
  for (int r = 0; r < 50; r++) {
    for (int i = 0; i < 1000; i++) {
      seed = seed * 1103515245u + 12345u;
      v[i] = (int)((seed >> 16) % 10);
    }
    sum += partition(v, 0, 999, 5);                 /* count(50) */
    sum += find(v, 1000, 20 + r % 2 - 10 * (r % 3)); /* count(50) */
  }
  printf("sum=%ld\n", sum);
  return 0;
}
