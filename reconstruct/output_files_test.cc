// output_files_test.cc — the files ballarus-reconstruct writes, in
// directories another user can write (reconstruct/output_file.h).
//
// The profile is a real one: a small C program compiled with the plugin,
// linked with the runtime and run.  The attacks run as an unprivileged
// user made up for the test (a uid and gid no account has, entered with
// setpriv), against files of root's that only root may read (0600): they
// need root and are skipped otherwise.  The scenario lives under /tmp,
// which that user can search, and is removed at the end.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

namespace fs = std::filesystem;

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir ? srcdir : ".") + "/ballarus/" + path;
}

std::string Q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs `command` with /bin/sh, stdout and stderr captured.
Result Sh(const std::string& command) {
  static int n = 0;
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(t ? t : "/tmp") + "/sh-" +
                           std::to_string(getpid()) + "-" + std::to_string(n++);
  const int rc = std::system(
      ("(" + command + ") >" + base + ".out 2>" + base + ".err").c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  return r;
}

const char kProgram[] =
    "#include <stdio.h>\n"
    "static int square(int x) { return x * x; }\n"
    "int main(void) {\n"
    "  int s = 0;\n"
    "  for (int i = 0; i < 10; ++i)\n"
    "    s += (i & 1) ? square(i) : i;\n"
    "  printf(\"%d\\n\", s);\n"
    "  return 0;\n"
    "}\n";

// The scenario: ROOT (0755, root's) holds build/ (the program, its
// profile), the victims and the directories of the attacker.
class OutputFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir[] = "/tmp/ballarus-output-files-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    chmod(dir, 0755);
    const std::string build = root_ + "/build";
    fs::create_directory(build);
    std::ofstream(build + "/prog.c") << kProgram;
    const Result r = Sh(
        "cd " + Q(build) + " && gcc -O0 -g -fplugin=" +
        Q(Runfile("plugin/ballarus.so")) +
        " -fplugin-arg-ballarus-mode=naive -c prog.c -o prog.o && gcc "
        "prog.o " +
        Q(Runfile("runtime/archive/libballarus_rt.a")) +
        " -lpthread -Wl,--export-dynamic-symbol=__ballarus_master -o prog && "
        "BALLARUS_PROFILE=" + Q(build + "/prog.bprof") + " ./prog");
    ASSERT_EQ(r.status, 0) << r.err;
    profile_ = build + "/prog.bprof";
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // The tool run in build/ with `args`.
  static std::string Tool(const std::string& args) {
    return "cd " + Q(root_ + "/build") + " && exec " +
           Q(Runfile("reconstruct/ballarus-reconstruct")) + " " + args;
  }

  // Skips the test unless an unprivileged user can be entered; sets
  // uid_/gid_ to one no account or group has.
  void NeedAttacker() {
    if (geteuid() != 0) GTEST_SKIP() << "the attacks need root (setpriv)";
    if (Sh("command -v setpriv").status != 0) GTEST_SKIP() << "no setpriv";
    for (uid_ = 61000; getpwuid(uid_) || getgrgid(uid_); ++uid_) {
    }
    gid_ = uid_;
  }
  // `command` as the attacker.
  std::string As(const std::string& command) const {
    return "setpriv --reuid=" + std::to_string(uid_) + " --regid=" +
           std::to_string(gid_) + " --clear-groups -- sh -c " + Q(command);
  }
  // A directory of the attacker's (0755), or root's file that only root
  // may read.
  std::string AttackerDir(const std::string& name) const {
    const std::string d = root_ + "/" + name;
    fs::create_directories(d);
    chown(d.c_str(), uid_, gid_);
    return d;
  }
  std::string Victim(const std::string& name) const {
    const std::string v = root_ + "/victim-" + name;
    std::ofstream(v) << kSecret;
    chmod(v.c_str(), 0600);
    return v;
  }
  static void ExpectIntact(const std::string& victim) {
    struct stat st;
    ASSERT_EQ(lstat(victim.c_str(), &st), 0) << victim;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << victim;
    EXPECT_EQ(st.st_mode & 07777, 0600u) << victim;
    EXPECT_TRUE(ReadFile(victim) == kSecret)
        << victim << " was written through";
  }

  static constexpr const char* kSecret = "root's own, 0600\n";
  static std::string root_, profile_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

std::string OutputFiles::root_, OutputFiles::profile_;

// The regular files under `dir`, relative to it.
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir));
  return out;
}

// `path` quoted for sh, but for a final "$$" left for the shell to expand.
std::string ShellWord(const std::string& path) {
  const size_t n = path.size();
  return n >= 2 && path.compare(n - 2, 2, "$$") == 0
             ? Q(path.substr(0, n - 2)) + "$$"
             : Q(path);
}

struct Writer {
  std::string args;  // "{OUT}": the output directory
  std::vector<std::string> scratch;  // names it used and removed
  bool in_out = false;  // writes into its working directory (gcov): run in {OUT}
};

std::string WithOut(std::string args, const std::string& out) {
  for (size_t at; (at = args.find("{OUT}")) != std::string::npos;)
    args.replace(at, 5, out);
  return args;
}

