// harness_gtest.h — the harness's steps for gtest tests: a failure is
// reported to the running test instead of returned.
#ifndef BALLARUS_TESTS_HARNESS_GTEST_H_
#define BALLARUS_TESTS_HARNESS_GTEST_H_

#include <string>

#include "gtest/gtest.h"
#include "tests/harness.h"

namespace harness {

// The install prefix (InstallPrefix(&error)); when the install failed, the
// running test fails with the reason and goes on with "".
inline std::string InstallPrefix() {
  std::string error;
  std::string prefix = InstallPrefix(&error);
  if (prefix.empty()) ADD_FAILURE() << error;
  return prefix;
}

}  // namespace harness

#endif  // BALLARUS_TESTS_HARNESS_GTEST_H_
