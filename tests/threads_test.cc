// threads_test.cc — update=thread (per-thread counters, the default under
// -pthread) end to end, on real programs: tests/programs/mt/mt.c (C and,
// compiled as C++ with mt_cxx.cc, C++), its scenarios run one per test at
// -O0 and -O2, in edge and path mode:
//
//   exit_around_main      threads that exit before main returns, and after
//                         (joined by an atexit handler)
//   detached              detached threads; main leaves by pthread_exit
//   short_lived           1000 short-lived threads, 50 at a time
//   exit_during_dump      400 threads exit while a thread dumps 100 times
//                         and main counts
//   dump_while_counting   __ballarus_dump() while threads count; the
//                         profile right after it holds exactly phase 1
//   reset_while_counting  __ballarus_reset() while threads count
//   fork_from_thread      fork in a thread while others count: the child's
//                         profile holds exactly the child's counts
//   dlopen                threads run a dlopen'ed instrumented library,
//                         which is closed while they live on; 20 more
//                         open/close cycles must not grow the process
//   running_at_exit       a thread blocked for good and one spinning when
//                         main returns
//   thread_local_dtor, exceptions, static_join (C++ only): thread_local
//                         destructors that count, exceptions in threads,
//                         threads joined by a static object's destructor
//   paths                 8 threads released at once, each running
//                         classify() (4 paths) and loop_sum() (a loop of
//                         one path)
//
// The executable counts through %gs (tune-thread-gs, the default in x86-64
// code for executables) and the -fPIC library of dlopen through the
// thread-local pointer; modes edge-tls and path-tls run every scenario
// with update=tls, and edge-ptr and path-ptr (tune-thread-gs=off) those of
// many threads, exits, forks, dumps and dlopen with the pointer in the
// executable too, edge-lto and path-lto the same built with -flto.
//
// Path mode runs in every variant of its counting, because each reaches
// the thread's copy differently: path (the default pointer register, a
// pointer into the shared counters seen through %gs), path-number
// (tune-path-register=number: counts indexed into the copy by
// AppendCounterAdd), path-hashed (path-table-max=0: every function's paths
// in the runtime's lock-free hash tables) and path-loops (tune-path-loops=on:
// counted loops, whose iteration counts are added at the loop exits).  The
// last three run the scenarios with 8 threads counting at once (paths,
// exit_around_main, dump_while_counting) and (but path-hashed) dlopen
// (-fPIC: TLS descriptors).
//
// Each scenario is built three ways — plain, ballarus with the default
// update mode (which must be per-thread: -pthread is given) and ballarus
// update=atomic — and checked against three independent oracles:
//
//   * the plain build's stdout, stderr and exit status: both ballarus
//     builds must behave identically;
//   * counts derived by hand from the program (mt.c states them per
//     scenario): exact;
//   * the update=atomic build's profile, which is exact under threads by
//     construction (one locked add per update): every edge count of every
//     function (and in path mode every path count) must be equal, except
//     in the few functions a scenario runs nondeterministically (noise()
//     racing a dump or reset, spin() running at exit).
//
// Plus `ballarus-reconstruct verify` where a profile must be consistent (not
// after a reset or with a thread still running at exit: those legitimately
// cut activations in two).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness.h"
#include "tests/harness_gtest.h"
#include "tests/threads_profile.h"

