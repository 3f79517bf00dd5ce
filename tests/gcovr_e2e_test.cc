// gcovr_e2e_test.cc — gcovr's reports of `ballarus-reconstruct gcovr-json`
// against gcovr's reports of gcov's data, for the same run.
//
// Installs ballarus (//:install into $TEST_TMPDIR/prefix); then for every
// program of tests/programs/MANIFEST at -O0 and -O2 builds it with gcov
// and with ballarus (naive mode, same compile), runs both, and runs gcovr
// (5.x) twice: `gcovr -r .` in the gcov build (gcovr runs gcov itself) and
// `gcovr -r . --add-tracefile ours.json` in the ballarus build, each
// writing its JSON, JSON summary, Cobertura XML, HTML and text reports.
// Checks:
//
//   * the JSON summaries are equal: per file and in total, lines,
//     functions and branches, covered and valid;
//   * gcovr's JSON reports are equal line for line: the lines counted,
//     each line's count and branch counts, each function's name, line and
//     call count;
//   * the Cobertura XML's totals are equal, the HTML report is written.
//
// Where gcov's counts differ from ballarus' (setjmp, fork: see
// reports_e2e_test.cc), the difference is listed in Differences() with its
// reason; one that does not occur fails too.  gcovr 5 counts the lines of
// gcov's function-group sections (a template's instantiations, listed
// under "------------------" after the merged line) a second time on top
// of the merged line; the expected count subtracts them, read from the
// .gcov files gcov writes for each unit (gcov -b -c -m -p, as gcovr runs
// it), so ballarus' counts are gcov's own.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"

