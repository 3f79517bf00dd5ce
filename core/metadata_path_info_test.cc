// metadata_path_info_test.cc — the path-profiling extension's own bytes
// (PathInfo, core/metadata_path_info.cc): exact encodings, round trips,
// and every malformed field rejected at its offset.
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

// Other PathInfos worth a round trip: hashed, the largest values, no cuts.
std::vector<PathInfo> PathInfos() {
  std::vector<PathInfo> v{SamplePathInfo(), PathInfo()};
  PathInfo h;
  h.storage = PathInfo::kHashed;
  h.base = 3;
  h.n_paths = (uint64_t{1} << 63) - 1;
  h.cut_edges = {0, 127, 128, 16383, 16384, UINT32_MAX - 1, UINT32_MAX};
  h.cut_blocks = {2, 1000000};
  v.push_back(h);
  PathInfo d;
  d.base = UINT64_MAX;
  d.n_paths = 1;
  d.cut_blocks = {UINT32_MAX};
  v.push_back(d);
  PathInfo k = SamplePathInfo();
  k.flags |= kPathFlagPrecountsKept;
  k.precount_edges = {0, 5, 300, UINT32_MAX};
  v.push_back(k);
  PathInfo dc = k;
  dc.flags |= kPathFlagDerivedCounts;
  dc.n_paths = (uint64_t{1} << 63) - 1;
  dc.derived = {{0, 0, false}, {1, 0, true}, {200, UINT32_MAX, false},
                {(uint64_t{1} << 63) - 2, UINT32_MAX, true}};
  v.push_back(dc);
  PathInfo bs = k;
  bs.flags |= kPathFlagBalancedStarts;
  bs.n_paths = 1001;
  bs.balanced = {{3, 2}, {1000, UINT32_MAX}};
  v.push_back(bs);
  PathInfo eb = bs;
  eb.flags |= kPathFlagEntryBalanced;
  eb.entry_path = 1000;
  eb.entry_calls = {{0, 2}, {0, UINT32_MAX}, {UINT32_MAX, 0}};
  v.push_back(eb);
  return v;
}


TEST(PathInfo, ExactBytes) {
  // storage 0, base 6, n_paths 6, flags 1, cut edges [2: 1 4], cut blocks
  // [1: 3] — one byte each.
  EXPECT_EQ(EncodePathInfo(SamplePathInfo()),
            (std::vector<uint8_t>{0, 6, 6, 1, 2, 1, 4, 1, 3}));
  EXPECT_EQ(EncodePathInfo(PathInfo()),
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 0}));
  // Kept pre-counts (flags 3) append their edges: [2: 5 9].
  PathInfo kept = SamplePathInfo();
  kept.flags |= kPathFlagPrecountsKept;
  kept.precount_edges = {5, 9};
  EXPECT_EQ(EncodePathInfo(kept),
            (std::vector<uint8_t>{0, 6, 6, 3, 2, 1, 4, 1, 3, 2, 5, 9}));
  // 300 = 0b10'0101100: 0xac 0x02.
  PathInfo p;
  p.storage = PathInfo::kHashed;
  p.n_paths = 300;
  EXPECT_EQ(EncodePathInfo(p), (std::vector<uint8_t>{1, 0, 0xac, 0x02, 0, 0,
                                                     0}));
  EXPECT_EQ(EncodePathInfo(p), Varints({1, 0, 300, 0, 0, 0}));
}

TEST(PathInfo, RoundTrip) {
  for (const PathInfo& p : PathInfos()) {
    const std::vector<uint8_t> bytes = EncodePathInfo(p);
    PathInfo back = SamplePathInfo();  // decoding replaces everything
    back.cut_edges = {7, 8, 9};
    std::string err;
    ASSERT_TRUE(DecodePathInfo(bytes, &back, &err)) << err;
    EXPECT_TRUE(SamePathInfo(p, back)) << p.n_paths;
    EXPECT_EQ(EncodePathInfo(back), bytes);
  }
}

TEST(PathInfo, EveryTruncationRejected) {
  for (const PathInfo& p : PathInfos()) {
    const std::vector<uint8_t> bytes = EncodePathInfo(p);
    for (size_t n = 0; n < bytes.size(); ++n) {
      const std::string err = PathInfoError(
          std::vector<uint8_t>(bytes.begin(), bytes.begin() + n));
      EXPECT_TRUE(err.find("past the end") != std::string::npos ||
                  err.find("bytes left") != std::string::npos)
          << "prefix " << n << ": " << err;
    }
  }
}

TEST(PathInfo, TrailingBytesRejected) {
  std::vector<uint8_t> bytes = EncodePathInfo(SamplePathInfo());
  bytes.push_back(0);
  EXPECT_EQ(PathInfoError(bytes), "path info: byte 9: trailing bytes");
}

