// trace_crash_test.cc — the flight recorder (issue 34's acceptance):
// programs/trace_crash.c takes, over a long loop, the branches its input
// names, then dereferences NULL (the CFGs come from the profile of a run
// of the same build that exits, as a crash writes none); built plain, with
// -fplugin-arg-ballarus-mode=trace-naive and with mode=trace (the installed
// wrappers), at -O0 and -O2, in five variants (single thread; two workers
// of which one crashes while the other is parked; the program's own
// SIGSEGV handler; a crash inside strlen, in libc; abort()).  With
// BALLARUS_TRACE=ring:64 (two 4096-word chunks, which the loop's
// witnesses fill many times over):
//
//   * the traced build dies exactly as the plain build (same status,
//     128 + SIGSEGV or SIGABRT, same stdout and stderr); with the
//     program's handler that handler still runs and its exit code (42) is
//     kept;
//   * `ballarus-reconstruct trace --last 50 --json` shows, per thread, the
//     last 50 source lines the thread ran: equal to the last 50 lines of
//     the naive build's full trace of the same run (decoded by the test,
//     tests/trace_oracle.h), and derived by hand from the input: the
//     crashing thread's last line is the NULL dereference, the parked
//     worker's the pthread_cond_wait, and the branch lines among them are
//     the tail of the input's letters repeated ROUNDS times;
//   * the crashing thread's last line carries its signal, and every line
//     of the thread is confirmed (the runtime's FAULT record places the
//     crash: in the traced function by the instruction's source line, or,
//     in libc, inside the call the thread was making).
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"
#include "tests/harness_gtest.h"
#include "tests/trace_oracle.h"

