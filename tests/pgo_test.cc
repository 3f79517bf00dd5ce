// pgo_test.cc — profile use: a ballarus profile converted with
// `ballarus-reconstruct gcda` must make `gcc -fprofile-use` produce exactly
// the object gcov's own profile makes it produce.
//
// For every program of tests/programs/MANIFEST at -O2, in ONE build
// directory (so object names, hence .gcda names and static function idents,
// are the same for both):
//   1. reference: build with plain gcc/g++ -fprofile-arcs (no
//      -ftest-coverage: the PGO recipe), run, keep the .gcda files;
//   2. ballarus: build with the installed ballarus-gcc/g++ (mode=edge), run
//      with BALLARUS_PROFILE=.../%p.profile (one profile per process: gcov's
//      summary adds each run's maximum), `ballarus-reconstruct gcda
//      --in-place PROFILE...`;
//   3. compile every unit with -fprofile-use against ballarus' .gcda, then
//      against gcov's, and require byte-identical objects (cmp) and
//      identical compiler diagnostics.  The .gcda files themselves must
//      agree in everything but the stamp (version, object checksum,
//      summary, every function's ident, checksums and arc counters).
// Plus: -fprofile-dir / -fprofile-prefix-path layouts (--in-place and -o
// DIR, which -fprofile-use=DIR reads), merged multi-run profiles (the
// summary note), mode=path and mode=naive profiles, a source changed after
// profiling (GCC's own -Wcoverage-mismatch diagnostics, as with gcov's
// profile), C++ thunks, and two builds of one TU given together (exit 2,
// one line).
//
// One difference is expected, in the .gcda only (the objects must still be
// identical): libgcov adds each run's largest counter of the *module*
// (executable or shared library) to sum_max, and a ballarus profile does
// not record which module a TU was linked into, so the .gcda of a shared
// library's TU gets the program-wide maximum (shared_lib: 12, gcov's
// libshape units 4).  kModuleSumMax lists it; nothing else is tolerated
// (the setjmp case of e2e_test does not arise here: gcov's counters are
// real edges, which ballarus always counts exactly).  gcov_api's several
// dumps in one process give the same difference (kModuleSumMax).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/gcda.h"
#include "gtest/gtest.h"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace {

using harness::BuildOptions;
using harness::CommandResult;
using harness::Kind;
using harness::Program;
using harness::Quote;

using harness::InstallPrefix;

std::string Reconstruct() {
  return InstallPrefix() + "/bin/ballarus-reconstruct";
}

