// ballarus_rt_test.cc — end-to-end tests of the runtime: runs the C test
// programs of testdata/ (hand-built TUs linked with libballarus_rt, no
// plugin needed) in fresh directories under TEST_TMPDIR and checks the
// profiles they write, value by value.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/profile_io.h"
#include "runtime/testdata/rt_test_tus.h"

namespace {

// The blob a test program builds for TU `tu` (rt_make_blob), with or
// without a home directory.
std::vector<unsigned char> RtBlob(const char* home, const char* tu,
                                  const std::string& body, uint64_t n) {
  std::vector<unsigned char> b(BALLARUS_META_HEADER_SIZE + RT_NAMES_MAX +
                               body.size());
  b.resize(rt_make_blob(b.data(), b.size(), home, tu, body.data(), body.size(),
                        n));
  return b;
}
uint64_t HeaderField(const std::vector<unsigned char>& b, size_t off) {
  uint64_t v;
  memcpy(&v, b.data() + off, 8);
  return v;
}
uint64_t RtStamp(const char* home, const char* tu, const std::string& body) {
  return HeaderField(RtBlob(home, tu, body, 0), 16);
}
uint64_t RtIdentity(const char* home, const char* tu) {
  return HeaderField(RtBlob(home, tu, "", 0), 40);
}
#define STAMP(TU, BODY) RtStamp(nullptr, TU, BODY)

std::string Runfile(const std::string& name) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "ballarus") +
         "/runtime/" + name;
}

// A fresh, empty directory for one test.
std::string FreshDir(const std::string& name) {
  std::string dir = std::string(getenv("TEST_TMPDIR")) + "/" + name;
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

struct ProcessResult {
  int status = -1;   // exit status, or -1 if it did not exit normally
  pid_t pid = 0;
  std::string err;   // its stderr
};

// The address space Exec's programs may use (RLIMIT_AS), when not 0.
rlim_t g_address_space = 0;

// Runs `prog args` in `dir` with the environment changed by `env`
// (name -> value; an empty value unsets).
ProcessResult Exec(const std::string& dir, const std::string& prog,
         const std::vector<std::string>& args,
         const std::map<std::string, std::string>& env = {}) {
  ProcessResult r;
  std::string errfile = dir + "/.stderr";
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(120);
    if (g_address_space != 0) {
      struct rlimit lim = {g_address_space, g_address_space};
      if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(123);
    }
    unsetenv("BALLARUS_PROFILE");
    unsetenv("BALLARUS_VERBOSE");
    for (const auto& kv : env) {
      if (kv.second.empty())
        unsetenv(kv.first.c_str());
      else
        setenv(kv.first.c_str(), kv.second.c_str(), 1);
    }
    int fd = open(errfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(121);
    std::vector<char*> argv;
    std::string path = Runfile(prog);
    argv.push_back(const_cast<char*>(path.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    _exit(122);
  }
  r.pid = pid;
  int st = 0;
  EXPECT_EQ(waitpid(pid, &st, 0), pid);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(errfile);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  unlink(errfile.c_str());
  return r;
}

struct Profile {
  bool ok = false;
  std::string error;
  uint64_t runs = 0;
  // stamp -> (runs, counters, identity)
  struct Rec {
    uint64_t runs = 0, identity = 0;
    std::vector<uint64_t> counters;
    // (function, key) -> count, as stored (the parser checked the order).
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> sparse;
  };
  std::map<uint64_t, Rec> records;
};

Profile Read(const std::string& path) {
  Profile out;
  ballarus_profile p;
  char err[512] = "";
  if (ballarus_profile_read_file(path.c_str(), &p, err, sizeof err) != 0) {
    out.error = err;
    return out;
  }
  out.ok = true;
  out.runs = p.runs;
  for (uint32_t i = 0; i < p.n_records; i++) {
    const ballarus_profile_record& r = p.records[i];
    Profile::Rec& rec = out.records[r.stamp];
    rec.runs = r.runs;
    rec.identity = r.identity;
    rec.counters.assign(r.counters, r.counters + r.n_counters);
    for (uint64_t s = 0; s < r.n_sparse; s++)
      rec.sparse[{r.sparse[s].function, r.sparse[s].key}] = r.sparse[s].count;
  }
  ballarus_profile_free(&p);
  return out;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  const std::string lock = ".ballarus-" + std::to_string(geteuid()) + ".lock";
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    // The directory's lock file stays (it holds the redo log): checked
    // by OneRunWritesExactCounts.
    if (n != "." && n != ".." && n != lock) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Expected counters of alpha/beta after programs counted a total of `n`
// over `calls` calls of count() (beta gets +j once per call).
std::vector<uint64_t> Alpha(uint64_t n) {
  std::vector<uint64_t> v;
  for (int j = 0; j < RT_ALPHA_N; j++) v.push_back(RT_ALPHA_COUNT(n, j));
  return v;
}
std::vector<uint64_t> Beta(uint64_t n, uint64_t calls) {
  std::vector<uint64_t> v;
  for (int j = 0; j < RT_BETA_N; j++) v.push_back(n + calls * j);
  return v;
}
std::vector<uint64_t> Scaled(int n_counters, uint64_t n) {
  std::vector<uint64_t> v;
  for (int j = 0; j < n_counters; j++) v.push_back(n * (j + 1));
  return v;
}

const uint64_t kAlpha = STAMP("alpha", RT_ALPHA_BODY);
const uint64_t kBeta = STAMP("beta", RT_BETA_BODY);
const uint64_t kHost = STAMP("host", RT_HOST_BODY);
const uint64_t kLib = STAMP("lib", RT_LIB_BODY);

void ExpectAlphaBeta(const Profile& p, uint64_t n, uint64_t calls,
                     uint64_t runs) {
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.runs, runs);
  ASSERT_EQ(p.records.size(), 2u);
  ASSERT_EQ(p.records.count(kAlpha), 1u);
  ASSERT_EQ(p.records.count(kBeta), 1u);
  EXPECT_EQ(p.records.at(kAlpha).counters, Alpha(n));
  EXPECT_EQ(p.records.at(kBeta).counters, Beta(n, calls));
  EXPECT_EQ(p.records.at(kAlpha).identity, RtIdentity(nullptr, "alpha"));
  EXPECT_EQ(p.records.at(kBeta).identity, RtIdentity(nullptr, "beta"));
  EXPECT_EQ(p.records.at(kAlpha).runs, runs);
  EXPECT_EQ(p.records.at(kBeta).runs, runs);
}

TEST(Runtime, OneRunWritesExactCounts) {
  std::string dir = FreshDir("one_run");
  ProcessResult r = Exec(dir, "rt_prog", {"count", "10"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 10, 1, 1);
  // Only the profile and the directory's lock file, private, its redo log
  // cleared (state 0 after the magic); no temporary left behind.
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ballarus.profile"}));
  const std::string lock =
      dir + "/.ballarus-" + std::to_string(geteuid()) + ".lock";
  struct stat st;
  ASSERT_EQ(lstat(lock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string log = ReadBytes(lock);
  ASSERT_GE(log.size(), 64u);
  EXPECT_EQ(log.substr(0, 12), std::string("BLRSRDO1\0\0\0\0", 12));
}

TEST(Runtime, TwoRunsMergeToTheSum) {
  std::string dir = FreshDir("two_runs");
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "10"}).status, 0);
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "7"}).status, 0);
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 17, 2, 2);
}

