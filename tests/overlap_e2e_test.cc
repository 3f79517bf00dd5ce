// overlap_e2e_test.cc — `ballarus-reconstruct overlap` and diff's overlap
// on a real program built with the installed ballarus-gcc (//:install),
// against figures derived by hand from the program's inputs.
//
// tests/reports/hot.c run with N classifies 0..N-1 by remainder mod 3.
// Its edge counts at -O0 (the CFG `show` prints; a = #{v % 3 == 0}, b =
// #{v % 3 == 1}, c = #{v % 3 == 2} of 0..N-1):
//   classify: ENTRY->2 N, 2->3 a, 2->4 N-a, 3->7 a, 4->5 b, 4->6 c,
//             5->7 b, 6->7 c, 7->EXIT N: Σ = 5N - a;
//   main: eight edges run once (entry, argc > 1, the loop's entry and
//         exit, printf, return), three N times (the loop), four never
//         (argc <= 1 and its join, two calls' fake edges to EXIT):
//         Σ = 8 + 3N.
// N = 9 (a = b = c = 3): classify 42, main 35, Σ 77.
// N = 4 (a = 2, b = c = 1): classify 18, main 20, Σ 38.
// Whole program, Σ_e min(x_e/77, y_e/38):
//   main's eight 1s: 8 · min(1/77, 1/38) = 8/77;
//   its three Ns: 3 · min(9/77, 4/38) = 3 · 2/19 = 6/19;
//   classify: the Ns 2 · 2/19, the a-edges 2 · min(3/77, 2/38) = 6/77,
//   2->4 min(6/77, 2/38) = 1/19, the b- and c-edges 4 · min(3/77, 1/38) =
//   2/19;
//   Σ = 14/77 + 13/19 = 2/11 + 13/19 = 181/209.
// classify alone (on its own totals 42 and 18): the Ns 2 · 9/42, the
// a-edges 2 · 3/42, 2->4 2/18, b and c edges 4 · 1/18 = 4/7 + 1/3 = 19/21.
// main alone (35 and 20): 8 · 1/35 + 3 · min(9/35, 4/20) = 8/35 + 3/5 =
// 29/35.
//
// The same runs as named tests of one profile (BALLARUS_TEST) give the
// same figures as the separate profiles (the oracle: each run alone).
//
// gcov's measure is the same sum over its arc counters only (the arcs off
// its spanning tree): hot.c built with gcc --coverage counts main's arcs
// (1, 1, N, N, 1) and classify's (N, a, b); over those, 9 against 4 gives
// 8/9 (not 181/209).  gcov-tool 12's own `overlap` prints no figure at
// all (its program totals are never set since GCC 9): the test pins both
// facts the README states.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/gcda.h"

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

std::string Tool() { return Quote(InstallPrefix() + "/bin/ballarus-reconstruct"); }

