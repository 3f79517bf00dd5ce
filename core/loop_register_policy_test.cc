// loop_register_policy_test.cc — which loops take loop registers
// (core/loop_register_policy.h), on loops described by hand.
#include "core/loop_register_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace ballarus {
namespace {

// A loop that takes registers: three blocks, one exit decided by an
// induction variable, 10 iterations per entry.
LoopFacts CountedLoop() {
  LoopFacts loop;
  loop.exits = 1;
  loop.counted_exit = true;
  loop.blocks = 3;
  loop.iterations = 10;
  return loop;
}

TEST(LoopRegisterPolicy, CountedLoopTakesRegisters) {
  EXPECT_EQ(JudgeRegisterLoop(CountedLoop()), LoopRegisterVerdict::kTakes);
}

TEST(LoopRegisterPolicy, EachConditionRefuses) {
  LoopFacts leaves = CountedLoop();
  leaves.may_leave = true;
  EXPECT_EQ(JudgeRegisterLoop(leaves), LoopRegisterVerdict::kMayLeave);

  LoopFacts endless = CountedLoop();
  endless.exits = 0;
  EXPECT_EQ(JudgeRegisterLoop(endless), LoopRegisterVerdict::kNoExit);

  LoopFacts uncounted = CountedLoop();
  uncounted.counted_exit = false;
  EXPECT_EQ(JudgeRegisterLoop(uncounted), LoopRegisterVerdict::kNotCounted);

  LoopFacts short_trip = CountedLoop();
  short_trip.iterations = 3;
  EXPECT_EQ(JudgeRegisterLoop(short_trip),
            LoopRegisterVerdict::kFewIterations);

  LoopFacts unknown = CountedLoop();
  unknown.iterations = -1;  // no estimate
  EXPECT_EQ(JudgeRegisterLoop(unknown), LoopRegisterVerdict::kFewIterations);
}

// A loop that may leave is refused for that, whatever else holds: the
// dump names the first reason.
TEST(LoopRegisterPolicy, FirstReasonWins) {
  LoopFacts loop;
  loop.may_leave = true;
  loop.blocks = 2;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kMayLeave);
  loop.may_leave = false;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kNoExit);
  loop.exits = 2;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kNotCounted);
}

TEST(LoopRegisterPolicy, IterationThresholds) {
  // More than two blocks: from 4 iterations.
  LoopFacts loop = CountedLoop();
  loop.iterations = 4;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kTakes);
  loop.iterations = 3;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kFewIterations);

  // Two blocks, a short body: from 32.
  loop.blocks = 2;
  loop.statements = 15;
  loop.iterations = 31;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kFewIterations);
  loop.iterations = 32;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kTakes);

  // Two blocks, a long body (16 statements or more): from 4 again.
  loop.statements = 16;
  loop.iterations = 4;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kTakes);
  loop.iterations = 3;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kFewIterations);

  EXPECT_EQ(MinRegisterIterations(1, 0), 32);
  EXPECT_EQ(MinRegisterIterations(3, 0), 4);
  EXPECT_EQ(MinRegisterIterations(2, 16), 4);
}

TEST(LoopRegisterPolicy, DumpWords) {
  EXPECT_EQ(std::string(LoopRegisterVerdictText(LoopRegisterVerdict::kTakes)),
            "counters with a fixed address in locals");
  EXPECT_EQ(
      std::string(LoopRegisterVerdictText(LoopRegisterVerdict::kNoExit)),
      "counters in memory (no exit)");
  EXPECT_EQ(std::string(LoopRegisterVerdictText(
                LoopRegisterVerdict::kFewIterations)),
            "counters in memory (few iterations)");
}

// Edge mode's default takes only tight loops: at most 12 statements in
// the whole body, however many blocks; a longer body, or any body without
// the restriction, is judged as before.
TEST(LoopRegisterPolicy, TightOnlyRefusesLongerBodies) {
  LoopFacts loop = CountedLoop();
  loop.tight_only = true;
  loop.statements = 12;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kTakes);
  loop.statements = 13;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kNotTight);
  EXPECT_EQ(std::string(LoopRegisterVerdictText(JudgeRegisterLoop(loop))),
            "counters in memory (not a tight loop)");
  loop.tight_only = false;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kTakes);
  // The other conditions come first.
  loop.tight_only = true;
  loop.iterations = 2;
  EXPECT_EQ(JudgeRegisterLoop(loop), LoopRegisterVerdict::kFewIterations);
}

}  // namespace
}  // namespace ballarus
