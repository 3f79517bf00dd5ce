// loop_register_policy.h — whether a loop takes loop registers
// (plugin/loop_registers.h): its counters with a fixed address counted in
// locals inside the loop and added to memory on each of its exits.  The
// plugin gathers what it knows of the loop from GIMPLE; the choice itself
// is here, GCC-free, so that its thresholds are tested apart.
#ifndef BALLARUS_CORE_LOOP_REGISTER_POLICY_H_
#define BALLARUS_CORE_LOOP_REGISTER_POLICY_H_

#include <cstddef>
#include <cstdint>

namespace ballarus {

// What the plugin knows of a natural loop.
struct LoopFacts {
  // A block of the loop may leave an iteration other than by its edges (a
  // call that may not return or may touch counters, an asm, a statement
  // that may throw, an abnormal or EH edge).
  bool may_leave = false;
  size_t exits = 0;           // edges out of the loop
  bool counted_exit = false;  // an exit decided by an induction variable
  size_t blocks = 0;          // blocks of the loop, header included
  // Non-debug statements of the loop's blocks.
  size_t statements = 0;
  // GCC's estimate of the iterations per entry (guessed or read); -1 when
  // GCC has none.
  int64_t iterations = -1;
  // Only a tight loop takes registers (edge mode's default, where they
  // save no instruction, only the wait of each iteration's count for the
  // previous one's store).
  bool tight_only = false;
};

enum class LoopRegisterVerdict {
  kTakes,          // counters with a fixed address in locals
  kMayLeave,       // counters in memory: a call, asm, throw or abnormal edge
  kNoExit,         // counters in memory: the loop has no exit
  kNotCounted,     // counters in memory: no exit decided by an induction
                   // variable, so GCC's estimate is not to be trusted
  kFewIterations,  // counters in memory: the flush would cost more than
                   // the locals save
  kNotTight,       // counters in memory: tight loops only, and this one's
                   // iterations are long enough to hide the counts' stores
};

// GCC's estimate of a loop's iterations per entry from which the locals'
// flush on exit (an add to memory per counter) is worth it.
int64_t MinRegisterIterations(size_t blocks, size_t statements);

LoopRegisterVerdict JudgeRegisterLoop(const LoopFacts& loop);

// The verdict as the pass dump words it.
const char* LoopRegisterVerdictText(LoopRegisterVerdict verdict);

}  // namespace ballarus

#endif  // BALLARUS_CORE_LOOP_REGISTER_POLICY_H_
