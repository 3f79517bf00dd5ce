// metadata_test.cc — round trips, determinism and rejection of damaged blobs
// for the metadata codec (core/metadata.cc): header fields, identity,
// truncation, bit flips, structural errors of the body.
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

TEST(Metadata, RoundTrip) {
  const TranslationUnit tu = SampleTu();
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
  EXPECT_EQ(back.functions[1].extensions[0].bytes,
            (std::vector<uint8_t>{1, 2, 3, 0, 255}));
  EXPECT_EQ(back.functions[1].edges[1].counter, kNoCounter);
  EXPECT_EQ(back.functions[0].edges[5].counter, 5);
}

TEST(Metadata, HeaderFields) {
  const TranslationUnit tu = SampleTu();
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  ballarus_meta_header h;
  ASSERT_GE(blob.size(), sizeof h);
  std::memcpy(&h, blob.data(), sizeof h);
  EXPECT_EQ(std::memcmp(h.magic, "BLRSMETA", 8), 0);
  EXPECT_EQ(h.version, 4u);
  EXPECT_EQ(h.header_size, 56u);
  EXPECT_EQ(h.size, blob.size());
  EXPECT_EQ(h.n_counters, 7u);
  EXPECT_EQ(h.flags, BALLARUS_META_F_NAIVE | BALLARUS_META_F_ATOMIC);
  const std::string names = std::string("/home/u/proj/obj/a.bprof") + '\0' +
                            "/home/u/proj/obj/a.o" + '\0' + "src/a.c" + '\0' +
                            "/home/u/proj" + '\0';
  EXPECT_EQ(h.names_size, names.size());
  EXPECT_EQ(h.stamp, ballarus_hash64(blob.data() + 56, blob.size() - 56));
  // The identity is the profile path's hash: the object, not the source.
  const std::string id = "/home/u/proj/obj/a.bprof";
  EXPECT_EQ(h.identity, ballarus_hash64(id.data(), id.size()));
  // The body starts with the names block, plain C strings.
  EXPECT_EQ(std::string(blob.begin() + 56, blob.begin() + 56 + names.size()),
            names);
  ballarus_meta_names n;
  ASSERT_EQ(ballarus_meta_get_names(blob.data(), blob.size(), &n), 0);
  EXPECT_STREQ(n.profile, "/home/u/proj/obj/a.bprof");
  EXPECT_STREQ(n.object, "/home/u/proj/obj/a.o");
  EXPECT_STREQ(n.source, "src/a.c");
  EXPECT_STREQ(n.cwd, "/home/u/proj");
}

TEST(Metadata, IdentityIsTheProfilePath) {
  // Same source, two objects (static and -fPIC): two identities.
  TranslationUnit a = SampleTu(), b = SampleTu();
  b.profile = "/home/u/proj/objs/a.bprof";
  b.object = "/home/u/proj/objs/a.o";
  EXPECT_NE(TuIdentity(a), TuIdentity(b));
  EXPECT_NE(Le64(EncodeMetadata(a), 40), Le64(EncodeMetadata(b), 40));
  // Another build of one object: same identity, another stamp.
  b = SampleTu();
  b.functions[0].line = 4;
  b.cwd = "/elsewhere";
  EXPECT_EQ(Le64(EncodeMetadata(a), 40), Le64(EncodeMetadata(b), 40));
  EXPECT_NE(Le64(EncodeMetadata(a), 16), Le64(EncodeMetadata(b), 16));
  // Without a profile path (hand-made TUs): cwd and source, as version 1.
  TranslationUnit c = SampleTu();
  c.profile.clear();
  uint64_t id = ballarus_hash64("/home/u/proj", 12);
  id = ballarus_hash64_update(id, "", 1);
  id = ballarus_hash64_update(id, "src/a.c", 7);
  EXPECT_EQ(TuIdentity(c), id);
}

TEST(Metadata, RelativeProfileOrObjectRejected) {
  for (int which = 0; which < 2; ++which) {
    TranslationUnit t = SampleTu();
    (which == 0 ? t.profile : t.object) = "obj/a.x";
    const std::vector<uint8_t> blob = EncodeMetadata(t);
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("must be absolute: 'obj/a.x'"), std::string::npos)
        << r.error;
  }
}

TEST(Metadata, VersionOneBlobRefused) {
  std::vector<uint8_t> blob = EncodeMetadata(SampleTu());
  blob[8] = 1;
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.offset, 8u);
  EXPECT_NE(r.error.find("metadata version 1 unsupported"), std::string::npos)
      << r.error;
}

