// loop_register_policy.cc — which loops take loop registers; see
// loop_register_policy.h.
#include "core/loop_register_policy.h"

#include <cstddef>
#include <cstdint>

namespace ballarus {

namespace {

// A loop of more than two blocks takes registers from this many iterations
// per entry.
constexpr int64_t kRegisterMinIterations = 4;
// A loop of two blocks (header and latch: one path per iteration) makes
// one add per iteration in memory anyway, its path's count, which the
// flush does not save: it takes registers only where GCC knows a long trip
// (short loops of this shape are guessed to run about 9 times and may run
// 0 to 2: docs/performance.md, one-path loop flushes) ...
constexpr int64_t kRegisterMinIterationsOnePath = 32;
// ... unless its body is long enough (an unrolled loop, several elements
// per iteration) that one flush weighs little against even one iteration.
constexpr size_t kRegisterLongBodyStatements = 16;
// A tight loop: an iteration of at most this many statements takes a few
// cycles, about what a count's read-modify-write in memory waits for the
// previous iteration's store (docs/performance.md, *Counter chains*).
constexpr size_t kTightLoopStatements = 12;

}  // namespace

int64_t MinRegisterIterations(size_t blocks, size_t statements) {
  return blocks > 2 || statements >= kRegisterLongBodyStatements
             ? kRegisterMinIterations
             : kRegisterMinIterationsOnePath;
}

LoopRegisterVerdict JudgeRegisterLoop(const LoopFacts& loop) {
  if (loop.may_leave) return LoopRegisterVerdict::kMayLeave;
  if (loop.exits == 0) return LoopRegisterVerdict::kNoExit;
  if (!loop.counted_exit) return LoopRegisterVerdict::kNotCounted;
  if (loop.iterations < MinRegisterIterations(loop.blocks, loop.statements))
    return LoopRegisterVerdict::kFewIterations;
  if (loop.tight_only && loop.statements > kTightLoopStatements)
    return LoopRegisterVerdict::kNotTight;
  return LoopRegisterVerdict::kTakes;
}

const char* LoopRegisterVerdictText(LoopRegisterVerdict verdict) {
  switch (verdict) {
    case LoopRegisterVerdict::kTakes:
      return "counters with a fixed address in locals";
    case LoopRegisterVerdict::kMayLeave:
      return "counters in memory (a call, asm, throw or abnormal edge)";
    case LoopRegisterVerdict::kNoExit:
      return "counters in memory (no exit)";
    case LoopRegisterVerdict::kNotCounted:
      return "counters in memory (no exit decided by an induction "
             "variable)";
    case LoopRegisterVerdict::kFewIterations:
      return "counters in memory (few iterations)";
    case LoopRegisterVerdict::kNotTight:
      return "counters in memory (not a tight loop)";
  }
  return "?";
}

}  // namespace ballarus
