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
// Path mode runs in every variant of its counting, because each reaches
// the thread's copy differently: path (the default pointer register,
// started from the thread's copy: CounterAddress), path-number
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
#include "nlohmann/json.hpp"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using json = nlohmann::json;

constexpr uint64_t kWork = 20000;  // N_WORK in mt.c

using harness::InstallPrefix;

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

// Whether a Config's mode counts through %gs (edge-gs, path-gs:
// tune-thread-gs=on; the -fPIC library keeps update=thread's pointer).
bool Gs(const std::string& mode) {
  return mode.size() > 3 && mode.compare(mode.size() - 3, 3, "-gs") == 0;
}

// The plugin options of a Config's mode.
std::string ModeOptions(const std::string& mode) {
  if (Gs(mode))
    return ModeOptions(mode.substr(0, mode.size() - 3)) +
           " -fplugin-arg-ballarus-tune-thread-gs=on";
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

// One function of a profile, by its source-level name (the demangled name
// up to its parameter list, so C and C++ builds name functions alike).
struct Fn {
  int64_t executions = -1;
  std::vector<std::string> edges;  // "src->dst=count"
  std::vector<std::string> paths;  // "id=count"
};
using Profile = std::map<std::string, Fn>;

// The demangled name without "(anonymous namespace)::".
std::string SourceName(const json& f) {
  std::string n = f.at("demangled").get<std::string>();
  const std::string anon = "(anonymous namespace)::";
  for (size_t at; (at = n.find(anon)) != std::string::npos;) n.erase(at, anon.size());
  return n;
}

bool LoadProfile(const std::string& path, bool paths, Profile* out,
                 std::string* error) {
  CommandResult r = harness::Run(
      Quote(Reconstruct()) + (paths ? " paths --json --top 0 " : " show --json ") +
          Quote(path),
      "/");
  if (r.status != 0) {
    *error = "ballarus-reconstruct on " + path + " exited " +
             std::to_string(r.status) + ": " + r.err;
    return false;
  }
  json j;
  try {
    j = json::parse(r.out);
  } catch (const std::exception& e) {
    *error = std::string("not JSON: ") + e.what();
    return false;
  }
  for (const json& f : j.at("functions")) {
    Fn& fn = (*out)[SourceName(f)];
    if (!f.at("execution_count").is_null())
      fn.executions = std::max<int64_t>(fn.executions, 0) +
                      f.at("execution_count").get<int64_t>();
    for (const json& e : f.at("edges"))
      fn.edges.push_back(std::to_string(e.at("src").get<int>()) + "->" +
                         std::to_string(e.at("dst").get<int>()) + "=" +
                         (e.at("count").is_null() ? "null"
                                                  : e.at("count").dump()));
    if (f.contains("paths"))
      for (const json& p : f.at("paths"))
        fn.paths.push_back(p.at("id").get<std::string>() + "=" +
                           p.at("count").dump());
  }
  return true;
}

// The execution count of function `name` (C: its name; C++: its name and
// parameter list), -2 if absent.
int64_t Exec(const Profile& p, const std::string& name) {
  for (const auto& [key, fn] : p)
    if (key == name || key.rfind(name + "(", 0) == 0) return fn.executions;
  return -2;
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
  // %gs where asked for: the executable's counts are %gs adds, the
  // library's not.
  EXPECT_EQ(sec.out.find("ballarus_gs_tus") != std::string::npos, Gs(mode))
      << ctx;
  EXPECT_EQ(harness::Run("objdump -d mt.o", thread.dir).out.find("%gs:") !=
                std::string::npos,
            Gs(mode))
      << ctx;
  EXPECT_EQ(harness::Run("readelf -SW " + Quote(thread.lib), thread.dir)
                .out.find("ballarus_gs_tus"),
            std::string::npos)
      << ctx;

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
  // tune-thread-gs: many threads, exits and reused copies, fork, dumps
  // while threads count, a dlopen'ed -fPIC library (pointer) beside it.
  const std::vector<std::string> gs_scenarios = {
      "short_lived",         "exit_during_dump", "fork_from_thread",
      "dump_while_counting", "paths",            "exit_around_main",
      "detached",            "dlopen"};
  for (const auto& [cxx, opt] : std::vector<std::pair<bool, const char*>>{
           {false, "-O0"}, {false, "-O2"}, {true, "-O2"}})
    for (const char* mode : {"edge-gs", "path-gs"})
      for (const std::string& s : gs_scenarios) out.emplace_back(s, cxx, opt, mode);
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

// -flto: the default under -pthread stays update=atomic (update=thread's
// table of thread pointers is top-level asm, which LTO's renaming of static
// symbols would break: the link failed), and asking for update=thread or
// update=tls is an error naming the option.
TEST(ThreadsLto, DefaultAtomicLinksAndCounts) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/mt-lto";
  harness::MakeFreshDir(dir);
  const std::string src = harness::ProgramsDir() + "/mt";
  for (const char* f : {"mt.c", "mt_lib.c"})
    harness::WriteFileOrDie(dir + "/" + f,
                            harness::ReadFileOrDie(src + "/" + f));
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc") +
                         " -O2 -flto -pthread -fplugin-arg-ballarus-mode=edge";
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

// The %gs tests' builds: `main_c` (with `setter_c`, if any, compiled by
// plain gcc and linked in) built in mode as kind -- "plain" (gcc), "gs"
// (tune-thread-gs=on) or "atomic" (update=atomic) -- in a fresh directory
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

// tune-thread-gs=on in a program that set the %gs base itself before main
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
    const std::string warning = "ballarus: the %gs base is in use";
    const size_t at = runs["gs"].err.find(warning);
    EXPECT_NE(at, std::string::npos) << ctx << ": " << runs["gs"].err;
    EXPECT_EQ(runs["gs"].err.find(warning, at + 1), std::string::npos)
        << ctx << ": warned more than once";
    const Profile& gs = profiles["gs"];
    EXPECT_EQ(Exec(gs, "work"), 6000) << ctx;
    EXPECT_EQ(Exec(gs, "thread_main"), 1) << ctx;
    EXPECT_EQ(Exec(gs, "main"), 1) << ctx;
    ExpectSameCounts(ctx, gs, profiles["atomic"]);
  }
}

