// combine_e2e_test.cc — `ballarus-reconstruct combine` end to end: a small
// C program built with the installed ballarus-gcc (mode=path) and run on 5
// inputs, whose per-input counts are derived by hand below; the combined
// profile's statistics of chosen lines, blocks and paths must be exactly
// the hand-computed ones, and combining 2 inputs, then 3, then the two
// combined profiles must give the bytes of combining the 5.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using nlohmann::json;

// Line numbers matter: 3 is classify's first line, 4 its test, 5 and 6 its
// returns.
const char kSource[] =
    "#include <stdlib.h>\n"                              // 1
    "\n"                                                 // 2
    "static int classify(int v) {\n"                     // 3
    "  if (v % 3 == 0)\n"                                // 4
    "    return 1;\n"                                    // 5
    "  return 0;\n"                                      // 6
    "}\n"                                                // 7
    "\n"                                                 // 8
    "int main(int argc, char **argv) {\n"                // 9
    "  int n = argc > 1 ? atoi(argv[1]) : 0;\n"          // 10
    "  int hits = 0;\n"                                  // 11
    "  for (int i = 0; i < n; i++)\n"                    // 12
    "    hits += classify(i);\n"                         // 13
    "  return hits < 0;\n"                               // 14
    "}\n";                                               // 15

// The inputs n and, per input, classify's counts (derived by hand):
//   entry = n calls (i = 0 .. n-1);
//   "return 1" = the i in [0, n) divisible by 3 = ceil(n / 3);
//   "return 0" = n - ceil(n / 3).
//   n:        0  1  3  6  40
//   entry:    0  1  3  6  40   sum 50, squares 1646
//   return 1: 0  1  1  2  14   sum 18, squares 202
//   return 0: 0  0  2  4  26   sum 32, squares 696
// Mean = sum / 5; population variance = (5 squares - sum^2) / 25:
//   entry (8230 - 2500) / 25 = 1146/5; return 1 (1010 - 324) / 25 = 686/25;
//   return 0 (3480 - 1024) / 25 = 2456/25.
// Histogram, 15 bins: bin 0 holds 0, bin 1 [1, 32), bin 2 [32, 1024):
//   entry [1, 3, 1, 0...] (40 in bin 2); return 1 [1, 4, 0...];
//   return 0 [2, 3, 0...].
const int kInputs[] = {0, 1, 3, 6, 40};

struct Expected {
  std::string mean, variance;
  uint64_t min, max;
  std::vector<uint64_t> hist;  // the first bins; the rest are 0
};
const Expected kEntry{"10", "1146/5", 0, 40, {1, 3, 1}};
const Expected kReturn1{"18/5", "686/25", 0, 14, {1, 4, 0}};
const Expected kReturn0{"32/5", "2456/25", 0, 26, {2, 3, 0}};

std::string Prefix() {
  std::string error;
  std::string prefix = harness::InstallPrefix(&error);
  EXPECT_FALSE(prefix.empty()) << error;
  return prefix;
}

std::string Reconstruct() {
  return Quote(Prefix() + "/bin/ballarus-reconstruct");
}

// Builds the program in a fresh `dir` and runs it on every input, each
// into the profile rN (with BALLARUS_TEST=tN too when `named`, into one
// profile "named").
void BuildAndRun(const std::string& dir, bool named) {
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(dir + "/hist.c", kSource);
  const std::string cc = Quote(Prefix() + "/bin/ballarus-gcc");
  CommandResult c = harness::Run(
      cc + " -fplugin-arg-ballarus-mode=path -O0 -g -c hist.c -o hist.o && " +
          cc + " hist.o -o hist",
      dir);
  ASSERT_EQ(c.status, 0) << c.err;
  for (int n : kInputs) {
    const std::string id = std::to_string(n);
    std::vector<std::string> env = {"BALLARUS_PROFILE=" + dir + "/r" + id};
    if (named)
      env = {"BALLARUS_PROFILE=" + dir + "/named", "BALLARUS_TEST=t" + id};
    CommandResult r = harness::Run("./hist " + id, dir, env);
    ASSERT_EQ(r.status, 0) << r.err;
  }
}

CommandResult Combine(const std::string& dir, const std::string& args) {
  return harness::Run(Reconstruct() + " combine " + args, dir);
}

