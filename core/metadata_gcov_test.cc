// metadata_gcov_test.cc — gcov's view of a function (GcovReportInfo,
// kGcovReportExtensionTag; core/metadata_gcov.cc).
#include "core/metadata.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/test_metadata.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

using namespace metadata_testing;  // NOLINT: the shared sample TUs and checks

TEST(GcovReportInfo, ExactBytesAndRoundTrip) {
  GcovReportInfo g;
  g.start_column = 5;
  g.end_column = 300;
  g.dropped_edges = {1, 4};
  EXPECT_EQ(EncodeGcovReportInfo(g), Varints({5, 300, 2, 1, 4}));
  GcovReportInfo back;
  std::string err;
  ASSERT_TRUE(DecodeGcovReportInfo(EncodeGcovReportInfo(g), &back, &err)) << err;
  EXPECT_EQ(back.start_column, 5u);
  EXPECT_EQ(back.end_column, 300u);
  EXPECT_EQ(back.dropped_edges, (std::vector<uint32_t>{1, 4}));
  for (size_t n = 0; n < EncodeGcovReportInfo(g).size(); ++n) {
    std::vector<uint8_t> cut = EncodeGcovReportInfo(g);
    cut.resize(n);
    EXPECT_FALSE(DecodeGcovReportInfo(cut, &back, &err)) << n;
  }
  EXPECT_FALSE(DecodeGcovReportInfo(Varints({5, 3, 2, 4, 4}), &back, &err));
  EXPECT_EQ(err, "gcov report info: byte 4: dropped edges not ascending");
  EXPECT_FALSE(DecodeGcovReportInfo(Varints({5, 3, 0, 0}), &back, &err));
  EXPECT_EQ(err, "gcov report info: byte 3: trailing bytes");
}

TEST(GcovReportInfo, InBlobDroppedEdgesMustBeFakeEdges) {
  TranslationUnit tu = SampleTu();
  Function& g = tu.functions[1];  // edges 1 and 4 are fake, 2 is not
  GcovReportInfo info;
  info.start_column = 3;
  info.end_column = 1;
  info.dropped_edges = {1, 4};
  g.extensions = {{kGcovReportExtensionTag, EncodeGcovReportInfo(info)}};
  std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  const GcovReportInfo got = GcovReportInfoOf(back.functions[1]);
  EXPECT_EQ(got.start_column, 3u);
  EXPECT_EQ(got.dropped_edges, (std::vector<uint32_t>{1, 4}));
  // Absent: the defaults.
  EXPECT_EQ(GcovReportInfoOf(back.functions[0]).start_column, 0u);
  EXPECT_TRUE(GcovReportInfoOf(back.functions[0]).dropped_edges.empty());
  for (uint32_t bad : {2u, 8u}) {
    info.dropped_edges = {bad};
    g.extensions = {{kGcovReportExtensionTag, EncodeGcovReportInfo(info)}};
    EXPECT_NE(DecodeError(tu).find("function '_Z1gv': gcov-dropped edge " +
                                   std::to_string(bad) +
                                   " is not a fake edge of the function"),
              std::string::npos)
        << DecodeError(tu);
  }
  g.extensions = {{kGcovReportExtensionTag, {7}}};
  EXPECT_NE(DecodeError(tu).find("function '_Z1gv': gcov report info: byte 1: "),
            std::string::npos)
      << DecodeError(tu);
}

}  // namespace
}  // namespace ballarus