std::string Stem(const std::string& path) {
  std::string b = harness::Basename(path);
  size_t dot = b.rfind('.');
  return dot == std::string::npos ? b : b.substr(0, dot);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// One translation unit as the harness compiles it.
struct UnitSrc {
  std::string source;  // basename, in the build directory
  std::string stem;
  bool pic = false;    // part of the shared library
};

std::vector<UnitSrc> Units(const Program& p) {
  std::vector<UnitSrc> u;
  for (const std::string& s : p.shared_sources)
    u.push_back({harness::Basename(s), Stem(s), true});
  for (const std::string& s : p.sources)
    u.push_back({harness::Basename(s), Stem(s), false});
  return u;
}

// The harness' compile command (tests/programs/README.md) with `flags`
// instead of the build kind's.
std::string CompileCommand(const Program& p, const UnitSrc& u,
                           const std::string& opt, const std::string& flags) {
  std::string cmd = std::string(p.cxx ? "g++" : "gcc") + " " + opt + " -g";
  for (const std::string& f : p.cflags) cmd += " " + Quote(f);
  cmd += " " + flags;
  if (u.pic) cmd += " -fPIC";
  return cmd + " -c " + Quote(u.source) + " -o " + Quote(u.stem + ".o");
}

std::string Slurp(const std::string& path) {
  std::string s;
  harness::ReadFile(path, &s);
  return s;
}

// (program, unit stem) whose .gcda sum_max may exceed gcov's: program-wide,
// not per module (shared_lib); or a process that dumps several times
// through gcov's API (gcov_api: __gcov_dump, __gcov_reset, exit), where
// libgcov adds only its first dump's largest counter (merge_summary, the
// run is already counted) and a ballarus profile, which records no
// per-dump maximum, gives the largest merged count.
const std::set<std::pair<std::string, std::string>> kModuleSumMax = {
    {"shared_lib", "shape"}, {"gcov_api", "gcov_api"}};

// Compares two .gcda files in everything but the stamp (and, with
// `module_sum_max`, sum_max may exceed gcov's); "" if equal.
std::string GcdaDiff(const std::string& ours, const std::string& theirs,
                     bool module_sum_max = false) {
  std::string a = Slurp(ours), b = Slurp(theirs);
  ballarus::GcdaFile x, y;
  std::string err;
  if (!ballarus::DecodeGcda(reinterpret_cast<const uint8_t*>(a.data()),
                            a.size(), &x, &err))
    return ours + ": " + err;
  if (!ballarus::DecodeGcda(reinterpret_cast<const uint8_t*>(b.data()),
                            b.size(), &y, &err))
    return theirs + ": " + err;
  std::string d;
  auto check = [&](bool same, const std::string& what) {
    if (!same) d += " " + what;
  };
  check(x.version == y.version, "version");
  check(x.checksum == y.checksum, "object checksum");
  check(x.runs == y.runs, "runs " + std::to_string(x.runs) + " vs " +
                              std::to_string(y.runs));
  check(x.sum_max == y.sum_max || (module_sum_max && x.sum_max > y.sum_max),
        "sum_max " + std::to_string(x.sum_max) +
                                    " vs " + std::to_string(y.sum_max));
  check(x.functions.size() == y.functions.size(),
        "function count " + std::to_string(x.functions.size()) + " vs " +
            std::to_string(y.functions.size()));
  for (size_t i = 0; i < x.functions.size() && i < y.functions.size(); ++i) {
    const ballarus::GcdaFunction &f = x.functions[i], &g = y.functions[i];
    check(f.ident == g.ident && f.lineno_checksum == g.lineno_checksum &&
              f.cfg_checksum == g.cfg_checksum && f.present == g.present,
          "function #" + std::to_string(i) + " header (ident " +
              std::to_string(f.ident) + " vs " + std::to_string(g.ident) +
              ")");
    check(f.arcs == g.arcs, "function #" + std::to_string(i) +
                                " (ident " + std::to_string(f.ident) +
                                ") arc counters");
  }
  return d.empty() ? "" : ours + " vs " + theirs + ":" + d;
}

struct Outcome {
  std::string failure;  // set on any problem, with context
  size_t objects = 0, identical = 0;
};

// Steps 1-3 of the file comment for one program.  `ballarus_flags` are
// extra ballarus-gcc flags (mode, layout options), `gcov_flags` the
// reference's extra flags (same layout options), `use_flags` what the
// -fprofile-use compile adds.  With `gcda_dir`, the .gcda files are written
// with `gcda -o gcda_dir` and read with -fprofile-use=gcda_dir.
Outcome Compare(const Program& p, const std::string& dir,
                const std::string& opt,
                const std::vector<std::string>& ballarus_flags,
                const std::vector<std::string>& gcov_flags,
                const std::string& gcda_dir = "",
                const std::vector<std::string>& gcda_paths = {}) {
  Outcome out;
  const std::string saved = dir + ".gcov";
  harness::MakeFreshDir(saved);
  const std::vector<UnitSrc> units = Units(p);
  // Where each unit's .gcda lies: beside its object unless told.
  std::vector<std::string> gcda = gcda_paths;
  if (gcda.empty())
    for (const UnitSrc& u : units) gcda.push_back(dir + "/" + u.stem + ".gcda");

  // 1. gcov.
  BuildOptions g;
  g.kind = Kind::kPlain;
  g.opt = opt;
  g.extra_flags = {"-fprofile-arcs"};
  for (const std::string& f : gcov_flags) g.extra_flags.push_back(f);
  harness::Build gb = harness::BuildProgram(p, g, dir);
  if (!gb.ok) {
    out.failure = "gcov build failed:\n" + gb.log;
    return out;
  }
  for (const std::string& f : gcda) std::remove(f.c_str());
  CommandResult gr = harness::Run(Quote(gb.exe), dir);
  for (size_t i = 0; i < units.size(); ++i) {
    if (!Exists(gcda[i])) {
      out.failure = "gcov wrote no " + gcda[i];
      return out;
    }
    harness::WriteFileOrDie(saved + "/" + units[i].stem + ".gcda",
                            Slurp(gcda[i]));
    std::remove(gcda[i].c_str());
  }

  // 2. ballarus.
  BuildOptions b;
  b.kind = Kind::kBallarus;
  b.opt = opt;
  b.ballarus_prefix = InstallPrefix();
  b.ballarus_mode = "edge";
  b.extra_flags = ballarus_flags;
  harness::Build bb = harness::BuildProgram(p, b, dir);
  if (!bb.ok) {
    out.failure = "ballarus build failed:\n" + bb.log;
    return out;
  }
  harness::MakeFreshDir(dir + "/prof");
  CommandResult br = harness::Run(
      Quote(bb.exe), dir, {"BALLARUS_PROFILE=" + dir + "/prof/%p.profile"});
  if (br.status != gr.status || br.out != gr.out) {
    out.failure = "the ballarus build behaves differently (status " +
                  std::to_string(br.status) + " vs " +
                  std::to_string(gr.status) + ")";
    return out;
  }
  std::string where = gcda_dir.empty() ? "--in-place" : "-o " + Quote(gcda_dir);
  CommandResult cr = harness::Run(
      Quote(Reconstruct()) + " gcda " + where + " prof/*.profile", dir);
  if (cr.status != 0 || !cr.err.empty()) {
    out.failure = "ballarus-reconstruct gcda exited " +
                  std::to_string(cr.status) + ": " + cr.err;
    return out;
  }
  for (size_t i = 0; i < units.size(); ++i) {
    const std::string ours = gcda_dir.empty() ? gcda[i] : [&] {
      // -o DIR: where -fprofile-use=DIR looks, i.e. the mangled path.
      return gcda_dir + "/" + ballarus::MangleProfilePath(dir + "/" +
                                                          units[i].stem) +
             ".gcda";
    }();
    std::string d = GcdaDiff(ours, saved + "/" + units[i].stem + ".gcda",
                             kModuleSumMax.count({p.name, units[i].stem}) > 0);
    if (!d.empty()) out.failure += d + "\n";
  }
  if (!out.failure.empty()) return out;

  // 3. -fprofile-use against each profile, same directory, same names.
  std::string use = "-fprofile-use";
  if (!gcda_dir.empty()) use = "-fprofile-use=" + Quote(gcda_dir);
  for (const std::string& f : gcov_flags) use += " " + Quote(f);
  std::map<std::string, std::string> diag_b, diag_g;
  for (const UnitSrc& u : units) {
    CommandResult r = harness::Run(CompileCommand(p, u, opt, use), dir);
    if (r.status != 0) {
      out.failure += u.source + ": -fprofile-use (ballarus) failed: " + r.err;
      return out;
    }
    diag_b[u.stem] = r.err;
    harness::WriteFileOrDie(dir + "/" + u.stem + ".ballarus.o",
                            Slurp(dir + "/" + u.stem + ".o"));
  }
  for (size_t i = 0; i < units.size(); ++i) {
    const std::string ours = gcda_dir.empty()
                                 ? gcda[i]
                                 : gcda_dir + "/" +
                                       ballarus::MangleProfilePath(
                                           dir + "/" + units[i].stem) +
                                       ".gcda";
    harness::WriteFileOrDie(ours, Slurp(saved + "/" + units[i].stem + ".gcda"));
  }
  for (const UnitSrc& u : units) {
    CommandResult r = harness::Run(CompileCommand(p, u, opt, use), dir);
    if (r.status != 0) {
      out.failure += u.source + ": -fprofile-use (gcov) failed: " + r.err;
      return out;
    }
    diag_g[u.stem] = r.err;
    out.objects++;
    if (Slurp(dir + "/" + u.stem + ".o") ==
        Slurp(dir + "/" + u.stem + ".ballarus.o"))
      out.identical++;
    else
      out.failure += u.stem + ".o differs (cmp " + dir + "/" + u.stem +
                     ".o " + u.stem + ".ballarus.o)\n";
    if (diag_g[u.stem] != diag_b[u.stem])
      out.failure += u.source + ": diagnostics differ:\n  with gcov's "
                     "profile: " + diag_g[u.stem] + "\n  with ballarus': " +
                     diag_b[u.stem] + "\n";
  }
  return out;
}

const Program* FindProgram(const std::string& name) {
  static const std::vector<Program> all = harness::LoadManifestOrDie();
  for (const Program& p : all)
    if (p.name == name) return &p;
  return nullptr;
}

// ---------------------------------------------------------------------------

class Corpus : public ::testing::TestWithParam<std::string> {};

TEST_P(Corpus, ObjectsIdenticalToGcovPgo) {
  ASSERT_FALSE(InstallPrefix().empty());
  const Program* p = FindProgram(GetParam());
  ASSERT_NE(p, nullptr);
  const std::string dir = harness::TempRoot() + "/pgo/" + p->name;
  Outcome o = Compare(*p, dir, "-O2", {}, {});
  EXPECT_EQ(o.failure, "") << p->name << " -O2";
  EXPECT_EQ(o.identical, o.objects) << p->name;
  EXPECT_EQ(o.objects, Units(*p).size()) << p->name;
  std::printf("[pgo] %s -O2: %zu/%zu objects identical\n", p->name.c_str(),
              o.identical, o.objects);
}

std::vector<std::string> ProgramNames() {
  std::vector<std::string> names;
  for (const Program& p : harness::LoadManifestOrDie()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Pgo, Corpus, ::testing::ValuesIn(ProgramNames()),
                         [](const auto& info) { return info.param; });

// Other modes carry the same information: path profiles (edge counts from
// paths) and naive profiles give the same objects.
TEST(Modes, PathAndNaiveProfilesToo) {
  ASSERT_FALSE(InstallPrefix().empty());
  for (const std::string mode : {"path", "naive"}) {
    for (const std::string name : {"exceptions", "setjmp_longjmp", "templates"}) {
      const Program* p = FindProgram(name);
      ASSERT_NE(p, nullptr);
      const std::string dir = harness::TempRoot() + "/pgo-" + mode + "/" + name;
      Outcome o = Compare(*p, dir, "-O2",
                          {"-fplugin-arg-ballarus-mode=" + mode}, {});
      EXPECT_EQ(o.failure, "") << name << " mode=" << mode;
      EXPECT_EQ(o.identical, o.objects) << name << " mode=" << mode;
      EXPECT_GT(o.objects, 0u);
    }
  }
}

// -fprofile-dir (relative: resolved against the compile directory) with
// -fprofile-prefix-path, written --in-place; and -o DIR read by
// -fprofile-use=DIR.
TEST(Layouts, ProfileDirAndPrefixPath) {
  ASSERT_FALSE(InstallPrefix().empty());
  const Program* p = FindProgram("templates");
  ASSERT_NE(p, nullptr);
  const std::string dir = harness::TempRoot() + "/pgo-layout/templates";
  // gcc -fprofile-dir=pd -fprofile-prefix-path=ROOT: ROOT/templates/a
  // becomes pd/templates#a.gcda, relative to the directory of the run
  // (gcov) or of the compile (-fprofile-use) — the same directory here.
  const std::string root = harness::TempRoot() + "/pgo-layout";
  const std::vector<std::string> flags = {"-fprofile-dir=pd",
                                          "-fprofile-prefix-path=" + root};
  std::vector<std::string> paths;
  for (const UnitSrc& u : Units(*p))
    paths.push_back(dir + "/pd/templates#" + u.stem + ".gcda");
  Outcome o = Compare(*p, dir, "-O2", flags, flags, "", paths);
  EXPECT_EQ(o.failure, "");
  EXPECT_EQ(o.identical, 3u);

  // -o DIR: the .gcda where -fprofile-use=DIR looks for it.
  const std::string dir2 = harness::TempRoot() + "/pgo-layout2/templates";
  const std::string out = harness::TempRoot() + "/pgo-layout2/gcda";
  std::vector<std::string> paths2;
  for (const UnitSrc& u : Units(*p))
    paths2.push_back(dir2 + "/" + u.stem + ".gcda");
  Outcome o2 = Compare(*p, dir2, "-O2", {}, {}, out, paths2);
  EXPECT_EQ(o2.failure, "");
  EXPECT_EQ(o2.identical, 3u);
}

// Merged runs: one profile for two runs gives runs = 2 and, since both
// runs of this program are alike, gcov's sum_max; the note says why it
// could differ in general.
TEST(Summary, MergedRunsAreNoted) {
  ASSERT_FALSE(InstallPrefix().empty());
  const Program* p = FindProgram("loops");
  ASSERT_NE(p, nullptr);
  const std::string dir = harness::TempRoot() + "/pgo-merged/loops";
  BuildOptions b;
  b.kind = Kind::kBallarus;
  b.opt = "-O2";
  b.ballarus_prefix = InstallPrefix();
  b.ballarus_mode = "edge";
  harness::Build bb = harness::BuildProgram(*p, b, dir);
  ASSERT_TRUE(bb.ok) << bb.log;
  for (int i = 0; i < 2; ++i)
    harness::Run(Quote(bb.exe), dir, {"BALLARUS_PROFILE=" + dir + "/merged"});
  for (int i = 0; i < 2; ++i)
    harness::Run(Quote(bb.exe), dir,
                 {"BALLARUS_PROFILE=" + dir + "/run" + std::to_string(i)});
  CommandResult m = harness::Run(
      Quote(Reconstruct()) + " gcda -o merged.d merged", dir);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.err.find("2 runs merged: sum_max is the largest merged count"),
            std::string::npos)
      << m.err;
  CommandResult s = harness::Run(
      Quote(Reconstruct()) + " gcda -o split.d run0 run1", dir);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.err, "");
  const std::string name = ballarus::MangleProfilePath(dir + "/loops") + ".gcda";
  ballarus::GcdaFile a, c;
  std::string ab = Slurp(dir + "/merged.d/" + name),
              cb = Slurp(dir + "/split.d/" + name), err;
  ASSERT_TRUE(ballarus::DecodeGcda(
      reinterpret_cast<const uint8_t*>(ab.data()), ab.size(), &a, &err))
      << err;
  ASSERT_TRUE(ballarus::DecodeGcda(
      reinterpret_cast<const uint8_t*>(cb.data()), cb.size(), &c, &err))
      << err;
  EXPECT_EQ(a.runs, 2u);
  EXPECT_EQ(c.runs, 2u);
  EXPECT_EQ(a.sum_max, c.sum_max);  // alike runs
  EXPECT_GT(c.sum_max, 0u);
  ASSERT_EQ(a.functions.size(), c.functions.size());
  EXPECT_EQ(a.functions[0].arcs, c.functions[0].arcs);
}

