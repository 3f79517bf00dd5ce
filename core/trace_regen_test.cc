// trace_regen_test.cc — regeneration (core/trace_regen.cc) against the
// naive trace: random walks over hand-made programs write both the block
// sequence (a witness at every block) and the optimised witness stream; the
// regenerated sequence must equal the walk's, element for element.  Also:
// truncated and corrupted streams, longjmp and exception landings, and the
// witness counts of the three tracing schemes.
#include "core/trace_regen.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/trace_plan.h"
#include "core/trace_test_graphs.h"
#include "core/trace_test_walker.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using trace_test::CallBlocks;
using trace_test::K;
using trace_test::Programs;
using trace_test::Traced;
using trace_test::TrainedPlans;
using trace_test::Walk;
using trace_test::Walker;

struct Counts {
  size_t blocks = 0, predicate = 0, witnesses = 0, path_ends = 0;
  void Add(size_t b, size_t p, size_t w, size_t e) {
    blocks += b, predicate += p, witnesses += w, path_ends += e;
  }
  void Print(const std::string& name) const {
    std::printf("%-18s blocks %6zu  predicate %6zu  witnesses %6zu  "
                "path ends %6zu\n",
                name.c_str(), blocks, predicate, witnesses, path_ends);
  }
};

TEST(TraceRegen, RandomWalksRegenerateExactly) {
  Counts total;
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 42);
    Counts c;
    for (int i = 0; i < 300; ++i) {
      const Walk w = walker.Run();
      const RegenResult r = RegenerateTrace(traced, w.optimised);
      ASSERT_EQ(r.status, RegenStatus::kComplete)
          << program[0].fn.name << " walk " << i << ": " << r.error;
      ASSERT_EQ(r.steps, w.naive) << program[0].fn.name << " walk " << i;
      EXPECT_EQ(r.events_read, w.optimised.size());
      c.Add(w.blocks, w.predicate_witnesses, w.witnesses, w.path_ends);
    }
    // The paper's claim for profile-weighted placement: no more witnesses
    // than predicate tracing, which writes fewer than the naive trace.
    EXPECT_LE(c.witnesses, c.predicate) << program[0].fn.name;
    EXPECT_LE(c.predicate, c.blocks) << program[0].fn.name;
    c.Print(program[0].fn.name);
    total.Add(c.blocks, c.predicate, c.witnesses, c.path_ends);
  }
  total.Print("total");
  EXPECT_LT(total.witnesses, total.predicate);
}

TEST(TraceRegen, RandomGraphsRegenerateExactly) {
  std::mt19937 rng(77);
  for (int g = 0; g < 300; ++g) {
    const std::vector<TestFunction> program{RandomCfg(rng)};
    const std::vector<TracePlan> plans = TrainedPlans(program);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, g);
    for (int i = 0; i < 20; ++i) {
      const Walk w = walker.Run();
      const RegenResult r = RegenerateTrace(traced, w.optimised);
      ASSERT_EQ(r.status, RegenStatus::kComplete) << g << ": " << r.error;
      ASSERT_EQ(r.steps, w.naive) << "graph " << g << " walk " << i;
    }
  }
}

// Leaving block b needs a witness: a branch, or its one edge has one.
bool NeedsWitness(const Function& fn, const TracePlan& plan, uint32_t b) {
  size_t out = 0;
  bool witnessed = false;
  for (size_t e = 0; e < fn.edges.size(); ++e)
    if (fn.edges[e].src == b && IsTraceFlowEdge(fn.edges[e])) {
      ++out;
      witnessed = witnessed || plan.witness_of_edge[e] != kNoWitness;
    }
  return out > 1 || witnessed;
}

