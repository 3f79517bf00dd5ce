// profile_io_test.cc — tests of the profile file codec: round trips,
// determinism, merge arithmetic (counts modulo 2^64, runs saturating,
// sparse entries),
// conflicts, and rejection of every truncation and of bit flips.
#include "runtime/profile_io.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "runtime/profile_test_util.h"

namespace ballarus_test {
namespace {

TEST(ProfileIo, RoundTripKeepsEveryValue) {
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile q;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &q, err,
                                   sizeof err),
            0)
      << err;
  EXPECT_EQ(q.runs, 4u);
  ASSERT_EQ(q.n_records, 2u);
  const ballarus_profile_record* a = Find(q, StampOf(kA));
  const ballarus_profile_record* b = Find(q, StampOf(kB));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->identity, IdentityOf("/w/a.bprof"));
  EXPECT_EQ(a->runs, 4u);
  EXPECT_EQ(Counters(a), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(std::vector<uint8_t>(a->metadata, a->metadata + a->meta_size), kA);
  EXPECT_EQ(b->identity, IdentityOf("/w/b.bprof"));
  EXPECT_EQ(b->runs, 2u);
  EXPECT_EQ(Counters(b), (std::vector<uint64_t>{UINT64_MAX}));
  ASSERT_EQ(b->n_sparse, 2u);
  EXPECT_EQ(b->sparse[0].function, 1u);
  EXPECT_EQ(b->sparse[0].key, 7u);
  EXPECT_EQ(b->sparse[0].count, 70u);
  EXPECT_EQ(b->sparse[1].function, 2u);
  EXPECT_EQ(b->sparse[1].count, 5u);
  // Records sorted by stamp; the bytes re-serialise identically.
  EXPECT_LT(q.records[0].stamp, q.records[1].stamp);
  EXPECT_EQ(Bytes(q), bytes);
  // Size: header + 2 x (record header + padded meta) + counters + sparse.
  auto pad = [](size_t n) { return (n + 7) / 8 * 8; };
  EXPECT_EQ(bytes.size(), 40 + 2 * 56 + pad(kA.size()) + pad(kB.size()) +
                              3 * 8 + 1 * 8 + 2 * 24);
  ballarus_profile_free(&p);
  ballarus_profile_free(&q);
}

TEST(ProfileIo, EmptyProfileRoundTrips) {
  ballarus_profile p = Empty(0);
  std::vector<uint8_t> bytes = Bytes(p);
  ASSERT_EQ(bytes.size(), 40u);
  ballarus_profile q;
  char err[256];
  ASSERT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &q, err,
                                   sizeof err),
            0)
      << err;
  EXPECT_EQ(q.n_records, 0u);
  ballarus_profile_free(&q);
}

TEST(ProfileIo, SerializationIsDeterministicWhateverTheRecordOrder) {
  ballarus_profile p = Empty(3), q = Empty(3);
  Add(&p, kA, {1, 2, 3}, 1);
  Add(&p, kB, {9}, 2);
  Add(&q, kB, {9}, 2);
  Add(&q, kA, {1, 2, 3}, 1);
  EXPECT_EQ(Bytes(p), Bytes(q));
  ballarus_profile_free(&p);
  ballarus_profile_free(&q);
}

TEST(ProfileIo, SerializeRefusesDuplicateStampsAndBadMetadata) {
  ballarus_profile p = Empty(1);
  Add(&p, kA, {1, 2, 3}, 1);
  Add(&p, kA, {1, 2, 3}, 1);
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  char err[256] = "";
  EXPECT_EQ(ballarus_profile_serialize(&p, &buf, &size, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("two records with stamp"),
            std::string::npos)
      << err;
  ballarus_profile_free(&p);

  ballarus_profile q = Empty(1);
  Add(&q, kA, {1, 2, 3}, 1);
  q.records[0].metadata[60] ^= 1;  // body no longer hashes to the stamp
  EXPECT_EQ(ballarus_profile_serialize(&q, &buf, &size, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("not the hash of the body"),
            std::string::npos)
      << err;
  ballarus_profile_free(&q);
}

TEST(ProfileIo, MergeAddsEqualStampsAndCopiesNewOnes) {
  ballarus_profile dst = Empty(2), src = Empty(3);
  Add(&dst, kA, {1, 2, UINT64_MAX - 1}, 2, {{1, 1, 5}, {1, 3, 1}});
  Add(&src, kA, {10, 20, 5}, 3, {{0, 9, 9}, {1, 1, 2}, {2, 0, 1}});
  Add(&src, kB, {7}, 1);
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), 0) << err;
  EXPECT_EQ(dst.runs, 5u);
  ASSERT_EQ(dst.n_records, 2u);
  EXPECT_LT(dst.records[0].stamp, dst.records[1].stamp);
  const ballarus_profile_record* a = Find(dst, StampOf(kA));
  ASSERT_NE(a, nullptr);
  // Modulo 2^64: (2^64 - 2) + 5 = 3 (see MergeAddsCountsModulo2To64...).
  EXPECT_EQ(Counters(a), (std::vector<uint64_t>{11, 22, 3}));
  EXPECT_EQ(a->runs, 5u);
  ASSERT_EQ(a->n_sparse, 4u);
  const uint64_t want[4][3] = {{0, 9, 9}, {1, 1, 7}, {1, 3, 1}, {2, 0, 1}};
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ(a->sparse[i].function, want[i][0]) << i;
    EXPECT_EQ(a->sparse[i].key, want[i][1]) << i;
    EXPECT_EQ(a->sparse[i].count, want[i][2]) << i;
  }
  const ballarus_profile_record* b = Find(dst, StampOf(kB));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Counters(b), (std::vector<uint64_t>{7}));
  EXPECT_EQ(b->runs, 1u);
  // The copy is independent of src.
  ballarus_profile_free(&src);
  EXPECT_EQ(Counters(Find(dst, StampOf(kB))), (std::vector<uint64_t>{7}));
  ballarus_profile_free(&dst);
}

