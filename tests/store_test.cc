// store_test.cc — where profiles live and how processes add to them, end
// to end: real gcc 12, the installed wrappers and plugin, real programs,
// real build-system habits.
//
// Installs ballarus with //:install into $TEST_TMPDIR/prefix, then checks:
//   * naming: for a range of command lines, the .bprof files are exactly
//     the .gcda files gcc --coverage gives, with the other suffix;
//   * autotools-style `make check` that runs each test in a temporary
//     directory it deletes, with no variable set: every run is counted in
//     the build-time profiles, outputs equal the plain build's;
//   * a configure-style loop of 20 different conftest programs from one
//     conftest.c: outputs byte-identical to plain builds, nothing left but
//     the conftest files and one profile, holding the last build;
//   * one source in a static and a -fPIC object, linked into two programs:
//     two TUs in two files, both counted; the shared main.o counted twice;
//   * edit and rebuild: the old data replaced, no stray file, silent; the
//     one verbose line names source, object and profile;
//   * 16 concurrent processes into per-object profiles and into one pooled
//     profile: exact counts;
//   * safety: a profile that is a symbolic link to a file of another owner,
//     a regular file of another owner, planted temporary and lock names, a
//     damaged existing profile (preserved, never merged into), orphaned
//     temporary files of dead writers (removed), a stopped lock holder (the
//     next run finishes within BALLARUS_LOCK_TIMEOUT and writes beside),
//     BALLARUS_PROFILE=/dev/null (creates nothing).
//
// The runtime is exercised as root (the test runs as whoever runs bazel);
// files "of another owner" are chown'ed to nobody.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/profile_io.h"
#include "tests/harness.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using nlohmann::json;

// ---------------------------------------------------------------------------
// Installation (once per test binary), as in e2e_test.cc.

std::string InstallPrefix() {
  static std::once_flag once;
  static std::string prefix;
  static std::string failure;
  std::call_once(once, [] {
    // BALLARUS_STORE_TEST_PREFIX=DIR: test an already installed prefix
    // instead (e.g. an older ballarus, to see these tests fail there).
    const char* given = getenv("BALLARUS_STORE_TEST_PREFIX");
    if (given != nullptr && *given != '\0') {
      prefix = given;
      return;
    }
    std::string installer;
    for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
      const char* d = getenv(var);
      if (!d || !*d) continue;
      std::string p = std::string(d) + "/ballarus/install";
      struct stat st;
      if (stat(p.c_str(), &st) == 0) {
        installer = p;
        break;
      }
    }
    if (installer.empty()) {
      failure = "cannot find the //:install script in the runfiles";
      return;
    }
    std::string dir = harness::TempRoot() + "/prefix";
    CommandResult r =
        harness::Run(Quote(installer) + " " + Quote(dir), harness::TempRoot());
    if (r.status != 0) {
      failure = "install " + dir + " exited " + std::to_string(r.status) +
                ": " + r.err;
      return;
    }
    prefix = dir;
  });
  if (prefix.empty()) ADD_FAILURE() << failure;
  return prefix;
}

std::string Bgcc() { return Quote(InstallPrefix() + "/bin/ballarus-gcc"); }
std::string Recon() {
  return Quote(InstallPrefix() + "/bin/ballarus-reconstruct");
}

std::string Fresh(const std::string& name) {
  std::string dir = harness::TempRoot() + "/store/" + name;
  harness::MakeFreshDir(dir);
  return dir;
}

// Runs a shell script in `dir`; fails the test on a non-zero status.  (In
// braces: harness::Run prefixes `cd DIR &&`, which a script starting with
// `cmd &` would otherwise send to the background with it.)
CommandResult Sh(const std::string& script, const std::string& dir,
                 const std::vector<std::string>& env = {}) {
  CommandResult r = harness::Run("{\n" + script + "\n}", dir, env);
  EXPECT_EQ(r.status, 0) << script << "\nstdout: " << r.out
                         << "\nstderr: " << r.err;
  return r;
}

void Write(const std::string& path, const std::string& text) {
  harness::WriteFileOrDie(path, text);
}

