// profile_named_test.cc — tests of the named section of a version 5
// profile (ballarus_format.h, "Named runs"): round trips, merge and update
// of named records, rejection of every damaged byte, sealed records.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/profile_io.h"
#include "runtime/profile_test_util.h"

namespace ballarus_test {

namespace {

// Appends a named record (malloc'd, so ballarus_profile_free owns it).
void AddNamed(ballarus_profile* p, const std::string& name, uint64_t stamp,
              uint64_t runs, const std::vector<ballarus_named_entry>& dense,
              const std::vector<ballarus_sparse_entry>& sparse = {}) {
  p->named = static_cast<ballarus_named_record*>(
      realloc(p->named, (p->n_named + 1) * sizeof *p->named));
  ballarus_named_record& n = p->named[p->n_named++];
  memset(&n, 0, sizeof n);
  n.name = static_cast<char*>(malloc(name.size() + 1));
  memcpy(n.name, name.c_str(), name.size() + 1);
  n.name_size = static_cast<uint32_t>(name.size());
  n.stamp = stamp;
  n.runs = runs;
  n.dense = Dup(dense);
  n.n_dense = dense.size();
  n.sparse = Dup(sparse);
  n.n_sparse = sparse.size();
}

// Sample() with two tests: "t/one" ran A and B, "t/two" ran A.
ballarus_profile NamedSample() {
  ballarus_profile p = Sample();
  AddNamed(&p, "t/one", StampOf(kA), 3, {{0, 1}, {2, 3}});
  AddNamed(&p, "t/one", StampOf(kB), 2, {{0, UINT64_MAX}}, {{1, 7, 70}});
  AddNamed(&p, "t/two", StampOf(kA), 1, {{1, 2}});
  return p;
}

ballarus_profile Parsed(const std::vector<uint8_t>& bytes) {
  ballarus_profile p;
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &p, err,
                                   sizeof err),
            0)
      << err;
  return p;
}

// "name@stamp runs: index=count ... | function/key=count ..." per record.
std::vector<std::string> Describe(const ballarus_profile& p) {
  std::vector<std::string> out;
  for (uint64_t k = 0; k < p.n_named; k++) {
    const ballarus_named_record& n = p.named[k];
    std::string s = std::string(n.name) + "@" +
                    (n.stamp == StampOf(kA) ? "A" : n.stamp == StampOf(kB) ? "B" : "?") +
                    " " + std::to_string(n.runs) + ":";
    for (uint64_t j = 0; j < n.n_dense; j++)
      s += " " + std::to_string(n.dense[j].index) + "=" +
           std::to_string(n.dense[j].count);
    s += " |";
    for (uint64_t j = 0; j < n.n_sparse; j++)
      s += " " + std::to_string(n.sparse[j].function) + "/" +
           std::to_string(n.sparse[j].key) + "=" +
           std::to_string(n.sparse[j].count);
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> DescribeBytes(const std::vector<uint8_t>& bytes) {
  ballarus_profile p = Parsed(bytes);
  std::vector<std::string> out = Describe(p);
  ballarus_profile_free(&p);
  return out;
}

// Where the named section starts: after the TU records.
size_t NamedSectionAt(const std::vector<uint8_t>& b) {
  uint32_t n;
  memcpy(&n, b.data() + 12, 4);
  size_t off = 40;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t meta, nc, ns;
    memcpy(&meta, b.data() + off + 16, 8);
    memcpy(&nc, b.data() + off + 24, 8);
    memcpy(&ns, b.data() + off + 32, 8);
    off += 56 + (meta + 7) / 8 * 8 + 8 * nc + 24 * ns;
  }
  return off;
}

// Rewrites the checks of a version 5 file after an edit of its named
// section (ballarus_format.h's definitions, written out independently of
// the codec): every named record's check, the file check, the header
// check.
void ResealNamed(std::vector<uint8_t>* b) {
  ResealAll(b);  // the TU records' part of the file check
  uint32_t n_records;
  memcpy(&n_records, b->data() + 12, 4);
  uint64_t file = BALLARUS_HASH_INIT;
  size_t off = 40;
  for (uint32_t i = 0; i < n_records; i++) {
    uint64_t meta, nc, ns;
    memcpy(&meta, b->data() + off + 16, 8);
    memcpy(&nc, b->data() + off + 24, 8);
    memcpy(&ns, b->data() + off + 32, 8);
    file = ballarus_hash64_update(file, b->data() + off + 48, 8);
    file = ballarus_hash64_update(file, b->data() + off + 8, 8);
    off += 56 + (meta + 7) / 8 * 8 + 8 * nc + 24 * ns;
  }
  uint64_t n_named;
  memcpy(&n_named, b->data() + off + 8, 8);
  file = ballarus_hash64_update(file, b->data() + off, 16);
  off += 16;
  for (uint64_t k = 0; k < n_named; k++) {
    uint32_t name_size;
    uint64_t dense_size, ns;
    memcpy(&name_size, b->data() + off + 4, 4);
    memcpy(&dense_size, b->data() + off + 32, 8);
    memcpy(&ns, b->data() + off + 40, 8);
    const size_t body =
        (name_size + 7) / 8 * 8 + (dense_size + 7) / 8 * 8 + 24 * ns;
    uint64_t check = ballarus_hash64(b->data() + off, 48);
    check = ballarus_hash64_update(check, b->data() + off + 56, body);
    memcpy(b->data() + off + 48, &check, 8);
    file = ballarus_hash64_update(file, b->data() + off + 48, 8);
    file = ballarus_hash64_update(file, b->data() + off + 8, 8);
    off += 56 + body;
  }
  memcpy(b->data() + 24, &file, 8);
  Reseal(b);
}

}  // namespace

