// main.cc — std::vector's code lives in system headers (left out by
// default); the exception branches of the push_back line are excluded.
#include <cstdio>
#include <vector>

#include "shapes.h"

int main(int argc, char** argv) {
  std::vector<int> v;
  for (int i = 0; i < 10 + argc; ++i) v.push_back(i * 7);  // LCOV_EXCL_EXCEPTION_BR_LINE
  int total = Sum(v) + Area(3, 4);
  for (int i = 0; i < 7; ++i) total += Classify(i);
  if (argc > 5) {  // LCOV_EXCL_START
    total += Debug(argc);
    std::fprintf(stderr, "%s\n", argv[0]);
  }  // LCOV_EXCL_STOP
  std::printf("%d\n", total);
  return 0;
}
