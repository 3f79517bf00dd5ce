// reports_e2e_test.cc — the reports people already read, against the tools
// that write them from gcov's data.
//
// Installs ballarus (//:install into $TEST_TMPDIR/prefix); then for every
// program of tests/programs/MANIFEST at -O0 and -O2 builds it with gcov
// (-fprofile-arcs -ftest-coverage) and with ballarus in naive mode (same
// compile: -g), runs
// both, and checks:
//
//   * gcov files: `gcov [-b | -b -c -u] UNIT.gcda...` (every unit, sorted,
//     in one command) in the gcov build against `ballarus-reconstruct gcov
//     [same options] --all-files PROFILE`: the same set of .gcov files,
//     byte for byte;
//   * gcov's JSON: `gcov -j -b UNIT.gcda` against `ballarus-reconstruct gcov
//     -j -b`, per unit, byte for byte once decompressed (gzip -dc);
//   * lcov: `lcov --capture` of the gcov build (geninfo runs gcov) against
//     `ballarus-reconstruct lcov --all-files`: after `lcov -a` of each,
//     every record's DA, FN, FNDA and BRDA entries and its LF/LH, FNF/FNH,
//     BRF/BRH equal; our tracefile is already merged (lcov -a changes none
//     of its figures); `lcov --summary` and `genhtml` accept it.
//
// The only differences tolerated are listed in kDifferences, each with its
// reason: what gcov names that a profile does not have (notes and data
// file names, directories), and where gcov's counts are off for what its
// graph cannot see (longjmp, vfork and fork re-entries), as e2e_test.cc
// documents them (kFakeCycleChoice, kGcovNegativeFakeArcs).  An expected difference that does not
// occur fails too, so the list cannot go stale.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace {

using harness::BuildOptions;
using harness::CommandResult;
using harness::Program;
using harness::Quote;

using harness::InstallPrefix;

std::string Reconstruct() {
  return InstallPrefix() + "/bin/ballarus-reconstruct";
}

// A tolerated difference: in `file` of `program` at `opt` (any when
// empty), for the given report, the text `gcov` stands where ballarus
// writes `ours`.  kAnyVariant applies to every gcov option set.
struct Difference {
  std::string program, opt, report, file, gcov, ours, why;
};