std::string Read(const std::string& path) {
  std::string s;
  harness::ReadFile(path, &s);
  return s;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Every file under `dir` (relative paths, sorted), directories excluded.
std::vector<std::string> Files(const std::string& dir) {
  CommandResult r =
      harness::Run("find . -mindepth 1 ! -type d | sed 's|^\\./||' | sort",
                   dir);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> Matching(const std::vector<std::string>& v,
                                  const std::string& suffix) {
  std::vector<std::string> out;
  for (const std::string& s : v)
    if (s.size() >= suffix.size() &&
        s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(s);
  return out;
}

// A profile as the runtime wrote it.
struct Prof {
  bool ok = false;
  std::string error;
  uint64_t runs = 0;
  struct Rec {
    uint64_t stamp = 0, runs = 0;
    std::string profile, object, source;
  };
  std::vector<Rec> recs;
};

Prof ReadProf(const std::string& path) {
  Prof out;
  ballarus_profile p;
  char err[512] = "";
  if (ballarus_profile_read_file(path.c_str(), &p, err, sizeof err) != 0) {
    out.error = err;
    return out;
  }
  out.ok = true;
  out.runs = p.runs;
  for (uint32_t i = 0; i < p.n_records; ++i) {
    Prof::Rec r;
    r.stamp = p.records[i].stamp;
    r.runs = p.records[i].runs;
    ballarus_meta_names n;
    if (ballarus_meta_get_names(p.records[i].metadata,
                                p.records[i].meta_size, &n) == 0) {
      r.profile = n.profile;
      r.object = n.object;
      r.source = n.source;
    }
    out.recs.push_back(r);
  }
  ballarus_profile_free(&p);
  return out;
}

// Function name -> execution count, from `show --json`.
std::map<std::string, int64_t> Exec(const std::string& profile) {
  std::map<std::string, int64_t> out;
  CommandResult r = harness::Run(Recon() + " show --json " + Quote(profile),
                                 "/");
  EXPECT_EQ(r.status, 0) << profile << ": " << r.err;
  if (r.status != 0) return out;
  json doc = json::parse(r.out);
  for (const json& f : doc.at("functions"))
    out[f.at("name").get<std::string>()] +=
        f.at("execution_count").get<int64_t>();
  return out;
}

int Lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// ---------------------------------------------------------------------------
// Naming: the .bprof files are gcov's .gcda files.

TEST(Store, ProfilesAreNamedLikeGcovsDataFiles) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("naming");
  const std::string a =
      "int f(int);\nint main(void) { return f(1) - 2; }\n";
  const std::string b = "int f(int x) { return x + 1; }\n";
  // $CC is gcc --coverage or ballarus-gcc; every command runs in $R.
  const std::vector<std::string> cases = {
      "$CC -c src/a.c -o obj/a.o && $CC -c src/b.c -o obj/b.o && "
      "$CC -o prog obj/a.o obj/b.o",
      "$CC -o prog src/a.c src/b.c",
      "$CC -o obj/prog src/a.c src/b.c && mv obj/prog prog",
      "$CC -c src/a.c && $CC -c src/b.c && $CC -o prog a.o b.o",
      "cd sub && $CC -c ../src/a.c -o ../obj/a.o && $CC -c ../src/b.c && "
      "cd .. && $CC -o prog obj/a.o sub/b.o",
      "$CC -dumpbase foo -c src/a.c -o obj/a.o && $CC -c src/b.c -o "
      "obj/b.x.o && $CC -o prog obj/a.o obj/b.x.o",
      "$CC -c $R/src/a.c -o $R/obj/a.o && $CC -c $R/src/b.c -o obj/b && "
      "$CC -o prog obj/a.o obj/b",
      "$CC -fprofile-dir=$R/pd -c src/a.c -o obj/a.o && $CC -c src/b.c -o "
      "obj/b.o && $CC -o prog obj/a.o obj/b.o",
      "$CC -fprofile-dir=$R/pd -fprofile-prefix-path=$R -c src/a.c -o "
      "obj/a.o && $CC -fprofile-dir=$R/pd -c $R/src/b.c -o $R/obj/b.o && "
      "$CC -o prog obj/a.o obj/b.o",
      "$CC -fprofile-dir=pd -o prog src/a.c src/b.c",
      "mkdir dd && $CC -dumpdir dd/ -c src/a.c -o obj/a.o && rm -rf dd && "
      "$CC -c src/b.c -o obj/b.o && $CC -o prog obj/a.o obj/b.o",
      "cat src/a.c | $CC -x c -c - -o obj/a.o && $CC -c src/b.c -o obj/b.o "
      "&& $CC -o prog obj/a.o obj/b.o",
  };
  for (const std::string& c : cases) {
    std::map<std::string, std::vector<std::string>> found;
    for (const char* kind : {"gcov", "ballarus"}) {
      harness::MakeFreshDir(root);
      Sh("mkdir -p src obj sub", root);
      Write(root + "/src/a.c", a);
      Write(root + "/src/b.c", b);
      const std::string cc = std::string(kind) == "gcov"
                                 ? "gcc --coverage"
                                 : InstallPrefix() + "/bin/ballarus-gcc";
      CommandResult r = Sh("export R=$PWD CC=" + Quote(cc) + "; " + c +
                               " && ./prog",
                           root);
      EXPECT_EQ(r.err, "") << kind << ": " << c;
      std::vector<std::string> names =
          Matching(Files(root), std::string(kind) == "gcov" ? ".gcda"
                                                            : ".bprof");
      for (std::string& n : names)
        n = n.substr(0, n.rfind('.'));  // without the suffix
      found[kind] = names;
    }
    EXPECT_EQ(found["gcov"].size(), 2u) << c;
    EXPECT_EQ(found["ballarus"], found["gcov"]) << c;
  }
}

// ---------------------------------------------------------------------------
// An autotools-style test suite: each test runs in a temporary directory
// that is deleted afterwards; no variable set.

const char kLib[] =
    "int work(int n) {\n"
    "  int s = 0;\n"
    "  for (int i = 0; i < n; i++) s += i % 3 ? i : -i;\n"
    "  return s;\n"
    "}\n";
const char kMain[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "int work(int n);\n"
    "int main(int argc, char **argv) {\n"
    "  int n = argc > 1 ? atoi(argv[1]) : 0;\n"
    "  printf(\"work(%d) = %d\\n\", n, work(n));\n"
    "  if (n == 3) fprintf(stderr, \"three\\n\");\n"
    "  return n == 4;\n"
    "}\n";

// "make check": each test in a mktemp -d that it deletes; the outputs are
// collected in $OUT.
const char kCheck[] =
    "set -e; for n in 1 2 3 4 5; do\n"
    "  t=$(mktemp -d \"$TMPROOT/check.XXXXXX\"); cd \"$t\"\n"
    "  st=0; \"$PROG\" $n >\"$OUT/$n.out\" 2>\"$OUT/$n.err\" || st=$?\n"
    "  echo $st >\"$OUT/$n.status\"; cd /; rm -rf \"$t\"\n"
    "done\n";

TEST(Store, MakeCheckInDeletedTemporaryDirectoriesCountsEveryRun) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("autotools");
  Sh("mkdir -p src build plain tmp out-plain out-ballarus", root);
  Write(root + "/src/lib.c", kLib);
  Write(root + "/src/main.c", kMain);
  Sh("cd plain && gcc -O1 -c ../src/lib.c -o lib.o && gcc -O1 -c "
     "../src/main.c -o main.o && gcc -o prog main.o lib.o",
     root);
  Sh("cd build && umask 022 && " + Bgcc() + " -O1 -c ../src/lib.c -o lib.o && " +
         Bgcc() + " -O1 -c ../src/main.c -o main.o && " + Bgcc() +
         " -o prog main.o lib.o",
     root);
  for (const char* kind : {"plain", "ballarus"}) {
    const std::string prog =
        root + (std::string(kind) == "plain" ? "/plain/prog" : "/build/prog");
    Sh(std::string("umask 022; env -u BALLARUS_PROFILE PROG=") + Quote(prog) +
           " OUT=" + Quote(root + "/out-" + kind) +
           " TMPROOT=" + Quote(root + "/tmp") + " sh -c " + Quote(kCheck),
       root);
  }
  // Outputs, byte for byte.
  for (int n = 1; n <= 5; ++n)
    for (const char* ext : {".out", ".err", ".status"}) {
      const std::string f = "/" + std::to_string(n) + ext;
      EXPECT_EQ(Read(root + "/out-ballarus" + f), Read(root + "/out-plain" + f))
          << f;
    }
  EXPECT_EQ(Read(root + "/out-ballarus/3.err"), "three\n");
  // Every run counted, in the profiles beside the objects.
  EXPECT_EQ(Files(root + "/tmp"), std::vector<std::string>{});
  EXPECT_EQ(Matching(Files(root), ".bprof"),
            (std::vector<std::string>{"build/lib.bprof", "build/main.bprof"}));
  EXPECT_EQ(Exec(root + "/build/main.bprof")["main"], 5);
  EXPECT_EQ(Exec(root + "/build/lib.bprof")["work"], 5);
  Prof p = ReadProf(root + "/build/lib.bprof");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.runs, 5u);
  ASSERT_EQ(p.recs.size(), 1u);
  EXPECT_EQ(p.recs[0].source, "../src/lib.c");
  EXPECT_EQ(p.recs[0].object, root + "/build/lib.o");
  EXPECT_EQ(p.recs[0].profile, root + "/build/lib.bprof");
  // gcov's mode: 0666 less the umask.
  struct stat st;
  ASSERT_EQ(stat((root + "/build/lib.bprof").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  CommandResult v = harness::Run(Recon() + " verify build/main.bprof", root);
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

// ---------------------------------------------------------------------------
// configure: many different programs from one conftest.c in one directory.

std::string Conftest(int k) {
  std::string s =
      "#include <errno.h>\n#include <stdio.h>\n#include <string.h>\n";
  if (k % 2) s += "static int twice(int x) { return 2 * x; }\n";
  s += "int main(void) {\n  long s = 0;\n";
  s += "  for (int i = 0; i < " + std::to_string(k * 10) +
       "; i++) s += i ^ " + std::to_string(k) + ";\n";
  if (k % 2) s += "  s += twice(s);\n";
  s += "  printf(\"conftest " + std::to_string(k) + " %ld\\n\", s);\n";
  if (k % 4 == 1) s += "  errno = ENOENT; perror(\"conftest\");\n";
  if (k % 4 == 2) s += "  fprintf(stderr, \"%s\\n\", strerror(EACCES));\n";
  s += "  return " + std::to_string(k % 3) + ";\n}\n";
  return s;
}

TEST(Store, ConfigureStyleConftestsAreSilentAndLeaveOneProfile) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("configure");
  const std::string conf = root + "/conf";
  Sh("mkdir -p conf out", root);
  for (int k = 1; k <= 20; ++k) {
    Write(conf + "/conftest.c", Conftest(k));
    for (const char* kind : {"plain", "ballarus"}) {
      const std::string cc =
          std::string(kind) == "plain" ? "gcc" : Bgcc();
      const std::string out = root + "/out/" + kind;
      Sh(cc + " -O1 -o conftest conftest.c && { st=0; ./conftest >" +
             Quote(out + ".out") + " 2>" + Quote(out + ".err") +
             " || st=$?; echo $st >" + Quote(out + ".status") + "; }",
         conf);
    }
    for (const char* ext : {".out", ".err", ".status"})
      EXPECT_EQ(Read(root + "/out/ballarus" + ext),
                Read(root + "/out/plain" + ext))
          << "conftest " << k << ext;
  }
  EXPECT_EQ(Files(conf), (std::vector<std::string>{
                             "conftest", "conftest-conftest.bprof",
                             "conftest.c"}));
  // The last build only, run once.
  Prof p = ReadProf(conf + "/conftest-conftest.bprof");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.recs.size(), 1u);
  EXPECT_EQ(p.recs[0].runs, 1u);
  EXPECT_EQ(p.recs[0].object, "");  // compiled and linked in one command
  std::map<std::string, int64_t> e = Exec(conf + "/conftest-conftest.bprof");
  EXPECT_EQ(e["main"], 1);
  EXPECT_EQ(e.count("twice"), 0u);  // conftest 20 has no twice()
}

// ---------------------------------------------------------------------------
// One source, a static and a -fPIC object, two programs.

TEST(Store, StaticAndPicObjectsOfOneSourceAreTwoTus) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("static_pic");
  Sh("mkdir -p src objs", root);
  Write(root + "/src/util.c",
        "int util(int x) { return x * 2 + (x > 3); }\n");
  Write(root + "/src/main.c",
        "#include <stdio.h>\n"
        "int util(int);\n"
        "int main(int argc, char **argv) {\n"
        "  int s = 0;\n"
        "  for (int i = 0; i < argc * 3; i++) s += util(i);\n"
        "  printf(\"%d\\n\", s);\n"
        "  return 0;\n"
        "}\n");
  const std::string cc = Bgcc() + " -O0";
  Sh(cc + " -c src/util.c -o util.o && " + cc +
         " -fPIC -c src/util.c -o objs/util.o && ar rcs libutil.a util.o && " +
         cc + " -shared -o libutil.so objs/util.o && " + cc +
         " -c src/main.c -o main.o && " + cc +
         " -o prog_static main.o libutil.a && " + cc +
         " -o prog_shared main.o -L. -lutil -Wl,-rpath,$PWD",
     root);
  CommandResult r = Sh("./prog_static && ./prog_shared a b", root);
  EXPECT_EQ(r.out, "6\n77\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Matching(Files(root), ".bprof"),
            (std::vector<std::string>{"main.bprof", "objs/util.bprof",
                                      "util.bprof"}));
  EXPECT_EQ(Exec(root + "/util.bprof")["util"], 3);
  EXPECT_EQ(Exec(root + "/objs/util.bprof")["util"], 9);
  EXPECT_EQ(Exec(root + "/main.bprof")["main"], 2);
  Prof a = ReadProf(root + "/util.bprof"), b = ReadProf(root + "/objs/util.bprof");
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  ASSERT_EQ(a.recs.size(), 1u);
  ASSERT_EQ(b.recs.size(), 1u);
  EXPECT_EQ(a.recs[0].source, "src/util.c");
  EXPECT_EQ(b.recs[0].source, "src/util.c");
  EXPECT_EQ(a.recs[0].object, root + "/util.o");
  EXPECT_EQ(b.recs[0].object, root + "/objs/util.o");
  EXPECT_NE(a.recs[0].stamp, b.recs[0].stamp);
  // Pooled into one file they are two records as well, and merge cleanly.
  Sh("./prog_static && ./prog_shared a b", root,
     {"BALLARUS_PROFILE=" + root + "/pool.profile"});
  Prof pool = ReadProf(root + "/pool.profile");
  ASSERT_TRUE(pool.ok) << pool.error;
  EXPECT_EQ(pool.recs.size(), 3u);
  EXPECT_EQ(Exec(root + "/pool.profile")["util"], 12);
}

// ---------------------------------------------------------------------------
// Reports over a project's profiles: directories of .bprof files.

// Runs `cmd` (ballarus-reconstruct's arguments) in `dir`; no status check.
CommandResult RunRecon(const std::string& args, const std::string& dir) {
  return harness::Run(Recon() + " " + args, dir);
}

// `show --json` without its "profile" field (which names the inputs).
std::string ShowJsonWithoutName(const std::string& args,
                                const std::string& dir) {
  CommandResult r = RunRecon("show --json " + args, dir);
  EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  if (r.status != 0) return "";
  json doc = json::parse(r.out);
  doc.erase("profile");
  return doc.dump(1);
}

TEST(Store, ReportsReadADirectoryOfProfilesAsTheirMerge) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("project_reports");
  Sh("mkdir -p src objs", root);
  Write(root + "/src/util.c",
        "int util(int x) { return x * 2 + (x > 3); }\n");
  Write(root + "/src/main.c",
        "#include <stdio.h>\n"
        "int util(int);\n"
        "int main(int argc, char **argv) {\n"
        "  int s = 0;\n"
        "  for (int i = 0; i < argc * 3; i++) s += util(i);\n"
        "  printf(\"%d\\n\", s);\n"
        "  return 0;\n"
        "}\n");
  const std::string cc = Bgcc() + " -O0";
  Sh(cc + " -c src/util.c -o util.o && " + cc +
         " -fPIC -c src/util.c -o objs/util.o && ar rcs libutil.a util.o && " +
         cc + " -shared -o libutil.so objs/util.o && " + cc +
         " -c src/main.c -o main.o && " + cc +
         " -o prog_static main.o libutil.a && " + cc +
         " -o prog_shared main.o -L. -lutil -Wl,-rpath,$PWD",
     root);
  CommandResult r = Sh("./prog_static && ./prog_shared a b", root);
  EXPECT_EQ(r.out, "6\n77\n");

  // One report over the directory: util.c's two objects (3 + 9 calls) are
  // one file whose line 1 counts 12; main.o ran twice.
  r = RunRecon("lcov .", root);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string lcov_dir = r.out;
  const std::string util_sf = "SF:" + root + "/src/util.c\n";
  size_t at = lcov_dir.find(util_sf);
  ASSERT_NE(at, std::string::npos) << lcov_dir;
  EXPECT_EQ(lcov_dir.find(util_sf, at + 1), std::string::npos) << lcov_dir;
  const std::string util_rec =
      lcov_dir.substr(at, lcov_dir.find("end_of_record", at) - at);
  EXPECT_NE(util_rec.find("FNDA:12,util\n"), std::string::npos) << util_rec;
  EXPECT_NE(util_rec.find("DA:1,12\n"), std::string::npos) << util_rec;
  EXPECT_NE(lcov_dir.find("FNDA:2,main\n"), std::string::npos) << lcov_dir;
  std::map<std::string, int64_t> e;
  {
    CommandResult s = RunRecon("show --json .", root);
    ASSERT_EQ(s.status, 0) << s.err;
    json doc = json::parse(s.out);
    int64_t line1 = -1;
    for (const json& l : doc.at("lines"))
      if (l.at("file") == "src/util.c" && l.at("line") == 1)
        line1 = l.at("count").get<int64_t>();
    EXPECT_EQ(line1, 12);
    EXPECT_EQ(doc.at("profile"), ".");
    EXPECT_EQ(doc.at("runs"), 4);  // per object: 1 + 1 + 2
  }

  // Byte for byte what the merged file gives, whatever the spelling of the
  // inputs (the directory, its files in another order, a subdirectory and
  // a file).
  Sh(Recon() + " merge -o all.profile .", root);
  r = RunRecon("lcov all.profile", root);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, lcov_dir);
  const std::string show_merged = ShowJsonWithoutName("all.profile", root);
  EXPECT_EQ(ShowJsonWithoutName(".", root), show_merged);
  EXPECT_EQ(ShowJsonWithoutName(root, root), show_merged);
  EXPECT_EQ(ShowJsonWithoutName("util.bprof objs/util.bprof main.bprof", root),
            show_merged);
  EXPECT_EQ(ShowJsonWithoutName("objs util.bprof main.bprof", root),
            show_merged);
  r = RunRecon("cobertura .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  at = r.out.find("project_reports/src/util.c\"");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("project_reports/src/util.c\"", at + 1),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("<line number=\"1\" hits=\"12\"", at),
            std::string::npos)
      << r.out;
  // all.profile is not a *.bprof: the directory does not count it twice.
  EXPECT_EQ(RunRecon("lcov .", root).out, lcov_dir);
  // The other reading commands take the directory too.
  EXPECT_EQ(RunRecon("verify .", root).status, 0);
  EXPECT_EQ(RunRecon("stats .", root).status, 0);
  r = RunRecon("diff all.profile .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  r = RunRecon("html -o report .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Exists(root + "/report/index.html"));
  // gcda keeps each profile apart: one .gcda per object.
  r = RunRecon("gcda -o gcdas .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Matching(Files(root + "/gcdas"), ".gcda").size(), 3u);
  r = RunRecon("gcov -t .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("       12:    1:int util(int x)"), std::string::npos)
      << r.out;

  // A damaged file: one line naming it, exit 2; --skip-bad names it with
  // the reason and reports the rest, equal to the clean report.
  Sh("mkdir -p sub && printf junk > sub/junk.bprof", root);
  r = RunRecon("lcov .", root);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ballarus-reconstruct: ./sub/junk.bprof: offset 0: file header "
            "truncated (file ends after 4 of 40 bytes)\n");
  r = RunRecon("lcov --skip-bad .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, lcov_dir);
  EXPECT_EQ(r.err,
            "ballarus-reconstruct: ./sub/junk.bprof: skipped: offset 0: file "
            "header truncated (file ends after 4 of 40 bytes)\n");
  r = RunRecon("merge --skip-bad -o all2.profile .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(Read(root + "/all2.profile"), Read(root + "/all.profile"));
  // Nothing usable at all still fails.
  r = RunRecon("show --skip-bad sub", root);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 2) << r.err;
  Sh("rm -r sub", root);

  // Another build of one object (kept from before a rebuild): the merge
  // names the file, the source and the object, never a hex id.
  Sh("mkdir -p old && cp util.bprof old/ && "
     "echo 'int util(int x) { return x + 1; }' > src/util.c && " +
         cc + " -c src/util.c -o util.o && ar rcs libutil.a util.o && " + cc +
         " -o prog_static main.o libutil.a && ./prog_static",
     root);
  r = RunRecon("lcov .", root);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("./util.bprof: cannot merge: two builds of one TU "
                       "(source src/util.c, object " +
                       root + "/util.o)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("0x"), std::string::npos) << r.err;
  r = RunRecon("show --json --skip-bad .", root);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("./util.bprof: skipped: cannot merge"),
            std::string::npos)
      << r.err;
}

// ---------------------------------------------------------------------------
// Source names: one file per absolute, lexically normalised path.

TEST(Store, OneSourceSpelledThreeWaysIsOneFileInReports) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("names");
  Sh("mkdir -p src test other", root);
  Write(root + "/src/os.c",
        "int os_call(int x) {\n"
        "  return x + 1;\n"
        "}\n");
  Write(root + "/test/main.c",
        "#include <stdio.h>\n"
        "int os_call(int);\n"
        "int main(int argc, char **argv) {\n"
        "  int s = 0;\n"
        "  for (int i = 0; i < argc; i++) s += os_call(i);\n"
        "  printf(\"%d\\n\", s);\n"
        "  return 0;\n"
        "}\n");
  // The same file as src/os.c and test/../src/os.c from the top, and as
  // ../src/os.c from test/: three objects, three TUs, one source file.
  // other/os.c is another file that two directories both call "os.c".
  Write(root + "/other/os.c", "int other(void) { return 7; }\n");
  const std::string cc = Bgcc() + " -O0";
  Sh(cc + " -c src/os.c -o a.o && " + cc + " -c test/../src/os.c -o b.o && " +
         "(cd test && " + cc + " -c ../src/os.c -o c.o && " + cc +
         " -c main.c -o main.o) && (cd src && " + cc +
         " -c os.c -o d.o) && (cd other && " + cc + " -c os.c -o e.o) && " +
         cc + " -o pa test/main.o a.o && " + cc + " -o pb test/main.o b.o && " +
         cc + " -o pc test/main.o test/c.o && " + cc +
         " -o pd test/main.o src/d.o other/e.o",
     root);
  Sh("./pa && ./pb x && ./pc x y && ./pd x y z", root);
  CommandResult r = RunRecon("show --json .", root);
  ASSERT_EQ(r.status, 0) << r.err;
  json doc = json::parse(r.out);
  // Line 2 of src/os.c ran 1 + 2 + 3 + 4 times, in four TUs.
  std::map<std::string, int64_t> line2;
  std::set<std::string> shown;
  for (const json& l : doc.at("lines")) {
    if (l.at("line") == 2)
      line2[l.at("path").get<std::string>()] += l.at("count").get<int64_t>();
    if (l.at("path") == root + "/src/os.c")
      shown.insert(l.at("file").get<std::string>());
  }
  EXPECT_EQ(line2[root + "/src/os.c"], 10);
  EXPECT_EQ(shown, (std::set<std::string>{"os.c"}));
  int n_os_call = 0;
  for (const json& f : doc.at("functions"))
    if (f.at("name") == "os_call") {
      ++n_os_call;
      EXPECT_EQ(f.at("path"), root + "/src/os.c");
    }
  EXPECT_EQ(n_os_call, 4);  // four TUs (static functions stay apart)
  // "os.c" of src/ and of other/ are two files.
  int other_lines = 0;
  for (const json& l : doc.at("lines"))
    if (l.at("path") == root + "/other/os.c") {
      ++other_lines;
      EXPECT_EQ(l.at("file"), "os.c");
    }
  EXPECT_EQ(other_lines, 1);
  // show lists every spelling as compiled beside the absolute path.
  r = RunRecon("show .", root);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  os.c: " + root +
                       "/src/os.c (as compiled: ../src/os.c, os.c, "
                       "src/os.c, test/../src/os.c)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  os.c: " + root + "/other/os.c (as compiled: os.c)\n"),
            std::string::npos)
      << r.out;
  // lcov: one record for src/os.c, its line 2 counted 10 times.
  r = RunRecon("lcov .", root);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string sf = "SF:" + root + "/src/os.c\n";
  const size_t at = r.out.find(sf);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(sf, at + 1), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DA:2,10\n", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SF:" + root + "/other/os.c\n"), std::string::npos);
  // gcov keeps each TU's own spelling, as gcov does (Source: of the .gcda
  // of test/c.o is ../src/os.c, relative to its compile directory).
  r = RunRecon("gcov -t --tu ../src/os.c .", root);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("        -:    0:Source:../src/os.c\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        3:    2:  return x + 1;\n"), std::string::npos)
      << r.out;
}