TEST(PathInfo, UnknownStorageAndFlagsRejected) {
  EXPECT_EQ(PathInfoError(Varints({3, 0, 0, 0, 0, 0})),
            "path info: byte 0: unknown path storage 3");
  // 2 is kFromEdges.
  {
    PathInfo fe;
    std::string e;
    EXPECT_TRUE(DecodePathInfo(Varints({2, 0, 6, 1, 0, 0}), &fe, &e)) << e;
    EXPECT_EQ(fe.storage, PathInfo::kFromEdges);
  }
  EXPECT_NE(PathInfoError(Varints({uint64_t{1} << 32, 0, 0, 0, 0, 0}))
                .find("exceeds 32 bits"),
            std::string::npos);
  // flags at byte 3 (storage, base, n_paths one byte each); 3 at byte 4
  // after a two-byte n_paths.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 5, 32, 0, 0})),
            "path info: byte 3: unknown path flags");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 300, 33, 0, 0})),
            "path info: byte 4: unknown path flags");
  // Kept pre-counts need early termination, and bring their edge list.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 5, 2, 0, 0, 0})),
            "path info: byte 3: pre-counts kept without early termination");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 5, 3, 0, 0})),
            "path info: byte 6: pre-count edge count: varint runs past the "
            "end");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 5, 3, 0, 0, 2, 7, 7})),
            "path info: byte 8: pre-count edges not ascending");
  EXPECT_EQ(PathInfoError(Varints({1, 0, 5, uint64_t{1} << 31, 0, 0})),
            "path info: byte 3: unknown path flags");
  // Known flags pass.
  PathInfo info;
  std::string err;
  EXPECT_TRUE(DecodePathInfo(Varints({1, 0, 5, 1, 0, 0}), &info, &err))
      << err;
  EXPECT_EQ(info.flags, kPathFlagEarlyTermination);
  EXPECT_TRUE(DecodePathInfo(Varints({1, 0, 5, 3, 0, 0, 2, 4, 9}), &info,
                             &err))
      << err;
  EXPECT_EQ(info.flags, kPathFlagEarlyTermination | kPathFlagPrecountsKept);
  EXPECT_EQ(info.precount_edges, (std::vector<uint32_t>{4, 9}));
}

TEST(PathInfo, DerivedCounts) {
  // Flags 5 (early termination, derived counts): [2: path 1 at edge 3
  // (6), path 4 at block 2 (5)].
  PathInfo d = SamplePathInfo();
  d.flags |= kPathFlagDerivedCounts;
  d.derived = {{1, 3, false}, {4, 2, true}};
  EXPECT_EQ(EncodePathInfo(d),
            (std::vector<uint8_t>{0, 6, 6, 5, 2, 1, 4, 1, 3, 2, 1, 6, 4, 5}));
  PathInfo back;
  std::string err;
  ASSERT_TRUE(DecodePathInfo(EncodePathInfo(d), &back, &err)) << err;
  EXPECT_TRUE(SamePathInfo(d, back));
  // After kept pre-counts when both are there (flags 7).
  EXPECT_TRUE(DecodePathInfo(Varints({0, 0, 6, 7, 0, 0, 1, 4, 1, 5, 9}),
                             &back, &err))
      << err;
  EXPECT_EQ(back.precount_edges, (std::vector<uint32_t>{4}));
  ASSERT_EQ(back.derived.size(), 1u);
  EXPECT_EQ(back.derived[0], (PathInfo::Derived{5, 4, true}));
  // Paths in range, ascending, each once; the place fits 32 bits.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 5, 0, 0, 1, 6, 0})),
            "path info: byte 7: derived path 6 out of range");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 5, 0, 0, 2, 3, 0, 3, 2})),
            "path info: byte 9: derived paths not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 5, 0, 0, 2, 3, 0, 2, 2})),
            "path info: byte 9: derived paths not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 5, 0, 0, 1, 3,
                                   uint64_t{1} << 33})),
            "path info: byte 7: derived place out of range");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 5, 0, 0, 2, 3})),
            "path info: byte 6: derived count number 2 exceeds the 1 bytes "
            "left");
}

TEST(PathInfo, BalancedStarts) {
  // Flags 11 (early termination, kept pre-counts, balanced starts):
  // pre-count edges [1: 4], balanced [2: path 2 from block 5, path 5 from
  // block 3].
  PathInfo b = SamplePathInfo();
  b.flags |= kPathFlagPrecountsKept | kPathFlagBalancedStarts;
  b.precount_edges = {4};
  b.balanced = {{2, 5}, {5, 3}};
  EXPECT_EQ(EncodePathInfo(b), (std::vector<uint8_t>{0, 6, 6, 11, 2, 1, 4, 1,
                                                      3, 1, 4, 2, 2, 5, 5, 3}));
  PathInfo back;
  std::string err;
  ASSERT_TRUE(DecodePathInfo(EncodePathInfo(b), &back, &err)) << err;
  EXPECT_TRUE(SamePathInfo(b, back));
  // Only with kept pre-counts; paths in range and ascending; one per start.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 9, 0, 0, 0})),
            "path info: byte 3: balanced starts without kept pre-counts");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 11, 0, 0, 0, 1, 6, 2})),
            "path info: byte 8: balanced path 6 out of range");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 11, 0, 0, 0, 2, 3, 2, 3, 4})),
            "path info: byte 10: balanced paths not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 11, 0, 0, 0, 2, 3, 2, 4, 2})),
            "path info: byte 10: two balanced paths from block 2");
}

