// named_reports_test.cc — the per-test reports of a profile with named
// runs (BALLARUS_TEST), end to end with gcc and the installed plugin.
//
// A three-file program (classify() in calc.c, twice() in other.c, main.c
// calling one of them by its argument) is run into one profile as the
// tests neg (-5), zero (0, twice) and big (500), and once under no name
// (7).  Hand-derived, the lines each test executes:
//   neg:  calc.c 1 2 3,    main.c 5 6 7 8 11 12 13
//   zero: calc.c 1 2 4 5,  main.c 5 6 7 8 11 12 13
//   big:  other.c 1 2,     main.c 5 6 7 8 9 12 13
// Checked:
//   * `--test T` reports (lcov, gcov -t, show --json, paths --json, the
//     HTML file pages) equal those of T's runs made alone into a profile
//     of their own (the oracle); an unknown name is one error line naming
//     the profile and the tests it holds;
//   * show --json's per-line and per-function "tests" and the `tests`
//     command give the hand-derived sets and counts;
//   * lcov: one TN: section per test after the unnamed runs' section;
//     each test's section executes its hand-derived lines; per line the
//     sections add up to the one-section tracefile; real `lcov --summary`,
//     `lcov --list` and `genhtml --show-details` read it, with the
//     one-section file's totals, genhtml's details its tests;
//   * HTML in headless chromium: each line's "executed by" list, each
//     function's, and the index's table of tests; a profile without named
//     runs has none of it.
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using json = nlohmann::json;
using LineSet = std::set<std::pair<std::string, uint32_t>>;  // (file, line)

constexpr const char* kCalc =
    "int classify(int x) {\n"
    "  if (x < 0)\n"
    "    return -1;\n"
    "  if (x == 0)\n"
    "    return 0;\n"
    "  return 1;\n"
    "}\n";
constexpr const char* kOther =
    "int twice(int x) {\n"
    "  return 2 * x;\n"
    "}\n";
constexpr const char* kMain =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "int classify(int x);\n"
    "int twice(int x);\n"
    "int main(int argc, char **argv) {\n"
    "  int x = argc > 1 ? atoi(argv[1]) : 0;\n"
    "  int s = 0;\n"
    "  if (x > 100)\n"
    "    s = twice(x);\n"
    "  else\n"
    "    s = classify(x);\n"
    "  printf(\"%d\\n\", s);\n"
    "  return 0;\n"
    "}\n";

LineSet Lines(const std::string& file, std::vector<uint32_t> lines) {
  LineSet out;
  for (uint32_t l : lines) out.insert({file, l});
  return out;
}

LineSet Union(LineSet a, const LineSet& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// The hand-derived lines of each test (see the file comment).
std::map<std::string, LineSet> Expected() {
  const LineSet main_common = Lines("main.c", {5, 6, 7, 8, 12, 13});
  return {
      {"neg", Union(Union(Lines("calc.c", {1, 2, 3}), main_common),
                    Lines("main.c", {11}))},
      {"zero", Union(Union(Lines("calc.c", {1, 2, 4, 5}), main_common),
                     Lines("main.c", {11}))},
      {"big", Union(Union(Lines("other.c", {1, 2}), main_common),
                    Lines("main.c", {9}))},
  };
}

std::string Prefix() {
  std::string error;
  std::string prefix = harness::InstallPrefix(&error);
  if (prefix.empty()) ADD_FAILURE() << error;
  return prefix;
}

CommandResult MustRun(const std::string& cmd, const std::string& cwd,
                      const std::vector<std::string>& env = {}) {
  CommandResult r = harness::Run(cmd, cwd, env);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

class NamedReports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = harness::TempRoot() + "/named_reports";
    harness::MakeFreshDir(dir_);
    harness::WriteFileOrDie(dir_ + "/calc.c", kCalc);
    harness::WriteFileOrDie(dir_ + "/other.c", kOther);
    harness::WriteFileOrDie(dir_ + "/main.c", kMain);
    MustRun(Quote(Prefix() + "/bin/ballarus-gcc") +
                " -O0 -g calc.c other.c main.c -o prog",
            dir_);
    // The suite: every run into all.bprof.
    Run("all.bprof", "neg", "-5");
    Run("all.bprof", "zero", "0");
    Run("all.bprof", "zero", "0");
    Run("all.bprof", "big", "500");
    Run("all.bprof", "", "7");
    // The oracle: each test's runs alone, unnamed, into a profile of their
    // own.
    Run("neg.bprof", "", "-5");
    Run("zero.bprof", "", "0");
    Run("zero.bprof", "", "0");
    Run("big.bprof", "", "500");
    // Names lcov cannot take as they are.
    Run("odd.bprof", "a-b", "1");
    Run("odd.bprof", "a.b", "-1");
    Run("odd.bprof", "_", "500");
    // The same runs with no names at all.
    for (const char* arg : {"-5", "0", "0", "500", "7"})
      Run("plain.bprof", "", arg);
  }

  static void Run(const std::string& profile, const std::string& test,
                  const std::string& arg) {
    std::vector<std::string> env = {"BALLARUS_PROFILE=" + dir_ + "/" + profile};
    if (!test.empty()) env.push_back("BALLARUS_TEST=" + test);
    MustRun("./prog " + arg, dir_, env);
  }

  static CommandResult Ours(const std::string& args) {
    return MustRun(Quote(Prefix() + "/bin/ballarus-reconstruct") + " " + args,
                   dir_);
  }

  static std::string dir_;
};