namespace {

using harness::BuildOptions;
using harness::CommandResult;
using harness::Program;
using harness::Quote;
using Json = nlohmann::json;

// A function whose call count gcov gets wrong (reports_e2e_test.cc has the
// derivations): gcovr shows gcov's, ballarus its own.
struct Difference {
  std::string program, opt, function;
  int64_t gcov, ours;
  std::string why;
};

const std::vector<Difference>& Differences() {
  static const std::vector<Difference> d = {
      {"setjmp_longjmp", "-O0", "main", 1, 5,
       "gcov misses main's 4 longjmp re-entries"},
      {"fork_vfork", "-O0", "main", 1, 2,
       "gcov misses vfork's second return into main"},
  };
  return d;
}

std::string Basename(const std::string& path, char slash) {
  const size_t at = path.rfind(slash);
  return at == std::string::npos ? path : path.substr(at + 1);
}

// gcov's counts of the lines of its function-group sections, summed over
// the units: (file base name, line) -> count.  `dir` is the gcov build.
std::map<std::pair<std::string, uint32_t>, int64_t> GroupSectionCounts(
    const std::string& dir, const std::vector<std::string>& units) {
  static const std::regex source_line(R"( *([0-9]+|#####|=====|-)\*?: *([0-9]+):.*)");
  static const std::regex summary("function .* called .*");
  std::map<std::pair<std::string, uint32_t>, int64_t> out;
  for (const std::string& u : units) {
    const std::string sub = "gcov-text-" + u;
    CommandResult g = harness::Run("rm -rf " + Quote(sub) + " && mkdir " +
                                       Quote(sub) + " && gcov -b -c -m -p " +
                                       Quote(u + ".gcda") + " >/dev/null && mv *.gcov " +
                                       Quote(sub),
                                   dir);
    EXPECT_EQ(g.status, 0) << u << ": gcov: " << g.err;
    CommandResult ls = harness::Run("ls -1", dir + "/" + sub);
    std::istringstream names(ls.out);
    for (std::string name; std::getline(names, name);) {
      // gcov -p names a.cc's file "a.cc.gcov", /x/a.h's "#x#a.h.gcov".
      const std::string file = Basename(name.substr(0, name.size() - 5), '#');
      std::istringstream text(harness::ReadFileOrDie(dir + "/" + sub + "/" + name));
      bool in_section = false, after_marker = false;
      for (std::string l; std::getline(text, l);) {
        std::smatch m;
        const bool source = std::regex_match(l, m, source_line);
        if (l == "------------------") {
          after_marker = true;
          continue;
        }
        // After a marker, a function's name opens a section; anything else
        // (a source line, a function summary) follows the last one.
        if (after_marker)
          in_section = !l.empty() && !isspace(static_cast<unsigned char>(l[0])) &&
                       l.back() == ':' && !std::regex_match(l, summary);
        after_marker = false;
        if (in_section && source && isdigit(static_cast<unsigned char>(m[1].str()[0])))
          out[{file, static_cast<uint32_t>(std::stoul(m[2].str()))}] +=
              std::stoll(m[1].str());
      }
    }
  }
  return out;
}

struct Ctx {
  std::string program, opt, gcov_dir, our_dir;
  std::vector<std::string> units;
};

// The lines gcovr counts (neither noncode nor excluded) of one file of its
// JSON report: line -> {count, branch counts...}.
std::map<uint32_t, std::vector<int64_t>> CountedLines(const Json& file) {
  std::map<uint32_t, std::vector<int64_t>> out;
  for (const Json& l : file.at("lines")) {
    if (l.at("gcovr/noncode").get<bool>() || l.at("gcovr/excluded").get<bool>())
      continue;
    std::vector<int64_t>& v = out[l.at("line_number").get<uint32_t>()];
    v.push_back(l.at("count").get<int64_t>());
    for (const Json& b : l.at("branches")) v.push_back(b.at("count").get<int64_t>());
  }
  return out;
}

std::map<std::string, std::pair<uint32_t, int64_t>> Functions(const Json& file) {
  std::map<std::string, std::pair<uint32_t, int64_t>> out;
  for (const Json& f : file.at("functions"))
    out[f.at("name").get<std::string>()] = {f.at("lineno").get<uint32_t>(),
                                            f.at("execution_count").get<int64_t>()};
  return out;
}

std::map<std::string, Json> FilesByName(const Json& report) {
  std::map<std::string, Json> out;
  for (const Json& f : report.at("files")) out[f.at("file").get<std::string>()] = f;
  return out;
}

void CheckFunctions(const Ctx& c, const std::string& file, const Json& want,
                    const Json& got) {
  auto expected = Functions(want);
  for (const Difference& d : Differences()) {
    if (d.program != c.program || (!d.opt.empty() && d.opt != c.opt)) continue;
    auto it = expected.find(d.function);
    if (it == expected.end() || it->second.second != d.gcov) {
      ADD_FAILURE() << c.program << " " << c.opt << ": expected difference "
                    << "did not occur: " << d.function << " (" << d.why << ")";
      continue;
    }
    it->second.second = d.ours;
  }
  const auto ours = Functions(got);
  for (const auto& [name, f] : expected) {
    auto it = ours.find(name);
    if (it == ours.end()) {
      ADD_FAILURE() << c.program << " " << c.opt << ": " << file << ": "
                    << name << " missing";
      continue;
    }
    EXPECT_EQ(it->second, f) << c.program << " " << c.opt << ": " << file
                             << ": " << name << " (line, calls)";
  }
  EXPECT_EQ(ours.size(), expected.size()) << c.program << " " << c.opt << ": "
                                          << file << ": functions";
}

void CheckLines(const Ctx& c, const std::string& file, const Json& want,
                const Json& got,
                const std::map<std::pair<std::string, uint32_t>, int64_t>& twice) {
  auto expected = CountedLines(want);
  for (auto& [line, v] : expected) {
    auto t = twice.find({Basename(file, '/'), line});
    if (t != twice.end()) v[0] -= t->second;  // gcovr's second count
  }
  const auto ours = CountedLines(got);
  for (const auto& [line, v] : expected) {
    auto it = ours.find(line);
    if (it == ours.end()) {
      ADD_FAILURE() << c.program << " " << c.opt << ": " << file << ":" << line
                    << " missing";
      continue;
    }
    EXPECT_EQ(it->second, v) << c.program << " " << c.opt << ": " << file << ":"
                             << line << " (count, branch counts)";
  }
  for (const auto& [line, v] : ours)
    EXPECT_TRUE(expected.count(line))
        << c.program << " " << c.opt << ": " << file << ":" << line
        << " counted by ballarus only";
}

// The coverage element's attributes of a Cobertura report, but its time.
std::string CoberturaTotals(const std::string& xml) {
  static const std::regex coverage("<coverage ([^>]*)>");
  std::smatch m;
  if (!std::regex_search(xml, m, coverage)) return "no <coverage> element";
  return std::regex_replace(m[1].str(), std::regex(" timestamp=\"[0-9]+\""), "");
}

const char* kReports =
    " --json gcovr.json --json-summary summary.json --xml cobertura.xml"
    " --html-details html/index.html --txt txt";

void CheckGcovr(const Ctx& c, const std::string& reconstruct) {
  const std::string where = c.program + " " + c.opt;
  CommandResult g = harness::Run(std::string("mkdir -p html && gcovr -r .") + kReports,
                                 c.gcov_dir);
  ASSERT_EQ(g.status, 0) << where << ": gcovr: " << g.out << g.err;
  CommandResult o = harness::Run(
      Quote(reconstruct) + " gcovr-json -o ours.json ballarus.profile", c.our_dir);
  ASSERT_EQ(o.status, 0) << where << ": " << o.err;
  EXPECT_EQ(o.out + o.err, "") << where;
  CommandResult r = harness::Run(
      std::string("mkdir -p html && gcovr -r . --add-tracefile ours.json") + kReports,
      c.our_dir);
  ASSERT_EQ(r.status, 0) << where << ": gcovr --add-tracefile: " << r.out << r.err;
  EXPECT_EQ(r.err, "") << where;

  const Json want_summary = Json::parse(harness::ReadFileOrDie(c.gcov_dir + "/summary.json"));
  const Json got_summary = Json::parse(harness::ReadFileOrDie(c.our_dir + "/summary.json"));
  EXPECT_EQ(got_summary.dump(1), want_summary.dump(1)) << where << ": summaries";
  EXPECT_GT(want_summary.at("line_total").get<int64_t>(), 0) << where;
  EXPECT_EQ(CoberturaTotals(harness::ReadFileOrDie(c.our_dir + "/cobertura.xml")),
            CoberturaTotals(harness::ReadFileOrDie(c.gcov_dir + "/cobertura.xml")))
      << where;
  EXPECT_EQ(harness::ReadFileOrDie(c.our_dir + "/txt"),
            harness::ReadFileOrDie(c.gcov_dir + "/txt")) << where;
  EXPECT_EQ(access((c.our_dir + "/html/index.html").c_str(), R_OK), 0) << where;

  const auto want = FilesByName(Json::parse(harness::ReadFileOrDie(c.gcov_dir + "/gcovr.json")));
  const auto got = FilesByName(Json::parse(harness::ReadFileOrDie(c.our_dir + "/gcovr.json")));
  const auto twice = GroupSectionCounts(c.gcov_dir, c.units);
  for (const auto& [name, file] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      ADD_FAILURE() << where << ": " << name << " missing";
      continue;
    }
    CheckLines(c, name, file, it->second, twice);
    CheckFunctions(c, name, file, it->second);
  }
  EXPECT_EQ(got.size(), want.size()) << where << ": files";
}

