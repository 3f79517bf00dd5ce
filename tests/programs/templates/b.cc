// b.cc — second user of common.h: sum_squares<int>, sum_squares<long> and
// clamp.
#include "common.h"

long from_b(int k) {
  int vi[2] = {k, -k};
  long vl[3] = {k, 2L * k, 3L * k};
  return sum_squares(vi, 2) + sum_squares(vl, 3) + clamp(k - 2, -1, 1);
}