namespace {

using harness::CommandResult;
using harness::Quote;

constexpr uint64_t kWork = 20000;  // N_WORK in mt.c

using harness::InstallPrefix;
using threads_profile::Exec;
using threads_profile::Fn;
using threads_profile::LoadProfile;
using threads_profile::Profile;

std::string Reconstruct() {
  return InstallPrefix() + "/bin/ballarus-reconstruct";
}

// ---------------------------------------------------------------------------
// Building mt three ways.

struct Config {
  bool cxx;
  std::string opt;   // -O0, -O2
  std::string mode;  // edge, path, path-number, path-hashed, path-loops
};

// Whether a Config's mode counts in static TLS (edge-tls, path-tls:
// update=tls; the -fPIC library keeps update=thread's pointer).
bool StaticTls(const std::string& mode) {
  return mode.size() > 4 && mode.compare(mode.size() - 4, 4, "-tls") == 0;
}

// Whether a Config's mode counts through the thread-local pointer in the
// executable too (edge-ptr, path-ptr: tune-thread-gs=off).
bool Pointer(const std::string& mode) {
  return mode.size() > 4 && mode.compare(mode.size() - 4, 4, "-ptr") == 0;
}

// Whether a Config's mode builds with -flto (edge-lto, path-lto; the -fPIC
// library then counts with update=atomic, -flto's default there).
bool Lto(const std::string& mode) {
  return mode.size() > 4 && mode.compare(mode.size() - 4, 4, "-lto") == 0;
}

// Whether a Config's executable counts through %gs: update=thread's
// default in x86-64 code for executables (the -fPIC library keeps the
// pointer).
bool Gs(const std::string& mode) {
  return !Pointer(mode) && !StaticTls(mode);
}

// The plugin options of a Config's mode.
std::string ModeOptions(const std::string& mode) {
  if (Lto(mode))
    return ModeOptions(mode.substr(0, mode.size() - 4)) + " -flto";
  if (Pointer(mode))
    return ModeOptions(mode.substr(0, mode.size() - 4)) +
           " -fplugin-arg-ballarus-tune-thread-gs=off";
  if (StaticTls(mode))
    return ModeOptions(mode.substr(0, mode.size() - 4)) +
           " -fplugin-arg-ballarus-update=tls";
  if (mode == "edge") return " -fplugin-arg-ballarus-mode=edge";
  std::string o = " -fplugin-arg-ballarus-mode=path";
  if (mode == "path-number")
    o += " -fplugin-arg-ballarus-tune-path-register=number";
  if (mode == "path-hashed") o += " -fplugin-arg-ballarus-path-table-max=0";
  if (mode == "path-loops")
    o += " -fplugin-arg-ballarus-tune-path-loops=on -fplugin-arg-ballarus-dump";
  return o;
}

enum class Kind { kPlain, kDefault, kAtomic };
const char* KindName(Kind k) {
  return k == Kind::kPlain ? "plain" : k == Kind::kDefault ? "thread" : "atomic";
}

struct Built {
  bool ok = false;
  std::string dir, exe, lib, log;
};

// Builds mt (and libmtlib.so) for `c` and `kind` in a fresh directory.
Built BuildMt(const Config& c, Kind kind) {
  Built b;
  b.dir = harness::TempRoot() + "/mt-" + (c.cxx ? "cxx" : "c") + c.opt + "-" +
          c.mode + "-" + KindName(kind);
  harness::MakeFreshDir(b.dir);
  const std::string src = harness::ProgramsDir() + "/mt";
  for (const char* f : {"mt.c", "mt_cxx.cc", "mt_lib.c"})
    harness::WriteFileOrDie(b.dir + "/" + f,
                            harness::ReadFileOrDie(src + "/" + f));
  std::string cc;
  if (kind == Kind::kPlain) {
    cc = c.cxx ? "g++" : "gcc";
  } else {
    cc = Quote(InstallPrefix() + (c.cxx ? "/bin/ballarus-g++" : "/bin/ballarus-gcc")) +
         ModeOptions(c.mode);
    if (kind == Kind::kAtomic) cc += " -fplugin-arg-ballarus-update=atomic";
  }
  cc += " " + c.opt + " -pthread -Wall";
  const std::string lang = c.cxx ? " -x c++" : "";
  std::vector<std::string> cmds = {
      cc + lang + " -fPIC -shared mt_lib.c -o libmtlib.so",
      cc + lang + " -c mt.c -o mt.o",
  };
  std::string objs = "mt.o";
  if (c.cxx) {
    cmds.push_back(cc + " -c mt_cxx.cc -o mt_cxx.o");
    objs += " mt_cxx.o";
  }
  cmds.push_back(cc + " " + objs + " -ldl -o mt");
  for (const std::string& cmd : cmds) {
    CommandResult r = harness::Run(cmd, b.dir);
    b.log += "$ " + cmd + "\n" + r.out + r.err;
    if (r.status != 0) return b;
  }
  b.exe = b.dir + "/mt";
  b.lib = b.dir + "/libmtlib.so";
  b.ok = true;
  return b;
}

const Built& GetBuild(const Config& c, Kind kind) {
  static std::map<std::tuple<bool, std::string, std::string, int>, Built> cache;
  auto key = std::make_tuple(c.cxx, c.opt, c.mode, static_cast<int>(kind));
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, BuildMt(c, kind)).first;
  return it->second;
}

