// exclusion_markers_test.cc — LineExclusions::Scan on hand-made sources,
// against lcov 1.16's get_source_data rules (tests/exclusion_markers_test
// checks the reports against lcov itself).
#include "reconstruct/exclusion_markers.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

std::vector<uint32_t> BranchLines(const LineExclusions& x, uint32_t n) {
  std::vector<uint32_t> out;
  for (uint32_t l = 1; l <= n; ++l)
    if (x.Branches(l)) out.push_back(l);
  return out;
}

TEST(ExclusionMarkers, LinesAndRegions) {
  const std::vector<std::string> src = {
      "int a;",                         // 1
      "int b;  // LCOV_EXCL_LINE",      // 2
      "/* LCOV_EXCL_START */",          // 3: START's line is excluded
      "int c;",                         // 4
      "int d;  // LCOV_EXCL_STOP",      // 5: STOP's line is not
      "int e;",                         // 6
      "x(); /* GCOVR_EXCL_LINE */",     // 7: gcovr's words
      "// GCOV_EXCL_START LCOV_EXCL_STOP",  // 8: STOP wins on one line
      "int f;",                         // 9
      "// GCOVR_EXCL_START",            // 10
      "// LCOV_EXCL_LINE",              // 11: inside a region
      "// LCOV_EXCL_STOP",              // 12: any STOP ends any START
      "XLCOV_EXCL_LINEX",               // 13: a word anywhere, as lcov's regex
      "LCOV_EXCL_LIN",                  // 14: not a marker
      "FOO_EXCL_LINE",                  // 15: not a prefix of either tool
  };
  const LineExclusions x = LineExclusions::Scan(src);
  EXPECT_EQ(x.ExcludedLines(), (std::vector<uint32_t>{2, 3, 4, 7, 10, 11, 13}));
  EXPECT_EQ(BranchLines(x, 15), (std::vector<uint32_t>{2, 3, 4, 7, 10, 11, 13}));
  EXPECT_FALSE(x.Line(0));
  EXPECT_FALSE(x.Line(100));
}

TEST(ExclusionMarkers, BranchMarkersKeepLines) {
  const std::vector<std::string> src = {
      "if (a) b();  // LCOV_EXCL_BR_LINE",  // 1
      "// LCOV_EXCL_BR_START",              // 2
      "if (c) d();",                        // 3
      "// LCOV_EXCL_BR_STOP",               // 4
      "if (e) f();  // GCOVR_EXCL_BR_LINE", // 5
      "g();  // LCOV_EXCL_EXCEPTION_BR_LINE",  // 6: lcov 1.16 drops them all
      "// LCOV_EXCL_EXCEPTION_BR_START",       // 7
      "h();",                                  // 8
      "// LCOV_EXCL_EXCEPTION_BR_STOP",        // 9
      "if (i) j();",                           // 10
  };
  const LineExclusions x = LineExclusions::Scan(src);
  EXPECT_TRUE(x.ExcludedLines().empty());
  EXPECT_EQ(BranchLines(x, 10), (std::vector<uint32_t>{1, 2, 3, 5, 6, 7, 8}));
  EXPECT_FALSE(x.empty());
}

TEST(ExclusionMarkers, UnterminatedRegionRunsToTheEnd) {
  const std::vector<std::string> src = {"a;", "// LCOV_EXCL_START", "b;", "c;"};
  const LineExclusions x = LineExclusions::Scan(src);
  EXPECT_EQ(x.ExcludedLines(), (std::vector<uint32_t>{2, 3, 4}));
}

TEST(ExclusionMarkers, NoMarkers) {
  const LineExclusions x = LineExclusions::Scan({"int main() {", "  return 0;", "}"});
  EXPECT_TRUE(x.empty());
  EXPECT_TRUE(x.ExcludedLines().empty());
  EXPECT_FALSE(x.Branches(2));
}

}  // namespace
}  // namespace ballarus