class Gcovr
    : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(Gcovr, ReportsEqualGcovrsOfGcovData) {
  const std::string name = GetParam().first, opt = GetParam().second;
  static const std::vector<Program> programs = harness::LoadManifestOrDie();
  const Program* p = nullptr;
  for (const Program& q : programs)
    if (q.name == name) p = &q;
  ASSERT_NE(p, nullptr) << name;
  std::string error;
  const std::string prefix = harness::InstallPrefix(&error);
  ASSERT_FALSE(prefix.empty()) << error;
  BuildOptions o;
  o.opt = opt;
  o.ballarus_prefix = prefix;
  const harness::GcovAndBallarus b = harness::BuildGcovAndBallarus(
      *p, o, harness::TempRoot() + "/gcovr-" + name + opt);
  ASSERT_TRUE(b.gcov.ok) << b.gcov.log;
  ASSERT_TRUE(b.ours.ok) << b.ours.log;
  ASSERT_EQ(b.gcov_run.out, b.our_run.out);
  Ctx c;
  c.program = name;
  c.opt = opt;
  c.gcov_dir = b.gcov.dir;
  c.our_dir = b.ours.dir;
  c.units = b.gcov.units;
  CheckGcovr(c, prefix + "/bin/ballarus-reconstruct");
}

std::vector<std::pair<std::string, std::string>> AllCases() {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const Program& p : harness::LoadManifestOrDie())
    for (const char* opt : {"-O0", "-O2"}) cases.emplace_back(p.name, opt);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, Gcovr, ::testing::ValuesIn(AllCases()),
    [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& i) {
      return i.param.first + "_" + i.param.second.substr(1);
    });

}  // namespace