// ---------------------------------------------------------------------------
// Running a scenario and reading its profiles.

struct ScenarioRun {
  CommandResult result;
  std::string dir;
  // Profile files written (BALLARUS_PROFILE=dir/p.prof, or p.prof.<pid>
  // with fork), by name.
  std::vector<std::string> profiles;
};

ScenarioRun RunScenario(const Built& b, const std::string& scenario, Kind kind,
                const Config& c) {
  ScenarioRun run;
  run.dir = harness::TempRoot() + "/run-" + scenario + "-" +
            (c.cxx ? "cxx" : "c") + c.opt + "-" + c.mode + "-" +
            KindName(kind);
  harness::MakeFreshDir(run.dir);
  const bool per_pid = scenario == "fork_from_thread";
  std::string cmd = Quote(b.exe) + " " + scenario;
  if (scenario == "dlopen") cmd += " " + Quote(b.lib);
  run.result = harness::Run(
      cmd, run.dir,
      {"BALLARUS_PROFILE=" + run.dir + (per_pid ? "/p.prof.%p" : "/p.prof")});
  DIR* d = opendir(run.dir.c_str());
  if (d != nullptr) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("p.prof", 0) == 0 && n.find(".lock") == std::string::npos &&
          n.find(".tmp") == std::string::npos)
        run.profiles.push_back(n);
    }
    closedir(d);
  }
  std::sort(run.profiles.begin(), run.profiles.end());
  return run;
}

// ---------------------------------------------------------------------------
// What each scenario must count.

struct Expect {
  // Exact execution counts in the final profile (for fork: the parent's).
  std::map<std::string, int64_t> exact;
  // Functions whose counts depend on the scheduling.
  std::set<std::string> nondeterministic;
  bool verify = true;
};

Expect Expected(const std::string& s) {
  const int64_t n = kWork;
  if (s == "exit_around_main")
    return {{{"work", 8 * n}, {"early_thread", 4}, {"late_thread", 4},
             {"join_late", 1}}, {}, true};
  if (s == "detached") return {{{"work", 9 * n}, {"detached_thread", 8}}, {}, true};
  if (s == "short_lived")
    return {{{"work", 1000000}, {"short_thread", 1000}}, {}, true};
  if (s == "exit_during_dump")
    return {{{"work", 400 * 2000 + 50 * 100000},
             {"exiting_thread", 400},
             {"dump_loop", 1}},
            {},
            true};
  if (s == "dump_while_counting")
    return {{{"work", 8 * 3 * n}, {"noise", 2 * 3200000}}, {}, true};
  if (s == "reset_while_counting")
    return {{{"work", 8 * 2 * n}}, {"noise", "noise_thread"}, false};
  if (s == "fork_from_thread")
    return {{{"work", 5 * n}, {"child_work", 0}}, {}, true};
  if (s == "dlopen")
    return {{{"work", 4 * n}, {"lib_work", 4 * n + 21 * 2 * 1000},
             {"lib_loop", 4 + 21 * 2}},
            {},
            true};
  if (s == "running_at_exit")
    // main's own wait for the spinning thread loops a varying number of
    // times, and park() may or may not have counted its way from sem_post
    // (which lets main go) to sem_wait when the exit dump reads its copy.
    return {{{"work", n}},
            {"spin", "spinning_thread", "running_at_exit", "park"},
            false};
  if (s == "thread_local_dtor") return {{{"work", 8 * n}}, {}, true};
  if (s == "exceptions") return {{{"thrower", 4000}, {"work", 4000}}, {}, true};
  if (s == "static_join") return {{{"work", 4 * n}}, {}, true};
  if (s == "paths")
    return {{{"classify", 8 * n}, {"loop_sum", 8000}, {"paths_thread", 8}},
            {},
            true};
  ADD_FAILURE() << "no expectation for " << s;
  return {};
}

