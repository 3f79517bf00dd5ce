// estimator.h — static edge-frequency estimates for a Function, to weight
// the maximum spanning tree of optimal edge profiling (core/spanning_tree.h).
//
// HeuristicWeights is the Ball–Larus heuristic (TOPLAS'94 §5) with the fixes
// real CFGs need (Neustifter 2010, §4.2–4.3); estimator.cc documents the
// algorithm.  Its weights are an exact integer flow: at every block the
// in-weights equal the out-weights, counting the virtual edge EXIT->ENTRY
// and the estimator's own virtual edges (`extra`), and every edge that is
// not kEdgeIgnored weighs at least 1.
#ifndef BALLARUS_ESTIMATOR_ESTIMATOR_H_
#define BALLARUS_ESTIMATOR_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "core/model.h"

namespace ballarus {

// Iterations assumed per loop entry (Ball & Larus' LOOP_MULTIPLIER).
inline constexpr uint64_t kLoopMultiplier = 10;
// Weight of one function activation (the virtual edge, before the minimal
// weights are added): lcm(1..16), so splits up to 16 ways are exact.
inline constexpr uint64_t kActivationWeight = 720720;
// Loops nested deeper than this are not multiplied any more (assumed to
// iterate once per entry): 720720 * 10^12 * (lap factor) stays far below
// 2^64.  See estimator.cc for the overflow fall-backs.
inline constexpr int kMaxMultipliedLoopDepth = 12;

// An edge the estimator added to make the flow possible; it is not in the
// model and gets no counter.  Either a nominal exit src->EXIT from a region
// that can never reach EXIT (an infinite loop without even a fake exit
// edge, or a dead end), or a nominal entry ENTRY->dst into a region
// unreachable from ENTRY.  Both are absent from every CFG GCC prepares for
// profiling (it adds fake edges for these cases), so `extra` is normally
// empty.
struct ExtraEdge {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint64_t weight = 0;
};

struct Weights {
  std::vector<uint64_t> edges;  // parallel to Function::edges; 0 if ignored
  uint64_t virtual_edge = 0;    // EXIT->ENTRY
  std::vector<ExtraEdge> extra;
};

// The Ball–Larus heuristic weighting (see estimator.cc).  Deterministic.
// Every non-ignored edge (with endpoints inside the function) gets >= 1;
// conservation holds exactly at every block (ConservationViolations is
// empty).  Functions with fewer than 2 blocks get all zeros.
Weights HeuristicWeights(const Function& fn);

// Every non-ignored edge weighs 1, the virtual edge too (so the spanning
// tree is decided by the tie-breaks alone).  Not a flow in general.
Weights UniformWeights(const Function& fn);

// Blocks where the sum of in-weights differs from the sum of out-weights,
// in block order; ignored edges (and edges with endpoints outside the
// function) take no part; the virtual edge and `w.extra` do.
std::vector<uint32_t> ConservationViolations(const Function& fn,
                                             const Weights& w);

}  // namespace ballarus

#endif  // BALLARUS_ESTIMATOR_ESTIMATOR_H_