// Counts are residues modulo 2^64 (ballarus_format.h): a dump may carry the
// "-1" (2^64-1) that undoes a path count an earlier dump already wrote, and
// merging must then give back the true count.  Runs never decrease and
// still saturate.
TEST(ProfileIo, MergeAddsCountsModulo2To64AndSaturatesRuns) {
  ballarus_profile dst = Empty(UINT64_MAX - 1), src = Empty(5);
  Add(&dst, kB, {7}, UINT64_MAX - 1,
      {{0, 0, 1}, {0, 1, 5}, {0, 2, UINT64_MAX}, {3, 9, 2}});
  Add(&src, kB, {UINT64_MAX}, 5,  // dense -1
      {{0, 0, UINT64_MAX},        // +1 then -1: the entry disappears
       {0, 1, UINT64_MAX - 1},    // 5 - 2
       {0, 2, 2},                 // a negative residue in the file, +2
       {1, 4, UINT64_MAX}});      // a -1 for a key the file lacks
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), 0) << err;
  const ballarus_profile_record& r = dst.records[0];
  EXPECT_EQ(r.counters[0], 6u);
  ASSERT_EQ(r.n_sparse, 4u);
  const uint64_t want[4][3] = {
      {0, 1, 3}, {0, 2, 1}, {1, 4, UINT64_MAX}, {3, 9, 2}};
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ(r.sparse[i].function, want[i][0]) << i;
    EXPECT_EQ(r.sparse[i].key, want[i][1]) << i;
    EXPECT_EQ(r.sparse[i].count, want[i][2]) << i;
  }
  EXPECT_EQ(r.runs, UINT64_MAX);
  EXPECT_EQ(dst.runs, UINT64_MAX);
  // The result is a valid profile (sorted, unique keys) that round-trips.
  std::vector<uint8_t> bytes = Bytes(dst);
  ballarus_profile q;
  ASSERT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &q, err,
                                   sizeof err),
            0)
      << err;
  EXPECT_EQ(Bytes(q), bytes);
  ballarus_profile_free(&q);

  // Wrapping is modular, not saturating, in both directions: the maximum
  // plus one is 0, and adding the -1 back restores the maximum.
  ballarus_profile x = Empty(1), y = Empty(1), z = Empty(1);
  Add(&x, kB, {UINT64_MAX - 3}, 1, {{2, 2, UINT64_MAX}});
  Add(&y, kB, {4}, 1, {{2, 2, 1}});
  Add(&z, kB, {UINT64_MAX}, 1, {{2, 2, UINT64_MAX}});
  ASSERT_EQ(ballarus_profile_merge(&x, &y, err, sizeof err), 0) << err;
  EXPECT_EQ(x.records[0].counters[0], 0u);
  EXPECT_EQ(x.records[0].n_sparse, 0u);  // UINT64_MAX + 1 == 0: dropped
  ASSERT_EQ(ballarus_profile_merge(&x, &z, err, sizeof err), 0) << err;
  EXPECT_EQ(x.records[0].counters[0], UINT64_MAX);
  ASSERT_EQ(x.records[0].n_sparse, 1u);
  EXPECT_EQ(x.records[0].sparse[0].count, UINT64_MAX);
  EXPECT_EQ(x.records[0].runs, 3u);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
  ballarus_profile_free(&x);
  ballarus_profile_free(&y);
  ballarus_profile_free(&z);
}

