// named_runs_test.cc — a test's counts and the unnamed runs' counts as
// profiles of their own (reconstruct/named_runs.h), on a hand-made profile:
// two TU records (stamps 10 and 20, 3 and 2 counters, record 10 with
// sparse entries) and the tests "a" (both TUs) and "b" (TU 10 only).
#include "reconstruct/named_runs.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile_reader.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

// The whole profile; its arrays live in the fixture (never freed by
// ballarus_profile_free).
class NamedRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    unsigned char* meta = reinterpret_cast<unsigned char*>(meta_);
    records_[0] = Record(10, meta, c10_, 3, s10_, 2, 5);
    records_[1] = Record(20, meta, c20_, 2, nullptr, 0, 5);
    named_[0] = Named("a", 10, 2, a10_, 2, as10_, 1);
    named_[1] = Named("a", 20, 2, a20_, 1, nullptr, 0);
    named_[2] = Named("b", 10, 1, b10_, 1, bs10_, 1);
    whole_.runs = 5;
    whole_.n_records = 2;
    whole_.records = records_;
    whole_.n_named = 3;
    whole_.named = named_;
  }

  static ballarus_profile_record Record(uint64_t stamp, unsigned char* meta,
                                        uint64_t* c, uint64_t n,
                                        ballarus_sparse_entry* s, uint64_t ns,
                                        uint64_t runs) {
    ballarus_profile_record r{};
    r.stamp = stamp;
    r.identity = stamp + 1;
    r.runs = runs;
    r.metadata = meta;
    r.meta_size = 8;
    r.borrowed = 1;
    r.counters = c;
    r.n_counters = n;
    r.sparse = s;
    r.n_sparse = ns;
    return r;
  }

  static ballarus_named_record Named(const char* name, uint64_t stamp,
                                     uint64_t runs, ballarus_named_entry* d,
                                     uint64_t nd, ballarus_sparse_entry* s,
                                     uint64_t ns) {
    ballarus_named_record n{};
    n.name = const_cast<char*>(name);
    n.name_size = static_cast<uint32_t>(std::string(name).size());
    n.stamp = stamp;
    n.runs = runs;
    n.dense = d;
    n.n_dense = nd;
    n.sparse = s;
    n.n_sparse = ns;
    return n;
  }

  static std::vector<uint64_t> Counters(const ballarus_profile_record& r) {
    return std::vector<uint64_t>(r.counters, r.counters + r.n_counters);
  }

  uint64_t meta_[1] = {0};
  // Sums: counter 1 of TU 10 is 2^64 - 1 (a residue: an undone count).
  uint64_t c10_[3] = {7, UINT64_MAX, 4};
  uint64_t c20_[2] = {3, 1};
  ballarus_sparse_entry s10_[2] = {{1, 100, 9}, {1, 200, 2}};
  ballarus_named_entry a10_[2] = {{0, 3}, {1, 1}};
  ballarus_named_entry a20_[1] = {{0, 3}};
  ballarus_named_entry b10_[1] = {{2, 4}};
  ballarus_sparse_entry as10_[1] = {{1, 100, 5}};
  ballarus_sparse_entry bs10_[1] = {{1, 200, 2}};
  ballarus_profile_record records_[2];
  ballarus_named_record named_[3];
  ballarus_profile whole_{};
};

TEST_F(NamedRuns, NamesSortedOnce) {
  EXPECT_EQ(TestNames(whole_), (std::vector<std::string>{"a", "b"}));
}

TEST_F(NamedRuns, TestProfileHoldsEveryRecordWithTheTestsCounts) {
  ballarus_profile b{};
  ASSERT_TRUE(TestProfile(whole_, "b", &b));
  ASSERT_EQ(b.n_records, 2u);
  EXPECT_EQ(b.records[0].stamp, 10u);
  EXPECT_EQ(Counters(b.records[0]), (std::vector<uint64_t>{0, 0, 4}));
  ASSERT_EQ(b.records[0].n_sparse, 1u);
  EXPECT_EQ(b.records[0].sparse[0].key, 200u);
  EXPECT_EQ(b.records[0].sparse[0].count, 2u);
  EXPECT_EQ(b.records[0].runs, 1u);
  // TU 20, which b did not run: listed, at zero, with b's runs.
  EXPECT_EQ(b.records[1].stamp, 20u);
  EXPECT_EQ(Counters(b.records[1]), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(b.records[1].n_sparse, 0u);
  EXPECT_EQ(b.records[1].runs, 1u);
  EXPECT_EQ(b.runs, 1u);
  EXPECT_EQ(b.n_named, 0u);
  EXPECT_EQ(b.records[0].metadata, whole_.records[0].metadata);  // borrowed
  ballarus_profile_free(&b);
}

TEST_F(NamedRuns, UnnamedProfileIsTheSumMinusEveryTest) {
  ballarus_profile u{};
  UnnamedProfile(whole_, &u);
  ASSERT_EQ(u.n_records, 2u);
  // 7-3, (2^64-1)-1, 4-4 and 3-3, 1-0: modulo 2^64.
  EXPECT_EQ(Counters(u.records[0]), (std::vector<uint64_t>{4, UINT64_MAX - 1, 0}));
  EXPECT_EQ(Counters(u.records[1]), (std::vector<uint64_t>{0, 1}));
  // Sparse: key 100 9-5, key 200 2-2 dropped.
  ASSERT_EQ(u.records[0].n_sparse, 1u);
  EXPECT_EQ(u.records[0].sparse[0].key, 100u);
  EXPECT_EQ(u.records[0].sparse[0].count, 4u);
  // Runs: 5 - a's 2 - b's 1 on TU 10; on TU 20, which b did not run, b's
  // most runs (1) count too.
  EXPECT_EQ(u.records[0].runs, 2u);
  EXPECT_EQ(u.records[1].runs, 2u);
  EXPECT_EQ(u.runs, 2u);
  ballarus_profile_free(&u);
}

TEST_F(NamedRuns, NoSuchTestNamesTheTests) {
  ballarus_profile x{};
  EXPECT_FALSE(TestProfile(whole_, "c", &x));
  EXPECT_EQ(x.n_records, 0u);
  EXPECT_EQ(NoSuchTest(whole_, "c"), "no test 'c' in the profile (tests: a, b)");
  ballarus_profile none{};
  EXPECT_EQ(NoSuchTest(none, "c"),
            "no test 'c' in the profile (it has no named runs: see "
            "BALLARUS_TEST)");
}

}  // namespace
}  // namespace ballarus
