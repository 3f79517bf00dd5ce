// ballarus_rt_test.cc — end-to-end tests of the runtime: runs the C test
// programs of testdata/ (hand-built TUs linked with libballarus_rt, no
// plugin needed) in fresh directories under TEST_TMPDIR and checks the
// profiles they write, value by value.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/profile_io.h"
#include "runtime/testdata/rt_test_tus.h"

namespace {

uint64_t Stamp(const char* body, size_t len) { return ballarus_hash64(body, len); }
#define STAMP(BODY) Stamp(BODY, sizeof(BODY) - 1)

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
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
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

const uint64_t kAlpha = STAMP(RT_ALPHA_BODY);
const uint64_t kBeta = STAMP(RT_BETA_BODY);
const uint64_t kHost = STAMP(RT_HOST_BODY);
const uint64_t kLib = STAMP(RT_LIB_BODY);

void ExpectAlphaBeta(const Profile& p, uint64_t n, uint64_t calls,
                     uint64_t runs) {
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.runs, runs);
  ASSERT_EQ(p.records.size(), 2u);
  ASSERT_EQ(p.records.count(kAlpha), 1u);
  ASSERT_EQ(p.records.count(kBeta), 1u);
  EXPECT_EQ(p.records.at(kAlpha).counters, Alpha(n));
  EXPECT_EQ(p.records.at(kBeta).counters, Beta(n, calls));
  EXPECT_EQ(p.records.at(kAlpha).identity, RT_ALPHA_IDENTITY);
  EXPECT_EQ(p.records.at(kBeta).identity, RT_BETA_IDENTITY);
  EXPECT_EQ(p.records.at(kAlpha).runs, runs);
  EXPECT_EQ(p.records.at(kBeta).runs, runs);
}

TEST(Runtime, OneRunWritesExactCounts) {
  std::string dir = FreshDir("one_run");
  ProcessResult r = Exec(dir, "rt_prog", {"count", "10"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 10, 1, 1);
  // Only the profile and its lock file; no temporary left behind.
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"ballarus.profile",
                                                    "ballarus.profile.lock"}));
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
  // Two dumps (the explicit one and the exit one), each with its own counts.
  ExpectAlphaBeta(Read(path), 20, 2, 2);
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
  // 8 children dump 20000 each; the parent dumps its (zero) counts once.
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
  EXPECT_GT(p.runs, 1u);  // many dumps, each merged
}

TEST(Runtime, ChdirDoesNotMoveTheDefaultProfile) {
  std::string dir = FreshDir("chdir");
  ASSERT_EQ(system(("mkdir '" + dir + "/sub'").c_str()), 0);
  ASSERT_EQ(Exec(dir, "rt_prog", {"chdir", "sub", "5"}).status, 0);
  ExpectAlphaBeta(Read(dir + "/ballarus.profile"), 5, 1, 1);
  EXPECT_TRUE(ListDir(dir + "/sub").empty());
}

TEST(Runtime, GarbageProfileIsPreservedAndRunWrittenBeside) {
  std::string dir = FreshDir("garbage");
  std::string path = dir + "/ballarus.profile";
  { std::ofstream(path) << "not a profile"; }
  ProcessResult r = Exec(dir, "rt_prog", {"count", "3"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(ReadBytes(path), "not a profile");
  std::string beside = path + "." + std::to_string(r.pid);
  EXPECT_EQ(r.err, "ballarus: " + path +
                       ": offset 0: file header truncated (file ends after 13 "
                       "of 32 bytes); writing this run's profile to " +
                       beside + "\n");
  ExpectAlphaBeta(Read(beside), 3, 1, 1);
}

TEST(Runtime, AnotherBuildOfATuIsNeverMixed) {
  std::string dir = FreshDir("conflict");
  std::string path = dir + "/ballarus.profile";
  // A profile holding another build of alpha: same identity, other body.
  std::string body = "alpha, as built last week";
  std::vector<uint8_t> blob(sizeof(ballarus_meta_header));
  ballarus_meta_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, BALLARUS_META_MAGIC, 8);
  h.version = BALLARUS_META_VERSION;
  h.header_size = BALLARUS_META_HEADER_SIZE;
  h.stamp = ballarus_hash64(body.data(), body.size());
  h.size = BALLARUS_META_HEADER_SIZE + body.size();
  h.n_counters = 1;
  h.identity = RT_ALPHA_IDENTITY;
  memcpy(blob.data(), &h, sizeof h);
  blob.insert(blob.end(), body.begin(), body.end());
  uint64_t counter = 42;
  ballarus_profile_record rec = {h.stamp, h.identity, 1, blob.data(),
                                 blob.size(), &counter, 1, nullptr, 0};
  ballarus_profile old = {1, 1, &rec};
  char err[256] = "";
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &old, err, sizeof err), 0)
      << err;
  std::string before = ReadBytes(path);

  ProcessResult r = Exec(dir, "rt_prog", {"count", "2"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(ReadBytes(path), before);
  std::string beside = path + "." + std::to_string(r.pid);
  EXPECT_EQ(r.err.rfind("ballarus: " + path + ": conflict: TU identity 0x" +
                            "a1a1a1a1a1a1a1a1",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("; writing this run's profile to " + beside + "\n"),
            std::string::npos)
      << r.err;
  ExpectAlphaBeta(Read(beside), 2, 1, 1);
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
  EXPECT_EQ(end.runs, 2u);
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
  EXPECT_EQ(end.records.at(kHost).runs, 1u);
  EXPECT_EQ(end.records.at(kLib).runs, 2u);
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

TEST(Runtime, BadDescriptorIsSkippedWithAWarning) {
  std::string dir = FreshDir("bad_tu");
  ProcessResult r = Exec(dir, "rt_badtu", {"6"});
  ASSERT_EQ(r.status, 0);
  // Descriptor order is link order: the bad one is number 0 or 1.
  EXPECT_TRUE(r.err == "ballarus: TU descriptor 0: bad metadata magic; TU skipped\n" ||
              r.err == "ballarus: TU descriptor 1: bad metadata magic; TU skipped\n")
      << r.err;
  Profile p = Read(dir + "/ballarus.profile");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.records.size(), 1u);
  EXPECT_EQ(p.records.at(kBeta).counters, Beta(6, 1));
}

TEST(Runtime, UnwritableProfileWarnsAndNeverFailsTheProgram) {
  std::string dir = FreshDir("unwritable");
  std::string path = dir + "/no/such/dir/p";
  ProcessResult r = Exec(dir, "rt_prog", {"count", "2"}, {{"BALLARUS_PROFILE", path}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("ballarus: " + path + ".lock: cannot open lock file (No such file or directory); dumping without it\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ballarus: " + path + ": cannot write profile: cannot create temporary file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(counts kept for a later dump)\n"), std::string::npos) << r.err;
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{});
}

TEST(Runtime, VerboseLogsDumps) {
  std::string dir = FreshDir("verbose");
  ProcessResult r = Exec(dir, "rt_prog", {"count", "1"}, {{"BALLARUS_VERBOSE", "1"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "ballarus: registered 2 TUs; profile " + dir +
                       "/ballarus.profile\nballarus: dumped 2 TU records to " +
                       dir + "/ballarus.profile\n");
}

}  // namespace
