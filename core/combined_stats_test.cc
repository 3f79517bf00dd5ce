// Tests of CombinedStats: hand-computed statistics, exact composition of
// combines (byte for byte), and refusal of damaged records.
#include "core/combined_stats.h"

#include <gtest/gtest.h>

#include <random>

namespace ballarus {
namespace {

constexpr uint64_t kMax64 = ~static_cast<uint64_t>(0);

std::string Bytes(const CombinedStats& s) {
  std::string out;
  s.Serialize(&out);
  return out;
}

CombinedStats Of(const std::vector<uint64_t>& values,
                 unsigned bins = kDefaultBins) {
  CombinedStats s(bins);
  for (uint64_t v : values) EXPECT_TRUE(s.Add(v));
  return s;
}

CombinedStats Combined(CombinedStats a, const CombinedStats& b) {
  std::string error;
  EXPECT_TRUE(a.Combine(b, &error)) << error;
  return a;
}

TEST(CombinedStatsTest, BinsByHand) {
  // 15 bins: 0 | [1,32) | [32,1024) | [1024,16384) | [2^14, 2^19) ...
  // (bin k starts at 2^ceil(64 (k-1) / 14)); the last bin holds 2^60 and up.
  EXPECT_EQ(BinOf(0, 15), 0u);
  EXPECT_EQ(BinOf(1, 15), 1u);
  EXPECT_EQ(BinOf(31, 15), 1u);
  EXPECT_EQ(BinOf(32, 15), 2u);
  EXPECT_EQ(BinOf(1023, 15), 2u);
  EXPECT_EQ(BinOf(1024, 15), 3u);
  EXPECT_EQ(BinOf(16383, 15), 3u);
  EXPECT_EQ(BinOf(16384, 15), 4u);
  EXPECT_EQ(BinOf(uint64_t{1} << 59, 15), 13u);
  EXPECT_EQ(BinOf(uint64_t{1} << 60, 15), 14u);
  EXPECT_EQ(BinOf(kMax64, 15), 14u);
  EXPECT_EQ(BinLowerBound(1, 15), 1u);
  EXPECT_EQ(BinLowerBound(2, 15), 32u);
  EXPECT_EQ(BinLowerBound(3, 15), 1024u);
  EXPECT_EQ(BinLowerBound(4, 15), 16384u);
  EXPECT_EQ(BinLowerBound(14, 15), uint64_t{1} << 60);
  // 65 bins: one per power of two.
  EXPECT_EQ(BinOf(1, 65), 1u);
  EXPECT_EQ(BinOf(2, 65), 2u);
  EXPECT_EQ(BinOf(3, 65), 2u);
  EXPECT_EQ(BinOf(kMax64, 65), 64u);
  EXPECT_EQ(BinLowerBound(64, 65), uint64_t{1} << 63);
  // Every bound is the first value of its bin, for every bin count.
  for (unsigned bins = kMinBins; bins <= kMaxBins; ++bins) {
    for (unsigned k = 1; k < bins; ++k) {
      uint64_t lo = BinLowerBound(k, bins);
      EXPECT_EQ(BinOf(lo, bins), k) << bins << " bins, bin " << k;
      if (k > 1) {
        EXPECT_EQ(BinOf(lo - 1, bins), k - 1) << bins << " bins, bin " << k;
      }
    }
  }
}

TEST(CombinedStatsTest, FiveObservationsByHand) {
  CombinedStats s = Of({10, 0, 3, 100, 3});
  EXPECT_EQ(s.n(), 5u);
  EXPECT_TRUE(s.sum() == 116);
  EXPECT_EQ(s.sum_of_squares().ToMpz(), 10118);  // 100 + 0 + 9 + 10000 + 9
  EXPECT_EQ(s.min(), 0u);
  EXPECT_EQ(s.max(), 100u);
  EXPECT_EQ(s.Mean(), mpq_class(116, 5));
  // (5 * 10118 - 116^2) / 25 = (50590 - 13456) / 25.
  EXPECT_EQ(s.Variance(), mpq_class(37134, 25));
  std::vector<uint64_t> hist(15, 0);
  hist[0] = 1;  // 0
  hist[1] = 3;  // 3, 3, 10
  hist[2] = 1;  // 100
  EXPECT_EQ(s.histogram(), hist);
}

TEST(CombinedStatsTest, TwoPlusThreeIsFive) {
  CombinedStats five = Of({10, 0, 3, 100, 3});
  CombinedStats two = Of({100, 3}), three = Of({0, 10, 3});
  EXPECT_EQ(Bytes(Combined(two, three)), Bytes(five));
  EXPECT_EQ(Bytes(Combined(three, two)), Bytes(five));
  CombinedStats back;
  std::string error;
  ASSERT_TRUE(CombinedStats::ParseAll(Bytes(five), &back, &error)) << error;
  EXPECT_EQ(back, five);
  EXPECT_EQ(Bytes(back), Bytes(five));
}

TEST(CombinedStatsTest, SumOfSquaresPast128Bits) {
  // 3 (2^64 - 1)^2 > 2^129: the high part of the 192-bit sum is used.
  CombinedStats s = Of({kMax64, kMax64, kMax64});
  mpz_class m = mpz_class("18446744073709551615");
  EXPECT_EQ(s.sum_of_squares().ToMpz(), 3 * m * m);
  EXPECT_GT(s.sum_of_squares().hi, 0u);
  EXPECT_EQ(s.Mean(), mpq_class(m));
  EXPECT_EQ(s.Variance(), 0);
  CombinedStats back;
  std::string error;
  ASSERT_TRUE(CombinedStats::ParseAll(Bytes(s), &back, &error)) << error;
  EXPECT_EQ(back, s);
}

TEST(CombinedStatsTest, AddZerosIsRepeatedAddOfZero) {
  // A sparse counter touched by 2 of 5 runs: its values, then 3 zeros.
  CombinedStats sparse = Of({3, 100});
  ASSERT_TRUE(sparse.AddZeros(3));
  EXPECT_EQ(Bytes(sparse), Bytes(Of({3, 100, 0, 0, 0})));
  CombinedStats only = CombinedStats();
  ASSERT_TRUE(only.AddZeros(2));
  EXPECT_EQ(Bytes(only), Bytes(Of({0, 0})));
  ASSERT_TRUE(only.AddZeros(0));
  EXPECT_EQ(Bytes(only), Bytes(Of({0, 0})));
  CombinedStats none = CombinedStats();
  ASSERT_TRUE(none.AddZeros(0));
  EXPECT_EQ(Bytes(none), Bytes(CombinedStats()));
}

TEST(CombinedStatsTest, EmptyIsNeutral) {
  CombinedStats a = Of({7, 0, 9});
  EXPECT_EQ(Bytes(Combined(a, CombinedStats())), Bytes(a));
  EXPECT_EQ(Bytes(Combined(CombinedStats(), a)), Bytes(a));
  EXPECT_EQ(CombinedStats().Mean(), 0);
  EXPECT_EQ(CombinedStats().Variance(), 0);
}

TEST(CombinedStatsTest, CombineRefusesOtherBinCounts) {
  CombinedStats a = Of({1}, 15), b = Of({2}, 16);
  std::string error;
  EXPECT_FALSE(a.Combine(b, &error));
  EXPECT_NE(error.find("bins"), std::string::npos) << error;
  EXPECT_EQ(a, Of({1}, 15));
}

TEST(CombinedStatsTest, ObservationCountLimit) {
  // 2^64 - 1 zero observations, written by hand: version 1, 2 bins,
  // n = 2^64 - 1 (ten bytes), min, max, sum, sum of squares 0, bins n and 0.
  std::string n_bytes = std::string(9, '\xff') + '\x01';
  std::string full = std::string("\x01\x02") + n_bytes +
                     std::string(5, '\0') + n_bytes + '\0';
  full += static_cast<char>(Crc8(full.data(), full.size()));
  CombinedStats s(2);
  std::string error;
  ASSERT_TRUE(CombinedStats::ParseAll(full, &s, &error)) << error;
  EXPECT_EQ(s.n(), kMax64);
  EXPECT_EQ(Bytes(s), full);
  CombinedStats before = s;
  EXPECT_FALSE(s.Add(0));
  EXPECT_FALSE(s.AddZeros(1));
  EXPECT_FALSE(s.Combine(Of({0}, 2), &error));
  EXPECT_NE(error.find("2^64"), std::string::npos) << error;
  EXPECT_EQ(s, before);
  EXPECT_TRUE(s.Combine(CombinedStats(2), &error));  // nothing to add
  EXPECT_TRUE(s.AddZeros(0));
  EXPECT_EQ(s, before);
  // The limit is reached by AddZeros as well.
  CombinedStats z(2);
  ASSERT_TRUE(z.AddZeros(kMax64));
  EXPECT_EQ(Bytes(z), full);
}

// Observations drawn so that zeros, small counts and counts near 2^64 all
// occur.
uint64_t Draw(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return 0;
    case 1: return rng() % 50;
    case 2: return rng() >> (rng() % 64);
    default: return kMax64 - rng() % 3;
  }
}

// Combines leaves [lo, hi) in a random binary tree.
CombinedStats Tree(const std::vector<CombinedStats>& leaves, size_t lo,
                   size_t hi, std::mt19937_64& rng) {
  if (hi - lo == 1) return leaves[lo];
  size_t mid = lo + 1 + rng() % (hi - lo - 1);
  CombinedStats left = Tree(leaves, lo, mid, rng);
  CombinedStats right = Tree(leaves, mid, hi, rng);
  return rng() % 2 ? Combined(left, right) : Combined(right, left);
}

TEST(CombinedStatsTest, RandomTreesEqualOneFlatCombine) {
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 300; ++trial) {
    unsigned bins = kMinBins + rng() % (kMaxBins - kMinBins + 1);
    std::vector<uint64_t> values(1 + rng() % 40);
    for (uint64_t& v : values) v = Draw(rng);
    // Leaves of one to three observations each, shuffled.
    std::vector<CombinedStats> leaves;
    for (size_t i = 0; i < values.size();) {
      size_t k = std::min<size_t>(1 + rng() % 3, values.size() - i);
      leaves.push_back(Of({values.begin() + i, values.begin() + i + k}, bins));
      i += k;
    }
    // Sometimes a leaf of zeros added at once, as for untouched counters.
    if (uint64_t zeros = rng() % 3) {
      CombinedStats z(bins);
      ASSERT_TRUE(z.AddZeros(zeros));
      leaves.push_back(z);
      values.insert(values.end(), zeros, 0);
    }
    std::shuffle(leaves.begin(), leaves.end(), rng);
    CombinedStats flat = Of(values, bins);
    CombinedStats tree = Tree(leaves, 0, leaves.size(), rng);
    ASSERT_EQ(Bytes(tree), Bytes(flat)) << "trial " << trial;
    // Independent oracle: GMP sums and the bins counted directly.
    mpz_class sum = 0, sq = 0;
    std::vector<uint64_t> hist(bins, 0);
    for (uint64_t v : values) {
      mpz_class z = static_cast<unsigned long>(v);
      sum += z;
      sq += z * z;
      ++hist[BinOf(v, bins)];
    }
    mpz_class n = static_cast<unsigned long>(values.size());
    mpq_class mean(sum, n);
    mean.canonicalize();
    EXPECT_EQ(tree.Mean(), mean);
    mpq_class var(n * sq - sum * sum, n * n);
    var.canonicalize();
    EXPECT_EQ(tree.Variance(), var);
    EXPECT_EQ(tree.histogram(), hist);
    EXPECT_EQ(tree.min(), *std::min_element(values.begin(), values.end()));
    EXPECT_EQ(tree.max(), *std::max_element(values.begin(), values.end()));
  }
}

