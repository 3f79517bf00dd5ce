// a.cc — first user of common.h: sum_squares<int> and clamp.
#include "common.h"

int from_a(int k) {
  int v[4] = {k, k + 1, k + 2, clamp(k, 0, 3)};
  return sum_squares(v, 4) + clamp(k * 3, 1, 5);
}
