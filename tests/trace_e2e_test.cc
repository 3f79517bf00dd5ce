// trace_e2e_test.cc — the oracle of tracing (issue 34's acceptance): for
// every e2e corpus program (tests/programs/MANIFEST; threads.c replaced by
// trace_threads.c, whose naive trace stays small; plus balance_loop.c,
// entry_balance.c and vfork_exec.c, which MANIFEST leaves out) in C and
// C++ at -O0 and -O2, built three ways with the installed wrappers —
// plain, -fplugin-arg-ballarus-mode=trace-naive and mode=trace — and run
// with BALLARUS_TRACE=full:
//
//   * stdout, stderr and exit status of both traced builds equal the plain
//     build's;
//   * every process's trace file (the program's own, PATH.<pid> of each
//     fork child) of the naive build, decoded here with a stack alone
//     (tests/trace_oracle.h), gives each thread's executed (function,
//     block) sequence; `ballarus-reconstruct trace --json --blocks` of the
//     optimised build's files regenerates the same sequences element for
//     element, with the same end (complete, or cut for a thread alive at
//     exit).  Threads and fork children are matched as multisets (their
//     serial numbers and pids differ from run to run);
//   * a program that exits with status 0 has, in its own trace file, a
//     thread that entered and left main (a trace finished early, e.g. by
//     a vfork child's exec, would fail here even if both builds agree).
//
// The log reports, per program, the optimised trace's witness words per
// naive block word.
//
// TraceDeep: recursion deeper than a checkpoint holds, full and ring.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
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
using trace_oracle::Step;

const char kTraceName[] = "t.trace";

using harness::InstallPrefix;

// The corpus as this test runs it.
std::vector<Program> Programs() {
  std::vector<Program> out;
  for (const Program& p : harness::LoadManifestOrDie())
    if (p.name != "threads") out.push_back(p);
  for (const char* name : {"balance_loop", "entry_balance", "vfork_exec"}) {
    Program p;
    p.name = name;
    p.sources = {std::string(name) + ".c"};
    out.push_back(p);
  }
  Program t;
  t.name = "trace_threads";
  t.sources = {"trace_threads.c"};
  t.cflags = {"-pthread"};
  out.push_back(t);
  return out;
}

const Program* FindProgram(const std::string& name) {
  static const std::vector<Program> programs = Programs();
  for (const Program& p : programs)
    if (p.name == name) return &p;
  return nullptr;
}

struct Outcome {
  Build build;
  std::string run_dir;
  CommandResult run;
};

// Runs out->build's program in the fresh directory out->run_dir with
// BALLARUS_TRACE=`spec` and the profile pooled into RUN/ballarus.profile.
void RunBuilt(Outcome* out, const std::string& spec) {
  harness::MakeFreshDir(out->run_dir);
  if (out->build.ok)
    out->run = harness::Run(
        Quote(out->build.exe), out->run_dir,
        {"BALLARUS_TRACE=" + spec,
         "BALLARUS_TRACE_FILE=" + out->run_dir + "/" + kTraceName,
         "BALLARUS_PROFILE=" + out->run_dir + "/ballarus.profile"});
}

// Builds `mode` ("" = plain) and runs it in its own directory with a full
// trace.
Outcome BuildAndRun(const Program& p, const std::string& opt,
                    const std::string& mode, const std::string& root) {
  Outcome out;
  BuildOptions o;
  o.kind = mode.empty() ? Kind::kPlain : Kind::kBallarus;
  o.opt = opt;
  o.ballarus_prefix = InstallPrefix();
  o.ballarus_mode = mode;
  const std::string name = mode.empty() ? "plain" : mode;
  out.build = harness::BuildProgram(p, o, root + "/" + name);
  out.run_dir = root + "/run-" + name;
  RunBuilt(&out, "full");
  return out;
}

// The trace files of a run: the program's own first, then fork children's
// (PATH.<pid>, PATH.<pid>.<pid> ...) in name order.
std::vector<std::string> TraceFiles(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind(kTraceName, 0) != 0) continue;
      const std::string tail = n.substr(sizeof kTraceName - 1);
      if (tail.find_first_not_of(".0123456789") != std::string::npos)
        continue;  // PATH.tmp.* of a writer that never finished
      names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// One thread's sequence and whether its stream ended.
struct ThreadSeq {
  std::vector<Step> steps;
  bool complete = false;
  bool operator<(const ThreadSeq& o) const {
    return steps != o.steps ? steps < o.steps : complete < o.complete;
  }
  bool operator==(const ThreadSeq& o) const {
    return steps == o.steps && complete == o.complete;
  }
};

// A process: its file and its threads, sorted.
struct Process {
  std::string file;
  std::vector<ThreadSeq> threads;
  uint64_t words = 0;  // naive: block words; optimised: witness words
};

