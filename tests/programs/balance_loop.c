/* balance_loop.c -- a loop that calls an unknown function once per
   iteration, cut short inside that call twice: by longjmp at i == 7 and by
   exit(3) at i == 20.  Path mode takes the count of the path cut short at
   the call from the balance of the loop header's paths (path-balance). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;

static int step(int i) {
  if (i == 7) longjmp(env, 1);
  if (i == 20) {
    fflush(stdout);
    exit(3);
  }
  return i & 1;
}

int (*volatile callee)(int) = step;

static int __attribute__((noinline)) run(int from, int to) {
  int s = 0;
  for (int i = from; i < to; i++) {
    if (callee(i))
      s += i;
    else
      s -= 1;
  }
  return s;
}

int main(void) {
  volatile int jumped = 0;
  printf("start\n");
  if (setjmp(env) == 0)
    printf("%d\n", run(0, 10));
  else
    jumped++;
  printf("%d %d\n", run(8, 12), jumped);
  printf("%d\n", run(15, 30));
  return 0;
}
