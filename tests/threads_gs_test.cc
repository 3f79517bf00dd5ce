// threads_gs_test.cc — per-thread counts through %gs (update=thread's
// default in x86-64 code for executables, tune-thread-gs; docs/DESIGN.md
// "Counts through %gs") end to end: programs that set the %gs base
// themselves, copies mapped above the counters under the legacy layout
// (where the kernel would refuse a base below; and the warning where it
// does), copies kept for reuse and
// inherited bases, each run's counts against hand-derived ones and
// update=atomic's.  threads_test.cc runs its scenarios this way too, and
// with the switch off (modes edge-ptr and path-ptr).
#include <signal.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness.h"
#include "tests/harness_gtest.h"
#include "tests/threads_profile.h"

namespace {

using harness::CommandResult;
using harness::InstallPrefix;
using harness::Quote;
using threads_profile::Exec;
using threads_profile::LoadProfile;
using threads_profile::Profile;

// The %gs tests' builds: `main_c` (with `setter_c`, if any, compiled by
// plain gcc and linked in) built in mode as kind -- "plain" (gcc), "gs"
// (tune-thread-gs=on, the default, spelled out) or "atomic" (update=atomic) -- in a fresh directory
// named after the test, run there as `run` with its profile at p.prof, and
// the profile loaded unless kind is plain.
void BuildRunGs(const std::string& test, const char* mode,
                const std::string& kind, const std::string& main_c,
                const std::string& setter_c, const std::string& run,
                CommandResult* result, Profile* profile) {
  const std::string ctx = std::string("mode=") + mode + " " + kind;
  const std::string dir =
      harness::TempRoot() + "/" + test + "-" + mode + "-" + kind;
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(dir + "/main.c", main_c);
  std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                   " -fplugin-arg-ballarus-mode=" + mode;
  if (kind == "plain") cc = "gcc";
  if (kind == "gs") cc += " -fplugin-arg-ballarus-tune-thread-gs=on";
  if (kind == "atomic") cc += " -fplugin-arg-ballarus-update=atomic";
  std::vector<std::string> cmds = {cc + " -O2 -pthread -c main.c -o main.o"};
  std::string objects = "main.o";
  if (!setter_c.empty()) {
    harness::WriteFileOrDie(dir + "/setter.c", setter_c);
    cmds.push_back("gcc -O2 -c setter.c -o setter.o");
    objects += " setter.o";
  }
  cmds.push_back(cc + " -O2 -pthread " + objects + " -o gsprog");
  for (const std::string& cmd : cmds) {
    CommandResult r = harness::Run(cmd, dir);
    ASSERT_EQ(r.status, 0) << ctx << ": " << cmd << "\n" << r.err;
  }
  if (kind == "gs") {
    EXPECT_NE(harness::Run("objdump -d main.o", dir).out.find("%gs:"),
              std::string::npos)
        << ctx;
  }
  *result = harness::Run(run, dir, {"BALLARUS_PROFILE=" + dir + "/p.prof"});
  ASSERT_EQ(result->status, 0) << ctx << ": " << result->err;
  if (kind == "plain") return;
  std::string error;
  ASSERT_TRUE(LoadProfile(dir + "/p.prof", std::string(mode) == "path",
                          profile, &error))
      << ctx << ": " << error;
}

// Every function of `atomic` (or only `names`) has in `ours` the same
// executions, edges and paths.
void ExpectSameCounts(const std::string& ctx, const Profile& ours,
                      const Profile& atomic,
                      const std::vector<std::string>& names = {}) {
  EXPECT_EQ(ours.size(), atomic.size()) << ctx;
  for (const std::string& name : names)
    EXPECT_EQ(atomic.count(name), 1u) << ctx << ": " << name;
  for (const auto& [name, fn] : atomic) {
    if (!names.empty() &&
        std::find(names.begin(), names.end(), name) == names.end())
      continue;
    auto it = ours.find(name);
    ASSERT_NE(it, ours.end()) << ctx << ": " << name;
    EXPECT_EQ(it->second.executions, fn.executions) << ctx << ": " << name;
    EXPECT_EQ(it->second.edges, fn.edges) << ctx << ": " << name;
    EXPECT_EQ(it->second.paths, fn.paths) << ctx << ": " << name;
  }
}

// err holds `warning` exactly once.
void ExpectOneWarning(const std::string& ctx, const std::string& err,
                      const std::string& warning) {
  const size_t at = err.find(warning);
  EXPECT_NE(at, std::string::npos) << ctx << ": " << err;
  if (at != std::string::npos)
    EXPECT_EQ(err.find(warning, at + 1), std::string::npos)
        << ctx << ": warned more than once";
}

// Counts through %gs in a program that set the %gs base itself before main
// (an uninstrumented constructor): the runtime warns once, leaves the base
// alone (the program prints it at the end, as the plain build does) and
// the counts are still exact -- hand-derived, and every edge and path
// equal to update=atomic's.  One thread at a time counts here (main, then
// a joined thread), so the area all threads share is exact too.
TEST(ThreadsGs, BaseInUseWarnsAndCounts) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string setter = R"(#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
__attribute__((constructor(101))) static void set_gs(void) {
  syscall(SYS_arch_prctl, ARCH_SET_GS, 1UL << 40);
}
unsigned long gs_base(void) {
  unsigned long b = 0;
  syscall(SYS_arch_prctl, ARCH_GET_GS, &b);
  return b;
}
)";
  const std::string main_c = R"(#include <pthread.h>