TEST(ProfileIo, ConflictingBuildIsRefusedAndDestinationUnchanged) {
  ballarus_profile dst = Empty(1), src = Empty(1);
  Add(&dst, kA, {1, 2, 3}, 1);
  Add(&dst, kB, {4}, 1);
  Add(&src, kB, {1}, 1);
  Add(&src, kA2, {5, 5, 5}, 1);
  EXPECT_EQ(ballarus_profile_conflicts(&dst, &src), 1);
  std::vector<uint8_t> before = Bytes(dst);
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), -1);
  EXPECT_EQ(std::string(err),
            "two builds of one TU (source src.c, object /w/a.bprof.o): the "
            "profile merged in holds another build of it than the profiles "
            "before it");
  EXPECT_EQ(Bytes(dst), before);  // kB's counts were not added either
  EXPECT_EQ(ballarus_profile_conflicts(&src, &dst), 1);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileIo, TwoBuildsAlreadySideBySideMerge) {
  // A program linking two builds of one source (e.g. compiled twice with
  // different -D) writes both; its later runs must still merge.
  ballarus_profile dst = Empty(1), src = Empty(1);
  // dst as parsed: records sorted by stamp.
  if (StampOf(kA) < StampOf(kA2)) {
    Add(&dst, kA, {1, 1, 1}, 1);
    Add(&dst, kA2, {2, 2, 2}, 1);
  } else {
    Add(&dst, kA2, {2, 2, 2}, 1);
    Add(&dst, kA, {1, 1, 1}, 1);
  }
  Add(&src, kA, {1, 0, 0}, 1);
  Add(&src, kA2, {0, 0, 2}, 1);
  EXPECT_EQ(ballarus_profile_conflicts(&dst, &src), 0);
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), 0) << err;
  EXPECT_EQ(Counters(Find(dst, StampOf(kA))),
            (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(Counters(Find(dst, StampOf(kA2))),
            (std::vector<uint64_t>{2, 2, 4}));
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileIo, EqualStampsWithDifferentCounterCountsAreRefused) {
  // Same body (so same stamp) but the headers disagree on n_counters.
  std::vector<uint8_t> a3 = Blob("/w/s.bprof", "same body", 3),
                       a4 = Blob("/w/s.bprof", "same body", 4);
  ballarus_profile dst = Empty(1), src = Empty(1);
  Add(&dst, a3, {1, 2, 3}, 1);
  Add(&src, a4, {1, 2, 3, 4}, 1);
  std::vector<uint8_t> before = Bytes(dst);
  char err[256] = "";
  EXPECT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("differ"), std::string::npos) << err;
  EXPECT_EQ(Bytes(dst), before);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileIo, EveryTruncationIsRejectedWithAnOffset) {
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  for (size_t len = 0; len < bytes.size(); len++) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
    std::string e = ExpectRejected(cut, len);
    SCOPED_TRACE(len);
  }
}

TEST(ProfileIo, TrailingBytesAreRejected) {
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  size_t end = bytes.size();
  bytes.push_back(0);
  std::string e = ExpectRejected(bytes, end);
  EXPECT_EQ(e, "offset " + std::to_string(end) +
                   ": 1 trailing bytes after the last record");
}

TEST(ProfileIo, EveryBitFlipIsRejected) {
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  // The header check covers the file header, each record's check its
  // headers, counters and sparse entries, its stamp the rest of its
  // metadata, the file check every record's check and stamp: no bit is
  // unprotected.
  int flips = 0;
  for (size_t byte = 0; byte < bytes.size(); byte++) {
    for (int bit = 0; bit < 8; bit++) {
      std::vector<uint8_t> bad = bytes;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      SCOPED_TRACE("byte " + std::to_string(byte) + " bit " +
                   std::to_string(bit));
      ExpectRejected(bad, bytes.size());
      flips++;
    }
  }
  EXPECT_EQ(flips, static_cast<int>(bytes.size()) * 8);
  // Random multi-bit corruption.
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 2000; i++) {
    std::vector<uint8_t> bad = bytes;
    int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; k++)
      bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (bad == bytes) continue;
    ExpectRejected(bad, bytes.size());
  }
}

TEST(ProfileIo, RecordRunsAboveFileRunsAreRejected) {
  ballarus_profile p = Sample();  // file runs 4, record 0 runs 4
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  bytes[40 + 40] ^= 0x08;  // record 0 runs 4 -> 12
  // Resealed, so that the runs rule, not a check, is what fires.
  ResealAll(&bytes);
  EXPECT_EQ(ExpectRejected(bytes, bytes.size()),
            "offset 80: record 0: runs 12 exceeds the file's runs 4");
}

TEST(ProfileIo, ResealingReproducesTheWritersChecks) {
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  std::vector<uint8_t> again = bytes;
  memset(again.data() + 24, 0, 16);
  ResealAll(&again);
  EXPECT_EQ(again, bytes);
}

