// trace_sites_test.cc — regeneration with call blocks decided by the
// events' sites (CallDecision::kSite, core/trace_plan.h): a predicate
// whose branch leads witness-free to a call block is decided by the next
// event when that is one of the call (kEnter, kLand, kEnd), by its site.
// Random walks over the hand-made programs against the walk's own block
// sequence (whole streams, cut streams, from every checkpoint, with a
// stop), and hand-made streams for each kind of deciding event.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/trace_plan.h"
#include "core/trace_regen.h"
#include "core/trace_test_graphs.h"
#include "core/trace_test_walker.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using trace_test::K;
using trace_test::Programs;
using trace_test::Traced;
using trace_test::TrainedPlans;
using trace_test::Walk;
using trace_test::Walker;

constexpr CallDecision kSite = CallDecision::kSite;

std::vector<std::vector<TestFunction>> ProgramsAndRandomOnes() {
  std::vector<std::vector<TestFunction>> ps = Programs();
  std::mt19937 rng(4242);
  for (int g = 0; g < 150; ++g) ps.push_back({RandomCfg(rng)});
  return ps;
}

TEST(TraceSites, RandomWalksRegenerateExactly) {
  size_t site_plans = 0, old_witnesses = 0, witnesses = 0;
  for (const auto& program : ProgramsAndRandomOnes()) {
    const std::vector<TracePlan> plans = TrainedPlans(program, kSite);
    const std::vector<TracePlan> old = TrainedPlans(program);
    for (const TracePlan& p : plans) site_plans += p.calls == kSite;
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 42), old_walker(program, &old, 42);
    for (int i = 0; i < 40; ++i) {
      const Walk w = walker.Run();
      const RegenResult r = RegenerateTrace(traced, w.optimised);
      ASSERT_EQ(r.status, RegenStatus::kComplete)
          << program[0].fn.name << " walk " << i << ": " << r.error;
      ASSERT_EQ(r.steps, w.naive) << program[0].fn.name << " walk " << i;
      EXPECT_EQ(r.events_read, w.optimised.size());
      const Walk o = old_walker.Run();  // the same walk, the old plans
      ASSERT_EQ(o.naive, w.naive);
      witnesses += w.witnesses, old_witnesses += o.witnesses;
    }
  }
  std::printf("witnesses: %zu with sites, %zu with call blockers\n",
              witnesses, old_witnesses);
  EXPECT_GT(site_plans, 0u);
  EXPECT_LT(witnesses, old_witnesses);
}

// Cut before every event: the walk agrees with the run up to where the
// run wrote that event, confirmed up to the step the last event read led
// to.
TEST(TraceSites, CutStreamGivesAPrefix) {
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program, kSite);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 7);
    for (int i = 0; i < 30; ++i) {
      const Walk w = walker.Run();
      for (size_t k = 0; k < w.optimised.size(); ++k) {
        const std::vector<TraceEvent> cut(w.optimised.begin(),
                                          w.optimised.begin() + k);
        const RegenResult r = RegenerateTrace(traced, cut);
        ASSERT_EQ(r.status, RegenStatus::kTruncated) << r.error;
        const size_t common = std::min(w.step_at[k], r.steps.size());
        ASSERT_TRUE(std::equal(r.steps.begin(), r.steps.begin() + common,
                               w.naive.begin())) << k;
        ASSERT_EQ(r.confirmed, k == 0 ? 0 : w.step_at[k - 1] + 1) << k;
      }
    }
  }
}

// From the exact state before every event (a ring chunk's checkpoint),
// with the later states checked: the suffix of the whole regeneration.
TEST(TraceSites, FromEveryCheckpointGivesTheSuffix) {
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program, kSite);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 3);
    for (int i = 0; i < 10; ++i) {
      const Walk w = walker.Run();
      for (size_t k = 0; k < w.optimised.size(); ++k) {
        RegenStart from;
        from.start.frames = w.states[k];
        for (size_t j = k + 1; j < w.optimised.size(); j += 2)
          from.checks.push_back({j - k, w.states[j], "record"});
        const std::vector<TraceEvent> rest(w.optimised.begin() + k,
                                           w.optimised.end());
        const RegenResult r = RegenerateTrace(traced, rest, from);
        ASSERT_EQ(r.status, RegenStatus::kComplete) << k << ": " << r.error;
        ASSERT_EQ(r.steps, std::vector<TraceStep>(w.naive.begin() + w.step_at[k],
                                                  w.naive.end()))
            << program[0].fn.name << " walk " << i << " from " << k;
      }
    }
  }
}