// "@UNIT" in gcov and "@PROFILE" in ours stand for the unit's name and
// the profile's path.
const std::vector<Difference>& Differences() {
  static const std::vector<Difference> d = {
      // The profile holds the notes and the data: ballarus names it where
      // gcov names the .gcno and the .gcda (single-unit programs only: gcov
      // prints these lines only when given one data file).
      {"", "", "gcov", "", "        -:    0:Graph:@UNIT.gcno",
       "        -:    0:Graph:@PROFILE", "notes file name"},
      {"", "", "gcov", "", "        -:    0:Data:@UNIT.gcda",
       "        -:    0:Data:@PROFILE", "data file name"},
      {"", "", "json", "", "\"data_file\": \"@UNIT.gcda\"",
       "\"data_file\": \"@PROFILE\"", "data file name"},
      {"", "", "json", "", "\"current_working_directory\": \"@GCOVDIR\"",
       "\"current_working_directory\": \"@OURDIR\"",
       "each build has its own directory"},
      // setjmp_longjmp -O0: main's setjmp returns 5 times (once, then once
      // per longjmp: 4).  GCC's tree keeps the receiver's fake EXIT edge and
      // drops its fake ENTRY edge, so gcov misses the 4 re-entries and
      // solves the fake arc out of the setjmp call to -4; ballarus keeps the
      // ENTRY edge (e2e_test.cc kFakeCycleChoice).  Hand-derived: called
      // 1 + 4 = 5 times, returned once (20%).  Calls that return more than
      // once (setjmp, fork) show gcov's percentages (500%, 300%, 200%):
      // the returns are counted from the block after the call.
      {"setjmp_longjmp", "-O0", "gcov-b", "setjmp_longjmp.c.gcov",
       "function main called 1 returned 100% blocks executed 92%",
       "function main called 5 returned 20% blocks executed 92%",
       "gcov misses main's 4 longjmp re-entries"},
      {"setjmp_longjmp", "-O0", "gcov-bcu", "setjmp_longjmp.c.gcov",
       "function main called 1 returned 100% blocks executed 92%",
       "function main called 5 returned 20% blocks executed 92%",
       "gcov misses main's 4 longjmp re-entries"},
      {"setjmp_longjmp", "-O0", "json", "setjmp_longjmp",
       "\"execution_count\": 1, \"demangled_name\": \"main\"",
       "\"execution_count\": 5, \"demangled_name\": \"main\"",
       "gcov misses main's 4 longjmp re-entries"},
      {"setjmp_longjmp", "-O0", "lcov", "setjmp_longjmp.c", "FNDA:1,main",
       "FNDA:5,main", "gcov misses main's 4 longjmp re-entries"},
      // fork_vfork -O0: vfork returns twice (the child, then the parent),
      // like setjmp; gcov keeps the vfork block's fake EXIT edge and misses
      // the second return, ballarus keeps its fake ENTRY edge (e2e_test.cc
      // kFakeCycleChoice): main started 1 + 1 = 2 times, returned once.
      {"fork_vfork", "-O0", "gcov-b", "fork_vfork.c.gcov",
       "function main called 1 returned 100% blocks executed 95%",
       "function main called 2 returned 50% blocks executed 95%",
       "gcov misses vfork's second return"},
      {"fork_vfork", "-O0", "gcov-bcu", "fork_vfork.c.gcov",
       "function main called 1 returned 100% blocks executed 95%",
       "function main called 2 returned 50% blocks executed 95%",
       "gcov misses vfork's second return"},
      {"fork_vfork", "-O0", "json", "fork_vfork",
       "\"execution_count\": 1, \"demangled_name\": \"main\"",
       "\"execution_count\": 2, \"demangled_name\": \"main\"",
       "gcov misses vfork's second return"},
      {"fork_vfork", "-O0", "lcov", "fork_vfork.c", "FNDA:1,main",
       "FNDA:2,main", "gcov misses vfork's second return"},
  };
  return d;
}

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos;
       at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

struct Ctx {
  std::string program, opt, gcov_dir, our_dir, profile;
};

// Applies the differences for (report, file) to gcov's text, checking
// each one applies; returns gcov's text as ballarus must write it.
std::string Expected(const Ctx& c, const std::string& report,
                     const std::string& file, const std::string& unit,
                     const std::string& gcov_text, bool* ok,
                     std::string* why) {
  std::string text = gcov_text;
  for (const Difference& d : Differences()) {
    if (d.report != report && !(d.report == "gcov" && report.rfind("gcov", 0) == 0))
      continue;
    if (!d.program.empty() && d.program != c.program) continue;
    if (!d.opt.empty() && d.opt != c.opt) continue;
    if (!d.file.empty() && d.file != file) continue;
    auto fill = [&](std::string s) {
      s = Replace(s, "@UNIT", unit);
      s = Replace(s, "@PROFILE", c.profile);
      s = Replace(s, "@GCOVDIR", c.gcov_dir);
      return Replace(s, "@OURDIR", c.our_dir);
    };
    const std::string from = fill(d.gcov), to = fill(d.ours);
    const bool general = d.program.empty();
    if (text.find(from) == std::string::npos) {
      if (!general) {
        *ok = false;
        *why += "expected difference did not occur: '" + from + "' (" +
                d.why + ")\n";
      }
      continue;
    }
    text = Replace(text, from, to);
  }
  return text;
}

std::vector<std::string> Ls(const std::string& dir, const std::string& suffix) {
  CommandResult r = harness::Run("ls -1", dir);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);)
    if (l.size() > suffix.size() &&
        l.compare(l.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

// The first differing line of two texts, for messages.
std::string FirstDifference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "(same lines; bytes differ)";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(n) + ":\n    gcov:     " +
             (ha ? la : "<end>") + "\n    ballarus: " + (hb ? lb : "<end>");
  }
}

// One lcov record's entries and figures, by file path relative to the
// build directory: "DA:3,1" etc. sorted, and "LF:7" etc.
using LcovRecords = std::map<std::string, std::vector<std::string>>;