TEST(TraceRegen, TruncatedStreamGivesAPrefix) {
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 7);
    for (int i = 0; i < 50; ++i) {
      const Walk w = walker.Run();
      for (size_t k = 0; k < w.optimised.size(); ++k) {
        const std::vector<TraceEvent> cut(w.optimised.begin(),
                                          w.optimised.begin() + k);
        const RegenResult r = RegenerateTrace(traced, cut);
        ASSERT_EQ(r.status, RegenStatus::kTruncated) << r.error;
        // The thread, cut before event k, had run the steps before it:
        // the walk goes on through them (past calls that wrote nothing)
        // unless it needs a witness first, at a branch.
        const size_t ran = w.step_at[k];
        const size_t common = std::min(ran, r.steps.size());
        ASSERT_TRUE(std::equal(r.steps.begin(), r.steps.begin() + common,
                               w.naive.begin())) << k;
        if (r.steps.size() < ran) {
          const TraceStep& last = r.steps.back();
          EXPECT_TRUE(NeedsWitness(program[last.function].fn,
                                   plans[last.function], last.block)) << k;
        }
        // Proven: up to the step the last event read led to (a kEnter's
        // ENTRY, a witness edge's target).
        ASSERT_EQ(r.confirmed, k == 0 ? 0 : w.step_at[k - 1] + 1) << k;
      }
    }
  }
}

// The live activations at each naive step (outermost first; an outer
// one's site is its call block, the innermost's its current block).
std::vector<std::vector<TraceFrame>> StatesAtSteps(
    const std::vector<TraceStep>& naive) {
  std::vector<std::vector<TraceFrame>> out;
  std::vector<TraceFrame> stack;
  for (const TraceStep& s : naive) {
    if (s.block == kEntryBlock) stack.push_back({s.function, kEntryBlock});
    stack.back().site = s.block;
    out.push_back(stack);
    if (s.block == kExitBlock) stack.pop_back();
  }
  return out;
}

TEST(TraceRegen, StopCutsACutStreamWhereTheThreadStood) {
  // A thread that stopped in the block of naive step n (a crash there)
  // wrote the events before it; with the stop (its activations, that
  // block) the walk ends exactly at step n, through branches it chooses
  // by the stop when no event is left.
  size_t cuts = 0, chosen = 0;
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 11);
    for (int i = 0; i < 20; ++i) {
      const Walk w = walker.Run();
      const auto states = StatesAtSteps(w.naive);
      size_t k = 0;  // events written before step n + 1
      for (size_t n = 0; n < w.naive.size(); ++n) {
        while (k < w.optimised.size() && w.step_at[k] <= n) ++k;
        if (w.naive[n].block == kExitBlock) continue;
        RegenStart from;
        from.stop.frames = states[n];
        from.stop.blocks = {w.naive[n].block};
        const std::vector<TraceEvent> cut(w.optimised.begin(),
                                          w.optimised.begin() + k);
        const RegenResult r = RegenerateTrace(traced, cut, from);
        ASSERT_EQ(r.status, RegenStatus::kTruncated) << r.error;
        ASSERT_TRUE(r.stopped) << program[0].fn.name << " walk " << i
                               << " step " << n;
        ASSERT_EQ(r.steps, std::vector<TraceStep>(w.naive.begin(),
                                                  w.naive.begin() + n + 1))
            << program[0].fn.name << " walk " << i << " step " << n;
        const RegenResult plain = RegenerateTrace(traced, cut);
        chosen += plain.steps.size() < r.steps.size();
        ++cuts;
      }
    }
  }
  std::printf("%zu cuts, %zu past a branch chosen by the stop\n", cuts,
              chosen);
  EXPECT_GT(chosen, 0u);
}

TEST(TraceRegen, CorruptedStreamNeverPassesForTheWalk) {
  // A stream is determined by its block sequence, so a changed or dropped
  // event can never regenerate the walk completely.
  std::mt19937 rng(99);
  for (const auto& program : Programs()) {
    const std::vector<TracePlan> plans = TrainedPlans(program);
    const std::vector<TracedFunction> traced = Traced(program, plans);
    Walker walker(program, &plans, 5);
    for (int i = 0; i < 100; ++i) {
      const Walk w = walker.Run();
      std::vector<TraceEvent> bad = w.optimised;
      const size_t at = rng() % bad.size();
      if (i % 3 == 0) {
        bad.erase(bad.begin() + at);
      } else if (i % 3 == 1) {
        bad[at % (bad.size() - 1)].id += 1 + rng() % 3;  // kEnd has no id
      } else {
        bad.insert(bad.begin() + at, TraceEvent{K::kWitness, 0, 0});
      }
      const RegenResult r = RegenerateTrace(traced, bad);
      EXPECT_FALSE(r.status == RegenStatus::kComplete && r.steps == w.naive);
      EXPECT_LE(r.events_read, bad.size());
    }
  }
}