void CompareProfiles(const std::string& ctx, const Profile& ours,
                     const Profile& atomic, const std::set<std::string>& skip) {
  int compared = 0;
  for (const auto& [name, fn] : atomic) {
    const std::string plain_name = name.substr(0, name.find('('));
    if (skip.count(plain_name)) continue;
    auto it = ours.find(name);
    if (it == ours.end()) {
      ADD_FAILURE() << ctx << ": function " << name << " missing";
      continue;
    }
    EXPECT_EQ(it->second.executions, fn.executions) << ctx << ": " << name;
    EXPECT_EQ(it->second.edges, fn.edges) << ctx << ": " << name << " edges";
    EXPECT_EQ(it->second.paths, fn.paths) << ctx << ": " << name << " paths";
    compared++;
  }
  EXPECT_EQ(ours.size(), atomic.size()) << ctx;
  EXPECT_GT(compared, 5) << ctx;
}

// ---------------------------------------------------------------------------

using Param = std::tuple<std::string, bool, std::string, std::string>;

class Threads : public ::testing::TestWithParam<Param> {};

TEST_P(Threads, ExactAndUnchanged) {
  const auto& [scenario, cxx, opt, mode] = GetParam();
  ASSERT_FALSE(InstallPrefix().empty());
  const Config c{cxx, opt, mode};
  const std::string ctx = scenario + " " + (cxx ? "C++" : "C") + " " + opt +
                          " mode=" + mode;
  const Built& plain = GetBuild(c, Kind::kPlain);
  const Built& thread = GetBuild(c, Kind::kDefault);
  const Built& atomic = GetBuild(c, Kind::kAtomic);
  ASSERT_TRUE(plain.ok) << plain.log;
  ASSERT_TRUE(thread.ok) << thread.log;
  ASSERT_TRUE(atomic.ok) << atomic.log;
  // -pthread made the default per-thread counters: the section exists --
  // except with every function's paths hashed (path-hashed, mode=path
  // alone): all counts then go to the runtime's shared lock-free tables
  // (atomic adds in every update mode), no dense counter is left to copy.
  CommandResult sec =
      harness::Run("readelf -SW " + Quote(thread.exe), thread.dir);
  ASSERT_EQ(sec.out.find("ballarus_thread_ctrs") != std::string::npos,
            mode != "path-hashed")
      << ctx << ": per-thread counters in the default build";
  ASSERT_EQ(harness::Run("readelf -SW " + Quote(atomic.exe), atomic.dir)
                .out.find("ballarus_thread_ctrs"),
            std::string::npos);
  // Static TLS where asked for, in the executable only.
  EXPECT_EQ(sec.out.find("ballarus_tls_table") != std::string::npos,
            StaticTls(mode))
      << ctx;
  EXPECT_EQ(harness::Run("readelf -SW " + Quote(thread.lib), thread.dir)
                .out.find("ballarus_tls_table"),
            std::string::npos)
      << ctx;
  // %gs unless asked otherwise: the executable's counts are %gs adds (but
  // where every path is hashed: the runtime counts those), the library's
  // not.
  EXPECT_EQ(sec.out.find("ballarus_gs_tus") != std::string::npos, Gs(mode))
      << ctx;
  // (mt.o of -flto holds no code: the link compiles it.)
  EXPECT_EQ(harness::Run(Lto(mode) ? "objdump -d mt" : "objdump -d mt.o",
                         thread.dir)
                    .out.find("%gs:") != std::string::npos,
            Gs(mode) && mode != "path-hashed")
      << ctx;
  EXPECT_EQ(harness::Run("readelf -SW " + Quote(thread.lib), thread.dir)
                .out.find("ballarus_gs_tus"),
            std::string::npos)
      << ctx;
  // Through %gs, no instruction of the executable reaches the counters
  // without the prefix but the lea of their address (GCC 12's SLP
  // vectoriser once made a vector add's load lose it).
  if (Gs(mode)) {
    const std::string dis = harness::Run(
        "objdump -d --no-show-raw-insn " + Quote(thread.exe) +
            " | grep __ballarus_counters | grep -v '%gs:' | grep -v lea",
        thread.dir).out;
    EXPECT_EQ(dis, "") << ctx << ": counter accesses without %gs";
  }

  // The path variants are what they claim to be: every function hashed
  // (the code calls the runtime's hash table), counted loops planned.
  if (mode == "path-hashed" || mode == "path") {
    for (const Built* b : {&thread, &atomic}) {
      CommandResult nm = harness::Run("nm mt.o", b->dir);
      EXPECT_EQ(nm.out.find("__ballarus_path_add") != std::string::npos,
                mode == "path-hashed")
          << ctx << ": " << b->dir << "\n" << nm.out;
    }
  }
  if (mode == "path-loops") {
    CommandResult d = harness::Run("cat *.ballarus", thread.dir);
    EXPECT_NE(d.out.find("counted in a local"), std::string::npos)
        << ctx << ": no counted loop in the dump\n" << d.out;
  }

  ScenarioRun p = RunScenario(plain, scenario, Kind::kPlain, c);
  ScenarioRun t = RunScenario(thread, scenario, Kind::kDefault, c);
  ScenarioRun a = RunScenario(atomic, scenario, Kind::kAtomic, c);
  ASSERT_EQ(p.result.status, 0) << ctx << ": plain: " << p.result.err;
  for (const ScenarioRun* r : {&t, &a}) {
    EXPECT_EQ(r->result.status, p.result.status) << ctx << ": " << r->dir;
    EXPECT_EQ(r->result.out, p.result.out) << ctx << ": " << r->dir;
    EXPECT_EQ(r->result.err, p.result.err) << ctx << ": " << r->dir;
  }
  const Expect want = Expected(scenario);
  const bool paths = mode.rfind("edge", 0) != 0;
  std::set<std::string> skip = want.nondeterministic;

  // The final profile(s).  fork_from_thread: two files, the parent's (main
  // ran) and the child's (child_work ran).
  const size_t n_files = scenario == "fork_from_thread" ? 2 : 1;
  size_t n_mid = scenario == "dump_while_counting" ? 1 : 0;
  ASSERT_EQ(t.profiles.size(), n_files + n_mid) << ctx;
  ASSERT_EQ(a.profiles.size(), n_files + n_mid) << ctx;
  // Each run's final profiles; with fork the parent's first.
  auto load_finals = [&](const ScenarioRun& r, std::vector<Profile>* out) {
    for (const std::string& f : r.profiles) {
      if (f == "p.prof.mid") continue;
      Profile prof;
      std::string error;
      ASSERT_TRUE(LoadProfile(r.dir + "/" + f, paths, &prof, &error))
          << ctx << ": " << error;
      out->push_back(std::move(prof));
      if (want.verify && &r == &t) {
        CommandResult v =
            harness::Run(Quote(Reconstruct()) + " verify " + Quote(f), r.dir);
        EXPECT_EQ(v.status, 0) << ctx << ": verify " << f << ":\n"
                               << v.out << v.err;
      }
    }
    // The child ran child_work, the parent main.
    if (out->size() == 2 && Exec(out->at(0), "child_work") > 0)
      std::swap(out->at(0), out->at(1));
  };
  std::vector<Profile> tf, af;
  load_finals(t, &tf);
  load_finals(a, &af);
  ASSERT_EQ(tf.size(), n_files) << ctx;
  ASSERT_EQ(af.size(), n_files) << ctx;
  for (size_t i = 0; i < tf.size(); i++)
    CompareProfiles(ctx + " (profile " + std::to_string(i) + " vs atomic)",
                    tf[i], af[i], skip);
  if (scenario == "fork_from_thread") {
    const Profile& child = tf[1];
    EXPECT_EQ(Exec(child, "child_work"), 100) << ctx << ": child";
    EXPECT_EQ(Exec(child, "work"), 100 + 500) << ctx << ": child";
    EXPECT_EQ(Exec(child, "main"), 0) << ctx << ": child";
    EXPECT_EQ(Exec(tf[0], "main"), 1) << ctx << ": parent";
  }
  for (const auto& [name, count] : want.exact)
    EXPECT_EQ(Exec(tf[0], name), count) << ctx << ": " << name
                                        << " (hand-derived)";

  if (scenario == "dump_while_counting") {
    // The profile right after the dump: phase 1, exactly.
    Profile tm, am;
    std::string error;
    ASSERT_TRUE(LoadProfile(t.dir + "/p.prof.mid", paths, &tm, &error)) << error;
    ASSERT_TRUE(LoadProfile(a.dir + "/p.prof.mid", paths, &am, &error)) << error;
    EXPECT_EQ(Exec(tm, "work"), 8 * int64_t(kWork)) << ctx << ": mid";
    CompareProfiles(ctx + " (mid)", tm, am, {"noise", "noise_thread"});
  }
  if (scenario == "paths" && paths) {
    // Hand-derived: classify's 4 paths (x & 1, x & 2 over N_WORK
    // consecutive numbers from a multiple of 4, 8 threads) 2 x N_WORK each;
    // loop_sum's paths sum to 8000 x 102 (each call: one path from the
    // entry to the loop's entry edge, cut by path-loop-cuts, 100 iterations
    // that start at its header, one path out), and the most frequent is
    // one of those 100.
    auto sorted_counts = [](const Fn& f) {
      std::vector<int64_t> v;
      for (const std::string& p : f.paths)
        v.push_back(std::stoll(p.substr(p.find('=') + 1)));
      std::sort(v.rbegin(), v.rend());
      return v;
    };
    auto find = [&](const std::string& name) -> const Fn* {
      for (const auto& [key, fn] : tf[0])
        if (key == name || key.rfind(name + "(", 0) == 0) return &fn;
      return nullptr;
    };
    const Fn* cl = find("classify");
    const Fn* ls = find("loop_sum");
    ASSERT_TRUE(cl != nullptr && ls != nullptr) << ctx;
    EXPECT_EQ(sorted_counts(*cl), std::vector<int64_t>(4, 2 * int64_t(kWork)))
        << ctx << ": classify's paths";
    std::vector<int64_t> l = sorted_counts(*ls);
    int64_t sum = 0;
    for (int64_t x : l) sum += x;
    EXPECT_EQ(sum, 8000 * 102) << ctx << ": loop_sum's paths";
    ASSERT_FALSE(l.empty()) << ctx;
    EXPECT_EQ(l[0], 8000 * 100) << ctx << ": loop_sum's iterations";
  }
  if (scenario == "running_at_exit") {
    // spin() is counted at least as often as main saw it return.
    std::string seen;
    ASSERT_TRUE(harness::ReadFile(t.dir + "/spins-seen", &seen));
    EXPECT_GE(Exec(tf[0], "spin"), std::stoll(seen)) << ctx;
  }
}