// ---------------------------------------------------------------------------
// Merging at scale.

// Peak resident set size (KiB) of `cmd` run in `dir`, from GNU time.
long PeakRssKib(const std::string& cmd, const std::string& dir) {
  CommandResult r = harness::Run("/usr/bin/time -v " + cmd, dir);
  EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
  const std::string key = "Maximum resident set size (kbytes): ";
  const size_t at = r.err.find(key);
  if (at == std::string::npos) return -1;
  return std::stol(r.err.substr(at + key.size()));
}

TEST(Store, MergingAThousandProfilesIsExactInBoundedMemory) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("merge_thousand");
  // 300 more functions, so that each profile is tens of kilobytes: holding
  // every input at once would show in the peak RSS.
  std::string filler;
  for (int k = 0; k < 300; ++k)
    filler += "int g" + std::to_string(k) + "(int x) { return x > " +
              std::to_string(k) + " ? x - 1 : x + 1; }\n";
  Write(root + "/m.c",
        filler +
            "__attribute__((noinline)) static int f(int i) { return i & 7; }\n"
            "int main(int argc, char **argv) {\n"
            "  int s = 0;\n"
            "  for (int i = 0; i < argc * 5; i++) s += f(i);\n"
            "  return s < 0;\n"
            "}\n");
  Sh(Bgcc() + " -O1 -c m.c -o m.o && " + Bgcc() + " -o prog m.o", root);
  // Run i (1..1000) has 1 + i % 3 arguments and its own profile.
  Sh("mkdir -p runs few && i=1; while [ $i -le 1000 ]; do "
     "case $((i % 3)) in 0) a=;; 1) a=x;; 2) a='x y';; esac; "
     "BALLARUS_PROFILE=$PWD/runs/r$i.bprof ./prog $a || exit 1; "
     "i=$((i + 1)); done && cp runs/r1.bprof runs/r2.bprof runs/r3.bprof few/",
     root);
  int64_t f_calls = 0;
  for (int i = 1; i <= 1000; ++i) f_calls += 5 * (1 + i % 3);
  EXPECT_EQ(Matching(Files(root + "/runs"), ".bprof").size(), 1000u);
  struct stat st;
  ASSERT_EQ(stat((root + "/runs/r1.bprof").c_str(), &st), 0);
  EXPECT_GT(st.st_size, 20000);  // 1,000 of them: > 20 MB

  const long rss_all =
      PeakRssKib(Recon() + " merge -o all.profile runs", root);
  const long rss_few = PeakRssKib(Recon() + " merge -o few.profile few", root);
  std::map<std::string, int64_t> e = Exec(root + "/all.profile");
  EXPECT_EQ(e["main"], 1000);
  EXPECT_EQ(e["f"], f_calls);
  EXPECT_EQ(ReadProf(root + "/all.profile").runs, 1000u);
  // Streaming: 1,000 inputs need about the memory of 3.
  std::printf("merge peak RSS: 1000 profiles of %lld bytes %ld KiB, 3 "
              "profiles %ld KiB\n",
              static_cast<long long>(st.st_size), rss_all, rss_few);
  RecordProperty("merge_1000_peak_rss_kib", std::to_string(rss_all));
  RecordProperty("merge_3_peak_rss_kib", std::to_string(rss_few));
  ASSERT_GT(rss_few, 0);
  EXPECT_LE(rss_all, rss_few + rss_few / 4) << rss_all << " vs " << rss_few;
  // A report over the directory gives the same counts.
  e = Exec(root + "/runs");
  EXPECT_EQ(e["f"], f_calls);
}

