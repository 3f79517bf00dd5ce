// counter_emit.h — edge counters: which edges get one, and the one builder
// of every counter update (edge counters and dense path counts), single,
// atomic or per-thread.  See counter_emit.cc.
#ifndef BALLARUS_PLUGIN_COUNTER_EMIT_H_
#define BALLARUS_PLUGIN_COUNTER_EMIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// One function's edge counters, chosen in the analysis phase and emitted in
// the instrumentation phase.
struct EdgeCounters {
  // Edges that get a counter, with the counter index; in model edge order.
  std::vector<std::pair<edge, uint64_t>> counted;
  std::vector<size_t> counted_model_edge;  // parallel to `counted`
};

// How this compile's counters are updated: update=, or by default what the
// compile asked for (per-thread counters with -pthread or
// -fprofile-update=atomic, else single).
enum class UpdateMode { kSingle, kAtomic, kThread };
UpdateMode ChosenUpdate();
const char* UpdateName(UpdateMode mode);

// Chooses cfun's edge counters per mode= (none, naive: every edge that can
// hold one, edge: the chords of a maximum spanning tree under `weights`),
// numbers them from *next_counter on, and records them in fn's edges.  The
// CFG is prepared (cfg_prep.h) and gcc_edges is parallel to fn->edges.
// spanning_tree: the chords of the maximum spanning tree whatever mode=
// (mode=path: a function whose paths its edge counts determine,
// path_plan.h PathWork::from_edges).
void PlaceEdgeCounters(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       uint64_t* next_counter, EdgeCounters* out,
                       bool spanning_tree = false);

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
// (lstring.c's hash loop, bench/README.md).
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

// Loop registers (loop-registers).  A natural loop of cfun with no call
// (but internal ones, const or pure functions and builtins that cannot
// throw), no asm, no
// statement that may throw and no abnormal or EH edge, whose exit is
// decided by an induction variable and that GCC's estimate runs at least
// a few times per entry, cannot be left in the middle of an
// iteration but by a fatal signal: the counters with a fixed address that
// its edges and blocks update can be counted in locals instead -- one per
// counter, which GCC keeps in a register -- and added to the counters on
// each of its exits.  That is what GCC's LIM does for gcov's counters
// (DECL_NONALIASED) and cannot do for ours, which escape (the runtime
// registers them, path registers point into them): any store through a
// pointer in the loop may alias them, so each iteration's update stays a
// read-modify-write of memory, a dependency chain through the store
// buffer that costs bzip2's sorting loops more time than instructions.
//
// Per function: BeginLoopRegisters (before any code is inserted; at -O1
// and up) finds the loops; RegisterLoopOf names the loop (its header's
// index) whose locals an update on e or in bb may use (-1: none);
// AppendRegisterAdd appends `local += delta` for counter `index` of that
// loop (NewRegisterPair: two locals with a flush of their own);
// EndLoopRegisters queues `local = 0` at the function's entry and
// `counters[index] += local; local = 0` on the loop's exits, to be
// committed with the other edge code.
//
// FindRegisterLoops is the analysis alone (path planning asks it where a
// path end may go onto edges that need splitting: path_plan.cc), its
// exits valid until the CFG changes; LoopRegistersWanted, whether this
// compilation uses loop registers at all.
struct RegisterLoops {
  std::map<int, int> loop_of;              // block index -> header index
  std::map<int, std::vector<edge>> exits;  // per header index
  int Of(edge e) const;  // -1 unless both ends are in one such loop
  int Of(basic_block bb) const;
};
bool LoopRegistersWanted(bool atomic, bool per_thread);
RegisterLoops FindRegisterLoops(bool dump);
void BeginLoopRegisters(bool enabled);
int RegisterLoopOf(edge e);
int RegisterLoopOf(basic_block bb);
void AppendRegisterAdd(gimple_seq* seq, int loop, tree counters,
                       uint64_t index, tree delta);
// Two locals of `loop` (zeroed with the others) that the code in the loop
// updates itself; on each of the loop's exits `flush(seq, sum, cnt)`
// appends the code that adds what they hold to the counters (sum and cnt:
// their values there), after which both are zeroed.
struct RegisterPair {
  tree sum = NULL_TREE;
  tree cnt = NULL_TREE;
};
RegisterPair NewRegisterPair(
    int loop, std::function<void(gimple_seq*, tree, tree)> flush);
void EndLoopRegisters(tree counters);

// update=thread, once per TU before any function is instrumented: moves
// the TU's counter array into section BALLARUS_THREAD_SECTION (zero-filled,
// no file space), defines the TU's thread pointer __ballarus_tc and its
// entry in the module's table (BALLARUS_TC_TABLE_SECTION), and declares the
// runtime's __ballarus_tc_register.
void PrepareThreadCounters(tree counters);

// update=thread, per function (cfun): from Begin on, AppendCounterAdd
// addresses the thread's copy of the counters through the TU's thread
// pointer, which End loads at the function's entry (with a registration
// check where a thread can enter the TU from uninstrumented code).  End
// emits nothing when no counter was updated.  Call End after every counter
// update is committed.
void BeginThreadCounters();
void EndThreadCounters();
// Between BeginThreadCounters and EndThreadCounters: counter updates go to
// the thread's copy.
bool ThreadCountersActive();

// Inserts `counters[i] += 1` on each counted edge of cfun and commits those
// edges (with whatever else is queued on them), recording kEdgeSplit in fn
// where an edge had to be split.  Other queued edges are left to the
// caller's gsi_commit_edge_inserts.
void EmitEdgeCounters(const EdgeCounters& work, ballarus::Function* fn,
                      tree counters, bool atomic);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_COUNTER_EMIT_H_