std::vector<Param> AllParams() {
  const std::vector<std::string> c_scenarios = {
      "exit_around_main", "detached",        "short_lived",
      "exit_during_dump", "dump_while_counting", "reset_while_counting",
      "fork_from_thread", "dlopen",          "running_at_exit", "paths"};
  const std::vector<std::string> path_variant_scenarios = {
      "paths", "exit_around_main", "dump_while_counting", "dlopen"};
  const std::vector<std::string> cxx_only = {"thread_local_dtor", "exceptions",
                                             "static_join"};
  std::vector<Param> out;
  for (bool cxx : {false, true})
    for (const char* opt : {"-O0", "-O2"})
      for (const char* mode : {"edge", "path", "edge-tls", "path-tls"}) {
        for (const std::string& s : c_scenarios) out.emplace_back(s, cxx, opt, mode);
        if (cxx)
          for (const std::string& s : cxx_only) out.emplace_back(s, cxx, opt, mode);
      }
  // tune-thread-gs=off, the thread-local pointer in the executable too, and
  // -flto (update=thread through %gs, -flto's default under -pthread in an
  // executable): many threads, exits and reused copies, fork, dumps while
  // threads count, a dlopen'ed -fPIC library beside it.
  const std::vector<std::string> pointer_scenarios = {
      "short_lived",         "exit_during_dump", "fork_from_thread",
      "dump_while_counting", "paths",            "exit_around_main",
      "detached",            "dlopen"};
  for (const auto& [cxx, opt] : std::vector<std::pair<bool, const char*>>{
           {false, "-O0"}, {false, "-O2"}, {true, "-O2"}})
    for (const char* mode : {"edge-ptr", "path-ptr", "edge-lto", "path-lto"})
      for (const std::string& s : pointer_scenarios) out.emplace_back(s, cxx, opt, mode);
  for (bool cxx : {false, true})
    for (const char* opt : {"-O0", "-O2"})
      for (const char* mode : {"path-number", "path-hashed", "path-loops"})
        for (const std::string& s : path_variant_scenarios)
          // Not dlopen with every function hashed: the runtime never unmaps
          // a dlclose'd library's hash tables (runtime/path_table.c, "a
          // library loaded and unloaded repeatedly leaks its tables each
          // time", update=atomic alike), so the scenario's 20 open/close
          // cycles grow the process by design there.
          if (!(s == "dlopen" && std::string(mode) == "path-hashed"))
            out.emplace_back(s, cxx, opt, mode);
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, Threads, ::testing::ValuesIn(AllParams()),
    [](const ::testing::TestParamInfo<Param>& i) {
      return std::get<0>(i.param) + (std::get<1>(i.param) ? "_cxx_" : "_c_") +
             std::get<2>(i.param).substr(1) + "_" +
             [](std::string m) {
               for (char& ch : m)
                 if (ch == '-') ch = '_';
               return m;
             }(std::get<3>(i.param));
    });

}  // namespace

