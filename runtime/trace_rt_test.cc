// trace_rt_test.cc — end-to-end tests of the trace runtime: trace_prog
// writes known witness sequences (testdata/trace_seq.h) through
// ballarus_trace_witness, or calls the hooks of trace_events.h as a
// simulated program, in fresh directories, and the trace files are read
// back with trace_read.c and compared word for word; checkpoints are
// compared with the stack the stream itself tells.
#include <dirent.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/testdata/rt_test_tus.h"
#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"

namespace {

std::string Runfile(const std::string& name) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "ballarus") +
         "/runtime/" + name;
}

std::string FreshDir(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/trace_" + name;
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs trace_prog PATH SPEC CMD N [T] in DIR (its files limited to fsize
// bytes if fsize >= 0); returns the wait status, its standard output in
// *out, its standard error in DIR/stderr.
int RunProgAt(const std::string& dir, const std::string& path,
              const std::string& spec, const std::vector<std::string>& args,
              std::string* out = nullptr, long fsize = -1) {
  std::string prog = Runfile("trace_prog");
  std::vector<std::string> all = {prog, path, spec};
  all.insert(all.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::string o = dir + "/stdout";
    std::string e = dir + "/stderr";
    if (!freopen(o.c_str(), "w", stdout) || !freopen(e.c_str(), "w", stderr))
      _exit(126);
    if (fsize >= 0) {
      struct rlimit r = {static_cast<rlim_t>(fsize),
                         static_cast<rlim_t>(fsize)};
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &r) != 0) _exit(126);
    }
    if (chdir(dir.c_str()) != 0) _exit(126);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  if (out) *out = ReadBytes(dir + "/stdout");
  return st;
}

// RunProgAt with PATH = DIR/trace.
int RunProg(const std::string& dir, const std::string& spec,
            const std::vector<std::string>& args, std::string* out = nullptr,
            long fsize = -1) {
  return RunProgAt(dir, dir + "/trace", spec, args, out, fsize);
}

// A trace file read back: the file header and, per thread serial, its
// records' headers and words in file order: `witnesses` the stream (CHUNK
// and RING words), `checkpoints` each CHECKPOINT's words; the trailing
// POSITION and FAULT records apart (`records` leaves them out): their
// headers and words.
struct Trace {
  ballarus_trace_file_header header{};
  std::map<uint32_t, std::vector<ballarus_trace_record_header>> records;
  std::map<uint32_t, std::vector<uint32_t>> witnesses;
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> checkpoints;
  std::vector<std::string> metadata;  // the METADATA records' blobs
  std::map<uint32_t, std::pair<ballarus_trace_record_header,
                               std::vector<uint32_t>>> positions, faults;
  std::string error;
};

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  Trace* t = static_cast<Trace*>(ctx);
  if (h->kind == BALLARUS_TRACE_POSITION || h->kind == BALLARUS_TRACE_FAULT) {
    auto& to = h->kind == BALLARUS_TRACE_POSITION ? t->positions : t->faults;
    EXPECT_EQ(to.count(h->thread), 0u) << "two of kind " << h->kind;
    to[h->thread] = {*h, std::vector<uint32_t>(w, w + h->count)};
    return 0;
  }
  t->records[h->thread].push_back(*h);
  if (h->kind == BALLARUS_TRACE_METADATA)
    t->metadata.emplace_back(reinterpret_cast<const char*>(w), h->bytes);
  else if (h->kind == BALLARUS_TRACE_CHECKPOINT)
    t->checkpoints[h->thread].emplace_back(w, w + h->count);
  else
    t->witnesses[h->thread].insert(t->witnesses[h->thread].end(), w,
                                   w + h->count);
  return 0;
}

Trace ReadTrace(const std::string& path) {
  Trace t;
  std::string data = ReadBytes(path);
  char err[256] = "";
  if (ballarus_trace_read(data.data(), data.size(), &t.header, Collect, &t,
                          err, sizeof err) != 0)
    t.error = err;
  return t;
}

