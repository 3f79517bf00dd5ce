// metadata_path_checks_test.cc — path extensions inside a blob, checked
// against their function and TU (core/metadata_function.cc): pre-count
// edges, derived counts, balanced starts, entry balances, dense ranges,
// cuts.
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

TEST(Metadata, PathExtensionRoundTrip) {
  PathInfo p = DiamondPaths(7, 6);
  p.cut_edges = {0, 5};
  p.cut_blocks = {2, 5};
  const TranslationUnit tu = PathTu(p);
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
  ASSERT_EQ(back.functions[0].extensions.size(), 1u);
  PathInfo info;
  std::string err;
  ASSERT_TRUE(
      DecodePathInfo(back.functions[0].extensions[0].bytes, &info, &err));
  EXPECT_TRUE(SamePathInfo(info, p));
  // Damage anywhere is still caught.
  for (size_t n = 0; n < blob.size(); ++n)
    EXPECT_FALSE(DecodeMetadata(blob.data(), n, &back).ok) << n;
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    std::vector<uint8_t> bad = blob;
    bad[byte] ^= 0x10;
    EXPECT_FALSE(DecodeMetadata(bad.data(), bad.size(), &back).ok) << byte;
  }
}

TEST(Metadata, PreCountEdgesMustBeFakeEdgesIntoExit) {
  PathInfo p = DiamondPaths(7, 6);
  p.flags = kPathFlagEarlyTermination | kPathFlagPrecountsKept;
  // Edge 5 is 5->EXIT, a fallthru; edge 0 leaves ENTRY; 9 does not exist.
  for (uint32_t e : {5u, 0u, 9u}) {
    p.precount_edges = {e};
    const std::string err = DecodeError(PathTu(p));
    EXPECT_NE(err.find("function '_Z7diamondi': path pre-count edge " +
                       std::to_string(e) +
                       " is not a fake edge from a block to EXIT"),
              std::string::npos)
        << err;
  }
  // A fake edge 3->EXIT (a call in block 3 that may not return) is one.
  TranslationUnit tu = PathTu(p);
  tu.functions[0].edges.insert(tu.functions[0].edges.begin() + 3,
                               Edge{3, 1, kEdgeFake, kNoCounter});
  p.precount_edges = {3};
  tu.functions[0].extensions = {{kPathExtensionTag, EncodePathInfo(p)}};
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(Metadata, DerivedCountsCheckedAgainstTheFunction) {
  // The diamond: 6 edges, blocks 0..5; SampleTu's flags give it edge
  // counters.
  PathInfo p = DiamondPaths(7, 6);
  p.flags = kPathFlagDerivedCounts;
  p.derived = {{1, 5, false}, {2, 3, true}};
  {
    const std::vector<uint8_t> blob = EncodeMetadata(PathTu(p));
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_TRUE(r.ok) << r.error;
  }
  for (auto [where, block, what] :
       std::vector<std::tuple<uint32_t, bool, std::string>>{
           {6, false, "edge 6"}, {1, true, "block 1"}, {0, true, "block 0"},
           {6, true, "block 6"}}) {
    p.derived = {{1, where, block}};
    const std::string err = DecodeError(PathTu(p));
    EXPECT_NE(err.find("function '_Z7diamondi': derived path count 1 names " +
                       what + ", not one of the function's"),
              std::string::npos)
        << err;
  }
  // Only with edge counters in the TU.
  p.derived = {{1, 5, false}};
  TranslationUnit tu = PathTu(p);
  tu.flags &= ~(BALLARUS_META_F_EDGE | BALLARUS_META_F_NAIVE);
  EXPECT_NE(DecodeError(tu).find("derived path counts in a build without "
                                 "edge counters"),
            std::string::npos)
      << DecodeError(tu);
}

TEST(Metadata, BalancedStartsCheckedAgainstTheFunction) {
  PathInfo p = DiamondPaths(7, 6);
  p.flags = kPathFlagEarlyTermination | kPathFlagPrecountsKept |
            kPathFlagBalancedStarts;
  p.balanced = {{1, 3}};
  {
    const std::vector<uint8_t> blob = EncodeMetadata(PathTu(p));
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_TRUE(r.ok) << r.error;
  }
  for (uint32_t start : {0u, 1u, 6u}) {
    p.balanced = {{1, start}};
    const std::string err = DecodeError(PathTu(p));
    EXPECT_NE(err.find("function '_Z7diamondi': balanced path 1 starts at "
                       "block " + std::to_string(start) +
                       ", not one of the function's"),
              std::string::npos)
        << err;
  }
}

// Entry balances name blocks of other path-profiled functions of the TU,
// without a cycle.
TEST(Metadata, EntryBalancesCheckedAcrossTheTu) {
  PathInfo d = DiamondPaths(7, 6);
  d.flags = kPathFlagEarlyTermination | kPathFlagPrecountsKept |
            kPathFlagEntryBalanced;
  d.entry_path = 1;
  d.entry_calls = {{1, 3}};
  PathInfo g = DiamondPaths(0, 6);
  auto tu_of = [&](const PathInfo& di, const PathInfo* gi) {
    TranslationUnit tu = PathTu(di);
    if (gi) tu.functions[1].extensions = {{kPathExtensionTag,
                                           EncodePathInfo(*gi)}};
    return tu;
  };
  {
    const std::vector<uint8_t> blob = EncodeMetadata(tu_of(d, &g));
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_TRUE(r.ok) << r.error;
  }
  // g has no path profile, so its blocks' counts are not the calls'.
  EXPECT_NE(DecodeError(tu_of(d, nullptr))
                .find("function '_Z7diamondi': entry balance names function "
                      "1, not another path-profiled function of the TU"),
            std::string::npos)
      << DecodeError(tu_of(d, nullptr));
  d.entry_calls = {{0, 3}};
  EXPECT_NE(DecodeError(tu_of(d, &g)).find("entry balance names function 0, "
                                           "itself"),
            std::string::npos)
      << DecodeError(tu_of(d, &g));
  d.entry_calls = {{2, 3}};
  EXPECT_NE(DecodeError(tu_of(d, &g)).find("entry balance names function 2, "
                                           "not another"),
            std::string::npos);
  // g has 5 blocks; ENTRY and EXIT are no calls.
  for (uint32_t block : {0u, 1u, 5u}) {
    d.entry_calls = {{1, block}};
    EXPECT_NE(DecodeError(tu_of(d, &g))
                  .find("entry balance names block " + std::to_string(block) +
                        " of function '_Z1gv', not one of its"),
              std::string::npos)
        << DecodeError(tu_of(d, &g));
  }
  // Each balanced by the other: a cycle.
  d.entry_calls = {{1, 3}};
  PathInfo gb = g;
  gb.flags = d.flags;
  gb.entry_path = 1;
  gb.entry_calls = {{0, 2}};
  EXPECT_NE(DecodeError(tu_of(d, &gb))
                .find("entry balances depend on one another in a cycle"),
            std::string::npos)
      << DecodeError(tu_of(d, &gb));
}

TEST(Metadata, CallersFirstOrder) {
  // By index, but 1 after 2 and 3 (its balance reads them), 3 after 2.
  EXPECT_EQ(CallersFirstOrder({{}, {2, 3, 2}, {}, {2}}),
            (std::vector<uint32_t>{0, 2, 3, 1}));
  EXPECT_EQ(CallersFirstOrder({}), std::vector<uint32_t>{});
  // 1 and 2 read each other; 3 reads 2: all three left out.
  EXPECT_EQ(CallersFirstOrder({{}, {2}, {1}, {2}}),
            std::vector<uint32_t>{0});
}

TEST(Metadata, DensePathRangeMustFitTheCounters) {
  // 14 counters; the table needs n_paths + 1 from base.
  for (auto [base, n_paths] :
       std::vector<std::pair<uint64_t, uint64_t>>{{7, 6}, {0, 13}, {13, 0},
                                                  {6, 7}}) {
    const std::vector<uint8_t> blob =
        EncodeMetadata(PathTu(DiamondPaths(base, n_paths)));
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_TRUE(r.ok) << base << " " << n_paths << ": " << r.error;
  }
  for (auto [base, n_paths] : std::vector<std::pair<uint64_t, uint64_t>>{
           {8, 6},
           {7, 7},
           {0, 14},
           {14, 0},
           {15, 0},
           {UINT64_MAX, 0},
           {UINT64_MAX, (uint64_t{1} << 63) - 1},
           {1, (uint64_t{1} << 63) - 1}}) {
    SCOPED_TRACE(std::to_string(base) + " " + std::to_string(n_paths));
    const std::string err = DecodeError(PathTu(DiamondPaths(base, n_paths)));
    EXPECT_NE(err.find("function '_Z7diamondi': path counters [" +
                       std::to_string(base) + ", +" +
                       std::to_string(n_paths + 1) + ") exceed the 14 "
                       "counters"),
              std::string::npos)
        << err;
  }
  // The error names the extension's offset: where its tag starts.
  // (Version 2, whose offsets are the blob's; DecodeError checks that
  // version 3 names the same byte of the inflated body.)
  const TranslationUnit tu = PathTu(DiamondPaths(8, 6));
  const std::vector<uint8_t> blob = EncodeMetadata(tu, 2);
  TranslationUnit back;
  const DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_FALSE(r.ok);
  const std::vector<uint8_t> ext = EncodePathInfo(DiamondPaths(8, 6));
  // ... tag (1), length (1), bytes; then g's record follows.
  std::vector<uint8_t> needle{1, static_cast<uint8_t>(ext.size())};
  needle.insert(needle.end(), ext.begin(), ext.end());
  const auto at = std::search(blob.begin() + 56, blob.end(), needle.begin(),
                              needle.end());
  ASSERT_NE(at, blob.end());
  EXPECT_EQ(r.offset, static_cast<uint64_t>(at - blob.begin()));
  // A hashed table's base is a table number, not a counter index.
  PathInfo h = DiamondPaths(1000, 6);
  h.storage = PathInfo::kHashed;
  const std::vector<uint8_t> hb = EncodeMetadata(PathTu(h));
  EXPECT_TRUE(DecodeMetadata(hb.data(), hb.size(), &back).ok);
}

TEST(Metadata, PathExtensionCutsChecked) {
  PathInfo p = DiamondPaths(7, 6);
  p.cut_edges = {6};  // the diamond has 6 edges
  EXPECT_NE(DecodeError(PathTu(p)).find(
                "function '_Z7diamondi': path cut edge 6 out of range"),
            std::string::npos);
  for (uint32_t b : {0u, 1u, 6u, UINT32_MAX}) {
    p = DiamondPaths(7, 6);
    p.cut_blocks = {b};
    EXPECT_NE(DecodeError(PathTu(p)).find(
                  "path cut block " + std::to_string(b) +
                  " is not a basic block"),
              std::string::npos)
        << b;
  }
  // Malformed PathInfo bytes inside a blob: the PathInfo error, prefixed
  // with the function.
  TranslationUnit tu = PathTu(DiamondPaths(7, 6));
  tu.functions[0].extensions[0].bytes = Varints({0, 7, 6, 0, 2, 4, 4, 0});
  EXPECT_NE(DecodeError(tu).find("function '_Z7diamondi': path info: byte "
                                 "6: cut edges not ascending"),
            std::string::npos)
      << DecodeError(tu);
  tu.functions[0].extensions[0].bytes = {9};
  EXPECT_NE(DecodeError(tu).find("path info: byte 0: unknown path storage 9"),
            std::string::npos)
      << DecodeError(tu);
  // The same bytes under a tag nobody knows are opaque and pass.
  tu.functions[0].extensions[0].tag = 99;
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  EXPECT_TRUE(DecodeMetadata(blob.data(), blob.size(), &back).ok);
}

}  // namespace
}  // namespace ballarus
