/* entry_balance.c -- static functions whose every call is a direct call
   of this file, each of which calls on its way in a function that may not
   return: step() is called from two places in walk() and calls leave()
   first, which longjmps at i == 7 and exits with status 3 at i == 20;
   walk(), called twice from main(), calls leave() first too (never
   leaving).  Path mode takes the count of step()'s and walk()'s path cut
   short at that first call from the balance of their calls
   (path-entry-balance): step()'s from walk()'s two call blocks, walk()'s
   from main()'s two.  (leave() itself has paths its edge counts give.)

   By hand: walk(0, 10) calls step for i = 0..7 (8 calls; the call at 7
   longjmps), walk(10, 25) for i = 10..20 (11; the call at 20 exits): 19
   invocations of step, 2 cut short in its first call; of the 17 that
   return, 8 for odd i (1 3 5 11 13 15 17 19: total 84), 4 for i a multiple
   of 4 (0 4 12 16: total toggled back), 5 for the other even i. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static int total;

static void __attribute__((noinline)) leave(int i) {
  if (i == 7) longjmp(env, 1);
  if (i == 20) {
    printf("exit %d\n", total);
    fflush(stdout);
    exit(3);
  }
}

static int __attribute__((noinline)) step(int i, int weight) {
  leave(i);
  if (i & 1) total += i * weight;
  if (i % 4 == 0) total ^= 1;
  return total;
}

static int __attribute__((noinline)) walk(int from, int to) {
  int last = 0;
  leave(from - 100);  /* never leaves: from is 0 or 10 */
  for (int i = from; i < to; i++) {
    if (i % 3 == 0)
      last = step(i, 1);
    else
      last = step(i, 1) + 1;
  }
  return last;
}

int main(void) {
  printf("start\n");
  if (setjmp(env) == 0) printf("%d\n", walk(0, 10));
  printf("%d\n", walk(10, 25));
  return 0;
}