// trace_seq(k, i) for i in [from, to).
std::vector<uint32_t> Seq(uint32_t k, uint32_t from, uint32_t to) {
  std::vector<uint32_t> v;
  for (uint32_t i = from; i < to; i++) v.push_back(trace_seq(k, i));
  return v;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (struct dirent* e = d ? readdir(d) : nullptr)
    if (e->d_name[0] != '.' && strcmp(e->d_name, "stdout") != 0 &&
        strcmp(e->d_name, "stderr") != 0)
      names.push_back(e->d_name);
  if (d) closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(TraceRt, FullTraceReadsBackEqual) {
  // 10000 witnesses cross the 4095-witness chunk twice.
  std::string dir = FreshDir("full");
  ASSERT_EQ(RunProg(dir, "full", {"seq", "10000"}), 0);
  EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"});
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.header.mode, BALLARUS_TRACE_MODE_FULL);
  EXPECT_EQ(t.header.generation, 0u);
  ASSERT_EQ(t.witnesses.size(), 1u);
  EXPECT_EQ(t.witnesses[1], Seq(0, 0, 10000));
  EXPECT_EQ(t.records[1].size(), 3u);
  EXPECT_EQ(t.records[1].back().total, 10000u);
  struct stat st;
  ASSERT_EQ(stat((dir + "/trace").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(TraceRt, WriteErrorIsReported) {
  // Files limited to 10000 bytes: the first chunk (~8.8 KB) fits, the
  // second does not.
  std::string dir = FreshDir("efbig");
  ASSERT_EQ(RunProg(dir, "full", {"seq", "10000"}, nullptr, 10000), 0);
  EXPECT_EQ(ReadBytes(dir + "/stderr"),
            "ballarus: trace trace: write: " + std::string(strerror(EFBIG)) +
                " (trace incomplete)\n");
  Trace t = ReadTrace(dir + "/trace");
  EXPECT_EQ(t.witnesses[1], Seq(0, 0, 4095));
}

TEST(TraceRt, StartRejectsBadSpecs) {
  for (const char* spec : {"ring:0", "ring:", "ring:268435457", "ring:5x",
                           "fulll"}) {
    std::string dir = FreshDir("badspec");
    EXPECT_EQ(RunProg(dir, spec, {"seq", "5"}), 3 << 8) << spec;
    EXPECT_EQ(ReadBytes(dir + "/stderr"),
              std::string("trace_prog: trace \"") + spec +
                  "\": expected full or ring:N with N from 1 to 268435456\n");
    EXPECT_EQ(Files(dir), std::vector<std::string>{}) << spec;
  }
}

// The ring keeps whole chunks of 4095 words: ceil(N / 4091) of them
// besides the one being written (a chunk ends early only before an event,
// of at most 5 words, that does not fit).  The first word it keeps of a
// stream of n words written one at a time:
uint32_t RingFrom(uint32_t ring, uint32_t n) {
  uint32_t chunks = (n + 4094) / 4095, kept = (ring + 4090) / 4091 + 1;
  return chunks > kept ? (chunks - kept) * 4095 : 0;
}

TEST(TraceRt, RingKeepsWholeChunksOfTheLastN) {
  struct Case {
    const char* spec;
    uint32_t ring, n;
  } cases[] = {{"ring:100", 100, 10000},   {"ring:5000", 5000, 4100},
               {"ring:5000", 5000, 20000}, {"ring:1", 1, 3},
               {"ring:9000", 9000, 50},    {"ring:8182", 8182, 30000}};
  for (const Case& c : cases) {
    std::string dir = FreshDir("ring");
    ASSERT_EQ(RunProg(dir, c.spec, {"seq", std::to_string(c.n)}), 0);
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << c.spec << " " << c.n;
    EXPECT_EQ(t.header.ring_n, c.ring);
    uint32_t from = RingFrom(c.ring, c.n);
    EXPECT_GE(c.n - from, std::min(c.ring, c.n));
    EXPECT_EQ(t.witnesses[1], Seq(0, from, c.n)) << c.spec << " " << c.n;
    // CHECKPOINT, RING, CHECKPOINT, RING, ...: one per chunk, numbered
    // across kinds; no stack (no hook was called): D = 0.
    const auto& recs = t.records[1];
    ASSERT_EQ(recs.size(), 2 * ((c.n - from + 4094) / 4095));
    uint64_t at = from;
    for (size_t i = 0; i < recs.size(); i++) {
      EXPECT_EQ(recs[i].seq, i);
      EXPECT_EQ(recs[i].kind,
                i % 2 ? BALLARUS_TRACE_RING : BALLARUS_TRACE_CHECKPOINT);
      if (i % 2 == 0) EXPECT_EQ(recs[i].total, at);
      if (i % 2 == 1) at += recs[i].count;
      if (i % 2 == 1) EXPECT_EQ(recs[i].total, at);
    }
    EXPECT_EQ(at, c.n);
    for (const auto& cp : t.checkpoints[1])
      EXPECT_EQ(cp, std::vector<uint32_t>{0});
  }
}

TEST(TraceRt, SegvWritesTheRingAndKeepsTheStatus) {
  std::string plain = FreshDir("segv_plain");
  int without = RunProg(plain, "none", {"segv", "5000"});
  ASSERT_TRUE(WIFSIGNALED(without));
  EXPECT_EQ(WTERMSIG(without), SIGSEGV);
  std::string dir = FreshDir("segv");
  EXPECT_EQ(RunProg(dir, "ring:100", {"segv", "9000"}), without);
  EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"});
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.witnesses[1], Seq(0, RingFrom(100, 9000), 9000));
}

TEST(TraceRt, SegvInFullModeWritesThePartialChunk) {
  std::string dir = FreshDir("segv_full");
  int st = RunProg(dir, "full", {"segv", "5000"});
  ASSERT_TRUE(WIFSIGNALED(st));
  EXPECT_EQ(WTERMSIG(st), SIGSEGV);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.witnesses[1], Seq(0, 0, 5000));
}

TEST(TraceRt, SegvWritesEveryThreadsRing) {
  // Threads 1..3 wrote stream k and wait; the main thread writes stream 0
  // and crashes: the file holds the last 700 of each of the four streams.
  std::string plain = FreshDir("segvthreads_plain");
  int without = RunProg(plain, "none", {"segvthreads", "3000", "3"});
  ASSERT_TRUE(WIFSIGNALED(without));
  std::string dir = FreshDir("segvthreads");
  EXPECT_EQ(RunProg(dir, "ring:700", {"segvthreads", "9000", "3"}),
            without);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  std::map<uint32_t, int> seen;
  uint32_t from = RingFrom(700, 9000);
  for (const auto& [serial, w] : t.witnesses) {
    ASSERT_EQ(w.size(), 9000u - from) << serial;
    uint32_t k = (w[0] - from % 13) >> 16;
    EXPECT_EQ(w, Seq(k, from, 9000)) << serial;
    seen[k]++;
  }
  EXPECT_EQ(seen, (std::map<uint32_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

TEST(TraceRt, EveryFatalSignalWritesTheRingAndKeepsTheStatus) {
  struct Case {
    const char* cmd;
    int sig;
  } cases[] = {{"abort", SIGABRT}, {"fpe", SIGFPE}, {"ill", SIGILL},
               {"bus", SIGBUS},     {"raise", SIGSEGV}};
  for (const Case& c : cases) {
    std::string plain = FreshDir(std::string(c.cmd) + "_plain");
    int without = RunProg(plain, "none", {c.cmd, "50"});
    ASSERT_TRUE(WIFSIGNALED(without)) << c.cmd;
    EXPECT_EQ(WTERMSIG(without), c.sig) << c.cmd;
    std::string dir = FreshDir(c.cmd);
    EXPECT_EQ(RunProg(dir, "ring:100", {c.cmd, "50"}), without) << c.cmd;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << c.cmd;
    EXPECT_EQ(t.witnesses[1], Seq(0, 0, 50)) << c.cmd;
  }
}

TEST(TraceRt, ProgramHandlerStillRuns) {
  // Installed before the runtime starts: chained after the ring is written.
  std::string dir = FreshDir("handler");
  std::string out;
  int st = RunProg(dir, "ring:30", {"handler", "5000"}, &out);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 42);
  EXPECT_EQ(out, "handled\n");
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.witnesses[1], Seq(0, RingFrom(30, 5000), 5000));
  // The same with a SIGSEGV sent by raise, which the runtime raises again.
  dir = FreshDir("handler_raise");
  st = RunProg(dir, "ring:30", {"handler_raise", "5000"}, &out);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 42);
  EXPECT_EQ(out, "handled\n");
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.witnesses[1], Seq(0, RingFrom(30, 5000), 5000));
  // Installed after: it replaces the runtime's and still gets the signal.
  dir = FreshDir("late");
  st = RunProg(dir, "ring:30", {"late", "50"}, &out);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 42);
  EXPECT_EQ(out, "handled\n");
}

// Each thread's stream is exactly trace_seq(k) of the stream k its first
// witness names, then the thread's kEnd (depth 0, site 0: no activation);
// every stream appears once.
void CheckThreads(const Trace& t, uint32_t threads, uint32_t n,
                  uint32_t ring) {
  ASSERT_EQ(t.error, "");
  std::map<uint32_t, int> seen;
  for (const auto& [serial, w] : t.witnesses) {
    ASSERT_FALSE(w.empty());
    uint32_t from = ring ? RingFrom(ring, n + BALLARUS_TRACE_END_WORDS) : 0;
    uint32_t k = (w[0] - from % 13) >> 16;
    std::vector<uint32_t> want = Seq(k, from, n);
    want.insert(want.end(), {BALLARUS_TRACE_EVENT_END, 0, 0});
    EXPECT_EQ(w, want) << "thread " << serial;
    seen[k]++;
  }
  EXPECT_EQ(seen.size(), threads);
  for (uint32_t k = 1; k <= threads; k++) EXPECT_EQ(seen[k], 1) << k;
}

