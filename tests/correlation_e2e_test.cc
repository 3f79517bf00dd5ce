// correlation_e2e_test.cc — `ballarus-reconstruct correlation` on a real
// program built with the installed ballarus-gcc (//:install) in path mode
// at -O0, against figures derived by hand from the program's inputs.
//
// tests/correlation/correlated.c run with 100: for i = 0..99 x = i % 10 <
// 3 (30 times), y = (i / 10) % 10 < 6 (60 times), independent of x.
// At -O0 `if (c) S1; else S2;` twice is two diamonds: test, arms, join =
// the second test, arms, return.
//   correlated(x): paths x-x 30, !x-!x 70.  DAG edge counts: the first
//     test's arms 30/70, the second's 30/70.  definite(x-x) = 100 - 70 -
//     70 -> 0, definite(!x-!x) = 100 - 30 - 30 = 40: 40 of 100 determined.
//     Branches 200; edge-based misses 30 + 30; path-based 30 + 0 (after
//     the first test's arm the second test's direction is known): gain
//     30, all at the second test (correlated.c:19).
//   independent(x, y): paths x-y 18, x-!y 12, !x-y 42, !x-!y 28.
//     definite: 100 - 70 - 40 -> 0, 100 - 70 - 60 -> 0, 100 - 30 - 40 =
//     30, 100 - 30 - 60 = 10: 40 determined.  Edge misses 30 + 40; path
//     misses 30 + (min(18, 12) + min(42, 28)) = 70: gain 0.
//   alternating(4), 10 calls: the loop `for (i = 0; i < 4; i++) if (i % 2
//     == 0) A else B` runs A, B, A, B, then leaves.
//     Default options (its entry cut, tune-path-loop-cuts): every
//     iteration starts at the loop test.  Paths: ENTRY -> entry cut 10, A
//     20, B 20, leave 10 (60).  The start dummy at the test carries 50,
//     the test sends 40 into the body, the body test 20/20: definite(A) =
//     50 - 10 - 20 = 20, B 20, leave 50 - 40 = 10, the entry path 10: all
//     determined.  Branches: the loop test 50 (40/10), the body test 40
//     (20/20): misses 10 + 20 by either prediction (every prefix starts at
//     the loop test): gain 0.
//     tune-path-loop-cuts=off: the first iteration runs on from ENTRY:
//     ENTRY-A 10, A 10, B 20, leave 10 (50).  definite(ENTRY-A) = 10 -
//     (50 - 40) -> 0, A = 40 - 10 - 20 = 10, B 10, leave 40 - 40 = 0: 20
//     of 50.  Branches 90: edge misses 10 + 20; path misses: loop test
//     after ENTRY 0, after the back edge 30/10 -> 10; body test after
//     ENTRY always A (0), after the back edge 10 A / 20 B -> 10: 20, gain
//     10 at the body test (correlated.c:40).
// The program prints sink: 30·4 + 70·6 + 30·1 + 70·2 + 60·3 + 40·4 + 10·6
// = 1110.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using harness::Runfiles;
using nlohmann::json;

using harness::InstallPrefix;

std::string Tool() {
  return Quote(InstallPrefix() + "/bin/ballarus-reconstruct");
}

