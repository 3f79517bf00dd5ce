// report_tools_test.cc — the reports only ballarus writes, on real programs
// built with the installed ballarus-gcc/g++ (//:install) in edge,path mode,
// against counts derived by hand from the programs' inputs:
//
//   * tests/reports/hot.c (`hot N` classifies 0..N-1 by remainder mod 3):
//     `paths --program --source` ranks the loop's iteration path first
//     (N-1 of main's N+1 paths, of all N+1 + N path executions), with its
//     source text; `diff` of N=9 against N=4 gives classify's calls, shares,
//     branch ratios and path shares, in text and JSON; against a rebuild
//     whose main changed, classify still compares edge by edge and main is
//     reported as changed;
//   * the HTML report of hot.c, of the bundled calculator (examples/calc:
//     fib(10) makes 177 calls, calc_test.sh) and of vec.cc, loaded in
//     headless Debian chromium (--dump-dom): the summary figures, the
//     hottest functions and paths, the annotated source's counts and a CFG
//     picture (SVG) are in the DOM; following the index's hottest-path link
//     highlights the path's lines; a screenshot is written into the test's
//     undeclared outputs (bazel-testlogs/tests/report_tools_test/
//     test.outputs/);
//   * a real program: Lua 5.4.4 (tests/reports/lua) built twice at -O2,
//     with gcov and with ballarus in edge,path mode, running the same
//     workload; its HTML report in chromium's DOM against gcov's JSON for
//     the gcov build: the hottest functions' calls, lvm.c's lines hit /
//     total and its most executed line's count; luaV_execute's CFG picture;
//     its computed-goto paths shown as abnormal jumps; screenshots of the
//     index and of lvm.c (docs/report-screenshot.png was made the same way);
//   * hot.c compiled into three programs, two builds: each function listed
//     once with the copies' counts added, a function whose builds differ
//     once per build, labelled; an edge-mode build's report says it has no
//     paths and how to get them; CFG pictures under a `dot` that never
//     ends: killed at --cfg-time, a note and the dot source instead;
//   * filters: vec.cc's std::vector code lives in system headers, left out
//     by default and shown with --all-files; --include, --exclude,
//     --function, --exclude-function.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
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

std::string Tool() { return Quote(InstallPrefix() + "/bin/ballarus-reconstruct"); }

CommandResult MustRun(const std::string& cmd, const std::string& cwd) {
  CommandResult r = harness::Run(cmd, cwd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

// Builds tests/reports/hot.c in `dir` (with -DREBUILT when asked) and runs
// it with N into PROFILE.
void BuildHot(const std::string& dir, bool rebuilt) {
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/reports/hot.c") + " .", dir);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") +
              " -O0 -g -fplugin-arg-ballarus-mode=edge,path" +
              (rebuilt ? " -DREBUILT" : "") + " hot.c -o hot",
          dir);
}

void RunHot(const std::string& dir, int n, const std::string& profile) {
  CommandResult r =
      harness::Run("./hot " + std::to_string(n), dir, {"BALLARUS_PROFILE=" + profile});
  ASSERT_EQ(r.status, 0) << r.err;
}

// `chromium --headless` on a file:// URL; returns the DOM after load.
std::string DumpDom(const std::string& url) {
  CommandResult r =
      harness::Chromium("--virtual-time-budget=3000 --dump-dom", url);
  EXPECT_EQ(r.status, 0) << url << ": " << r.err;
  return r.out;
}

void Screenshot(const std::string& url, const std::string& png) {
  CommandResult r = harness::Chromium(
      "--window-size=1280,1600 --virtual-time-budget=3000 --screenshot=" +
          Quote(png),
      url);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string bytes;
  ASSERT_TRUE(harness::ReadFile(png, &bytes)) << png;
  EXPECT_GT(bytes.size(), 20000u) << png << ": a blank page?";
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << png;
}

// "HIT / TOTAL" as the summary tables print it.
std::string fmt_hit_total(uint64_t hit, uint64_t total) {
  return std::to_string(hit) + " / " + std::to_string(total);
}

std::string OutputsDir() {
  const char* d = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  return d && *d ? d : harness::TempRoot();
}

// The row of line `n` of an annotated source page.
std::string Row(const std::string& dom, int n) {
  const std::string id = "<tr id=\"L" + std::to_string(n) + "\"";
  const size_t at = dom.find(id);
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</tr>", at) - at);
}

