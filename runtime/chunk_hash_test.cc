// chunk_hash_test.cc — the chunk hashes a runtime parse keeps
// (ballarus_profile_record.chunk_hash): a merge into a parsed record and
// the write that follows give the bytes of the same sums written without
// them, with every check as ballarus_format.h defines it (recomputed
// independently by ResealAll); the cache is what the writer uses (a wrong
// entry shows in the bytes), and a copy of a record does not carry it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/profile_io.h"
#include "runtime/profile_test_util.h"

namespace ballarus_test {
namespace {

constexpr uint64_t kN = 2600;  // five whole chunks and one of 40 counters

const std::vector<uint8_t>& BigBlob() {
  static const std::vector<uint8_t> b = Blob("/w/c.bprof", "function gamma", kN);
  return b;
}

// Counts everywhere but chunk 3 (zero), so both hashing paths are cached.
std::vector<uint64_t> OldCounts() {
  std::vector<uint64_t> c(kN, 0);
  for (uint64_t i = 0; i < kN; i++)
    if (i / 512 != 3) c[i] = i * 2654435761u + 1;
  return c;
}

// This run's counts: in chunk 1 (block 9) and in the short last chunk.
std::vector<uint64_t> Delta() {
  std::vector<uint64_t> d(kN, 0);
  d[600] = 5;
  d[601] = UINT64_MAX;  // wraps modulo 2^64
  d[2590] = 7;
  return d;
}

// The old file's bytes, in 8-aligned storage (counters are lent from it).
struct File {
  std::vector<uint64_t> words;
  uint64_t size = 0;
  unsigned char* data() { return reinterpret_cast<unsigned char*>(words.data()); }
};

File OldFile() {
  ballarus_profile p = Empty(3);
  Add(&p, BigBlob(), OldCounts(), 3);
  Add(&p, kB, {9}, 2);
  const std::vector<uint8_t> b = Bytes(p);
  ballarus_profile_free(&p);
  File f;
  f.words.resize((b.size() + 7) / 8);
  f.size = b.size();
  memcpy(f.data(), b.data(), b.size());
  return f;
}

void ParseBorrowing(File* f, ballarus_profile* out) {
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_parse_borrowing(f->data(), f->size, nullptr, out,
                                             err, sizeof err),
            0)
      << err;
}

// This run as the runtime builds it: a block map marking the blocks
// counted (9, and 40 of the last chunk).
ballarus_profile Mine() {
  ballarus_profile m = Empty(1);
  Add(&m, BigBlob(), Delta(), 1);
  const uint64_t blocks = (kN + 63) / 64;
  unsigned char* map = static_cast<unsigned char*>(calloc(blocks, 1));
  map[600 / 64] = 1;
  map[2590 / 64] = 1;
  m.records[0].block_map = map;
  return m;
}

// What the merge must write: the sums, serialised with no cache at all.
std::vector<uint8_t> Expected() {
  std::vector<uint64_t> sum = OldCounts();
  const std::vector<uint64_t> d = Delta();
  for (uint64_t i = 0; i < kN; i++) sum[i] += d[i];
  ballarus_profile p = Empty(4);
  Add(&p, BigBlob(), sum, 4);
  Add(&p, kB, {9}, 2);
  std::vector<uint8_t> b = Bytes(p);
  ballarus_profile_free(&p);
  return b;
}

TEST(ChunkHash, MergedWithKeptHashesWritesTheSumsBytes) {
  File f = OldFile();
  ballarus_profile old, mine = Mine();
  ParseBorrowing(&f, &old);
  ballarus_profile_record* r =
      const_cast<ballarus_profile_record*>(Find(old, StampOf(BigBlob())));
  ASSERT_NE(r, nullptr);
  ASSERT_NE(r->chunk_hash, nullptr);
  for (uint64_t k = 0; k < 6; k++) EXPECT_NE(r->chunk_hash[k], 0u) << k;
  const uint64_t zero_chunk = r->chunk_hash[3];
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_update(&old, &mine, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  // The chunks added into are no longer known; the others are.
  EXPECT_EQ(r->chunk_hash[1], 0u);
  EXPECT_EQ(r->chunk_hash[5], 0u);
  for (uint64_t k : {0, 2, 3, 4}) EXPECT_NE(r->chunk_hash[k], 0u) << k;
  const std::vector<uint8_t> got = Bytes(old), want = Expected();
  EXPECT_EQ(got, want);
  // Every check as the format defines it, recomputed from the bytes.
  std::vector<uint8_t> again = got;
  ResealAll(&again);
  EXPECT_EQ(again, got);
  // The writer takes the kept hashes: a wrong one shows in the bytes.
  r->chunk_hash[3] = zero_chunk ^ 1;
  EXPECT_NE(Bytes(old), want);
  r->chunk_hash[3] = zero_chunk;
  EXPECT_EQ(Bytes(old), want);
  ballarus_profile_free(&old);
  ballarus_profile_free(&mine);
}

TEST(ChunkHash, ACopyDoesNotCarryTheHashes) {
  File f = OldFile();
  ballarus_profile parsed, dst = Empty(0);
  ParseBorrowing(&f, &parsed);
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_merge(&dst, &parsed, err, sizeof err), 0) << err;
  const ballarus_profile_record* c = Find(dst, StampOf(BigBlob()));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->chunk_hash, nullptr);
  EXPECT_EQ(Bytes(dst), Bytes(parsed));
  // Counts written into the copy directly (as ballarus-reconstruct's
  // tools do) are hashed anew: the record check still verifies.
  c->counters[0] += 1;
  const std::vector<uint8_t> b = Bytes(dst);
  std::vector<uint8_t> again = b;
  ResealAll(&again);
  EXPECT_EQ(again, b);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&parsed);
}

// A parse that does not lend counters (ballarus-reconstruct's) keeps none.
TEST(ChunkHash, OnlyTheRuntimesParseKeepsThem) {
  File f = OldFile();
  ballarus_profile p;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_parse(f.data(), f.size, &p, err, sizeof err), 0)
      << err;
  for (uint32_t i = 0; i < p.n_records; i++)
    EXPECT_EQ(p.records[i].chunk_hash, nullptr);
  ballarus_profile_free(&p);
}

}  // namespace
}  // namespace ballarus_test
