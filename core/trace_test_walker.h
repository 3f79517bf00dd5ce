// trace_test_walker.h — random executions of hand-made traced programs
// (core/trace_test_graphs.h) for the regeneration tests: each walk writes
// the block sequence (the reference), the optimised witness stream of the
// given plans and mode=trace-naive's stream, with the thread's state
// before every event.  Test-only (//core:trace_test_walker).
#ifndef BALLARUS_CORE_TRACE_TEST_WALKER_H_
#define BALLARUS_CORE_TRACE_TEST_WALKER_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "core/path_dag.h"
#include "core/trace_plan.h"
#include "core/trace_regen.h"
#include "core/trace_test_graphs.h"

namespace ballarus {
namespace trace_test {

using K = TraceEventKind;

inline std::vector<bool> CallBlocks(const TestFunction& t) {
  std::vector<bool> calls(t.callee.size());
  for (size_t b = 0; b < calls.size(); ++b) calls[b] = t.callee[b] >= 0;
  return calls;
}

struct Walk {
  std::vector<TraceStep> naive;       // the reference block sequence
  std::vector<TraceEvent> optimised;  // the plan's witness stream
  size_t blocks = 0;                  // executed blocks (not ENTRY/EXIT)
  size_t predicate_witnesses = 0;     // branch targets taken
  size_t witnesses = 0;               // kWitness events written
  // mode=trace-naive's stream of the same run: kEnter, kEnd and a block
  // index (as kWitness) at every block but ENTRY.
  std::vector<TraceEvent> naive_events;
  // Per optimised (naive) event: the thread's live activations just before
  // it (trace_regen.h TraceCheckpoint), and naive.size() then.
  std::vector<std::vector<TraceFrame>> states, naive_states;
  std::vector<size_t> step_at, naive_step_at;
  // Whole-program-paths alternative (one path number per Ball–Larus path
  // end): back edges taken, EXITs reached, and call blocks run (a path
  // must end before a call for the callee's numbers to come in order).
  size_t path_ends = 0;
};

// Executes a program by uniform random choices at every predicate, calling
// callees up to `max_depth` live activations (deeper calls stand for
// untraced callees: they write nothing).  Counts edge frequencies too.
class Walker {
 public:
  Walker(const std::vector<TestFunction>& program,
         const std::vector<TracePlan>* plans, uint32_t seed)
      : program_(program), plans_(plans), rng_(seed) {
    for (const TestFunction& t : program) {
      freq_.emplace_back(t.fn.edges.size(), 0);
      back_.emplace_back(t.fn.edges.size(), false);
      for (uint32_t e : FindBackEdges(t.fn)) back_.back()[e] = true;
    }
  }

  Walk Run() {
    Walk w;
    steps_ = 0;
    Activation(0, 0, 0, &w);
    Emit({K::kEnd, 0, 0, 0}, true, true, &w);
    return w;
  }
  const std::vector<std::vector<uint64_t>>& freq() const { return freq_; }

 private:
  static constexpr uint32_t kMaxDepth = 4;
  static constexpr size_t kBudget = 400;

  // Writes an event of both streams (the naive one only for kEnter/kEnd).
  void Emit(const TraceEvent& ev, bool optimised, bool naive, Walk* w) {
    if (optimised) {
      w->states.push_back(frames_);
      w->step_at.push_back(w->naive.size());
      w->optimised.push_back(ev);
    }
    if (naive) {
      w->naive_states.push_back(frames_);
      w->naive_step_at.push_back(w->naive.size());
      w->naive_events.push_back(ev);
    }
  }