TEST(ReportTools, PathsRankingAndSource) {
  const std::string dir = harness::TempRoot() + "/paths";
  BuildHot(dir, false);
  RunHot(dir, 9, "a.profile");
  // main runs N+2 paths (ENTRY up to the loop, whose entry edge is cut
  // -- path-loop-cuts, on in edge,path with path-derive --, N iterations
  // from the loop header, the exit), classify N: 11 + 9 = 20 executions.
  // The hottest is main's iteration path: 9 = 81.8% of main's, 45.0% of all.
  CommandResult r = MustRun(Tool() + " paths --program --top 3 --source a.profile", dir);
  EXPECT_NE(r.out.find("20 path executions"), std::string::npos) << r.out;
  const std::regex first(R"re(\n    1 +9  81\.8%  45\.0%  main \(hot\.c:16\) path \d+: \^)re");
  EXPECT_TRUE(std::regex_search(r.out, first)) << r.out;
  EXPECT_NE(r.out.find("hot.c:20 |     counts[classify(i)]++;"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Legend:"), std::string::npos);
  // classify's three returns: 3 each of 9 (33.3%), 3 of 20 (15.0%).
  EXPECT_NE(r.out.find("3  33.3%  15.0%  classify (hot.c:8) path"), std::string::npos)
      << r.out;
  r = MustRun(Tool() + " paths --program --top 1 --json --source a.profile", dir);
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("path_executions"), 20);
  EXPECT_TRUE(j.at("path_executions").is_number_unsigned()) << j.at("path_executions");
  EXPECT_EQ(j.at("ranking").at(0).at("count"), 9);
  EXPECT_DOUBLE_EQ(j["ranking"][0]["function_share"].get<double>(), 9.0 / 11);
  bool text = false;
  for (const json& l : j["ranking"][0]["lines"])
    text |= l.value("source", json()).is_string() &&
            l["source"].get<std::string>().find("counts[classify(i)]++") !=
                std::string::npos;
  EXPECT_TRUE(text) << r.out;
}

TEST(ReportTools, DiffSameBuildAndRebuild) {
  const std::string dir = harness::TempRoot() + "/diff";
  BuildHot(dir, false);
  RunHot(dir, 9, "a.profile");
  RunHot(dir, 4, "b.profile");
  CommandResult r = MustRun(Tool() + " diff --json --top 0 a.profile b.profile", dir);
  const json d = json::parse(r.out);
  EXPECT_EQ(d.at("unchanged_cfgs"), 2);
  EXPECT_TRUE(d.at("cfg_changed").empty());
  // classify: called 9 then 4 times; of all calls (classify + main) 9/10,
  // then 4/5.
  bool classify = false;
  for (const json& f : d.at("functions"))
    if (f.at("name") == "classify") {
      classify = true;
      EXPECT_EQ(f.at("a"), 9);
      EXPECT_EQ(f.at("b"), 4);
      EXPECT_DOUBLE_EQ(f.at("share_a").get<double>(), 0.9);
      EXPECT_DOUBLE_EQ(f.at("share_b").get<double>(), 0.8);
    }
  EXPECT_TRUE(classify) << r.out;
  // `v % 3 == 0` (line 9) true for 0, 3, 6 of 0..8 and 0, 3 of 0..3.
  bool branch = false;
  for (const json& b : d.at("branches"))
    if (b.at("name") == "classify" && b.at("branch_line") == 9 &&
        b.at("kind") == "true") {
      branch = true;
      EXPECT_EQ(b["a"]["taken"], 3);
      EXPECT_EQ(b["a"]["of"], 9);
      EXPECT_EQ(b["b"]["taken"], 2);
      EXPECT_EQ(b["b"]["of"], 4);
    }
  EXPECT_TRUE(branch) << r.out;
  // classify's `return 0` path: 3 of 9, then 2 of 4.
  bool path = false;
  for (const json& p : d.at("paths"))
    if (p.at("name") == "classify" && p.at("a") == 3 && p.at("b") == 2) {
      path = true;
      EXPECT_DOUBLE_EQ(p.at("share_a").get<double>(), 1.0 / 3);
      EXPECT_DOUBLE_EQ(p.at("share_b").get<double>(), 0.5);
    }
  EXPECT_TRUE(path) << r.out;
  // Line 11 (`v % 3 == 1`) runs when v % 3 != 0: 6 of 0..8, 2 of 0..3.
  bool line = false;
  for (const json& l : d.at("lines"))
    if (l.at("line") == 11) {
      line = true;
      EXPECT_EQ(l.at("a"), 6);
      EXPECT_EQ(l.at("b"), 2);
    }
  EXPECT_TRUE(line) << r.out;
  r = MustRun(Tool() + " diff a.profile b.profile", dir);
  EXPECT_NE(r.out.find("functions: 2 in both (2 with the same CFG)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("33.3% (3/9)            50.0% (2/4)  hot.c:9 classify edge"),
            std::string::npos)
      << r.out;

  // A rebuild whose main changed: classify still compares edge by edge.
  const std::string dir2 = harness::TempRoot() + "/diff-rebuilt";
  BuildHot(dir2, true);
  RunHot(dir2, 4, "c.profile");
  r = MustRun(Tool() + " diff --json --top 0 " + Quote(dir + "/a.profile") +
                  " c.profile",
              dir2);
  const json c = json::parse(r.out);
  EXPECT_EQ(c.at("unchanged_cfgs"), 1);
  ASSERT_EQ(c.at("cfg_changed").size(), 1u) << r.out;
  EXPECT_EQ(c["cfg_changed"][0]["name"], "main");
  bool compared = false;
  for (const json& b : c.at("branches")) {
    EXPECT_EQ(b.at("name"), "classify");
    compared |= b.at("branch_line") == 9 && b["b"]["taken"] == 2;
  }
  EXPECT_TRUE(compared) << r.out;
  for (const json& p : c.at("paths")) EXPECT_EQ(p.at("name"), "classify");
  EXPECT_EQ(harness::Run(Tool() + " diff a.profile missing.profile", dir).status, 2);
}

TEST(ReportTools, HtmlInChromium) {
  const std::string dir = harness::TempRoot() + "/html";
  BuildHot(dir, false);
  RunHot(dir, 9, "a.profile");
  MustRun(Tool() + " html a.profile -o report", dir);
  const std::string index = DumpDom("file://" + dir + "/report/index.html");
  // Totals: 13 lines with code, all run; 2 functions; classify 9 calls =
  // 90.0% of the 10.
  EXPECT_NE(index.find("13 / 13"), std::string::npos) << index;
  EXPECT_NE(index.find("2 / 2"), std::string::npos);
  EXPECT_EQ(index.find("id=\"no-paths\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(
      index, std::regex(R"re(>classify</a></td><td class="l"><a [^>]*>hot\.c:8</a></td><td data-v="9">9</td><td>90\.0%</td>)re")))
      << index;
  // The hottest path: 9 times, 81.8% of main's, 45.0% of all; its link.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      index, m,
      std::regex(R"re(<td data-v="9">9</td><td>81\.8%</td><td>45\.0%</td><td class="l">.*?</td><td class="l"><a href="(f\d+\.html#path-\d+-\d+)">)re")))
      << index;
  const std::string link = m[1];
  // Its page, with the path highlighted: the loop's lines 19 and 20, and
  // only those.
  const std::string page = DumpDom("file://" + dir + "/report/" + link);
  EXPECT_NE(Row(page, 19).find("onpath"), std::string::npos) << Row(page, 19);
  EXPECT_NE(Row(page, 20).find("onpath"), std::string::npos) << Row(page, 20);
  EXPECT_EQ(Row(page, 16).find("onpath"), std::string::npos) << Row(page, 16);
  // Counts in the annotated source: line 9 ran 9 times, its branch 3 and
  // 6; line 10 three times.
  EXPECT_NE(Row(page, 9).find("<td class=\"cnt\">9</td>"), std::string::npos)
      << Row(page, 9);
  EXPECT_NE(Row(page, 9).find(">3</span>"), std::string::npos) << Row(page, 9);
  EXPECT_NE(Row(page, 9).find(">6</span>"), std::string::npos) << Row(page, 9);
  EXPECT_NE(Row(page, 10).find("<td class=\"cnt\">3</td>"), std::string::npos);
  EXPECT_NE(Row(page, 10).find("return 0;"), std::string::npos);
  // The CFG picture of classify: an inline SVG with its blocks and counts.
  const size_t cfg = page.find("CFG of classify");
  ASSERT_NE(cfg, std::string::npos) << page;
  const size_t svg = page.find("<svg", cfg);
  ASSERT_NE(svg, std::string::npos);
  const std::string picture = page.substr(svg, page.find("</svg>", svg) - svg);
  EXPECT_NE(picture.find(">ENTRY</text>"), std::string::npos) << picture;
  EXPECT_NE(picture.find("#d00000"), std::string::npos) << "no hot path drawn";
  Screenshot("file://" + dir + "/report/index.html",
             OutputsDir() + "/hot-index.png");
  Screenshot("file://" + dir + "/report/" + link, OutputsDir() + "/hot-path.png");
}

TEST(ReportTools, HtmlOfTheCalculator) {
  const std::string dir = harness::TempRoot() + "/calc";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/examples/calc") + "/*.c " +
              Quote(Runfiles() + "/examples/calc") + "/*.h " +
              Quote(Runfiles() + "/examples/calc/input.calc") + " .",
          dir);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") +
              " -O0 -g -fplugin-arg-ballarus-mode=edge,path calc.c main.c -o calc",
          dir);
  harness::Run("./calc input.calc", dir, {"BALLARUS_PROFILE=calc.profile"});
  MustRun(Tool() + " html calc.profile -o report --title calc", dir);
  const std::string index = DumpDom("file://" + dir + "/report/index.html");
  // fib(10) makes 177 calls (examples/calc_test.sh).
  EXPECT_TRUE(std::regex_search(
      index, std::regex(R"re(calc_fib</a></td><td class="l">.*?</td><td data-v="177">177</td>)re")))
      << index;
  EXPECT_NE(index.find("id=\"hot-paths\""), std::string::npos);
  Screenshot("file://" + dir + "/report/index.html", OutputsDir() + "/calc-index.png");
  // The file page of calc.c has calc_fib's CFG.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(index, m, std::regex(R"re(<a href="(f\d+\.html)">calc\.c</a>)re")))
      << index;
  const std::string page = DumpDom("file://" + dir + "/report/" + std::string(m[1]));
  EXPECT_NE(page.find("CFG of calc_fib"), std::string::npos);
  Screenshot("file://" + dir + "/report/" + std::string(m[1]),
             OutputsDir() + "/calc-source.png");
}

// Builds hot.c into object DIR/hot.o (with `flags`) and program DIR/hot
// under `dir`, then runs `DIR/hot n`: its counts go to DIR/hot.bprof.
void BuildAndRunHotIn(const std::string& dir, const std::string& sub,
                      const std::string& flags, int n) {
  const std::string gcc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  MustRun("mkdir -p " + sub + " && " + gcc +
              " -O0 -g -fplugin-arg-ballarus-mode=edge,path " + flags +
              " -c hot.c -o " + sub + "/hot.o && " + gcc + " " + sub +
              "/hot.o -o " + sub + "/hot && ./" + sub + "/hot " +
              std::to_string(n),
          dir);
}

// Occurrences of `what` in `text`.
size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// One source compiled into three programs (as CMake builds a library's
// sources into each test program): c/ and d/ alike, e/ with -DREBUILT,
// which changes main's CFG only.  Run with N = 9, 4 and 2.  The report
// lists classify once with the copies' counts added (9 + 4 + 2 = 15
// calls; its `return 0` path 3 + 2 + 1 = 6 times, 40.0% of its 15), and
// main twice, once per build, each labelled: c/ and d/ added (2 calls),
// e/ apart (1 call).
TEST(ReportTools, HtmlListsAFunctionOnceAcrossPrograms) {
  const std::string dir = harness::TempRoot() + "/html-copies";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/reports/hot.c") + " .", dir);
  BuildAndRunHotIn(dir, "c", "", 9);
  BuildAndRunHotIn(dir, "d", "", 4);
  BuildAndRunHotIn(dir, "e", "-DREBUILT", 2);
  MustRun(Tool() + " html c d e -o report", dir);
  const std::string index = DumpDom("file://" + dir + "/report/index.html");
  EXPECT_NE(index.find("3 functions shown"), std::string::npos) << index;
  const std::string fns = DumpDom("file://" + dir + "/report/functions.html");
  EXPECT_EQ(CountOf(fns, ">classify</a>"), 1u) << fns;
  EXPECT_TRUE(std::regex_search(
      fns, std::regex(R"re(>classify</a></td><td class="l">.*?</td><td data-v="15">15</td>)re")))
      << fns;
  EXPECT_EQ(CountOf(fns, ">main</a>"), 2u) << fns;
  // Each build's row: its label names the units it came from (c/ and d/'s
  // two, e/'s one).
  EXPECT_TRUE(std::regex_search(
      fns, std::regex(R"re(>main</a> <span class="build">\[build [12] of 2: hot\.c \(profile record \d\), hot\.c \(profile record \d\)\]</span></td><td class="l">.*?</td><td data-v="2">2</td>)re")))
      << fns;
  EXPECT_TRUE(std::regex_search(
      fns, std::regex(R"re(>main</a> <span class="build">\[build [12] of 2: hot\.c \(profile record \d\)\]</span></td><td class="l">.*?</td><td data-v="1">1</td>)re")))
      << fns;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(index, m, std::regex(R"re(<a href="(f\d+\.html)">hot\.c</a>)re")))
      << index;
  const std::string page = DumpDom("file://" + dir + "/report/" + std::string(m[1]));
  EXPECT_NE(page.find(">6 × (40.0% fn"), std::string::npos) << page;
  // The line counts are lcov's, which add the copies too: line 9 ran 15
  // times.
  EXPECT_NE(Row(page, 9).find("<td class=\"cnt\">15</td>"), std::string::npos)
      << Row(page, 9);
}

// An edge-mode profile has no paths: the report says so and how to get
// them, instead of path columns full of "-".
TEST(ReportTools, HtmlWithoutPathsSaysHowToGetThem) {
  const std::string dir = harness::TempRoot() + "/html-edge";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/reports/hot.c") + " .", dir);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") +
              " -O0 -g -fplugin-arg-ballarus-mode=edge hot.c -o hot",
          dir);
  RunHot(dir, 9, "a.profile");
  MustRun(Tool() + " html a.profile -o report", dir);
  const std::string index = DumpDom("file://" + dir + "/report/index.html");
  const std::string note =
      "this profile was built in edge mode, which counts edges, not "
      "Ball–Larus paths";
  EXPECT_NE(index.find(note), std::string::npos) << index;
  EXPECT_NE(index.find("-fplugin-arg-ballarus-mode=edge,path"), std::string::npos);
  EXPECT_EQ(index.find("id=\"hot-paths\""), std::string::npos);
  const std::string fns = DumpDom("file://" + dir + "/report/functions.html");
  EXPECT_NE(fns.find(note), std::string::npos) << fns;
  EXPECT_EQ(fns.find("paths executed"), std::string::npos) << fns;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(index, m, std::regex(R"re(<a href="(f\d+\.html)">hot\.c</a>)re")))
      << index;
  const std::string page = DumpDom("file://" + dir + "/report/" + std::string(m[1]));
  EXPECT_NE(page.find(note), std::string::npos);
  EXPECT_EQ(page.find("paths executed"), std::string::npos);
  EXPECT_EQ(page.find("hottest paths (click"), std::string::npos);
  // Still the counts: classify 9 calls, its CFG drawn.
  EXPECT_TRUE(std::regex_search(
      page, std::regex(R"re(<tr id="fn\d+"><td class="l">classify <a href="#cfg\d+">\(CFG\)</a></td><td data-v="8">.*?</td><td data-v="9">9</td></tr>)re")))
      << page;
  EXPECT_NE(page.find("CFG of classify"), std::string::npos);
}

// CFG pictures within the time limit: a `dot` that never finishes is
// killed at the limit, its picture replaced by a note and the graph's dot
// source; the progress line shows on stderr (not a terminal: plain lines)
// unless --quiet; --cfg-functions all pictures every function that ran.
TEST(ReportTools, HtmlCfgPicturesWithinTheTimeLimit) {
  const std::string dir = harness::TempRoot() + "/html-slow-dot";
  BuildHot(dir, false);
  RunHot(dir, 9, "a.profile");
  harness::WriteFileOrDie(dir + "/slowdot",
                          "#!/bin/sh\necho $$ >> pids\nexec sleep 120\n");
  MustRun("chmod +x slowdot", dir);
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = MustRun(
      Tool() + " html a.profile -o report --dot ./slowdot --cfg-time 2", dir);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  EXPECT_LT(seconds, 60) << "the time limit was not kept";
  EXPECT_NE(r.err.find("ballarus-reconstruct: html: drawing CFG pictures 2/2, done\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ballarus-reconstruct: html: 2 of 2 CFG pictures not drawn "
                       "within 2 s (--cfg-time); the report links their dot "
                       "sources\n"),
            std::string::npos)
      << r.err;
  // Every slow dot was killed.
  std::istringstream pids(harness::ReadFileOrDie(dir + "/pids"));
  int pid, n = 0;
  while (pids >> pid) {
    ++n;
    EXPECT_NE(kill(pid, 0), 0) << "dot " << pid << " still runs";
  }
  EXPECT_EQ(n, 2);
  std::smatch m;
  const std::string index = harness::ReadFileOrDie(dir + "/report/index.html");
  ASSERT_TRUE(std::regex_search(index, m, std::regex(R"re(<a href="(f\d+\.html)">hot\.c</a>)re")));
  const std::string page = DumpDom("file://" + dir + "/report/" + std::string(m[1]));
  const size_t cfg = page.find("CFG of classify");
  ASSERT_NE(cfg, std::string::npos) << page;
  std::smatch gv;
  const std::string after = page.substr(cfg);
  ASSERT_TRUE(std::regex_search(
      after, gv, std::regex(R"re(Not drawn within the time limit .*?<a href="(cfg\d+\.gv)">)re")))
      << after;
  const std::string source = harness::ReadFileOrDie(dir + "/report/" + std::string(gv[1]));
  EXPECT_EQ(source.rfind("digraph", 0), 0u) << source;
  EXPECT_NE(source.find("ENTRY"), std::string::npos);
  r = MustRun(Tool() + " html a.profile -o quiet --dot ./slowdot --cfg-time 2 --quiet",
              dir);
  EXPECT_EQ(r.err, "");
  // The real dot, every function: main and classify drawn.
  MustRun(Tool() + " html a.profile -o all --cfg-functions all", dir);
  const std::string all = harness::ReadFileOrDie(dir + "/all/" + std::string(m[1]));
  for (const char* f : {"main", "classify"}) {
    const size_t at = all.find(std::string("CFG of ") + f);
    ASSERT_NE(at, std::string::npos) << f;
    EXPECT_EQ(all.find("<svg", at), all.find("<div class=\"svg\"><svg", at) + 17) << f;
  }
  EXPECT_EQ(harness::Run(Tool() + " html a.profile -o x --cfg-functions many", dir).status,
            2);
  // No dot at all: one line, and pages without pictures.
  r = MustRun(Tool() + " html a.profile -o nodot --dot ./missing-dot", dir);
  EXPECT_NE(r.err.find("./missing-dot: cannot run it (No such file or directory); "
                       "the report has no CFG pictures\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(harness::ReadFileOrDie(dir + "/nodot/" + std::string(m[1])).find("CFG of"),
            std::string::npos);
}

// Lua 5.4.4 (tests/reports/lua: its src/ and README, as Debian's lua5.4
// orig tarball has them) built in `dir` with CC and CFLAGS (-O2 and the
// fixed seeds of bench/lib/programs.sh, pointers hashed to 0, so that two
// differently instrumented builds execute alike), then run on
// tests/reports/lua/workload.lua; returns its stdout.
std::string BuildAndRunLua(const std::string& dir, const std::string& cc,
                           const std::string& cflags, const std::string& ldflags,
                           const std::vector<std::string>& env) {
  harness::MakeFreshDir(dir);
  MustRun("tar xJf " + Quote(Runfiles() + "/tests/reports/lua/lua-5.4.4-src.tar.xz") +
              " && sed -i 's|^#define point2uint(p).*|#define point2uint(p)\\t0u|' "
              "lua-5.4.4/src/llimits.h && grep -q 'point2uint(p)\t0u' "
              "lua-5.4.4/src/llimits.h",
          dir);
  CommandResult b = MustRun(
      "make -C lua-5.4.4/src -j2 lua CC=" + Quote(cc) +
          " SYSCFLAGS=-DLUA_USE_LINUX 'SYSLIBS=-Wl,-E -ldl' \"MYCFLAGS=-O2 -g " +
          cflags + " '-Dluai_makeseed(L)=0x2545F491u' '-Dl_randomizePivot()=0u'\"" +
          " MYLDFLAGS=" + Quote(ldflags),
      dir);
  // (lua interns argv[0]: the same name in both builds.)
  CommandResult r = harness::Run(
      "lua-5.4.4/src/lua " + Quote(Runfiles() + "/tests/reports/lua/workload.lua"),
      dir, env);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// gcov's JSON of every unit of a gcov build: per function name its
// execution counts, per file name (as gcov names it) its lines' counts.
struct GcovData {
  std::map<std::string, std::vector<uint64_t>> calls;
  std::map<std::string, std::map<int, uint64_t>> lines;
};
GcovData ReadGcovJson(const std::string& objdir) {
  GcovData g;
  CommandResult r = MustRun("gcov -j -b *.gcda >/dev/null && "
                            "for f in *.gcov.json.gz; do gzip -dc \"$f\"; echo; done",
                            objdir);
  std::istringstream in(r.out);
  std::string one;
  while (std::getline(in, one)) {
    if (one.empty()) continue;
    const json j = json::parse(one);
    for (const json& f : j.at("files")) {
      const std::string file = f.at("file");
      for (const json& fn : f.at("functions"))
        g.calls[fn.at("name")].push_back(fn.at("execution_count"));
      for (const json& l : f.at("lines")) {
        // A line several functions share (gcov lists it once per
        // function): gcov's count is the sum.
        uint64_t& c = g.lines[file][l.at("line_number")];
        c += l.at("count").get<uint64_t>();
      }
    }
  }
  return g;
}

// tests/programs/computed_goto.c in edge,path mode: run()'s paths end at
// each `goto *p`; hand-derived from its fixed bytecode (push 7; push 12;
// 12 x (add; dec; jnz) with jnz taken 11 times; halt): 40 paths, 39 of
// them leaving by the computed goto (the first dispatch, 2 pushes, 12
// adds, 12 decs, 12 jnz) and 1 returning (halt).  None "did not return".
TEST(ReportTools, PathsAbnormalJump) {
  const std::string dir = harness::TempRoot() + "/computed_goto";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/programs/computed_goto.c") + " .", dir);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-gcc") +
              " -O0 -g -fplugin-arg-ballarus-mode=edge,path computed_goto.c -o cg",
          dir);
  ASSERT_EQ(harness::Run("./cg", dir, {"BALLARUS_PROFILE=p.profile"}).status, 0);
  CommandResult r =
      MustRun(Tool() + " paths --json --top 0 --function '^run$' p.profile", dir);
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("functions").size(), 1u) << r.out;
  uint64_t abnormal = 0, returned = 0, other = 0;
  std::vector<uint64_t> counts;
  for (const json& p : j["functions"][0].at("paths")) {
    const uint64_t c = p.at("count");
    if (p.at("end") == "abnormal") {
      abnormal += c;
      counts.push_back(c);
    } else if (p.at("end") == "return") {
      returned += c;
    } else {
      other += c;
    }
  }
  EXPECT_EQ(abnormal, 39u) << r.out;
  EXPECT_EQ(returned, 1u) << r.out;
  EXPECT_EQ(other, 0u) << r.out;
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<uint64_t>{1, 1, 2, 11, 12, 12})) << r.out;
  CommandResult t = MustRun(Tool() + " paths --top 0 --function '^run$' p.profile", dir);
  EXPECT_NE(t.out.find(" EXIT (abnormal jump)\n"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find(" (did not return)\n"), std::string::npos) << t.out;
}

// A real program, as the issue asks: Lua in edge,path mode at -O2, its
// report's counts in chromium's DOM against gcov's for the same build
// options (the oracle), and screenshots.
TEST(ReportTools, HtmlOfLua) {
  const std::string gdir = harness::TempRoot() + "/lua-gcov";
  const std::string bdir = harness::TempRoot() + "/lua-ballarus";
  const std::string gout = BuildAndRunLua(gdir, "gcc", "--coverage", "--coverage", {});
  const std::string bout = BuildAndRunLua(
      bdir, InstallPrefix() + "/bin/ballarus-gcc",
      "-fplugin-arg-ballarus-mode=edge,path", "", {"BALLARUS_PROFILE=" + bdir + "/lua.profile"});
  // fib(20), the sorts' ends, 5000 numbers and substitutions, 101 keys.
  ASSERT_EQ(bout, "6765\t100001\t13\t5000\t5000\t101\t10001\n");
  ASSERT_EQ(gout, bout);
  const GcovData gcov = ReadGcovJson(gdir + "/lua-5.4.4/src");
  ASSERT_GT(gcov.calls.size(), 500u);

  MustRun(Tool() + " html lua.profile -o report --title 'Lua 5.4.4'", bdir);
  const std::string index = DumpDom("file://" + bdir + "/report/index.html");
  EXPECT_NE(index.find("with Ball–Larus path profiles"), std::string::npos);
  EXPECT_NE(index.find("id=\"hot-paths\""), std::string::npos);
  // The hottest functions: each one's calls equal gcov's.
  const size_t hot = index.find("id=\"hot-functions\"");
  ASSERT_NE(hot, std::string::npos) << index;
  const std::string table = index.substr(hot, index.find("</table>", hot) - hot);
  std::regex row(R"re(<td class="l"><a href="[^"]*">([^<]+)</a></td><td class="l">.*?</td><td data-v="(\d+)">)re");
  int compared = 0;
  uint64_t previous = UINT64_MAX;
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    const uint64_t calls = std::stoull((*it)[2]);
    EXPECT_LE(calls, previous) << name << ": not sorted by calls";
    previous = calls;
    auto g = gcov.calls.find(name);
    ASSERT_NE(g, gcov.calls.end()) << name << " is not in gcov's data";
    if (g->second.size() != 1) continue;  // a static name in several units
    EXPECT_EQ(calls, g->second[0]) << name;
    ++compared;
  }
  EXPECT_GE(compared, 15) << table;
  // lvm.c: its row of the file table (lines hit / total as gcov's data
  // gives them), and on its page the count of its most executed line.
  const auto lvm = gcov.lines.find("lvm.c");
  ASSERT_NE(lvm, gcov.lines.end());
  uint64_t hit = 0, top = 0;
  int top_line = 0;
  for (const auto& [ln, c] : lvm->second) {
    hit += c > 0;
    if (c > top) top = c, top_line = ln;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      index, m, std::regex(R"re(<a href="(f\d+\.html)">lvm\.c</a>.*?</tr>)re")))
      << index;
  const std::string lvm_row = m[0];
  EXPECT_NE(lvm_row.find(fmt_hit_total(hit, lvm->second.size())), std::string::npos)
      << lvm_row << " vs gcov: " << hit << " / " << lvm->second.size();
  const std::string page = DumpDom("file://" + bdir + "/report/" + std::string(m[1]));
  ASSERT_GT(top, 100000u);
  EXPECT_TRUE(std::regex_search(
      Row(page, top_line),
      std::regex("<td class=\"cnt\">" + std::to_string(top) + "\\*?</td>")))
      << "lvm.c:" << top_line << " gcov: " << top << "\n" << Row(page, top_line);
  EXPECT_NE(page.find("CFG of luaV_execute"), std::string::npos);
  // luaV_execute dispatches by computed goto (ljumptab.h): its paths end
  // at the jump, and none "did not return" (the workload raises no error,
  // so nothing longjmps).
  EXPECT_NE(page.find(" (abnormal jump)"), std::string::npos);
  EXPECT_EQ(page.find("(did not return)"), std::string::npos)
      << page.substr(page.find("(did not return)") - 300, 400);
  Screenshot("file://" + bdir + "/report/index.html", OutputsDir() + "/lua-index.png");
  Screenshot("file://" + bdir + "/report/" + std::string(m[1]),
             OutputsDir() + "/lua-lvm.png");
}

TEST(ReportTools, FiltersEverywhere) {
  const std::string dir = harness::TempRoot() + "/filters";
  harness::MakeFreshDir(dir);
  MustRun("cp " + Quote(Runfiles() + "/tests/reports/vec.cc") + " .", dir);
  MustRun(Quote(InstallPrefix() + "/bin/ballarus-g++") +
              " -O0 -g -fplugin-arg-ballarus-mode=edge,path vec.cc -o vec",
          dir);
  ASSERT_EQ(harness::Run("./vec", dir, {"BALLARUS_PROFILE=ballarus.profile"}).status, 0);
  auto sfs = [&](const std::string& options) {
    CommandResult r = MustRun(Tool() + " lcov ballarus.profile " + options, dir);
    std::vector<std::string> out;
    std::regex sf(R"re(SF:([^\n]*))re");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), sf);
         it != std::sregex_iterator(); ++it)
      out.push_back((*it)[1]);
    return std::make_pair(out, r.out);
  };
  // Default: the project only (the build directory).
  auto [def, def_text] = sfs("");
  ASSERT_EQ(def.size(), 1u) << def_text;
  EXPECT_EQ(def[0], dir + "/vec.cc");
  // --all-files: std::vector's headers too.
  auto [all, all_text] = sfs("--all-files");
  EXPECT_GT(all.size(), 1u);
  bool header = false;
  for (const std::string& f : all) header |= f.find("/usr/include/") == 0;
  EXPECT_TRUE(header) << all_text;
  // --include replaces the root rule; --exclude drops.
  auto [inc, inc_text] = sfs("--include 'stl_vector\\.h$'");
  ASSERT_EQ(inc.size(), 1u) << inc_text;
  EXPECT_NE(inc[0].find("stl_vector.h"), std::string::npos);
  auto [exc, exc_text] = sfs("--all-files --exclude '^/usr/'");
  EXPECT_EQ(exc, def) << exc_text;
  // Functions: FN records.
  auto [fn, fn_text] = sfs("--function '^main$'");
  EXPECT_NE(fn_text.find("FN:13,main"), std::string::npos) << fn_text;
  EXPECT_EQ(fn_text.find(",_ZL3sumRKSt6vectorIiSaIiEE"), std::string::npos) << fn_text;
  auto [xfn, xfn_text] = sfs("--exclude-function '^main$'");
  EXPECT_EQ(xfn_text.find("FN:13,main"), std::string::npos) << xfn_text;
  EXPECT_NE(xfn_text.find("FNDA:1,_ZL3sumRKSt6vectorIiSaIiEE"), std::string::npos)
      << xfn_text;
  // The same filters drive gcov, html, paths and diff.
  CommandResult g = MustRun(Tool() + " gcov ballarus.profile", dir);
  EXPECT_NE(g.out.find("Creating 'vec.cc.gcov'"), std::string::npos) << g.out;
  EXPECT_EQ(g.out.find("stl_vector.h"), std::string::npos) << g.out;
  g = MustRun(Tool() + " gcov --all-files ballarus.profile", dir);
  EXPECT_NE(g.out.find("Creating 'stl_vector.h.gcov'"), std::string::npos) << g.out;
  CommandResult p = MustRun(Tool() + " paths --program --top 0 ballarus.profile", dir);
  EXPECT_EQ(p.out.find("push_back"), std::string::npos) << p.out;
  p = MustRun(Tool() + " paths --program --top 0 --all-files ballarus.profile", dir);
  EXPECT_NE(p.out.find("push_back"), std::string::npos) << p.out;
  CommandResult bad = harness::Run(Tool() + " lcov ballarus.profile --include '('", dir);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--include: invalid regular expression '('"), std::string::npos)
      << bad.err;
}

}  // namespace