#include <stdio.h>
unsigned long gs_base(void);
__attribute__((noinline)) static long work(long x) {
  return x % 3 ? x * 2 : x + 1;
}
static void *thread_main(void *arg) {
  long s = 0;
  for (long i = 0; i < 1000; i++) s += work(i);
  return (void *)s;
}
int main(void) {
  long s = 0;
  for (long i = 0; i < 5000; i++) s += work(i);
  pthread_t t;
  void *r;
  pthread_create(&t, 0, thread_main, 0);
  pthread_join(t, &r);
  printf("%ld gs=%#lx\n", s + (long)r, gs_base());
  return 0;
}
)";
  for (const char* mode : {"edge", "path"}) {
    const std::string ctx = std::string("mode=") + mode;
    std::map<std::string, CommandResult> runs;
    std::map<std::string, Profile> profiles;
    for (const char* kind : {"plain", "gs", "atomic"}) {
      BuildRunGs("gs-in-use", mode, kind, main_c, setter, "./gsprog",
                 &runs[kind], &profiles[kind]);
      if (HasFatalFailure()) return;
    }
    EXPECT_EQ(runs["gs"].out, runs["plain"].out) << ctx;
    EXPECT_NE(runs["plain"].out.find("gs=0x10000000000"), std::string::npos)
        << runs["plain"].out;
    EXPECT_EQ(runs["atomic"].err, "") << ctx;
    ExpectOneWarning(ctx, runs["gs"].err, "ballarus: the %gs base is in use");
    const Profile& gs = profiles["gs"];
    EXPECT_EQ(Exec(gs, "work"), 6000) << ctx;
    EXPECT_EQ(Exec(gs, "thread_main"), 1) << ctx;
    EXPECT_EQ(Exec(gs, "main"), 1) << ctx;
    ExpectSameCounts(ctx, gs, profiles["atomic"]);
  }
}

// Counts through %gs, a %gs base set before main such that the counts'
// area (base + the counters' range) is memory the program mapped itself
// (a constructor maps 1 MiB and points the base at it): the runtime cannot
// map the area, so
// the program stops at its first registration with one message naming the
// base and the switch, killed by SIGABRT, before main prints anything,
// instead of letting counts overwrite its memory.
TEST(ThreadsGs, BaseOverMappedMemoryStopsTheProgram) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string setter = R"(#include <asm/prctl.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
extern char __start_ballarus_thread_ctrs[] __attribute__((weak));
__attribute__((constructor(101))) static void set_gs(void) {
  void *mine = mmap(0, 1 << 20, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  syscall(SYS_arch_prctl, ARCH_SET_GS,
          (uintptr_t)mine - (uintptr_t)__start_ballarus_thread_ctrs);
}
)";
  const std::string main_c = R"(#include <stdio.h>