// tune-thread-gs=on, a %gs base set before main such that the counts'
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
      "and the counts of code built with tune-thread-gs=on would "
      "overwrite memory at 0x";
  const size_t at = run.err.find(message);
  EXPECT_NE(at, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(message, at + 1), std::string::npos) << run.err;
  EXPECT_EQ(run.err.rfind("ballarus: the %gs base is in use (0x", 0), 0u)
      << run.err;
}

// tune-thread-gs=on under the legacy address layout (`setarch -L`:
// mappings grow up from below the executable), where every thread's copy
// lies below the shared counters and the kernel refuses the negative
// distance as a %gs base: one warning, and the threads, which here never
// run at once, count into the shared counters exactly (work() by hand, the
// rest edge for edge equal to update=atomic's under the same layout).
TEST(ThreadsGs, RefusedBaseWarnsAndCounts) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string main_c = R"(#include <pthread.h>
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
  for (const char* mode : {"edge", "path"}) {
    const std::string ctx = std::string("mode=") + mode;
    std::map<std::string, CommandResult> runs;
    std::map<std::string, Profile> profiles;
    for (const char* kind : {"plain", "gs", "atomic"}) {
      BuildRunGs("gs-refused", mode, kind, main_c, "",
                 "setarch x86_64 -L ./gsprog", &runs[kind], &profiles[kind]);
      if (HasFatalFailure()) return;
    }
    EXPECT_EQ(runs["gs"].out, runs["plain"].out) << ctx;
    EXPECT_EQ(runs["atomic"].err, "") << ctx;
    const std::string warning =
        "ballarus: cannot set the %gs base of a thread's counter copy";
    const size_t at = runs["gs"].err.find(warning);
    EXPECT_NE(at, std::string::npos) << ctx << ": " << runs["gs"].err;
    EXPECT_EQ(runs["gs"].err.find(warning, at + 1), std::string::npos)
        << ctx << ": warned more than once";
    const Profile& gs = profiles["gs"];
    EXPECT_EQ(Exec(gs, "work"), 3 * 1000 + 10) << ctx;
    EXPECT_EQ(Exec(gs, "worker"), 3) << ctx;
    ExpectSameCounts(ctx, gs, profiles["atomic"]);
  }
}

// tune-thread-gs=on: each registered thread's %gs base is its own copy's
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

// tune-thread-gs=on: a thread inherits its creator's %gs base, so until it
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