// A source changed after profiling: -fprofile-use reports it exactly as it
// does for gcov's profile of the old source (here: main's CFG changed, so
// -Wcoverage-mismatch, an error by default).
TEST(Mismatch, ChangedSourceGetsGccsDiagnostics) {
  ASSERT_FALSE(InstallPrefix().empty());
  const Program* p = FindProgram("loops");
  ASSERT_NE(p, nullptr);
  const std::string dir = harness::TempRoot() + "/pgo-mismatch/loops";
  Outcome o = Compare(*p, dir, "-O2", {}, {});
  ASSERT_EQ(o.failure, "");
  // Both profiles of the old source are on disk: ours as loops.gcda after
  // Compare() swapped gcov's in; keep both and edit the source.
  const std::string gcov_gcda = Slurp(dir + "/loops.gcda");
  std::string src = Slurp(dir + "/loops.c");
  size_t at = src.find("int main");
  ASSERT_NE(at, std::string::npos);
  at = src.find('{', at);
  ASSERT_NE(at, std::string::npos);
  src.insert(at + 1, "\n  if (getenv(\"NO_SUCH_VAR\")) return 7;\n");
  src = "#include <stdlib.h>\n" + src;
  harness::WriteFileOrDie(dir + "/loops.c", src);
  const UnitSrc u{"loops.c", "loops", false};
  CommandResult with_gcov =
      harness::Run(CompileCommand(*p, u, "-O2", "-fprofile-use"), dir);
  harness::Run(Quote(Reconstruct()) + " gcda --in-place prof/*.profile", dir);
  CommandResult with_ours =
      harness::Run(CompileCommand(*p, u, "-O2", "-fprofile-use"), dir);
  EXPECT_NE(with_gcov.status, 0);
  EXPECT_NE(with_gcov.err.find("coverage-mismatch"), std::string::npos)
      << with_gcov.err;
  EXPECT_EQ(with_ours.status, with_gcov.status);
  EXPECT_EQ(with_ours.err, with_gcov.err);
  EXPECT_NE(Slurp(dir + "/loops.gcda"), gcov_gcda);  // ours was written
}