namespace {

// -flto in -fPIC code: the default under -pthread stays update=atomic
// (update=thread's table of thread pointers there is top-level asm, which
// LTO's renaming of static symbols would break: the link failed), and
// asking for update=thread or update=tls is an error naming the option.
// (In code for executables -flto counts through %gs: the scenarios' modes
// edge-lto and path-lto.)
TEST(ThreadsLto, PicDefaultAtomicLinksAndCounts) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/mt-lto";
  harness::MakeFreshDir(dir);
  const std::string src = harness::ProgramsDir() + "/mt";
  for (const char* f : {"mt.c", "mt_lib.c"})
    harness::WriteFileOrDie(dir + "/" + f,
                            harness::ReadFileOrDie(src + "/" + f));
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                         " -O2 -flto -fPIC -pthread -fplugin-arg-ballarus-mode=edge";
  CommandResult r = harness::Run(cc + " -c mt.c -o mt.o", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  r = harness::Run(cc + " mt.o -ldl -o mt", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(harness::Run("readelf -SW mt", dir).out.find("ballarus_thread_ctrs"),
            std::string::npos);
  r = harness::Run("./mt short_lived", dir, {"BALLARUS_PROFILE=" + dir + "/p.prof"});
  ASSERT_EQ(r.status, 0) << r.err;
  Profile p;
  std::string error;
  ASSERT_TRUE(LoadProfile(dir + "/p.prof", false, &p, &error)) << error;
  EXPECT_EQ(Exec(p, "work"), 1000000);
  EXPECT_EQ(Exec(p, "short_thread"), 1000);

  r = harness::Run(cc + " -fplugin-arg-ballarus-update=thread -c mt.c -o t.o",
                   dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("update=thread"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-flto"), std::string::npos) << r.err;
  r = harness::Run(cc + " -fplugin-arg-ballarus-update=tls -c mt.c -o t.o",
                   dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("update=tls"), std::string::npos) << r.err;
}

}  // namespace
