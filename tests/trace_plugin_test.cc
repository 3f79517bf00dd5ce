// mode=trace with the real GCC and the built plugin: a small program
// (a loop, an if/else chain in a callee, a call per iteration) built with
// -fplugin-arg-ballarus-mode=trace prints what the plain build prints, and
// its trace file holds the events the program's semantics imply:
// one kEnter of main at depth 0, one kEnter of classify per iteration at
// depth 1 from one call site of main, exactly one witness per classify
// activation (its three returns are three blocking witnesses) telling
// i % 3 apart, n + 2 witnesses of main (argc > 1 once, the loop's
// condition n + 1 times), and a final kEnd at depth 0.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "tests/harness.h"

namespace {

using harness::Quote;
using harness::Run;

const char kProgram[] = R"(#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int classify(int x) {
  if (x % 3 == 0) return 0;
  else if (x % 3 == 1) return 1;
  return 2;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  int sums[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) sums[classify(i)] += i;
  printf("%d %d %d\n", sums[0], sums[1], sums[2]);
  return 0;
}
)";

const char kThreads[] = R"(#include <pthread.h>
#include <stdio.h>
__attribute__((noinline)) static int odd(int x) { return x & 1 ? 1 : 0; }
static void *work(void *arg) {
  long n = (long)arg, odds = 0;
  for (long i = 0; i < n; i++) odds += odd((int)i);
  return (void *)odds;
}
int main(void) {
  pthread_t t[3];
  long total = 0;
  for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, (void *)(10 * (i + 1)));
  for (int i = 0; i < 3; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (long)r;
  }
  printf("%ld\n", total);
  return 0;
}
)";

const char kExceptions[] = R"(#include <cstdio>
#include <stdexcept>
__attribute__((noinline)) int f(int x) {
  if (x > 3) throw std::runtime_error("big");
  return x * 2;
}
int main(int argc, char**) {
  int s = 0;
  for (int i = 0; i < 6; i++) {
    try { s += f(i + argc); } catch (const std::exception& e) { s -= 1; }
  }
  std::printf("%d\n", s);
}
)";

const char kLongjmp[] = R"(#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
__attribute__((noinline)) static void g(int x) { if (x & 1) longjmp(jb, x); }
int main(void) {
  int s = 0;
  for (int i = 0; i < 5; i++) {
    int r = setjmp(jb);
    if (r == 0) g(i); else s += r;
  }
  printf("%d\n", s);
  return 0;
}
)";

// Each thread's words, by thread serial.
int CollectByThread(void* ctx, const ballarus_trace_record_header* h,
                    const uint32_t* w) {
  auto* m = static_cast<std::map<uint32_t, std::vector<uint32_t>>*>(ctx);
  (*m)[h->thread].insert((*m)[h->thread].end(), w, w + h->count);
  return 0;
}

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  auto* words = static_cast<std::vector<uint32_t>*>(ctx);
  words->insert(words->end(), w, w + h->count);
  return 0;
}

std::vector<uint32_t> ReadTrace(const std::string& path) {
  const std::string bytes = harness::ReadFileOrDie(path);
  std::vector<uint32_t> words;
  ballarus_trace_file_header header;
  char err[256];
  EXPECT_EQ(ballarus_trace_read(bytes.data(), bytes.size(), &header, Collect,
                                &words, err, sizeof err),
            0)
      << err;
  return words;
}

class TracePluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = harness::TempRoot() + "/trace_plugin";
    harness::MakeFreshDir(dir_);
    harness::WriteFileOrDie(dir_ + "/prog.c", kProgram);
  }
  // Builds prog.c into `exe` with `flags`; the runtime is linked with the
  // plugin.
  void Build(const std::string& exe, const std::string& flags,
             const std::string& compiler = "gcc",
             const std::string& source = "prog.c") {
    const std::string rf = harness::Runfiles();
    const std::string plugin =
        flags.empty() ? ""
                      : "-fplugin=" + Quote(rf + "/plugin/ballarus.so") + " " +
                            flags + " ";
    const std::string rt =
        flags.empty() ? "" : Quote(rf + "/runtime/archive/libballarus_rt.a");
    auto r = harness::Run(compiler + " " + plugin + source + " " + rt + " -lpthread -o " + exe,
                 dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  std::string dir_;
};

// The events of one run with n iterations, checked as the header says.
void CheckEvents(const std::vector<uint32_t>& w, int n) {
  std::vector<int> depth_of_enter;
  std::vector<uint32_t> sites;
  std::map<int, uint32_t> id_of_class;
  int main_witnesses = 0, enters = 0;
  int classify_witnesses = -1;  // in the current classify activation
  size_t i = 0;
  bool ended = false;
  while (i < w.size()) {
    ASSERT_FALSE(ended) << "words after kEnd";
    if (w[i] == BALLARUS_TRACE_EVENT_END) {
      ASSERT_EQ(i + BALLARUS_TRACE_END_WORDS, w.size());
      EXPECT_EQ(w[i + 1], 0u) << "kEnd's depth";
      ended = true;
      i += BALLARUS_TRACE_END_WORDS;
    } else if (w[i] & BALLARUS_TRACE_EVENT_TAG) {
      ASSERT_LE(i + BALLARUS_TRACE_ENTER_WORDS, w.size());
      const uint32_t fn = w[i] & ~BALLARUS_TRACE_EVENT_TAG;
      const uint32_t depth = w[i + 2];
      if (enters++ == 0) {
        EXPECT_EQ(depth, 0u);
      } else {
        EXPECT_EQ(depth, 1u);
        EXPECT_NE(fn, w[0] & ~BALLARUS_TRACE_EVENT_TAG) << "main re-entered";
        EXPECT_NE(classify_witnesses, 0) << "classify wrote no witness";
        sites.push_back(w[i + 3]);
        classify_witnesses = 0;
      }
      i += BALLARUS_TRACE_ENTER_WORDS;
    } else if (classify_witnesses == 0) {
      const int x = enters - 2;  // classify(x): the iteration
      auto it = id_of_class.emplace(x % 3, w[i]).first;
      EXPECT_EQ(it->second, w[i]) << "classify(" << x << ")";
      classify_witnesses = 1;
      ++i;
    } else {
      ++main_witnesses;
      classify_witnesses = -1;
      ++i;
    }
  }
  EXPECT_TRUE(ended);
  EXPECT_NE(classify_witnesses, 0) << "classify wrote no witness";
  EXPECT_EQ(enters, n + 1);
  EXPECT_EQ(main_witnesses, n + 2);
  for (uint32_t s : sites) EXPECT_EQ(s, sites[0]);
  if (n >= 3) {
    EXPECT_EQ(id_of_class.size(), 3u);
    EXPECT_NE(id_of_class[0], id_of_class[1]);
    EXPECT_NE(id_of_class[1], id_of_class[2]);
    EXPECT_NE(id_of_class[0], id_of_class[2]);
  }
}

TEST_F(TracePluginTest, OutputUnchangedAndEventsAsDerived) {
  Build("plain", "");
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    Build("traced", std::string(opt) + " -fplugin-arg-ballarus-mode=trace");
    for (int n : {0, 1, 5, 12}) {
      SCOPED_TRACE(n);
      const std::string arg = " " + std::to_string(n);
      auto plain = harness::Run("./plain" + arg, dir_);
      auto untraced = harness::Run("./traced" + arg, dir_);
      auto traced = harness::Run("./traced" + arg, dir_,
                        {"BALLARUS_TRACE=full",
                         "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"});
      EXPECT_EQ(plain.status, 0);
      EXPECT_EQ(untraced.out, plain.out);
      EXPECT_EQ(traced.out, plain.out);
      EXPECT_EQ(traced.status, plain.status);
      EXPECT_EQ(traced.err, "");
      CheckEvents(ReadTrace(dir_ + "/t.trace"), n);
    }
  }
}

// Splits a trace-naive stream after each kEnter of classify (depth 1):
// the words up to the next kEnter or kEnd, i.e. classify's blocks then
// main's up to the next call.
std::vector<std::vector<uint32_t>> NaiveSegments(
    const std::vector<uint32_t>& w) {
  std::vector<std::vector<uint32_t>> segments;
  bool in_segment = false;
  for (size_t i = 0; i < w.size();) {
    if (w[i] & BALLARUS_TRACE_EVENT_TAG) {
      const bool end = w[i] == BALLARUS_TRACE_EVENT_END;
      in_segment = !end && w[i + 2] == 1;
      if (in_segment) segments.emplace_back();
      i += end ? BALLARUS_TRACE_END_WORDS : BALLARUS_TRACE_ENTER_WORDS;
    } else {
      if (in_segment) segments.back().push_back(w[i]);
      ++i;
    }
  }
  return segments;
}

