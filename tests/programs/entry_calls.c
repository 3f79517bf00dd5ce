/* entry_calls.c — edge mode's entry counts taken from the callers' call
   blocks (core/entry_calls.h): static helpers called from several sites
   (in a loop, twice in one statement, from another helper), a recursive
   static function and a static function whose address is taken (both keep
   their entry counters), and a callee that exit()s (longjmp and
   exceptions out of such callees: setjmp_longjmp.c, exceptions.cc).
   Prints a checksum; exit status 3. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) int square(int x) {
  return x * x; /* count(44) */
}

static __attribute__((noinline)) int mix(int x) {
  if (x & 1) /* count(20) */
    return square(x) + 1;
  return square(x + 1) - square(x); /* count(10) */
}

/* Recursive: its entry count would need its own. */
static __attribute__((noinline)) int fib(int n) {
  if (n < 2) return n; /* count(177) */
  return fib(n - 1) + fib(n - 2);
}

static __attribute__((noinline)) int twice(int x) { return 2 * x; }

static __attribute__((noinline)) int check(int i) {
  return i == 13; /* count(14) */
}

static __attribute__((noinline)) void stop(int i, int sum) {
  if (i == 5) { /* count(6) */
    printf("%d\n", sum);
    exit(3);
  }
}

int main(void) {
  int (*volatile op)(int) = twice;
  int sum = 0;
  for (int i = 0; i < 20; i++) {
    sum += mix(i) + square(i);
    if (check(i)) break;
  }
  sum += fib(10) + op(sum & 7);
  for (int i = 0; i < 10; i++) {
    sum += mix(i * 3);
    stop(i, sum);
  }
  return 0;
}