TEST(Metadata, EmptyTuRoundTrips) {
  TranslationUnit tu;
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  // 4 empty names, then the compressed body.
  EXPECT_GT(blob.size(), 56u + 4u + 5u);
  // Version 2: 4 empty names, an empty compiler string, flags, n_counters,
  // no files, no functions.
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  EXPECT_EQ(v2.size(), 56u + 4u + 5u);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(v2.data(), v2.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
}

TEST(Metadata, LargeValuesUseLongVarints) {
  TranslationUnit tu = SampleTu();
  tu.n_counters = (uint64_t{1} << 40) + 3;
  tu.functions[0].cfg_checksum = 0xffffffffu;
  tu.functions[0].edges[0].counter = (int64_t{1} << 40) + 2;
  tu.functions[0].line = 0x7fffffff;
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
}

TEST(Metadata, Deterministic) {
  const std::vector<uint8_t> a = EncodeMetadata(SampleTu());
  const std::vector<uint8_t> b = EncodeMetadata(SampleTu());
  EXPECT_EQ(a, b);
  // Re-encoding a decoded TU gives the same bytes.
  TranslationUnit back;
  ASSERT_TRUE(DecodeMetadata(a.data(), a.size(), &back).ok);
  EXPECT_EQ(EncodeMetadata(back), a);
  // Any change changes the stamp; the identity depends on the profile
  // path only.
  TranslationUnit t = SampleTu();
  t.functions[0].edges[1].flags = kEdgeFalse;
  const std::vector<uint8_t> c = EncodeMetadata(t);
  EXPECT_NE(Le64(a, 16), Le64(c, 16));
  EXPECT_EQ(Le64(a, 40), Le64(c, 40));
  t.profile = "/elsewhere/a.bprof";
  EXPECT_NE(Le64(a, 40), Le64(EncodeMetadata(t), 40));
}

TEST(Metadata, EveryTruncationRejected) {
  const std::vector<uint8_t> blob = EncodeMetadata(SampleTu());
  for (size_t n = 0; n < blob.size(); ++n) {
    TranslationUnit tu;
    DecodeResult r = DecodeMetadata(blob.data(), n, &tu);
    EXPECT_FALSE(r.ok) << "prefix " << n;
    EXPECT_LE(r.offset, n);
    EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
    EXPECT_EQ(r.error.rfind("offset " + std::to_string(r.offset) + ": ", 0),
              0u)
        << r.error;
  }
}

TEST(Metadata, TrailingBytesRejected) {
  std::vector<uint8_t> blob = EncodeMetadata(SampleTu());
  const size_t size = blob.size();
  blob.push_back(0);
  TranslationUnit tu;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &tu);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.offset, size);
  EXPECT_NE(r.error.find("trailing"), std::string::npos) << r.error;
}

// Every single-bit flip is detected: header fields are cross-checked against
// the body, and the body is covered by the stamp.
TEST(Metadata, EveryBitFlipRejected) {
  const std::vector<uint8_t> blob = EncodeMetadata(SampleTu());
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = blob;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      TranslationUnit tu;
      DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &tu);
      ASSERT_FALSE(r.ok) << "flip of byte " << byte << " bit " << bit;
      EXPECT_LE(r.offset, bad.size());
      EXPECT_EQ(r.error.rfind("offset ", 0), 0u) << r.error;
      EXPECT_TRUE(tu.functions.empty());  // no half-decoded output
    }
  }
}

TEST(Metadata, HeaderFlipsNameTheField) {
  const std::vector<uint8_t> blob = EncodeMetadata(SampleTu());
  struct Case {
    size_t byte;
    uint64_t offset;
    const char* text;
  } cases[] = {
      {0, 0, "magic"},          {8, 8, "version"},
      {12, 12, "header size"},  {16, 16, "stamp"},
      {33, 32 + 0, ""},         {40, 40, "identity"},
      {49, 48, "unknown metadata flags"},
      {52, 52, "names block"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bad = blob;
    bad[c.byte] ^= 0x02;
    TranslationUnit tu;
    DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &tu);
    ASSERT_FALSE(r.ok);
    if (c.byte == 33) {
      // n_counters: detected where the body repeats it.
      EXPECT_NE(r.error.find("counters, header says"), std::string::npos)
          << r.error;
      continue;
    }
    EXPECT_EQ(r.offset, c.offset) << r.error;
    EXPECT_NE(r.error.find(c.text), std::string::npos) << r.error;
  }
  // A flip to another known flag is caught where the body repeats the flags.
  {
    std::vector<uint8_t> bad = blob;
    bad[48] ^= 0x02;
    TranslationUnit tu;
    DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &tu);
    EXPECT_NE(r.error.find("disagree with header flags"), std::string::npos)
        << r.error;
  }
  // The size field: bigger than the data is a truncation, smaller leaves
  // trailing bytes.
  std::vector<uint8_t> bad = blob;
  bad[24] += 1;
  TranslationUnit tu;
  DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &tu);
  EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
  bad[24] -= 2;
  r = DecodeMetadata(bad.data(), bad.size(), &tu);
  EXPECT_NE(r.error.find("trailing"), std::string::npos) << r.error;
}