TEST(ProfileNamed, WithoutNamedRunsTheFileIsVersionFour) {
  ballarus_profile p = Sample();
  const std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  uint32_t version;
  memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 4u);
  EXPECT_EQ(NamedSectionAt(bytes), bytes.size());
}

TEST(ProfileNamed, RoundTripKeepsEveryNamedValue) {
  ballarus_profile p = NamedSample();
  const std::vector<uint8_t> bytes = Bytes(p);
  uint32_t version;
  memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 5u);
  // Section header, then three records: 56-byte header, 8 name bytes,
  // the pairs' varints padded to 8 ((0, 1), (+1, 3): 4 bytes; (0, 2^64-1):
  // 1 + 10 bytes; (1, 2): 2 bytes), 24 per sparse entry.
  const size_t at = NamedSectionAt(bytes);
  EXPECT_EQ(bytes.size() - at,
            16u + (56 + 8 + 8) + (56 + 8 + 16 + 24) + (56 + 8 + 8));
  const uint8_t pairs0[8] = {0, 1, 1, 3, 0, 0, 0, 0};
  EXPECT_EQ(memcmp(bytes.data() + at + 16 + 56 + 8, pairs0, 8), 0);
  const size_t rec1 = at + 16 + 72 + 56 + 8;  // (0, 2^64 - 1)
  EXPECT_EQ(bytes[rec1], 0);
  for (int i = 1; i < 10; i++) EXPECT_EQ(bytes[rec1 + i], 0xff) << i;
  EXPECT_EQ(bytes[rec1 + 10], 1);
  ballarus_profile q = Parsed(bytes);
  EXPECT_EQ(Describe(q),
            (std::vector<std::string>{
                "t/one@A 3: 0=1 2=3 |",
                "t/one@B 2: 0=18446744073709551615 | 1/7=70",
                "t/two@A 1: 1=2 |"}));
  EXPECT_EQ(Bytes(q), bytes);  // deterministic: read and written again
  ballarus_profile_free(&p);
  ballarus_profile_free(&q);
}

TEST(ProfileNamed, MergeUnitesNamesAndAddsEqualOnes) {
  ballarus_profile a = NamedSample();
  ballarus_profile b = Empty(5);
  Add(&b, kA, {10, 20, 30}, 5);
  Add(&b, kB, {1}, 1, {{1, 7, 1}});
  AddNamed(&b, "t/one", StampOf(kA), 2, {{1, 4}, {2, 5}});
  AddNamed(&b, "t/one", StampOf(kB), 1, {{0, 1}}, {{1, 7, UINT64_MAX - 69}});
  AddNamed(&b, "t/three", StampOf(kA), 1, {{0, 9}});
  const std::vector<std::string> want = {
      // 3 + 2 runs; index 2: 3 + 5; index 1 only in b.
      "t/one@A 5: 0=1 1=4 2=8 |",
      // -1 + 1 and 70 + (-70): both sums are 0 and dropped.
      "t/one@B 3: |",
      "t/three@A 1: 0=9 |",
      "t/two@A 1: 1=2 |"};
  ballarus_profile ab = Parsed(Bytes(a));
  char err[512] = "";
  ASSERT_EQ(ballarus_profile_merge(&ab, &b, err, sizeof err), 0) << err;
  EXPECT_EQ(Describe(ab), want);
  ballarus_profile ba = Parsed(Bytes(b));
  ASSERT_EQ(ballarus_profile_merge(&ba, &a, err, sizeof err), 0) << err;
  EXPECT_EQ(Bytes(ab), Bytes(ba));  // commutative, byte for byte
  ballarus_profile again = Parsed(Bytes(ab));
  EXPECT_EQ(Describe(again), want);
  for (ballarus_profile* p : {&a, &b, &ab, &ba, &again})
    ballarus_profile_free(p);
}