TEST(TraceRt, ThreadsFullEachStreamExact) {
  std::string dir = FreshDir("threads_full");
  ASSERT_EQ(RunProg(dir, "full", {"threads", "20000", "4"}), 0);
  Trace t = ReadTrace(dir + "/trace");
  CheckThreads(t, 4, 20000, 0);
  for (const auto& [serial, recs] : t.records)
    EXPECT_EQ(recs.back().kind, BALLARUS_TRACE_END) << serial;
}

TEST(TraceRt, ThreadsRingEachStreamExact) {
  std::string dir = FreshDir("threads_ring");
  ASSERT_EQ(RunProg(dir, "ring:6000", {"threads", "20000", "4"}), 0);
  CheckThreads(ReadTrace(dir + "/trace"), 4, 20000, 6000);
}

TEST(TraceRt, ForkChildWritesItsOwnFile) {
  std::string dir = FreshDir("fork");
  ASSERT_EQ(RunProg(dir, "full", {"fork", "5000"}), 0);
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  Trace parent = ReadTrace(dir + "/trace");
  ASSERT_EQ(parent.error, "");
  std::vector<uint32_t> want = Seq(0, 0, 5000), more = Seq(2, 0, 5000);
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_EQ(parent.witnesses[1], want);
  Trace child = ReadTrace(dir + "/" + files[1]);
  ASSERT_EQ(child.error, "");
  EXPECT_EQ(files[1], "trace." + std::to_string(child.header.pid));
  EXPECT_EQ(child.header.generation, 1u);
  EXPECT_EQ(child.header.parent_pid, parent.header.pid);
  EXPECT_EQ(child.witnesses[1], Seq(1, 0, 5000));
  // The child's stream starts with the stack at the fork: none.
  ASSERT_FALSE(child.records[1].empty());
  EXPECT_EQ(child.records[1][0].kind, BALLARUS_TRACE_CHECKPOINT);
  EXPECT_EQ(child.checkpoints[1],
            std::vector<std::vector<uint32_t>>{{0}});
}

TEST(TraceRt, PidInTheNameGivesEachProcessItsFile) {
  std::string dir = FreshDir("pid");
  ASSERT_EQ(RunProgAt(dir, dir + "/t.%p", "full", {"seq", "100"}), 0);
  ASSERT_EQ(RunProgAt(dir, dir + "/t.%p", "full", {"seq", "200"}), 0);
  EXPECT_EQ(ReadBytes(dir + "/stderr"), "");
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  std::set<uint32_t> pids;
  std::set<size_t> lengths;
  for (const std::string& f : files) {
    Trace t = ReadTrace(dir + "/" + f);
    ASSERT_EQ(t.error, "") << f;
    EXPECT_EQ(f, "t." + std::to_string(t.header.pid));
    EXPECT_EQ(t.header.generation, 0u) << f;
    pids.insert(t.header.pid);
    lengths.insert(t.witnesses[1].size());
    EXPECT_EQ(t.witnesses[1], Seq(0, 0, t.witnesses[1].size())) << f;
  }
  EXPECT_EQ(pids.size(), 2u);
  EXPECT_EQ(lengths, (std::set<size_t>{100, 200}));
}

TEST(TraceRt, ForkChildExpandsThePidAgain) {
  // "%p" in a directory too: each process creates its own.
  std::string dir = FreshDir("forkpid");
  ASSERT_EQ(RunProgAt(dir, dir + "/%p/t.%p", "full", {"fork", "5000"}), 0);
  EXPECT_EQ(ReadBytes(dir + "/stderr"), "");
  std::vector<std::string> dirs = Files(dir);
  ASSERT_EQ(dirs.size(), 2u);
  std::map<uint32_t, Trace> by_generation;
  for (const std::string& d : dirs) {
    EXPECT_EQ(Files(dir + "/" + d), std::vector<std::string>{"t." + d});
    Trace t = ReadTrace(dir + "/" + d + "/t." + d);
    ASSERT_EQ(t.error, "") << d;
    EXPECT_EQ(std::to_string(t.header.pid), d);
    by_generation[t.header.generation] = t;
  }
  ASSERT_EQ(by_generation.size(), 2u);
  const Trace& parent = by_generation[0];
  const Trace& child = by_generation[1];
  EXPECT_EQ(child.header.parent_pid, parent.header.pid);
  std::vector<uint32_t> want = Seq(0, 0, 5000), more = Seq(2, 0, 5000);
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_EQ(parent.witnesses.at(1), want);
  EXPECT_EQ(child.witnesses.at(1), Seq(1, 0, 5000));
}

TEST(TraceRt, PercentPercentIsOnePercent) {
  std::string dir = FreshDir("percent");
  ASSERT_EQ(RunProgAt(dir, dir + "/t%%p-%x-%%%p%", "full", {"seq", "10"}), 0);
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 1u);
  Trace t = ReadTrace(dir + "/" + files[0]);
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(files[0], "t%p-%x-%" + std::to_string(t.header.pid) + "%");
  EXPECT_EQ(t.witnesses[1], Seq(0, 0, 10));
}

// A name taken by a symbolic link or a directory is left as it is: the
// trace goes beside it, NAME.<pid>, with one line; the status is the
// program's.
TEST(TraceRt, NameNotOursIsNotReplaced) {
  std::string plain = FreshDir("notours_plain");
  int segv = RunProg(plain, "none", {"segv", "5000"});
  struct Case {
    const char* what;
    const char* spec;
    const char* cmd;
    int status;
  };
  for (const Case& c : {Case{"link", "full", "seq", 0},
                        Case{"link", "ring:100", "segv", segv},
                        Case{"dir", "full", "seq", 0}}) {
    std::string dir = FreshDir("notours");
    std::string why;
    if (std::string(c.what) == "link") {
      std::ofstream(dir + "/victim") << "keep";
      ASSERT_EQ(symlink("victim", (dir + "/trace").c_str()), 0);
      why = "is a symbolic link";
    } else {
      ASSERT_EQ(mkdir((dir + "/trace").c_str(), 0755), 0);
      why = "is not a regular file";
    }
    EXPECT_EQ(RunProg(dir, c.spec, {c.cmd, "5000"}), c.status) << c.spec;
    std::vector<std::string> files = Files(dir);
    ASSERT_GE(files.size(), 2u) << c.spec;
    Trace t = ReadTrace(dir + "/" + files[1]);
    ASSERT_EQ(t.error, "") << c.spec;
    std::string beside = "trace." + std::to_string(t.header.pid);
    EXPECT_EQ(files[1], beside) << c.spec;
    EXPECT_EQ(ReadBytes(dir + "/stderr"),
              "ballarus: trace " + dir + "/trace " + why +
                  ", not replaced; the trace is written to " + dir + "/" +
                  beside + " instead\n")
        << c.spec;
    EXPECT_EQ(t.witnesses[1],
              Seq(0, std::string(c.spec) == "full" ? 0 : RingFrom(100, 5000),
                  5000))
        << c.spec;
    struct stat st;
    ASSERT_EQ(lstat((dir + "/trace").c_str(), &st), 0);
    if (std::string(c.what) == "link") {
      EXPECT_TRUE(S_ISLNK(st.st_mode));
      EXPECT_EQ(ReadBytes(dir + "/victim"), "keep");
      EXPECT_EQ(files.size(), 3u);
    } else {
      EXPECT_TRUE(S_ISDIR(st.st_mode));
      EXPECT_EQ(Files(dir + "/trace"), std::vector<std::string>{});
      EXPECT_EQ(files.size(), 2u);
    }
  }
}

