// exclusion_markers_test.cc — which files and lines the coverage reports
// show, against lcov itself.
//
// tests/reports/markers is laid out as a release tarball: src/*.cc,
// include/shapes.h beside src/, compiled in build/ (`g++ -c ../src/x.cc
// -I../include`), with lcov's and gcovr's exclusion markers and
// std::vector code from the system headers.  It is built twice at -O0:
// with gcov (--coverage) from a copy whose GCOVR_EXCL_ markers read
// LCOV_EXCL_ (lcov knows only its own), and with ballarus-g++ from the
// original; both run once.  Then, the tree's top directory as cwd:
//
//   * `lcov --capture -d . --no-external` (merged with `lcov -a`) and
//     `ballarus-reconstruct lcov build` give the same records, entry for
//     entry: the files (the header in include/ kept, the system headers
//     left out), every DA, FN, FNDA and BRDA, and LF/LH, FNF/FNH, BRF/BRH;
//     so excluded lines, branches and functions are the same;
//   * the same with --no-markers on both sides, and that differs;
//   * cobertura's lines-valid and the HTML index's totals are those
//     figures, the excluded function is in no HTML list; `gcov` still
//     counts the excluded lines, as gcov does.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using harness::Runfiles;


std::string Prefix() {
  std::string error;
  std::string prefix = harness::InstallPrefix(&error);
  if (prefix.empty()) ADD_FAILURE() << error;
  return prefix;
}