TEST(ProfileNamed, RefusedMergeLeavesTheNamedRecordsUnchanged) {
  ballarus_profile dst = NamedSample();
  const std::vector<uint8_t> before = Bytes(dst);
  ballarus_profile src = Empty(1);
  Add(&src, kA2, {1, 1, 1}, 1);  // another build of A's TU
  AddNamed(&src, "t/one", StampOf(kA2), 1, {{0, 1}});
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_merge(&dst, &src, err, sizeof err), -1);
  EXPECT_EQ(Bytes(dst), before);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileNamed, UpdateDropsTheNamedCountsOfARebuiltObject) {
  ballarus_profile dst = NamedSample();
  ballarus_profile src = Empty(1);
  Add(&src, kA2, {1, 0, 0}, 1);
  AddNamed(&src, "t/two", StampOf(kA2), 1, {{0, 1}});
  char err[512] = "";
  ASSERT_EQ(ballarus_profile_update(&dst, &src, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  std::vector<std::string> got = Describe(dst);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "t/one@B 2: 0=18446744073709551615 | 1/7=70",
                     "t/two@? 1: 0=1 |"}));
  EXPECT_EQ(dst.named[1].stamp, StampOf(kA2));
  ballarus_profile back = Parsed(Bytes(dst));
  EXPECT_EQ(Describe(back), got);
  ballarus_profile_free(&back);
  ballarus_profile_free(&dst);
  ballarus_profile_free(&src);
}

TEST(ProfileNamed, EveryBitFlipAndTruncationOfTheSectionIsRejected) {
  ballarus_profile p = NamedSample();
  const std::vector<uint8_t> bytes = Bytes(p);
  ballarus_profile_free(&p);
  const size_t at = NamedSectionAt(bytes);
  for (size_t byte = at; byte < bytes.size(); byte++)
    for (int bit = 0; bit < 8; bit++) {
      std::vector<uint8_t> bad = bytes;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      SCOPED_TRACE("byte " + std::to_string(byte));
      ExpectRejected(bad, bytes.size());
      ballarus_profile q;
      char err[512];
      EXPECT_EQ(ballarus_profile_parse_borrowing(bad.data(), bad.size(),
                                                 nullptr, &q, err, sizeof err),
                -1);
    }
  for (size_t len = at; len < bytes.size(); len++) {
    SCOPED_TRACE(len);
    ExpectRejected(std::vector<uint8_t>(bytes.begin(), bytes.begin() + len),
                   len);
  }
}