std::string NamedReports::dir_;

// show --json without its "profile" (the file's name).
json ShowJson(const std::string& out) {
  json j = json::parse(out);
  j.erase("profile");
  return j;
}

TEST_F(NamedReports, TestOptionEqualsTheTestRunAlone) {
  for (const char* t : {"neg", "zero", "big"}) {
    SCOPED_TRACE(t);
    const std::string sel = std::string(" --test ") + t + " all.bprof";
    const std::string alone = std::string(" ") + t + ".bprof";
    EXPECT_EQ(Ours("lcov" + sel).out, Ours("lcov -t " + std::string(t) + alone).out);
    EXPECT_EQ(Ours("gcov -t" + sel).out, Ours("gcov -t" + alone).out);
    EXPECT_EQ(ShowJson(Ours("show --json" + sel).out),
              ShowJson(Ours("show --json" + alone).out));
    EXPECT_EQ(ShowJson(Ours("paths --json --top 0" + sel).out),
              ShowJson(Ours("paths --json --top 0" + alone).out));
    Ours("html -q --title T -o h_sel_" + std::string(t) + sel);
    Ours("html -q --title T -o h_alone_" + std::string(t) + alone);
    for (const char* page : {"f0.html", "f1.html", "f2.html", "functions.html"})
      EXPECT_EQ(harness::ReadFileOrDie(dir_ + "/h_sel_" + t + "/" + page),
                harness::ReadFileOrDie(dir_ + "/h_alone_" + t + "/" + page))
          << page;
  }
}

TEST_F(NamedReports, UnknownTestIsOneErrorLine) {
  CommandResult r = harness::Run(
      Quote(Prefix() + "/bin/ballarus-reconstruct") + " lcov --test nope all.bprof",
      dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ballarus-reconstruct: all.bprof: no test 'nope' in the profile "
            "(tests: big, neg, zero)\n");
  r = harness::Run(Quote(Prefix() + "/bin/ballarus-reconstruct") +
                       " lcov --test neg plain.bprof",
                   dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plain.bprof: no test 'neg' in the profile (it has no "
                       "named runs"),
            std::string::npos)
      << r.err;
}

// Per test, the lines show --json says it executed.
std::map<std::string, LineSet> LinesByTest(const json& j) {
  std::map<std::string, LineSet> out;
  for (const json& l : j["lines"])
    for (const json& t : l["tests"])
      out[j["tests"][t.get<size_t>()]["name"]].insert(
          {l["file"], l["line"].get<uint32_t>()});
  return out;
}

TEST_F(NamedReports, ShowJsonSaysWhichTestsExecutedEachLine) {
  const json j = json::parse(Ours("show --json all.bprof").out);
  ASSERT_EQ(j["tests"], json::parse(R"([{"name": "big", "runs": 1},
      {"name": "neg", "runs": 1}, {"name": "zero", "runs": 2}])"));
  EXPECT_EQ(LinesByTest(j), Expected());
  std::map<std::string, json> fn;
  for (const json& f : j["functions"]) fn[f["name"]] = f["tests"];
  EXPECT_EQ(fn["classify"], json::parse("[1, 2]"));
  EXPECT_EQ(fn["twice"], json::parse("[0]"));
  EXPECT_EQ(fn["main"], json::parse("[0, 1, 2]"));
  // Without named runs: no "tests" anywhere.
  EXPECT_EQ(Ours("show --json plain.bprof").out.find("\"tests\""),
            std::string::npos);
}