// A record of 1300 counters: chunk 0 counted, chunk 1 all zero, chunk 2
// (276 counters) counted at its end.
ballarus_profile ThreeChunks(int with_map) {
  ballarus_profile p = Empty(3);
  const std::vector<uint8_t> blob = Blob("/w/big.bprof", "function big", 1300);
  std::vector<uint64_t> c(1300, 0);
  for (size_t i = 0; i < 512; i += 7) c[i] = i + 1;
  c[1299] = 42;
  Add(&p, blob, c, 3);
  if (with_map) {
    // One byte per block of 64 counters: chunk 0's eight blocks counted,
    // chunk 1's known zero (hashed without being read), chunk 2's first
    // four known zero and its last (counters 1280..1299) counted.
    unsigned char* map = static_cast<unsigned char*>(malloc(21));
    memset(map, 0, 21);
    memset(map, 1, 8);
    map[20] = 1;
    p.records[0].block_map = map;
  }
  return p;
}

TEST(ProfileIo, ChunkedRecordChecksFollowTheFormat) {
  ballarus_profile p = ThreeChunks(0), m = ThreeChunks(1);
  const std::vector<uint8_t> bytes = Bytes(p), mapped = Bytes(m);
  ballarus_profile_free(&p);
  ballarus_profile_free(&m);
  uint32_t version;
  memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 4u);
  // A zero chunk known from the map hashes as the zeros it holds.
  EXPECT_EQ(mapped, bytes);
  // The checks as ballarus_format.h defines them, computed independently.
  std::vector<uint8_t> again = bytes;
  memset(again.data() + 24, 0, 16);
  memset(again.data() + 40 + 48, 0, 8);
  ResealAll(&again);
  EXPECT_EQ(again, bytes);
  // One flipped bit in the zero chunk, in a lane of the last chunk, or two
  // counters exchanged: a check mismatch.
  const size_t counters = bytes.size() - 1300 * 8;
  for (size_t at : {counters + 600 * 8 + 3, counters + 1298 * 8,
                    counters + 1299 * 8 + 7}) {
    std::vector<uint8_t> bad = bytes;
    bad[at] ^= 0x10;
    EXPECT_NE(ExpectRejected(bad, bytes.size()).find("check mismatch"),
              std::string::npos);
  }
  std::vector<uint8_t> swapped = bytes;
  std::swap_ranges(swapped.begin() + counters + 7 * 8,
                   swapped.begin() + counters + 8 * 8,
                   swapped.begin() + counters + 14 * 8);
  EXPECT_NE(ExpectRejected(swapped, bytes.size()).find("check mismatch"),
            std::string::npos);
}

TEST(ProfileIo, VersionTwoFilesAreReadAndRewrittenAsVersionFour) {
  ballarus_profile p = ThreeChunks(0);
  const std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  // The same profile as an older runtime wrote it: version 2, its record
  // check over the counters word by word.
  std::vector<uint8_t> old = bytes;
  old[8] = 2;
  ResealAll(&old);
  ASSERT_NE(old, bytes);
  ballarus_profile q;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_parse(old.data(), old.size(), &q, err,
                                   sizeof err),
            0)
      << err;
  ASSERT_EQ(q.n_records, 1u);
  EXPECT_EQ(q.records[0].counters[1299], 42u);
  EXPECT_EQ(Bytes(q), bytes);
  ballarus_profile_free(&q);
  // A version 2 file does not pass with a version 4 check, nor the reverse.
  std::vector<uint8_t> mixed = bytes;
  mixed[8] = 2;
  Reseal(&mixed);
  EXPECT_NE(ExpectRejected(mixed, bytes.size()).find("check mismatch"),
            std::string::npos);
}

TEST(ProfileIo, TheFileCheckCatchesALostRecord) {
  // The last record cut off and n_records lowered to match, the header
  // resealed: every remaining record is sound, only the file check sees
  // that one is missing.
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  uint64_t meta0;
  memcpy(&meta0, bytes.data() + 40 + 16, 8);
  uint64_t nc0;
  memcpy(&nc0, bytes.data() + 40 + 24, 8);
  const size_t rec1 = 40 + 56 + (meta0 + 7) / 8 * 8 + 8 * nc0;
  bytes.resize(rec1);
  uint32_t n = 1;
  memcpy(bytes.data() + 12, &n, 4);
  uint64_t runs;  // record 0's runs may not exceed the file's: keep them
  memcpy(&runs, bytes.data() + 16, 8);
  Reseal(&bytes);
  EXPECT_EQ(ExpectRejected(bytes, 24),
            "offset 24: file check mismatch (a record's check or stamp was "
            "changed, or records were lost)");
}