json CombinedJson(const std::string& dir, const std::string& file) {
  CommandResult r = Combine(dir, "--json - " + file);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

void ExpectStats(const json& s, const Expected& e, const std::string& what) {
  EXPECT_EQ(s["n"], 5) << what;
  EXPECT_EQ(s["mean"]["exact"], e.mean) << what;
  EXPECT_EQ(s["variance"]["exact"], e.variance) << what;
  EXPECT_EQ(s["min"], e.min) << what;
  EXPECT_EQ(s["max"], e.max) << what;
  std::vector<uint64_t> hist = s["histogram"];
  ASSERT_EQ(hist.size(), 15u) << what;
  std::vector<uint64_t> want = e.hist;
  want.resize(15, 0);
  EXPECT_EQ(hist, want) << what;
}

const json& Function(const json& j, const std::string& name) {
  for (const json& f : j["functions"])
    if (f["name"] == name) return f;
  static const json none;
  ADD_FAILURE() << "no function " << name;
  return none;
}

// The statistics of classify: entry, lines, blocks and paths.
void ExpectClassify(const json& j) {
  const json& f = Function(j, "classify");
  ASSERT_TRUE(f.is_object());
  ExpectStats(f["entry"], kEntry, "entry");
  std::map<uint32_t, json> lines;
  for (const json& l : f["lines"]) lines[l["line"]] = l;
  ExpectStats(lines[4], kEntry, "line 4");
  ExpectStats(lines[5], kReturn1, "line 5");
  ExpectStats(lines[6], kReturn0, "line 6");
  // Its two paths (by number: which is which is the numbering's choice).
  ASSERT_EQ(f["paths"].size(), 2u);
  const bool first_returns_1 = f["paths"][0]["mean"]["exact"] == "18/5";
  ExpectStats(f["paths"][first_returns_1 ? 0 : 1], kReturn1, "path return 1");
  ExpectStats(f["paths"][first_returns_1 ? 1 : 0], kReturn0, "path return 0");
  // The block of each return (found by its mean; then all its statistics).
  bool return1 = false, return0 = false;
  for (const json& b : f["blocks"]) {
    if (b["mean"]["exact"] == kReturn1.mean) {
      ExpectStats(b, kReturn1, "block of return 1");
      return1 = true;
    }
    if (b["mean"]["exact"] == kReturn0.mean) {
      ExpectStats(b, kReturn0, "block of return 0");
      return0 = true;
    }
  }
  EXPECT_TRUE(return1 && return0);
}

TEST(Combine, FiveInputsGiveTheHandComputedStatistics) {
  const std::string dir = harness::TempRoot() + "/combine-five";
  BuildAndRun(dir, false);
  ASSERT_EQ(Combine(dir, "-o all.bc r0 r1 r3 r6 r40").status, 0);
  const json j = CombinedJson(dir, "all.bc");
  EXPECT_EQ(j["n"], 5);
  EXPECT_EQ(j["observations"],
            json::array({"r0", "r1", "r3", "r40", "r6"}));
  ExpectClassify(j);
  // main ran once in every input: its entry is 1 with no spread.
  const json& main = Function(j, "main");
  EXPECT_EQ(main["entry"]["mean"]["exact"], "1");
  EXPECT_EQ(main["entry"]["variance"]["exact"], "0");
}

TEST(Combine, TwoPlusThreeIsFiveByteForByte) {
  const std::string dir = harness::TempRoot() + "/combine-23";
  BuildAndRun(dir, false);
  ASSERT_EQ(Combine(dir, "-o all.bc r0 r1 r3 r6 r40").status, 0);
  ASSERT_EQ(Combine(dir, "-o two.bc r0 r1").status, 0);
  ASSERT_EQ(Combine(dir, "-o three.bc r3 r6 r40").status, 0);
  ASSERT_EQ(Combine(dir, "-o a.bc two.bc three.bc").status, 0);
  ASSERT_EQ(Combine(dir, "-o b.bc three.bc two.bc").status, 0);
  ASSERT_EQ(Combine(dir, "-o c.bc r6 two.bc r3 r40").status, 0);
  const std::string all = harness::ReadFileOrDie(dir + "/all.bc");
  EXPECT_EQ(harness::ReadFileOrDie(dir + "/a.bc"), all);
  EXPECT_EQ(harness::ReadFileOrDie(dir + "/b.bc"), all);
  EXPECT_EQ(harness::ReadFileOrDie(dir + "/c.bc"), all);
  EXPECT_NE(harness::ReadFileOrDie(dir + "/two.bc"), all);
  // With --bins 65 too; more combined into it keeps its bins.
  ASSERT_EQ(Combine(dir, "-o all65.bc --bins 65 r0 r1 r3 r6 r40").status, 0);
  ASSERT_EQ(Combine(dir, "-o two65.bc --bins 65 r0 r1").status, 0);
  ASSERT_EQ(Combine(dir, "-o d65.bc two65.bc r3 r6 r40").status, 0);
  EXPECT_EQ(harness::ReadFileOrDie(dir + "/d65.bc"),
            harness::ReadFileOrDie(dir + "/all65.bc"));
  CommandResult mixed = Combine(dir, "-o x.bc two65.bc three.bc");
  EXPECT_EQ(mixed.status, 2);
  EXPECT_EQ(mixed.err,
            "ballarus-reconstruct: three.bc: combined profiles with 15 and 65 "
            "bins cannot be combined\n");
}

TEST(Combine, NamedTestsAreObservations) {
  const std::string dir = harness::TempRoot() + "/combine-named";
  BuildAndRun(dir, true);
  CommandResult r = Combine(dir, "--per-test --json - named");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["observations"],
            json::array({"t0", "t1", "t3", "t40", "t6"}));
  ExpectClassify(j);
  // Without --per-test the profile is one observation: the sum of all.
  const json one = CombinedJson(dir, "named");
  EXPECT_EQ(Function(one, "classify")["entry"]["mean"]["exact"], "50");
}