TEST(TraceRegen, ErrorsNameTheProblem) {
  const std::vector<TestFunction> program{IfElse()};
  const std::vector<TracePlan> plans = TrainedPlans(program);
  const std::vector<TracedFunction> traced = Traced(program, plans);
  auto error = [&](std::vector<TraceEvent> ev) {
    const RegenResult r = RegenerateTrace(traced, ev);
    EXPECT_EQ(r.status, RegenStatus::kError);
    return r.error;
  };
  EXPECT_EQ(error({{K::kWitness, 0, 0}}),
            "event 0: expected the start of an outermost activation");
  EXPECT_EQ(error({{K::kEnter, 3, 0}}), "event 0: unknown function id");
  EXPECT_EQ(error({{K::kEnter, 0, 0}, {K::kWitness, 9, 0}}),
            "event 1: witness id out of range (in if_else, block 2)");
  EXPECT_EQ(error({{K::kEnter, 0, 0}, {K::kWitness, 0, 0}, {K::kWitness, 0, 0}}),
            "event 2: expected the start of an outermost activation");
  EXPECT_EQ(error({{K::kEnter, 0, 0}, {K::kWitness, 0, 0}, {K::kEnd, 0, 0},
                   {K::kEnter, 0, 0}}),
            "event 3: events after the thread's end");
  EXPECT_EQ(error({{K::kEnter, 0, 0}, {K::kWitness, 0, 0}, {K::kEnd, 0, 1}}),
            "event 2: the thread ends with another number of live "
            "activations");
  EXPECT_EQ(error({{K::kEnter, 0, 0}, {K::kEnter, 0, 1}}),
            "event 1: expected a witness (in if_else, block 2)");
}

// The suffix of a regeneration from the checkpoint before event k.
RegenResult FromEvent(const std::vector<TracedFunction>& traced,
                      const std::vector<TraceEvent>& events,
                      const std::vector<std::vector<TraceFrame>>& states,
                      size_t k, bool naive, bool with_checks) {
  RegenStart from;
  from.start.frames = states[k];
  if (with_checks)
    for (size_t j = k + 1; j < events.size(); j += 3)
      from.checks.push_back({j - k, states[j], "record " + std::to_string(j)});
  const std::vector<TraceEvent> rest(events.begin() + k, events.end());
  return naive ? RegenerateNaiveTrace(traced, rest, from)
               : RegenerateTrace(traced, rest, from);
}

// Cutting a walk at every event boundary, with the exact stack state
// there: the regeneration from that state is the suffix of the full one,
// element for element, for the optimised and the naive stream, with the
// later states checked on the way.
void ExpectSuffixes(const std::vector<TestFunction>& program, uint32_t seed,
                    int walks, const std::string& name) {
  const std::vector<TracePlan> plans = TrainedPlans(program);
  const std::vector<TracedFunction> traced = Traced(program, plans);
  Walker walker(program, &plans, seed);
  for (int i = 0; i < walks; ++i) {
    const Walk w = walker.Run();
    const RegenResult full = RegenerateTrace(traced, w.optimised);
    ASSERT_EQ(full.steps, w.naive) << name << " walk " << i;
    const RegenResult naive = RegenerateNaiveTrace(traced, w.naive_events);
    ASSERT_EQ(naive.status, RegenStatus::kComplete) << naive.error;
    ASSERT_EQ(naive.steps, w.naive) << name << " walk " << i;
    for (int mode = 0; mode < 2; ++mode) {
      const bool is_naive = mode == 1;
      const auto& events = is_naive ? w.naive_events : w.optimised;
      const auto& states = is_naive ? w.naive_states : w.states;
      const auto& at = is_naive ? w.naive_step_at : w.step_at;
      for (size_t k = 0; k < events.size(); ++k) {
        const RegenResult r =
            FromEvent(traced, events, states, k, is_naive, k % 2 == 0);
        ASSERT_EQ(r.status, RegenStatus::kComplete)
            << name << " walk " << i << " from event " << k << ": " << r.error;
        const std::vector<TraceStep> want(full.steps.begin() + at[k],
                                          full.steps.end());
        ASSERT_EQ(r.steps, want)
            << name << " walk " << i << " naive " << mode << " from " << k;
      }
    }
  }
}