TEST(ProfileIo, KnownBlobsSkipOnlyTheHashNeverAByteComparison) {
  // read_fd_known: a record byte-identical to a known blob passes without
  // hashing its body; a body changed (and its stamp, check and file check
  // resealed to match the change... except the stamp, which cannot be)
  // still fails, known or not.
  std::string dir = std::string(getenv("TEST_TMPDIR")) + "/known";
  ASSERT_EQ(system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()),
            0);
  ballarus_profile p = Sample();
  std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  const unsigned char* known[] = {kA.data(), kB.data()};
  auto read_known = [&](const std::vector<uint8_t>& b, std::string* err) {
    std::string path = dir + "/p";
    Write(path, b);
    int fd = open(path.c_str(), O_RDONLY);
    ballarus_profile q;
    char e[512] = "";
    int rc = ballarus_profile_read_fd_known(fd, known, 2, &q, e, sizeof e);
    close(fd);
    if (rc == 0) ballarus_profile_free(&q);
    *err = e;
    return rc;
  };
  std::string err;
  EXPECT_EQ(read_known(bytes, &err), 0) << err;
  // A flip in record 0's metadata body (names block), record and file
  // checks resealed: the stamp no longer matches, found by comparing with
  // the known blob and then hashing.
  std::vector<uint8_t> bad = bytes;
  bad[40 + 56 + 56 + 3] ^= 1;
  ResealAll(&bad);
  EXPECT_EQ(read_known(bad, &err), -1);
  EXPECT_NE(err.find("is not the hash of the body"), std::string::npos) << err;
  EXPECT_NE(ExpectRejected(bad, bad.size()).find("is not the hash of the body"),
            std::string::npos);
}

TEST(ProfileIo, MetadataNamesAndIdentityAreChecked) {
  // A blob whose identity is not its profile path's hash, one whose names
  // block is malformed, one with a relative profile path: each correctly
  // stamped, and refused by the writer as by the parser.
  std::vector<uint8_t> bad_id = kA;
  bad_id[40] ^= 1;
  std::vector<uint8_t> bad_names = kA;
  bad_names[BALLARUS_META_HEADER_SIZE + 2] = 0;  // a fifth NUL
  uint64_t st = ballarus_hash64(bad_names.data() + 56, bad_names.size() - 56);
  memcpy(bad_names.data() + 16, &st, 8);
  std::vector<uint8_t> relative = Blob("w/a.bprof", "function alpha", 3);
  const char* want[] = {
      "identity is not the hash of the profile path /w/a.bprof",
      "names block of", "names must be absolute"};
  int k = 0;
  for (const auto* blob : {&bad_id, &bad_names, &relative}) {
    ballarus_profile q = Empty(1);
    Add(&q, *blob, {1, 2, 3}, 1);
    unsigned char* buf = nullptr;
    uint64_t size = 0;
    char err[256] = "";
    EXPECT_EQ(ballarus_profile_serialize(&q, &buf, &size, err, sizeof err), -1);
    EXPECT_NE(std::string(err).find(want[k]), std::string::npos) << err;
    ballarus_profile_free(&q);
    k++;
  }
}

// Metadata versions 4 (deltas), 3 (body deflated) and 2 (older builds) are
// all read and written: the runtime never looks past the names block.  1
// and 5 are refused, by the writer as by the parser.
TEST(ProfileIo, MetadataVersionsTwoToFourAreRead) {
  for (uint32_t v : {1u, 2u, 3u, 4u, 5u}) {
    SCOPED_TRACE(v);
    const std::vector<uint8_t> blob = Blob("/w/a.bprof", "function alpha", 3, v);
    ballarus_profile q = Empty(1);
    Add(&q, blob, {1, 2, 3}, 1);
    unsigned char* buf = nullptr;
    uint64_t size = 0;
    char err[256] = "";
    const int rc = ballarus_profile_serialize(&q, &buf, &size, err, sizeof err);
    ballarus_profile_free(&q);
    if (v == 1 || v == 5) {
      EXPECT_EQ(rc, -1);
      EXPECT_NE(std::string(err).find("unsupported version " +
                                      std::to_string(v) + " (expected 2 to 4)"),
                std::string::npos)
          << err;
      continue;
    }
    ASSERT_EQ(rc, 0) << err;
    ballarus_profile back;
    ASSERT_EQ(ballarus_profile_parse(buf, size, &back, err, sizeof err), 0)
        << err;
    ASSERT_EQ(back.n_records, 1u);
    EXPECT_EQ(back.records[0].meta_size, blob.size());
    EXPECT_EQ(memcmp(back.records[0].metadata, blob.data(), blob.size()), 0);
    EXPECT_EQ(Counters(&back.records[0]), (std::vector<uint64_t>{1, 2, 3}));
    ballarus_profile_free(&back);
    free(buf);
  }
}