// ---------------------------------------------------------------------------
// Edit and rebuild.

TEST(Store, ARebuiltObjectReplacesItsOldDataSilently) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("rebuild");
  const std::string build =
      Bgcc() + " -O0 -c a.c -o a.o && " + Bgcc() + " -o prog a.o";
  Write(root + "/a.c",
        "#include <stdio.h>\nint main(void) { puts(\"v1\"); return 0; }\n");
  Sh(build + " && ./prog && ./prog", root);
  Prof v1 = ReadProf(root + "/a.bprof");
  ASSERT_TRUE(v1.ok) << v1.error;
  EXPECT_EQ(v1.runs, 2u);

  Write(root + "/a.c",
        "#include <stdio.h>\n"
        "static int sq(int x) { return x * x; }\n"
        "int main(void) { printf(\"v2 %d\\n\", sq(3)); return 0; }\n");
  CommandResult r = Sh(build + " && ./prog", root);
  EXPECT_EQ(r.out, "v2 9\n");
  EXPECT_EQ(r.err, "");
  Prof v2 = ReadProf(root + "/a.bprof");
  ASSERT_TRUE(v2.ok) << v2.error;
  ASSERT_EQ(v2.recs.size(), 1u);
  EXPECT_NE(v2.recs[0].stamp, v1.recs[0].stamp);
  EXPECT_EQ(v2.recs[0].runs, 1u);
  EXPECT_EQ(Exec(root + "/a.bprof")["sq"], 1);
  EXPECT_EQ(Files(root),
            (std::vector<std::string>{"a.bprof", "a.c", "a.o", "prog"}));

  // With BALLARUS_VERBOSE=1: one line naming source, object and profile.
  Write(root + "/a.c",
        "#include <stdio.h>\nint main(void) { puts(\"v3\"); return 0; }\n");
  r = Sh(build + " && ./prog", root, {"BALLARUS_VERBOSE=1"});
  EXPECT_NE(r.err.find("ballarus: a.c (object " + root +
                       "/a.o): overwriting the profile data of an earlier "
                       "build in " +
                       root + "/a.bprof\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("0x"), std::string::npos) << r.err;
  EXPECT_EQ(ReadProf(root + "/a.bprof").recs.size(), 1u);
}

// ---------------------------------------------------------------------------
// Concurrent processes.

TEST(Store, SixteenConcurrentProcessesAreExact) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("concurrent");
  Write(root + "/c.c",
        "#include <stdlib.h>\n"
        "__attribute__((noinline)) static int f(int i) { return i & 7; }\n"
        "int main(int argc, char **argv) {\n"
        "  int n = atoi(argv[1]), s = 0;\n"
        "  for (int i = 0; i < n; i++) s += f(i);\n"
        "  return s < 0;\n"
        "}\n");
  Sh(Bgcc() + " -O1 -c c.c -o c.o && " + Bgcc() + " -o prog c.o", root);
  const std::string sixteen =
      "for i in $(seq 16); do ./prog 300000 & done; wait";
  CommandResult r = Sh(sixteen, root);
  EXPECT_EQ(r.err, "");
  std::map<std::string, int64_t> e = Exec(root + "/c.bprof");
  EXPECT_EQ(e["main"], 16);
  EXPECT_EQ(e["f"], 16 * 300000);
  EXPECT_EQ(ReadProf(root + "/c.bprof").runs, 16u);
  // Pooled.
  r = Sh(sixteen, root, {"BALLARUS_PROFILE=" + root + "/pool.profile"});
  EXPECT_EQ(r.err, "");
  e = Exec(root + "/pool.profile");
  EXPECT_EQ(e["main"], 16);
  EXPECT_EQ(e["f"], 16 * 300000);
  EXPECT_EQ(Files(root), (std::vector<std::string>{"c.bprof", "c.c", "c.o",
                                                   "pool.profile", "prog"}));
}