TEST(TraceRegen, FromACheckpointGivesTheSuffix) {
  for (const auto& program : Programs())
    ExpectSuffixes(program, 11, 40, program[0].fn.name);
  std::mt19937 rng(123);
  for (int g = 0; g < 150; ++g)
    ExpectSuffixes({RandomCfg(rng)}, g, 5, "graph " + std::to_string(g));
}

// A later checkpoint that the walk does not pass through is an error
// naming it; so is a starting frame that is not in a call.
TEST(TraceRegen, DisagreeingCheckpointIsAnError) {
  const std::vector<TestFunction> program{CallInLoop(1), CallInLoop(2),
                                          NestedLoops()};
  const std::vector<TracePlan> plans = TrainedPlans(program);
  const std::vector<TracedFunction> traced = Traced(program, plans);
  Walker walker(program, &plans, 3);
  size_t tried = 0;
  for (int i = 0; i < 30; ++i) {
    const Walk w = walker.Run();
    for (size_t k = 1; k < w.optimised.size(); ++k) {
      if (w.states[k].size() < 2) continue;
      for (int change = 0; change < 3; ++change) {
        RegenStart from;
        std::vector<TraceFrame> bad = w.states[k];
        if (change == 0) bad.pop_back();
        if (change == 1) bad[0].site += 1;
        if (change == 2) bad.back().function ^= 1;
        from.checks.push_back({k, bad, "record 7"});
        const RegenResult r = RegenerateTrace(traced, w.optimised, from);
        ASSERT_EQ(r.status, RegenStatus::kError) << k << " " << change;
        EXPECT_NE(r.error.find("disagrees with record 7"), std::string::npos)
            << r.error;
        ++tried;
      }
    }
  }
  EXPECT_GT(tried, 100u);
  // Frame 0 of CallInLoop is in a call only at its call block 3.
  RegenStart from;
  from.start.frames = {{0, 2}};
  const RegenResult r =
      RegenerateTrace(traced, {{K::kEnter, 1, 1, 2}, {K::kEnd, 0, 0}}, from);
  EXPECT_EQ(r.error, "event 0: checkpoint frame 0: site is not a call block");
}

// main: 0 -> 2 (setjmp, then a call of g: a setjmp receiver with an
// ENTRY re-entry edge) -> 3 -> EXIT.  g: if/else whose then-block 3 calls
// longjmp.  setjmp's kLand after both of its returns: the first changes
// nothing, the second resumes main in block 2 after the setjmp (no step),
// where it calls g again.
TEST(TraceRegen, LongjmpLandsInTheCaller) {
  const Function main_fn = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 1, 0},
                                    {0, 2, kEdgeFake | kEdgeReentry}});
  const Function g = IfElse().fn;
  const TracePlan pm = PlanTrace(main_fn, {}, {false, false, true, false});
  const TracePlan pg = PlanTrace(g, {}, {false, false, false, true, false, false});
  ASSERT_EQ(pg.witness_edges, (std::vector<size_t>{1, 2}));
  EXPECT_TRUE(pm.witness_edges.empty());
  const std::vector<TracedFunction> traced{{&main_fn, &pm}, {&g, &pg}};
  const RegenResult r = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kLand, 2, 0, 2, 1}, {K::kEnter, 1, 1, 2},
               {K::kWitness, 0, 0}, {K::kLand, 2, 0, 3, 2}, {K::kEnter, 1, 1, 2},
               {K::kWitness, 1, 0}, {K::kEnd, 0, 0}});
  ASSERT_EQ(r.status, RegenStatus::kComplete) << r.error;
  const std::vector<TraceStep> want{{0, 0}, {0, 2}, {1, 0}, {1, 2}, {1, 3},
                                    {1, 0}, {1, 2}, {1, 4}, {1, 5},
                                    {1, 1}, {0, 3}, {0, 1}};
  EXPECT_EQ(r.steps, want);
  // The naive stream of the same run: after the longjmp's kLand the next
  // word is g's ENTRY (main's block 2 is not entered again).
  const RegenResult n = RegenerateNaiveTrace(
      traced, {{K::kEnter, 0, 0}, {K::kWitness, 2}, {K::kLand, 2, 0, 2, 1},
               {K::kEnter, 1, 1, 2}, {K::kWitness, 2}, {K::kWitness, 3},
               {K::kLand, 2, 0, 3, 2}, {K::kEnter, 1, 1, 2}, {K::kWitness, 2},
               {K::kWitness, 4}, {K::kWitness, 5}, {K::kWitness, 1},
               {K::kWitness, 3}, {K::kWitness, 1}, {K::kEnd, 0, 0}});
  ASSERT_EQ(n.status, RegenStatus::kComplete) << n.error;
  EXPECT_EQ(n.steps, want);
  // setjmp then return: the first return's kLand alone.
  const RegenResult once = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kLand, 2, 0, 2, 1}, {K::kEnd, 0, 0}});
  ASSERT_EQ(once.status, RegenStatus::kComplete) << once.error;
  EXPECT_EQ(once.steps,
            (std::vector<TraceStep>{{0, 0}, {0, 2}, {0, 3}, {0, 1}}));
}