TEST(ProfileNamed, DamagedSectionsAreRefusedWithTheirReason) {
  ballarus_profile p = NamedSample();
  const std::vector<uint8_t> good = Bytes(p);
  ballarus_profile_free(&p);
  const size_t at = NamedSectionAt(good);
  const size_t rec0 = at + 16;  // "t/one"@A: pairs (0,1), (2,3)
  const size_t pairs = rec0 + 56 + 8;  // 0 1 1 3: gaps and counts
  // Resealed edits: the rule, not a check, is what fires.
  std::vector<uint8_t> b = good;
  b[pairs + 2] = 2;  // second pair's index 2 -> 3 (n_counters 3)
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, pairs + 2),
            "offset " + std::to_string(pairs + 2) +
                ": named record 0: counter pair 1: index not below "
                "n_counters 3");

  b = good;
  b[pairs + 1] = 0x81;  // the count's varint runs into the next pair's
  b[pairs + 2] = 0x00;  // ... and ends in a zero byte: not its shortest form
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, pairs),
            "offset " + std::to_string(pairs) +
                ": named record 0: counter pair 0: bad varint (truncated, "
                "not in its shortest form or above 2^64 - 1)");

  b = good;
  b[pairs + 3] = 0x83;  // the last count runs into the padding
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, pairs + 2),
            "offset " + std::to_string(pairs + 2) +
                ": named record 0: counter pair 1: bad varint (truncated, "
                "not in its shortest form or above 2^64 - 1)");

  b = good;
  b[pairs + 4] = 1;  // a byte after the pairs, inside dense_size
  b[rec0 + 32] = 5;  // dense_size 4 -> 5
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, pairs + 4),
            "offset " + std::to_string(pairs + 4) +
                ": named record 0: 1 bytes after the last counter pair");

  b = good;
  b[pairs + 5] = 1;  // the pairs' padding
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, pairs + 5),
            "offset " + std::to_string(pairs + 5) +
                ": named record 0: nonzero padding after the counter pairs");

  b = good;
  b[rec0 + 24] = 3;  // n_dense 2 -> 3: 4 bytes cannot hold 3 pairs
  ResealNamed(&b);
  EXPECT_NE(ExpectRejected(b, rec0).find("truncated (5 name bytes, 3 pairs "
                                         "in 4 bytes"),
            std::string::npos);

  b = good;
  b[rec0 + 56 + 1] = '\n';  // "t\none"
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, rec0 + 4),
            "offset " + std::to_string(rec0 + 4) +
                ": named record 0: name of 5 bytes is not 1 to 255 "
                "printable characters");

  b = good;
  b[rec0 + 8] ^= 1;  // a stamp the file has no record of
  ResealNamed(&b);
  EXPECT_NE(ExpectRejected(b, rec0 + 8).find("is no record of the file"),
            std::string::npos);

  b = good;
  b[rec0 + 16] = 5;  // runs 5 > the record's 4
  ResealNamed(&b);
  EXPECT_NE(ExpectRejected(b, rec0 + 16).find("runs 5 exceed its record's 4"),
            std::string::npos);

  b = good;
  b[rec0 + 56 + 1] = 'z';  // "tzone" sorts after "t/one"@B
  ResealNamed(&b);
  EXPECT_NE(ExpectRejected(b, rec0 + 100).find("not sorted"),
            std::string::npos);

  // A version 3 header without a named section.
  b.assign(good.begin(), good.begin() + at);
  Reseal(&b);
  EXPECT_EQ(ExpectRejected(b, at),
            "offset " + std::to_string(at) +
                ": named section header truncated (file ends after 0 of 16 "
                "bytes)");

  // A named section in a version 4 file is not one.
  b = good;
  b[8] = 4;
  ResealNamed(&b);
  EXPECT_EQ(ExpectRejected(b, at),
            "offset " + std::to_string(at) + ": " +
                std::to_string(good.size() - at) +
                " trailing bytes after the last record");
}

TEST(ProfileNamed, SerializeRefusesWhatTheParserWouldRefuse) {
  ballarus_profile p = Sample();
  AddNamed(&p, "t/one", StampOf(kA2), 1, {{0, 1}});  // no such record
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_serialize(&p, &buf, &size, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("is no record of the file"),
            std::string::npos)
      << err;
  ballarus_profile_free(&p);
  EXPECT_FALSE(ballarus_test_name_valid("", 0));
  EXPECT_TRUE(ballarus_test_name_valid("gzip/help ok~", 13));
  EXPECT_FALSE(ballarus_test_name_valid("a\tb", 3));
  EXPECT_TRUE(ballarus_test_name_valid(std::string(255, 'x').c_str(), 255));
  EXPECT_FALSE(ballarus_test_name_valid(std::string(256, 'x').c_str(), 256));
}