TEST(Runtime, ExplicitDumpThenExitDoesNotDoubleCount) {
  std::string dir = FreshDir("dump_mid");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_prog", {"dumpmid", "10"}, {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  // Two dumps (the explicit one and the exit one), each with its own
  // counts, and one run: one process.
  ExpectAlphaBeta(Read(path), 20, 2, 1);
}

TEST(Runtime, ResetDiscardsCountsNotYetDumped) {
  std::string dir = FreshDir("reset");
  ASSERT_EQ(Exec(dir, "rt_prog", {"reset", "10", "3"}).status, 0);
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 3, 1, 1);
}

TEST(Runtime, ForkChildCountsOnlyItsOwn) {
  std::string dir = FreshDir("fork_one_file");
  ASSERT_EQ(Exec(dir, "rt_prog", {"fork", "10", "4"}).status, 0);
  // Parent 10 (one count call), child 4 (its own call only).
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 14, 2, 2);
}

TEST(Runtime, PercentPExpandsToEachProcessPid) {
  std::string dir = FreshDir("fork_pid");
  ProcessResult r = Exec(dir, "rt_prog", {"fork", "10", "4"},
               {{"BALLARUS_PROFILE", "out.%p.%%.prof"}});
  ASSERT_EQ(r.status, 0);
  std::string parent = "out." + std::to_string(r.pid) + ".%.prof";
  std::vector<std::string> profiles;
  for (const std::string& n : ListDir(dir))
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".prof") == 0)
      profiles.push_back(n);
  ASSERT_EQ(profiles.size(), 2u);
  std::string child = profiles[0] == parent ? profiles[1] : profiles[0];
  ASSERT_NE(child, parent);
  ASSERT_EQ(child.rfind("out.", 0), 0u);
  ExpectAlphaBeta(Read(dir + "/" + parent), 10, 1, 1);
  ExpectAlphaBeta(Read(dir + "/" + child), 4, 1, 1);
}

TEST(Runtime, EightConcurrentProcessesSumExactly) {
  std::string dir = FreshDir("eight");
  ProcessResult r = Exec(dir, "rt_prog", {"forkmany", "8", "20000"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  // 8 children dump 20000 each; the parent counted nothing but linked both
  // TUs, so it adds a run to each, as under gcov: 9 runs.
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 8 * 20000, 8, 9);
}

TEST(Runtime, ConcurrentThreadsDumpingLoseNothing) {
  std::string dir = FreshDir("threads");
  ProcessResult r = Exec(dir, "rt_prog", {"threads", "4", "3000"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  Profile p = Read(dir + "/ballarus.profile");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.records.at(kAlpha).counters, Alpha(4 * 3000));
  EXPECT_EQ(p.records.at(kBeta).counters, Beta(4 * 3000, 4));
  // Many dumps, each merged, and one run: one process.
  EXPECT_EQ(p.records.at(kAlpha).runs, 1u);
  EXPECT_EQ(p.records.at(kBeta).runs, 1u);
  EXPECT_EQ(p.runs, 1u);
}

TEST(Runtime, ForkDuringADumpNeverLeavesTheDirectoryLocked) {
  // A thread dumps in a loop while main forks 40 children: a fork that
  // lands inside a dump gives the child a copy of the locked directory
  // descriptor.  The child must neither keep the lock (its own exit dump,
  // and the parent's next ones, would wait) nor release the parent's.
  std::string dir = FreshDir("forkdump");
  ProcessResult r = Exec(dir, "rt_prog", {"forkdump", "40", "100"},
                         {{"BALLARUS_LOCK_TIMEOUT", "5"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");  // no "locked by another process" line
  const uint64_t rounds = std::stoull(ReadBytes(dir + "/forkdump.rounds"));
  EXPECT_GE(rounds, 1u);
  // Exact: 40 children x 100 steps in one count() call each, and the
  // dumper's rounds of one step each; 41 runs, one per process.
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 40 * 100 + rounds,
                  40 + rounds, 41);
}

ino_t Inode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// With homes (RT_HOME), each TU in its own file: a process adds one run to
// every TU it linked, counted or not; files are written in place (the same
// file, no rewrite), unless the file has another name.
TEST(Runtime, EveryLinkedTuGetsOneRunPerProcessInItsOwnFile) {
  std::string dir = FreshDir("runs_per_object");
  const std::map<std::string, std::string> env = {{"RT_HOME", dir}};
  const std::string a = dir + "/alpha.bprof", b = dir + "/beta.bprof";
  // count 0: alpha's code does not run, beta's does (its +1, +2).
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "0"}, env).status, 0);
  const uint64_t kA = RtStamp(dir.c_str(), "alpha", RT_ALPHA_BODY);
  const uint64_t kB = RtStamp(dir.c_str(), "beta", RT_BETA_BODY);
  Profile pa = Read(a), pb = Read(b);
  ASSERT_TRUE(pa.ok && pb.ok) << pa.error << pb.error;
  EXPECT_EQ(pa.records.at(kA).runs, 1u);
  EXPECT_EQ(pa.records.at(kA).counters, Alpha(0));
  EXPECT_EQ(pb.records.at(kB).runs, 1u);
  const ino_t ia = Inode(a), ib = Inode(b);
  ProcessResult r = Exec(dir, "rt_prog", {"count", "0"}, env);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  pa = Read(a);
  pb = Read(b);
  ASSERT_TRUE(pa.ok && pb.ok) << pa.error << pb.error;
  EXPECT_EQ(pa.runs, 2u);
  EXPECT_EQ(pa.records.at(kA).runs, 2u);
  EXPECT_EQ(pa.records.at(kA).counters, Alpha(0));
  EXPECT_EQ(Inode(a), ia);  // in place
  EXPECT_EQ(pb.records.at(kB).runs, 2u);
  EXPECT_EQ(pb.records.at(kB).counters, Beta(0, 2));
  EXPECT_EQ(Inode(b), ib);  // in place too: its changed bytes written
  // alpha's file with a second name: rewritten, the other name untouched.
  ASSERT_EQ(link(a.c_str(), (dir + "/kept").c_str()), 0);
  const std::string before = ReadBytes(a);
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "3"}, env).status, 0);
  EXPECT_EQ(ReadBytes(dir + "/kept"), before);
  pa = Read(a);
  ASSERT_TRUE(pa.ok) << pa.error;
  EXPECT_EQ(pa.records.at(kA).runs, 3u);
  EXPECT_EQ(pa.records.at(kA).counters, Alpha(3));
  ASSERT_EQ(unlink((dir + "/kept").c_str()), 0);
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "0"}, env).status, 0);
  pa = Read(a);
  ASSERT_TRUE(pa.ok) << pa.error;
  EXPECT_EQ(pa.records.at(kA).runs, 4u);
  EXPECT_EQ(pa.records.at(kA).counters, Alpha(3));
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"alpha.bprof",
                                                     "beta.bprof"}));
}

