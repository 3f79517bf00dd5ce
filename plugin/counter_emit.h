// counter_emit.h — the counter update: the update policy (single, atomic or
// per-thread), the one builder of a counter update that edge counters,
// dense path counts and re-entry counts all use, and which loops need a
// barrier after it.  See counter_emit.cc.
//
// The header of counter emission as a whole: it also brings in the edge
// counters (edge_counters.h), the loop registers (loop_registers.h) and the
// per-thread counters (thread_counters.h).
#ifndef BALLARUS_PLUGIN_COUNTER_EMIT_H_
#define BALLARUS_PLUGIN_COUNTER_EMIT_H_

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// How this compile's counters are updated: update=, or by default what the
// compile asked for (per-thread counters with -pthread or
// -fprofile-update=atomic, else single).
enum class UpdateMode { kSingle, kAtomic, kThread };
UpdateMode ChosenUpdate();
const char* UpdateName(UpdateMode mode);

// Appends `ref += delta` to seq, where ref is an element of a counter array
// (constant or SSA index): the one way ballarus updates a counter.  Between
// BeginThreadCounters and EndThreadCounters (update=thread) an element of
// the TU's counter array is updated in the running thread's copy instead,
// with a plain add, whatever `atomic` says.
//
// in_loop: the update runs on every iteration of a loop.  A plain update
// is then followed by an empty asm that reads and writes the counter (a
// compiler barrier for that counter alone, no instruction): otherwise
// GCC's PRE carries the counter's value from one iteration's store to the
// next iteration's load wherever nothing in the loop may write it, and
// IVOPTs turns the `addq $1, counter` into an induction variable whose
// value is stored on every iteration -- four instructions for one
// (docs/performance.md, loop barrier).
void AppendCounterAdd(gimple_seq* seq, tree ref, tree delta, bool atomic,
                      bool in_loop = false);

// Looks at cfun's loops (before any code is inserted) for what
// RunsPerIteration answers.
void JudgeLoops();

// Whether code on edge e (or in block bb) runs on every iteration of a
// loop of cfun (inside a loop rather than on its entry or exit) that may
// read or write memory a counter may be (a call, a character access...),
// where PRE would otherwise carry a counter's value across iterations.
bool RunsPerIteration(edge e);
bool RunsPerIteration(basic_block bb);

}  // namespace ballarus::plugin

#include "plugin/edge_counters.h"
#include "plugin/loop_registers.h"
#include "plugin/thread_counters.h"

#endif  // BALLARUS_PLUGIN_COUNTER_EMIT_H_