TEST(Metadata, StructuralErrorsReported) {
  TranslationUnit t = SampleTu();
  t.functions[0].edges[2].dst = 6;
  EXPECT_NE(DecodeError(t).find("function '_Z7diamondi': edge 2 names block 6 "
                                "of 6"),
            std::string::npos)
      << DecodeError(t);

  t = SampleTu();
  t.functions[0].edges[2].src = 9;
  EXPECT_NE(DecodeError(t).find("edge 2 leaves block 9 of 6"),
            std::string::npos);

  t = SampleTu();
  t.functions[0].edges[3].counter = 7;
  EXPECT_NE(DecodeError(t).find("counter 7 out of range (7 counters)"),
            std::string::npos);

  t = SampleTu();
  t.functions[1].edges[0].counter = 2;  // also used by diamond's edge 2
  EXPECT_NE(DecodeError(t).find("counter 2 already used"), std::string::npos);

  t = SampleTu();
  t.functions[1].edges[1].counter = 6;
  t.functions[1].edges[0].counter = kNoCounter;
  EXPECT_NE(DecodeError(t).find("fake/ignored edge has a counter"),
            std::string::npos);

  t = SampleTu();
  t.functions[1].blocks[3].lines = {{2, 1}};
  EXPECT_NE(DecodeError(t).find("block 3: file index 2 out of range (2 files)"),
            std::string::npos);

  t = SampleTu();
  t.functions[1].file = 5;
  EXPECT_NE(DecodeError(t).find("file index 5 out of range"),
            std::string::npos);

  t = SampleTu();
  t.functions[0].blocks.resize(1);
  t.functions[0].edges.clear();
  EXPECT_NE(DecodeError(t).find("ENTRY and EXIT are required"),
            std::string::npos);

  t = SampleTu();
  std::swap(t.functions[0].edges[0], t.functions[0].edges[1]);
  EXPECT_NE(DecodeError(t).find("grouped by source"), std::string::npos);

  t = SampleTu();
  t.functions[0].edges.push_back({1, 2, 0, kNoCounter});
  EXPECT_NE(DecodeError(t).find("leaves EXIT"), std::string::npos);

  t = SampleTu();
  t.functions[0].edges[4].dst = 0;
  EXPECT_NE(DecodeError(t).find("enters ENTRY"), std::string::npos);

  t = SampleTu();
  t.functions[0].edges[4].flags = 1u << 20;
  EXPECT_NE(DecodeError(t).find("unknown edge flags"), std::string::npos);

  t = SampleTu();
  t.functions[0].edges[4].flags |= kEdgeReentry;  // not out of ENTRY
  EXPECT_NE(DecodeError(t).find("re-entry edge does not leave ENTRY"),
            std::string::npos);

  t = SampleTu();
  t.functions[0].flags = 1u << 5;
  EXPECT_NE(DecodeError(t).find("unknown function flags"), std::string::npos);
}

TEST(Metadata, NonMinimalVarintRejected) {
  // Body of an empty TU with compiler "" encoded as 0x80 0x00 instead of
  // 0x00 (after the 4-byte names block of four empty names).
  TranslationUnit tu;
  std::vector<uint8_t> blob = EncodeMetadata(tu, 2);
  blob.insert(blob.begin() + 60, 0x80);
  const uint64_t size = blob.size();
  std::memcpy(blob.data() + 24, &size, 8);
  const uint64_t stamp = ballarus_hash64(blob.data() + 56, blob.size() - 56);
  std::memcpy(blob.data() + 16, &stamp, 8);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.offset, 60u);
  EXPECT_NE(r.error.find("not minimal"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace ballarus