// ---------------------------------------------------------------------------
// Safety.

const char kSmall[] =
    "#include <stdio.h>\n"
    "int main(int argc, char **argv) { printf(\"%d\\n\", argc); return 0; }\n";

// Builds kSmall as `prog` from `a.o` in dir.
void BuildSmall(const std::string& dir) {
  Write(dir + "/a.c", kSmall);
  Sh(Bgcc() + " -O0 -c a.c -o a.o && " + Bgcc() + " -o prog a.o", dir);
}

TEST(Store, AProfileOfAnotherOwnerIsNeitherFollowedNorRead) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("other_owner");
  Sh("mkdir -p other", root);
  BuildSmall(root);
  // Another user's profile (valid: this program's, run with 3 arguments),
  // mode 0600, and symbolic links to it where this program's counts go:
  // its home a.bprof, and a pool named by BALLARUS_PROFILE.
  Sh("BALLARUS_PROFILE=$PWD/other/theirs.bprof ./prog x y && chown nobody "
     "other/theirs.bprof && chmod 600 other/theirs.bprof && "
     "ln -s other/theirs.bprof a.bprof && ln -s other/theirs.bprof pool",
     root);
  const std::string theirs = Read(root + "/other/theirs.bprof");
  auto one_case = [&](const char* name) {
    SCOPED_TRACE(name);
    const std::string path = root + "/" + name;
    std::vector<std::string> env;
    if (std::string(name) == "pool") env = {"BALLARUS_PROFILE=" + path};
    CommandResult r = Sh("umask 022; ./prog", root, env);
    EXPECT_EQ(r.out, "1\n");
    EXPECT_EQ(Read(root + "/other/theirs.bprof"), theirs);
    struct stat st;
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    // This run alone (nothing of theirs), beside it, in a file of gcov's
    // mode; one line.
    std::vector<std::string> beside;
    for (const std::string& f : Files(root))
      if (f.rfind(std::string(name) + ".", 0) == 0) beside.push_back(f);
    ASSERT_EQ(beside.size(), 1u);
    Prof p = ReadProf(root + "/" + beside[0]);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.runs, 1u);
    EXPECT_EQ(Exec(root + "/" + beside[0])["main"], 1);
    ASSERT_EQ(stat((root + "/" + beside[0]).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    EXPECT_EQ(r.err, "ballarus: " + path +
                         ": is a symbolic link, not read; this run's counts "
                         "written to " +
                         root + "/" + beside[0] + " instead\n");
  };
  one_case("a.bprof");
  one_case("pool");

  // A regular file of another owner: not read either.
  Sh("rm -f a.bprof a.bprof.* && cp -p other/theirs.bprof a.bprof", root);
  CommandResult r = Sh("./prog", root);
  EXPECT_EQ(Read(root + "/a.bprof"), theirs);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("a.bprof: belongs to uid 65534, not to this user"),
            std::string::npos)
      << r.err;
}