TEST(Runtime, ChdirDoesNotMoveTheDefaultProfile) {
  std::string dir = FreshDir("chdir");
  ASSERT_EQ(system(("mkdir '" + dir + "/sub'").c_str()), 0);
  ASSERT_EQ(Exec(dir, "rt_prog", {"chdir", "sub", "5"}).status, 0);
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 5, 1, 1);
  EXPECT_TRUE(ListDir(dir + "/sub").empty());
}

TEST(Runtime, GarbageProfileIsPreservedAndANewOneStarted) {
  std::string dir = FreshDir("garbage");
  std::string path = dir + "/ballarus.profile";
  { std::ofstream(path) << "not a profile"; }
  ProcessResult r = Exec(dir, "rt_prog", {"count", "3"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(ReadBytes(path + ".corrupt"), "not a profile");
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": damaged (offset 0: bad magic (not a ballarus "
                       "profile)); kept as " +
                       path + ".corrupt, a new profile started\n");
  ExpectAlphaBeta(Read(path), 3, 1, 1);
  // The next run merges silently.
  r = Exec(dir, "rt_prog", {"count", "2"});
  EXPECT_EQ(r.err, "");
  ExpectAlphaBeta(Read(path), 5, 2, 2);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ballarus.profile",
                                                    "ballarus.profile.corrupt"}));
}

// A sparse file of gigabytes at the profile path: refused after its 40-byte
// header, never read whole (the program may use 1 GiB of address space).
TEST(Runtime, AHugeFileIsRefusedAfterItsHeader) {
  std::string dir = FreshDir("huge");
  std::string path = dir + "/ballarus.profile";
  { std::ofstream create(path); }
  ASSERT_EQ(truncate(path.c_str(), 8ll << 30), 0);
  g_address_space = 1ull << 30;
  ProcessResult r = Exec(dir, "rt_prog", {"count", "3"});
  g_address_space = 0;
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": damaged (offset 0: bad magic (not a ballarus "
                       "profile)); kept as " +
                       path + ".corrupt, a new profile started\n");
  ExpectAlphaBeta(Read(path), 3, 1, 1);
}

// A file with a sound header but more bytes than memory allows is not
// damaged: it stays as it is, and this run's counts go beside it.
TEST(Runtime, AProfileTooLargeForMemoryIsNotCalledDamaged) {
  std::string dir = FreshDir("toolarge");
  std::string path = dir + "/ballarus.profile";
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "1"}).status, 0);
  const std::string head = ReadBytes(path).substr(0, BALLARUS_PROFILE_HEADER_SIZE);
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << head; }
  ASSERT_EQ(truncate(path.c_str(), 64ll << 30), 0);
  g_address_space = 1ull << 30;
  ProcessResult r = Exec(dir, "rt_prog", {"count", "3"});
  g_address_space = 0;
  ASSERT_EQ(r.status, 0);
  const std::string beside = path + "." + std::to_string(r.pid);
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": cannot be read (out of memory reading " +
                       std::to_string(64ll << 30) +
                       " bytes); this run's counts written to " + beside +
                       " instead\n");
  ExpectAlphaBeta(Read(beside), 3, 1, 1);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{
                              "ballarus.profile",
                              "ballarus.profile." + std::to_string(r.pid)}));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 64ll << 30);
}

// A profile of another build of alpha (same identity, other body).
void WriteOtherBuildOfAlpha(const std::string& path) {
  std::vector<unsigned char> blob =
      RtBlob(nullptr, "alpha", "alpha, as built last week", 1);
  ballarus_meta_header h;
  memcpy(&h, blob.data(), sizeof h);
  ASSERT_EQ(h.identity, RtIdentity(nullptr, "alpha"));
  uint64_t counter = 42;
  ballarus_profile_record rec = {h.stamp, h.identity, 1, blob.data(),
                                 blob.size(), &counter, 1, nullptr, 0};
  ballarus_profile old = {1, 1, &rec};
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &old, err, sizeof err), 0)
      << err;
}

TEST(Runtime, AnotherBuildOfATuIsReplacedSilently) {
  std::string dir = FreshDir("rebuilt");
  std::string path = dir + "/ballarus.profile";
  WriteOtherBuildOfAlpha(path);
  ProcessResult r = Exec(dir, "rt_prog", {"count", "2"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  // The old build of alpha is gone with its run: the new one's runs and
  // counts are this run's, and so are the file's runs (its largest
  // record's).
  Profile p = Read(path);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.runs, 1u);
  ASSERT_EQ(p.records.size(), 2u);
  EXPECT_EQ(p.records.at(kAlpha).counters, Alpha(2));
  EXPECT_EQ(p.records.at(kAlpha).runs, 1u);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"ballarus.profile"});
}