// C++ thunks (multiple inheritance): -fprofile-arcs expands and counts
// them, -fprofile-use reads their one count; ballarus expands and counts
// them too.
TEST(Thunks, CountedAndConvertedLikeGcov) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/pgo-thunks";
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(
      dir + "/t.cc",
      "#include <cstdio>\n"
      "struct A { virtual int f() { return 1; } virtual ~A() {} };\n"
      "struct B { virtual int g() { return 2; } virtual ~B() {} };\n"
      "struct C : A, B { int g() override { return 3; } };\n"
      "int main() {\n"
      "  C c; B* b = &c; int s = 0;\n"
      "  for (int i = 0; i < 1000; i++) s += b->g();\n"
      "  std::printf(\"%d\\n\", s);\n"
      "  return 0;\n"
      "}\n");
  auto ok = [&](const std::string& cmd, const std::vector<std::string>& env =
                                             {}) {
    CommandResult r = harness::Run(cmd, dir, env);
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    return r;
  };
  ok("g++ -O2 -g -fprofile-arcs -c t.cc -o t.o && g++ -fprofile-arcs t.o -o t"
     " && ./t && mv t.gcda gcov.gcda");
  const std::string bxx = Quote(InstallPrefix() + "/bin/ballarus-g++");
  ok(bxx + " -O2 -g -c t.cc -o t.o && " + bxx + " t.o -o t");
  ok("./t", {"BALLARUS_PROFILE=" + dir + "/t.profile"});
  CommandResult c =
      ok(Quote(Reconstruct()) + " gcda --in-place t.profile");
  EXPECT_EQ(c.err, "");  // no function left without a record
  EXPECT_EQ(GcdaDiff(dir + "/t.gcda", dir + "/gcov.gcda"), "");
  CommandResult ours = ok("g++ -O2 -g -fprofile-use -c t.cc -o t.o && "
                          "mv t.o ours.o && cp gcov.gcda t.gcda");
  CommandResult theirs = ok("g++ -O2 -g -fprofile-use -c t.cc -o t.o");
  EXPECT_EQ(ours.err, theirs.err);
  EXPECT_EQ(theirs.err, "");
  EXPECT_EQ(Slurp(dir + "/t.o"), Slurp(dir + "/ours.o"));
}

