/* one_block.c — functions made of a single basic block: the smallest CFG
   (ENTRY -> block -> EXIT), called a known number of times.  */
#include <stdio.h>

int __attribute__((noinline)) twice(int x) { return 2 * x + 1; } /* count(1000) */

static int __attribute__((noinline)) straight(int a, int b) {
  int c = a ^ b; /* count(1) */
  return c * 3 + a;
}

int main(void) {
  unsigned sum = 0;
  for (int i = 0; i < 1000; i++)
    sum += (unsigned)twice(i);
  printf("sum=%u straight=%d\n", sum, straight(5, 9));
  return 0;
}
