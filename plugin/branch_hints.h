// branch_hints.h — what the Wu–Larus estimator's branch heuristics
// (estimator/wu_larus.h) need from cfun's GIMPLE: which blocks call and
// store, what each two-way condition compares, and which successors use
// the compared values.
#ifndef BALLARUS_PLUGIN_BRANCH_HINTS_H_
#define BALLARUS_PLUGIN_BRANCH_HINTS_H_

#include <cstddef>
#include <vector>

#include "estimator/wu_larus.h"
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Hints for cfun's n_blocks blocks (the model's numbering is GCC's block
// index) and for the edges gcc_edges (parallel to the model's; nullptr for
// an edge of the model alone).
ballarus::BranchHints ReadBranchHints(size_t n_blocks,
                                      const std::vector<edge>& gcc_edges);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_BRANCH_HINTS_H_