TEST_F(NamedReports, TestsCommandListsTheTests) {
  const json j = json::parse(Ours("tests --json all.bprof").out);
  EXPECT_EQ(j["runs"], 5);
  EXPECT_EQ(j["tests"], json::parse(R"([
      {"name": "big", "runs": 1, "tus": 2, "functions": 2, "lines": 9},
      {"name": "neg", "runs": 1, "tus": 2, "functions": 2, "lines": 10},
      {"name": "zero", "runs": 2, "tus": 2, "functions": 2, "lines": 11}])"));
  const std::string text = Ours("tests all.bprof").out;
  EXPECT_NE(text.find("3 named tests"), std::string::npos) << text;
  EXPECT_NE(text.find("zero"), std::string::npos) << text;
}

// A tracefile's sections: (TN, file base name) -> its entries.
using Sections = std::map<std::pair<std::string, std::string>,
                          std::vector<std::string>>;

Sections ParseTracefile(const std::string& text) {
  Sections out;
  std::istringstream in(text);
  std::string tn, sf;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("TN:", 0) == 0) {
      tn = l.substr(3);
    } else if (l.rfind("SF:", 0) == 0) {
      sf = harness::Basename(l.substr(3));
      EXPECT_EQ(out.count({tn, sf}), 0u) << tn << " " << sf << " twice";
      out[{tn, sf}];
    } else if (l != "end_of_record") {
      out[{tn, sf}].push_back(l);
    }
  }
  return out;
}

// DA:line,count summed per (file, line) over the sections.
std::map<std::pair<std::string, uint32_t>, uint64_t> LineSums(
    const Sections& s) {
  std::map<std::pair<std::string, uint32_t>, uint64_t> out;
  for (const auto& [key, entries] : s)
    for (const std::string& e : entries)
      if (e.rfind("DA:", 0) == 0) {
        const size_t comma = e.find(',');
        out[{key.second, std::stoul(e.substr(3, comma - 3))}] +=
            std::stoull(e.substr(comma + 1));
      }
  return out;
}

TEST_F(NamedReports, LcovHasOneSectionPerTest) {
  const std::string sections = Ours("lcov -o sections.info all.bprof").out;
  Ours("lcov --one-section -o one.info all.bprof");
  const Sections s = ParseTracefile(harness::ReadFileOrDie(dir_ + "/sections.info"));
  const Sections one = ParseTracefile(harness::ReadFileOrDie(dir_ + "/one.info"));
  std::set<std::string> names;
  for (const auto& [key, entries] : s) names.insert(key.first);
  EXPECT_EQ(names, (std::set<std::string>{"", "big", "neg", "zero"}));
  // The unnamed runs' section lists every file, a test's only those it ran.
  for (const char* f : {"calc.c", "main.c", "other.c"}) EXPECT_EQ(s.count({"", f}), 1u);
  EXPECT_EQ(s.count({"big", "calc.c"}), 0u);
  EXPECT_EQ(s.count({"neg", "other.c"}), 0u);
  for (const auto& [test, lines] : Expected()) {
    LineSet hit;
    for (const auto& [key, entries] : s)
      if (key.first == test)
        for (const std::string& e : entries)
          if (e.rfind("DA:", 0) == 0 && e.substr(e.find(',') + 1) != "0")
            hit.insert({key.second, std::stoul(e.substr(3))});
    EXPECT_EQ(hit, lines) << test;
  }
  EXPECT_EQ(LineSums(s), LineSums(one));
  // ... which is the tracefile of the same runs made without names.
  EXPECT_EQ(Ours("lcov --one-section all.bprof").out, Ours("lcov plain.bprof").out);
  EXPECT_EQ(Ours("lcov all.bprof").out.find("TN:"), 0u);
  // The real lcov reads it, with the one-section file's totals.
  const std::string rc = " --rc lcov_branch_coverage=1";
  const std::string sum_s = MustRun("lcov --summary sections.info" + rc, dir_).err +
                            MustRun("lcov --summary sections.info" + rc, dir_).out;
  const std::string sum_one = MustRun("lcov --summary one.info" + rc, dir_).err +
                              MustRun("lcov --summary one.info" + rc, dir_).out;
  EXPECT_NE(sum_s.find("lines......: "), std::string::npos) << sum_s;
  auto totals = [](std::string t) { return t.substr(t.find("Summary")); };
  EXPECT_EQ(totals(sum_s), totals(sum_one));
  EXPECT_EQ(sum_s.find("WARNING"), std::string::npos) << sum_s;
  // lcov --list names the tracefile on its first line, then the table.
  auto table = [](std::string t) { return t.substr(t.find('\n')); };
  EXPECT_EQ(table(MustRun("lcov --list sections.info" + rc, dir_).out),
            table(MustRun("lcov --list one.info" + rc, dir_).out));
  // genhtml's per-test details: each test's coverage of each file.
  MustRun("genhtml -q --show-details --branch-coverage -o gh sections.info", dir_);
  const std::string page =
      harness::ReadFileOrDie(dir_ + "/gh/named_reports/index-detail.html");
  for (const char* t : {"neg", "zero", "big"})
    EXPECT_NE(page.find(std::string("<td class=\"testName\" colspan=2>") + t +
                        "</td>"),
              std::string::npos)
        << t;
}