TEST(PathInfo, EntryBalanced) {
  // Flags 19 (early termination, kept pre-counts, entry balanced):
  // pre-count edges [1: 4], entry path 3, calls [2: function 0 block 5,
  // function 2 block 3].
  PathInfo b = SamplePathInfo();
  b.flags |= kPathFlagPrecountsKept | kPathFlagEntryBalanced;
  b.precount_edges = {4};
  b.entry_path = 3;
  b.entry_calls = {{0, 5}, {2, 3}};
  EXPECT_EQ(EncodePathInfo(b), (std::vector<uint8_t>{0, 6, 6, 19, 2, 1, 4, 1,
                                                      3, 1, 4, 3, 2, 0, 5, 2,
                                                      3}));
  PathInfo back;
  std::string err;
  ASSERT_TRUE(DecodePathInfo(EncodePathInfo(b), &back, &err)) << err;
  EXPECT_TRUE(SamePathInfo(b, back));
  // Only with kept pre-counts; the path in range; calls, ascending.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 17, 0, 0, 3, 1, 0, 5})),
            "path info: byte 3: entry balance without kept pre-counts");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 19, 0, 0, 0, 6, 1, 0, 5})),
            "path info: byte 7: entry-balanced path 6 out of range");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 19, 0, 0, 0, 3, 0})),
            "path info: byte 7: entry balance without calls");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 19, 0, 0, 0, 3, 2, 1, 5, 1, 5})),
            "path info: byte 11: entry-balanced calls not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 6, 19, 0, 0, 0, 3, 2, 1, 5, 0, 6})),
            "path info: byte 11: entry-balanced calls not ascending");
}

TEST(PathInfo, PathCountBelow2To63) {
  PathInfo info;
  std::string err;
  const uint64_t max = (uint64_t{1} << 63) - 1;
  EXPECT_TRUE(DecodePathInfo(Varints({0, 0, max, 0, 0, 0}), &info, &err))
      << err;
  EXPECT_EQ(info.n_paths, max);
  // n_paths at byte 2, after storage and a one-byte base.
  EXPECT_EQ(PathInfoError(Varints({0, 7, max + 1, 0, 0, 0})),
            "path info: byte 2: path count 9223372036854775808 exceeds "
            "2^63 - 1");
  EXPECT_NE(PathInfoError(Varints({0, 7, UINT64_MAX, 0, 0, 0}))
                .find("exceeds 2^63 - 1"),
            std::string::npos);
}

TEST(PathInfo, CutListsMustAscend) {
  // Each error names the offending element's first byte.
  //   bytes: 0 storage, 1 base, 2 n_paths, 3 flags, 4 count, 5.. edges.
  EXPECT_EQ(PathInfoError(Varints({0, 0, 1, 0, 2, 5, 5, 0})),
            "path info: byte 6: cut edges not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 1, 0, 3, 2, 300, 4, 0})),
            "path info: byte 8: cut edges not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 1, 0, 0, 2, 3, 3})),
            "path info: byte 7: cut blocks not ascending");
  EXPECT_EQ(PathInfoError(Varints({0, 0, 1, 0, 1, 9, 3, 2, 1000, 999})),
            "path info: byte 10: cut blocks not ascending");
  // Element values are u32.
  EXPECT_NE(PathInfoError(Varints({0, 0, 1, 0, 1, uint64_t{1} << 32, 0}))
                .find("cut edge 4294967296 exceeds 32 bits"),
            std::string::npos);
  // A count larger than the bytes left.
  EXPECT_NE(PathInfoError(Varints({0, 0, 1, 0, 0, 5, 2, 3}))
                .find("cut block count 5 exceeds the 2 bytes left"),
            std::string::npos);
}

TEST(PathInfo, NonMinimalVarintRejected) {
  // base 0 written as 0x80 0x00.
  EXPECT_NE(PathInfoError({0, 0x80, 0x00, 0, 0, 0, 0}).find("not minimal"),
            std::string::npos);
}

TEST(PathInfo, FuzzNeverCrashes) {
  std::mt19937_64 rng(7);
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> b = EncodePathInfo(SamplePathInfo());
    if (iter % 2) {
      b.resize(rng() % 16);
      for (uint8_t& x : b)  // mostly small bytes: plausible varints
        x = static_cast<uint8_t>(rng() % 8 ? rng() % 8 : rng());
    } else {
      b[rng() % b.size()] = static_cast<uint8_t>(rng());
    }
    PathInfo info;
    std::string err;
    if (DecodePathInfo(b, &info, &err)) {
      ++ok;
      EXPECT_EQ(EncodePathInfo(info), b);  // canonical
      EXPECT_LE(info.storage, 2u);
      EXPECT_LT(info.n_paths, uint64_t{1} << 63);
    } else {
      EXPECT_EQ(err.rfind("path info: byte ", 0), 0u) << err;
    }
  }
  EXPECT_GT(ok, 100);  // the fuzzer reaches valid encodings too
}

}  // namespace
}  // namespace ballarus
