// trace_thread_test.cc — a thread's records (ring chunks, checkpoints,
// a fork child's file) regenerated in memory (trace_thread.h) against
// the run by hand of trace_test_util.h: from the oldest known
// checkpoint, step for step; bad checkpoints and damaged records are one
// problem naming the record, never a crash.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "reconstruct/trace_program.h"
#include "reconstruct/trace_test_util.h"
#include "reconstruct/trace_thread.h"
#include "runtime/trace_format.h"

namespace ballarus {
namespace trace_test {
namespace {

// The thread as a ring keeps it: events [0, k1) overwritten, then a
// chunk of [k1, k2) after a checkpoint (known or not), then [k2, n) after
// a known one.
ThreadRecords Ring(const Program& p, const std::vector<RunEvent>& run,
                   size_t k1, size_t k2, bool first_known) {
  ThreadRecords t;
  t.tid = 7;
  const uint64_t before = Words(p, run, 0, k1).size();
  const std::vector<uint32_t> a = Words(p, run, k1, k2);
  const std::vector<uint32_t> b = Words(p, run, k2);
  t.records.push_back({kTraceCheckpointKind, 0, before,
                       first_known ? CheckpointWords(p, run[k1].state)
                                   : std::vector<uint32_t>{kTraceUnknownDepth}});
  t.records.push_back({BALLARUS_TRACE_RING, 1, before + a.size(), a});
  t.records.push_back({kTraceCheckpointKind, 2, before + a.size(),
                       CheckpointWords(p, run[k2].state)});
  t.records.push_back(
      {BALLARUS_TRACE_RING, 3, before + a.size() + b.size(), b});
  return t;
}

class TraceThread : public testing::Test {
 protected:
  void SetUp() override {
    program_ = new Program(MakeProgram());
    const std::string profile =
        WriteTestProfile("thread.bprof", {{program_->tu, {}, {}, 1}});
    std::string file, error;
    ASSERT_TRUE(LoadTraceProgram({profile}, &program_p_, &file, &error))
        << error;
  }
  void TearDown() override { delete program_; }
  RegenResult Regen(const ThreadRecords& t, ThreadInput* in) {
    const std::string problem = PrepareThread(program_p_, t, in);
    EXPECT_EQ(problem, "");
    return RegenerateThread(program_p_, *in);
  }
  Program* program_ = nullptr;
  TraceProgram program_p_;
};

// Every pair of chunk boundaries: the regeneration starts at the first
// known checkpoint and gives the run's steps from there, element for
// element; the later checkpoint is checked, and a wrong one is an error
// naming its record.
TEST_F(TraceThread, RingRegeneratesFromTheOldestKnownCheckpoint) {
  const std::vector<RunEvent> run = RunEvents(*program_);
  const std::vector<TraceStep> full = RunSteps();
  size_t cases = 0;
  for (size_t k1 = 1; k1 < run.size(); ++k1)
    for (size_t k2 = k1; k2 < run.size(); ++k2)
      for (bool known : {false, true}) {
        ThreadInput in;
        const RegenResult r = Regen(Ring(*program_, run, k1, k2, known), &in);
        ASSERT_EQ(r.status, RegenStatus::kComplete) << k1 << " " << k2 << r.error;
        const size_t from = known ? k1 : k2;
        EXPECT_EQ(r.steps, std::vector<TraceStep>(full.begin() + run[from].step,
                                                  full.end()))
            << k1 << " " << k2 << " " << known;
        EXPECT_TRUE(in.from_checkpoint);
        EXPECT_EQ(in.words_not_kept, Words(*program_, run, 0, k1).size());
        EXPECT_EQ(in.words_skipped,
                  known ? 0u : Words(*program_, run, k1, k2).size());
        EXPECT_EQ(in.from.checks.size(), known ? 1u : 0u);
        if (!known || run[k2].state.empty()) continue;
        ThreadRecords bad = Ring(*program_, run, k1, k2, true);
        bad.records[2].words[1] ^= 1;  // frame 0's function
        ThreadInput bin;
        ASSERT_EQ(PrepareThread(program_p_, bad, &bin), "");
        const RegenResult e = RegenerateThread(program_p_, bin);
        EXPECT_EQ(e.status, RegenStatus::kError);
        EXPECT_NE(e.error.find("disagrees with the checkpoint of record 2"),
                  std::string::npos) << e.error;
        ++cases;
      }
  EXPECT_GT(cases, 20u);
}

// A fork child's file: the forking thread's CHUNKs start with a
// checkpoint (the child in the call to fork at main's block 2), so the
// child regenerates on its own.
TEST_F(TraceThread, ForkChildStartsAtItsCheckpoint) {
  const std::vector<RunEvent> run = RunEvents(*program_);
  const size_t k = 1;  // kEnter of loop: main in its call at block 2
  ASSERT_EQ(run[k].ev.kind, K::kEnter);
  ThreadRecords t;
  const std::vector<uint32_t> rest = Words(*program_, run, k);
  t.records.push_back({kTraceCheckpointKind, 0, 0,
                       CheckpointWords(*program_, run[k].state)});
  t.records.push_back({BALLARUS_TRACE_CHUNK, 1, rest.size(), rest});
  t.records.push_back({BALLARUS_TRACE_END, 2, rest.size(), {}});
  ThreadInput in;
  const RegenResult r = Regen(t, &in);
  ASSERT_EQ(r.status, RegenStatus::kComplete) << r.error;
  const std::vector<TraceStep> full = RunSteps();
  EXPECT_EQ(r.steps, std::vector<TraceStep>(full.begin() + 2, full.end()));
  EXPECT_EQ(in.words_not_kept, 0u);
}

// Checkpoints and records that do not fit: one line naming the record.
TEST_F(TraceThread, BadCheckpointsNameTheRecord) {
  const std::vector<RunEvent> run = RunEvents(*program_);
  auto problem = [&](ThreadRecords t) {
    ThreadInput in;
    return PrepareThread(program_p_, t, &in);
  };
  ThreadRecords t = Ring(*program_, run, 1, 3, true);
  t.records[2].words.pop_back();
  EXPECT_EQ(problem(t), "record 2: checkpoint: 2 frames in 6 words");
  t = Ring(*program_, run, 1, 3, true);
  t.records[2].words[2] ^= 0x10;  // the stamp
  EXPECT_NE(problem(t).find("record 2: checkpoint: frame 0: function 0 of a "
                            "TU with stamp"), std::string::npos);
  t = Ring(*program_, run, 1, 3, true);
  t.records[2].words[3] = 99;
  EXPECT_EQ(problem(t), "record 2: checkpoint: frame 0: block 99 of main out "
                        "of range");
  t = Ring(*program_, run, 1, 3, true);
  t.records[3].total += 5;  // five words missing between the chunks
  EXPECT_NE(problem(t).find("record 3: starts at word"), std::string::npos);
  t = Ring(*program_, run, 1, 3, true);
  ASSERT_EQ(t.records[1].words.size(), 5u);  // loop's kEnter, a witness
  t.records[1].words.resize(3);  // the kEnter cut inside the record
  EXPECT_EQ(problem(t), "record 1: ends inside an event");
  // Only unknown checkpoints: nothing regenerated, the kept words counted.
  t = Ring(*program_, run, 1, 3, false);
  t.records[2].words = {kTraceUnknownDepth};
  ThreadInput in;
  EXPECT_EQ(PrepareThread(program_p_, t, &in), "");
  EXPECT_FALSE(in.known);
  EXPECT_EQ(in.words_skipped, Words(*program_, run, 1).size());
}

// Damaged records (words changed, dropped or added, totals shifted) are a
// problem or a regeneration; never a crash or an endless walk.
TEST_F(TraceThread, DamagedRecordsNeverCrash) {
  const std::vector<RunEvent> run = RunEvents(*program_);
  std::mt19937 rng(5);
  size_t problems = 0, errors = 0;
  for (int i = 0; i < 3000; ++i) {
    const size_t k1 = 1 + rng() % (run.size() - 1);
    const size_t k2 = k1 + rng() % (run.size() - k1);
    ThreadRecords t = Ring(*program_, run, k1, k2, rng() % 2 == 0);
    for (int changes = 1 + rng() % 3; changes > 0; --changes) {
      TraceRecord& r = t.records[rng() % t.records.size()];
      const uint32_t what = rng() % 4;
      if (what == 0 && !r.words.empty())
        r.words[rng() % r.words.size()] =
            rng() % 2 ? rng() % 8 : static_cast<uint32_t>(rng());
      if (what == 1 && !r.words.empty()) r.words.pop_back();
      if (what == 2) r.words.push_back(rng() % 4);
      if (what == 3) r.total += rng() % 3;
    }
    ThreadInput in;
    if (!PrepareThread(program_p_, t, &in).empty()) {
      ++problems;
      continue;
    }
    if (!in.known) continue;
    const RegenResult r = RegenerateThread(program_p_, in);
    errors += r.status == RegenStatus::kError;
    EXPECT_LE(r.confirmed, r.steps.size());
    EXPECT_LE(r.steps.size(), 1000u);
  }
  EXPECT_GT(problems, 100u);
  EXPECT_GT(errors, 100u);
}

}  // namespace
}  // namespace trace_test
}  // namespace ballarus