TEST(Store, PlantedTemporaryAndLockNamesAreNeverFollowed) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("planted");
  Sh("mkdir -p other", root);
  BuildSmall(root);
  Write(root + "/other/victim", "victim\n");
  // The lock file name of the old runtime and this process's first
  // temporary names, as symbolic links ($$ is the pid prog execs into).
  const std::string plant =
      "ln -sf other/created-through-lock pool.profile.lock; "
      "ln -sf other/created-through-lock a.bprof.lock; "
      "for n in 1 2 3; do ln -sf other/victim pool.profile.tmp.$$.$n; "
      "ln -sf other/victim a.bprof.tmp.$$.$n; done; ";
  CommandResult r = Sh("sh -c " + Quote(plant + "exec ./prog"), root);
  EXPECT_EQ(r.err, "");
  r = Sh("sh -c " + Quote(plant + "exec ./prog"), root,
         {"BALLARUS_PROFILE=" + root + "/pool.profile"});
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(Exists(root + "/other/created-through-lock"));
  EXPECT_EQ(Read(root + "/other/victim"), "victim\n");
  EXPECT_EQ(Exec(root + "/a.bprof")["main"], 1);
  EXPECT_EQ(Exec(root + "/pool.profile")["main"], 1);
}

TEST(Store, ADamagedProfileIsPreservedAndNeverMergedInto) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("damaged");
  BuildSmall(root);
  Sh("export BALLARUS_PROFILE=$PWD/good.profile; ./prog && ./prog", root);
  const std::string good = Read(root + "/good.profile");
  ASSERT_GT(good.size(), 100u);
  std::vector<std::pair<std::string, std::string>> damaged;
  for (size_t at : {size_t(0), size_t(9), size_t(17), size_t(27), size_t(35),
                    size_t(45), size_t(100), good.size() / 2,
                    good.size() - 3}) {
    std::string b = good;
    b[at] ^= 0x20;
    damaged.push_back({"flip at " + std::to_string(at), b});
  }
  for (size_t len : {size_t(0), size_t(20), size_t(39), good.size() - 8})
    damaged.push_back({"cut to " + std::to_string(len), good.substr(0, len)});
  // At its home, and as a pool named by BALLARUS_PROFILE.
  for (const char* name : {"a.bprof", "pool"})
  for (const auto& [label, bytes] : damaged) {
    SCOPED_TRACE(std::string(name) + ": " + label);
    const std::string path = root + "/" + name;
    std::vector<std::string> env;
    if (std::string(name) == "pool") env = {"BALLARUS_PROFILE=" + path};
    Sh("rm -f a.bprof* pool*", root);
    Write(path, bytes);
    // reconstruct rejects it: the runtime, which shares its validation,
    // must not merge into it.
    CommandResult rec = harness::Run(Recon() + " show " + name, root);
    EXPECT_EQ(rec.status, 2);
    CommandResult r = Sh("./prog", root, env);
    EXPECT_EQ(r.out, "1\n");
    EXPECT_EQ(Read(path + ".corrupt"), bytes);
    Prof p = ReadProf(path);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.runs, 1u);
    EXPECT_EQ(Exec(path)["main"], 1);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("ballarus: " + path + ": damaged (", 0), 0u)
        << r.err;
    EXPECT_NE(r.err.find("kept as " + path + ".corrupt"), std::string::npos)
        << r.err;
  }
}