// main: 0 -> 2 (calls g) -> 3 normally, 2 -> 4 on an exception; g throws.
TEST(TraceRegen, ExceptionTakesTheEhEdge) {
  const Function main_fn = Make(5, {{0, 2, 0}, {2, 3, kEdgeFallthru},
                                    {2, 4, kEdgeEh}, {3, 1, 0}, {4, 1, 0}});
  const Function g = Make(3, {{0, 2, 0}, {2, 1, 0}});
  const TracePlan pm = PlanTrace(main_fn, {}, {false, false, true, false, false});
  const TracePlan pg = PlanTrace(g, {}, {false, false, true});
  ASSERT_EQ(pm.witness_edges, (std::vector<size_t>{1, 2}));
  const std::vector<TracedFunction> traced{{&main_fn, &pm}, {&g, &pg}};
  const RegenResult thrown = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 2}, {K::kLand, 4, 0, 2, 2},
               {K::kWitness, 1, 0}, {K::kEnd, 0, 0}});
  ASSERT_EQ(thrown.status, RegenStatus::kComplete) << thrown.error;
  EXPECT_EQ(thrown.steps, (std::vector<TraceStep>{
                              {0, 0}, {0, 2}, {1, 0}, {1, 2}, {0, 4}, {0, 1}}));
  const RegenResult normal = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 2}, {K::kWitness, 0, 0},
               {K::kEnd, 0, 0}});
  ASSERT_EQ(normal.status, RegenStatus::kComplete) << normal.error;
  EXPECT_EQ(normal.steps,
            (std::vector<TraceStep>{
                {0, 0}, {0, 2}, {1, 0}, {1, 2}, {1, 1}, {0, 3}, {0, 1}}));
  // exit() inside g: the thread ends with both activations live.
  const RegenResult exited = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 2}, {K::kEnd, 0, 2, 2}});
  ASSERT_EQ(exited.status, RegenStatus::kComplete) << exited.error;
  EXPECT_EQ(exited.steps,
            (std::vector<TraceStep>{{0, 0}, {0, 2}, {1, 0}, {1, 2}}));
  // Landing in a block no edge or re-entry leads to.
  const RegenResult bad = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 2}, {K::kLand, 3, 1, 2, 2}});
  EXPECT_EQ(bad.status, RegenStatus::kError);
}

