// mode=trace with the real GCC and the built plugin: a small program
// (a loop, an if/else chain in a callee, a call per iteration) built with
// -fplugin-arg-ballarus-mode=trace prints what the plain build prints, and
// its trace file holds the events the program's semantics imply:
// one kEnter of main at depth 0, one kEnter of classify per iteration at
// depth 1 from one call site of main, exactly one witness per classify
// activation (its three returns are three blocking witnesses) telling
// i % 3 apart, n + 1 + c witnesses of main (the loop's condition n + 1
// times: its exit edge is EXIT's blocker, its cycle through the call holds
// one chord; c is 0 or 1 for every n alike: the branch on argc > 1 and its
// arms, one calling atoi, form a diamond with one chord, on the arm taken
// or not), and a final kEnd at depth 0.
// Exec writes the trace first; a naive stream decoded with a stack is the
// block sequence derived by hand; thunks, fork, computed gotos and a
// traced callback of an untraced caller keep the depths and sites.
// Landings: trace_plugin_landing_test.cc.

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "tests/harness.h"
#include "tests/trace_plugin_test_util.h"

namespace trace_plugin_test {
namespace {

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

// exec from a traced callee: the trace must be written before it.
const char kExec[] = R"(#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) static void run(const char *word) {
  execl("/bin/echo", "echo", word, (char *)0);
  perror("execl");
}
int main(int argc, char **argv) {
  if (argc > 1) run(argv[1]);
  return 1;
}
)";

// For the naive stream decoded by hand: sign(i - 1) for i < n.
const char kSign[] = R"(#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int sign(int x) {
  if (x < 0) return -1;
  return 1;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  int s = 0;
  for (int i = 0; i < n; i++) s += sign(i - 1);
  printf("%d\n", s);
  return 0;
}
)";

// A this-adjusting thunk (expanded into GIMPLE, its call marked as a tail
// call) between main and C::g.
const char kThunks[] = R"(#include <cstdio>
struct A { virtual int f(int x) { return x + 1; } virtual ~A() {} };
struct B { virtual int g(int x) { return x * 2; } virtual ~B() {} };
struct C : A, B { int g(int x) override { return x * 3; } };
int main() {
  C c;
  B* b = &c;
  int s = 0;
  for (int i = 0; i < 5; i++) s += b->g(i);
  std::printf("%d\n", s);
}
)";

// fork() in a traced helper (its call block has a re-entry edge in the
// model).
// An interpreter dispatched by computed gotos (GCC's labels as values);
// `loop` restarts the program n times.
const char kInterp[] = R"(#include <stdio.h>
#include <stdlib.h>
static int run(const char *code, int n) {
  static void *ops[] = {&&halt, &&inc, &&dbl, &&loop};
  int acc = 0, pc = 0;
  goto *ops[code[pc] - '0'];
inc:
  acc += 1, pc++;
  goto *ops[code[pc] - '0'];
dbl:
  acc *= 2;
  if (acc > 1000) acc -= 999;
  pc++;
  goto *ops[code[pc] - '0'];
loop:
  if (--n > 0) pc = 0; else pc++;
  goto *ops[code[pc] - '0'];
halt:
  return acc;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  printf("%d\n", run("12121230", n));
  return 0;
}
)";

const char kFork[] = R"(#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) static int spawn(void) {
  fflush(stdout);
  return fork();
}
int main(void) {
  int total = 0;
  for (int round = 0; round < 2; round++) {
    int pid = spawn();
    if (pid == 0) {
      printf("child %d\n", round);
      fflush(stdout);
      _exit(round + 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    total += WEXITSTATUS(st);
  }
  printf("total %d\n", total);
  return 0;
}
)";

// A traced callback of an untraced caller (qsort), itself calling a traced
// function after a branch: its kEnters carry no site of their own making.
const char kCallback[] = R"(#include <stdio.h>
#include <stdlib.h>
static int calls;
__attribute__((noinline)) static int key(int x) {
  calls++;
  return x % 7;
}
static int cmp(const void* a, const void* b) {
  if (a == b) return 0;
  int x = key(*(const int*)a), y = key(*(const int*)b);
  return (x > y) - (x < y);
}
int main(void) {
  int v[6] = {5, 3, 9, 1, 12, 4};
  qsort(v, 6, sizeof v[0], cmp);
  for (int i = 0; i < 6; i++) printf("%d ", v[i]);
  printf("%d\n", calls > 0);
  return 0;
}
)";

