// metadata_compression_test.cc — versions 3 and 4's deflated body (core/
// metadata.cc) against zlib's own compress2 and hand-coded bytes, the
// bounds on inflating, and a fuzzer over damaged blobs.
#include "core/metadata.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <zlib.h>

#include "core/model.h"
#include "core/test_metadata.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

using namespace metadata_testing;  // NOLINT: the shared sample TUs and checks

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

// The version 3 (or `version`) blob of version 2 blob `v2` with its body
// after the names block replaced by `u raw_size` and `stream`, sizes and
// stamp fixed.
std::vector<uint8_t> WithCompressedBody(const std::vector<uint8_t>& v2,
                                        uint64_t raw_size,
                                        const std::vector<uint8_t>& stream,
                                        uint8_t version = 3) {
  std::vector<uint8_t> b(v2.begin(), v2.begin() + 56 + NamesSize(v2));
  PutVarint(&b, raw_size);
  b.insert(b.end(), stream.begin(), stream.end());
  b[8] = version;
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
  const std::vector<uint8_t> v3 = EncodeMetadata(tu, 3);
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
  // Versions 1 and 5 are refused.
  for (uint8_t v : {1, 5}) {
    std::vector<uint8_t> bad = v3;
    bad[8] = v;
    DecodeResult r = DecodeMetadata(bad.data(), bad.size(), &a);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.offset, 8u);
    EXPECT_NE(r.error.find("reads versions 2 to 4"), std::string::npos)
        << r.error;
  }
}

// A TU whose version 4 body is written out by hand below: one function
// (line 10 to 12) of blocks ENTRY, EXIT, 2 (lines 11, 10) and 3 (line 12),
// edges 0->2, 2->3 (counter 3), 2->1 (counter 2), 3->1 (counter 4).
TranslationUnit DeltaTu() {
  TranslationUnit tu;
  tu.compiler = "gcc";
  tu.flags = BALLARUS_META_F_EDGE;
  tu.n_counters = 5;
  tu.files = {"a.c"};
  Function f;
  f.name = f.demangled = "f";
  f.line = 10;
  f.end_line = 12;
  f.blocks.resize(4);
  f.blocks[2].lines = {{0, 11}, {0, 10}};
  f.blocks[3].lines = {{0, 12}};
  f.edges = {{0, 2, 0, kNoCounter}, {2, 3, 0, 3}, {2, 1, 0, 2}, {3, 1, 0, 4}};
  tu.functions = {f};
  return tu;
}

TEST(Metadata, VersionFourCodesDeltas) {
  const TranslationUnit tu = DeltaTu();
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  // zigzag: 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3, 2 -> 4.
  const std::vector<uint8_t> raw = {
      3, 'g', 'c', 'c', BALLARUS_META_F_EDGE, 5, 1, 3, 'a', '.', 'c',
      1,              // functions
      1, 'f', 1, 'f', 0, 10,
      4,              // end_line 12 from line 10: +2
      0, 0, 0,        // checksums, flags
      4, 0, 0,        // blocks; ENTRY and EXIT without lines
      2, 0, 2, 0, 1,  // block 2: line 11 from 10 (+1), 10 from 11 (-1)
      1, 0, 4,        // block 3: line 12 from 10 (+2)
      4,              // edges: src from the previous src, dst from src,
                      // counter from 1 + the previous counter, plus 1
      0, 4, 0, 0,     // 0->2 (0 from 0, +2), none
      4, 2, 0, 7,     // 2->3 (+2, +1), counter 3 from 0: +3
      0, 1, 0, 4,     // 2->1 (+0, -1), counter 2 from 4: -2
      2, 3, 0, 3,     // 3->1 (+1, -2), counter 4 from 3: +1
      0};             // extensions
  const std::vector<uint8_t> v4 = EncodeMetadata(tu);
  EXPECT_EQ(v4, WithCompressedBody(v2, raw.size(), Deflate(raw), 4));
  TranslationUnit back;
  DecodeResult r = DecodeMetadata(v4.data(), v4.size(), &back);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(SameTu(tu, back));
  // Version 3 of the same TU: the same body without deltas.
  const std::vector<uint8_t> v3 = EncodeMetadata(tu, 3);
  EXPECT_EQ(v3, WithCompressedBody(v2, RawBody(v2).size(),
                                   Deflate(RawBody(v2)), 3));
  ASSERT_TRUE(DecodeMetadata(v3.data(), v3.size(), &back).ok);
  EXPECT_TRUE(SameTu(tu, back));
}

// A difference that leaves its field's range is refused, naming the field.
TEST(Metadata, VersionFourDeltasOutOfRangeRefused) {
  const TranslationUnit tu = DeltaTu();
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  const std::vector<uint8_t> head = {3, 'g', 'c', 'c', BALLARUS_META_F_EDGE,
                                     5, 1, 3, 'a', '.', 'c', 1, 1, 'f', 1,
                                     'f', 0, 10};
  struct Case {
    std::vector<uint8_t> rest;
    const char* error;
  };
  const Case cases[] = {
      // end_line 10 - 11 < 0
      {{21, 0, 0, 0}, "function end line: 10 + -11 is not a u32"},
      // block 2's line 10 + 2^32
      {{4, 0, 0, 0, 4, 0, 0, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x20},
       "line: 10 + 4294967296 is not a u32"},
      // ENTRY, EXIT; edge 0 (0->1)'s counter 0 - 1
      {{4, 0, 0, 0, 2, 0, 0, 1, 0, 2, 0, 2},
       "edge 0: counter -1 out of range (5 counters)"},
      // edge 0's counter 0 + 5
      {{4, 0, 0, 0, 2, 0, 0, 1, 0, 2, 0, 11},
       "edge 0: counter 5 out of range (5 counters)"},
      // edge 0's target 0 - 1
      {{4, 0, 0, 0, 2, 0, 0, 1, 0, 1, 0, 0},
       "edge target: 0 + -1 is not a u32"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> raw = head;
    raw.insert(raw.end(), c.rest.begin(), c.rest.end());
    const std::vector<uint8_t> blob =
        WithCompressedBody(v2, raw.size(), Deflate(raw), 4);
    TranslationUnit back;
    DecodeResult r = DecodeMetadata(blob.data(), blob.size(), &back);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find(c.error), std::string::npos) << r.error;
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
  const std::vector<uint8_t> v3 = EncodeMetadata(tu, 3);
  EXPECT_LT(v3.size() * 4, v2.size()) << v3.size() << " vs " << v2.size();
  const std::vector<uint8_t> v4 = EncodeMetadata(tu);
  EXPECT_LT(v4.size(), v3.size());
  TranslationUnit back;
  for (const std::vector<uint8_t>* b : {&v3, &v4}) {
    DecodeResult r = DecodeMetadata(b->data(), b->size(), &back);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(SameTu(tu, back));
  }
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

}  // namespace
}  // namespace ballarus
