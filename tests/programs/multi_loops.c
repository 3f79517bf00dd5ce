/* multi_loops.c — path mode's multi-path loop entry cuts and hoisted path
   ends (plugin/path_plan.cc): loops whose iterations take several paths
   (bzip2's mainQSort3 partition: `continue` after a swap or a plain step,
   both back to the header through one latch), nested, one at a function's
   very start (entered from ENTRY at -O0), one calling a function that may
   not return, one run zero times on some entries, and a compare chain with
   early returns (bzip2's mainGtU) whose returns reach the return block
   through chords.  The program is fixed, so every count is known.  */
#include <stdio.h>
#include <stdlib.h>

static int v[32];

__attribute__((noinline)) static void check(int x) {
  if (x < 0) exit(7); /* count(40) */
}

/* Three-way partition of v[lo..hi] around med (ltLo/unLo/unHi/gtHi). */
__attribute__((noinline)) static int partition(int lo, int hi, int med) {
  int unLo = lo, ltLo = lo, unHi = hi, gtHi = hi, t;
  while (1) {
    while (1) {
      if (unLo > unHi) break;
      if (v[unLo] == med) {
        t = v[unLo]; v[unLo] = v[ltLo]; v[ltLo] = t;
        ltLo++; unLo++;
        continue;
      }
      if (v[unLo] > med) break;
      unLo++;
    }
    while (1) {
      if (unLo > unHi) break;
      if (v[unHi] == med) {
        t = v[unHi]; v[unHi] = v[gtHi]; v[gtHi] = t;
        gtHi--; unHi--;
        continue;
      }
      if (v[unHi] < med) break;
      unHi--;
    }
    if (unLo > unHi) break;
    t = v[unLo]; v[unLo] = v[unHi]; v[unHi] = t;
    unLo++; unHi--;
  }
  return (ltLo - lo) * 100 + (hi - gtHi) * 10 + (unLo - ltLo);
}

/* A loop at the function's start, two paths per iteration. */
__attribute__((noinline)) static int collatz(unsigned n) {
  int steps = 0;
  do {
    if (n & 1)
      n = 3 * n + 1;
    else
      n /= 2;
    steps++;
  } while (n != 1);
  return steps;
}

/* Several paths per iteration and a call that may not return. */
__attribute__((noinline)) static long checked(int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] & 1)
      s += v[i];
    else
      s -= v[i] / 2;
    check(v[i]);
  }
  return s;
}

/* A compare chain with early returns, then a loop of the same (the
   returns reach one return block through chords). */
__attribute__((noinline)) static int greater(const unsigned char *a,
                                             const unsigned char *b, int n) {
  if (a[0] != b[0]) return a[0] > b[0];
  if (a[1] != b[1]) return a[1] > b[1];
  if (a[2] != b[2]) return a[2] > b[2];
  if (a[3] != b[3]) return a[3] > b[3];
  for (int i = 4; i < n; i++) {
    if (a[i] != b[i]) return a[i] > b[i];
    if (a[i] == 0) return 0;
  }
  return 0;
}

/* A bit reader (bzip2's GET_BITS): a loop with several paths per
   iteration whose exit at the top is taken on most entries -- GCC's
   estimate says under one iteration per entry, so its entries are not
   cut. */
static const unsigned char *in_p;
static int in_avail;
static unsigned bs_buff, bs_live, total_lo, total_hi;
__attribute__((noinline)) static int get_bits(unsigned n, unsigned *v) {
  while (1) {
    if (bs_live >= n) {
      *v = (bs_buff >> (bs_live - n)) & ((1u << n) - 1);
      bs_live -= n;
      return 1;
    }
    if (in_avail == 0) return 0;
    bs_buff = (bs_buff << 8) | *in_p++;
    bs_live += 8;
    in_avail--;
    if (++total_lo == 0) total_hi++;
  }
}

int main(void) {
  long sum = 0;
  for (int r = 0; r < 4; r++) {
    for (int i = 0; i < 32; i++) v[i] = (i * 7 + r * 3) % 11;
    sum += partition(0, 31, 5 + r % 3);
    sum += partition(4, 3, 0); /* empty: its loops run zero times */
    sum += collatz(27 + r);
    sum += checked(10);
  }
  static const unsigned char words[6][8] = {
      "abcdefg", "abcdefh", "abddefg", "abcdefg", "b", "abcdxfg"};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) sum += greater(words[i], words[j], 8) * (i + j);
  static const unsigned char bytes[] = "path profiling";
  unsigned b;
  in_p = bytes;
  in_avail = (int)sizeof bytes - 1;
  while (get_bits(3, &b)) sum += b;
  printf("multi_loops %ld\n", sum);
  return 0;
}
