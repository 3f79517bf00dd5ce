// hardening_test.cc — ballarus-reconstruct on hostile profiles: names with
// newlines, escape sequences, NUL and Latin-1 bytes; counts near 2^64
// (after many merges).  Every message stays one printable line naming the
// file, every JSON document parses, no line count goes negative and no
// signed arithmetic overflows.  Run against the normal build
// (//reconstruct:hardening_test) and against the UBSan build
// (//reconstruct:hardening_ubsan_test, -fsanitize=undefined, every report
// fatal), whose binary BALLARUS_RECONSTRUCT names.
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "core/test_profiles.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ballarus {
namespace {

using nlohmann::json;

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

std::string Binary() {
  const char* b = std::getenv("BALLARUS_RECONSTRUCT");
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string base = std::string(srcdir ? srcdir : ".") + "/ballarus/";
  return b && *b ? base + b : base + "reconstruct/ballarus-reconstruct";
}

struct Result {
  int status = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the tool with `args` (already shell-quoted) in $TEST_TMPDIR.
Result Tool(const std::string& args, const std::string& first = "true") {
  static int n = 0;
  const std::string o = TmpDir() + "/h-out" + std::to_string(n);
  const std::string e = TmpDir() + "/h-err" + std::to_string(n++);
  const std::string cmd = "cd '" + TmpDir() + "' && " + first + " && '" +
                          Binary() + "' " + args + " >" + o + " 2>" + e;
  const int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(o);
  r.err = ReadFile(e);
  return r;
}

std::string Q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One line, printable: no control byte but the final newline, no
// undecodable byte.
void ExpectOnePrintableLine(const std::string& msg) {
  ASSERT_FALSE(msg.empty());
  EXPECT_EQ(msg.back(), '\n') << msg;
  for (size_t i = 0; i + 1 < msg.size(); ++i) {
    const unsigned char c = msg[i];
    EXPECT_TRUE(c >= 0x20 && c != 0x7f) << "byte " << int(c) << " at " << i
                                         << " of: " << msg;
  }
  EXPECT_EQ(msg.find("\x1b"), std::string::npos);
}

// diamond(x) as in reconstruct_test's TuA with a return block 6 (line 9)
// after the join 5 (line 8), so that line 8's count is the sum of the two
// arms (gcov never sums the highest block's entries); its file and name as
// given.
TestRecord Diamond(const std::string& file, const std::string& name,
                   const std::vector<uint64_t>& counters) {
  TestRecord rec;
  rec.tu.source = file;
  rec.tu.cwd = TmpDir();
  rec.tu.compiler = "gcc 12.2.0";
  rec.tu.flags = BALLARUS_META_F_NAIVE;
  rec.tu.files = {file};
  Function d;
  d.name = name;
  d.demangled = name;
  d.line = 3;
  d.end_line = 9;
  d.cfg_checksum = 111;
  d.blocks.resize(7);
  d.blocks[2].lines = {{0, 3}, {0, 4}};
  d.blocks[3].lines = {{0, 5}};
  d.blocks[4].lines = {{0, 6}};
  d.blocks[5].lines = {{0, 8}};
  d.blocks[6].lines = {{0, 9}};
  d.edges = {{0, 2, kEdgeFallthru, 0}, {2, 3, kEdgeTrue, 1},
             {2, 4, kEdgeFalse, 2},    {3, 5, kEdgeFallthru, 3},
             {4, 5, kEdgeFallthru, 4}, {5, 6, kEdgeFallthru, 5},
             {6, 1, kEdgeFallthru, 6}};
  rec.tu.functions = {d};
  rec.counters = counters;
  return rec;
}

const std::vector<uint64_t> kSmall = {10, 7, 3, 7, 3, 10, 10};

TEST(Hardening, MessagesStayOneLine) {
  // A profile path with a newline, an escape sequence and Latin-1.
  const std::string path = TmpDir() + "/bad\nname\x1b[31m\xe9.profile";
  Result r = Tool("show " + Q(path));
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  EXPECT_NE(r.err.find("bad\\x0aname\\x1b[31m\\xe9.profile: "), std::string::npos)
      << r.err;

  // A metadata error naming a function whose name holds NUL, a newline
  // and ESC: the decoder names it; the message must stay whole.
  TestRecord rec = Diamond("a.c", std::string("f\0g\nh\x1b[2J", 10), kSmall);
  rec.tu.functions[0].edges[1].dst = 42;  // no such block
  const std::string p = WriteTestProfile("badname.profile", {rec});
  r = Tool("show " + Q(p));
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  EXPECT_NE(r.err.find("f\\x00g\\x0ah\\x1b[2J"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("names block 42"), std::string::npos) << r.err;

  // Usage errors quote what they were given, escaped.
  r = Tool("nosuch\x1b" "cmd");
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  r = Tool("lcov " + Q(p) + " --include '(\x1b'");
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
}

TEST(Hardening, NonUtf8NamesGiveValidJson) {
  // café.c in Latin-1, a function with a control character in its name.
  const std::string file = "caf\xe9.c";
  const std::string name = "odd\x01name\xff";
  const std::string p =
      WriteTestProfile("latin1.profile", {Diamond(file, name, kSmall)});
  Result r = Tool("show --json " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);  // throws on invalid UTF-8
  // Bytes of no UTF-8 sequence read as the code points of the same value.
  EXPECT_EQ(j["functions"][0]["file"], "caf\xc3\xa9.c");
  EXPECT_EQ(j["functions"][0]["name"], "odd\x01name\xc3\xbf");
  r = Tool("paths --json " + Q(p));  // no path data: an error, one line
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  r = Tool("stats --json " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NO_THROW(json::parse(r.out));
  // gcov's JSON: escaped the same way.
  r = Tool("gcov -j -t --all-files " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const json g = json::parse(r.out);
  EXPECT_EQ(g["files"][0]["file"], "caf\xc3\xa9.c");
  EXPECT_EQ(g["files"][0]["functions"][0]["name"], "odd\x01name\xc3\xbf");
  r = Tool("gcovr-json --all-files " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const json gcovr = json::parse(r.out);
  EXPECT_EQ(gcovr["files"][0]["functions"][0]["name"], "odd\x01name\xc3\xbf");
  // diff --json and the HTML report too.
  r = Tool("diff --json --all-files " + Q(p) + " " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NO_THROW(json::parse(r.out));
  r = Tool("html --all-files -o html-latin1 " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string index = ReadFile(TmpDir() + "/html-latin1/index.html");
  EXPECT_NE(index.find("caf\\xe9.c"), std::string::npos);
}

// A function name holding ESC (a terminal escape) never reaches stdout
// raw: `show`, gcov's text and the lcov tracefile write it \x1b, the
// escaping of error lines (commands.h Printable), which lcov and gcov's
// readers take as ordinary name characters.
TEST(Hardening, ControlBytesInNamesAreEscapedOnStdout) {
  const std::string name = "f\x1b[2Jg\tx";
  const std::string p =
      WriteTestProfile("escname.profile", {Diamond("esc.c", name, kSmall)});
  {
    std::ofstream src(TmpDir() + "/esc.c");
    for (int i = 1; i <= 10; ++i) src << "line " << i << "\n";
  }
  for (const char* sub :
       {"show", "gcov -t -b --all-files", "lcov --all-files"}) {
    Result r = Tool(std::string(sub) + " " + Q(p));
    ASSERT_EQ(r.status, 0) << sub << ": " << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << sub << ": " << r.out;
    EXPECT_EQ(r.out.find('\t'), std::string::npos) << sub << ": " << r.out;
    EXPECT_NE(r.out.find("f\\x1b[2Jg\\x09x"), std::string::npos)
        << sub << ": " << r.out;
  }
}

TEST(Hardening, HugeCountsSaturateInsteadOfOverflowing) {
  // Counts near 2^63 and past it, as merges of many runs leave them: the
  // diamond's lines would sum past INT64_MAX.
  const uint64_t big = (uint64_t{1} << 63) + 5;
  const std::vector<uint64_t> c = {big + 10, big, 10, big, 10, big + 10,
                                   big + 10};
  const std::string p = WriteTestProfile("huge.profile", {Diamond("a.c", "f", c)});
  {
    std::ofstream src(TmpDir() + "/a.c");
    for (int i = 1; i <= 10; ++i) src << "line " << i << "\n";
  }
  Result r = Tool("show --json " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  for (const json& l : j.at("lines")) {
    EXPECT_GE(l.at("count").get<int64_t>(), 0) << l;
    // Lines 3, 4, 5, 8 and 9 ran more than INT64_MAX times: saturated
    // (line 8 sums its two entries: big + 10).
    if (l.at("line") != 6)
      EXPECT_EQ(l.at("count").get<int64_t>(), INT64_MAX) << l;
    else
      EXPECT_EQ(l.at("count"), 10) << l;
  }
  for (const char* sub : {"gcov -b -c -t --all-files", "lcov --all-files",
                          "cobertura --all-files", "gcovr-json --all-files",
                          "verify", "stats"}) {
    r = Tool(std::string(sub) + " " + Q(p));
    EXPECT_LE(r.status, 1) << sub << ": " << r.err;
    EXPECT_EQ(r.out.find("-92233"), std::string::npos) << sub << ": " << r.out;
  }
  r = Tool("gcov -t --all-files " + Q(p));
  EXPECT_NE(r.out.find("9223372036854775807:    3:"), std::string::npos) << r.out;
  r = Tool("html --all-files -o html-huge " + Q(p));
  EXPECT_EQ(r.status, 0) << r.err;
  // overlap: edge totals past 2^64 still give shares; a profile against
  // itself agrees 100%.
  r = Tool("overlap --json --all-files " + Q(p) + " " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  const json o = json::parse(r.out);
  EXPECT_DOUBLE_EQ(o.at("overlap").get<double>(), 1.0) << o;
  EXPECT_GT(o.at("edge_executions_a").get<double>(), 18446744073709551615.0) << o;
  // Merging twice more wraps modulo 2^64 (the format's rule) and still
  // gives no negative line.
  const std::string m = TmpDir() + "/huge-merged.profile";
  r = Tool("merge -o " + Q(m) + " " + Q(p) + " " + Q(p) + " " + Q(p));
  ASSERT_EQ(r.status, 0) << r.err;
  r = Tool("show --json " + Q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const json& l : json::parse(r.out).at("lines"))
    EXPECT_GE(l.at("count").get<int64_t>(), 0) << l;
}

// Sums of counts past 2^64 - 1 (counts wrap modulo 2^64 when merged, the
// format's rule): verify says the block's counts saturated rather than
// print two clamped sums; a block whose sums agree modulo 2^64 is only a
// warning, one whose sums differ modulo 2^64 stays an error.
TEST(Hardening, VerifyNamesSaturatedSums) {
  const uint64_t big = (uint64_t{1} << 63) + 5;
  // Block 2's arms sum to 2^64 + 10: equal to its entry count 10 modulo 2^64.
  const std::vector<uint64_t> wrapped = {10, big, big, big, big, 10, 10};
  Result r = Tool("verify " + Q(WriteTestProfile(
                                  "wrapped.profile",
                                  {Diamond("a.c", "f", wrapped)})));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("18446744073709551615"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: block 2: counts saturated"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning: block 5: counts saturated"), std::string::npos)
      << r.out;
  // Block 5 gets 2^64 + 10 in and gives 11 out: wrong modulo 2^64 too.
  const std::vector<uint64_t> damaged = {10, big, big, big, big, 11, 11};
  r = Tool("verify " + Q(WriteTestProfile("wrapped-bad.profile",
                                          {Diamond("a.c", "f", damaged)})));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("18446744073709551615"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f (a.c:3): block 5: counts saturated"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("in 10 != out 11 modulo 2^64"), std::string::npos)
      << r.out;
}

// A report that cannot be written says why.
TEST(Hardening, CannotWriteGivesTheReason) {
  const std::string p =
      WriteTestProfile("reason.profile", {Diamond("a.c", "f", kSmall)});
  // gcov writes into its working directory: one that was removed.
  Result r = Tool("gcov --all-files " + Q(p),
                  "mkdir gone && cd gone && rmdir ../gone");
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos)
      << r.err;
  r = Tool("lcov --all-files -o no/such/dir/x.info " + Q(p));
  EXPECT_EQ(r.status, 2);
  ExpectOnePrintableLine(r.err);
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ballarus