TEST(ProfileIo, HeaderProblemsNameTheirField) {
  ballarus_profile p = Sample();
  const std::vector<uint8_t> good = Bytes(p);
  ballarus_profile_free(&p);

  std::vector<uint8_t> b = good;
  memcpy(b.data(), "NOTAPROF", 8);
  EXPECT_EQ(ExpectRejected(b, 0), "offset 0: bad magic (not a ballarus profile)");

  b = good;
  b[8] = 6;
  Reseal(&b);
  EXPECT_EQ(ExpectRejected(b, 8),
            "offset 8: unsupported profile version 6 (expected 2 to 5)");

  // A version 1 profile (32-byte header, no file check) is named as such,
  // even when it is shorter than a version 2 header.
  b.assign(good.begin(), good.begin() + 32);
  b[8] = 1;
  EXPECT_EQ(ExpectRejected(b, 8),
            "offset 8: unsupported profile version 1 (expected 2 to 5; written by "
            "an older ballarus)");

  b = good;
  b[16] ^= 1;  // runs, not resealed
  EXPECT_EQ(ExpectRejected(b, 32),
            "offset 32: header check mismatch (file header corrupted)");

  b = good;
  uint32_t n = 0xffffffffu;
  memcpy(b.data() + 12, &n, 4);
  Reseal(&b);
  EXPECT_NE(ExpectRejected(b, 12).find("offset 12: n_records 4294967295 "
                                       "impossible"),
            std::string::npos);

  b = good;
  n = 3;  // one more record than present
  memcpy(b.data() + 12, &n, 4);
  Reseal(&b);
  EXPECT_NE(ExpectRejected(b, b.size()).find("record 2: header truncated"),
            std::string::npos);

  b = good;
  n = 1;  // one fewer: record 1 becomes trailing bytes
  memcpy(b.data() + 12, &n, 4);
  Reseal(&b);
  EXPECT_NE(ExpectRejected(b, b.size()).find("trailing bytes"),
            std::string::npos);
}

TEST(ProfileIo, OverflowingSizesAreRejected) {
  ballarus_profile p = Sample();
  const std::vector<uint8_t> good = Bytes(p);
  ballarus_profile_free(&p);
  const size_t rec = 40;
  struct Case {
    size_t field;
    uint64_t value;
    const char* want;
  } cases[] = {
      {16, UINT64_MAX, "meta_size 18446744073709551615 is not a metadata blob size"},
      {16, UINT64_MAX - 3, "is not a metadata blob size"},
      {16, 8, "meta_size 8 is not a metadata blob size"},
      {16, 1ull << 40, "metadata truncated"},
      {24, UINT64_MAX / 8 + 1, "n_counters 2305843009213693952 overflows"},
      {24, 1ull << 40, "counters truncated"},
      {32, UINT64_MAX / 24 + 1, "overflows"},
      {32, 1ull << 40, "sparse entries truncated"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> b = good;
    memcpy(b.data() + rec + c.field, &c.value, 8);
    Reseal(&b);
    std::string e = ExpectRejected(b, b.size());
    EXPECT_NE(e.find(c.want), std::string::npos) << e;
  }
}

TEST(ProfileIo, UnsortedRecordsAreRejected) {
  // Build a file whose two records are in the wrong order by hand.
  ballarus_profile one = Empty(1), two = Empty(1);
  Add(&one, kA, {1, 2, 3}, 1);
  Add(&two, kB, {4}, 1);
  std::vector<uint8_t> a = Bytes(one), b = Bytes(two);
  bool a_first = StampOf(kA) < StampOf(kB);
  std::vector<uint8_t> file(a.begin(), a.begin() + 40);
  const std::vector<uint8_t>& first = a_first ? b : a;
  const std::vector<uint8_t>& second = a_first ? a : b;
  file.insert(file.end(), first.begin() + 40, first.end());
  file.insert(file.end(), second.begin() + 40, second.end());
  uint32_t n = 2;
  memcpy(file.data() + 12, &n, 4);
  ResealAll(&file);
  std::string e = ExpectRejected(file, file.size());
  EXPECT_NE(e.find("must be sorted by stamp"), std::string::npos) << e;
  ballarus_profile_free(&one);
  ballarus_profile_free(&two);
}

TEST(ProfileIo, WriteFileIsAtomicAndReadable) {
  const char* tmp = getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  std::string dir = std::string(tmp) + "/write_test";
  ASSERT_EQ(system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
  std::string path = dir + "/p.profile";
  ballarus_profile p = Sample();
  char err[512] = "";
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &p, err, sizeof err), 0)
      << err;
  // Overwrite in place; the old content is replaced whole.
  p.records[0].counters[0] = 99;
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &p, err, sizeof err), 0)
      << err;
  ballarus_profile q;
  ASSERT_EQ(ballarus_profile_read_file(path.c_str(), &q, err, sizeof err), 0)
      << err;
  EXPECT_EQ(Bytes(q), Bytes(p));
  EXPECT_EQ(Find(q, StampOf(kA))->counters[0], 99u);
  ballarus_profile_free(&q);
  // No temporary file left behind.
  FILE* ls = popen(("ls -A '" + dir + "'").c_str(), "r");
  char line[256];
  std::vector<std::string> names;
  while (fgets(line, sizeof line, ls)) names.push_back(line);
  pclose(ls);
  EXPECT_EQ(names, std::vector<std::string>{"p.profile\n"});
  // Missing file and unwritable directory are errors with a reason.
  EXPECT_EQ(ballarus_profile_read_file((dir + "/nope").c_str(), &q, err,
                                       sizeof err),
            -1);
  EXPECT_NE(std::string(err).find("cannot open: No such file"),
            std::string::npos)
      << err;
  EXPECT_EQ(ballarus_profile_write_file((dir + "/no/such/dir/p").c_str(), &p,
                                        err, sizeof err),
            -1);
  EXPECT_NE(std::string(err).find("cannot open directory"),
            std::string::npos)
      << err;
  ballarus_profile_free(&p);
}
std::string TestDir(const std::string& name) {
  std::string dir = std::string(getenv("TEST_TMPDIR")) + "/" + name;
  EXPECT_EQ(system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()),
            0);
  return dir;
}

