/* tail_call.c — returns reached from calls that always return.  pick()
   tests twice in a row (four paths, more than its edge counts tell apart:
   it gets a path register), then returns leaf(a), which the plain -O2
   build makes a tail call (`jmp leaf`), or leaf(b) + 1, which it cannot.
   leaf() calls nothing, so it always returns: ballarus counts pick()'s
   path end before the call (path_plan.cc, "a return after a call that
   always returns") and GCC keeps the tail call.  Prints a checksum. */
#include <stdio.h>

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) long pick(long a, long b, long c) {
  if (a > b) a += c;
  if (b > c) b -= a;
  if (a > 0) return leaf(a);
  return leaf(b) + 1;
}

int main(void) {
  long s = 0;
  for (long i = 0; i < 1000; i++) s += pick(i % 7 - 2, i % 5 - 1, i % 3);
  printf("%ld\n", s);
  return 0;
}