// The events of one run with n iterations, checked as the header says;
// main's witnesses in *main_witnesses_out.
void CheckEvents(const std::vector<uint32_t>& w, int n,
                 int* main_witnesses_out) {
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
  *main_witnesses_out = main_witnesses;
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
    int argc_chord = -1;  // c of the header: the same for every n
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
      int main_witnesses = 0;
      CheckEvents(ReadTrace(dir_ + "/t.trace"), n, &main_witnesses);
      const int c = main_witnesses - (n + 1);
      EXPECT_TRUE(c == 0 || c == 1) << main_witnesses << " witnesses of main";
      if (argc_chord < 0) argc_chord = c;
      EXPECT_EQ(c, argc_chord) << "main's witnesses beside the loop's vary";
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

// exec from a traced callee: the trace is written first and ends with
// kEnd at depth 2 (main and run live) in run's call.
TEST_F(TracePluginTest, ExecWritesTheTraceFirst) {
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    const std::vector<Event> events =
        RunBoth("gcc", "exec.c", kExec,
                std::string(opt) + " -fplugin-arg-ballarus-mode=trace", " hi");
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events[0].kind, Event::kEnter);
    EXPECT_EQ(events[0].depth, 0u);
    ExpectEnd(events, 2);
    const Event& run = *(events.end() - 2);
    EXPECT_EQ(run.kind, Event::kEnter) << "run writes no witness";
    EXPECT_EQ(run.depth, 1u);
  }
}

// A thunk's tail call and a fork in a traced function: both modes build
// and print as plain; the naive stream decodes with a stack (a thunk left
// by a tail call would leave its depth behind) and the optimal one ends
// at depth 0.
TEST_F(TracePluginTest, ThunksAndForkKeepTheDepth) {
  const std::vector<std::tuple<const char*, const char*, const char*>> cases =
      {{"g++", "thunks.cc", kThunks}, {"gcc", "fork.c", kFork}};
  for (const auto& [compiler, source, text] : cases)
    for (const char* opt : {"-O0", "-O2"})
      for (const char* mode : {"trace", "trace-naive"}) {
        SCOPED_TRACE(std::string(source) + " " + opt + " " + mode);
        const std::vector<Event> events =
            RunBoth(compiler, source, text,
                    std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode);
        ExpectEnd(events, 0);
        if (std::string(mode) == "trace") continue;
        const NaiveDecoded d = DecodeNaive(events);
        EXPECT_EQ(d.error, "");
        EXPECT_TRUE(d.ended);
      }
}

// mode=trace-naive at -O0 decoded with a stack: the blocks of kSign as
// derived by hand from the source and GCC 12's -O0 CFG.  main: 2 `argc >
// 1`, 3 atoi, 5 the loop's start, 8 `i < n`, 6 the call of sign, 7 after
// it (gcov's CFG ends a block at a call that may not return), 9 printf, 10
// after it, 11 the return; sign: 2 `x < 0`, 3 `return -1`, 4 `return 1`,
// 5 the return.  n = 3: x = -1, 0, 1.
TEST_F(TracePluginTest, NaiveStreamIsTheBlockSequence) {
  const std::vector<Event> events =
      RunBoth("gcc", "sign.c", kSign,
              "-O0 -fplugin-arg-ballarus-mode=trace-naive", " 3");
  const NaiveDecoded d = DecodeNaive(events);
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.ended);
  ASSERT_FALSE(events.empty());
  const uint32_t main_fn = events[0].id;
  uint32_t sign_fn = main_fn;
  for (const Event& e : events)
    if (e.kind == Event::kEnter && e.id != main_fn) sign_fn = e.id;
  ASSERT_NE(sign_fn, main_fn);
  std::vector<Step> want;
  auto add = [&want](uint32_t fn, std::vector<uint32_t> blocks) {
    for (uint32_t b : blocks) want.push_back({fn, b});
  };
  add(main_fn, {0, 2, 3, 5, 8, 6});
  add(sign_fn, {0, 2, 3, 5, 1});
  for (int i = 0; i < 2; ++i) {
    add(main_fn, {7, 8, 6});
    add(sign_fn, {0, 2, 4, 5, 1});
  }
  add(main_fn, {7, 8, 9, 10, 11, 1});
  EXPECT_EQ(d.steps, want);
  ExpectEnd(events, 0);
}