// The stack of traced activations that a stream of trace_prog's simulated
// program tells by itself (its blocks and returns are words: see
// trace_prog.c): kEnter pushes, the word 1 pops, kLand truncates, a block
// word b sets the innermost activation's site.  Checks every event's
// depth and site fields against it.
class StackModel {
 public:
  struct Frame {
    uint32_t fn, stamp, site;
  };
  std::vector<Frame> stack;
  uint32_t root_site = 0;
  std::string error;

  // Consumes the witness or event at s[i]; returns the next position.
  size_t Step(const std::vector<uint32_t>& s, size_t i) {
    const uint32_t w = s[i];
    if (w < BALLARUS_TRACE_EVENT_TAG) {
      if (w != 1)
        Site() = w;
      else if (stack.empty())
        Fail(i, "return at depth 0");
      else
        stack.pop_back();
      return i + 1;
    }
    uint32_t n = w == BALLARUS_TRACE_EVENT_END    ? BALLARUS_TRACE_END_WORDS
                 : w == BALLARUS_TRACE_EVENT_LAND ? BALLARUS_TRACE_LAND_WORDS
                                                  : BALLARUS_TRACE_ENTER_WORDS;
    if (i + n > s.size()) return Fail(i, "cut event"), s.size();
    if (w == BALLARUS_TRACE_EVENT_END) {
      if (s[i + 1] != stack.size() || s[i + 2] != Site()) Fail(i, "kEnd");
    } else if (w == BALLARUS_TRACE_EVENT_LAND) {
      if (s[i + 3] != Site() || s[i + 4] != stack.size() ||
          s[i + 2] >= stack.size())
        Fail(i, "kLand");
      else
        stack.resize(s[i + 2] + 1);
    } else {
      if (s[i + 2] != stack.size() || s[i + 3] != Site()) Fail(i, "kEnter");
      stack.push_back({w & ~BALLARUS_TRACE_EVENT_TAG, s[i + 1], Site()});
    }
    return i + n;
  }

  // The checkpoint the runtime should write in this state.
  std::vector<uint32_t> Checkpoint() const {
    if (stack.size() > 16384) return {BALLARUS_TRACE_CHECKPOINT_UNKNOWN};
    std::vector<uint32_t> cp = {static_cast<uint32_t>(stack.size())};
    for (const Frame& f : stack) cp.insert(cp.end(), {f.fn, f.stamp, f.site});
    return cp;
  }

 private:
  uint32_t& Site() { return stack.empty() ? root_site : stack.back().site; }
  void Fail(size_t i, const char* what) {
    if (error.empty())
      error = std::string(what) + " at word " + std::to_string(i);
  }
};

struct Consistency {
  std::string error;
  int known = 0, unknown = 0;  // checkpoints compared
  bool position = false;       // the POSITION compared
};

// Checks the records of thread `serial` of t against the whole stream s
// of the same run (a full trace, or the same program traced in full):
// every CHUNK or RING is s's words at its place, starts at an event's
// first word (events never span two records), and every CHECKPOINT equals
// the stack that s tells at its place, and the POSITION, if any, the stack
// at s's end.
Consistency CheckStream(const Trace& t, const std::vector<uint32_t>& s,
                        uint32_t serial = 1) {
  Consistency c;
  std::map<uint64_t, std::vector<uint32_t>> cps;
  std::set<uint64_t> starts;
  size_t k = 0;
  for (const ballarus_trace_record_header& h : t.records.at(serial)) {
    if (h.kind == BALLARUS_TRACE_CHECKPOINT) {
      cps[h.total] = t.checkpoints.at(serial).at(k++);
      continue;
    }
    uint64_t from = h.total - h.count;
    if (h.count == 0) continue;
    starts.insert(from);
    if (h.total > s.size()) return c.error = "record past the stream", c;
  }
  const std::vector<uint32_t>& w = t.witnesses.at(serial);
  if (w.size() > s.size()) return c.error = "more words than the stream", c;
  uint64_t first = s.size() - w.size();
  if (!std::equal(w.begin(), w.end(), s.begin() + first))
    return c.error = "words differ from the stream's end", c;
  StackModel m;
  for (size_t i = 0; i < s.size() && m.error.empty();) {
    starts.erase(i);
    auto it = cps.find(i);
    if (it != cps.end()) {
      if (it->second != m.Checkpoint())
        return c.error = "checkpoint at word " + std::to_string(i), c;
      (it->second.size() == 1 && it->second[0] != 0 ? c.unknown : c.known)++;
      cps.erase(it);
    }
    i = m.Step(s, i);
  }
  auto pos = t.positions.find(serial);
  if (!m.error.empty())
    c.error = m.error;
  else if (pos != t.positions.end() &&
           (pos->second.first.total != s.size() ||
            pos->second.second != m.Checkpoint()))
    c.error = "the position is not the stack at the stream's end";
  else if (!starts.empty())
    c.error = "record starts inside an event at word " +
              std::to_string(*starts.begin());
  else if (!cps.empty())
    c.error = "checkpoint inside an event at word " +
              std::to_string(cps.begin()->first);
  c.position = pos != t.positions.end();
  return c;
}

// The simulated program traced in full: its whole stream.
std::vector<uint32_t> FullStream(const std::string& name,
                                 const std::vector<std::string>& args,
                                 int* status = nullptr) {
  std::string dir = FreshDir(name);
  int st = RunProg(dir, "full", args);
  if (status)
    *status = st;
  else
    EXPECT_EQ(st, 0) << name;
  Trace t = ReadTrace(dir + "/trace");
  EXPECT_EQ(t.error, "") << name;
  Consistency c = CheckStream(t, t.witnesses[1]);
  EXPECT_EQ(c.error, "") << name;
  return t.witnesses[1];
}