namespace {

using harness::Build;
using harness::BuildOptions;
using harness::CommandResult;
using harness::Kind;
using harness::Program;
using harness::Quote;

constexpr int kRounds = 3000;
const char kPatternA[] = "abacbcab";
const char kPatternB[] = "ccbabb";
constexpr size_t kLast = 50;

using harness::InstallPrefix;

Program CrashProgram() {
  Program p;
  p.name = "trace_crash";
  p.sources = {"trace_crash.c"};
  p.cflags = {"-pthread"};
  return p;
}

// "trace_crash.c:N" of the line carrying /* MARKER */.
std::string MarkedLine(const std::string& marker) {
  const std::string src =
      harness::ReadFileOrDie(harness::ProgramsDir() + "/trace_crash.c");
  const size_t at = src.find("/* " + marker + " */");
  EXPECT_NE(at, std::string::npos) << marker;
  return "trace_crash.c:" +
         std::to_string(1 + std::count(src.begin(), src.begin() + at, '\n'));
}

// "basename:line" of a shown line ("basename:line function").
std::string Where(const std::string& shown) {
  return shown.substr(0, shown.find(' '));
}

// The branch lines the input makes step() run: the pattern's letters,
// kRounds times over.
std::vector<std::string> BranchLines(const std::string& pattern) {
  const std::string a = MarkedLine("BRANCH_A"), b = MarkedLine("BRANCH_B"),
                    c = MarkedLine("BRANCH_C");
  std::vector<std::string> out;
  for (int r = 0; r < kRounds; ++r)
    for (char x : pattern) out.push_back(x == 'a' ? a : x == 'b' ? b : c);
  return out;
}

// Hand-derived: `lines` (one thread's last lines) reach `last_marker`
// last, or followed only by lines of `handler` (the program's signal
// handler, run after the fault), and its branch lines are the tail of
// `pattern`'s.
void CheckByHand(const std::string& ctx, const std::vector<std::string>& lines,
                 const std::string& last_marker, const std::string& pattern,
                 const std::string& handler = "") {
  ASSERT_EQ(lines.size(), kLast) << ctx;
  size_t end = lines.size();
  while (end > 0 && !handler.empty() &&
         lines[end - 1].substr(lines[end - 1].find(' ') + 1) == handler)
    --end;
  ASSERT_GT(end, 0u) << ctx;
  EXPECT_EQ(Where(lines[end - 1]), MarkedLine(last_marker)) << ctx;
  const std::vector<std::string> all = BranchLines(pattern);
  const std::set<std::string> branch(all.begin(), all.end());
  std::vector<std::string> shown;
  for (size_t i = 0; i < end; ++i)
    if (branch.count(Where(lines[i]))) shown.push_back(Where(lines[i]));
  ASSERT_GE(shown.size(), 5u) << ctx << ": too few branch lines to tell";
  const std::vector<std::string> tail(all.end() - shown.size(), all.end());
  EXPECT_EQ(shown, tail) << ctx << ": branch lines";
}

struct Builds {
  Build plain, naive, trace;
};

Builds BuildAll(const std::string& opt, const std::string& root) {
  const Program p = CrashProgram();
  Builds b;
  auto one = [&](const std::string& mode, Build* out) {
    BuildOptions o;
    o.kind = mode.empty() ? Kind::kPlain : Kind::kBallarus;
    o.opt = opt;
    o.ballarus_prefix = InstallPrefix();
    o.ballarus_mode = mode;
    *out = harness::BuildProgram(p, o, root + "/" + (mode.empty() ? "plain" : mode));
  };
  std::thread naive(one, "trace-naive", &b.naive);
  std::thread trace(one, "trace", &b.trace);
  one("", &b.plain);
  naive.join();
  trace.join();
  return b;
}

CommandResult RunVariant(const Build& b, const std::string& variant,
                         const std::string& trace_spec,
                         const std::string& trace_file) {
  std::vector<std::string> env;
  if (!trace_spec.empty())
    env = {"BALLARUS_TRACE=" + trace_spec, "BALLARUS_TRACE_FILE=" + trace_file};
  return harness::Run(Quote(b.exe) + " " + variant + " < input", b.dir, env);
}

// A crashing process writes no profile, and the profile's metadata holds
// the CFGs and trace plans a trace is read with: one run of the same build
// that exits writes them.
void WriteProfile(const Build& b) {
  CommandResult r =
      harness::Run(Quote(b.exe) + " ok < input", b.dir,
                   {"BALLARUS_PROFILE=" + b.dir + "/ballarus.profile"});
  EXPECT_EQ(r.status, 0) << b.dir << ": " << r.err;
}

// Each thread's last kLast lines of the naive full trace.
std::vector<std::vector<std::string>> NaiveLast(const Build& b,
                                                const std::string& file) {
  trace_oracle::FunctionNames names;
  trace_oracle::TraceFile t;
  std::string error;
  std::vector<std::vector<std::string>> out;
  EXPECT_TRUE(trace_oracle::LoadFunctionNames({b.dir + "/ballarus.profile"},
                                              &names, &error))
      << error;
  EXPECT_TRUE(trace_oracle::ReadTraceFile(file, &t, &error)) << error;
  for (const auto& [serial, words] : t.threads) {
    trace_oracle::NaiveThread n;
    EXPECT_TRUE(trace_oracle::DecodeNaive(words, names, &n, &error))
        << "naive thread " << serial << ": " << error;
    if (n.lines.size() > kLast) n.lines.erase(n.lines.begin(), n.lines.end() - kLast);
    out.push_back(std::move(n.lines));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// `trace --last kLast --json` of the ring, per thread (the output in
// *json); checks that the crashing thread's ring wrapped (it starts
// mid-stream).
std::vector<std::vector<std::string>> RingLast(const Build& b,
                                               const std::string& file,
                                               std::string* json) {
  trace_oracle::TraceFile t;
  std::string error;
  std::vector<std::vector<std::string>> out;
  EXPECT_TRUE(trace_oracle::ReadTraceFile(file, &t, &error)) << error;
  uint64_t wrapped = 0;
  for (const auto& kv : t.threads)
    wrapped = std::max(wrapped, kv.second.total - kv.second.words.size());
  EXPECT_GT(wrapped, 4u * 4096u) << file << ": the ring never wrapped";
  CommandResult r = harness::Run(
      Quote(InstallPrefix() + "/bin/ballarus-reconstruct") + " trace " +
          Quote(file) + " --profile ballarus.profile --last " +
          std::to_string(kLast) + " --json",
      b.dir);
  EXPECT_EQ(r.status, 0) << "trace " << file << ": " << r.err;
  *json = r.out;
  std::map<uint32_t, trace_oracle::ShownThread> shown;
  if (r.status != 0 || !trace_oracle::ParseShown(r.out, &shown, &error)) {
    ADD_FAILURE() << error;
    return out;
  }
  for (auto& kv : shown) out.push_back(std::move(kv.second.lines));
  std::sort(out.begin(), out.end());
  return out;
}

std::string Show(const std::vector<std::vector<std::string>>& threads) {
  std::string s;
  for (size_t k = 0; k < threads.size(); ++k) {
    s += "thread " + std::to_string(k) + ":\n";
    for (const std::string& l : threads[k]) s += "  " + l + "\n";
  }
  return s;
}

// The thread that ran `marker`'s line, or null.
const std::vector<std::string>* Reaching(
    const std::vector<std::vector<std::string>>& threads,
    const std::string& marker) {
  for (const auto& t : threads)
    for (const std::string& l : t)
      if (Where(l) == MarkedLine(marker)) return &t;
  return nullptr;
}

// In `trace --json`'s output: exactly one thread has a fault, `signal`,
// and its last step carries it; every step of it is confirmed.  The
// threads without one that were stopped where the file was written have
// no signal on any step.
void CheckCrashMarked(const std::string& ctx, const std::string& json,
                      const std::string& signal) {
  const nlohmann::json j = nlohmann::json::parse(json);
  int faults = 0;
  for (const nlohmann::json& t : j.at("threads")) {
    const nlohmann::json& steps = t.at("steps");
    ASSERT_FALSE(steps.empty()) << ctx;
    if (!t.contains("fault")) {
      for (const nlohmann::json& step : steps)
        EXPECT_FALSE(step.contains("signal")) << ctx << ": " << step;
      continue;
    }
    ++faults;
    EXPECT_EQ(t.at("fault").at("signal"), signal) << ctx;
    EXPECT_EQ(steps.back().value("signal", ""), signal) << ctx;
    EXPECT_TRUE(t.value("stopped_where_written", false)) << ctx;
    for (const nlohmann::json& step : steps)
      EXPECT_TRUE(step.at("confirmed").get<bool>()) << ctx << ": " << step;
  }
  EXPECT_EQ(faults, 1) << ctx;
}

// The line the variant crashes at, and its signal.
struct Crash {
  const char* marker;
  int signal;
};

Crash CrashOf(const std::string& variant) {
  if (variant == "libc") return {"CRASH_LIBC", SIGSEGV};
  if (variant == "abort") return {"ABORT", SIGABRT};
  return {"CRASH", SIGSEGV};
}

class FlightRecorder : public ::testing::TestWithParam<std::string> {};

TEST_P(FlightRecorder, LastLinesAndTheCrashKept) {
  const std::string opt = GetParam();
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = harness::TempRoot() + "/trace-crash" + opt;
  Builds b = BuildAll(opt, root);
  for (const Build* x : {&b.plain, &b.naive, &b.trace}) {
    ASSERT_TRUE(x->ok) << x->log;
    harness::WriteFileOrDie(x->dir + "/input", std::to_string(kRounds) + " " +
                                                   kPatternA + " " + kPatternB +
                                                   "\n");
  }
  WriteProfile(b.naive);
  WriteProfile(b.trace);
  for (const std::string variant : {"st", "mt", "handler", "libc", "abort"}) {
    const std::string ctx = opt + " " + variant;
    SCOPED_TRACE(ctx);
    const std::string ring = b.trace.dir + "/" + variant + ".ring";
    const std::string full = b.naive.dir + "/" + variant + ".full";
    CommandResult plain = RunVariant(b.plain, variant, "", "");
    CommandResult traced = RunVariant(b.trace, variant, "ring:64", ring);
    CommandResult naive = RunVariant(b.naive, variant, "full", full);
    const Crash crash = CrashOf(variant);
    EXPECT_EQ(plain.status, variant == "handler" ? 42 : 128 + crash.signal);
    for (const CommandResult* r : {&traced, &naive}) {
      EXPECT_EQ(r->status, plain.status);
      EXPECT_EQ(r->out, plain.out);
      EXPECT_EQ(r->err, plain.err);
    }
    // The program installs its own handler after the recorder started:
    // the recorder's stays in front, writes the ring, and the program's
    // handler then ends the process by _exit.
    const bool handler = variant == "handler";
    ASSERT_EQ(access(ring.c_str(), R_OK), 0) << ring << " not written";
    ASSERT_EQ(access(full.c_str(), R_OK), 0) << full << " not written";
    std::string json;
    const auto got = RingLast(b.trace, ring, &json);
    const auto want = NaiveLast(b.naive, full);
    EXPECT_EQ(got, want) << "ring:\n" << Show(got) << "naive:\n"
                         << Show(want);
    const char* crasher_pattern = variant == "mt" ? kPatternB : kPatternA;
    const std::vector<std::string>* crasher = Reaching(got, crash.marker);
    ASSERT_NE(crasher, nullptr) << "no thread reached the crash:\n"
                                << Show(got);
    CheckByHand(ctx + " crashing thread", *crasher, crash.marker,
                crasher_pattern, handler ? "on_segv" : "");
    CheckCrashMarked(ctx, json, crash.signal == SIGABRT ? "SIGABRT"
                                                        : "SIGSEGV");
    if (variant == "mt") {
      ASSERT_EQ(got.size(), 3u);
      const std::vector<std::string>* parked = Reaching(got, "PARK");
      ASSERT_NE(parked, nullptr) << "no thread parked:\n" << Show(got);
      CheckByHand(ctx + " parked thread", *parked, "PARK", kPatternA);
    } else {
      EXPECT_EQ(got.size(), 1u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Opt, FlightRecorder, ::testing::Values("-O0", "-O2"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return i.param.substr(1);
                         });

}  // namespace