// Test names become lcov names as lcov reads them, kept distinct; the
// unnamed runs' section takes -t's name.
TEST_F(NamedReports, LcovTestNamesAreLcovsWords) {
  Ours("lcov -t rest -o odd.info odd.bprof");
  const std::string text = harness::ReadFileOrDie(dir_ + "/odd.info");
  std::vector<std::string> tns;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("TN:", 0) == 0 && (tns.empty() || tns.back() != l))
      tns.push_back(l);
  EXPECT_EQ(tns, (std::vector<std::string>{"TN:rest", "TN:_", "TN:a_b",
                                           "TN:a_b_2"}));
  const CommandResult r = MustRun("lcov --summary odd.info", dir_);
  EXPECT_EQ((r.out + r.err).find("WARNING"), std::string::npos) << r.err;
}

// `chromium --headless` on a file:// URL; the DOM after load.
std::string DumpDom(const std::string& url) {
  CommandResult r =
      harness::Chromium("--virtual-time-budget=3000 --dump-dom", url);
  EXPECT_EQ(r.status, 0) << url << ": " << r.err;
  return r.out;
}

// The page's source line `line` as the DOM has it.
std::string LineRow(const std::string& dom, uint32_t line) {
  const std::string id = "<tr id=\"L" + std::to_string(line) + "\"";
  const size_t at = dom.find(id);
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</tr>", at) - at);
}

TEST_F(NamedReports, HtmlSaysWhichTestsExecutedEachLine) {
  Ours("html -q -o html all.bprof");
  // f0 is calc.c (files by name).
  const std::string calc = DumpDom("file://" + dir_ + "/html/f0.html");
  ASSERT_NE(calc.find("calc.c"), std::string::npos);
  EXPECT_NE(LineRow(calc, 3).find("<summary>1 test</summary><div>neg</div>"),
            std::string::npos) << LineRow(calc, 3);
  EXPECT_NE(LineRow(calc, 1).find("<summary>2 tests</summary><div>neg<br>zero</div>"),
            std::string::npos) << LineRow(calc, 1);
  // Line 6 ran only under no name.
  EXPECT_EQ(LineRow(calc, 6).find("<details"), std::string::npos) << LineRow(calc, 6);
  const size_t fn = calc.find("<tr id=\"fn0\"");
  ASSERT_NE(fn, std::string::npos);
  EXPECT_NE(calc.substr(fn, calc.find("</tr>", fn) - fn).find("neg<br>zero"),
            std::string::npos);
  const std::string index = DumpDom("file://" + dir_ + "/html/index.html");
  EXPECT_NE(index.find("id=\"tests\""), std::string::npos);
  EXPECT_NE(index.find("<td class=\"l\">zero</td><td data-v=\"2\">2</td><td "
                       "data-v=\"11\">11</td>"),
            std::string::npos);
  // One test's report says so.
  Ours("html -q --test neg -o neg_html all.bprof");
  const std::string neg = harness::ReadFileOrDie(dir_ + "/neg_html/index.html");
  EXPECT_NE(neg.find("<title>ballarus report: all.bprof, test neg</title>"),
            std::string::npos);
  EXPECT_NE(neg.find("The counts of test <code>neg</code> alone"),
            std::string::npos);
  // Without named runs, none of it.
  Ours("html -q -o plain_html plain.bprof");
  const std::string plain = harness::ReadFileOrDie(dir_ + "/plain_html/f0.html");
  EXPECT_EQ(plain.find("<details"), std::string::npos);
  EXPECT_EQ(harness::ReadFileOrDie(dir_ + "/plain_html/index.html").find("id=\"tests\""),
            std::string::npos);
}

}  // namespace