TEST(TraceRt, RingCheckpointsTellTheStack) {
  // 30000 random steps (~66000 words, ~16 chunks) traced in full, then in
  // rings that wrap: every kept chunk's checkpoint is the stack at its
  // first word.
  for (const char* seed : {"1", "2"}) {
    std::vector<uint32_t> s =
        FullStream("hooks_full", {"hooks", "30000", seed});
    ASSERT_GT(s.size(), 50000u);
    for (uint32_t ring : {1u, 5000u, 20000u}) {
      std::string dir = FreshDir("hooks_ring");
      ASSERT_EQ(RunProg(dir, "ring:" + std::to_string(ring),
                        {"hooks", "30000", seed}),
                0);
      Trace t = ReadTrace(dir + "/trace");
      ASSERT_EQ(t.error, "") << ring;
      Consistency c = CheckStream(t, s);
      EXPECT_EQ(c.error, "") << ring << " seed " << seed;
      EXPECT_GE(t.witnesses[1].size(), ring);
      EXPECT_LE(t.witnesses[1].size(), ring + 2 * 4095);
      EXPECT_EQ(c.known, static_cast<int>(t.checkpoints[1].size()));
      EXPECT_GE(c.known, 2) << ring;
    }
  }
}

TEST(TraceRt, RingOnSegvTellsTheStack) {
  int full_status = 0, ring_status = 0;
  std::vector<uint32_t> s =
      FullStream("hooks_segv_full", {"hooks_segv", "20000", "3"}, &full_status);
  ASSERT_TRUE(WIFSIGNALED(full_status));
  EXPECT_EQ(WTERMSIG(full_status), SIGSEGV);
  std::string dir = FreshDir("hooks_segv_ring");
  ring_status = RunProg(dir, "ring:6000", {"hooks_segv", "20000", "3"});
  EXPECT_EQ(ring_status, full_status);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  Consistency c = CheckStream(t, s);
  EXPECT_EQ(c.error, "");
  EXPECT_GE(c.known, 2);
  EXPECT_TRUE(c.position);
  EXPECT_GE(t.witnesses[1].size(), 6000u);
}

// A FAULT record's fields.
struct Fault {
  uint32_t signo = 0;
  int32_t code = 0;
  uint64_t addr = 0, pc = 0, offset = 0;
  std::string path;
};

Fault ReadFault(const std::vector<uint32_t>& w) {
  Fault f;
  if (w.size() < BALLARUS_TRACE_FAULT_WORDS) return f;
  auto u64 = [&w](size_t i) { return w[i] | uint64_t{w[i + 1]} << 32; };
  f.signo = w[0];
  f.code = static_cast<int32_t>(w[1]);
  f.addr = u64(2), f.pc = u64(4), f.offset = u64(6);
  f.path.assign(reinterpret_cast<const char*>(w.data() + 9), w[8]);
  return f;
}

// Whether byte `offset` of the ELF file at `path` is in an executable
// PT_LOAD segment.
bool InExecutableSegment(const std::string& path, uint64_t offset) {
  const std::string elf = ReadBytes(path);
  Elf64_Ehdr eh;
  if (elf.size() < sizeof eh) return false;
  memcpy(&eh, elf.data(), sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (eh.e_phoff + (i + 1) * sizeof ph > elf.size()) return false;
    memcpy(&ph, elf.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
        offset >= ph.p_offset && offset < ph.p_offset + ph.p_filesz)
      return true;
  }
  return false;
}

TEST(TraceRt, FaultRecordNamesTheSignalAndTheInstruction) {
  // A null dereference in trace_prog's main: SIGSEGV, SEGV_MAPERR at 0,
  // the instruction in trace_prog's code; the thread's POSITION is the
  // stack the stream tells at its end (CheckStream).  abort(): SIGABRT
  // sent by the thread to itself (SI_TKILL), in another module (libc).
  std::string dir = FreshDir("fault_segv");
  RunProg(dir, "ring:6000", {"hooks_segv", "20000", "3"});
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.faults.size(), 1u);
  ASSERT_EQ(t.faults.count(1), 1u);
  const auto& [h, w] = t.faults[1];
  EXPECT_EQ(h.seq, t.positions[1].first.seq + 1);
  EXPECT_EQ(h.total, t.positions[1].first.total);
  Fault f = ReadFault(w);
  EXPECT_EQ(f.signo, static_cast<uint32_t>(SIGSEGV));
  EXPECT_EQ(f.code, SEGV_MAPERR);
  EXPECT_EQ(f.addr, 0u);
  char prog[PATH_MAX];
  ASSERT_NE(realpath(Runfile("trace_prog").c_str(), prog), nullptr);
  EXPECT_EQ(f.path, prog);
  EXPECT_NE(f.pc, 0u);
  EXPECT_TRUE(InExecutableSegment(f.path, f.offset)) << f.offset;

  dir = FreshDir("fault_abort");
  RunProg(dir, "ring:100", {"abort", "50"});
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.faults.count(1), 1u);
  f = ReadFault(t.faults[1].second);
  EXPECT_EQ(f.signo, static_cast<uint32_t>(SIGABRT));
  EXPECT_EQ(f.code, SI_TKILL);
  EXPECT_NE(f.path.find("libc"), std::string::npos) << f.path;
  EXPECT_TRUE(InExecutableSegment(f.path, f.offset)) << f.offset;
  // An exit writes positions, no fault.
  dir = FreshDir("fault_none");
  ASSERT_EQ(RunProg(dir, "ring:100", {"hooks", "3000", "1"}), 0);
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_TRUE(t.faults.empty());
  EXPECT_EQ(t.positions.count(1), 1u);
}

TEST(TraceRt, ThreadsRingCheckpointsTellEachStack) {
  // Four threads simulating programs from seeds 1..4, in full then in a
  // ring: each ring thread's words end one full stream, and its
  // checkpoints are that stream's stack.
  std::string dir = FreshDir("hooks_threads_full");
  ASSERT_EQ(RunProg(dir, "full", {"hooks_threads", "20000", "4"}), 0);
  Trace full = ReadTrace(dir + "/trace");
  ASSERT_EQ(full.error, "");
  ASSERT_EQ(full.witnesses.size(), 4u);
  for (const auto& [serial, s] : full.witnesses) {
    EXPECT_EQ(CheckStream(full, s, serial).error, "") << serial;
    EXPECT_EQ(s[s.size() - BALLARUS_TRACE_END_WORDS], BALLARUS_TRACE_EVENT_END);
  }
  dir = FreshDir("hooks_threads_ring");
  ASSERT_EQ(RunProg(dir, "ring:5000", {"hooks_threads", "20000", "4"}), 0);
  Trace ring = ReadTrace(dir + "/trace");
  ASSERT_EQ(ring.error, "");
  ASSERT_EQ(ring.witnesses.size(), 4u);
  std::set<uint32_t> matched;
  for (const auto& [serial, w] : ring.witnesses) {
    for (const auto& [fserial, s] : full.witnesses) {
      if (w.size() > s.size() ||
          !std::equal(w.begin(), w.end(), s.end() - w.size()))
        continue;
      matched.insert(fserial);
      Consistency c = CheckStream(ring, s, serial);
      EXPECT_EQ(c.error, "") << serial;
      EXPECT_GE(c.known, 2) << serial;
    }
  }
  EXPECT_EQ(matched.size(), 4u);
}