CommandResult MustRun(const std::string& cmd, const std::string& cwd) {
  CommandResult r = harness::Run(cmd, cwd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

// Copies the program into TOP (src/, include/, an empty build/).
void CopyTree(const std::string& top) {
  harness::MakeFreshDir(top);
  MustRun("cp -r " + Quote(Runfiles() + "/tests/reports/markers") + "/. . && " +
              "chmod -R u+w . && mkdir build",
          top);
}

void Compile(const std::string& top, const std::string& cxx,
             const std::string& flags) {
  MustRun(cxx + " -O0 -g " + flags + " -I../include -c ../src/shapes.cc && " +
              cxx + " -O0 -g " + flags + " -I../include -c ../src/main.cc && " +
              cxx + " " + flags + " shapes.o main.o -o prog && ./prog",
          top + "/build");
}

// A tracefile's records by path relative to `top`: their entries sorted
// ("DA:3,1", "LF:7", ...), TN: lines left out.
using Records = std::map<std::string, std::vector<std::string>>;

Records Parse(const std::string& text, const std::string& top) {
  Records out;
  std::istringstream in(text);
  std::string sf;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("SF:", 0) == 0) {
      sf = l.substr(3);
      if (sf.rfind(top + "/", 0) == 0) sf = sf.substr(top.size() + 1);
      continue;
    }
    if (l == "end_of_record" || l.rfind("TN:", 0) == 0) continue;
    out[sf].push_back(l);
  }
  for (auto& [f, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// The sum of a figure ("LF") over the records.
long Total(const Records& r, const std::string& key) {
  long sum = 0;
  for (const auto& [f, entries] : r)
    for (const std::string& e : entries)
      if (e.rfind(key + ":", 0) == 0) sum += std::stol(e.substr(key.size() + 1));
  return sum;
}

// Some entry of `file` starts with `prefix`.
bool Has(const Records& r, const std::string& file, const std::string& prefix) {
  auto it = r.find(file);
  if (it == r.end()) return false;
  for (const std::string& e : it->second)
    if (e.rfind(prefix, 0) == 0) return true;
  return false;
}

class Markers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = harness::TempRoot() + "/markers";
    gcov_ = root + "/gcov/proj";
    ours_ = root + "/ours/proj";
    CopyTree(gcov_);
    MustRun("sed -i 's/GCOVR_EXCL_/LCOV_EXCL_/g' src/*.cc include/*.h", gcov_);
    Compile(gcov_, "g++", "--coverage");
    CopyTree(ours_);
    Compile(ours_, Quote(Prefix() + "/bin/ballarus-g++"), "");
  }

  // lcov's capture of the gcov build, merged.
  static Records Lcov(const std::string& options) {
    const std::string rc = " --rc lcov_branch_coverage=1";
    MustRun("lcov -q --capture -d . --no-external -o cap.info" + rc + options +
                " 2>/dev/null && lcov -q -a cap.info -o merged.info" + rc,
            gcov_);
    return Parse(harness::ReadFileOrDie(gcov_ + "/merged.info"), gcov_);
  }

  static CommandResult Ours(const std::string& args) {
    return MustRun(Quote(Prefix() + "/bin/ballarus-reconstruct") + " " + args, ours_);
  }

  static std::string gcov_, ours_;
};

std::string Markers::gcov_, Markers::ours_;

TEST_F(Markers, LcovTracefileEqualsLcovs) {
  const Records lcov = Lcov("");
  const Records ours = Parse(Ours("lcov build").out, ours_);
  EXPECT_EQ(ours, lcov);
  // The project's files only, its header beside src/ included.
  std::vector<std::string> files;
  for (const auto& [f, e] : ours) files.push_back(f);
  EXPECT_EQ(files, (std::vector<std::string>{"include/shapes.h", "src/main.cc",
                                             "src/shapes.cc"}));
  // Excluded: a line, a region (not its STOP line), a function whose
  // first line is excluded, branches of a line and of a region.
  EXPECT_FALSE(Has(ours, "include/shapes.h", "DA:12,"));
  EXPECT_TRUE(Has(ours, "include/shapes.h", "DA:11,1"));
  EXPECT_FALSE(Has(ours, "include/shapes.h", "FN:17,"));
  EXPECT_FALSE(Has(ours, "src/shapes.cc", "DA:21,"));
  EXPECT_TRUE(Has(ours, "src/shapes.cc", "DA:23,0"));
  EXPECT_FALSE(Has(ours, "src/shapes.cc", "FN:29,"));
  EXPECT_TRUE(Has(ours, "src/shapes.cc", "DA:30,0"));  // only its first line
  EXPECT_TRUE(Has(ours, "src/shapes.cc", "FN:14,_Z8Classifyi"));
  for (const char* line : {"BRDA:8,", "BRDA:16,", "BRDA:17,"})
    EXPECT_FALSE(Has(ours, "src/shapes.cc", line)) << line;
  EXPECT_TRUE(Has(ours, "src/shapes.cc", "BRDA:19,"));
  EXPECT_FALSE(Has(ours, "src/main.cc", "BRDA:10,"));
  EXPECT_FALSE(Has(ours, "src/main.cc", "DA:14,"));
  EXPECT_EQ(Total(ours, "LF"), 25);
}

TEST_F(Markers, NoMarkersEqualsLcovs) {
  const Records lcov = Lcov(" --no-markers");
  const Records ours = Parse(Ours("lcov --no-markers build").out, ours_);
  EXPECT_EQ(ours, lcov);
  const Records marked = Parse(Ours("lcov build").out, ours_);
  for (const char* key : {"LF", "FNF", "BRF"})
    EXPECT_GT(Total(ours, key), Total(marked, key)) << key;
  EXPECT_TRUE(Has(ours, "src/shapes.cc", "FN:29,_Z6Unusedi"));
  EXPECT_TRUE(Has(ours, "src/main.cc", "BRDA:10,"));
}

TEST_F(Markers, CoberturaHtmlAndGcov) {
  const Records ours = Parse(Ours("lcov build").out, ours_);
  const CommandResult xml = Ours("cobertura build");
  EXPECT_NE(xml.out.find(" lines-covered=\"" + std::to_string(Total(ours, "LH")) +
                         "\" lines-valid=\"" + std::to_string(Total(ours, "LF")) +
                         "\""),
            std::string::npos)
      << xml.out;
  EXPECT_EQ(xml.out.find("<line number=\"21\" hits=\"0\""), std::string::npos);

  Ours("html build -o report --cfg-functions 0");
  const std::string index = harness::ReadFileOrDie(ours_ + "/report/index.html");
  for (const char* key : {"L", "FN", "BR"})
    EXPECT_NE(index.find(std::to_string(Total(ours, std::string(key) + "H")) + " / " +
                         std::to_string(Total(ours, std::string(key) + "F"))),
              std::string::npos)
        << key;
  // The excluded function is in no list; without markers it is.
  const std::string functions =
      harness::ReadFileOrDie(ours_ + "/report/functions.html");
  EXPECT_EQ(functions.find("Unused("), std::string::npos);
  EXPECT_NE(functions.find("Classify("), std::string::npos);
  Ours("html build -o report-all --cfg-functions 0 --no-markers");
  EXPECT_NE(harness::ReadFileOrDie(ours_ + "/report-all/functions.html").find("Unused("),
            std::string::npos);

  // gcov's format has no markers: the excluded region still counts.
  Ours("gcov build");
  const std::string gcov = harness::ReadFileOrDie(ours_ + "/shapes.cc.gcov");
  EXPECT_TRUE(std::regex_search(gcov, std::regex(R"re(\n +#####: +21: +return -1;)re")))
      << gcov;
}

}  // namespace
