// combined_profile_test.cc — combined profiles of hand-made profiles: the
// statistics of derived quantities (blocks, edges, entry counts, untouched
// functions as zeros) against CombinedStats::Add of hand-computed counts,
// combining in any grouping gives the same bytes, and the file reader on
// truncated, damaged and hostile (re-checksummed) input.
#include "core/combined_profile.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/test_profiles.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

// loop(n) (core/test_profiles.h) in edge mode: counters on edges 2 (i < n
// taken: n per call), 4 (odd: n / 2 per call) and 8 (return: 1 per call).
TestRecord LoopRecord(const std::vector<uint64_t>& counters) {
  TestRecord r;
  r.tu.source = "loop.c";
  r.tu.cwd = "/src";
  r.tu.compiler = "gcc 12.2.0";
  r.tu.flags = BALLARUS_META_F_EDGE;
  r.tu.files = {"loop.c"};
  Function f = TestLoop("loop");
  f.edges[2].counter = 0;
  f.edges[4].counter = 1;
  f.edges[8].counter = 2;
  r.tu.functions = {f};
  r.counters = counters;
  return r;
}

// The observations: A never calls loop; B calls loop(2); C loop(5);
// D loop(4) twice.  Counters {edge 2, edge 4, edge 8} summed over calls.
const std::vector<std::vector<uint64_t>>& Observations() {
  static const std::vector<std::vector<uint64_t>> obs = {
      {0, 0, 0}, {2, 1, 1}, {5, 2, 1}, {8, 4, 2}};
  return obs;
}

void Observe(size_t i, CombinedProfile* c) {
  const std::string path = WriteTestProfile(
      "obs" + std::to_string(i), {LoopRecord(Observations()[i])});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  ASSERT_TRUE(c->AddObservation(p, "obs" + std::to_string(i), &err)) << err;
}

CombinedStats Of(const std::vector<uint64_t>& values) {
  CombinedStats s;
  for (uint64_t v : values) s.Add(v);
  return s;
}

CombinedProfile All() {
  CombinedProfile c;
  for (size_t i = 0; i < Observations().size(); ++i) Observe(i, &c);
  c.Finalize();
  return c;
}

TEST(CombinedProfile, StatisticsOfDerivedCounts) {
  CombinedProfile c = All();
  ASSERT_EQ(c.n(), 4u);
  EXPECT_EQ(c.labels(),
            (std::vector<std::string>{"obs0", "obs1", "obs2", "obs3"}));
  ASSERT_EQ(c.tus().size(), 1u);
  const CombinedFunction& f = c.tus()[0].functions[0];
  ASSERT_TRUE(f.touched());
  // Entry: calls 0, 1, 1, 2.  Block 3 (i < n?): n + 1 per call: 0, 3, 6,
  // 10.  Block 5 (odd work): 0, 1, 2, 4.  Edge 7 (back edge): n per call.
  EXPECT_EQ(f.entry, Of({0, 1, 1, 2}));
  EXPECT_EQ(c.Block(f, 3), Of({0, 3, 6, 10}));
  EXPECT_EQ(c.Block(f, 5), Of({0, 1, 2, 4}));
  EXPECT_EQ(c.Edge(f, 7), Of({0, 2, 5, 8}));
  EXPECT_EQ(f.entry.Mean(), mpq_class(1));
  // Variance: sum of squares / n - mean^2 = 145/4 - (19/4)^2.
  EXPECT_EQ(c.Block(f, 3).Variance(), mpq_class(219, 16));
  // Lines 13 (block 3) and 15 (block 5), gcov's counts of the function.
  EXPECT_EQ(f.lines.at({0, 13}), Of({0, 3, 6, 10}));
  EXPECT_EQ(f.lines.at({0, 15}), Of({0, 1, 2, 4}));
}

TEST(CombinedProfile, AnyGroupingGivesTheSameBytes) {
  CombinedProfile all = All();
  const std::string want = all.Serialize();
  // (obs3, obs0) + (obs2 + obs1), via the file form.
  CombinedProfile a, b;
  Observe(3, &a);
  Observe(0, &a);
  Observe(2, &b);
  Observe(1, &b);
  CombinedProfile a2, b2;
  std::string err;
  ASSERT_TRUE(CombinedProfile::Parse(a.Serialize(), &a2, &err)) << err;
  ASSERT_TRUE(CombinedProfile::Parse(b.Serialize(), &b2, &err)) << err;
  CombinedProfile ab;
  ASSERT_TRUE(ab.Combine(b2, &err)) << err;
  ASSERT_TRUE(ab.Combine(a2, &err)) << err;
  EXPECT_EQ(ab.Serialize(), want);
  // And one combined profile plus a raw observation.
  CombinedProfile c;
  Observe(1, &c);
  ASSERT_TRUE(c.Combine(a2, &err)) << err;
  Observe(2, &c);
  EXPECT_EQ(c.Serialize(), want);
}

TEST(CombinedProfile, ParsedEqualsWritten) {
  CombinedProfile all = All();
  const std::string bytes = all.Serialize();
  CombinedProfile back;
  std::string err;
  ASSERT_TRUE(CombinedProfile::Parse(bytes, &back, &err)) << err;
  EXPECT_EQ(back.Serialize(), bytes);
  EXPECT_EQ(back.Block(back.tus()[0].functions[0], 5), Of({0, 1, 2, 4}));
  EXPECT_EQ(back.tus()[0].tu.functions[0].name, "loop");
}