// The (function, block) steps `ballarus-reconstruct trace --blocks --json`
// regenerates from a trace and its profile.
std::vector<std::pair<std::string, uint32_t>> Regenerated(
    const std::string& dir, const std::string& profile) {
  const std::string tool =
      harness::Runfiles() + "/reconstruct/ballarus-reconstruct";
  auto r = harness::Run(Quote(tool) + " trace --blocks --json --profile " +
                            profile + " t.trace",
                        dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"status\": \"complete\""), std::string::npos);
  std::vector<std::pair<std::string, uint32_t>> steps;
  const std::regex step("\"function\": \"([^\"]*)\",\\s*\"block\": (\\d+)");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), step), end;
       it != end; ++it)
    steps.emplace_back((*it)[1].str(), std::stoul((*it)[2].str()));
  return steps;
}

// Builds `file` (source `src`) at `opt` in mode=trace-naive and mode=trace,
// runs each with `args` and BALLARUS_TRACE=full, and expects the naive
// build's stream decoded with a stack to equal, step for step, the steps
// the regenerator rebuilds from the optimal build's trace (up to a
// consistent naming of the functions), both builds printing what the plain
// build prints.  Returns the number of functions seen; words[0] and
// words[1] get the naive and the optimal trace's words.
class TraceRegenTest : public TracePluginTest {
 protected:
  size_t ExpectRegeneratedAsNaive(const char* file, const char* src,
                                  const char* opt, const std::string& args,
                                  size_t words[2]);
};

size_t TraceRegenTest::ExpectRegeneratedAsNaive(const char* file,
                                                const char* src,
                                                const char* opt,
                                                const std::string& args,
                                                size_t words[2]) {
  const std::string& dir = dir_;
  harness::WriteFileOrDie(dir + "/" + file, src);
  Build("plain", "", "gcc", file);
  const std::string env = "BALLARUS_TRACE_FILE=" + dir + "/t.trace";
  auto plain = harness::Run("./plain " + args, dir);
  std::vector<Step> naive;
  std::map<uint32_t, std::string> name_of;
  for (const char* mode : {"trace-naive", "trace"}) {
    SCOPED_TRACE(mode);
    Build("traced", std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode,
          "gcc", file);
    if (HasFatalFailure()) return 0;
    auto traced = harness::Run(
        "./traced " + args, dir,
        {"BALLARUS_TRACE=full", env,
         "BALLARUS_PROFILE=" + dir + "/" + mode + ".profile"});
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.status, plain.status);
    const std::vector<uint32_t> w = ReadTrace(dir + "/t.trace");
    const bool is_naive = std::string(mode) == "trace-naive";
    words[is_naive ? 0 : 1] = w.size();
    if (is_naive) {
      const NaiveDecoded d = DecodeNaive(Events(w));
      EXPECT_EQ(d.error, "");
      EXPECT_TRUE(d.ended);
      naive = d.steps;
      continue;
    }
    const auto regen = Regenerated(dir, std::string(mode) + ".profile");
    EXPECT_EQ(regen.size(), naive.size());
    for (size_t k = 0; k < naive.size() && k < regen.size(); ++k) {
      const auto it = name_of.emplace(naive[k].fn, regen[k].first).first;
      if (it->second != regen[k].first || naive[k].block != regen[k].second) {
        ADD_FAILURE() << "step " << k << ": naive " << it->second << " block "
                      << naive[k].block << ", regenerated " << regen[k].first
                      << " block " << regen[k].second;
        break;
      }
    }
  }
  return name_of.size();
}

// Computed gotos: the optimal trace regenerates as the naive one, at -O0
// and -O2, and writes fewer words.
TEST_F(TraceRegenTest, ComputedGotosRegenerate) {
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    size_t words[2] = {0, 0};
    EXPECT_EQ(ExpectRegeneratedAsNaive("interp.c", kInterp, opt, "4", words),
              2u);
    EXPECT_LT(words[1], words[0]);
  }
}

