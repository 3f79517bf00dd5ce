/* correlated.c — branches whose directions the path profile predicts and
   the edge profile does not (`ballarus-reconstruct correlation`,
   tests/correlation_e2e_test.cc).  `correlated N` calls, for i = 0..N-1,
   correlated(x) and independent(x, y) with x = i % 10 < 3 and
   y = (i / 10) % 10 < 6 (over N = 100: x 30 times, y 60 times, each of
   the four (x, y) combinations x-share times y-share of the calls), then
   alternating(4) N / 10 times. */
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

/* Both branches test x: after the first, the second's direction is known. */
__attribute__((noinline)) void correlated(int x) {
  if (x)
    sink += 1;
  else
    sink += 2;
  if (x)
    sink += 3;
  else
    sink += 4;
}

/* Two branches on independent conditions. */
__attribute__((noinline)) void independent(int x, int y) {
  if (x)
    sink += 1;
  else
    sink += 2;
  if (y)
    sink += 3;
  else
    sink += 4;
}

/* A loop whose body alternates between its two arms. */
__attribute__((noinline)) void alternating(int n) {
  for (int i = 0; i < n; i++)
    if (i % 2 == 0)
      sink += 1;
    else
      sink += 2;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < n; i++) {
    correlated(i % 10 < 3);
    independent(i % 10 < 3, (i / 10) % 10 < 6);
  }
  for (int i = 0; i < n / 10; i++)
    alternating(4);
  printf("%d\n", sink);
  return 0;
}