TEST(TraceRt, DeepStacksAreUnknownBeyondTheCap) {
  // 20000 nested calls: the checkpoints of chunks that start deeper than
  // 16384 activations say unknown, the others (on the way down and back
  // up) give every frame.
  std::vector<uint32_t> s = FullStream("deep_full", {"deep", "20000"});
  for (const char* spec : {"ring:200000", "ring:3000"}) {
    std::string dir = FreshDir("deep_ring");
    ASSERT_EQ(RunProg(dir, spec, {"deep", "20000"}), 0);
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    Consistency c = CheckStream(t, s);
    EXPECT_EQ(c.error, "") << spec;
    EXPECT_GE(c.known, 1) << spec;
    if (std::string(spec) == "ring:200000") EXPECT_GE(c.unknown, 2);
  }
}

TEST(TraceRt, ActivationsBeforeTheStartAreUnknown) {
  // Two activations live when tracing starts, a third traced: chunks that
  // start while any of the first two is live have unknown checkpoints;
  // once they returned, the new activation (fn 4, stamp 40, called from
  // block 9 at depth 0) is known.
  std::string dir = FreshDir("prestart");
  ASSERT_EQ(RunProg(dir, "ring:100000", {"prestart", "10000"}), 0);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  const auto& cps = t.checkpoints[1];
  // 4 + 10000 + 1 + 4 + 10000 words: chunks start at words 0, 4095 and
  // 8190 in the first phase (the third activation's kEnter, then its
  // witnesses), at 12285 and 16380 in the second.
  ASSERT_EQ(cps.size(), 5u);
  for (size_t i = 0; i < 3; i++)
    EXPECT_EQ(cps[i], std::vector<uint32_t>{BALLARUS_TRACE_CHECKPOINT_UNKNOWN})
        << i;
  for (size_t i = 3; i < 5; i++)
    EXPECT_EQ(cps[i], (std::vector<uint32_t>{1, 4, 40, 9})) << i;
  const std::vector<uint32_t>& w = t.witnesses[1];
  ASSERT_GE(w.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>(w.begin(), w.begin() + 4),
            (std::vector<uint32_t>{BALLARUS_TRACE_EVENT_TAG | 3, 30, 2, 0}));
}

TEST(TraceRt, ThreadRunningAtTheStartRegistersAtItsScratchChunksEnd) {
  // The thread wrote 100 words before the start: its first one went to
  // the slow path (position NULL), which pointed it at a scratch chunk,
  // the 99 others into it.  After the start it fills that chunk
  // (4095 - 99 words, dropped) and registers at the next word.
  std::string dir = FreshDir("prethread");
  ASSERT_EQ(RunProg(dir, "full", {"prethread", "10000"}), 0);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.witnesses.size(), 1u);
  std::vector<uint32_t> want = Seq(1, BALLARUS_TRACE_CHUNK_BYTES / 4 - 100, 10000);
  want.insert(want.end(), {BALLARUS_TRACE_EVENT_END, 0, 0});
  EXPECT_EQ(t.witnesses.begin()->second, want);
}

TEST(TraceRt, ForkChildStartsWithTheStackAtTheFork) {
  std::string dir = FreshDir("hooks_fork");
  ASSERT_EQ(RunProg(dir, "full", {"hooks_fork", "3000", "4"}), 0);
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  Trace parent = ReadTrace(dir + "/trace");
  Trace child = ReadTrace(dir + "/" + files[1]);
  ASSERT_EQ(parent.error, "");
  ASSERT_EQ(child.error, "");
  const std::vector<uint32_t>& s = parent.witnesses[1];
  ASSERT_EQ(CheckStream(parent, s).error, "");
  // The parent's stream: steps, the fork's block 7777, steps; the child
  // took the same steps after the fork.
  auto fork_at = std::find(s.begin(), s.end(), 7777u);
  ASSERT_NE(fork_at, s.end());
  size_t at = fork_at - s.begin() + 1;
  StackModel m;
  for (size_t i = 0; i < at;) i = m.Step(s, i);
  ASSERT_EQ(m.error, "");
  ASSERT_FALSE(m.stack.empty());
  EXPECT_EQ(m.stack.back().site, 7777u);
  ASSERT_FALSE(child.records[1].empty());
  EXPECT_EQ(child.records[1][0].kind, BALLARUS_TRACE_CHECKPOINT);
  EXPECT_EQ(child.records[1][0].seq, 0u);
  EXPECT_EQ(child.records[1][0].total, 0u);
  ASSERT_EQ(child.checkpoints[1].size(), 1u);
  EXPECT_EQ(child.checkpoints[1][0], m.Checkpoint());
  EXPECT_EQ(child.witnesses[1], std::vector<uint32_t>(s.begin() + at, s.end()));
  for (size_t i = 0; i < child.records[1].size(); i++)
    EXPECT_EQ(child.records[1][i].seq, i);
  // In a ring both processes keep the chunks before the fork, and both
  // took the same steps after it: each file is the end of s, its
  // checkpoints s's stack.
  dir = FreshDir("hooks_fork_ring");
  ASSERT_EQ(RunProg(dir, "ring:100000", {"hooks_fork", "3000", "4"}), 0);
  files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    Trace t = ReadTrace(dir + "/" + f);
    ASSERT_EQ(t.error, "") << f;
    EXPECT_EQ(t.witnesses[1], s) << f;
    Consistency c = CheckStream(t, s);
    EXPECT_EQ(c.error, "") << f;
    EXPECT_GE(c.known, 2) << f;
  }
}

// The stream of `hooks STEPS 5` and the kEnd it ends with.
std::vector<uint32_t> StreamWithEnd(const std::string& name,
                                    const char* steps = "3000") {
  std::vector<uint32_t> s = FullStream(name, {"hooks", steps, "5"});
  StackModel m;
  for (size_t i = 0; i < s.size();) i = m.Step(s, i);
  uint32_t site = m.stack.empty() ? m.root_site : m.stack.back().site;
  s.insert(s.end(), {BALLARUS_TRACE_EVENT_END,
                     static_cast<uint32_t>(m.stack.size()), site});
  return s;
}

TEST(TraceRt, ExecWritesTheTraceFirst) {
  std::vector<uint32_t> want = StreamWithEnd("exec_plain");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("exec");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_exec", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], want) << spec;
    EXPECT_EQ(CheckStream(t, want).error, "") << spec;
  }
}

TEST(TraceRt, VforkChildsExecLeavesTheParentsTrace) {
  // The child shares the parent's memory: its __ballarus_trace_exec must
  // neither write a kEnd into the parent's chunk nor finish the file.
  // 3000 steps, vfork + exec, 3000 more and the parent's own exec = the
  // stream of 6000 steps and one kEnd.
  std::vector<uint32_t> s = StreamWithEnd("vfork_plain", "6000");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("vfork");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_vfork", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], s) << spec;
    EXPECT_EQ(CheckStream(t, s).error, "") << spec;
  }
}

TEST(TraceRt, FailedExecContinuesUntraced) {
  // The trace ends at the first exec's kEnd; the steps after the failed
  // exec and the second exec's kEnd are not written.
  std::vector<uint32_t> want = StreamWithEnd("execfail_plain");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("execfail");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_execfail", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], want) << spec;
  }
}

