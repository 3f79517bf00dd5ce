/* procs.c — the short process of bench/store.sh part (a): a few
 * milliseconds of branchy work, so that what a process pays to write its
 * profile at exit is visible next to what it runs.
 *
 *   procs [N]     N rounds (default 2000); prints a checksum
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 88172645463325252ULL;
static unsigned next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 32);
}

static int classify(unsigned x) {
  switch (x % 7) {
    case 0: return x & 1 ? 3 : 5;
    case 1: case 2: return (int)(x % 11);
    case 3: return x > 1000 ? 1 : -1;
    default: return (int)(x % 3) - 1;
  }
}

static unsigned collatz(unsigned x) {
  unsigned steps = 0;
  while (x > 1 && steps < 64) {
    x = x & 1 ? 3 * x + 1 : x / 2;
    steps++;
  }
  return steps;
}

static unsigned long mix(const char *s) {
  unsigned long h = 5381;
  for (; *s; s++) h = h * 33 + (unsigned char)*s;
  return h;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  long sum = 0;
  char buf[32];
  for (int i = 0; i < n; i++) {
    unsigned x = next();
    sum += classify(x);
    if (i % 5 == 0) sum += collatz(x % 1000 + 1);
    if (i % 50 == 0) {
      snprintf(buf, sizeof buf, "w%u", x % 977);
      sum += (long)(mix(buf) % 101);
    }
  }
  printf("%ld\n", sum);
  return 0;
}
