// edge_counters.h — which edges of a function get a counter (mode=naive:
// every edge that can hold one; mode=edge: the chords of a maximum
// spanning tree), and the increments on them.  See edge_counters.cc.
#ifndef BALLARUS_PLUGIN_EDGE_COUNTERS_H_
#define BALLARUS_PLUGIN_EDGE_COUNTERS_H_

#include <cstddef>
#include <cstdint>
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

// Chooses cfun's edge counters per mode= (none, naive: every edge that can
// hold one, edge: the chords of a maximum spanning tree under `weights`),
// numbers them from *next_counter on, and records them in fn's edges.  The
// CFG is prepared (cfg_prep.h) and gcc_edges is parallel to fn->edges.
// spanning_tree: the chords of the maximum spanning tree whatever mode=
// (mode=path: a function whose paths its edge counts determine,
// path_plan.h PathWork::from_edges).  `known`: edges whose count is given
// without a counter (the entry edge whose count the callers give,
// entry_calls.h), chords of the tree that need none.  Only gcc_edges of
// countable edges are read: those of the fake edges may be gone.
void PlaceEdgeCounters(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       uint64_t* next_counter, EdgeCounters* out,
                       bool spanning_tree = false,
                       const std::vector<size_t>& known = {});

// Inserts `counters[i] += 1` on each counted edge of cfun and commits those
// edges (with whatever else is queued on them), recording kEdgeSplit in fn
// where an edge had to be split.  Other queued edges are left to the
// caller's gsi_commit_edge_inserts.
void EmitEdgeCounters(const EdgeCounters& work, ballarus::Function* fn,
                      tree counters, bool atomic);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_EDGE_COUNTERS_H_
