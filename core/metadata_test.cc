// metadata_test.cc — round trips, determinism and rejection of damaged blobs
// for the metadata codec (core/metadata.cc).
#include "core/metadata.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <zlib.h>

#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

// A TU with two functions: a diamond with counters on every countable edge,
// and a function with an EH edge, a fake edge, an ignored abnormal edge and
// an extension record.
TranslationUnit SampleTu() {
  TranslationUnit tu;
  tu.source = "src/a.c";
  tu.cwd = "/home/u/proj";
  tu.profile = "/home/u/proj/obj/a.bprof";
  tu.object = "/home/u/proj/obj/a.o";
  tu.compiler = "gcc 12.2.0";
  tu.flags = BALLARUS_META_F_NAIVE | BALLARUS_META_F_ATOMIC;
  tu.files = {"src/a.c", "src/a.h"};
  tu.n_counters = 7;

  Function d;
  d.name = "_Z7diamondi";
  d.demangled = "diamond(int)";
  d.file = 0;
  d.line = 3;
  d.end_line = 9;
  d.cfg_checksum = 0xdeadbeef;
  d.lineno_checksum = 12345;
  d.flags = 0;
  d.blocks.resize(6);
  d.blocks[2].lines = {{0, 3}, {0, 4}};
  d.blocks[3].lines = {{0, 5}};
  d.blocks[4].lines = {{1, 200}};
  d.blocks[5].lines = {{0, 8}, {0, 9}};
  d.edges = {{0, 2, kEdgeFallthru, 0},
             {2, 3, kEdgeTrue, 1},
             {2, 4, kEdgeFalse, 2},
             {3, 5, kEdgeFallthru, 3},
             {4, 5, kEdgeFallthru, 4},
             {5, 1, kEdgeFallthru, 5}};

  Function g;
  g.name = "_Z1gv";
  g.demangled = "g()";
  g.file = 1;
  g.line = 20;
  g.end_line = 30;
  g.cfg_checksum = 1;
  g.lineno_checksum = 2;
  g.flags = kFunctionComdat;
  g.blocks.resize(5);
  g.blocks[2].lines = {{1, 21}};
  g.blocks[3].lines = {{1, 22}};
  g.blocks[4].lines = {};
  g.edges = {{0, 2, kEdgeFallthru, 6},
             {0, 4, kEdgeFake, kNoCounter},
             {2, 3, kEdgeFallthru, kNoCounter},
             {2, 4, kEdgeEh | kEdgeAbnormal, kNoCounter},
             {2, 1, kEdgeFake, kNoCounter},
             {3, 1, kEdgeFallthru, kNoCounter},
             {3, 4, kEdgeAbnormal | kEdgeIgnored, kNoCounter},
             {4, 1, kEdgeFallthru, kNoCounter}};
  g.extensions = {{7, {1, 2, 3, 0, 255}}, {9, {}}};
  tu.functions = {d, g};
  return tu;
}

bool SameTu(const TranslationUnit& a, const TranslationUnit& b) {
  if (a.source != b.source || a.cwd != b.cwd || a.profile != b.profile ||
      a.object != b.object || a.compiler != b.compiler ||
      a.flags != b.flags || a.n_counters != b.n_counters ||
      a.files != b.files || a.functions.size() != b.functions.size())
    return false;
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const Function& f = a.functions[i];
    const Function& g = b.functions[i];
    if (f.name != g.name || f.demangled != g.demangled || f.file != g.file ||
        f.line != g.line || f.end_line != g.end_line ||
        f.cfg_checksum != g.cfg_checksum ||
        f.lineno_checksum != g.lineno_checksum || f.flags != g.flags ||
        f.blocks.size() != g.blocks.size() ||
        f.edges.size() != g.edges.size() ||
        f.extensions.size() != g.extensions.size())
      return false;
    for (size_t k = 0; k < f.blocks.size(); ++k)
      if (!(f.blocks[k].lines == g.blocks[k].lines)) return false;
    for (size_t k = 0; k < f.edges.size(); ++k)
      if (f.edges[k].src != g.edges[k].src ||
          f.edges[k].dst != g.edges[k].dst ||
          f.edges[k].flags != g.edges[k].flags ||
          f.edges[k].counter != g.edges[k].counter)
        return false;
    for (size_t k = 0; k < f.extensions.size(); ++k)
      if (f.extensions[k].tag != g.extensions[k].tag ||
          f.extensions[k].bytes != g.extensions[k].bytes)
        return false;
  }
  return true;
}

