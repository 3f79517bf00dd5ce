/* trace_deep.c — recursion 30000 traced activations deep, past the 16384
   frames a trace checkpoint holds (runtime/trace_buffer.h), then calls
   near the bottom of the stack: the tracing tests regenerate it whole
   (full trace) and its last witnesses (trace=ring:N) after the deep part,
   whose frames must not have disturbed the outer ones.  */
#include <stdio.h>

#define DEPTH 30000

static unsigned long sum;

/* Called through a volatile pointer: no inlining, no tail recursion.  */
static int down(int n);
static int (*volatile step)(int) = down;

static int down(int n) {
  if (n == 0) return 0;
  int r = step(n - 1);
  if (n % 3 == 0)
    sum += (unsigned long)n;
  else if (n % 3 == 1)
    sum ^= (unsigned long)r;
  return r + 1;
}

static int leaf(int i) { return i % 7 == 0 ? 2 : 1; }

static int shallow(int rounds) {
  int t = 0;
  for (int i = 0; i < rounds; i++) t += leaf(i);
  return t;
}

int main(void) {
  int r = down(DEPTH);
  int t = shallow(3000);
  printf("depth %d sum %lu shallow %d\n", r, sum, t);
  return 0;
}