// mode=trace-naive: output unchanged; every iteration but the last writes
// the same blocks for the same i % 3 and other blocks for another; and the
// optimal trace writes fewer words.
TEST_F(TracePluginTest, NaiveTraceBlocksFollowTheInput) {
  Build("plain", "");
  const int n = 12;
  const std::vector<std::string> env = {
      "BALLARUS_TRACE=full", "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"};
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    Build("naive",
          std::string(opt) + " -fplugin-arg-ballarus-mode=trace-naive");
    Build("traced", std::string(opt) + " -fplugin-arg-ballarus-mode=trace");
    const std::string arg = " " + std::to_string(n);
    auto plain = harness::Run("./plain" + arg, dir_);
    auto naive = harness::Run("./naive" + arg, dir_, env);
    EXPECT_EQ(naive.out, plain.out);
    EXPECT_EQ(naive.status, plain.status);
    const std::vector<uint32_t> words = ReadTrace(dir_ + "/t.trace");
    const auto segments = NaiveSegments(words);
    ASSERT_EQ(segments.size(), static_cast<size_t>(n));
    for (int i = 0; i + 1 < n; ++i) {
      EXPECT_FALSE(segments[i].empty());
      for (int j = 0; j + 1 < n; ++j)
        EXPECT_EQ(segments[i] == segments[j], i % 3 == j % 3)
            << "iterations " << i << " and " << j;
    }
    auto traced = harness::Run("./traced" + arg, dir_, env);
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_LT(ReadTrace(dir_ + "/t.trace").size(), words.size());
  }
}

// Threads: every thread's stream starts with a kEnter at depth 0 and ends
// with kEnd at depth 0 (threads at their end, main at exit).
TEST_F(TracePluginTest, EveryThreadEndsItsStream) {
  harness::WriteFileOrDie(dir_ + "/prog.c", kThreads);
  Build("plain", "");
  Build("traced", "-O1 -fplugin-arg-ballarus-mode=trace");
  auto plain = harness::Run("./plain", dir_);
  auto traced = harness::Run(
      "./traced", dir_,
      {"BALLARUS_TRACE=full", "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"});
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.status, 0);
  const std::string bytes = harness::ReadFileOrDie(dir_ + "/t.trace");
  std::map<uint32_t, std::vector<uint32_t>> streams;
  ballarus_trace_file_header header;
  char err[256];
  ASSERT_EQ(ballarus_trace_read(bytes.data(), bytes.size(), &header,
                                CollectByThread, &streams, err, sizeof err),
            0)
      << err;
  ASSERT_EQ(streams.size(), 4u);
  for (const auto& [thread, w] : streams) {
    SCOPED_TRACE(thread);
    ASSERT_GE(w.size(), BALLARUS_TRACE_ENTER_WORDS + BALLARUS_TRACE_END_WORDS);
    EXPECT_TRUE(w[0] & BALLARUS_TRACE_EVENT_TAG);
    EXPECT_EQ(w[2], 0u) << "first kEnter's depth";
    const size_t end = w.size() - BALLARUS_TRACE_END_WORDS;
    EXPECT_EQ(w[end], BALLARUS_TRACE_EVENT_END);
    EXPECT_EQ(w[end + 1], 0u) << "kEnd's depth";
  }
}

// Exceptions and longjmp (kLand is not written yet): the traced builds
// compile, print as the plain ones and write a readable trace ending with
// kEnd.
TEST_F(TracePluginTest, ExceptionsAndLongjmpRunUnchanged) {
  harness::WriteFileOrDie(dir_ + "/ex.cc", kExceptions);
  harness::WriteFileOrDie(dir_ + "/sj.c", kLongjmp);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"g++", "ex.cc"}, {"gcc", "sj.c"}};
  for (const auto& [compiler, source] : cases)
    for (const char* opt : {"-O0", "-O2"}) {
      SCOPED_TRACE(source + " " + opt);
      Build("plain", "", compiler, source);
      Build("traced", std::string(opt) + " -fplugin-arg-ballarus-mode=trace",
            compiler, source);
      auto plain = harness::Run("./plain", dir_);
      auto traced = harness::Run(
          "./traced", dir_,
          {"BALLARUS_TRACE=full", "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"});
      EXPECT_EQ(traced.out, plain.out);
      EXPECT_EQ(traced.status, plain.status);
      const std::vector<uint32_t> w = ReadTrace(dir_ + "/t.trace");
      ASSERT_GE(w.size(), BALLARUS_TRACE_END_WORDS);
      EXPECT_EQ(w[w.size() - BALLARUS_TRACE_END_WORDS],
                BALLARUS_TRACE_EVENT_END);
    }
}

}  // namespace