uint64_t Le64(const std::vector<uint8_t>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}

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
  EXPECT_EQ(h.version, 3u);
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

// Structural errors in bodies whose stamp is right (the encoder does not
// validate, so it can produce them).
// Both versions find the same problem at the same byte of the body after
// the names block: version 2 names its blob offset, version 3 the offset
// of the compressed body and the byte within the inflated one.
std::string DecodeError(const TranslationUnit& tu) {
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  TranslationUnit back;
  DecodeResult r2 = DecodeMetadata(v2.data(), v2.size(), &back);
  EXPECT_FALSE(r2.ok);
  EXPECT_GE(r2.offset, 56u);
  EXPECT_LT(r2.offset, v2.size());
  const std::vector<uint8_t> blob = EncodeMetadata(tu);
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  EXPECT_FALSE(r.ok);
  uint32_t names_size;
  std::memcpy(&names_size, blob.data() + 52, 4);
  EXPECT_EQ(r.offset, 56u + names_size);
  const std::string problem = r2.error.substr(r2.error.find(": ") + 2);
  EXPECT_EQ(r.error, "offset " + std::to_string(56 + names_size) +
                         ": inflated body byte " +
                         std::to_string(r2.offset - 56 - names_size) + ": " +
                         problem);
  return r.error;
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

// ---------------------------------------------------------------------------
// Version 3: the body after the names block deflated.

void PutVarint(std::vector<uint8_t>* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out->push_back(byte);
  } while (v != 0);
}

uint32_t NamesSize(const std::vector<uint8_t>& blob) {
  uint32_t n;
  std::memcpy(&n, blob.data() + 52, 4);
  return n;
}

// zlib's own compress2 at level 6: an oracle independent of the encoder.
std::vector<uint8_t> Deflate(const std::vector<uint8_t>& raw, int level = 6) {
  uLongf n = compressBound(raw.size());
  std::vector<uint8_t> out(n);
  EXPECT_EQ(compress2(out.data(), &n, raw.data(), raw.size(), level), Z_OK);
  out.resize(n);
  return out;
}

// The version 3 blob of version 2 blob `v2` with its body after the names
// block replaced by `u raw_size` and `stream`, sizes and stamp fixed.
std::vector<uint8_t> WithCompressedBody(const std::vector<uint8_t>& v2,
                                        uint64_t raw_size,
                                        const std::vector<uint8_t>& stream) {
  std::vector<uint8_t> b(v2.begin(), v2.begin() + 56 + NamesSize(v2));
  PutVarint(&b, raw_size);
  b.insert(b.end(), stream.begin(), stream.end());
  b[8] = 3;
  const uint64_t size = b.size();
  std::memcpy(b.data() + 24, &size, 8);
  const uint64_t stamp = ballarus_hash64(b.data() + 56, b.size() - 56);
  std::memcpy(b.data() + 16, &stamp, 8);
  return b;
}

std::vector<uint8_t> RawBody(const std::vector<uint8_t>& v2) {
  return std::vector<uint8_t>(v2.begin() + 56 + NamesSize(v2), v2.end());
}

TEST(Metadata, VersionThreeIsVersionTwoDeflated) {
  const TranslationUnit tu = SampleTu();
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  const std::vector<uint8_t> v3 = EncodeMetadata(tu);
  const std::vector<uint8_t> raw = RawBody(v2);
  // Byte for byte: names block, varint of the raw size, zlib's stream of
  // the version 2 body at level 6.
  EXPECT_EQ(v3, WithCompressedBody(v2, raw.size(), Deflate(raw)));
  EXPECT_EQ(v2[8], 2);
  EXPECT_EQ(v3[8], 3);
  // Same TU, same identity; another stamp (it covers the stored bytes).
  EXPECT_EQ(Le64(v2, 40), Le64(v3, 40));
  EXPECT_NE(Le64(v2, 16), Le64(v3, 16));
  // Version 2 blobs (older objects and profiles) still decode.
  TranslationUnit a, b;
  ASSERT_TRUE(DecodeMetadata(v2.data(), v2.size(), &a).ok);
  ASSERT_TRUE(DecodeMetadata(v3.data(), v3.size(), &b).ok);
  EXPECT_TRUE(SameTu(tu, a));
  EXPECT_TRUE(SameTu(tu, b));
  // Versions 1 and 4 are refused.
  for (uint8_t v : {1, 4}) {
    std::vector<uint8_t> bad = v3;
    bad[8] = v;
    DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &a);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.offset, 8u);
    EXPECT_NE(r.error.find("reads versions 2 to 3"), std::string::npos)
        << r.error;
  }
}