__attribute__((noinline)) static long work(long x) { return x % 3 ? x * 2 : x + 1; }
int main(void) {
  long s = 0;
  for (long i = 0; i < 100; i++) s += work(i);
  printf("%ld\n", s);
  return 0;
}
)";
  const std::string dir = harness::TempRoot() + "/gs-over-mapped";
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(dir + "/setter.c", setter);
  harness::WriteFileOrDie(dir + "/main.c", main_c);
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                         " -fplugin-arg-ballarus-mode=edge"
                         " -fplugin-arg-ballarus-tune-thread-gs=on";
  for (const std::string& cmd :
       {std::string("gcc -O2 -c setter.c -o setter.o"),
        cc + " -O2 -pthread -c main.c -o main.o",
        cc + " -O2 -pthread main.o setter.o -o gsprog"}) {
    CommandResult r = harness::Run(cmd, dir);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
  }
  const CommandResult run =
      harness::Run("./gsprog", dir, {"BALLARUS_PROFILE=" + dir + "/p.prof"});
  EXPECT_EQ(run.status, 128 + SIGABRT) << run.err;
  EXPECT_EQ(run.out, "");
  const std::string message =
      "and per-thread counts through %gs would overwrite memory at 0x";
  const size_t at = run.err.find(message);
  EXPECT_NE(at, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(message, at + 1), std::string::npos) << run.err;
  EXPECT_EQ(run.err.rfind("ballarus: the %gs base is in use (0x", 0), 0u)
      << run.err;
}

// Three threads one after another, each running work() 1000 times, then
// main 10 times: the legacy-layout tests' program.
const char kSequentialThreads[] = R"(#include <pthread.h>
#include <stdio.h>
__attribute__((noinline)) static long work(long x) {
  return x % 3 ? x * 2 : x + 1;
}
static void *worker(void *arg) {
  long s = 0;
  for (long i = 0; i < 1000; i++) s += work(i);
  *(long *)arg = s;
  return 0;
}
int main(void) {
  long s = 0, t = 0;
  for (int k = 0; k < 3; k++) {
    pthread_t th;
    pthread_create(&th, 0, worker, &t);
    pthread_join(th, 0);
    s += t;
  }
  for (long i = 0; i < 10; i++) s += work(i);
  printf("%ld\n", s);
  return 0;
}
)";

// kSequentialThreads with setter_c, built plain, through %gs and with
// update=atomic in mode and run under the legacy address layout (`setarch
// -L`: mappings grow up from below the executable): the %gs build's output
// and status equal the plain build's, its counts are exact (work() by hand,
// the rest edge for edge equal to update=atomic's under the same layout).
// Returns the %gs run's stderr through *gs_err.
void RunLegacyLayout(const std::string& test, const char* mode,
                     const std::string& setter_c, std::string* gs_err) {
  const std::string ctx = std::string("mode=") + mode;
  std::map<std::string, CommandResult> runs;
  std::map<std::string, Profile> profiles;
  for (const char* kind : {"plain", "gs", "atomic"}) {
    BuildRunGs(test, mode, kind, kSequentialThreads, setter_c,
               "setarch x86_64 -L ./gsprog", &runs[kind], &profiles[kind]);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(runs["gs"].out, runs["plain"].out) << ctx;
  EXPECT_EQ(runs["gs"].status, runs["plain"].status) << ctx;
  EXPECT_EQ(runs["atomic"].err, "") << ctx;
  const Profile& gs = profiles["gs"];
  EXPECT_EQ(Exec(gs, "work"), 3 * 1000 + 10) << ctx;
  EXPECT_EQ(Exec(gs, "worker"), 3) << ctx;
  ExpectSameCounts(ctx, gs, profiles["atomic"]);
  *gs_err = runs["gs"].err;
}

// Under the legacy layout a copy mapped where the kernel first puts it
// would lie below the shared counters, a negative distance the kernel
// refuses as a %gs base: the runtime maps each copy above the counters
// instead, so no warning (stderr equal to the plain build's: empty).
TEST(ThreadsGs, LegacyLayoutCopiesAboveCounters) {
  ASSERT_FALSE(InstallPrefix().empty());
  for (const char* mode : {"edge", "path"}) {
    std::string err = "not run";
    RunLegacyLayout("gs-legacy", mode, "", &err);
    if (HasFatalFailure()) return;
    EXPECT_EQ(err, "") << "mode=" << mode;
  }
}

// The same with the place above the counters taken: an uninstrumented
// constructor maps the range the runtime asks for (1 TiB above the
// counters), so each copy lies below them and the kernel refuses the
// distance as a %gs base: one warning, and the threads, which here never
// run at once, count into the shared counters exactly.
TEST(ThreadsGs, RefusedBaseWarnsAndCounts) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string setter_c = R"(#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
extern char __stop_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
__attribute__((constructor(101))) static void take_the_place_above(void) {
  if (__stop_ballarus_thread_ctrs == 0) return;
  uintptr_t hint = (((uintptr_t)__stop_ballarus_thread_ctrs + 4095) &
                    ~(uintptr_t)4095) + ((uintptr_t)1 << 40);
  mmap((void *)hint, (size_t)1 << 30, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
       -1, 0);
}
)";
  for (const char* mode : {"edge", "path"}) {
    std::string err;
    RunLegacyLayout("gs-refused", mode, setter_c, &err);
    if (HasFatalFailure()) return;
    ExpectOneWarning(
        std::string("mode=") + mode, err,
        "ballarus: cannot set the %gs base of a thread's counter copy");
  }
}

