// main.cc — drives the two TUs a fixed number of times.
#include <cstdio>

#include "common.h"

int main() {
  long total = 0;
  for (int k = 0; k < 3; k++)
    total += from_a(k) * 10 + from_b(k); /* count(3) */
  std::printf("total=%ld\n", total);
  return 0;
}
