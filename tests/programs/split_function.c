/* split_function.c — functions GCC splits at -O2: ipa-split (partial
   inlining) would move search()'s loop into search.part.0 and inline the
   two cheap tests into main.  gcov's -fprofile-arcs turns the split off
   (ipa-split.cc: pass_split_functions::gate), and ballarus does the same,
   so at every -O level the CFGs are gcov's and every line of search() is
   counted in search().  Counts: 24 calls; 4 with n <= 0 (k % 3 == 0 in the
   second call), 1 with k == 0; of the 19 loops, 13 find an element after
   58 iterations in all, 6 do not.  */
#include <stdio.h>

static int search(const int *a, int n, int k) {
  if (n <= 0)    /* count(24) */
    return -1;   /* count(4) */
  if (k == 0)    /* count(20) */
    return -2;   /* count(1) */
  for (int i = 0; i < n; i++)
    if (a[i] % k == 0) /* count(58) */
      return i;        /* count(13) */
  return -1;           /* count(6) */
}

static long weigh(const int *a, int n, int scale) {
  if (scale == 1)
    return n; /* count(3) */
  long w = 0; /* count(9) */
  for (int i = 0; i < n; i++)
    w += (long)a[i] * scale + (a[i] & 3); /* count(72) */
  for (int i = n - 1; i >= 0; i -= 2)
    w ^= a[i]; /* count(36) */
  return w;
}

int main(void) {
  int a[8] = {3, 9, 14, 25, 7, 40, 11, 6};
  int hits = 0;
  long w = 0;
  for (int k = 0; k < 12; k++) {
    hits += search(a, 8, k) + search(a, k % 3, k + 1); /* count(12) */
    w += weigh(a, 8, k % 4);
  }
  printf("hits=%d w=%ld\n", hits, w);
  return 0;
}