// Counts through %gs: each registered thread's %gs base is its own copy's
// (read back with ARCH_GET_GS: 4 threads alive at once have 4 distinct,
// non-zero bases) but main's, which stays 0: main, the first thread to
// register, owns the shared counters.  50 threads one after another all
// count at one base
// (the kept copy; a fresh mapping would often land there too, so
// InheritedBaseCountsIntoAKeptCopy is the reuse test), with exact counts:
// work() by hand
// and the threads' functions edge for edge equal to update=atomic's (main
// and gs_base branch on the bases, which only the %gs build sets).
TEST(ThreadsGs, CopiesReusedAndDistinct) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string prog = R"(#include <asm/prctl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static unsigned long gs_base(void) {
  unsigned long b = 0;
  syscall(SYS_arch_prctl, ARCH_GET_GS, &b);
  return b;
}
static pthread_barrier_t live;
static unsigned long bases[4];
__attribute__((noinline)) static long work(long x) {
  return x % 3 ? x * 2 : x + 1;
}
static void *one_after_another(void *arg) {
  long s = 0;
  for (long i = 0; i < 100; i++) s += work(i);
  *(unsigned long *)arg = gs_base();
  return (void *)s;
}
static volatile long sink;
static void *alive_together(void *arg) {
  bases[(long)arg] = gs_base();
  pthread_barrier_wait(&live);
  long s = 0;
  for (long i = 0; i < 100; i++) s += work(i);
  sink = s;
  return 0;
}
int main(void) {
  unsigned long first = 0, b = 0;
  int same = 0;
  for (int i = 0; i < 50; i++) {
    pthread_t t;
    pthread_create(&t, 0, one_after_another, &b);
    pthread_join(t, 0);
    if (i == 0) first = b;
    same += b == first && b != 0 && b != gs_base();
  }
  pthread_barrier_init(&live, 0, 4);
  pthread_t ts[4];
  for (long k = 0; k < 4; k++) pthread_create(&ts[k], 0, alive_together, (void *)k);
  for (int k = 0; k < 4; k++) pthread_join(ts[k], 0);
  int distinct = 1, nonzero = 1;
  for (int i = 0; i < 4; i++) {
    nonzero &= bases[i] != 0 && bases[i] != gs_base();
    for (int j = 0; j < i; j++) distinct &= bases[i] != bases[j];
  }
  printf("one copy for %d of 50; distinct %d, own %d; main's base %d\n",
         same, distinct, nonzero, gs_base() != 0);
  return 0;
}
)";
  for (const char* mode : {"edge", "path"}) {
    const std::string ctx = std::string("mode=") + mode;
    std::map<std::string, CommandResult> runs;
    std::map<std::string, Profile> profiles;
    for (const char* kind : {"gs", "atomic"}) {
      BuildRunGs("gs-reuse", mode, kind, prog, "", "./gsprog", &runs[kind],
                 &profiles[kind]);
      if (HasFatalFailure()) return;
    }
    EXPECT_EQ(runs["gs"].out,
              "one copy for 50 of 50; distinct 1, own 1; main's base 0\n")
        << ctx;
    EXPECT_EQ(runs["gs"].err, "") << ctx;
    // Without %gs code nothing sets the base.
    EXPECT_EQ(runs["atomic"].out,
              "one copy for 0 of 50; distinct 0, own 0; main's base 0\n")
        << ctx;
    const Profile& gs = profiles["gs"];
    EXPECT_EQ(Exec(gs, "work"), 50 * 100 + 4 * 100) << ctx;
    ExpectSameCounts(ctx, gs, profiles["atomic"],
                     {"work", "one_after_another", "alive_together"});
    EXPECT_EQ(Exec(gs, "one_after_another"), 50) << ctx;
    EXPECT_EQ(Exec(gs, "alive_together"), 4) << ctx;
  }
}

