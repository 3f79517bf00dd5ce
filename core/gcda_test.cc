// gcda_test.cc — the .gcda codec against a file GCC 12's libgcov wrote, the
// object checksum against GCC's, and the file naming rules against what
// gcc 12.2 embeds in objects (tests/programs/templates at -O0: b.gcda holds
// an all-zero COMDAT copy, written with a negative length).
#include "core/gcda.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ballarus {
namespace {

// b.gcda of tests/programs/templates (g++ 12.2 -O0 -fprofile-arcs, one run).
const std::vector<uint8_t> kRealGcda = {
    0x61, 0x64, 0x63, 0x67, 0x2a, 0x32, 0x32, 0x42, 0xd6, 0x84, 0x5f, 0x06, 
    0x70, 0x66, 0x12, 0x22, 0x00, 0x00, 0x00, 0xa1, 0x08, 0x00, 0x00, 0x00, 
    0x01, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 
    0x0c, 0x00, 0x00, 0x00, 0x64, 0x1e, 0xe3, 0x13, 0xdc, 0x40, 0xc1, 0xb5, 
    0x1e, 0xff, 0x3b, 0x3a, 0x00, 0x00, 0xa1, 0x01, 0x10, 0x00, 0x00, 0x00, 
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x00, 0x00, 0x00, 
    0xeb, 0xa0, 0xbe, 0x01, 0x53, 0xfe, 0x9c, 0xa7, 0x1e, 0xff, 0x3b, 0x3a, 
    0x00, 0x00, 0xa1, 0x01, 0xf0, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 
    0x0c, 0x00, 0x00, 0x00, 0xd9, 0x64, 0x8b, 0x3a, 0x7f, 0xef, 0xe5, 0xd5, 
    0x77, 0x87, 0x5b, 0xf3, 0x00, 0x00, 0xa1, 0x01, 0x20, 0x00, 0x00, 0x00, 
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 
    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 
    0x0c, 0x00, 0x00, 0x00, 0x59, 0x4e, 0x3f, 0x14, 0xd0, 0x94, 0xeb, 0x66, 
    0xf3, 0x48, 0xab, 0xd7, 0x00, 0x00, 0xa1, 0x01, 0x18, 0x00, 0x00, 0x00, 
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 
    0x00, 0x00, 0x00, 0x00
};

TEST(Gcda, DecodesWhatLibgcovWrote) {
  GcdaFile f;
  std::string err;
  ASSERT_TRUE(DecodeGcda(kRealGcda.data(), kRealGcda.size(), &f, &err)) << err;
  EXPECT_EQ(GcovVersionString(f.version), "B22*");
  EXPECT_EQ(f.version, GcovVersionWord(12, 2, '*'));
  EXPECT_EQ(f.stamp, 106923222u);
  EXPECT_EQ(f.checksum, 571631216u);
  EXPECT_EQ(f.runs, 1u);
  EXPECT_EQ(f.sum_max, 18u);
  ASSERT_EQ(f.functions.size(), 4u);
  EXPECT_EQ(f.functions[0].ident, 333651556u);
  EXPECT_EQ(f.functions[0].lineno_checksum, 0xb5c140dcu);
  EXPECT_EQ(f.functions[0].cfg_checksum, 0x3a3bff1eu);
  EXPECT_EQ(f.functions[0].arcs, (std::vector<uint64_t>{3, 9}));
  EXPECT_EQ(f.functions[1].ident, 29270251u);  // the COMDAT copy not linked
  EXPECT_EQ(f.functions[1].arcs, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(f.functions[3].arcs, (std::vector<uint64_t>{3, 1, 0}));
}

TEST(Gcda, EncodesByteForByteLikeLibgcov) {
  GcdaFile f;
  std::string err;
  ASSERT_TRUE(DecodeGcda(kRealGcda.data(), kRealGcda.size(), &f, &err)) << err;
  EXPECT_EQ(EncodeGcda(f), kRealGcda);
}

TEST(Gcda, ObjectChecksumIsGccs) {
  GcdaFile f;
  std::string err;
  ASSERT_TRUE(DecodeGcda(kRealGcda.data(), kRealGcda.size(), &f, &err)) << err;
  EXPECT_EQ(GcovObjectChecksum(f.functions), f.checksum);
  // tests/programs/one_block.c at -O2: three functions.
  std::vector<GcdaFunction> fs(3);
  fs[0].ident = 108032747;
  fs[0].lineno_checksum = 0xc6bd8923;
  fs[0].cfg_checksum = 0xf642811e;
  fs[1].ident = 423856291;
  fs[1].lineno_checksum = 0x0b8909d4;
  fs[1].cfg_checksum = 0xa43083b8;
  fs[2].ident = 944400634;
  fs[2].lineno_checksum = 0x6ec177dd;
  fs[2].cfg_checksum = 0xa43083b8;
  EXPECT_EQ(GcovObjectChecksum(fs), 998872537u);
}

TEST(Gcda, EmptyFunctionRecordsAndSumMaxModulo) {
  GcdaFile f;
  f.version = GcovVersionWord(12, 2, '*');
  f.runs = 3;
  f.sum_max = (1ull << 32) + 5;  // stored modulo 2^32, like libgcov
  f.functions.resize(2);
  f.functions[0].present = false;
  f.functions[1].ident = 7;
  f.functions[1].arcs = {1ull << 40, 2};
  std::vector<uint8_t> bytes = EncodeGcda(f);
  GcdaFile g;
  std::string err;
  ASSERT_TRUE(DecodeGcda(bytes.data(), bytes.size(), &g, &err)) << err;
  EXPECT_EQ(g.sum_max, 5u);
  EXPECT_EQ(g.runs, 3u);
  ASSERT_EQ(g.functions.size(), 2u);
  EXPECT_FALSE(g.functions[0].present);
  EXPECT_EQ(g.functions[1].arcs, (std::vector<uint64_t>{1ull << 40, 2}));
}

TEST(Gcda, RejectsDamage) {
  std::vector<uint8_t> b = kRealGcda;
  GcdaFile f;
  std::string err;
  b[0] = 'x';
  EXPECT_FALSE(DecodeGcda(b.data(), b.size(), &f, &err));
  EXPECT_EQ(err, "offset 0: not a gcov data file");
  b = kRealGcda;
  b.pop_back();
  EXPECT_FALSE(DecodeGcda(b.data(), b.size(), &f, &err));
  b = kRealGcda;
  b.push_back(0);
  EXPECT_FALSE(DecodeGcda(b.data(), b.size(), &f, &err));
  EXPECT_NE(err.find("trailing"), std::string::npos) << err;
}

TEST(Gcda, MangleProfilePath) {
  EXPECT_EQ(MangleProfilePath("/tmp/a/b"), "#tmp#a#b");
  EXPECT_EQ(MangleProfilePath("a/../b"), "a#^#b");
  EXPECT_EQ(MangleProfilePath("x"), "x");
}

// The names gcc 12.2 embedded in objects (strings -a OBJ | grep gcda) for
// these compiles, run in /tmp/pgo-x/ob.
TEST(Gcda, FileNamesLikeCoverageInit) {
  const std::string pwd = "/tmp/pgo-x/ob";
  std::string warning;
  // gcc -fprofile-arcs -c one_block.c
  EXPECT_EQ(GcdaFileName("one_block", pwd, std::nullopt, ""),
            "/tmp/pgo-x/ob/one_block.gcda");
  // -c one_block.c -o /tmp/pgo-x/ob/sub/abs.o
  EXPECT_EQ(GcdaFileName("/tmp/pgo-x/ob/sub/abs", pwd, std::nullopt, ""),
            "/tmp/pgo-x/ob/sub/abs.gcda");
  // -fprofile-dir=pd -o sub/x.o
  EXPECT_EQ(GcdaFileName("sub/x", pwd, std::string("pd"), ""),
            "pd/#tmp#pgo-x#ob#sub#x.gcda");
  // -fprofile-dir=pd -o /tmp/pgo-x/ob/sub/abs2.o: absolute, not mangled
  EXPECT_EQ(GcdaFileName("/tmp/pgo-x/ob/sub/abs2", pwd, std::string("pd"), ""),
            "pd//tmp/pgo-x/ob/sub/abs2.gcda");
  // -fprofile-dir=/tmp/pgo-x/pdabs -fprofile-prefix-path=/tmp/pgo-x
  EXPECT_EQ(GcdaFileName("sub/y", pwd, std::string("/tmp/pgo-x/pdabs"),
                         "/tmp/pgo-x", &warning),
            "/tmp/pgo-x/pdabs/ob#sub#y.gcda");
  EXPECT_EQ(warning, "");
  // ... -fprofile-prefix-path=/nomatch: GCC warns and keeps the full path
  EXPECT_EQ(GcdaFileName("sub/z", pwd, std::string("/tmp/pgo-x/pdabs"),
                         "/nomatch", &warning),
            "/tmp/pgo-x/pdabs/#tmp#pgo-x#ob#sub#z.gcda");
  EXPECT_EQ(warning, "filename '/tmp/pgo-x/ob/sub/z' does not start with "
                     "profile prefix '/nomatch'");
}

}  // namespace
}  // namespace ballarus