// Whether some thread of the program's own trace entered and left main
// (constructors may run before, destructors after).
bool MainReturned(const Process& p) {
  for (const ThreadSeq& t : p.threads) {
    auto entry = std::find(t.steps.begin(), t.steps.end(), Step{"main", 0});
    if (std::find(entry, t.steps.end(), Step{"main", 1}) != t.steps.end())
      return true;
  }
  return false;
}

bool ReadNaive(const std::string& dir, const std::string& file,
               const trace_oracle::FunctionNames& names, Process* out,
               std::string* error) {
  trace_oracle::TraceFile t;
  if (!trace_oracle::ReadTraceFile(dir + "/" + file, &t, error)) return false;
  out->file = file;
  for (const auto& [serial, words] : t.threads) {
    trace_oracle::NaiveThread n;
    if (!trace_oracle::DecodeNaive(words, names, &n, error)) {
      *error = file + ": thread " + std::to_string(serial) + ": " + *error;
      return false;
    }
    out->threads.push_back({std::move(n.steps), n.complete});
    out->words += n.block_words;
  }
  std::sort(out->threads.begin(), out->threads.end());
  return true;
}

bool ReadRegenerated(const std::string& dir, const std::string& file,
                     Process* out, std::string* error) {
  trace_oracle::TraceFile t;
  if (!trace_oracle::ReadTraceFile(dir + "/" + file, &t, error)) return false;
  for (const auto& kv : t.threads)
    out->words += trace_oracle::WitnessWords(kv.second.words);
  CommandResult r = harness::Run(
      Quote(InstallPrefix() + "/bin/ballarus-reconstruct") + " trace " +
          Quote(file) + " --profile ballarus.profile --json --blocks",
      dir);
  if (r.status != 0) {
    *error = "ballarus-reconstruct trace " + file + " exited " +
             std::to_string(r.status) + ": " + r.err;
    return false;
  }
  std::map<uint32_t, trace_oracle::ShownThread> shown;
  if (!trace_oracle::ParseShown(r.out, &shown, error)) return false;
  out->file = file;
  for (auto& [serial, s] : shown) {
    if (s.blocks != s.steps.size()) {
      *error = file + ": thread " + std::to_string(serial) + ": " +
               std::to_string(s.blocks) + " blocks but " +
               std::to_string(s.steps.size()) + " steps shown";
      return false;
    }
    out->threads.push_back({std::move(s.steps), s.status == "complete"});
  }
  std::sort(out->threads.begin(), out->threads.end());
  return true;
}

bool ReadRun(const Outcome& o, bool naive, std::vector<Process>* out,
             std::string* error) {
  trace_oracle::FunctionNames names;
  if (naive && !trace_oracle::LoadFunctionNames(
                   {o.run_dir + "/ballarus.profile"}, &names, error))
    return false;
  for (const std::string& file : TraceFiles(o.run_dir)) {
    Process p;
    if (!(naive ? ReadNaive(o.run_dir, file, names, &p, error)
                : ReadRegenerated(o.run_dir, file, &p, error)))
      return false;
    out->push_back(std::move(p));
  }
  if (out->empty() || out->front().file != kTraceName) {
    *error = "no " + std::string(kTraceName) + " in " + o.run_dir;
    return false;
  }
  // Fork children in the order of their sequences, as the pids differ.
  std::sort(out->begin() + 1, out->end(),
            [](const Process& a, const Process& b) {
              return a.threads < b.threads;
            });
  return true;
}

void CompareProcesses(const std::string& ctx, const std::vector<Process>& naive,
                      const std::vector<Process>& regen) {
  ASSERT_EQ(naive.size(), regen.size()) << ctx << ": processes traced";
  for (size_t i = 0; i < naive.size(); ++i) {
    const Process &n = naive[i], &r = regen[i];
    const std::string where = ctx + ": " + n.file + " / " + r.file;
    ASSERT_EQ(n.threads.size(), r.threads.size()) << where << ": threads";
    for (size_t k = 0; k < n.threads.size(); ++k) {
      EXPECT_TRUE(n.threads[k].steps == r.threads[k].steps)
          << where << ": thread " << k << " (sorted): "
          << trace_oracle::FirstDifference(n.threads[k].steps,
                                           r.threads[k].steps);
      EXPECT_EQ(n.threads[k].complete, r.threads[k].complete)
          << where << ": thread " << k << " (sorted) complete";
    }
  }
}