LcovRecords ParseLcov(const std::string& text, const std::string& dir) {
  LcovRecords out;
  std::istringstream in(text);
  std::string sf;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("SF:", 0) == 0) {
      sf = l.substr(3);
      if (sf.rfind(dir + "/", 0) == 0) sf = "BUILD/" + sf.substr(dir.size() + 1);
      continue;
    }
    if (l == "end_of_record" || l.rfind("TN:", 0) == 0) continue;
    out[sf].push_back(l);
  }
  for (auto& [f, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// A line of `text` matching `re` whole.
bool HasLine(const std::string& text, const std::string& re) {
  const std::regex r(re);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, r)) return true;
  return false;
}

// gcov's forms tests/programs/line_flags.cc shows with each option set:
// counts, "-", "#####", "=====" (only exceptional blocks), "N*" (a line
// with an unexecuted block), function summaries, and with -b the branch
// and call lines (percentages; with -c counts; -u unconditional ones).
std::vector<const char*> RequiredForms(const std::string& variant) {
  std::vector<const char*> forms = {
      R"re( +5: +12:  return r;.*)re", R"re( +-: +13:\}.*)re",
      R"re( +#####: +32:.*)re",        R"re( +5\*: +10:.*)re",
      R"re( +=====: +26:.*)re",        R"re( +1\*: +30:.*)re"};
  if (variant == "b") {
    forms.push_back(R"re(function main called 1 returned 100% blocks executed \d+%)re");
    forms.push_back(R"re(branch +\d+ taken \d+%.*)re");
    forms.push_back(R"re(branch +\d+ never executed.*)re");
    forms.push_back(R"re(call +\d+ returned 100%.*)re");
    forms.push_back(R"re(call +\d+ never executed.*)re");
  }
  if (variant == "bcu") {
    forms.push_back(R"re(branch +\d+ taken 5\b.*)re");
    forms.push_back(R"re(call +\d+ returned 5\b.*)re");
    forms.push_back(R"re(unconditional +\d+ never executed)re");
    forms.push_back(R"re(unconditional +\d+ taken \d+)re");
  }
  return forms;
}

void CheckGcovFiles(const Ctx& c, const std::vector<std::string>& units,
                    const std::string& variant, const std::string& options) {
  const std::string where = c.program + " " + c.opt + " gcov " + options;
  const std::string gdir = c.gcov_dir + "/gcov-" + variant;
  const std::string odir = c.our_dir + "/gcov-" + variant;
  harness::MakeFreshDir(gdir);
  harness::MakeFreshDir(odir);
  std::string cmd = "gcov " + options;
  for (const std::string& u : units) cmd += " " + Quote(u + ".gcda");
  CommandResult g = harness::Run(cmd + " && mv *.gcov " + Quote(gdir), c.gcov_dir);
  ASSERT_EQ(g.status, 0) << where << ": " << g.out << g.err;
  // gcov writes into the working directory: so does ballarus.
  CommandResult o = harness::Run(Quote(Reconstruct()) + " gcov " + options +
                                     " --all-files " + Quote(c.profile),
                                 odir);
  ASSERT_EQ(o.status, 0) << where << ": " << o.err;
  // gcov's stdout summaries ("File 'x'", "Lines executed", "Creating")
  // are ballarus' too, but for the file names.
  EXPECT_EQ(o.out, g.out) << where << ": stdout";
  const std::vector<std::string> gfiles = Ls(gdir, ".gcov");
  const std::vector<std::string> ofiles = Ls(odir, ".gcov");
  EXPECT_EQ(ofiles, gfiles) << where << ": .gcov files";
  ASSERT_FALSE(gfiles.empty()) << where;
  for (const std::string& f : gfiles) {
    std::string gtext, otext;
    ASSERT_TRUE(harness::ReadFile(gdir + "/" + f, &gtext));
    if (!harness::ReadFile(odir + "/" + f, &otext)) continue;
    bool ok = true;
    std::string why;
    const std::string want = Expected(c, "gcov-" + variant, f,
                                      units.size() == 1 ? units[0] : "",
                                      gtext, &ok, &why);
    EXPECT_TRUE(ok) << where << ": " << f << ": " << why;
    EXPECT_TRUE(otext == want)
        << where << ": " << f << " differs from gcov's at "
        << FirstDifference(want, otext);
    // Equality covers gcov's line forms only where they occur: line_flags
    // (-O0) must show each of them, so that a corpus losing them fails.
    if (c.program == "line_flags" && c.opt == "-O0" && f == "line_flags.cc.gcov") {
      for (const char* form : RequiredForms(variant)) {
        EXPECT_TRUE(HasLine(otext, form))
            << where << ": " << f << " has no line matching " << form << ":\n"
            << otext;
      }
    }
  }
}

