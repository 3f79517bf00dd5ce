// reentry.h — re-entries gcov's graph does not show, made part of the model
// so that every profile is a circulation (see reentry.cc).
#ifndef BALLARUS_PLUGIN_REENTRY_H_
#define BALLARUS_PLUGIN_REENTRY_H_

#include <cstddef>
#include <set>
#include <vector>

#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// The callees after whose return an activation may go on with its earlier
// counts gone: fork() (in the child, whose counters the runtime zeroes),
// functions that fork and return in the child (daemon, forkpty), the
// counter resets (__ballarus_reset, __gcov_reset), and every function of
// this translation unit that calls one of these, directly or through other
// functions of the TU.
class ReentryCallees {
 public:
  // Scans the TU's function bodies (call once, before the analysis).
  void Compute();
  // Whether `call` (a GIMPLE call) is a call to such a callee.
  bool MayReenter(const gimple* call) const;

 private:
  std::set<tree> in_tu_;  // FUNCTION_DECLs; only looked up, never iterated
};

// A call ending its block after which the activation may go on as a
// re-entry, with its model edge ENTRY->block (kEdgeReentry).
struct ReentryCall {
  basic_block block = nullptr;
  gimple* call = nullptr;
  size_t model_edge = 0;
  tree epoch_before = NULL_TREE;  // set by EmitEpochReads
};

// Adds cfun's model-only re-entry edges to fn, right after ENTRY's
// successors, with NULL in gcc_edges (parallel to fn->edges):
//   * ENTRY->B, kEdgeFake | kEdgeReentry, for every block B entered both
//     from ENTRY and by abnormal edges (a setjmp or vfork in the function's
//     first block), to which gcov's preparation gives no fake ENTRY edge;
//   * ENTRY->B, kEdgeReentry, for every block B ending with a call to a
//     ReentryCallees callee that has a fake EXIT edge; `calls` lists them.
// Call after the model's edges are recorded and before anything numbers
// them (IgnoreUncountableCycles, weights, counters).
void AddReentryEdges(ballarus::Function* fn, std::vector<edge>* gcc_edges,
                     const ReentryCallees& callees,
                     std::vector<ReentryCall>* calls);

// The runtime's epoch (extern, hidden, volatile), bumped in a forked child
// and by every counter reset: a new declaration (call once per TU).
tree EpochDecl();

// Reads the epoch right before each call of `calls` that needs it: a
// counted re-entry edge (its edge has a counter in fn) or path profiling.
void EmitEpochReads(const ballarus::Function& fn, bool paths, tree epoch,
                    std::vector<ReentryCall>* calls);

// Appends `changed = (epoch != c.epoch_before)` to seq and returns that
// boolean SSA name: the call returned into a new epoch, i.e. as a re-entry.
tree AppendEpochChanged(gimple_seq* seq, const ReentryCall& c, tree epoch);

// Queues `counters[k] += changed` on every normal and EH successor edge of
// each call's block whose re-entry edge has counter k.
void QueueReentryCounts(const std::vector<ReentryCall>& calls,
                        const ballarus::Function& fn, tree counters,
                        tree epoch, bool atomic);

// A call's successor edges that can hold code: not fake, not abnormal.
std::vector<edge> CodeSuccessors(basic_block bb);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_REENTRY_H_
