// trace_regen.h — the exact block sequence of a thread from its trace
// stream (Ball & Larus TOPLAS'94 Figure 14, with the stack of active
// procedures of §4.2; stream format in trace_plan.h).
//
// Walk: from ENTRY, a block with one flow successor goes there; a predicate
// goes to the successor q whose witness set witness(p, q) — the witnesses
// first met on witness-free paths from p through q — holds the next unread
// witness (the sets of one predicate are disjoint because E - Ewit holds no
// diamond).  Taking a witnessed edge consumes its witness.  At a call block
// the kEnter events of its callees (and the kLand events of longjmps and
// exceptions) whose site is this block and activation are handled before
// the block's successor is chosen; EXIT pops the activation.
//
// A stream without kEnd was cut (ring buffer, fatal signal): the walk
// stops, kTruncated, where a missing event could matter (a call block, a
// branch), so the steps are always a prefix of the execution.  After
// kEnd{d, s} the innermost of the d live activations stops at its call
// block s (the thread ended inside that call: exit, exec).
//
// Never loops: between two consumed events the walk moves only along
// witness-free edges, which form no directed cycle, so more idle steps than
// twice the largest function's block count (+4) is reported as an error.
// Iterative (explicit stack), so deep recursion in the program is fine.
#ifndef BALLARUS_CORE_TRACE_REGEN_H_
#define BALLARUS_CORE_TRACE_REGEN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/trace_plan.h"

namespace ballarus {

// One traced function: its CFG and its plan; both must outlive the call.
struct TracedFunction {
  const Function* fn = nullptr;
  const TracePlan* plan = nullptr;
};

struct TraceStep {
  uint32_t function = 0;  // function id (index into the program)
  uint32_t block = 0;     // ENTRY and EXIT included
  bool operator==(const TraceStep& o) const {
    return function == o.function && block == o.block;
  }
};

enum class RegenStatus {
  kComplete,   // the stream ended with kEnd and fits the CFGs
  kTruncated,  // the stream ended while an activation needed more events
  kError,      // the stream does not fit the CFGs (see `error`)
};

struct RegenResult {
  RegenStatus status = RegenStatus::kComplete;
  std::vector<TraceStep> steps;  // as far as the stream determines them
  size_t events_read = 0;        // events consumed when it stopped
  std::string error;             // kError: what and where
};

// Regenerates a thread's block sequence.  program[id] is the function of
// kEnter{id}.
RegenResult RegenerateTrace(const std::vector<TracedFunction>& program,
                            const std::vector<TraceEvent>& events);

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_REGEN_H_