TEST(Metadata, RealisticTuCompresses) {
  // 300 functions of one shape with their own names, as template
  // instances are: the bulk of a C++ TU's metadata.
  TranslationUnit tu = SampleTu();
  const Function f = tu.functions[0];
  tu.functions.clear();
  tu.n_counters = 0;
  for (int i = 0; i < 300; ++i) {
    Function g = f;
    g.name = "_ZN3fmt2v96detail9write_intIcLi" + std::to_string(i) + "EEvPc";
    g.demangled = "void fmt::v9::detail::write_int<char, " +
                  std::to_string(i) + ">(char*)";
    g.line = 100 + 7 * i;
    for (Edge& e : g.edges)
      if (e.counter != kNoCounter) e.counter = tu.n_counters++;
    tu.functions.push_back(g);
  }
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  const std::vector<uint8_t> v3 = EncodeMetadata(tu);
  EXPECT_LT(v3.size() * 4, v2.size()) << v3.size() << " vs " << v2.size();
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(v3.data(), v3.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
}

// Every way a compressed body can lie is refused with a one-line error at
// the compressed body's offset, and never makes the decoder allocate more
// than the sizes checked up front.
TEST(Metadata, CompressedBodyBounded) {
  const std::vector<uint8_t> v2 = EncodeMetadata(SampleTu(), 2);
  const std::vector<uint8_t> raw = RawBody(v2);
  const std::vector<uint8_t> z = Deflate(raw);
  const uint64_t body_at = 56 + NamesSize(v2);
  auto error = [&](const std::vector<uint8_t>& blob) {
    TranslationUnit tu;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &tu);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.offset, body_at) << r.error;
    EXPECT_EQ(r.error.find('\n'), std::string::npos);
    EXPECT_TRUE(tu.functions.empty());
    return r.error;
  };
  auto has = [](const std::string& error, const std::string& text) {
    return error.find(text) != std::string::npos;
  };
  // Sizes refused before any allocation.
  std::string e = error(WithCompressedBody(v2, (uint64_t{1} << 28) + 1, z));
  EXPECT_TRUE(has(e, "inflated body size 268435457 exceeds the limit of "
                     "268435456 bytes")) << e;
  e = error(WithCompressedBody(v2, 1032 * (z.size() + 1), z));
  EXPECT_TRUE(has(e, "is more than deflate can encode in " +
                         std::to_string(z.size()) + " bytes")) << e;
  e = error(WithCompressedBody(v2, UINT64_MAX, z));
  EXPECT_TRUE(has(e, "exceeds the limit")) << e;
  // Declared size wrong either way.
  e = error(WithCompressedBody(v2, raw.size() - 1, z));
  EXPECT_TRUE(has(e, "does not end within the declared " +
                         std::to_string(raw.size() - 1) + " bytes")) << e;
  e = error(WithCompressedBody(v2, raw.size() + 1, z));
  EXPECT_TRUE(has(e, "inflates to " + std::to_string(raw.size()) +
                         " bytes, not the declared " +
                         std::to_string(raw.size() + 1))) << e;
  e = error(WithCompressedBody(v2, 0, z));
  EXPECT_TRUE(has(e, "does not end within the declared 0 bytes")) << e;
  // Damaged streams.
  std::vector<uint8_t> zz = z;
  zz.push_back(0);
  e = error(WithCompressedBody(v2, raw.size(), zz));
  EXPECT_TRUE(has(e, "1 trailing bytes after the compressed body")) << e;
  zz.assign(z.begin(), z.end() - 3);
  e = error(WithCompressedBody(v2, raw.size(), zz));
  EXPECT_TRUE(has(e, "compressed body truncated")) << e;
  zz = z;
  zz[0] = 0;  // zlib header
  e = error(WithCompressedBody(v2, raw.size(), zz));
  EXPECT_TRUE(has(e, "corrupt compressed body: incorrect header check")) << e;
  zz = z;
  zz.back() ^= 1;  // Adler-32 of the data
  e = error(WithCompressedBody(v2, raw.size(), zz));
  EXPECT_TRUE(has(e, "corrupt compressed body: incorrect data check")) << e;
  e = error(WithCompressedBody(v2, raw.size(), {}));
  EXPECT_TRUE(has(e, "compressed body truncated")) << e;
  // A zip bomb: 16 MiB of zeros (16 KiB of stream) declared as 1000 bytes
  // stops at 1000; declared as its real size, it inflates (within the
  // bounds) and the body's own checks refuse it.
  const std::vector<uint8_t> bomb = Deflate(std::vector<uint8_t>(16 << 20), 9);
  EXPECT_LT(bomb.size(), 20000u);
  e = error(WithCompressedBody(v2, 1000, bomb));
  EXPECT_TRUE(has(e, "does not end within the declared 1000 bytes")) << e;
  e = error(WithCompressedBody(v2, 16 << 20, bomb));
  EXPECT_TRUE(has(e, "inflated body byte 1: TU flags 0x0000000000000000 "
                     "disagree with header flags")) << e;
  // A damaged stream whose stamp was not fixed: the stamp catches it
  // before zlib sees it.
  std::vector<uint8_t> v3 = EncodeMetadata(SampleTu());
  v3[v3.size() - 5] ^= 0x10;
  TranslationUnit tu;
  DecodeResult r = DecodeMetadata(v3.data(), v3.size(), &tu);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.offset, 16u);
  EXPECT_TRUE(has(r.error, "does not match the body's hash")) << r.error;
}