// A thread stopped at naive step n (its block and activations known, as
// from a fault's line or a parked thread's call block): the walk ends
// exactly there, choosing the branches after the last event by the stop.
TEST(TraceSites, StopEndsTheWalkWhereTheThreadStood) {
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program, kSite);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 11);
    for (int i = 0; i < 10; ++i) {
      const Walk w = walker.Run();
      std::vector<TraceFrame> stack;
      size_t k = 0;
      for (size_t n = 0; n < w.naive.size(); ++n) {
        const TraceStep& s = w.naive[n];
        if (s.block == kEntryBlock) stack.push_back({s.function, kEntryBlock});
        stack.back().site = s.block;
        while (k < w.optimised.size() && w.step_at[k] <= n) ++k;
        if (s.block != kExitBlock) {
          RegenStart from;
          from.stop.frames = stack;
          from.stop.blocks = {s.block};
          const std::vector<TraceEvent> cut(w.optimised.begin(),
                                            w.optimised.begin() + k);
          const RegenResult r = RegenerateTrace(traced, cut, from);
          ASSERT_TRUE(r.stopped) << program[0].fn.name << " step " << n;
          ASSERT_EQ(r.steps, std::vector<TraceStep>(w.naive.begin(),
                                                    w.naive.begin() + n + 1));
        }
        if (s.block == kExitBlock) stack.pop_back();
      }
    }
  }
}

// main (function 0): 2 branches to 3 (a call whose callee is untraced)
// -> 5 (calls g) -> 6, or to 4 (a call) -> 6; 6 loops back to 2 or goes
// to 7 -> EXIT.  Weighted so that 4->6 and 6->2 are the chords: 2's out-
// edges carry no witness, 3 and 5 are reached from 2->3, 4 from 2->4.
struct Diamond {
  Function main_fn = Make(8, {{0, 2, 0}, {2, 3, kEdgeTrue},
                              {2, 4, kEdgeFalse}, {3, 5, 0}, {5, 6, 0},
                              {4, 6, 0}, {6, 2, kEdgeTrue},
                              {6, 7, kEdgeFalse}, {7, 1, 0}});
  Function g = Make(3, {{0, 2, 0}, {2, 1, 0}});
  TracePlan pm, pg;
  std::vector<TracedFunction> traced;
  Diamond() {
    main_fn.name = "main";
    g.name = "g";
    const std::vector<bool> calls{false, false, false, true, true, true,
                                  false, false};
    pm = PlanTrace(main_fn, {5, 10, 10, 10, 10, 1, 2, 5, 5}, calls, kSite);
    pg = PlanTrace(g, {}, {false, false, true}, kSite);
    traced = {{&main_fn, &pm}, {&g, &pg}};
  }
  TraceEvent W(size_t edge) const {
    return {K::kWitness, static_cast<uint32_t>(pm.witness_of_edge[edge])};
  }
};

TEST(TraceSites, PlanLeavesTheBranchToTheCallsUnwitnessed) {
  const Diamond d;
  EXPECT_EQ(d.pm.calls, kSite);
  EXPECT_EQ(d.pm.witness_edges, (std::vector<size_t>{5, 6, 7}));
  EXPECT_EQ(d.pm.blocking, (std::vector<size_t>{7}));  // EXIT's
  // The paper's placement blocks 2->3 and 2->4 too.
  const TracePlan old = PlanTrace(
      d.main_fn, {5, 10, 10, 10, 10, 1, 2, 5, 5},
      {false, false, false, true, true, true, false, false});
  EXPECT_EQ(old.calls, CallDecision::kBlockingWitness);
  EXPECT_EQ(old.blocking, (std::vector<size_t>{1, 2, 7}));
}

TEST(TraceSites, CalleesEnterDecidesTheBranch) {
  const Diamond d;
  // 2 -> 3 -> 5 (g) -> 6 -> 2 -> 4 -> 6 -> 7: g's kEnter (site 5) picks
  // 2->3 past the untraced call at 3; then the witness of 4->6 picks 2->4.
  const RegenResult r = RegenerateTrace(
      d.traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 5}, d.W(6), d.W(5),
                 d.W(7), {K::kEnd, 0, 0}});
  ASSERT_EQ(r.status, RegenStatus::kComplete) << r.error;
  EXPECT_EQ(r.steps, (std::vector<TraceStep>{
                         {0, 0}, {0, 2}, {0, 3}, {0, 5}, {1, 0}, {1, 2},
                         {1, 1}, {0, 6}, {0, 2}, {0, 4}, {0, 6}, {0, 7},
                         {0, 1}}));
  // A site no successor reaches witness-free: an error, not a guess.
  const RegenResult bad = RegenerateTrace(
      d.traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 6}});
  EXPECT_EQ(bad.error, "event 1: call block reachable from no successor of "
                       "the branch (in main, block 2)");
}