// Two different builds of one TU cannot share a .gcda: exit 2, one line.
TEST(Errors, TwoBuildsOfOneUnit) {
  ASSERT_FALSE(InstallPrefix().empty());
  const Program* p = FindProgram("one_block");
  ASSERT_NE(p, nullptr);
  const std::string dir = harness::TempRoot() + "/pgo-two/one_block";
  for (const std::string opt : {"-O0", "-O2"}) {
    BuildOptions b;
    b.kind = Kind::kBallarus;
    b.opt = opt;
    b.ballarus_prefix = InstallPrefix();
    b.ballarus_mode = "edge";
    harness::Build bb = harness::BuildProgram(*p, b, dir);
    ASSERT_TRUE(bb.ok) << bb.log;
    harness::Run(Quote(bb.exe), dir,
                 {"BALLARUS_PROFILE=" + harness::TempRoot() + "/pgo-two/p" +
                  opt});
  }
  CommandResult r = harness::Run(Quote(Reconstruct()) +
                                     " gcda --in-place p-O0 p-O2",
                                 harness::TempRoot() + "/pgo-two");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("two different builds of one_block.c"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  CommandResult u = harness::Run(Quote(Reconstruct()) + " gcda p-O2",
                                 harness::TempRoot() + "/pgo-two");
  EXPECT_EQ(u.status, 2);
  EXPECT_EQ(u.err, "ballarus-reconstruct: gcda: give --in-place or -o DIR\n");
}

}  // namespace