void CheckGcovJson(const Ctx& c, const std::vector<std::string>& units) {
  const std::string where = c.program + " " + c.opt + " gcov -j -b";
  const std::string gdir = c.gcov_dir + "/json";
  const std::string odir = c.our_dir + "/json";
  harness::MakeFreshDir(gdir);
  harness::MakeFreshDir(odir);
  for (const std::string& u : units) {
    CommandResult g = harness::Run("gcov -j -b " + Quote(u + ".gcda") +
                                       " && mv *.gcov.json.gz " + Quote(gdir),
                                   c.gcov_dir);
    ASSERT_EQ(g.status, 0) << where << ": " << g.err;
  }
  CommandResult o = harness::Run(Quote(Reconstruct()) + " gcov -j -b --all-files " +
                                     Quote(c.profile),
                                 odir);
  ASSERT_EQ(o.status, 0) << where << ": " << o.err;
  const std::vector<std::string> gfiles = Ls(gdir, ".gcov.json.gz");
  EXPECT_EQ(Ls(odir, ".gcov.json.gz"), gfiles) << where;
  ASSERT_EQ(gfiles.size(), units.size()) << where;
  for (const std::string& f : gfiles) {
    const std::string unit = f.substr(0, f.size() - strlen(".gcov.json.gz"));
    CommandResult g = harness::Run("gzip -dc " + Quote(gdir + "/" + f), "/");
    CommandResult ours = harness::Run("gzip -dc " + Quote(odir + "/" + f), "/");
    ASSERT_EQ(g.status, 0) << where << ": " << f;
    ASSERT_EQ(ours.status, 0) << where << ": " << f << " is not gzip";
    bool ok = true;
    std::string why;
    const std::string want = Expected(c, "json", unit, unit, g.out, &ok, &why);
    EXPECT_TRUE(ok) << where << ": " << f << ": " << why;
    EXPECT_TRUE(ours.out == want)
        << where << ": " << f << " differs from gcov's:\n    gcov:     "
        << want.substr(0, 400) << "\n    ballarus: " << ours.out.substr(0, 400);
  }
}