TEST(Runtime, AnotherBuildIsNamedWhenVerbose) {
  std::string dir = FreshDir("rebuilt_verbose");
  std::string path = dir + "/ballarus.profile";
  WriteOtherBuildOfAlpha(path);
  ProcessResult r =
      Exec(dir, "rt_prog", {"count", "2"}, {{"BALLARUS_VERBOSE", "1"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("ballarus: alpha.c: overwriting the profile data of "
                       "an earlier build in " +
                       path + "\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("0x"), std::string::npos) << r.err;  // no hex ids
}

// A record with this program's stamp whose counter count disagrees with
// the build (its header says so consistently, checks and all): what
// ballarus-reconstruct rejects.  It is set aside once, not met again at
// every run with "cannot merge".
TEST(Runtime, ARecordDisagreeingWithItsBuildIsSetAsideOnce) {
  std::string dir = FreshDir("disagree");
  std::string path = dir + "/ballarus.profile";
  std::vector<unsigned char> blob =
      RtBlob(nullptr, "alpha", RT_ALPHA_BODY, RT_ALPHA_N + 1);
  ballarus_meta_header h;
  memcpy(&h, blob.data(), sizeof h);
  ASSERT_EQ(h.stamp, kAlpha);
  std::vector<uint64_t> counters(RT_ALPHA_N + 1, 7);
  ballarus_profile_record rec = {h.stamp, h.identity, 1, blob.data(),
                                 blob.size(), counters.data(), counters.size(),
                                 nullptr, 0};
  ballarus_profile old = {1, 1, &rec};
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &old, err, sizeof err), 0)
      << err;
  const std::string bytes = ReadBytes(path);
  ProcessResult r = Exec(dir, "rt_prog", {"count", "3"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": damaged (the record of alpha.c holds 6 counters, "
                       "its build 5); kept as " +
                       path + ".corrupt, a new profile started\n");
  EXPECT_EQ(ReadBytes(path + ".corrupt"), bytes);
  ExpectAlphaBeta(Read(path), 3, 1, 1);
  r = Exec(dir, "rt_prog", {"count", "2"});
  EXPECT_EQ(r.err, "");
  ExpectAlphaBeta(Read(path), 5, 2, 2);
}

TEST(Runtime, DlclosedLibraryDumpsItsOwnTu) {
  std::string dir = FreshDir("dlclose");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_host", {Runfile("librt_lib.so"), "dlclose", "5"},
               {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Right after dlclose: the library's TU only.
  Profile mid = Read(path + ".after_dlclose");
  ASSERT_TRUE(mid.ok) << mid.error;
  ASSERT_EQ(mid.records.size(), 1u);
  EXPECT_EQ(mid.records.at(kLib).counters, Scaled(RT_LIB_N, 5));
  // At exit the host adds its own.
  Profile end = Read(path);
  ASSERT_TRUE(end.ok) << end.error;
  ASSERT_EQ(end.records.size(), 2u);
  EXPECT_EQ(end.records.at(kLib).counters, Scaled(RT_LIB_N, 5));
  EXPECT_EQ(end.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  // One process: one run of each, the library's written at dlclose.
  EXPECT_EQ(end.records.at(kLib).runs, 1u);
  EXPECT_EQ(end.records.at(kHost).runs, 1u);
  EXPECT_EQ(end.runs, 1u);
}

TEST(Runtime, DumpReachesLoadedLibrariesThroughTheExportedMaster) {
  std::string dir = FreshDir("dump_chain");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_host", {Runfile("librt_lib.so"), "dump", "5"},
               {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // __ballarus_dump() from the executable wrote the library's TU too, in
  // one transaction.
  Profile mid = Read(path + ".after_dump");
  ASSERT_TRUE(mid.ok) << mid.error;
  ASSERT_EQ(mid.records.size(), 2u);
  EXPECT_EQ(mid.runs, 1u);
  EXPECT_EQ(mid.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  EXPECT_EQ(mid.records.at(kLib).counters, Scaled(RT_LIB_N, 5));
  // Then the library counted 5 more, dumped at dlclose; the host nothing.
  Profile end = Read(path);
  ASSERT_TRUE(end.ok) << end.error;
  EXPECT_EQ(end.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  EXPECT_EQ(end.records.at(kLib).counters, Scaled(RT_LIB_N, 10));
  // One process, however many dumps: one run of each.
  EXPECT_EQ(end.records.at(kHost).runs, 1u);
  EXPECT_EQ(end.records.at(kLib).runs, 1u);
}

TEST(Runtime, WithoutTheExportEachModuleStillDumpsItsOwn) {
  std::string dir = FreshDir("dump_noexport");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_host_noexport", {Runfile("librt_lib.so"), "dump", "5"},
               {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // The executable's dump reaches only its own TU...
  Profile mid = Read(path + ".after_dump");
  ASSERT_TRUE(mid.ok) << mid.error;
  ASSERT_EQ(mid.records.size(), 1u);
  EXPECT_EQ(mid.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  // ...and the library still dumps all of its counts at dlclose.
  Profile end = Read(path);
  ASSERT_TRUE(end.ok) << end.error;
  EXPECT_EQ(end.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  EXPECT_EQ(end.records.at(kLib).counters, Scaled(RT_LIB_N, 10));
}

TEST(Runtime, AtExitEachModuleWritesItsOwnTusOnceAfterItsDestructors) {
  std::string dir = FreshDir("exit_modules");
  std::string path = dir + "/p";
  ProcessResult r =
      Exec(dir, "rt_host", {Runfile("librt_lib.so"), "exit", "5"},
           {{"BALLARUS_PROFILE", path},
            {"BALLARUS_VERBOSE", "1"},
            {"RT_LIB_COUNT_AT_EXIT", "1"}});
  ASSERT_EQ(r.status, 0) << r.err;
  // The library's destructor, run after the executable's finalisation,
  // counted once more: in the profile.
  Profile end = Read(path);
  ASSERT_TRUE(end.ok) << end.error;
  EXPECT_EQ(end.records.at(kHost).counters, Scaled(RT_HOST_N, 5));
  EXPECT_EQ(end.records.at(kLib).counters, Scaled(RT_LIB_N, 6));
  EXPECT_EQ(end.records.at(kHost).runs, 1u);
  EXPECT_EQ(end.records.at(kLib).runs, 1u);
  // Each TU written once: one record by each module's destructor (a dump
  // of the whole chain by the executable would write the library's record
  // a second time once its destructor had counted).
  const std::string line = "ballarus: dumped 1 TU records to " + path + "\n";
  size_t lines = 0;
  for (size_t at = r.err.find("ballarus: dumped"); at != std::string::npos;
       at = r.err.find("ballarus: dumped", at + 1)) {
    EXPECT_EQ(r.err.compare(at, line.size(), line), 0) << r.err;
    lines++;
  }
  EXPECT_EQ(lines, 2u) << r.err;
}

TEST(Runtime, BadDescriptorIsSkippedWithAWarning) {
  std::string dir = FreshDir("bad_tu");
  ProcessResult r = Exec(dir, "rt_badtu", {"6"});
  ASSERT_EQ(r.status, 0);
  // Descriptor order is link order: the bad ones are three of 0 .. 4.
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.err, m,
      std::regex("ballarus: TU descriptor ([0-4]): (.*); TU skipped\n"
                 "ballarus: TU descriptor ([0-4]): (.*); TU skipped\n"
                 "ballarus: TU descriptor ([0-4]): (.*); TU skipped\n")))
      << r.err;
  EXPECT_LT(m[1].str(), m[3].str());
  EXPECT_LT(m[3].str(), m[5].str());
  std::vector<std::string> problems = {m[2].str(), m[4].str(), m[6].str()};
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                "bad metadata magic", "no path table array",
                "unsupported metadata version (built by another ballarus?)"}));
  Profile p = Read(dir + "/ballarus.profile");
  ASSERT_TRUE(p.ok) << p.error;
  // Metadata version 2 (objects of older builds) is still profiled.
  ASSERT_EQ(p.records.size(), 2u);
  EXPECT_EQ(p.records.at(kBeta).counters, Beta(6, 1));
  const uint64_t old_stamp = STAMP("oldver", RT_LIB_BODY);
  ASSERT_EQ(p.records.count(old_stamp), 1u);
  EXPECT_EQ(p.records.at(old_stamp).counters,
            std::vector<uint64_t>(RT_LIB_N, 6));
}

TEST(Runtime, DescriptorsOfAnotherLayoutAreRefusedWholesale) {
  // Objects of an older plugin (three-pointer descriptors) must not be read
  // as ours: 2 TUs do not fill a whole number of descriptors; 5 TUs fill 3,
  // the first with a valid anchor, so only checking every anchor saves it.
  std::string dir = FreshDir("old_layout");
  ProcessResult two = Exec(dir, "rt_oldtu2", {"3"});
  EXPECT_EQ(two.status, 0);
  EXPECT_EQ(two.err,
            "ballarus: section ballarus_tus holds 48 bytes, not a whole "
            "number of 40-byte TU descriptors (objects built by another "
            "ballarus version?); this module is not profiled\n");
  ProcessResult five = Exec(dir, "rt_oldtu5", {"3"});
  EXPECT_EQ(five.status, 0);
  EXPECT_EQ(five.err,
            "ballarus: TU descriptor 1 does not point at this runtime "
            "(objects built by another ballarus version?); this module is "
            "not profiled\n");
  // Nothing profiled, nothing written.
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{});
}

TEST(Runtime, UnwritableProfileWarnsAndNeverFailsTheProgram) {
  std::string dir = FreshDir("unwritable");
  { std::ofstream(dir + "/file") << "x"; }
  std::string path = dir + "/file/p";  // its "directory" is a regular file
  ProcessResult r = Exec(dir, "rt_prog", {"count", "2"}, {{"BALLARUS_PROFILE", path}});
  EXPECT_EQ(r.status, 0);
  // One line: the file, the reason, what is lost (at exit: no later dump).
  const std::string head = "ballarus: " + path +
                           ": cannot open its directory (" + dir +
                           "/file is not a directory); this run's counts of "
                           "2 translation units (";
  EXPECT_TRUE(r.err == head + "alpha.c, ...) are lost\n" ||
              r.err == head + "beta.c, ...) are lost\n")
      << r.err;
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"file"});
}

TEST(Runtime, ExplicitDumpThatFailsKeepsTheCounts) {
  // dumpmid: the first dump fails (not exiting: counts kept), the exit
  // dump fails too (lost), and both say so.
  std::string dir = FreshDir("unwritable_mid");
  { std::ofstream(dir + "/file") << "x"; }
  std::string path = dir + "/file/p";
  ProcessResult r =
      Exec(dir, "rt_prog", {"dumpmid", "2"}, {{"BALLARUS_PROFILE", path}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("are kept for the next dump\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("are lost\n"), std::string::npos) << r.err;
}

TEST(Runtime, VerboseLogsDumps) {
  std::string dir = FreshDir("verbose");
  ProcessResult r = Exec(dir, "rt_prog", {"count", "1"}, {{"BALLARUS_VERBOSE", "1"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "ballarus: registered 2 TUs; profiles beside their "
                       "objects, e.g. " +
                       dir +
                       "/ballarus.profile\nballarus: dumped 2 TU records to " +
                       dir + "/ballarus.profile\n");
}

// ---------------------------------------------------------------------------
// Hashed path tables (rt_path.c): __ballarus_path_add and its dump.

const uint64_t kPaths = STAMP("paths", RT_PATHS_BODY);
const uint64_t kTwin = STAMP("twin", RT_TWIN_BODY);
using Sparse = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;

// The counts of the shared random workload (rt_work_step) for `seeds`,
// replayed single-threaded: every step counts its path once; the cut paths
// are counted and undone, so they cancel.
Sparse Workload(const std::vector<uint64_t>& seeds, long steps) {
  Sparse want;
  for (uint64_t seed : seeds) {
    uint64_t s = seed;
    for (long i = 0; i < steps; i++) {
      rt_step st = rt_work_step(&s, static_cast<uint64_t>(i));
      want[{st.table == 0 ? RT_PATHS_FN0 : RT_PATHS_FN1, st.key}] += 1;
    }
  }
  return want;
}

size_t KeysOf(const Sparse& s, uint64_t function) {
  size_t n = 0;
  for (const auto& kv : s) n += kv.first.first == function;
  return n;
}

const Profile::Rec& PathsRecord(const Profile& p) {
  static const Profile::Rec none;
  EXPECT_TRUE(p.ok) << p.error;
  auto it = p.records.find(kPaths);
  EXPECT_NE(it, p.records.end());
  return it == p.records.end() ? none : it->second;
}

TEST(RuntimePaths, ThreadsCountingAndDumpingWhileTablesGrowAreExact) {
  std::string dir = FreshDir("paths_threads");
  const int kThreads = 6;
  const long kSteps = 60000;
  ProcessResult r = Exec(dir, "rt_path",
                         {"threads", std::to_string(kThreads),
                          std::to_string(kSteps)});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Profile p = Read(dir + "/ballarus.profile");
  const Profile::Rec& rec = PathsRecord(p);
  std::vector<uint64_t> seeds;
  for (int t = 0; t < kThreads; t++) seeds.push_back(1000 + t);
  Sparse want = Workload(seeds, kSteps);
  // Many more keys per table than a first generation holds (248 slots), so
  // the tables grew while 6 threads counted and others dumped.
  ASSERT_GT(KeysOf(want, RT_PATHS_FN0), 2000u);
  ASSERT_GT(KeysOf(want, RT_PATHS_FN1), 2000u);
  EXPECT_EQ(rec.sparse.size(), want.size());
  EXPECT_TRUE(rec.sparse == want);
  uint64_t total = 0;
  for (const auto& kv : rec.sparse) total += kv.second;
  EXPECT_EQ(total, uint64_t{kThreads} * kSteps);
  // Dense counters alongside: one per step, and the cuts' +1/-1 cancel.
  EXPECT_EQ(rec.counters,
            (std::vector<uint64_t>{uint64_t{kThreads} * kSteps, 0}));
  EXPECT_EQ(rec.runs, 1u);  // many dumps, one process
}

// Path counts of a function that has no hashed path table in this build
// (ballarus-reconstruct rejects the record): set aside, never merged into.
TEST(RuntimePaths, PathCountsOfAFunctionWithoutATableAreNotMergedInto) {
  std::string dir = FreshDir("paths_notable");
  std::string path = dir + "/p";
  std::vector<unsigned char> blob =
      RtBlob(nullptr, "paths", RT_PATHS_BODY, RT_PATHS_N);
  ballarus_meta_header h;
  memcpy(&h, blob.data(), sizeof h);
  ASSERT_EQ(h.stamp, kPaths);
  std::vector<uint64_t> counters(RT_PATHS_N, 0);
  ballarus_sparse_entry bad = {2, 1, 5};
  ASSERT_NE(bad.function, RT_PATHS_FN0);
  ASSERT_NE(bad.function, RT_PATHS_FN1);
  ballarus_profile_record rec = {h.stamp,        h.identity,      1,
                                 blob.data(),    blob.size(),     counters.data(),
                                 counters.size(), &bad,           1};
  ballarus_profile old = {1, 1, &rec};
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &old, err, sizeof err), 0)
      << err;
  ProcessResult r =
      Exec(dir, "rt_path", {"ops", "p0:5:+1"}, {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": damaged (the record of paths.c has path counts of "
                       "function 2, which has no hashed path table); kept as " +
                       path + ".corrupt, a new profile started\n");
  EXPECT_EQ(PathsRecord(Read(path)).sparse, (Sparse{{{RT_PATHS_FN0, 5}, 1}}));
}

TEST(RuntimePaths, UndoAfterADumpIsSubtractedByTheNextDump) {
  std::string dir = FreshDir("paths_undo");
  std::string path = dir + "/p";
  // Path 5 counted before a call, the callee dumps, the call returns: the
  // undo (-1) meets a live count of 0.  Path 6 counted twice, one undone.
  ProcessResult r = Exec(
      dir, "rt_path",
      {"ops", "p0:5:+1", "p0:6:+1", "p0:6:+1", "d0:+1", "dump", "copy:.1",
       "p0:5:-1", "p0:6:-1", "d0:-1", "dump", "copy:.2"},
      {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const Profile first = Read(path + ".1");
  EXPECT_EQ(PathsRecord(first).sparse,
            (Sparse{{{RT_PATHS_FN0, 5}, 1}, {{RT_PATHS_FN0, 6}, 2}}));
  EXPECT_EQ(PathsRecord(first).counters, (std::vector<uint64_t>{1, 0}));
  const Profile second = Read(path + ".2");
  EXPECT_EQ(PathsRecord(second).sparse, (Sparse{{{RT_PATHS_FN0, 6}, 1}}));
  EXPECT_EQ(PathsRecord(second).counters, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(second.runs, 1u);  // two dumps, one process
  // Nothing new after the second dump: exit wrote nothing more.
  EXPECT_EQ(ReadBytes(path), ReadBytes(path + ".2"));

  // A -1 whose +1 went to the file in an earlier process leaves a negative
  // residue there until a later +1 makes it whole again.
  ASSERT_EQ(Exec(dir, "rt_path", {"ops", "p1:7:-1", "d1:-1"},
                 {{"BALLARUS_PROFILE", path}})
                .status,
            0);
  const Profile neg = Read(path);
  EXPECT_EQ(PathsRecord(neg).sparse,
            (Sparse{{{RT_PATHS_FN0, 6}, 1}, {{RT_PATHS_FN1, 7}, UINT64_MAX}}));
  EXPECT_EQ(PathsRecord(neg).counters, (std::vector<uint64_t>{0, UINT64_MAX}));
  ASSERT_EQ(Exec(dir, "rt_path", {"ops", "p1:7:+1", "p1:7:+1", "d1:+1"},
                 {{"BALLARUS_PROFILE", path}})
                .status,
            0);
  const Profile back = Read(path);
  EXPECT_EQ(PathsRecord(back).sparse,
            (Sparse{{{RT_PATHS_FN0, 6}, 1}, {{RT_PATHS_FN1, 7}, 1}}));
  EXPECT_EQ(PathsRecord(back).counters, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(back.runs, 3u);  // three processes
}

TEST(RuntimePaths, EveryKeyIsExactFromZeroToTheTopOfUint64) {
  std::string dir = FreshDir("paths_keys");
  const uint64_t k63 = uint64_t{1} << 63;
  std::vector<std::string> ops = {"ops"};
  // key -> times counted, in table 0; table 1 gets each key once.
  const std::vector<std::pair<uint64_t, int>> keys = {
      {0, 3}, {1, 1}, {k63 - 2, 2}, {k63 - 1, 5}, {k63, 1},
      {UINT64_MAX - 1, 2}, {UINT64_MAX, 4}};
  for (const auto& kv : keys) {
    for (int i = 0; i < kv.second; i++)
      ops.push_back("p0:" + std::to_string(kv.first) + ":+1");
    ops.push_back("p1:" + std::to_string(kv.first) + ":+1");
  }
  // The last key counted and undone: absent.
  ops.push_back("p1:" + std::to_string(UINT64_MAX) + ":-1");
  ProcessResult r = Exec(dir, "rt_path", ops);
  ASSERT_EQ(r.status, 0) << r.err;
  Sparse want;
  for (const auto& kv : keys) {
    want[{RT_PATHS_FN0, kv.first}] = kv.second;
    if (kv.first != UINT64_MAX) want[{RT_PATHS_FN1, kv.first}] = 1;
  }
  const Profile p = Read(dir + "/ballarus.profile");
  EXPECT_EQ(PathsRecord(p).sparse, want);
}

TEST(RuntimePaths, ForkChildStartsAtZero) {
  std::string dir = FreshDir("paths_fork");
  ASSERT_EQ(Exec(dir, "rt_path", {"fork", "10", "4"}).status, 0);
  const Profile p = Read(dir + "/ballarus.profile");
  // Parent: path 1 x10, 2, then 4; child: only its own path 1 x4 and 3.
  EXPECT_EQ(PathsRecord(p).sparse,
            (Sparse{{{RT_PATHS_FN0, 1}, 14},
                    {{RT_PATHS_FN0, 2}, 1},
                    {{RT_PATHS_FN0, 3}, 1},
                    {{RT_PATHS_FN0, 4}, 1}}));
  EXPECT_EQ(p.runs, 2u);
}

TEST(RuntimePaths, ConcurrentProcessesDumpingIntoOneFileSumExactly) {
  std::string dir = FreshDir("paths_forkmany");
  ProcessResult r = Exec(dir, "rt_path", {"forkmany", "6", "20000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const Profile p = Read(dir + "/ballarus.profile");
  Sparse want = Workload({2000, 2001, 2002, 2003, 2004, 2005}, 20000);
  EXPECT_EQ(PathsRecord(p).sparse.size(), want.size());
  EXPECT_TRUE(PathsRecord(p).sparse == want);
  EXPECT_EQ(PathsRecord(p).counters, (std::vector<uint64_t>{6 * 20000, 0}));
  // 6 children, and the parent, which counted nothing but linked the TU.
  EXPECT_EQ(p.runs, 7u);
}

TEST(RuntimePaths, ResetDiscardsPathCounts) {
  std::string dir = FreshDir("paths_reset");
  ASSERT_EQ(Exec(dir, "rt_path",
                 {"ops", "p0:1:+1", "p1:1:+1", "reset", "p0:2:+1"})
                .status,
            0);
  EXPECT_EQ(PathsRecord(Read(dir + "/ballarus.profile")).sparse,
            (Sparse{{{RT_PATHS_FN0, 2}, 1}}));
}

TEST(RuntimePaths, TwoCopiesOfOneTuFoldTheirPathCounts) {
  std::string dir = FreshDir("paths_twin");
  ASSERT_EQ(Exec(dir, "rt_path",
                 {"ops", "tA:7:+1", "tB:7:+1", "tB:8:+1", "tA:9:+1",
                  "tB:9:-1", "tA:10:+1", "tA:10:+1", "tB:10:-1"})
                .status,
            0);
  const Profile p = Read(dir + "/ballarus.profile");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.records.count(kTwin), 1u);
  // Path 9's +1 in one copy and -1 in the other cancel: no entry.
  EXPECT_EQ(p.records.at(kTwin).sparse,
            (Sparse{{{RT_TWIN_FN, 7}, 2},
                    {{RT_TWIN_FN, 8}, 1},
                    {{RT_TWIN_FN, 10}, 1}}));
  EXPECT_EQ(p.records.at(kTwin).runs, 1u);
}

TEST(RuntimePaths, TwoCopiesOfOneTuSumTheirCountersExactlyAcrossDumps) {
  // Both copies' counters go into one record, and each copy's live
  // counters lose exactly what was read from it: the sum is made in a
  // copy, never in the snapshot a record borrows (a sum into copy A's
  // snapshot would take 7 off A's live counter, and the exit would then
  // write 6, not 10).
  std::string dir = FreshDir("paths_twin_dense");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_path",
                         {"ops", "cA:3", "cB:4", "tA:7:+1", "dump",
                          "copy:.first", "cA:1", "cB:2"},
                         {{"BALLARUS_PROFILE", path}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const Profile first = Read(path + ".first");
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.records.at(kTwin).counters, (std::vector<uint64_t>{7}));
  const Profile p = Read(path);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.records.at(kTwin).counters, (std::vector<uint64_t>{10}));
  EXPECT_EQ(p.records.at(kTwin).sparse, (Sparse{{{RT_TWIN_FN, 7}, 1}}));
}

TEST(RuntimePaths, OutOfMemoryLosesNoCountSilently) {
  std::string dir = FreshDir("paths_oom");
  ProcessResult r = Exec(dir, "rt_path", {"oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Table 0 keeps the paths its first generation had room for (0, 1, ...,
  // in counting order), table 1 could not get one: every other count is
  // reported.
  const Profile p = Read(dir + "/ballarus.profile");
  const Sparse& got = PathsRecord(p).sparse;
  uint64_t n = got.size();
  ASSERT_GE(n, 124u);
  ASSERT_LT(n, 400u);
  Sparse want;
  for (uint64_t k = 0; k < n; k++) want[{RT_PATHS_FN0, k}] = 1;
  EXPECT_EQ(got, want);
  EXPECT_EQ(r.err, "ballarus: out of memory for path tables: " +
                       std::to_string(400 + 10 - n) +
                       " path counts were not recorded (their paths are "
                       "missing from the profile)\n");
}

}  // namespace

// Named runs: the counts of a process run with BALLARUS_TEST=NAME, as
// stored under NAME (stamp -> counters, zeros where no pair).
std::map<uint64_t, std::vector<uint64_t>> NamedCounts(
    const std::string& path, const std::string& name) {
  std::map<uint64_t, std::vector<uint64_t>> out;
  ballarus_profile p;
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_read_file(path.c_str(), &p, err, sizeof err), 0)
      << err;
  for (uint64_t k = 0; k < p.n_named; k++) {
    const ballarus_named_record& n = p.named[k];
    if (name != n.name) continue;
    uint64_t n_counters = 0;
    for (uint32_t i = 0; i < p.n_records; i++)
      if (p.records[i].stamp == n.stamp) n_counters = p.records[i].n_counters;
    std::vector<uint64_t> v(n_counters, 0);
    for (uint64_t j = 0; j < n.n_dense; j++) v.at(n.dense[j].index) = n.dense[j].count;
    out[n.stamp] = v;
  }
  ballarus_profile_free(&p);
  return out;
}

TEST(Runtime, NamedRunsKeepEachTestsCountsBesideTheSum) {
  std::string dir = FreshDir("named");
  std::string path = dir + "/p";
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "10"},
                 {{"BALLARUS_PROFILE", path}, {"BALLARUS_TEST", "t/one"}})
                .status,
            0);
  ProcessResult r = Exec(dir, "rt_prog", {"dumpmid", "7"},
                         {{"BALLARUS_PROFILE", path}, {"BALLARUS_TEST", "t two"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(Exec(dir, "rt_prog", {"count", "5"}, {{"BALLARUS_PROFILE", path}})
                .status,
            0);
  // The sum as without names: 10 + 2 x 7 + 5, four count calls, 3 runs.
  ExpectAlphaBeta(Read(path), 29, 4, 3);
  // Each test alone, as one process writing its own profile would give.
  EXPECT_EQ(NamedCounts(path, "t/one"),
            (std::map<uint64_t, std::vector<uint64_t>>{{kAlpha, Alpha(10)},
                                                       {kBeta, Beta(10, 1)}}));
  EXPECT_EQ(NamedCounts(path, "t two"),
            (std::map<uint64_t, std::vector<uint64_t>>{{kAlpha, Alpha(14)},
                                                       {kBeta, Beta(14, 2)}}));
}

TEST(Runtime, AnUnprintableTestNameIsRefusedAndTheRunCountedUnnamed) {
  std::string dir = FreshDir("named_bad");
  std::string path = dir + "/p";
  ProcessResult r = Exec(dir, "rt_prog", {"count", "10"},
                         {{"BALLARUS_PROFILE", path}, {"BALLARUS_TEST", "a\tb"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("BALLARUS_TEST is not 1 to 255 printable characters"),
            std::string::npos)
      << r.err;
  ExpectAlphaBeta(Read(path), 10, 1, 1);
  EXPECT_TRUE(NamedCounts(path, "a\tb").empty());
  uint32_t version = 0;
  std::string bytes = ReadBytes(path);
  memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 4u);  // no named section
}

// A large counter array (rt_big.c): a dump reads, copies and writes only
// the pages the process touched, and the file it writes is byte for byte
// what the dense writer gives for the same counts.

// big's counters: the given {index, count} pairs, zeros elsewhere.
std::vector<uint64_t> Big(const std::map<uint64_t, uint64_t>& counts) {
  std::vector<uint64_t> v(RT_BIG_N, 0);
  for (const auto& kv : counts) v.at(kv.first) = kv.second;
  return v;
}

// The file's bytes equal ballarus_profile_serialize of its parsed profile
// (counters written densely), and the file has holes: fewer bytes
// allocated than its size less `dense` bytes of counters.
void ExpectDenseBytesWithHoles(const std::string& path, uint64_t holes_min) {
  ballarus_profile p;
  char err[512] = "";
  ASSERT_EQ(ballarus_profile_read_file(path.c_str(), &p, err, sizeof err), 0)
      << err;
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(ballarus_profile_serialize(&p, &buf, &size, err, sizeof err), 0)
      << err;
  EXPECT_EQ(ReadBytes(path), std::string(reinterpret_cast<char*>(buf), size));
  free(buf);
  ballarus_profile_free(&p);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LE(static_cast<uint64_t>(st.st_blocks) * 512 + holes_min,
            static_cast<uint64_t>(st.st_size))
      << "allocated " << st.st_blocks * 512 << " of " << st.st_size;
}

const uint64_t kBig = STAMP("big", RT_BIG_BODY);

TEST(RuntimeChunks, AShortRunTouchesOnlyItsCounterPagesAndWritesHoles) {
  std::string dir = FreshDir("chunks_first");
  std::string path = dir + "/p";
  const std::map<std::string, std::string> env = {{"BALLARUS_PROFILE", path}};
  ProcessResult r = Exec(dir, "rt_big",
                         {"5:1", "20000:7", "39999:3", "dump", "untouched:10000",
                          "untouched:30000", "20001:1"},
                         env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Profile p = Read(path);
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.records.count(kBig), 1u);
  EXPECT_EQ(p.records.at(kBig).counters,
            Big({{5, 1}, {20000, 7}, {20001, 1}, {39999, 3}}));
  EXPECT_EQ(p.records.at(kBig).runs, 1u);
  // 40000 counters of which three pages were touched: most is holes.
  ExpectDenseBytesWithHoles(path, 250000);

  // A second process merges into it: the sum, holes kept.
  r = Exec(dir, "rt_big", {"5:2", "30000:4", "dump", "untouched:10000"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  p = Read(path);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.records.at(kBig).counters,
            Big({{5, 3}, {20000, 7}, {20001, 1}, {30000, 4}, {39999, 3}}));
  EXPECT_EQ(p.records.at(kBig).runs, 2u);
  ExpectDenseBytesWithHoles(path, 200000);

  // A process that counts nothing adds its run, nothing else.
  ASSERT_EQ(Exec(dir, "rt_big", {"untouched:15000"}, env).status, 0);
  p = Read(path);
  EXPECT_EQ(p.records.at(kBig).counters,
            Big({{5, 3}, {20000, 7}, {20001, 1}, {30000, 4}, {39999, 3}}));
  EXPECT_EQ(p.records.at(kBig).runs, 3u);
}

TEST(RuntimeChunks, ResetAndForkLeaveUntouchedPagesUntouched) {
  std::string dir = FreshDir("chunks_reset");
  std::string path = dir + "/p";
  const std::map<std::string, std::string> env = {{"BALLARUS_PROFILE", path}};
  ProcessResult r =
      Exec(dir, "rt_big",
           {"100:5", "reset", "untouched:20000", "100:1", "fork:25000",
            "untouched:25000", "untouched:20000", "39000:2"},
           env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Profile p = Read(path);
  ASSERT_TRUE(p.ok) << p.error;
  // The reset dropped the 5; the child counted only its own 1.
  EXPECT_EQ(p.records.at(kBig).counters,
            Big({{100, 1}, {25000, 1}, {39000, 2}}));
  EXPECT_EQ(p.records.at(kBig).runs, 2u);
  ExpectDenseBytesWithHoles(path, 200000);
}

TEST(RuntimeChunks, NamedRunsOfALargeArrayHoldExactlyItsCounts) {
  std::string dir = FreshDir("chunks_named");
  std::string path = dir + "/p";
  ASSERT_EQ(Exec(dir, "rt_big", {"7:1", "33000:9"},
                 {{"BALLARUS_PROFILE", path}, {"BALLARUS_TEST", "one"}})
                .status,
            0);
  ASSERT_EQ(Exec(dir, "rt_big", {"7:2", "1000:1"},
                 {{"BALLARUS_PROFILE", path}, {"BALLARUS_TEST", "two"}})
                .status,
            0);
  EXPECT_EQ(Read(path).records.at(kBig).counters,
            Big({{7, 3}, {1000, 1}, {33000, 9}}));
  EXPECT_EQ(NamedCounts(path, "one"),
            (std::map<uint64_t, std::vector<uint64_t>>{
                {kBig, Big({{7, 1}, {33000, 9}})}}));
  EXPECT_EQ(NamedCounts(path, "two"),
            (std::map<uint64_t, std::vector<uint64_t>>{
                {kBig, Big({{7, 2}, {1000, 1}})}}));
  ExpectDenseBytesWithHoles(path, 200000);
}