class TraceOracle
    : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(TraceOracle, RegeneratedEqualsNaive) {
  const std::string name = GetParam().first, opt = GetParam().second;
  const Program* p = FindProgram(name);
  ASSERT_NE(p, nullptr) << name;
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = harness::TempRoot() + "/trace-" + name + opt;
  const std::string ctx = name + " " + opt;
  const char* modes[3] = {"", "trace-naive", "trace"};
  std::vector<Outcome> o(3);
  std::vector<std::thread> builds;
  for (int i = 0; i < 3; ++i)
    builds.emplace_back([&, i] { o[i] = BuildAndRun(*p, opt, modes[i], root); });
  for (std::thread& t : builds) t.join();
  for (const Outcome& x : o) ASSERT_TRUE(x.build.ok) << x.build.log;
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(o[i].run.out, o[0].run.out) << ctx << " " << modes[i] << ": stdout";
    EXPECT_EQ(o[i].run.err, o[0].run.err) << ctx << " " << modes[i] << ": stderr";
    EXPECT_EQ(o[i].run.status, o[0].run.status)
        << ctx << " " << modes[i] << ": exit status";
  }
  std::vector<Process> naive, regen;
  std::string error;
  ASSERT_TRUE(ReadRun(o[1], true, &naive, &error)) << ctx << ": naive: " << error;
  if (o[0].run.status == 0)
    EXPECT_TRUE(MainReturned(naive.front()))
        << ctx << ": the naive trace never leaves main";
  ASSERT_TRUE(ReadRun(o[2], false, &regen, &error)) << ctx << ": " << error;
  CompareProcesses(ctx, naive, regen);
  uint64_t blocks = 0, witnesses = 0, steps = 0;
  for (const Process& x : naive) {
    blocks += x.words;
    for (const ThreadSeq& t : x.threads) steps += t.steps.size();
  }
  for (const Process& x : regen) witnesses += x.words;
  std::printf("trace_e2e %s %s: %zu process(es), %llu steps; %llu witness "
              "words for %llu naive block words: %.3f per block\n",
              name.c_str(), opt.c_str(), naive.size(),
              static_cast<unsigned long long>(steps),
              static_cast<unsigned long long>(witnesses),
              static_cast<unsigned long long>(blocks),
              blocks ? double(witnesses) / double(blocks) : 0.0);
}

// programs/trace_deep.c: 30000 traced activations deep, past the 16384
// frames a checkpoint holds, then calls near the bottom.  The full trace
// regenerates as the naive one; the recorder's regenerates a suffix of
// it, of at least `min_steps` steps: with ring:5000 its chunks start near
// the bottom of the stack, after the deep activations, whose frames must
// have left the outer ones intact; with ring:40000 the first kept chunks
// start deeper than the cap (unknown checkpoints) and the regeneration
// starts at the first chunk started back under it.
TEST(TraceDeep, RegeneratedEqualsNaivePastTheCheckpointCap) {
  Program p;
  p.name = "trace_deep";
  p.sources = {"trace_deep.c"};
  for (const char* opt : {"-O0", "-O2"}) {
    const std::string root = harness::TempRoot() + "/trace-deep" + opt;
    const std::string ctx = std::string("trace_deep ") + opt;
    Outcome naive = BuildAndRun(p, opt, "trace-naive", root);
    Outcome opt_full = BuildAndRun(p, opt, "trace", root);
    ASSERT_TRUE(naive.build.ok) << naive.build.log;
    ASSERT_TRUE(opt_full.build.ok) << opt_full.build.log;
    ASSERT_EQ(naive.run.status, 0) << ctx << ": " << naive.run.err;
    ASSERT_EQ(opt_full.run.status, 0) << ctx << ": " << opt_full.run.err;
    std::vector<Process> want, got;
    std::string error;
    ASSERT_TRUE(ReadRun(naive, true, &want, &error)) << ctx << ": " << error;
    ASSERT_TRUE(ReadRun(opt_full, false, &got, &error)) << ctx << ": " << error;
    CompareProcesses(ctx + " full", want, got);
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(want[0].threads.size(), 1u);
    const std::vector<Step>& all = want[0].threads[0].steps;
    for (const auto& [spec, min_steps] :
         {std::pair<const char*, size_t>{"ring:5000", 1000},
          {"ring:40000", 10000}}) {
      Outcome ring = opt_full;
      ring.run_dir = root + "/run-" + spec;
      RunBuilt(&ring, spec);
      ASSERT_EQ(ring.run.status, 0) << ctx << " " << spec << ": " << ring.run.err;
      std::vector<Process> tail;
      ASSERT_TRUE(ReadRun(ring, false, &tail, &error))
          << ctx << " " << spec << ": " << error;
      ASSERT_EQ(tail.size(), 1u);
      ASSERT_EQ(tail[0].threads.size(), 1u);
      const std::vector<Step>& last = tail[0].threads[0].steps;
      EXPECT_GE(last.size(), min_steps) << ctx << " " << spec;
      ASSERT_LE(last.size(), all.size()) << ctx << " " << spec;
      const std::vector<Step> suffix(all.end() - last.size(), all.end());
      EXPECT_TRUE(last == suffix)
          << ctx << " " << spec << ": "
          << trace_oracle::FirstDifference(suffix, last);
    }
  }
}

std::vector<std::pair<std::string, std::string>> AllCases() {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const Program& p : Programs())
    for (const char* opt : {"-O0", "-O2"}) cases.push_back({p.name, opt});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, TraceOracle, ::testing::ValuesIn(AllCases()),
    [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& i) {
      return i.param.first + "_" + i.param.second.substr(1);
    });

}  // namespace
