// mode=trace with the real GCC and the built plugin: a small program
// (a loop, an if/else chain in a callee, a call per iteration) built with
// -fplugin-arg-ballarus-mode=trace prints what the plain build prints, and
// its trace file holds the events the program's semantics imply:
// one kEnter of main at depth 0, one kEnter of classify per iteration at
// depth 1 from one call site of main, exactly one witness per classify
// activation (its three returns are three blocking witnesses) telling
// i % 3 apart, n + 2 witnesses of main (argc > 1 once, the loop's
// condition n + 1 times), and a final kEnd at depth 0.
// Landings: exceptions thrown two traced calls deep (through a cleanup)
// and in the catching function itself, longjmp out of a traced callee and
// setjmp's first returns: kLand at the depth and with the live count the
// program implies, in mode=trace and mode=trace-naive (whose streams are
// decoded with a stack); exec writes the trace first; and a naive stream
// decoded with a stack is the block sequence derived by hand.
#include <cstdint>
#include <map>
#include <regex>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <utility>
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

// Thrown two traced calls deep through mid's cleanup (a destructor) for
// x > 3, i.e. i = 3, 4, 5 (argc 1), and by main itself at i = 2.
const char kExceptions[] = R"(#include <cstdio>
#include <stdexcept>
struct Count { int* n; ~Count() { ++*n; } };
__attribute__((noinline)) int leaf(int x) {
  if (x > 3) throw std::runtime_error("big");
  return x * 2;
}
__attribute__((noinline)) int mid(int x, int* cleanups) {
  Count c{cleanups};
  return leaf(x) + 1;
}
int main(int argc, char**) {
  int s = 0, cleanups = 0;
  for (int i = 0; i < 6; i++) {
    try {
      if (i == 2) throw 7;
      s += mid(i + argc, &cleanups);
    } catch (int v) { s += v; } catch (const std::exception&) { s -= 1; }
  }
  std::printf("%d %d\n", s, cleanups);
}
)";

// setjmp returns first at every iteration; g longjmps for odd i (1, 3),
// two traced calls deep.
const char kLongjmp[] = R"(#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
__attribute__((noinline)) static void g(int x) { if (x & 1) longjmp(jb, x); }
__attribute__((noinline)) static void f(int x) { g(x); }
int main(void) {
  int s = 0;
  for (int i = 0; i < 5; i++) {
    int r = setjmp(jb);
    if (r == 0) f(i); else s += r;
  }
  printf("%d\n", s);
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

// Each thread's words, by thread serial.
// A record of a thread's words (not a checkpoint or a TU's metadata).
bool IsStreamRecord(const ballarus_trace_record_header* h) {
  return h->kind == BALLARUS_TRACE_CHUNK || h->kind == BALLARUS_TRACE_RING;
}

int CollectByThread(void* ctx, const ballarus_trace_record_header* h,
                    const uint32_t* w) {
  if (!IsStreamRecord(h)) return 0;
  auto* m = static_cast<std::map<uint32_t, std::vector<uint32_t>>*>(ctx);
  (*m)[h->thread].insert((*m)[h->thread].end(), w, w + h->count);
  return 0;
}

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  if (!IsStreamRecord(h)) return 0;
  auto* words = static_cast<std::vector<uint32_t>*>(ctx);
  words->insert(words->end(), w, w + h->count);
  return 0;
}

std::vector<uint32_t> ReadTrace(const std::string& path) {
  std::string bytes;
  std::vector<uint32_t> words;
  if (!harness::ReadFile(path, &bytes)) {
    ADD_FAILURE() << "no trace file " << path;
    return words;
  }
  ballarus_trace_file_header header;
  char err[256];
  EXPECT_EQ(ballarus_trace_read(bytes.data(), bytes.size(), &header, Collect,
                                &words, err, sizeof err),
            0)
      << err;
  return words;
}

// One event of a stream (runtime/trace_events.h).
struct Event {
  enum Kind { kWitness, kEnter, kLand, kEnd } kind = kWitness;
  uint32_t id = 0;  // witness (naive: block), function index, landing block
  uint32_t depth = 0, site = 0, live = 0;
};