// Random bytes, random bytes behind a valid header, and randomly mutated
// blobs never crash and never pass.  Bodies are re-stamped so the structural
// checks (not just the stamp) are exercised.
// Both versions: mutated version 3 blobs exercise inflate on damaged streams.
TEST(Metadata, FuzzNeverCrashes) {
 for (uint32_t version : {2u, 3u}) {
  std::mt19937_64 rng(42);
  const std::vector<uint8_t> good = EncodeMetadata(SampleTu(), version);
  int random_ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> b;
    switch (iter % 3) {
      case 0: {
        b.resize(rng() % 200);
        for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
        break;
      }
      case 1: {
        b = good;
        b.resize(56 + rng() % 150);
        for (size_t i = 56; i < b.size(); ++i) b[i] = static_cast<uint8_t>(rng());
        break;
      }
      case 2: {
        b = good;
        const int n = 1 + rng() % 4;
        for (int k = 0; k < n; ++k)
          b[56 + rng() % (b.size() - 56)] = static_cast<uint8_t>(rng());
        break;
      }
    }
    if (iter % 3 != 0 && b.size() >= 56) {
      const uint64_t size = b.size();
      std::memcpy(b.data() + 24, &size, 8);
      const uint64_t stamp = ballarus_hash64(b.data() + 56, b.size() - 56);
      std::memcpy(b.data() + 16, &stamp, 8);
    }
    TranslationUnit tu;
    DecodeResult r = DecodeMetadata(b.data(), b.size(), &tu);
    if (r.ok) {
      if (iter % 3 != 2) ++random_ok;
      // Whatever decodes must re-encode to the same bytes (canonical form)
      // in version 2; in version 3 another deflate stream may inflate to
      // the same body, which must then re-encode to an equal TU.
      if (version == 2) {
        EXPECT_EQ(EncodeMetadata(tu, 2), b);
      } else {
        const std::vector<uint8_t> again = EncodeMetadata(tu);
        TranslationUnit tu2;
        ASSERT_TRUE(DecodeMetadata(again.data(), again.size(), &tu2).ok);
        EXPECT_TRUE(SameTu(tu, tu2));
      }
    } else {
      EXPECT_LE(r.offset, b.size());
      EXPECT_FALSE(r.error.empty());
    }
  }
  // Random headers or bodies never form a valid blob (magic, identity).
  EXPECT_EQ(random_ok, 0) << "version " << version;
 }
}

// ---------------------------------------------------------------------------
// The path-profiling extension (PathInfo, kPathExtensionTag).

PathInfo SamplePathInfo() {
  PathInfo p;
  p.storage = PathInfo::kDense;
  p.base = 6;
  p.n_paths = 6;
  p.flags = kPathFlagEarlyTermination;
  p.cut_edges = {1, 4};
  p.cut_blocks = {3};
  return p;
}

bool SamePathInfo(const PathInfo& a, const PathInfo& b) {
  return a.storage == b.storage && a.base == b.base &&
         a.n_paths == b.n_paths && a.flags == b.flags &&
         a.cut_edges == b.cut_edges && a.cut_blocks == b.cut_blocks &&
         a.precount_edges == b.precount_edges && a.derived == b.derived &&
         a.balanced == b.balanced && a.entry_path == b.entry_path &&
         a.entry_calls == b.entry_calls;
}

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