CommandResult MustRun(const std::string& cmd, const std::string& cwd) {
  CommandResult r = harness::Run(cmd, cwd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

// hot.c built in a fresh `dir`, run with 9 and 4 into a.profile and
// b.profile, and again as tests "nine" and "four" (plus one unnamed run of
// 2) into named.profile.
std::string Prepare() {
  static const std::string dir = [] {
    const std::string d = harness::TempRoot() + "/overlap";
    harness::MakeFreshDir(d);
    MustRun("cp " + Quote(Runfiles() + "/tests/reports/hot.c") + " .", d);
    MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                " -O0 -g -fplugin-arg-ballarus-mode=edge,path hot.c -o hot",
            d);
    auto run = [&](int n, const std::string& profile, const std::string& test) {
      std::vector<std::string> env = {"BALLARUS_PROFILE=" + profile};
      if (!test.empty()) env.push_back("BALLARUS_TEST=" + test);
      const CommandResult r = harness::Run("./hot " + std::to_string(n), d, env);
      EXPECT_EQ(r.status, 0) << r.err;
    };
    run(9, "a.profile", "");
    run(4, "b.profile", "");
    run(9, "named.profile", "nine");
    run(4, "named.profile", "four");
    run(2, "named.profile", "");
    return d;
  }();
  return dir;
}

const json* FunctionNamed(const json& o, const std::string& name) {
  for (const json& f : o.at("functions"))
    if (f.at("name") == name) return &f;
  return nullptr;
}

// The hand figures of the header, in `overlap --json`'s form.
void ExpectHandFigures(const json& o) {
  EXPECT_NEAR(o.at("overlap").get<double>(), 181.0 / 209, 1e-12) << o;
  EXPECT_EQ(o.at("edge_executions_a"), 77);
  EXPECT_EQ(o.at("edge_executions_b"), 38);
  EXPECT_TRUE(o.at("edge_executions_a").is_number_unsigned()) << o;
  EXPECT_EQ(o.at("unknown_edges"), 0);
  const json* classify = FunctionNamed(o, "classify");
  const json* main = FunctionNamed(o, "main");
  ASSERT_TRUE(classify && main) << o;
  EXPECT_NEAR(classify->at("overlap").get<double>(), 19.0 / 21, 1e-12);
  EXPECT_NEAR(main->at("overlap").get<double>(), 29.0 / 35, 1e-12);
  EXPECT_NEAR(classify->at("share_a").get<double>(), 42.0 / 77, 1e-12);
  EXPECT_NEAR(classify->at("share_b").get<double>(), 18.0 / 38, 1e-12);
  // The contributions add up to the program figure: classify's is 6/77 +
  // 4/19 + 1/19 + 2/19 = 6/77 + 7/19.
  EXPECT_NEAR(classify->at("contribution").get<double>(), 6.0 / 77 + 7.0 / 19,
              1e-12);
  EXPECT_NEAR(main->at("contribution").get<double>(), 8.0 / 77 + 6.0 / 19, 1e-12);
  // Losses add up to 1 - overlap; main loses more ((35/77 + 20/38)/2 -
  // 8/77 - 6/19 = 0.0707) than classify (0.0632) and is listed first.
  EXPECT_EQ(o["functions"][0]["name"], "main");
  EXPECT_NEAR(classify->at("loss").get<double>() + main->at("loss").get<double>(),
              1 - 181.0 / 209, 1e-12);
}

TEST(Overlap, TwoProfilesAgainstHandFigures) {
  const std::string dir = Prepare();
  const CommandResult r = MustRun(Tool() + " overlap --json a.profile b.profile", dir);
  const json o = json::parse(r.out);
  ExpectHandFigures(o);
  EXPECT_EQ(o.at("matched_functions"), 2);
  EXPECT_TRUE(o["a"]["test"].is_null());
  const CommandResult t = MustRun(Tool() + " overlap a.profile b.profile", dir);
  EXPECT_NE(t.out.find("overlap: 86.60% of edge executions in common"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("90.48%   54.55%   47.37%    6.32%  classify (hot.c:8)"),
            std::string::npos)
      << t.out;
}

TEST(Overlap, FunctionFilterMakesTheProgramOneFunction) {
  const std::string dir = Prepare();
  const CommandResult r = MustRun(
      Tool() + " overlap --json a.profile b.profile --function '^classify$'", dir);
  const json o = json::parse(r.out);
  EXPECT_NEAR(o.at("overlap").get<double>(), 19.0 / 21, 1e-12) << o;
  EXPECT_EQ(o.at("edge_executions_a"), 42);
  EXPECT_EQ(o.at("functions").size(), 1u);
}

TEST(Overlap, NamedTestsEqualTheirOwnProfiles) {
  const std::string dir = Prepare();
  CommandResult r = MustRun(
      Tool() + " overlap --json named.profile --test-a nine --test-b four", dir);
  const json o = json::parse(r.out);
  ExpectHandFigures(o);
  EXPECT_EQ(o["a"]["test"], "nine");
  EXPECT_EQ(o["b"]["test"], "four");
  EXPECT_EQ(o["a"]["runs"], 1);
  // A test against the profile of the same run alone: 100%; the whole
  // named profile (9 + 4 + 2) against a.profile: not.
  r = MustRun(Tool() + " overlap --json named.profile b.profile --test-a four", dir);
  EXPECT_DOUBLE_EQ(json::parse(r.out).at("overlap").get<double>(), 1.0) << r.out;
  r = MustRun(Tool() + " overlap --json a.profile a.profile", dir);
  EXPECT_DOUBLE_EQ(json::parse(r.out).at("overlap").get<double>(), 1.0) << r.out;
  r = MustRun(Tool() + " overlap --json named.profile a.profile", dir);
  EXPECT_LT(json::parse(r.out).at("overlap").get<double>(), 1.0) << r.out;
  // Test nine against all three runs of named.profile (9, 4 and 2: main
  // 8 · 3 + 3 · 15 = 69, classify 15 + 6 + 9 + 6 + 5 + 4 + 5 + 4 + 15 = 69,
  // Σ 138): main 8 · 1/77 + 3 · 15/138, classify 2 · 15/138 + 2 · 3/77 +
  // 9/138 + 2 · 5/138 + 2 · 4/138 = 2/11 + 17/23 = 233/253.
  r = MustRun(Tool() + " overlap --json named.profile --test-a nine", dir);
  const json all = json::parse(r.out);
  EXPECT_NEAR(all.at("overlap").get<double>(), 233.0 / 253, 1e-12) << all;
  EXPECT_TRUE(all["b"]["test"].is_null());
  EXPECT_EQ(all["b"]["runs"], 3);
  // --test selects the same test on both sides.
  r = MustRun(Tool() + " overlap --json --test nine named.profile named.profile", dir);
  EXPECT_DOUBLE_EQ(json::parse(r.out).at("overlap").get<double>(), 1.0) << r.out;
}

TEST(Overlap, DiffShowsTheOverlap) {
  const std::string dir = Prepare();
  CommandResult r = MustRun(Tool() + " diff --json a.profile b.profile", dir);
  ExpectHandFigures(json::parse(r.out).at("overlap"));
  r = MustRun(Tool() + " diff named.profile --test-a nine --test-b four", dir);
  EXPECT_NE(r.out.find("overlap: 86.60% of edge executions in common"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("diff A named.profile, test nine (1 runs)"), std::string::npos)
      << r.out;
}

TEST(Overlap, BadSelections) {
  const std::string dir = Prepare();
  CommandResult r =
      harness::Run(Tool() + " overlap named.profile --test-a nine --test-b five", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("test 'five'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(tests: four, nine)"), std::string::npos) << r.err;
  r = harness::Run(Tool() + " overlap a.profile --test nine", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("B is needed"), std::string::npos) << r.err;
  r = harness::Run(Tool() + " overlap a.profile b.profile --test nine", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no named runs"), std::string::npos) << r.err;
}

// The arc counters of each function of the .gcda at `path`, in file order.
std::vector<std::vector<uint64_t>> GcdaArcs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  ballarus::GcdaFile f;
  std::string error;
  EXPECT_TRUE(ballarus::DecodeGcda(bytes.data(), bytes.size(), &f, &error))
      << path << ": " << error;
  std::vector<std::vector<uint64_t>> arcs;
  for (const ballarus::GcdaFunction& fn : f.functions) arcs.push_back(fn.arcs);
  return arcs;
}

std::vector<uint64_t> Sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Overlap, GcovCountsFewerArcsAndGcovToolPrintsNoFigure) {
  const std::string dir = harness::TempRoot() + "/overlap-gcov";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/reports/hot.c") + " . && "
          "gcc -O0 --coverage hot.c -o hot && mkdir nine four && "
          "./hot 9 && mv hot.gcda nine/ && ./hot 4 && mv hot.gcda four/",
          dir);
  const auto a = GcdaArcs(dir + "/nine/hot.gcda"), b = GcdaArcs(dir + "/four/hot.gcda");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  // main, then classify (a = 3, b = 3 of 0..8; a = 2, b = 1 of 0..3).
  EXPECT_EQ(Sorted(a[0]), (std::vector<uint64_t>{1, 1, 1, 9, 9}));
  EXPECT_EQ(Sorted(b[0]), (std::vector<uint64_t>{1, 1, 1, 4, 4}));
  EXPECT_EQ(Sorted(a[1]), (std::vector<uint64_t>{3, 3, 9}));
  EXPECT_EQ(Sorted(b[1]), (std::vector<uint64_t>{1, 2, 4}));
  // Σ min(x/36, y/18) over the arcs: 3 · 1/36 + 2 · 2/9 (main) + 2/9 +
  // 1/12 + 1/18 (classify) = 8/9.
  double sum_a = 0, sum_b = 0, overlap = 0;
  for (size_t f = 0; f < 2; ++f)
    for (size_t i = 0; i < a[f].size(); ++i) sum_a += a[f][i], sum_b += b[f][i];
  EXPECT_EQ(sum_a, 36);
  EXPECT_EQ(sum_b, 18);
  for (size_t f = 0; f < 2; ++f)
    for (size_t i = 0; i < a[f].size(); ++i)
      overlap += std::min(a[f][i] / sum_a, b[f][i] / sum_b);
  EXPECT_NEAR(overlap, 8.0 / 9, 1e-12);
  // gcov-tool 12: status 1, no "Program level overlap" line.
  const CommandResult t = harness::Run("gcov-tool-12 overlap nine four", dir);
  EXPECT_EQ(t.status, 1) << t.out << t.err;
  EXPECT_EQ(t.out.find("Program level overlap"), std::string::npos) << t.out;
}

}  // namespace