// A thread parked in an untraced call after its traced callee returned
// (the stream ends with the callee's last witness): main 0 -> 2 (calls
// g) -> 3 -> 4 (untraced calls) -> 5 (an untraced call in a loop: 5 -> 5,
// 5 -> EXIT).  The walk goes on through g's return and main's call blocks
// to the branch at 5, those steps unconfirmed.
TEST(TraceRegen, CutStreamGoesOnPastCallsThatWroteNothing) {
  const Function main_fn =
      Make(6, {{0, 2, 0}, {2, 3, 0}, {3, 4, 0}, {4, 5, 0},
               {5, 5, kEdgeTrue}, {5, 1, kEdgeFalse}});
  const Function g = IfElse().fn;
  const TracePlan pm =
      PlanTrace(main_fn, {}, {false, false, true, true, true, true});
  const TracePlan pg = PlanTrace(g, {}, std::vector<bool>(6, false));
  ASSERT_EQ(pg.witness_edges, (std::vector<size_t>{1, 2}));
  const std::vector<TracedFunction> traced{{&main_fn, &pm}, {&g, &pg}};
  const RegenResult r = RegenerateTrace(
      traced, {{K::kEnter, 0, 0}, {K::kEnter, 1, 1, 2}, {K::kWitness, 0, 0}});
  ASSERT_EQ(r.status, RegenStatus::kTruncated) << r.error;
  EXPECT_EQ(r.steps, (std::vector<TraceStep>{{0, 0}, {0, 2}, {1, 0}, {1, 2},
                                             {1, 3}, {1, 5}, {1, 1}, {0, 3},
                                             {0, 4}, {0, 5}}));
  EXPECT_EQ(r.confirmed, 5u);  // through g's witnessed block 3
}

// A fork child's stream starts with the state at the fork: main in its
// call of spawn at block 2, spawn in its call of fork at block 2.  spawn
// returns without a witness; the first witness is main's (2 -> 3 or 4),
// not spawn's (it has none).
TEST(TraceRegen, ForkChildStartsInsideTheInnermostCall) {
  const Function main_fn = Make(5, {{0, 2, 0}, {2, 3, kEdgeTrue},
                                    {2, 4, kEdgeFalse}, {3, 1, 0}, {4, 1, 0}});
  Function spawn = Make(4, {{0, 2, 0}, {2, 3, 0}, {3, 1, 0}});
  spawn.name = "spawn";
  const TracePlan pm = PlanTrace(main_fn, {}, {false, false, true, false, false});
  const TracePlan ps = PlanTrace(spawn, {}, {false, false, true, false});
  ASSERT_EQ(pm.witness_edges, (std::vector<size_t>{1, 2}));
  ASSERT_TRUE(ps.witness_edges.empty());
  const std::vector<TracedFunction> traced{{&main_fn, &pm}, {&spawn, &ps}};
  RegenStart from;
  from.start.frames = {{0, 2}, {1, 2}};
  from.start.in_call = true;
  const std::vector<TraceStep> want{{1, 3}, {1, 1}, {0, 4}, {0, 1}};
  const RegenResult r = RegenerateTrace(
      traced, {{K::kWitness, 1, 0}, {K::kEnd, 0, 0}}, from);
  ASSERT_EQ(r.status, RegenStatus::kComplete) << r.error;
  EXPECT_EQ(r.steps, want);
  // The naive stream of the same child: spawn's 3 is checked to follow 2.
  const RegenResult n = RegenerateNaiveTrace(
      traced, {{K::kWitness, 3}, {K::kWitness, 1}, {K::kWitness, 4},
               {K::kWitness, 1}, {K::kEnd, 0, 0}}, from);
  ASSERT_EQ(n.status, RegenStatus::kComplete) << n.error;
  EXPECT_EQ(n.steps, want);
  const RegenResult wrong = RegenerateNaiveTrace(
      traced, {{K::kWitness, 1}, {K::kEnd, 0, 0}}, from);
  EXPECT_EQ(wrong.status, RegenStatus::kError);
  // Read as a ring chunk's state (taken at the witness), the witness
  // would be spawn's: it has none.
  from.start.in_call = false;
  const RegenResult ring = RegenerateTrace(
      traced, {{K::kWitness, 1, 0}, {K::kEnd, 0, 0}}, from);
  EXPECT_EQ(ring.error, "event 0: witness id out of range (in spawn, block 2)");
}

}  // namespace
}  // namespace ballarus