// The runtime's path: parsed borrowing (named records sealed), updated
// with a process's counts, written.  Equal bytes to the decoded path's.
TEST(ProfileNamed, SealedRecordsGiveTheBytesOfDecodedOnes) {
  ballarus_profile named = NamedSample();
  std::vector<uint8_t> file = Bytes(named);
  ballarus_profile_free(&named);
  auto run = [] {
    ballarus_profile p = Empty(1);
    Add(&p, kA, {1, 0, 1}, 1);
    Add(&p, kB, {2}, 1, {{1, 7, 5}});
    AddNamed(&p, "t/one", StampOf(kA), 1, {{0, 1}, {2, 1}});  // adds
    AddNamed(&p, "t/one", StampOf(kB), 1, {{0, 2}}, {{1, 7, 5}});  // adds
    AddNamed(&p, "t/six", StampOf(kB), 1, {{0, 2}});  // new
    return p;
  };
  ballarus_profile decoded = Parsed(file), sealed;
  char err[512] = "";
  ASSERT_EQ(ballarus_profile_parse_borrowing(file.data(), file.size(), nullptr,
                                             &sealed, err, sizeof err),
            0)
      << err;
  ASSERT_EQ(sealed.n_named, 3u);
  for (uint64_t k = 0; k < sealed.n_named; k++) {
    EXPECT_NE(sealed.named[k].sealed, nullptr);
    EXPECT_EQ(sealed.named[k].dense, nullptr);
  }
  EXPECT_EQ(Bytes(sealed), file);  // written back as read
  ballarus_profile a = run(), b = run();
  ASSERT_EQ(ballarus_profile_update(&decoded, &a, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  ASSERT_EQ(ballarus_profile_update(&sealed, &b, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_EQ(Bytes(sealed), Bytes(decoded));
  EXPECT_EQ(DescribeBytes(Bytes(sealed)),
            (std::vector<std::string>{
                "t/one@A 4: 0=2 2=4 |",
                "t/one@B 3: 0=1 | 1/7=75",
                "t/six@B 1: 0=2 |",
                "t/two@A 1: 1=2 |"}));
  // A rebuilt TU's sealed records go with it.
  ballarus_profile rebuilt = Empty(1);
  Add(&rebuilt, kA2, {1, 0, 0}, 1);
  ASSERT_EQ(ballarus_profile_update(&sealed, &rebuilt, nullptr, nullptr, err,
                                    sizeof err),
            0)
      << err;
  EXPECT_EQ(DescribeBytes(Bytes(sealed)),
            (std::vector<std::string>{"t/one@B 3: 0=1 | 1/7=75",
                                      "t/six@B 1: 0=2 |"}));
  for (ballarus_profile* p : {&decoded, &sealed, &a, &b, &rebuilt})
    ballarus_profile_free(p);
}

TEST(ProfileNamed, ATreeOfMergesEqualsOneMergeByteForByte) {
  // Three shards: (a + b) + c, a + (b + c) and (c + a) + b give one file.
  auto shard = [](int s) {
    ballarus_profile p = Empty(1 + s);
    Add(&p, kA, {1u + s, 0, 2u * s}, 1 + s);
    Add(&p, kB, {7u * s}, 1, {{1, 7, 1u + s}});
    AddNamed(&p, "t/" + std::to_string(s % 2), StampOf(kA), 1,
             s == 0 ? std::vector<ballarus_named_entry>{{0, 1}}
                    : std::vector<ballarus_named_entry>{{0, 1u + s}, {2, 2u * s}});
    AddNamed(&p, "t/x", StampOf(kB), 1, {}, {{1, 7, 1u + s}});
    return p;
  };
  char err[512] = "";
  auto merged = [&](std::vector<int> order, bool right) {
    ballarus_profile x = shard(order[0]), y = shard(order[1]),
                     z = shard(order[2]);
    if (right) {
      EXPECT_EQ(ballarus_profile_merge(&y, &z, err, sizeof err), 0) << err;
      EXPECT_EQ(ballarus_profile_merge(&x, &y, err, sizeof err), 0) << err;
    } else {
      EXPECT_EQ(ballarus_profile_merge(&x, &y, err, sizeof err), 0) << err;
      EXPECT_EQ(ballarus_profile_merge(&x, &z, err, sizeof err), 0) << err;
    }
    std::vector<uint8_t> out = Bytes(x);
    for (ballarus_profile* p : {&x, &y, &z}) ballarus_profile_free(p);
    return out;
  };
  const std::vector<uint8_t> one = merged({0, 1, 2}, false);
  EXPECT_EQ(merged({0, 1, 2}, true), one);
  EXPECT_EQ(merged({2, 0, 1}, false), one);
  EXPECT_EQ(merged({1, 2, 0}, true), one);
  ballarus_profile back = Parsed(one);
  EXPECT_EQ(Describe(back),
            (std::vector<std::string>{"t/0@A 2: 0=4 2=4 |",
                                      "t/1@A 1: 0=2 2=2 |",
                                      "t/x@B 3: | 1/7=6"}));
  ballarus_profile_free(&back);
}

}  // namespace ballarus_test
