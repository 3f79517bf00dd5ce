// shapes.h — inline code in a header beside src/ (as a release tarball
// lays out its public headers), with lcov's exclusion markers
// (tests/exclusion_markers_test.cc).
#ifndef SHAPES_H_
#define SHAPES_H_

#include <stdexcept>
#include <vector>

inline int Area(int w, int h) {
  if (w < 0 || h < 0)
    throw std::invalid_argument("negative side");  // LCOV_EXCL_LINE
  return w * h;
}

// LCOV_EXCL_START
inline int Debug(int x) {
  return x * 3 + 1;
}
// LCOV_EXCL_STOP

int Sum(const std::vector<int>& v);
int Classify(int n);

#endif  // SHAPES_H_
