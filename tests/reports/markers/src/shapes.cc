// shapes.cc — gcovr's markers (tests/exclusion_markers_test.cc checks them
// against lcov's reading of the same lines with LCOV_ for GCOVR_).
#include "shapes.h"

int Sum(const std::vector<int>& v) {
  int s = 0;
  for (int x : v) {
    if (x > 100) s += 100;  // LCOV_EXCL_BR_LINE
    else s += x;
  }
  return s;
}

int Classify(int n) {
  /* GCOVR_EXCL_BR_START */
  if (n % 3 == 0) return 0;
  if (n % 3 == 1) return 1;
  /* GCOVR_EXCL_BR_STOP */
  switch (n) {
    case 1000:  // GCOVR_EXCL_START
      return -1;
    case 2000:
      return -2;  // GCOVR_EXCL_STOP
    default:
      return 2;
  }
}

int Unused(int x) {  // GCOVR_EXCL_LINE
  return x - 1;
}