// Hand-made bytes: each value an unsigned LEB128 varint.
std::vector<uint8_t> Varints(const std::vector<uint64_t>& values) {
  std::vector<uint8_t> out;
  for (uint64_t v : values) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      out.push_back(v ? byte | 0x80 : byte);
    } while (v);
  }
  return out;
}

// Decodes bytes that must be rejected; returns the error.
std::string PathInfoError(const std::vector<uint8_t>& bytes) {
  PathInfo info;
  std::string err;
  EXPECT_FALSE(DecodePathInfo(bytes, &info, &err));
  EXPECT_EQ(err.rfind("path info: byte ", 0), 0u) << err;
  return err;
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

// A TU whose diamond carries a dense path table right after its 6 edge
// counters: 6 paths, counters 7..13 (6 + the out-of-range counter).
TranslationUnit PathTu(const PathInfo& info) {
  TranslationUnit tu = SampleTu();
  tu.flags |= BALLARUS_META_F_PATH;
  tu.n_counters = 14;
  tu.functions[0].extensions = {{kPathExtensionTag, EncodePathInfo(info)}};
  return tu;
}

PathInfo DiamondPaths(uint64_t base, uint64_t n_paths) {
  PathInfo p;
  p.base = base;
  p.n_paths = n_paths;
  return p;
}

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

// ---------------------------------------------------------------------------
// gcov's view of a function (GcovReportInfo, kGcovReportExtensionTag).

TEST(GcovReportInfo, ExactBytesAndRoundTrip) {
  GcovReportInfo g;
  g.start_column = 5;
  g.end_column = 300;
  g.dropped_edges = {1, 4};
  EXPECT_EQ(EncodeGcovReportInfo(g), Varints({5, 300, 2, 1, 4}));
  GcovReportInfo back;
  std::string err;
  ASSERT_TRUE(DecodeGcovReportInfo(EncodeGcovReportInfo(g), &back, &err)) << err;
  EXPECT_EQ(back.start_column, 5u);
  EXPECT_EQ(back.end_column, 300u);
  EXPECT_EQ(back.dropped_edges, (std::vector<uint32_t>{1, 4}));
  for (size_t n = 0; n < EncodeGcovReportInfo(g).size(); ++n) {
    std::vector<uint8_t> cut = EncodeGcovReportInfo(g);
    cut.resize(n);
    EXPECT_FALSE(DecodeGcovReportInfo(cut, &back, &err)) << n;
  }
  EXPECT_FALSE(DecodeGcovReportInfo(Varints({5, 3, 2, 4, 4}), &back, &err));
  EXPECT_EQ(err, "gcov report info: byte 4: dropped edges not ascending");
  EXPECT_FALSE(DecodeGcovReportInfo(Varints({5, 3, 0, 0}), &back, &err));
  EXPECT_EQ(err, "gcov report info: byte 3: trailing bytes");
}

TEST(GcovReportInfo, InBlobDroppedEdgesMustBeFakeEdges) {
  TranslationUnit tu = SampleTu();
  Function& g = tu.functions[1];  // edges 1 and 4 are fake, 2 is not
  GcovReportInfo info;
  info.start_column = 3;
  info.end_column = 1;
  info.dropped_edges = {1, 4};
  g.extensions = {{kGcovReportExtensionTag, EncodeGcovReportInfo(info)}};
  std::vector<uint8_t> blob = EncodeMetadata(tu);
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  const GcovReportInfo got = GcovReportInfoOf(back.functions[1]);
  EXPECT_EQ(got.start_column, 3u);
  EXPECT_EQ(got.dropped_edges, (std::vector<uint32_t>{1, 4}));
  // Absent: the defaults.
  EXPECT_EQ(GcovReportInfoOf(back.functions[0]).start_column, 0u);
  EXPECT_TRUE(GcovReportInfoOf(back.functions[0]).dropped_edges.empty());
  for (uint32_t bad : {2u, 8u}) {
    info.dropped_edges = {bad};
    g.extensions = {{kGcovReportExtensionTag, EncodeGcovReportInfo(info)}};
    EXPECT_NE(DecodeError(tu).find("function '_Z1gv': gcov-dropped edge " +
                                   std::to_string(bad) +
                                   " is not a fake edge of the function"),
              std::string::npos)
        << DecodeError(tu);
  }
  g.extensions = {{kGcovReportExtensionTag, {7}}};
  EXPECT_NE(DecodeError(tu).find("function '_Z1gv': gcov report info: byte 1: "),
            std::string::npos)
      << DecodeError(tu);
}

}  // namespace
}  // namespace ballarus