TEST(ProfileIo, WriteAtNeverFollowsASymlinkAndGivesGcovsMode) {
  std::string dir = TestDir("write_at");
  std::string victim = dir + "/victim";
  { std::ofstream(victim) << "victim"; }
  // Planted temporary names for this pid and the first serials: skipped.
  for (int n = 1; n <= 3; n++)
    ASSERT_EQ(symlink(victim.c_str(),
                      (dir + "/p" BALLARUS_TMP_INFIX + std::to_string(getpid()) +
                       "." + std::to_string(n))
                          .c_str()),
              0);
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dfd, 0);
  ballarus_profile p = Sample();
  char err[512] = "";
  mode_t old = umask(022);
  ASSERT_EQ(ballarus_profile_write_at(dfd, "p", &p, -1, 0, err, sizeof err), 0)
      << err;
  ASSERT_EQ(ballarus_profile_write_at(dfd, "q", &p, 0600, 0, err, sizeof err),
            0)
      << err;
  umask(old);
  std::ifstream in(victim);
  std::string v;
  in >> v;
  EXPECT_EQ(v, "victim");
  struct stat st;
  ASSERT_EQ(stat((dir + "/p").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // 0666 & ~umask, as libgcov
  ASSERT_EQ(stat((dir + "/q").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ballarus_profile q;
  ASSERT_EQ(ballarus_profile_read_file((dir + "/p").c_str(), &q, err,
                                       sizeof err),
            0)
      << err;
  EXPECT_EQ(Bytes(q), Bytes(p));
  ballarus_profile_free(&q);
  // Replacing by exchange: a new name, then an existing one; only the
  // profiles (and the planted links) remain.
  p.records[0].counters[0] = 77;
  for (const char* name : {"r", "p"})
    ASSERT_EQ(ballarus_profile_write_at(dfd, name, &p, -1,
                                        BALLARUS_WRITE_EXCHANGE, err,
                                        sizeof err),
              0)
        << err;
  for (const char* name : {"r", "p"}) {
    ASSERT_EQ(ballarus_profile_read_file((dir + "/" + name).c_str(), &q, err,
                                         sizeof err),
              0)
        << err;
    EXPECT_EQ(Find(q, StampOf(kA))->counters[0], 77u);
    ballarus_profile_free(&q);
  }
  FILE* ls = popen(("ls '" + dir + "' | grep -v tmp").c_str(), "r");
  char line[256];
  std::string names;
  while (fgets(line, sizeof line, ls)) names += line;
  pclose(ls);
  EXPECT_EQ(names, "p\nq\nr\nvictim\n");
  ballarus_profile_free(&p);
  close(dfd);
}

struct Replaced {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;  // old, new stamp
};
void OnReplace(void* ctx, const ballarus_profile_record* o,
               const ballarus_profile_record* n) {
  static_cast<Replaced*>(ctx)->pairs.push_back({o->stamp, n->stamp});
}

TEST(ProfileIo, UpdateReplacesAnEarlierBuildOfAnObject) {
  ballarus_profile dst = Empty(5), src = Empty(1);
  Add(&dst, kA, {1, 2, 3}, 5);
  Add(&dst, kB, {4}, 2);
  Add(&src, kA2, {7, 7, 7}, 1);
  Add(&src, kB, {1}, 1);
  Replaced rep;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_update(&dst, &src, OnReplace, &rep, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_EQ(rep.pairs, (std::vector<std::pair<uint64_t, uint64_t>>{
                           {StampOf(kA), StampOf(kA2)}}));
  // The file's runs are its largest record's: kB's 2 + 1 (kA's 5 went
  // with its build).
  EXPECT_EQ(dst.runs, 3u);
  ASSERT_EQ(dst.n_records, 2u);
  EXPECT_EQ(Find(dst, StampOf(kA)), nullptr);
  EXPECT_EQ(Counters(Find(dst, StampOf(kA2))),
            (std::vector<uint64_t>{7, 7, 7}));
  EXPECT_EQ(Find(dst, StampOf(kA2))->runs, 1u);
  EXPECT_EQ(Counters(Find(dst, StampOf(kB))), (std::vector<uint64_t>{5}));
  EXPECT_EQ(Find(dst, StampOf(kB))->runs, 3u);
  // The result is a valid profile.
  std::vector<uint8_t> bytes = Bytes(dst);
  ballarus_profile q;
  ASSERT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &q, err,
                                   sizeof err),
            0)
      << err;
  ballarus_profile_free(&q);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileIo, UpdateKeepsTwoBuildsOfOneProgramSideBySide) {
  // A program linking two builds of one object path writes both at once:
  // neither replaces the other, and a third, older one goes.
  const std::vector<uint8_t> kA3 = Blob("/w/a.bprof", "function alpha v3", 3);
  ballarus_profile dst = Empty(1), src = Empty(1);
  Add(&dst, kA3, {9, 9, 9}, 1);
  Add(&src, kA, {1, 0, 0}, 1);
  Add(&src, kA2, {0, 0, 2}, 1);
  Replaced rep;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_update(&dst, &src, OnReplace, &rep, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_EQ(rep.pairs.size(), 1u);
  EXPECT_EQ(dst.n_records, 2u);
  EXPECT_EQ(Find(dst, StampOf(kA3)), nullptr);
  ballarus_profile next = Empty(1);
  Add(&next, kA, {1, 1, 1}, 1);
  Add(&next, kA2, {1, 1, 1}, 1);
  ASSERT_EQ(ballarus_profile_update(&dst, &next, OnReplace, &rep, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_EQ(Counters(Find(dst, StampOf(kA))),
            (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(Counters(Find(dst, StampOf(kA2))),
            (std::vector<uint64_t>{1, 1, 3}));
  EXPECT_EQ(rep.pairs.size(), 1u);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
  ballarus_profile_free(&next);
}

TEST(ProfileIo, UpdateBorrowsSnapshotCountersWithoutWritingThem) {
  // The runtime's dump lends its snapshot of a TU's live counters to the
  // record it writes (counters_borrowed): an update that copies the record
  // into the profile borrows them too, one that adds into such a record
  // first gives it its own copy, and neither writes into the snapshot,
  // which the runtime subtracts from the live counters afterwards.
  uint64_t snapshot[3] = {4, 5, 6};
  ballarus_profile dst = Empty(0), src = Empty(1);
  Add(&src, kA, {0, 0, 0}, 1);
  free(src.records[0].counters);
  src.records[0].counters = snapshot;
  src.records[0].counters_borrowed = 1;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_update(&dst, &src, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  ASSERT_EQ(dst.n_records, 1u);
  EXPECT_EQ(dst.records[0].counters, snapshot);  // borrowed, not copied
  EXPECT_EQ(dst.records[0].counters_borrowed, 1);
  ballarus_profile next = Empty(1);
  Add(&next, kA, {1, 1, 1}, 1);
  ASSERT_EQ(ballarus_profile_update(&dst, &next, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_NE(dst.records[0].counters, snapshot);
  EXPECT_EQ(dst.records[0].counters_borrowed, 0);
  EXPECT_EQ(Counters(&dst.records[0]), (std::vector<uint64_t>{5, 6, 7}));
  EXPECT_EQ(std::vector<uint64_t>(snapshot, snapshot + 3),
            (std::vector<uint64_t>{4, 5, 6}));
  ballarus_profile_free(&dst);  // frees its own copy, not the snapshot
  ballarus_profile_free(&src);
  ballarus_profile_free(&next);
}

TEST(ProfileIo, ZeroRecordsNeverReplaceCounts) {
  ballarus_profile dst = Empty(3), src = Empty(0);
  Add(&dst, kA, {1, 2, 3}, 3);
  Add(&src, kA2, {0, 0, 0}, 0);  // another build of A that has not run
  Add(&src, kB, {0}, 0);         // a TU the file does not list yet
  Replaced rep;
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_update(&dst, &src, OnReplace, &rep, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_TRUE(rep.pairs.empty());
  EXPECT_EQ(dst.runs, 3u);
  ASSERT_EQ(dst.n_records, 2u);
  EXPECT_EQ(Counters(Find(dst, StampOf(kA))),
            (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_NE(Find(dst, StampOf(kB)), nullptr);
  EXPECT_EQ(Find(dst, StampOf(kB))->runs, 0u);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}


}  // namespace
}  // namespace ballarus_test