// Runs NAME ARGS in DIR with BALLARUS_TRACE=SPEC,
// BALLARUS_TRACE_FILE=DIR/trace and BALLARUS_PROFILE=DIR/p.profile;
// returns the wait status.
int RunTraced(const std::string& dir, const std::string& name,
              const std::string& spec, std::vector<std::string> args) {
  std::string prog = Runfile(name);
  args.insert(args.begin(), prog);
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::string e = dir + "/stderr";
    std::string path = dir + "/trace";
    std::string profile = dir + "/p.profile";
    if (!freopen(e.c_str(), "w", stderr) || chdir(dir.c_str()) != 0 ||
        setenv("BALLARUS_TRACE", spec.c_str(), 1) != 0 ||
        setenv("BALLARUS_TRACE_FILE", path.c_str(), 1) != 0 ||
        setenv("BALLARUS_PROFILE", profile.c_str(), 1) != 0 ||
        unsetenv("RT_HOME") != 0)
      _exit(126);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  return st;
}

TEST(TraceRt, ProgramAndLibraryShareOneTrace) {
  // Program and library each carry the runtime; each thread's words,
  // half written by each module in turns of 50, form one stream in
  // program order, ended by one kEnd (at exit for main, at its end for the
  // thread).
  const uint32_t n = 20000;
  const std::vector<uint32_t> end = {BALLARUS_TRACE_EVENT_END, 0, 0};
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("host");
    EXPECT_EQ(RunTraced(dir, "trace_host", spec, {std::to_string(n)}), 0)
        << spec;
    EXPECT_EQ(ReadBytes(dir + "/stderr"), "") << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    ASSERT_EQ(t.witnesses.size(), 2u) << spec;
    for (uint32_t k = 0; k < 2; k++) {
      std::vector<uint32_t> want = Seq(k, 0, n);
      want.insert(want.end(), end.begin(), end.end());
      EXPECT_EQ(t.witnesses[k + 1], want) << spec << " thread " << k + 1;
    }
  }
}

// The blob rt_test_tus.h's RT_DEFINE_TU(tu, body, n) builds without a
// home.
std::string TuBlob(const char* tu, const std::string& body, uint64_t n) {
  std::vector<unsigned char> b(RT_NAMES_MAX + body.size() + 64);
  b.resize(rt_make_blob(b.data(), b.size(), nullptr, tu, body.data(),
                        body.size(), n));
  return std::string(b.begin(), b.end());
}

TEST(TraceRt, TraceCarriesEveryTusMetadata) {
  // The program's two TUs' blobs are in the file as METADATA records
  // (seq 0 and 1, thread 0), whether it exits or dies of SIGSEGV, which
  // writes no profile; the stream is not disturbed.
  std::vector<std::string> want = {
      TuBlob("alpha", std::string(RT_ALPHA_BODY, sizeof RT_ALPHA_BODY - 1),
             RT_ALPHA_N),
      TuBlob("beta", RT_BETA_BODY, RT_BETA_N)};
  std::sort(want.begin(), want.end());
  ASSERT_GT(want[0].size(), sizeof(ballarus_meta_header));
  for (const char* spec : {"full", "ring:1000"})
    for (const char* cmd : {"ok", "segv"}) {
      std::string what = std::string(spec) + " " + cmd;
      std::string dir = FreshDir("meta");
      int st = RunTraced(dir, "trace_meta_prog", spec, {cmd, "20000"});
      if (strcmp(cmd, "ok") == 0)
        EXPECT_EQ(st, 0) << what;
      else
        EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) << what;
      EXPECT_EQ(ReadBytes(dir + "/stderr"), "") << what;
      Trace t = ReadTrace(dir + "/trace");
      ASSERT_EQ(t.error, "") << what;
      std::vector<std::string> got = t.metadata;
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << what;
      ASSERT_EQ(t.records[0].size(), 2u) << what;
      for (uint32_t k = 0; k < 2; k++) {
        EXPECT_EQ(t.records[0][k].kind, BALLARUS_TRACE_METADATA) << what;
        EXPECT_EQ(t.records[0][k].seq, k) << what;
      }
      std::vector<uint32_t> stream = Seq(0, 0, 20000);
      if (strcmp(cmd, "ok") == 0)
        stream.insert(stream.end(), {BALLARUS_TRACE_EVENT_END, 0, 0});
      const std::vector<uint32_t>& w = t.witnesses[1];
      ASSERT_LE(w.size(), stream.size()) << what;
      EXPECT_TRUE(std::equal(w.begin(), w.end(), stream.end() - w.size()))
          << what;
      EXPECT_EQ(w.size() == stream.size(), strcmp(spec, "full") == 0) << what;
    }
}

// A trace file made here: the file header of `version`, then records
// {kind, seq, words, total} of thread 1 (METADATA: of thread 0, the words
// its bytes).
struct HandRecord {
  uint32_t kind, seq;
  std::vector<uint32_t> words;
  uint64_t total;
};

std::string HandFile(uint32_t version, const std::vector<HandRecord>& recs) {
  std::string out;
  auto put = [&out](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  ballarus_trace_file_header fh{};
  memcpy(fh.magic, BALLARUS_TRACE_MAGIC, 8);
  fh.version = version;
  fh.header_size = sizeof fh;
  fh.mode = BALLARUS_TRACE_MODE_RING;
  fh.ring_n = 10;
  put(&fh, sizeof fh);
  for (const HandRecord& r : recs) {
    std::string payload;
    uint32_t prev = 0;
    bool meta = r.kind == BALLARUS_TRACE_METADATA;  // words: its bytes
    for (uint32_t w : r.words) {
      if (meta) {
        payload.push_back(static_cast<char>(w));
        continue;
      }
      uint32_t d = w - prev, z = (d << 1) ^ (0u - (d >> 31));
      prev = w;
      do {
        payload.push_back(
            static_cast<char>((z & 0x7f) | (z > 0x7f ? 0x80 : 0)));
        z >>= 7;
      } while (z);
    }
    ballarus_trace_record_header h{};
    h.magic = BALLARUS_TRACE_RECORD_MAGIC;
    h.kind = r.kind;
    h.thread = meta ? 0 : 1;
    h.seq = r.seq;
    h.count = static_cast<uint32_t>(r.words.size());
    h.bytes = static_cast<uint32_t>(payload.size());
    h.total = r.total;
    put(&h, sizeof h);
    out += payload;
    uint32_t fnv = 2166136261u;
    for (unsigned char ch : payload) fnv = (fnv ^ ch) * 16777619u;
    put(&fnv, 4);
  }
  return out;
}

std::string ReadError(const std::string& data) {
  ballarus_trace_file_header h;
  char err[256] = "";
  Trace sink;
  if (ballarus_trace_read(data.data(), data.size(), &h, Collect, &sink, err,
                          sizeof err) == 0)
    return "";
  return err;
}

TEST(TraceRt, ReaderChecksCheckpointsAndSeq) {
  const uint32_t kU = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  const uint32_t kCp = BALLARUS_TRACE_CHECKPOINT, kRing = BALLARUS_TRACE_RING;
  // D = 1: one frame (fn 3, stamp 9, site 4); then 3 words.
  std::vector<HandRecord> good = {{kCp, 0, {1, 3, 9, 4}, 7},
                                  {kRing, 1, {5, 6, 1}, 10},
                                  {kCp, 2, {kU}, 10},
                                  {kRing, 3, {8}, 11}};
  EXPECT_EQ(ReadError(HandFile(2, good)), "");
  EXPECT_EQ(ReadError(HandFile(1, good)),
            "trace file version 1: this reader reads versions 2 to 3 (trace "
            "the program again with this ballarus)");
  EXPECT_EQ(ReadError(HandFile(4, good)),
            "trace file version 4: this reader reads versions 2 to 3 (trace "
            "the program again with this ballarus)");
  auto with = [&good](size_t i, HandRecord r) {
    std::vector<HandRecord> v = good;
    v[i] = r;
    return HandFile(2, v);
  };
  size_t third = sizeof(ballarus_trace_file_header) + 40 + 4 + 4 + 40 + 3 + 4;
  std::string at_third = "bad trace record at byte " + std::to_string(third);
  // D = 1 with two frames' words, D = 2 with one, unknown with a frame,
  // an empty checkpoint: all refused at their record.
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {1, 3, 9, 4, 5, 6, 7}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {2, 3, 9, 4}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {kU, 3, 9, 4}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {}, 10})), at_third);
  // seq counts every kind: a gap or a repeat is refused.
  EXPECT_EQ(ReadError(with(2, {kCp, 3, {kU}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 1, {kU}, 10})), at_third);
}