// Counts through %gs: a thread inherits its creator's %gs base, so until it
// registers it counts into its creator's copy -- which must stay mapped
// after the creator exits.  Thread A starts B in uninstrumented code
// (helper.c: B never passes a registration check) and exits; once A is
// joined, B calls the instrumented counted() 1000 times, through A's
// base into A's freed copy (unmapped, that would crash).  Then C registers,
// takes that copy from the free list and calls counted() 10 times: C's
// fold at exit counts B's calls too, so counted() is exactly 1010.
TEST(ThreadsGs, InheritedBaseCountsIntoAKeptCopy) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string helper = R"(#include <pthread.h>
#include <sched.h>
void counted(void);
volatile int creator_joined;
static void *late(void *arg) {
  (void)arg;
  while (!creator_joined) sched_yield();
  for (int i = 0; i < 1000; i++) counted();
  return 0;
}
pthread_t start_late(void) {
  pthread_t t;
  pthread_create(&t, 0, late, 0);
  return t;
}
)";
  const std::string main_c = R"(#include <pthread.h>
#include <stdio.h>
pthread_t start_late(void);
extern volatile int creator_joined;
volatile long sink;
__attribute__((noinline)) void counted(void) { sink++; }
static pthread_t b;
static void *creator(void *arg) {
  (void)arg;
  b = start_late();
  return 0;
}
static void *reuser(void *arg) {
  (void)arg;
  for (int i = 0; i < 10; i++) counted();
  return 0;
}
int main(void) {
  pthread_t a, c;
  pthread_create(&a, 0, creator, 0);
  pthread_join(a, 0);
  creator_joined = 1;
  pthread_join(b, 0);
  pthread_create(&c, 0, reuser, 0);
  pthread_join(c, 0);
  printf("%ld\n", sink);
  return 0;
}
)";
  for (const char* mode : {"edge", "path"}) {
    const std::string ctx = std::string("mode=") + mode;
    const std::string dir = harness::TempRoot() + "/gs-inherit-" + mode;
    harness::MakeFreshDir(dir);
    harness::WriteFileOrDie(dir + "/helper.c", helper);
    harness::WriteFileOrDie(dir + "/main.c", main_c);
    const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                           " -O2 -pthread -fplugin-arg-ballarus-mode=" + mode +
                           " -fplugin-arg-ballarus-tune-thread-gs=on";
    for (const std::string& cmd :
         {std::string("gcc -O2 -pthread -c helper.c -o helper.o"),
          cc + " -c main.c -o main.o", cc + " main.o helper.o -o inherit"}) {
      CommandResult r = harness::Run(cmd, dir);
      ASSERT_EQ(r.status, 0) << ctx << ": " << cmd << "\n" << r.err;
    }
    CommandResult r =
        harness::Run("./inherit", dir, {"BALLARUS_PROFILE=" + dir + "/p.prof"});
    ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
    EXPECT_EQ(r.out, "1010\n") << ctx;
    Profile p;
    std::string error;
    ASSERT_TRUE(LoadProfile(dir + "/p.prof", std::string(mode) == "path", &p,
                            &error))
        << ctx << ": " << error;
    EXPECT_EQ(Exec(p, "counted"), 1010) << ctx;
    EXPECT_EQ(Exec(p, "creator"), 1) << ctx;
    EXPECT_EQ(Exec(p, "reuser"), 1) << ctx;
    EXPECT_EQ(Exec(p, "main"), 1) << ctx;
  }
}

}  // namespace
