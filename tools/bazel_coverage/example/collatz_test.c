#include <stdio.h>

#include "tools/bazel_coverage/example/collatz.h"

int main(void) {
  int total = 0;
  for (unsigned long n = 1; n <= 10; n++) total += collatz_steps(n);
  if (total != 67) {
    printf("total %d, expected 67\n", total);
    return 1;
  }
  return 0;
}