void CheckLcov(const Ctx& c) {
  const std::string where = c.program + " " + c.opt + " lcov";
  const std::string rc = " --rc lcov_branch_coverage=1";
  CommandResult g = harness::Run("lcov -q --capture -d . -o gcov.info" + rc,
                                 c.gcov_dir);
  ASSERT_EQ(g.status, 0) << where << ": lcov --capture: " << g.err;
  CommandResult o = harness::Run(Quote(Reconstruct()) +
                                     " lcov --all-files -o ours.info " +
                                     Quote(c.profile),
                                 c.our_dir);
  ASSERT_EQ(o.status, 0) << where << ": " << o.err;
  CommandResult s = harness::Run("lcov --summary ours.info" + rc, c.our_dir);
  EXPECT_EQ(s.status, 0) << where << ": lcov --summary: " << s.out << s.err;
  EXPECT_NE((s.out + s.err).find("lines......:"), std::string::npos) << s.out;
  for (const std::string& dir : {c.gcov_dir, c.our_dir}) {
    const std::string in = dir == c.gcov_dir ? "gcov.info" : "ours.info";
    CommandResult m = harness::Run("lcov -q -a " + in + " -o merged.info" + rc, dir);
    ASSERT_EQ(m.status, 0) << where << ": lcov -a " << in << ": " << m.err;
  }
  const LcovRecords want = ParseLcov(
      harness::ReadFileOrDie(c.gcov_dir + "/merged.info"), c.gcov_dir);
  const LcovRecords merged = ParseLcov(
      harness::ReadFileOrDie(c.our_dir + "/merged.info"), c.our_dir);
  const LcovRecords raw = ParseLcov(
      harness::ReadFileOrDie(c.our_dir + "/ours.info"), c.our_dir);
  EXPECT_EQ(merged.size(), want.size()) << where << ": files";
  for (const auto& [file, entries] : want) {
    auto it = merged.find(file);
    if (it == merged.end()) {
      ADD_FAILURE() << where << ": " << file << " missing";
      continue;
    }
    // Apply the documented differences to gcov's entries.
    std::vector<std::string> expect;
    bool ok = true;
    std::string why, joined;
    for (const std::string& e : entries) joined += e + "\n";
    const size_t slash = file.rfind('/');
    joined = Expected(c, "lcov", file.substr(slash + 1), "", joined, &ok, &why);
    std::istringstream in(joined);
    for (std::string l; std::getline(in, l);) expect.push_back(l);
    std::sort(expect.begin(), expect.end());
    EXPECT_TRUE(ok) << where << ": " << file << ": " << why;
    EXPECT_EQ(it->second, expect) << where << ": " << file;
    // Our own file: the same figures before lcov merged it.
    auto r = raw.find(file);
    ASSERT_NE(r, raw.end()) << where << ": " << file;
    EXPECT_EQ(r->second, it->second) << where << ": " << file
                                     << ": ours.info is not lcov's merge";
  }
  CommandResult h = harness::Run(
      "genhtml -q --branch-coverage -o html ours.info 2>&1", c.our_dir);
  EXPECT_EQ(h.status, 0) << where << ": genhtml: " << h.out;
  EXPECT_EQ(access((c.our_dir + "/html/index.html").c_str(), R_OK), 0) << where;
}

class Reports
    : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(Reports, EqualGcovsAndLcovs) {
  const std::string name = GetParam().first, opt = GetParam().second;
  static const std::vector<Program> programs = harness::LoadManifestOrDie();
  const Program* p = nullptr;
  for (const Program& q : programs)
    if (q.name == name) p = &q;
  ASSERT_NE(p, nullptr) << name;
  const std::string prefix = InstallPrefix();
  ASSERT_FALSE(prefix.empty());
  BuildOptions o;
  o.opt = opt;
  o.ballarus_prefix = prefix;
  const harness::GcovAndBallarus b = harness::BuildGcovAndBallarus(
      *p, o, harness::TempRoot() + "/reports-" + name + opt);
  ASSERT_TRUE(b.gcov.ok) << b.gcov.log;
  ASSERT_TRUE(b.ours.ok) << b.ours.log;
  ASSERT_EQ(b.gcov_run.out, b.our_run.out);
  Ctx c;
  c.program = name;
  c.opt = opt;
  c.gcov_dir = b.gcov.dir;
  c.our_dir = b.ours.dir;
  c.profile = c.our_dir + "/ballarus.profile";
  ASSERT_EQ(access(c.profile.c_str(), R_OK), 0) << c.profile;
  // gcov reads several units in the order given; ballarus reads its TUs
  // sorted by source name: the corpus' units sort alike by stem.
  std::vector<std::string> units = b.gcov.units;
  std::sort(units.begin(), units.end());
  CheckGcovFiles(c, units, "default", "");
  CheckGcovFiles(c, units, "b", "-b");
  CheckGcovFiles(c, units, "bcu", "-b -c -u");
  CheckGcovJson(c, units);
  CheckLcov(c);
}

std::vector<std::pair<std::string, std::string>> AllCases() {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const Program& p : harness::LoadManifestOrDie())
    for (const char* opt : {"-O0", "-O2"})
      cases.emplace_back(p.name, opt);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, Reports, ::testing::ValuesIn(AllCases()),
    [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& i) {
      return i.param.first + "_" + i.param.second.substr(1);
    });

}  // namespace