std::vector<Event> Events(const std::vector<uint32_t>& w) {
  std::vector<Event> out;
  for (size_t i = 0; i < w.size();) {
    Event e;
    size_t n = 1;
    if (w[i] == BALLARUS_TRACE_EVENT_END) {
      e.kind = Event::kEnd, n = BALLARUS_TRACE_END_WORDS;
    } else if (w[i] == BALLARUS_TRACE_EVENT_LAND) {
      e.kind = Event::kLand, n = BALLARUS_TRACE_LAND_WORDS;
    } else if (w[i] & BALLARUS_TRACE_EVENT_TAG) {
      e.kind = Event::kEnter, n = BALLARUS_TRACE_ENTER_WORDS;
    }
    if (w.size() - i < n) {
      ADD_FAILURE() << "event cut at word " << i;
      break;
    }
    if (e.kind == Event::kWitness) e.id = w[i];
    if (e.kind == Event::kEnter)
      e.id = w[i] & ~BALLARUS_TRACE_EVENT_TAG, e.depth = w[i + 2],
      e.site = w[i + 3];
    if (e.kind == Event::kLand)
      e.id = w[i + 1], e.depth = w[i + 2], e.site = w[i + 3],
      e.live = w[i + 4];
    if (e.kind == Event::kEnd) e.depth = w[i + 1], e.site = w[i + 2];
    out.push_back(e);
    i += n;
  }
  return out;
}

// A mode=trace-naive stream decoded with a stack alone: kEnter pushes its
// function (whose ENTRY, 0, is a step), a block word is a step of the
// innermost activation and 1 (EXIT) pops it, kLand abandons the
// activations deeper than its depth.  Every kEnter's depth, kLand's live
// count and kEnd's depth must be the stack's height: `error` says where
// one is not.
struct Step {
  uint32_t fn = 0, block = 0;
  bool operator==(const Step& o) const {
    return fn == o.fn && block == o.block;
  }
};
std::ostream& operator<<(std::ostream& os, const Step& s) {
  return os << "(" << s.fn << ", " << s.block << ")";
}

struct NaiveDecoded {
  std::vector<Step> steps;
  bool ended = false;
  std::string error;
};

NaiveDecoded DecodeNaive(const std::vector<Event>& events) {
  NaiveDecoded d;
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < events.size() && d.error.empty(); ++k) {
    const Event& e = events[k];
    const std::string at = "event " + std::to_string(k) + ": ";
    if (d.ended) {
      d.error = at + "after kEnd";
    } else if (e.kind == Event::kEnter) {
      if (e.depth != stack.size()) d.error = at + "kEnter's depth";
      stack.push_back(e.id);
      d.steps.push_back({e.id, 0});
    } else if (e.kind == Event::kWitness) {
      if (stack.empty()) {
        d.error = at + "a block outside any activation";
        break;
      }
      d.steps.push_back({stack.back(), e.id});
      if (e.id == 1) stack.pop_back();
    } else if (e.kind == Event::kLand) {
      if (e.live != stack.size()) d.error = at + "kLand's live count";
      if (e.depth >= stack.size()) d.error = at + "kLand's depth";
      stack.resize(e.depth + 1);
    } else {
      if (e.depth != stack.size()) d.error = at + "kEnd's depth";
      d.ended = true;
    }
  }
  return d;
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
  // Writes `text` to `source`, builds it plain and with `flags`, runs both
  // with `args`: the same output and status; the traced run's events.
  std::vector<Event> RunBoth(const std::string& compiler,
                             const std::string& source, const char* text,
                             const std::string& flags,
                             const std::string& args = "") {
    harness::WriteFileOrDie(dir_ + "/" + source, text);
    Build("plain", "", compiler, source);
    Build("traced", flags, compiler, source);
    if (HasFatalFailure()) return {};
    auto plain = harness::Run("./plain" + args, dir_);
    auto traced = harness::Run(
        "./traced" + args, dir_,
        {"BALLARUS_TRACE=full", "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"});
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.status, plain.status);
    EXPECT_EQ(traced.err, plain.err);
    return Events(ReadTrace(dir_ + "/t.trace"));
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

// Each kLand's (depth, live count), in stream order, and for each such
// pair the landing blocks and sites seen.
struct Landings {
  std::vector<std::pair<uint32_t, uint32_t>> order;
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> blocks, sites;
  std::map<uint32_t, std::set<uint32_t>> enter_depths;  // by function
  std::map<uint32_t, int> enters_at_depth;
};