// Every writer, with a symbolic link of the attacker's at each name it
// writes (learnt from a run into a clean directory), at the scratch files
// html's dot run used, and at the temporary name gcda used (the pid's:
// the shell's pid, which exec makes the tool's): each link is replaced or
// ignored, never followed.
TEST_F(OutputFiles, PlantedLinksAreNotFollowed) {
  NeedAttacker();
  const std::vector<Writer> writers = {
      {"lcov --all-files -o {OUT}/out.info PROFILE", {}},
      {"cobertura --all-files -o {OUT}/out.xml PROFILE", {}},
      {"gcovr-json --all-files -o {OUT}/out.json PROFILE", {}},
      {"gcov -b --all-files PROFILE", {}, true},
      {"gcov -j --all-files PROFILE", {}, true},
      {"html --all-files -o {OUT}/html PROFILE",
       {"html/.ballarus-cfg.gv", "html/.ballarus-cfg.svg"}},
      {"gcda -o {OUT} PROFILE", {}},
      {"merge -o {OUT}/merged.bprof PROFILE", {}},
  };
  int k = 0;
  for (const Writer& w : writers) {
    SCOPED_TRACE(w.args);
    const std::string& args = w.args;
    const std::string clean = root_ + "/clean" + std::to_string(k);
    fs::create_directories(clean);
    std::string a = WithOut(args, clean);
    a.replace(a.find("PROFILE"), 7, Q(profile_));
    const auto command = [&](const std::string& out, const std::string& a) {
      return w.in_out ? "cd " + Q(out) + " && exec " +
                            Q(Runfile("reconstruct/ballarus-reconstruct")) +
                            " " + a
                      : Tool(a);
    };
    Result r = Sh(command(clean, a));
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> names = FilesUnder(clean);
    ASSERT_FALSE(names.empty());
    const std::vector<std::string> finals = names;
    if (w.args.rfind("gcda", 0) == 0)
      for (const std::string& n : finals) names.push_back(n + ".tmp.$$");
    names.insert(names.end(), w.scratch.begin(), w.scratch.end());

    const std::string dir = AttackerDir("attack" + std::to_string(k));
    std::string plant;
    std::vector<std::string> victims;
    for (size_t i = 0; i < names.size(); ++i) {
      victims.push_back(Victim(std::to_string(k) + "-" + std::to_string(i)));
      // The attacker's shell gets the name as $1, its $$ expanded by ours.
      plant += As("mkdir -p \"$(dirname \"$1\")\" && ln -s " +
                  Q(victims.back()) + " \"$1\"") +
               " sh " + ShellWord(dir + "/" + names[i]) + " && ";
    }
    std::string attacked = WithOut(args, dir);
    attacked.replace(attacked.find("PROFILE"), 7, Q(profile_));
    // $$ in the plants is the inner shell's pid, which exec hands on.
    r = Sh("sh -c " + Q(plant + command(dir, attacked)));
    EXPECT_EQ(r.status, 0) << r.err;
    for (const std::string& v : victims) ExpectIntact(v);
    for (const std::string& n : finals) {
      struct stat st;
      ASSERT_EQ(lstat((dir + "/" + n).c_str(), &st), 0) << n;
      EXPECT_TRUE(S_ISREG(st.st_mode)) << n << " is still the attacker's link";
      EXPECT_EQ(st.st_uid, 0u) << n;
    }
    ++k;
  }
}

// A directory on the way that is the attacker's link to a directory of
// root's: the writers refuse it with one line naming the path, and write
// nothing there.
TEST_F(OutputFiles, LinkedDirectoryOfAnotherUserIsRefused) {
  NeedAttacker();
  const std::string dir = AttackerDir("linkdir");
  const std::string target = root_ + "/roots-dir";
  fs::create_directories(target);
  chmod(target.c_str(), 0700);
  ASSERT_EQ(Sh(As("ln -s " + Q(target) + " " + Q(dir + "/sub"))).status, 0);
  for (const std::string& args :
       {"lcov --all-files -o " + Q(dir + "/sub/out.info"),
        "html --all-files -o " + Q(dir + "/sub"),
        "gcda -o " + Q(dir + "/sub"),
        "merge -o " + Q(dir + "/sub/merged.bprof")}) {
    SCOPED_TRACE(args);
    const Result r = Sh(Tool(args + " " + Q(profile_)));
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(target)) << "written through " << dir << "/sub";
  }
}

// A report that replaces one of mode 0600 stays 0600: the rename into
// place never widens what the old file allowed.
TEST_F(OutputFiles, ReplacedReportKeepsItsNarrowerMode) {
  const std::string out = root_ + "/narrow.info";
  std::ofstream(out) << "old\n";
  chmod(out.c_str(), 0600);
  const Result r =
      Sh(Tool("lcov --all-files -o " + Q(out) + " " + Q(profile_)));
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(ReadFile(out).find("end_of_record"), std::string::npos);
}

// A merge killed while writing leaves OUT.tmp.<pid>.<n>; the next merge
// into OUT removes it (its writer is dead), but not the temporary file of
// a writer still alive.
TEST_F(OutputFiles, KilledMergesTemporaryIsRemovedByTheNext) {
  const std::string dir = root_ + "/killed";
  fs::create_directories(dir);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // now a dead writer's pid
  const std::string dead = dir + "/m.bprof.tmp." + std::to_string(child) + ".1";
  const std::string alive =
      dir + "/m.bprof.tmp." + std::to_string(getpid()) + ".1";
  std::ofstream(dead) << "half a profile";
  std::ofstream(alive) << "being written";
  const Result r =
      Sh(Tool("merge -o " + Q(dir + "/m.bprof") + " " + Q(profile_)));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dead)) << "the killed merge's temporary file stayed";
  EXPECT_TRUE(fs::exists(alive)) << "a live writer's temporary was removed";
  EXPECT_TRUE(fs::exists(dir + "/m.bprof"));
}

}  // namespace
}  // namespace ballarus