TEST(TraceRt, ReaderTakesAnySerial) {
  // A thread's serial costs the reader one slot, whatever its value (it
  // once grew an array to it: 8 GiB for 2^31); seq still checked per
  // thread.
  const HandRecord ring = {BALLARUS_TRACE_RING, 0, {5, 6, 1}, 3};
  std::string f = HandFile(3, {ring});
  const uint32_t serial = 0x80000003u;
  memcpy(&f[sizeof(ballarus_trace_file_header) + 8], &serial, 4);
  EXPECT_EQ(ReadError(f), "");
  std::string twice = f + f.substr(sizeof(ballarus_trace_file_header));
  EXPECT_NE(ReadError(twice), "");  // seq 0 twice
}

TEST(TraceRt, ReaderChecksPositionAndFault) {
  const uint32_t kU = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  const uint32_t kP = BALLARUS_TRACE_POSITION, kF = BALLARUS_TRACE_FAULT;
  const HandRecord ring = {BALLARUS_TRACE_RING, 0, {5, 6, 1}, 3};
  // SIGSEGV, SEGV_MAPERR at 0, pc 0x1234, offset 0x234, path "/a/bc" (5
  // bytes: 2 words).
  const std::vector<uint32_t> fault = {11, 1, 0, 0, 0x1234, 0, 0x234, 0,
                                       5, 0x632f612f, 0x62};
  auto file = [&](uint32_t version, HandRecord p, HandRecord f) {
    return HandFile(version, {ring, p, f});
  };
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            "");
  EXPECT_EQ(ReadError(file(3, {kP, 1, {kU}, 3}, {kF, 2, fault, 3})), "");
  size_t second = sizeof(ballarus_trace_file_header) + 40 + 3 + 4;
  size_t third = second + 40 + 4 + 4;
  const std::string at_second =
      "bad trace record at byte " + std::to_string(second);
  const std::string at_third =
      "bad trace record at byte " + std::to_string(third);
  // Not in version 2; a position's frames as a checkpoint's; a fault's
  // path length must fill its words exactly.
  EXPECT_EQ(ReadError(file(2, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            at_second);
  EXPECT_EQ(ReadError(file(3, {kP, 1, {2, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            at_second);
  std::vector<uint32_t> bad = fault;
  bad[8] = 9;
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, bad, 3})),
            at_third);
  bad = {11, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, bad, 3})),
            at_third);
}

TEST(TraceRt, ReaderPassesMetadataBytesAndChecksThem) {
  const uint32_t M = BALLARUS_TRACE_METADATA, C = BALLARUS_TRACE_CHECKPOINT,
                 R = BALLARUS_TRACE_RING;
  std::vector<HandRecord> recs = {{M, 0, {1, 0x80, 255}, 0},
                                  {C, 0, {0}, 0},
                                  {R, 1, {5, 6}, 2},
                                  {M, 1, {9}, 0}};
  std::string f = HandFile(BALLARUS_TRACE_VERSION, recs);
  ballarus_trace_file_header fh;
  Trace t;
  char err[256] = "";
  ASSERT_EQ(ballarus_trace_read(f.data(), f.size(), &fh, Collect, &t, err,
                                sizeof err),
            0)
      << err;
  EXPECT_EQ(t.metadata,
            (std::vector<std::string>{std::string("\x01\x80\xff"), "\x09"}));
  EXPECT_EQ(t.witnesses[1], (std::vector<uint32_t>{5, 6}));
  // Refused: a gap in the METADATA records' seq, a total, an empty one, a
  // count that is not the byte count.
  std::vector<std::vector<HandRecord>> bad = {
      {{M, 1, {1}, 0}}, {{M, 0, {1}, 3}}, {{M, 0, {}, 0}}};
  for (size_t i = 0; i < bad.size(); i++) {
    std::string g = HandFile(BALLARUS_TRACE_VERSION, bad[i]);
    EXPECT_NE(ballarus_trace_read(g.data(), g.size(), &fh, Collect, &t, err,
                                  sizeof err),
              0)
        << i;
  }
  uint32_t two = 2;
  memcpy(&f[sizeof fh + offsetof(ballarus_trace_record_header, count)], &two,
         4);
  EXPECT_NE(ballarus_trace_read(f.data(), f.size(), &fh, Collect, &t, err,
                                sizeof err),
            0);
}

TEST(TraceRt, ReaderRejectsDamage) {
  std::string dir = FreshDir("damage");
  ASSERT_EQ(RunProg(dir, "full", {"seq", "10000"}), 0);
  std::string data = ReadBytes(dir + "/trace");
  ballarus_trace_file_header h;
  char err[256];
  Trace sink;
  for (size_t at : {size_t{0}, size_t{50}, size_t{200}, data.size() - 1}) {
    std::string bad = data;
    bad[at] ^= 0x10;
    EXPECT_EQ(ballarus_trace_read(bad.data(), bad.size(), &h, Collect, &sink,
                                  err, sizeof err),
              -1)
        << at;
  }
  EXPECT_EQ(ballarus_trace_read(data.data(), data.size() - 3, &h, Collect,
                                &sink, err, sizeof err),
            -1);
}

}  // namespace