Landings LandingsOf(const std::vector<Event>& events) {
  Landings l;
  for (const Event& e : events) {
    if (e.kind == Event::kEnter) {
      l.enter_depths[e.id].insert(e.depth);
      ++l.enters_at_depth[e.depth];
    }
    if (e.kind != Event::kLand) continue;
    const std::pair<uint32_t, uint32_t> key(e.depth, e.live);
    l.order.push_back(key);
    l.blocks[key].insert(e.id);
    l.sites[key].insert(e.site);
  }
  return l;
}

// The stream ends with kEnd at `depth`.
void ExpectEnd(const std::vector<Event>& events, uint32_t depth) {
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, Event::kEnd);
  EXPECT_EQ(events.back().depth, depth);
}

// kExceptions: main's own throw (i = 2) lands in main at depth 0 with main
// alone live; each of leaf's three throws lands first in mid's cleanup
// (depth 1; live 3: main, mid, leaf), whose resx goes on unwinding into
// main (depth 0; live 2).  One landing pad per function, one throwing site
// per kind.  mid starts at depth 1 every time (5 calls), leaf (and at -O0
// Count's destructor) at 2: without the kLands' depths the activations
// after a throw would start deeper.
void CheckExceptionLandings(const std::vector<Event>& events) {
  const Landings l = LandingsOf(events);
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(l.order, (std::vector<P>{{0, 1}, {1, 3}, {0, 2}, {1, 3}, {0, 2},
                                     {1, 3}, {0, 2}}));
  for (const auto& [key, blocks] : l.blocks) {
    EXPECT_EQ(blocks.size(), 1u) << key.first << " " << key.second;
    EXPECT_EQ(l.sites.at(key).size(), 1u) << key.first << " " << key.second;
  }
  if (l.blocks.count({0, 1}) && l.blocks.count({0, 2})) {
    EXPECT_EQ(l.blocks.at({0, 1}), l.blocks.at({0, 2})) << "main's pad";
  }
  EXPECT_EQ(l.enters_at_depth.at(0), 1);
  EXPECT_EQ(l.enters_at_depth.at(1), 5);
  for (const auto& [fn, depths] : l.enter_depths)
    EXPECT_EQ(depths.size(), 1u) << "function " << fn;
  ExpectEnd(events, 0);
}

// kLongjmp: setjmp's first return at each of the 5 iterations (depth 0,
// main alone live, in the call at the setjmp's own block), g's longjmp at
// i = 1 and 3 (depth 0; live 3: main, f, g); all in the setjmp's block.
// f starts at depth 1 and g at 2 every time.
void CheckLongjmpLandings(const std::vector<Event>& events) {
  const Landings l = LandingsOf(events);
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(l.order, (std::vector<P>{{0, 1}, {0, 1}, {0, 3}, {0, 1}, {0, 1},
                                     {0, 3}, {0, 1}}));
  ASSERT_EQ(l.blocks.size(), 2u);
  EXPECT_EQ(l.blocks.at({0, 1}), l.blocks.at({0, 3}));
  EXPECT_EQ(l.blocks.at({0, 1}).size(), 1u);
  EXPECT_EQ(l.sites.at({0, 1}), l.blocks.at({0, 1})) << "first return's site";
  EXPECT_EQ(l.sites.at({0, 3}).size(), 1u);
  EXPECT_EQ(l.enters_at_depth.at(0), 1);
  EXPECT_EQ(l.enters_at_depth.at(1), 5);
  EXPECT_EQ(l.enters_at_depth.at(2), 5);
  ExpectEnd(events, 0);
}