// A recursion deeper than the runtime's stack of traced activations
// (16,384 frames: runtime/trace_buffer.h BALLARUS_TRACE_STACK_FRAMES): the
// activations past it keep no frame, and
// every return still gives its caller back its depth and site, so the
// trace regenerates as the naive one all the way down and back.  The
// recursive call is not a tail call (GCC's tail recursion takes additive
// and multiplicative accumulators, not this exclusive or).
const char kDeep[] = R"(#include <stdio.h>
#include <stdlib.h>
static int depth_max;
static long walk(int d, long x) {
  if (d == depth_max) return x & 7;
  long r = (x & 1) ? walk(d + 1, x * 3 + 1) : walk(d + 1, x / 2 + d);
  return r ^ (x & 3);
}
int main(int argc, char **argv) {
  depth_max = argc > 1 ? atoi(argv[1]) : 10;
  printf("%ld\n", walk(0, 7));
  return 0;
}
)";

TEST_F(TraceRegenTest, RecursionPastTheFrameStackRegenerates) {
  const unsigned depth = 20000;
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    size_t words[2] = {0, 0};
    EXPECT_EQ(ExpectRegeneratedAsNaive("deep.c", kDeep, opt,
                                       std::to_string(depth), words),
              2u);
    EXPECT_GT(words[1], depth);
  }
}

// The site stores and the leaves are inline (no call to the runtime's
// __ballarus_trace_site or __ballarus_trace_leave is left; enter is inline
// too, its call kept for a full chunk), and a leave gives the caller its
// site back (the depth and site the enter kept): every kEnter of qsort's
// callback names main's qsort call although the callback's own calls of
// key stored other sites in between, each key runs at depth 2 and each
// callback at depth 1, and the stream ends, after main returned, with
// kEnd at depth 0 naming main's own kEnter site (the site before main).
TEST_F(TracePluginTest, InlineLeavesRestoreTheCallersSite) {
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    const std::string flags =
        std::string(opt) + " -fplugin-arg-ballarus-mode=trace";
    const std::vector<Event> events =
        RunBoth("gcc", "callback.c", kCallback, flags);
    const std::string rf = harness::Runfiles();
    auto nm = harness::Run(
        "gcc -c -fplugin=" + Quote(rf + "/plugin/ballarus.so") + " " + flags +
            " callback.c -o callback.o && nm -u callback.o",
        dir_);
    ASSERT_EQ(nm.status, 0) << nm.err;
    EXPECT_EQ(nm.out.find("__ballarus_trace_leave"), std::string::npos);
    EXPECT_EQ(nm.out.find("__ballarus_trace_site"), std::string::npos);
    EXPECT_NE(nm.out.find("__ballarus_trace_enter"), std::string::npos);
    ASSERT_GE(events.size(), 4u);
    ASSERT_EQ(events[0].kind, Event::kEnter);
    const uint32_t main_fn = events[0].id, main_site = events[0].site;
    uint32_t cmp_fn = 0, cmp_site = 0, key_site = 0;
    int cmps = 0, keys = 0;
    for (size_t k = 1; k < events.size(); ++k) {
      const Event& e = events[k];
      if (e.kind != Event::kEnter) continue;
      ASSERT_NE(e.id, main_fn);
      if (cmps == 0 || e.id == cmp_fn) {
        if (cmps++ == 0) cmp_fn = e.id, cmp_site = e.site;
        EXPECT_EQ(e.depth, 1u) << "callback " << cmps;
        EXPECT_EQ(e.site, cmp_site) << "callback " << cmps;
      } else {
        if (keys++ == 0) key_site = e.site;
        EXPECT_EQ(e.depth, 2u) << "key " << keys;
      }
    }
    EXPECT_GE(cmps, 5);
    EXPECT_EQ(keys, 2 * cmps);
    // Else a stale site would look restored.
    EXPECT_NE(key_site, cmp_site);
    ExpectEnd(events, 0);
    EXPECT_EQ(events.back().site, main_site);
  }
}

}  // namespace
}  // namespace trace_plugin_test