TEST(Store, OrphanedTemporaryFilesOfDeadWritersAreRemoved) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("orphans");
  BuildSmall(root);
  Sh("./prog", root);
  // A dead pid (a shell that has exited) and a live one (a sleeper).
  const std::string dead =
      harness::Run("sh -c 'echo $$'", root).out.substr(0, std::string::npos);
  std::string dead_pid = dead.substr(0, dead.find('\n'));
  Sh("sleep 60 >/dev/null 2>&1 & echo $! > live.pid", root);
  std::string live_pid = Read(root + "/live.pid");
  live_pid = live_pid.substr(0, live_pid.find('\n'));
  const std::string orphan = "a.bprof.tmp." + dead_pid + ".1";
  const std::string alive = "a.bprof.tmp." + live_pid + ".1";
  const std::string link = "a.bprof.tmp." + dead_pid + ".2";
  const std::string other = "b.bprof.tmp." + dead_pid + ".1";
  Sh("head -c 5000 /dev/zero > " + orphan + " && cp " + orphan + " " + alive +
         " && cp " + orphan + " " + other + " && ln -s a.c " + link,
     root);
  CommandResult r = Sh("./prog", root);
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(Exists(root + "/" + orphan));
  EXPECT_TRUE(Exists(root + "/" + alive));  // its writer may be at work
  EXPECT_TRUE(Exists(root + "/" + link));   // not a file we wrote
  EXPECT_TRUE(Exists(root + "/" + other));  // not this program's profile
  EXPECT_EQ(Exec(root + "/a.bprof")["main"], 2);
  harness::Run("kill " + live_pid, root);
}