// The naive stream decodes with a stack; after each kLand comes the block
// where control resumed: an exception's landing pad is the kLand's block,
// after setjmp (block B) it is B's successor, the same for both returns;
// a first return's kLand follows B's own word.
void CheckNaiveLandings(const std::vector<Event>& events, bool setjmp) {
  const NaiveDecoded d = DecodeNaive(events);
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.ended);
  std::set<uint32_t> after;
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    const Event& e = events[k];
    if (e.kind != Event::kLand) continue;
    ASSERT_EQ(events[k + 1].kind, Event::kWitness) << "event " << k;
    const uint32_t next = events[k + 1].id;
    if (!setjmp) {
      EXPECT_EQ(next, e.id) << "event " << k;
      continue;
    }
    after.insert(next);
    EXPECT_NE(next, e.id) << "event " << k;
    if (e.live == 1) {
      ASSERT_GT(k, 0u);
      EXPECT_EQ(events[k - 1].kind, Event::kWitness);
      EXPECT_EQ(events[k - 1].id, e.id) << "event " << k;
    }
  }
  if (setjmp) {
    EXPECT_EQ(after.size(), 1u);
  }
}

TEST_F(TracePluginTest, ExceptionsLandAtTheirDepth) {
  for (const char* mode : {"trace", "trace-naive"})
    for (const char* opt : {"-O0", "-O2"}) {
      SCOPED_TRACE(std::string(mode) + " " + opt);
      const std::vector<Event> events = RunBoth(
          "g++", "ex.cc", kExceptions,
          std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode);
      CheckExceptionLandings(events);
      if (std::string(mode) == "trace-naive") CheckNaiveLandings(events, false);
    }
}

TEST_F(TracePluginTest, LongjmpAndSetjmpLand) {
  for (const char* mode : {"trace", "trace-naive"})
    for (const char* opt : {"-O0", "-O2"}) {
      SCOPED_TRACE(std::string(mode) + " " + opt);
      const std::vector<Event> events = RunBoth(
          "gcc", "sj.c", kLongjmp,
          std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode);
      CheckLongjmpLandings(events);
      if (std::string(mode) == "trace-naive") CheckNaiveLandings(events, true);
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

// Computed gotos: the naive build's stream decoded with a stack equals the
// steps the regenerator rebuilds from the optimal build's trace (up to a
// consistent naming of the functions), at -O0 and -O2; the optimal trace
// writes fewer words.
TEST_F(TracePluginTest, ComputedGotosRegenerate) {
  for (const char* opt : {"-O0", "-O2"}) {
    SCOPED_TRACE(opt);
    harness::WriteFileOrDie(dir_ + "/interp.c", kInterp);
    Build("plain", "", "gcc", "interp.c");
    const std::string env = "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace";
    auto plain = harness::Run("./plain 4", dir_);
    std::vector<Step> naive;
    size_t words[2] = {0, 0};
    for (const char* mode : {"trace-naive", "trace"}) {
      SCOPED_TRACE(mode);
      Build("traced", std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode,
            "gcc", "interp.c");
      if (HasFatalFailure()) return;
      auto traced = harness::Run(
          "./traced 4", dir_,
          {"BALLARUS_TRACE=full", env,
           "BALLARUS_PROFILE=" + dir_ + "/" + mode + ".profile"});
      EXPECT_EQ(traced.out, plain.out);
      EXPECT_EQ(traced.status, plain.status);
      const std::vector<uint32_t> w = ReadTrace(dir_ + "/t.trace");
      const std::vector<Event> events = Events(w);
      const bool is_naive = std::string(mode) == "trace-naive";
      words[is_naive ? 0 : 1] = w.size();
      if (is_naive) {
        const NaiveDecoded d = DecodeNaive(events);
        EXPECT_EQ(d.error, "");
        EXPECT_TRUE(d.ended);
        naive = d.steps;
        continue;
      }
      const auto regen = Regenerated(dir_, std::string(mode) + ".profile");
      ASSERT_EQ(regen.size(), naive.size());
      std::map<uint32_t, std::string> name_of;
      for (size_t k = 0; k < naive.size(); ++k) {
        const auto it = name_of.emplace(naive[k].fn, regen[k].first).first;
        ASSERT_EQ(it->second, regen[k].first) << "step " << k;
        ASSERT_EQ(naive[k].block, regen[k].second) << "step " << k;
      }
      EXPECT_EQ(name_of.size(), 2u);
    }
    EXPECT_LT(words[1], words[0]);
  }
}


// The site stores and the leaves are inline (no call to the runtime's
// __ballarus_trace_site or __ballarus_trace_leave is left; enter is inline
// too, its call kept for a full chunk), and a leave gives the caller its
// site back from the frame the enter pushed: every kEnter of qsort's
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