TEST(TraceSites, EndAndLandingDecideTheBranch) {
  const Diamond d;
  // exit() called (through untraced code) at 4: kEnd{1, site 4}.
  const RegenResult exited =
      RegenerateTrace(d.traced, {{K::kEnter, 0, 0}, {K::kEnd, 0, 1, 4}});
  ASSERT_EQ(exited.status, RegenStatus::kComplete) << exited.error;
  EXPECT_EQ(exited.steps,
            (std::vector<TraceStep>{{0, 0}, {0, 2}, {0, 4}}));
  // main called by top at its setjmp block 2; main longjmps from its call
  // at 3: kLand{top's 2, depth 0, site 3, live 2}.
  const Function top = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 1, 0},
                                {0, 2, kEdgeFake | kEdgeReentry}});
  const TracePlan pt = PlanTrace(top, {}, {false, false, true, false}, kSite);
  const std::vector<TracedFunction> traced{
      {&top, &pt}, {&d.main_fn, &d.pm}, {&d.g, &d.pg}};
  const RegenResult jumped = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kLand, 2, 0, 2, 1}, {K::kEnter, 1, 1, 2},
               {K::kLand, 2, 0, 3, 2}, {K::kEnd, 0, 0}});
  ASSERT_EQ(jumped.status, RegenStatus::kComplete) << jumped.error;
  EXPECT_EQ(jumped.steps,
            (std::vector<TraceStep>{{0, 0}, {0, 2}, {1, 0}, {1, 2}, {1, 3},
                                    {0, 3}, {0, 1}}));
}

TEST(TraceSites, CutStreamStopsAtTheBranchOrAtTheStop) {
  const Diamond d;
  // The thread was in g's call at 5 (parked) when the file was written:
  // no event after main's kEnter.  Without a stop the walk cannot choose
  // at 2; with the stop (main in its call at 5) it goes there.
  const std::vector<TraceEvent> cut{{K::kEnter, 0, 0}};
  const RegenResult plain = RegenerateTrace(d.traced, cut);
  EXPECT_EQ(plain.status, RegenStatus::kTruncated);
  EXPECT_EQ(plain.steps, (std::vector<TraceStep>{{0, 0}, {0, 2}}));
  RegenStart from;
  from.stop.frames = {{0, 5}};
  from.stop.blocks = {5};
  const RegenResult r = RegenerateTrace(d.traced, cut, from);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.steps, (std::vector<TraceStep>{{0, 0}, {0, 2}, {0, 3}, {0, 5}}));
  EXPECT_EQ(r.confirmed, 1u);
}

// while (c) g(); with the back edge 3->2 the chord: 2->3 carries no
// witness.  A witness read at 2 and taken on 3->2 was written after 3's
// call, which therefore wrote nothing: the next call's kEnter (site 3
// again) is not this one's.
TEST(TraceSites, ACallPassedWithAWitnessReadWroteNothing) {
  const TestFunction loop = CallInLoop(1);
  const Function g = Make(3, {{0, 2, 0}, {2, 1, 0}});
  const TracePlan pm =
      PlanTrace(loop.fn, {1, 10, 1, 1, 1}, {false, false, false, true, false},
                kSite);
  const TracePlan pg = PlanTrace(g, {}, {}, kSite);
  ASSERT_EQ(pm.witness_edges, (std::vector<size_t>{2, 3}));
  const std::vector<TracedFunction> traced{{&loop.fn, &pm}, {&g, &pg}};
  const uint32_t back = static_cast<uint32_t>(pm.witness_of_edge[3]);
  const uint32_t out = static_cast<uint32_t>(pm.witness_of_edge[2]);
  // Round 1 calls untraced code, round 2 g.
  const RegenResult r = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kWitness, back}, {K::kEnter, 1, 1, 3},
               {K::kWitness, back}, {K::kWitness, out}, {K::kEnd, 0, 0}});
  ASSERT_EQ(r.status, RegenStatus::kComplete) << r.error;
  EXPECT_EQ(r.steps, (std::vector<TraceStep>{{0, 0}, {0, 2}, {0, 3}, {0, 2},
                                             {0, 3}, {1, 0}, {1, 2}, {1, 1},
                                             {0, 2}, {0, 4}, {0, 1}}));
}

}  // namespace
}  // namespace ballarus