TEST(Combine, ADirectoryIsOneObservation) {
  const std::string dir = harness::TempRoot() + "/combine-dir";
  BuildAndRun(dir, false);
  harness::MakeFreshDir(dir + "/d");
  harness::WriteFileOrDie(dir + "/d/x.bprof",
                          harness::ReadFileOrDie(dir + "/r1"));
  harness::WriteFileOrDie(dir + "/d/y.bprof",
                          harness::ReadFileOrDie(dir + "/r3"));
  const json j = CombinedJson(dir, "d r6");
  EXPECT_EQ(j["n"], 2);
  const json& entry = Function(j, "classify")["entry"];
  EXPECT_EQ(entry["min"], 4);  // 1 + 3 calls in d
  EXPECT_EQ(entry["max"], 6);
}

TEST(Combine, GcdaWritesTheRoundedMean) {
  const std::string dir = harness::TempRoot() + "/combine-gcda";
  BuildAndRun(dir, false);
  ASSERT_EQ(Combine(dir, "-o all.bc r0 r1 r3 r6 r40").status, 0);
  CommandResult g = harness::Run(Reconstruct() + " gcda -o gd all.bc", dir);
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.err.find("all.bc: combined profile of 5 observations: writing "
                       "each count's mean, rounded to the nearest integer"),
            std::string::npos)
      << g.err;
  // Means: entry 10, return 1 3.6 -> 4, return 0 6.4 -> 6; the largest
  // gcov counter is classify's 10 calls or the loop's 10 iterations.
  EXPECT_NE(g.out.find("runs 1, sum_max 10"), std::string::npos) << g.out;
  // gcc finds and accepts the profile: the same compile (the .gcda's name
  // derives from the object's, the CFG from the options) with -fprofile-use.
  CommandResult u = harness::Run(
      "gcc -O0 -g -fprofile-use=gd -Wmissing-profile -Werror -c hist.c "
      "-o hist.o",
      dir);
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_EQ(u.err, "");
}

TEST(Combine, DamagedCombinedProfilesAreNamedOnOneLine) {
  const std::string dir = harness::TempRoot() + "/combine-bad";
  BuildAndRun(dir, false);
  ASSERT_EQ(Combine(dir, "-o all.bc r0 r1").status, 0);
  std::string bytes = harness::ReadFileOrDie(dir + "/all.bc");
  harness::WriteFileOrDie(dir + "/cut.bc", bytes.substr(0, bytes.size() - 7));
  bytes[bytes.size() / 2] ^= 0x10;
  harness::WriteFileOrDie(dir + "/flip.bc", bytes);
  for (const std::string& bad : {"cut.bc", "flip.bc"}) {
    for (const std::string& cmd :
         {" combine -o out.bc r0 " + bad, " gcda -o gd " + bad}) {
      CommandResult r = harness::Run(Reconstruct() + cmd, dir);
      EXPECT_EQ(r.status, 2) << cmd;
      EXPECT_EQ(r.err.rfind("ballarus-reconstruct: " + bad + ": ", 0), 0u)
          << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

}  // namespace
