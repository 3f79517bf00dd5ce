#ifndef BALLARUS_BAZEL_COVERAGE_EXAMPLE_COLLATZ_H_
#define BALLARUS_BAZEL_COVERAGE_EXAMPLE_COLLATZ_H_
int collatz_steps(unsigned long n);
int collatz_unused(int x);
#endif
