// paths_test.cc — lexical normalisation, gcov's .gcda naming rules and the
// driver-option parsing of core/paths.h.  (tests/store_test.cc checks the
// naming against the .gcda files real gcc -fprofile-arcs writes.)
#include "core/paths.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ballarus {
namespace {

TEST(NormalizePath, Lexical) {
  EXPECT_EQ(NormalizePath("/a/b/../c"), "/a/c");
  EXPECT_EQ(NormalizePath("a/../b.c"), "b.c");
  EXPECT_EQ(NormalizePath("test/../src/os.cc"), "src/os.cc");
  EXPECT_EQ(NormalizePath("/a//b/./c/"), "/a/b/c");
  EXPECT_EQ(NormalizePath("/../.."), "/");
  EXPECT_EQ(NormalizePath("/.."), "/");
  EXPECT_EQ(NormalizePath("../../x"), "../../x");
  EXPECT_EQ(NormalizePath("a/../../x"), "../x");
  EXPECT_EQ(NormalizePath(""), ".");
  EXPECT_EQ(NormalizePath("."), ".");
  EXPECT_EQ(NormalizePath("a/.."), ".");
  EXPECT_EQ(NormalizePath("/"), "/");
  EXPECT_EQ(NormalizePath("//x"), "/x");
  EXPECT_EQ(NormalizePath("a/.../b"), "a/.../b");  // "..." is a name
}

TEST(NormalizePath, Absolute) {
  EXPECT_EQ(AbsolutePath("/w", "src/a.c"), "/w/src/a.c");
  EXPECT_EQ(AbsolutePath("/w/sub", "../obj/a.o"), "/w/obj/a.o");
  EXPECT_EQ(AbsolutePath("/w", "/abs/./x"), "/abs/x");
}

TEST(Gcov, MangleIsGccs) {
  EXPECT_EQ(MangleGcovPath("/tmp/w/obj/a"), "#tmp#w#obj#a");
  EXPECT_EQ(MangleGcovPath("/tmp/w/sub/../obj/a"), "#tmp#w#sub#^#obj#a");
  EXPECT_EQ(MangleGcovPath("obj/a"), "obj#a");
  EXPECT_EQ(MangleGcovPath("a/"), "a#");
}

// The names observed with gcc 12 -fprofile-arcs (aux_base_name as the
// plugin sees it for each command line).
TEST(Gcov, DataFileNames) {
  auto base = [](std::string aux, std::string dir = "", std::string pp = "") {
    return GcovDataBase({aux, "/w", dir, pp});
  };
  // gcc -c src/a.c -o obj/a.o
  EXPECT_EQ(base("obj/a"), "/w/obj/a");
  // gcc -o prog src/a.c src/b.c
  EXPECT_EQ(base("prog-a"), "/w/prog-a");
  // gcc -c /w/src/a.c -o /w/obj/a.o: aux absolute, no prefix
  EXPECT_EQ(base("/w/obj/a"), "/w/obj/a");
  // cd sub && gcc -c ../src/a.c -o ../obj/a.o
  EXPECT_EQ(GcovDataBase({"../obj/a", "/w/sub", "", ""}), "/w/sub/../obj/a");
  // -fprofile-dir=/pd
  EXPECT_EQ(base("obj/a", "/pd"), "/pd/#w#obj#a");
  // -fprofile-dir=pd (relative: relative to the run-time cwd for gcov)
  EXPECT_EQ(base("prog-a", "pd"), "pd/#w#prog-a");
  // -fprofile-dir=/pd -fprofile-prefix-path=/w
  EXPECT_EQ(base("obj/a", "/pd", "/w"), "/pd/obj#a");
  // a prefix path that does not match is ignored (GCC warns)
  EXPECT_EQ(base("obj/a", "/pd", "/elsewhere"), "/pd/#w#obj#a");
  // an absolute aux with a profile dir: gcov nests the whole path
  EXPECT_EQ(base("/w/obj/a", "/pd"), "/pd//w/obj/a");
}

TEST(Gcov, ProfilePathIsAbsoluteAndNormalised) {
  EXPECT_EQ(ProfilePathFor({"obj/a", "/w", "", ""}), "/w/obj/a.bprof");
  EXPECT_EQ(ProfilePathFor({"../obj/a", "/w/sub", "", ""}), "/w/obj/a.bprof");
  EXPECT_EQ(ProfilePathFor({"prog-a", "/w", "pd", ""}),
            "/w/pd/#w#prog-a.bprof");
  EXPECT_EQ(ProfilePathFor({"/w/obj/a", "/w", "/pd", ""}),
            "/pd/w/obj/a.bprof");
}

TEST(DriverOptions, Parse) {
  std::vector<std::string> w;
  ASSERT_TRUE(ParseCollectGccOptions(
      "'-c' '-o' 'obj/a.o' '-mtune=generic' '-dumpdir' 'obj/'", &w));
  EXPECT_EQ(w, (std::vector<std::string>{"-c", "-o", "obj/a.o",
                                         "-mtune=generic", "-dumpdir",
                                         "obj/"}));
  ASSERT_TRUE(ParseCollectGccOptions("'-DX=it'\\''s' '-o' 'a b.o'", &w));
  EXPECT_EQ(w, (std::vector<std::string>{"-DX=it's", "-o", "a b.o"}));
  ASSERT_TRUE(ParseCollectGccOptions("", &w));
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(ParseCollectGccOptions("-c -o x", &w));
  EXPECT_FALSE(ParseCollectGccOptions("'-c", &w));
}

TEST(DriverOptions, ObjectFile) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ObjectFileFor(V{"-c", "-o", "obj/a.o"}, "src/a.c", "/w"),
            "/w/obj/a.o");
  EXPECT_EQ(ObjectFileFor(V{"-c"}, "src/a.c", "/w"), "/w/a.o");
  EXPECT_EQ(ObjectFileFor(V{"-c"}, "src/a.tar.c", "/w"), "/w/a.tar.o");
  EXPECT_EQ(ObjectFileFor(V{"-o", "prog"}, "src/a.c", "/w"), "");
  EXPECT_EQ(ObjectFileFor(V{"-c", "-S"}, "a.c", "/w"), "");
  EXPECT_EQ(ObjectFileFor(V{"-c"}, "<stdin>", "/w"), "");
  EXPECT_EQ(ObjectFileFor(V{"-c", "-o", "/o/x.lo"}, "<stdin>", "/w"),
            "/o/x.lo");
  EXPECT_EQ(ObjectFileFor(V{"-c", "-o", "../obj/./a.o"}, "a.c", "/w/sub"),
            "/w/obj/a.o");
}

}  // namespace
}  // namespace ballarus