CommandResult MustRun(const std::string& cmd, const std::string& cwd) {
  CommandResult r = harness::Run(cmd, cwd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

// correlated.c built in a fresh directory with `flags` and run with 100
// into PROFILE; the directory.
std::string BuildAndRun(const std::string& name, const std::string& flags,
                        const std::string& profile) {
  const std::string d = harness::TempRoot() + "/correlation-" + name;
  harness::MakeFreshDir(d);
  MustRun("cp " + Quote(Runfiles() + "/tests/correlation/correlated.c") + " .",
          d);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") + " -O0 -g " + flags +
              " correlated.c -o correlated",
          d);
  const CommandResult r =
      harness::Run("./correlated 100", d, {"BALLARUS_PROFILE=" + profile});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1110\n");
  return d;
}

const std::string& PathDir() {
  static const std::string d =
      BuildAndRun("path", "-fplugin-arg-ballarus-mode=path", "p.profile");
  return d;
}

json Correlation(const std::string& dir, const std::string& args) {
  const CommandResult r =
      MustRun(Tool() + " correlation --json " + args, dir);
  return json::parse(r.out);
}

void ExpectFigures(const json& j, uint64_t executions, uint64_t determined,
                   uint64_t branches, uint64_t miss_edge, uint64_t miss_path) {
  EXPECT_EQ(j.at("executions"), executions) << j;
  EXPECT_EQ(j.at("determined"), determined) << j;
  EXPECT_EQ(j.at("branch_executions"), branches) << j;
  EXPECT_EQ(j.at("miss_edge"), miss_edge) << j;
  EXPECT_EQ(j.at("miss_path"), miss_path) << j;
  EXPECT_EQ(j.at("gain"), miss_edge - miss_path) << j;
}

TEST(CorrelationE2E, DiamondsAgainstHandFigures) {
  const json j = Correlation(PathDir(), "'--function=^(correlated|independent)$'"
                                        " p.profile");
  // The two functions summed.
  ExpectFigures(j.at("program"), 200, 80, 400, 130, 100);
  EXPECT_EQ(j.at("program").at("functions"), 2);
  EXPECT_DOUBLE_EQ(j.at("program").at("undetermined_share").get<double>(),
                   0.6);
  const json& fs = j.at("functions");
  ASSERT_EQ(fs.size(), 2u) << j;
  // Ranked by gain: correlated (30) before independent (0).
  EXPECT_EQ(fs[0].at("name"), "correlated");
  ExpectFigures(fs[0], 100, 40, 200, 60, 30);
  EXPECT_DOUBLE_EQ(fs[0].at("gain_share").get<double>(), 0.15);
  ASSERT_EQ(fs[0].at("branches").size(), 1u) << fs[0];
  EXPECT_EQ(fs[0].at("branches")[0].at("where"), "correlated.c:19");
  EXPECT_EQ(fs[0].at("branches")[0].at("miss_edge"), 30);
  EXPECT_EQ(fs[0].at("branches")[0].at("miss_path"), 0);
  EXPECT_EQ(fs[1].at("name"), "independent");
  ExpectFigures(fs[1], 100, 40, 200, 70, 70);
  EXPECT_TRUE(fs[1].at("branches").empty());
}

TEST(CorrelationE2E, LoopWithItsEntryCut) {
  const json j = Correlation(PathDir(), "--function=alternating p.profile");
  ASSERT_EQ(j.at("functions").size(), 1u) << j;
  ExpectFigures(j.at("functions")[0], 60, 60, 90, 30, 30);
}

TEST(CorrelationE2E, LoopRunningOnFromEntry) {
  const std::string d = BuildAndRun(
      "loops",
      "-fplugin-arg-ballarus-mode=path "
      "-fplugin-arg-ballarus-tune-path-loop-cuts=off",
      "l.profile");
  const json j = Correlation(d, "--function=alternating l.profile");
  ASSERT_EQ(j.at("functions").size(), 1u) << j;
  const json& f = j.at("functions")[0];
  ExpectFigures(f, 50, 20, 90, 30, 20);
  ASSERT_EQ(f.at("branches").size(), 1u) << f;
  EXPECT_EQ(f.at("branches")[0].at("where"), "correlated.c:40");
  EXPECT_EQ(f.at("branches")[0].at("gain"), 10);
}

TEST(CorrelationE2E, ProgramIsTheSumOfItsFunctions) {
  const json j = Correlation(PathDir(), "--top 0 p.profile");
  const json& fs = j.at("functions");
  ASSERT_EQ(fs.size(), 4u) << j;  // main, correlated, independent, alternating
  EXPECT_EQ(j.at("program").at("functions"), 4);
  for (const char* k : {"executions", "determined", "branch_executions",
                        "miss_edge", "miss_path", "gain"}) {
    uint64_t sum = 0;
    for (const json& f : fs) sum += f.at(k).get<uint64_t>();
    EXPECT_EQ(j.at("program").at(k), sum) << k;
  }
  // Gains descending.
  for (size_t i = 1; i < fs.size(); ++i)
    EXPECT_GE(fs[i - 1].at("gain"), fs[i].at("gain"));
}

TEST(CorrelationE2E, TextListsTheTopFunctions) {
  const CommandResult r = MustRun(Tool() + " correlation --top 1 p.profile",
                                  PathDir());
  EXPECT_NE(r.out.find("correlated (correlated.c:14)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("block 5 (correlated.c:19): gain 30, miss edge 30, "
                       "miss path 0 of 100"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("independent ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(3 more functions; --top 0 lists all)"),
            std::string::npos)
      << r.out;
}

TEST(CorrelationE2E, EdgeProfileHasNoPaths) {
  const std::string d =
      BuildAndRun("edge", "-fplugin-arg-ballarus-mode=edge", "e.profile");
  const CommandResult r = harness::Run(Tool() + " correlation e.profile", d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no path data"), std::string::npos) << r.err;
}

}  // namespace
