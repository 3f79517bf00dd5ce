// merge_tree_test.cc — `merge` is associative and commutative byte for
// byte: profiles of several TUs (edge and path mode, dense counters and
// sparse path counts, counts wrapping past 2^64) merged in random trees and
// orders give the file one merge of all gives, whose counts are the sums
// computed here (modulo 2^64; runs added).  Shards of a test suite can so
// be merged in any order and any tree.
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "reconstruct/cli_test_util.h"
#include "reconstruct/path_test_fixtures.h"

namespace ballarus {
namespace {

using namespace cli_test;  // NOLINT: the tests' shared vocabulary

// What one TU's record should hold after the merge.
struct Expected {
  std::vector<uint64_t> counters;
  uint64_t runs = 0;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> sparse;
};

uint64_t StampOf(const std::vector<uint8_t>& meta) {
  ballarus_meta_header h;
  std::memcpy(&h, meta.data(), sizeof h);
  return h.stamp;
}

// Counts that are mostly small, sometimes anywhere in 64 bits (their sums
// wrap).
uint64_t DrawCount(std::mt19937_64& rng) {
  return rng() % 4 == 0 ? rng() : rng() % 100;
}

// Index of ph.c (path counts in a hash table) among the TUs.
constexpr size_t kHashedTu = 3;

class MergeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    PathProfile pp = PathOnly();
    TranslationUnit b = TuA();
    b.source = "b.c";
    metas_ = {EncodeMetadata(TuA()), EncodeMetadata(b),
              EncodeMetadata(pp.pd), EncodeMetadata(pp.ph)};
    sizes_ = {12, 12, pp.pd_counters.size(), 0};
    sparse_keys_ = pp.ph_sparse;
  }

  // Profile `i`: a random non-empty subset of the TUs, random counts.
  std::string MakeRun(int i, std::mt19937_64& rng) {
    std::vector<Rec> recs;
    uint64_t runs = 0;
    unsigned mask = 1 + rng() % ((1u << metas_.size()) - 1);
    for (size_t t = 0; t < metas_.size(); ++t) {
      if (!(mask >> t & 1)) continue;
      Rec r{metas_[t], std::vector<uint64_t>(sizes_[t])};
      for (uint64_t& c : r.counters) c = DrawCount(rng);
      r.runs = 1 + rng() % 4;
      for (const ballarus_sparse_entry& e : sparse_keys_) {  // ph.c only
        if (t == kHashedTu && rng() % 2)
          r.sparse.push_back({e.function, e.key, DrawCount(rng) | 1});
      }
      Add(t, r);
      runs = std::max(runs, r.runs);
      recs.push_back(r);
    }
    return WriteProfile("run" + std::to_string(i) + ".profile",
                        Profile(recs, runs));
  }

  void Add(size_t t, const Rec& r) {
    Expected& e = expected_[StampOf(metas_[t])];
    e.counters.resize(r.counters.size(), 0);
    for (size_t k = 0; k < r.counters.size(); ++k) e.counters[k] += r.counters[k];
    e.runs += r.runs;
    for (const ballarus_sparse_entry& s : r.sparse)
      e.sparse[{s.function, s.key}] += s.count;
  }

  // Merges paths[lo, hi) in a random tree, sides in random order.
  std::string Tree(const std::vector<std::string>& paths, size_t lo, size_t hi,
                   const std::string& tag, std::mt19937_64& rng) {
    if (hi - lo == 1) return paths[lo];
    size_t mid = lo + 1 + rng() % (hi - lo - 1);
    std::string l = Tree(paths, lo, mid, tag, rng);
    std::string r = Tree(paths, mid, hi, tag, rng);
    if (rng() % 2) std::swap(l, r);
    const std::string out = TmpDir() + "/" + tag + "_" + std::to_string(lo) +
                            "_" + std::to_string(hi) + ".profile";
    Result res = RunTool("merge -o '" + out + "' '" + l + "' '" + r + "'");
    EXPECT_EQ(res.status, 0) << res.err;
    return out;
  }

  void ExpectSums(const std::string& path) {
    ballarus_profile p{};
    char err[512];
    ASSERT_EQ(ballarus_profile_read_file(path.c_str(), &p, err, sizeof err), 0)
        << err;
    ASSERT_EQ(p.n_records, expected_.size());
    for (uint32_t i = 0; i < p.n_records; ++i) {
      const ballarus_profile_record& r = p.records[i];
      const Expected& e = expected_.at(r.stamp);
      EXPECT_EQ(std::vector<uint64_t>(r.counters, r.counters + r.n_counters),
                e.counters);
      EXPECT_EQ(r.runs, e.runs);
      std::map<std::pair<uint64_t, uint64_t>, uint64_t> sparse;
      for (uint64_t s = 0; s < r.n_sparse; ++s)
        sparse[{r.sparse[s].function, r.sparse[s].key}] = r.sparse[s].count;
      EXPECT_EQ(sparse, e.sparse);
    }
    ballarus_profile_free(&p);
  }

  std::vector<std::vector<uint8_t>> metas_;
  std::vector<size_t> sizes_;
  std::vector<ballarus_sparse_entry> sparse_keys_;
  std::map<uint64_t, Expected> expected_;
};

TEST_F(MergeTree, AnyTreeAndOrderEqualsOneMerge) {
  std::mt19937_64 rng(33);
  std::vector<std::string> runs;
  for (int i = 0; i < 7; ++i) runs.push_back(MakeRun(i, rng));
  std::string all;
  for (const std::string& r : runs) all += " '" + r + "'";
  const std::string flat = TmpDir() + "/flat.profile";
  Result res = RunTool("merge -o '" + flat + "'" + all);
  ASSERT_EQ(res.status, 0) << res.err;
  ExpectSums(flat);
  const std::string bytes = ReadFile(flat);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<std::string> order = runs;
    std::shuffle(order.begin(), order.end(), rng);
    const std::string root = Tree(order, 0, order.size(),
                                  "tree" + std::to_string(trial), rng);
    EXPECT_TRUE(ReadFile(root) == bytes) << "tree " << trial;
  }
}

}  // namespace
}  // namespace ballarus