TEST(CombinedStatsTest, TruncatedRecordsRefused) {
  std::string good = Bytes(Of({10, 0, 3, 100, kMax64}));
  for (size_t len = 0; len < good.size(); ++len) {
    CombinedStats s;
    std::string error;
    EXPECT_FALSE(CombinedStats::ParseAll(good.substr(0, len), &s, &error))
        << "prefix of " << len << " bytes";
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  }
  CombinedStats s;
  std::string error;
  EXPECT_FALSE(CombinedStats::ParseAll(good + '\0', &s, &error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(CombinedStatsTest, Crc8CheckValue) {
  // The catalogued check value of CRC-8/SMBUS.
  EXPECT_EQ(Crc8("123456789", 9), 0xF4);
  EXPECT_EQ(Crc8("", 0), 0);
}

// `bytes` without its last (checksum) byte, with the checksum recomputed:
// damage a writer could produce, which only the consistency checks catch.
std::string Reseal(std::string bytes) {
  bytes.pop_back();
  return bytes + static_cast<char>(Crc8(bytes.data(), bytes.size()));
}

TEST(CombinedStatsTest, ChecksumMismatchRefused) {
  std::string d = Bytes(Of({10, 0, 3, 100, 3}));
  d.back() ^= 1;
  CombinedStats s;
  std::string error;
  EXPECT_FALSE(CombinedStats::ParseAll(d, &s, &error));
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
}

TEST(CombinedStatsTest, NamedDamageRefused) {
  std::string good = Bytes(Of({10, 0, 3, 100, 3}));
  // Layout: version, bins, n=5, min=0, max=100, sum=116, sumsq lo=10118
  // (2 bytes), sumsq hi=0, 15 bins, checksum.  Each damaged record below
  // carries a correct checksum, so its consistency is what refuses it.
  auto refused = [&](std::string bytes, const char* why) {
    bytes = Reseal(bytes);
    CombinedStats s;
    std::string error;
    EXPECT_FALSE(CombinedStats::ParseAll(bytes, &s, &error)) << why;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  std::string d = good;
  d[0] = 2;
  refused(d, "version");
  d = good;
  d[1] = 66;
  refused(d, "bins");
  d = good;
  d[2] = 6;  // n = 6 but the bins hold 5
  refused(d, "histogram does not sum");
  d = good;
  d[4] = 2;  // max = 2: 100 lies outside
  refused(d, "damaged");
  d = good;
  d[3] = 4;  // min = 4 but a zero was observed
  refused(d, "damaged");
  d = good;
  d[5] = 99;   // sum = 99 < max + 4 min = 100
  refused(d, "sum impossible");
  d = good;
  d[2] = 0;  // no observations but a histogram
  refused(d, "no observations");
  // A non-canonical varint: n = 5 as 0x85 0x00.
  d = good.substr(0, 2) + "\x85" + std::string(1, '\0') + good.substr(3);
  refused(d, "non-canonical");
  // n past 64 bits.
  d = good.substr(0, 2) + std::string(10, '\xff') + '\x01' + good.substr(3);
  refused(d, "exceeds 64 bits");
}

TEST(CombinedStatsTest, AnySingleByteDamageRefused) {
  // Every change of one byte is refused (the checksum catches it when the
  // structure does not), and nothing crashes.
  std::string good = Bytes(Of({10, 0, 3, 100, kMax64, 7, 7}));
  int refused = 0, total = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int b = 0; b < 256; ++b) {
      if (static_cast<char>(b) == good[i]) continue;
      std::string d = good;
      d[i] = static_cast<char>(b);
      CombinedStats s;
      std::string error;
      ++total;
      if (!CombinedStats::ParseAll(d, &s, &error)) {
        EXPECT_FALSE(error.empty());
        ++refused;
        continue;
      }
      ADD_FAILURE() << "byte " << i << " = " << b << " accepted";
    }
  }
  EXPECT_EQ(refused, total);
  EXPECT_EQ(total, static_cast<int>(good.size()) * 255);
}

}  // namespace
}  // namespace ballarus