TEST(CombinedProfile, UntouchedFunctionsAreZeros) {
  CombinedProfile c;
  Observe(0, &c);
  Observe(0, &c);
  c.Finalize();
  const CombinedFunction& f = c.tus()[0].functions[0];
  EXPECT_FALSE(f.touched());
  EXPECT_EQ(c.Block(f, 3), Of({0, 0}));
  CombinedProfile back;
  std::string err;
  ASSERT_TRUE(CombinedProfile::Parse(c.Serialize(), &back, &err)) << err;
  EXPECT_EQ(back.Serialize(), c.Serialize());
}

TEST(CombinedProfile, DifferentBinsAreRefused) {
  CombinedProfile a(15), b(65);
  std::string err;
  EXPECT_FALSE(a.Combine(b, &err));
  EXPECT_EQ(err, "combined profiles with 65 and 15 bins cannot be combined");
}

// --- The reader on bad input. ---

std::string Good() {
  CombinedProfile all = All();
  return all.Serialize();
}

void Store64(std::string* b, size_t at, uint64_t v) {
  std::memcpy(&(*b)[at], &v, 8);
}

// Where the varint at `at` ends.
size_t VarintEnd(const std::string& b, size_t at) {
  while (static_cast<uint8_t>(b[at]) & 0x80) ++at;
  return at + 1;
}

// `bytes` with the body size and both checks recomputed: only the
// structural checks can refuse it.
std::string Rechecked(std::string bytes) {
  Store64(&bytes, 24, bytes.size() - 48);
  Store64(&bytes, 32, ballarus_hash64(bytes.data() + 48, bytes.size() - 48));
  Store64(&bytes, 40, ballarus_hash64(bytes.data(), 40));
  return bytes;
}

std::string ParseError(const std::string& bytes) {
  CombinedProfile out;
  std::string err;
  EXPECT_FALSE(CombinedProfile::Parse(bytes, &out, &err));
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  return err;
}

TEST(CombinedReader, EveryTruncationIsRefused) {
  const std::string good = Good();
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(ParseError(good.substr(0, n)).empty()) << n;
  EXPECT_EQ(ParseError(good.substr(0, 47)),
            "truncated: 47 bytes, a combined profile's header has 48");
  EXPECT_EQ(ParseError(good.substr(0, 60)).rfind("truncated: the header", 0),
            0u);
}

TEST(CombinedReader, EveryDamagedByteIsRefused) {
  const std::string good = Good();
  for (size_t i = 0; i < good.size(); ++i) {
    for (int x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      EXPECT_FALSE(ParseError(bad).empty()) << i;
    }
  }
  std::string bad = good;
  bad[good.size() - 1] ^= 1;
  EXPECT_EQ(ParseError(bad),
            "damaged: the whole-file check does not match the contents");
}

TEST(CombinedReader, HugeCountsAreRefusedBeforeUse) {
  const std::string good = Good();
  // n = 2^64 - 1 observations in a small file.
  std::string bad = good;
  Store64(&bad, 16, ~0ull);
  EXPECT_NE(ParseError(Rechecked(bad)).find(
                "18446744073709551615 observations, but the body has"),
            std::string::npos);
  // The TU count (after the labels "obs0".."obs3": 4 x 5 bytes) as 2^63.
  ASSERT_EQ(good[48 + 20], 1);
  bad = good.substr(0, 68) + std::string(9, '\x80') + '\x01' +
        good.substr(69);
  EXPECT_NE(ParseError(Rechecked(bad)).find("TU count 9223372036854775808 "
                                            "exceeds what the remaining"),
            std::string::npos);
  // A metadata size beyond the file: the varint after the TU count, the
  // stamp and the runs (1 byte: 4 runs).
  size_t at = VarintEnd(good, 69);  // after the stamp
  ASSERT_EQ(good[at], 4);
  at = at + 1;
  const size_t end = VarintEnd(good, at);
  bad = good.substr(0, at) + std::string(8, '\x80') + '\x40' + good.substr(end);
  EXPECT_NE(ParseError(Rechecked(bad)).find("metadata size " +
                                            std::to_string(1ull << 62) +
                                            " out of range"),
            std::string::npos);
  // A version from the future, a bin count out of range.
  bad = good;
  bad[8] = 2;
  EXPECT_EQ(ParseError(Rechecked(bad)),
            "unsupported combined profile version 2 (expected 1)");
  bad = good;
  bad[12] = 66;
  EXPECT_EQ(ParseError(Rechecked(bad)), "offset 12: 66 bins (2 to 65 allowed)");
  EXPECT_EQ(ParseError("BLRSPROF" + good.substr(8)),
            "not a combined profile (no BLRSCOMB magic)");
}

TEST(CombinedReader, FileErrorsNameTheFile) {
  CombinedProfile out;
  std::string err;
  EXPECT_FALSE(ReadCombinedProfile("/nonexistent/x.bcomb", &out, &err));
  EXPECT_EQ(err, "/nonexistent/x.bcomb: cannot open");
}

}  // namespace
}  // namespace ballarus
