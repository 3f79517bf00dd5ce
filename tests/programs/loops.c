/* loops.c — nested loops with break and continue, and a do-while.

   Every count is hand-derived: the outer loop runs 10 times, the inner loop
   would run i times but breaks when j reaches 5 and skips odd j.  */
#include <stdio.h>

static unsigned long mix(unsigned long acc, int v) {
  return acc * 31u + (unsigned long)v; /* count(38) */
}

int main(void) {
  unsigned long acc = 7;
  int inner_runs = 0;
  for (int i = 0; i < 10; i++) {
    for (int j = 0; j < i; j++) {
      inner_runs++; /* count(39) */
      if (j == 5)
        break; /* count(4) */
      if (j & 1)
        continue; /* count(14) */
      acc = mix(acc, i * j); /* count(21) */
    }
  }
  int n = 17;
  int steps = 0;
  do {
    steps++; /* count(17) */
    acc = mix(acc, n);
    n--;
  } while (n > 0);
  /* A do-while whose body runs exactly once.  */
  do {
    steps += 100; /* count(1) */
  } while (0);
  printf("inner=%d steps=%d acc=%lu\n", inner_runs, steps, acc);
  return 0;
}