TEST(Store, AStoppedLockHolderDelaysTheNextRunOnlyUpToTheTimeout) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("stopped");
  BuildSmall(root);
  Sh("./prog", root);
  // A process holding the directory's lock (the lock a dumping runtime
  // takes), stopped with SIGSTOP; the program runs with a 2 s timeout.
  const std::string script =
      "python3 -c 'import fcntl, os, sys, time\n"
      "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
      "fcntl.flock(fd, fcntl.LOCK_EX)\n"
      "open(sys.argv[1] + \"/locked\", \"w\").close()\n"
      "time.sleep(600)' \"$PWD\" & holder=$!\n"
      "i=0; while [ ! -e locked ]; do sleep 0.05; i=$((i + 1));\n"
      "  if [ $i -gt 200 ]; then echo 'the holder did not lock' >&2;\n"
      "    kill $holder; exit 1; fi; done; rm locked\n"
      "kill -STOP $holder\n"
      "start=$(date +%s%N)\n"
      "st=0; BALLARUS_LOCK_TIMEOUT=2 ./prog >run.out 2>run.err || st=$?\n"
      "end=$(date +%s%N)\n"
      "kill -CONT $holder; kill $holder; wait $holder 2>/dev/null\n"
      "echo $st $(( (end - start) / 1000000 ))\n";
  CommandResult r = Sh(script, root);
  int status = -1;
  long ms = -1;
  std::istringstream(r.out) >> status >> ms;
  EXPECT_EQ(status, 0);
  EXPECT_GE(ms, 1900);
  EXPECT_LT(ms, 6000);
  EXPECT_EQ(Read(root + "/run.out"), "1\n");
  const std::string err = Read(root + "/run.err");
  std::vector<std::string> beside;
  for (const std::string& f : Files(root))
    if (f.rfind("a.bprof.", 0) == 0) beside.push_back(f);
  ASSERT_EQ(beside.size(), 1u) << err;
  EXPECT_EQ(err, "ballarus: " + root +
                     "/a.bprof: its directory has been locked by another "
                     "process for 2 s (stopped? BALLARUS_LOCK_TIMEOUT); this "
                     "run's counts written to " +
                     root + "/" + beside[0] + " instead\n");
  EXPECT_EQ(Exec(root + "/" + beside[0])["main"], 1);
  // The holder gone, the lock is free again.
  r = Sh("./prog", root);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Exec(root + "/a.bprof")["main"], 2);
}

TEST(Store, DevNullSwitchesProfilingOffAndCreatesNothing) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = Fresh("devnull");
  BuildSmall(root);
  const std::string before = harness::Run("ls -a /dev", "/").out;
  CommandResult r = Sh("./prog; BALLARUS_VERBOSE=0 ./prog a", root,
                       {"BALLARUS_PROFILE=/dev/null"});
  EXPECT_EQ(r.out, "1\n2\n");
  EXPECT_EQ(r.err, "");
  const std::string after = harness::Run("ls -a /dev", "/").out;
  EXPECT_EQ(after, before);
  // (What an older runtime created there is removed again: only new
  // regular files named null.lock or null.<pid>.)
  if (after != before)
    harness::Run("for f in null.lock null.[0-9]*; do [ -f \"$f\" ] && "
                 "[ ! -c \"$f\" ] && ! printf '%s\\n' " +
                     Quote(before) +
                     " | grep -qx \"$f\" && rm -f \"$f\"; done; true",
                 "/dev");
  EXPECT_EQ(Files(root), (std::vector<std::string>{"a.c", "a.o", "prog"}));
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
