// trace_rt_test.cc — end-to-end tests of the trace runtime: trace_prog
// writes known witness sequences (testdata/trace_seq.h) through
// ballarus_trace_witness, or calls the hooks of trace_events.h as a
// simulated program, in fresh directories, and the trace files are read
// back with trace_read.c and compared word for word; checkpoints are
// compared with the stack the stream itself tells.
// This file: full and ring traces of known sequences, fatal signals,
// threads, fork and the names of trace files.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "runtime/trace_rt_test_util.h"

namespace trace_rt_test {
namespace {

TEST(TraceRt, FullTraceReadsBackEqual) {
  // 10000 witnesses cross the 4092-witness chunk twice.
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
  EXPECT_EQ(t.witnesses[1], Seq(0, 0, 4092));
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

// The ring keeps whole chunks of 4092 witnesses (up to 4095 words when
// an event ends in the next chunk's head): ceil(N / 4091) of them besides
// the one being written (a chunk ends early only before an event, of at
// most 5 words, that does not fit).  The first word it keeps of a stream
// of n witnesses:
uint32_t RingFrom(uint32_t ring, uint32_t n) {
  uint32_t chunks = (n + 4091) / 4092, kept = (ring + 4090) / 4091 + 1;
  return chunks > kept ? (chunks - kept) * 4092 : 0;
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
    ASSERT_EQ(recs.size(), 2 * ((c.n - from + 4091) / 4092));
    uint64_t at = from;
    for (size_t i = 0; i < recs.size(); i++) {
      EXPECT_EQ(recs[i].seq, i);
      EXPECT_EQ(recs[i].kind,
                i % 2 ? BALLARUS_TRACE_RING : BALLARUS_TRACE_CHECKPOINT);
      if (i % 2 == 1) at += recs[i].count;
      EXPECT_EQ(recs[i].total, at) << i;
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
  // Installed after: kept behind the runtime's, which writes the ring
  // first; the program's handler still gets the signal.
  dir = FreshDir("late");
  st = RunProg(dir, "ring:30", {"late", "50"}, &out);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 42);
  EXPECT_EQ(out, "handled\n");
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.witnesses[1], Seq(0, RingFrom(30, 50), 50));
}

TEST(TraceRt, ProgramSeesItsOwnActions) {
  // What the program sets for a fatal signal while the recorder runs is
  // what it reads back, through signal, sigaction, sysv_signal,
  // bsd_signal, sigset (and its mask) and sigignore alike; other signals
  // reach the kernel.
  std::string dir = FreshDir("actions");
  std::string out;
  int st = RunProg(dir, "ring:30", {"actions", "50"}, &out);
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_EQ(out,
            "SIGSEGV dfl on_segv on_segv\nSIGUSR1 on_usr1 ran\n"
            "SIGBUS on_segv oneshot\nSIGILL dfl on_segv restart\n"
            "SIGFPE dfl on_segv on_segv held was held\nSIGABRT ign\n");
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

}  // namespace
}  // namespace trace_rt_test
