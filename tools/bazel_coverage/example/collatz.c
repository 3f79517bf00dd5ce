#include "tools/bazel_coverage/example/collatz.h"

/* Steps of the Collatz sequence from N down to 1.  */
int collatz_steps(unsigned long n) {
  int steps = 0;
  while (n != 1) {
    if (n % 2 == 0)
      n /= 2;
    else
      n = 3 * n + 1;
    steps++;
  }
  return steps;
}

/* Never called by the test: its lines stay at zero.  */
int collatz_unused(int x) {
  if (x > 0)
    return x;
  return -x;
}