  void Activation(uint32_t fid, uint32_t depth, uint32_t site, Walk* w) {
    const Function& f = program_[fid].fn;
    Emit({K::kEnter, fid, depth, site}, true, true, w);
    frames_.push_back({fid, kEntryBlock});
    w->naive.push_back({fid, kEntryBlock});
    uint32_t pc = kEntryBlock;
    while (pc != kExitBlock) {
      const int callee = program_[fid].callee[pc];
      w->path_ends += callee >= 0;
      if (callee >= 0) frames_.back().site = pc;  // stored before the call
      if (callee >= 0 && depth + 1 < kMaxDepth)
        Activation(static_cast<uint32_t>(callee), depth + 1, pc, w);
      std::vector<size_t> succ;
      for (size_t i = 0; i < f.edges.size(); ++i)
        if (f.edges[i].src == pc &&
            (IsTraceFlowEdge(f.edges[i]) || IsDispatchEdge(f, f.edges[i])))
          succ.push_back(i);
      // Past the step budget, the first edge (random CFGs: the chain
      // towards EXIT) so that every walk ends.
      const size_t e =
          ++steps_ > kBudget ? succ[0] : succ[rng_() % succ.size()];
      ++freq_[fid][e];
      w->predicate_witnesses += succ.size() >= 2;
      if (plans_) {
        const int64_t wit = (*plans_)[fid].witness_of_edge[e];
        const int64_t bw = BlockWitness((*plans_)[fid], f.edges[e].dst);
        for (int64_t id : {wit, bw}) {  // the edge's, then the block's
          if (id == kNoWitness) continue;
          Emit({K::kWitness, static_cast<uint32_t>(id), 0}, true, false, w);
          ++w->witnesses;
        }
      }
      pc = f.edges[e].dst;
      Emit({K::kWitness, pc, 0}, false, true, w);
      w->path_ends += back_[fid][e] || pc == kExitBlock;
      w->naive.push_back({fid, pc});
      w->blocks += pc != kExitBlock;
    }
    frames_.pop_back();
  }

  const std::vector<TestFunction>& program_;
  const std::vector<TracePlan>* plans_;
  std::mt19937 rng_;
  std::vector<std::vector<uint64_t>> freq_;
  std::vector<std::vector<bool>> back_;
  std::vector<TraceFrame> frames_;  // live activations, outermost first
  size_t steps_ = 0;
};

// Plans weighted by the edge frequencies of training walks (another seed).
inline std::vector<TracePlan> TrainedPlans(
    const std::vector<TestFunction>& program,
    CallDecision calls = CallDecision::kBlockingWitness) {
  Walker training(program, nullptr, 1234);
  for (int i = 0; i < 50; ++i) training.Run();
  std::vector<TracePlan> plans;
  for (size_t f = 0; f < program.size(); ++f)
    plans.push_back(PlanTrace(program[f].fn, training.freq()[f],
                              CallBlocks(program[f]), calls));
  return plans;
}

inline std::vector<TracedFunction> Traced(const std::vector<TestFunction>& program,
                                   const std::vector<TracePlan>& plans) {
  std::vector<TracedFunction> out;
  for (size_t f = 0; f < program.size(); ++f)
    out.push_back({&program[f].fn, &plans[f]});
  return out;
}

inline std::vector<std::vector<TestFunction>> Programs() {
  std::vector<std::vector<TestFunction>> ps;
  for (const TestFunction& t :
       {IfElse(), WhileLoop(), NestedLoops(), EarlyExitLoop(), MultipleExits(),
        Figure13(), SwitchLoop()})
    ps.push_back({t});
  ps.push_back({CallInLoop(1), IfElse()});
  ps.push_back({CallInLoop(1), CallInLoop(2), NestedLoops()});
  ps.push_back({Recursive(0, 1), EarlyExitLoop()});
  ps.push_back({CallingSelfLoop(1), CallsBelowBranches(2), Figure13()});
  ps.push_back({ComputedGotoLoop(1), IfElse()});
  ps.push_back({TwoDispatchBlocks()});
  ps.push_back({DispatchOrDirect()});
  return ps;
}

}  // namespace trace_test
}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_TEST_WALKER_H_
