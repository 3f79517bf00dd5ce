// trace_regen.h — the exact block sequence of a thread from its trace
// stream (Ball & Larus TOPLAS'94 Figure 14, with the stack of active
// procedures of §4.2; stream format in trace_plan.h).
//
// Walk: from ENTRY, a block with one flow successor goes there; a predicate
// goes to the successor q whose witness set witness(p, q) — the witnesses
// first met on witness-free paths from p through q — holds the next unread
// witness (the sets of one predicate are disjoint because E - Ewit holds no
// diamond).  Taking a witnessed edge consumes its witness.  With a plan
// whose calls are decided by sites (CallDecision::kSite), a predicate whose
// next event is one of a call this activation makes (kEnter, kLand, kEnd)
// goes to the successor that reaches the event's site without a witness
// (unique for the same reason), and reads nothing yet.  At a call block
// the kEnter events of its callees (and the kLand events of longjmps and
// exceptions) whose site is this block and activation are handled before
// the block's successor is chosen, unless a witness read at a branch is
// still to be taken (it was written after the call: the call wrote
// nothing); EXIT pops the activation.
//
// A stream without kEnd was cut (ring buffer, fatal signal, a thread still
// running when the file was written): its end is where the thread stood
// then, so no traced code ran after its last event.  The walk goes on
// past call blocks (their calls ran untraced code only, or are still
// running) and returns of activations, and stops, kTruncated, at the first
// branch (it would need a witness) or when no activation is left.  The
// steps up to the last event's are the execution's (RegenResult::
// confirmed); the thread stopped somewhere among the later ones, unless
// the trace file says where (RegenStart::stop: the walk ends there).  After
// kEnd{d, s} the innermost of the d live activations stops at its call
// block s (the thread ended inside that call: exit, exec).
//
// Regeneration may start from a checkpoint (RegenStart: the live
// activations and their call blocks at the first event, e.g. at the start
// of a ring buffer's chunk or of a fork child's stream) and verify later
// checkpoints on the way.  RegenerateNaiveTrace reads a mode=trace-naive
// stream (block indices instead of witnesses) with a stack alone: the
// reference that regeneration must reproduce.
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
  // steps[0, confirmed) are proven by events: up to the step the last
  // event read produced.  Later steps follow from the CFG alone; a cut
  // stream's thread (a crash, a thread parked in an untraced call) stopped
  // somewhere among them.
  size_t confirmed = 0;
  bool stopped = false;  // the walk ended at RegenStart::stop
  std::string error;     // kError: what and where
};

// A live traced activation: its function id and its call block.
struct TraceFrame {
  uint32_t function = 0;
  uint32_t site = 0;
  bool operator==(const TraceFrame& o) const {
    return function == o.function && site == o.site;
  }
};

// A thread's state before one of its events (a checkpoint of the trace
// file): the live traced activations, outermost first.  Every frame but
// the innermost is in the call at its block `site`.  The innermost: if the
// event is a witness and the state was taken at that event (a ring chunk's
// start), it is about to take that witness's edge; otherwise it is in the
// call at its site (the event is a kEnter, kLand or kEnd of that call, or,
// for a state taken earlier inside that call, any event: a fork child's
// start, whose first witness may be an outer activation's after the
// innermost returned without one).
struct TraceCheckpoint {
  size_t event = 0;  // index of the event the state precedes
  std::vector<TraceFrame> frames;
  std::string name;  // how an error names it ("record 4")
  bool in_call = false;  // taken inside the innermost's call (at a fork)
};

// Where a cut stream's thread stood when it was written (the trace
// file's POSITION; for the thread that crashed, the blocks holding the
// faulting instruction's line): after the last event the walk stops at the
// first state whose live activations are `frames` (their functions, and
// the sites of all but the innermost) with the innermost at one of
// `blocks` and no witness read for its branch.  On the way, at a branch
// with no event left, it takes the one successor from which such a block
// (or, in an activation deeper than the stop's, EXIT) is reached without
// passing a witness, if exactly one is; else it stops there as without a
// stop.  Empty frames: no stop.
struct TraceStop {
  std::vector<TraceFrame> frames;
  std::vector<uint32_t> blocks;
};

// Where a regeneration starts: empty frames = the thread's start.  From a
// checkpoint (start.event must be 0) nothing before it is shown: the first
// step is the witness edge's target (unless start.in_call), or the first
// event's callee's ENTRY, or the block after the innermost's call.
// `checks` (ascending events) are later checkpoints the walk must agree
// with: the number of live activations, their functions, and the sites of
// all but the innermost (whose last call block a witness event does not
// determine); otherwise an error names the check.
struct RegenStart {
  TraceCheckpoint start;
  std::vector<TraceCheckpoint> checks;
  TraceStop stop;  // witness streams only
};

// Regenerates a thread's block sequence.  program[id] is the function of
// kEnter{id}.
RegenResult RegenerateTrace(const std::vector<TracedFunction>& program,
                            const std::vector<TraceEvent>& events,
                            const RegenStart& from = {});

// The block sequence of a mode=trace-naive stream, whose kWitness ids are
// block indices: kEnter pushes (its ENTRY is a step), a block index is a
// step of the innermost activation and EXIT (1) pops it, kLand abandons
// the activations deeper than its depth.  Each step must follow a flow
// edge of the function (or a landing).  Same statuses, start and checks.
RegenResult RegenerateNaiveTrace(const std::vector<TracedFunction>& program,
                                 const std::vector<TraceEvent>& events,
                                 const RegenStart& from = {});

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_REGEN_H_
