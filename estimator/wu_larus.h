// wu_larus.h — static edge frequencies by Wu & Larus' evidence combination
// ("Static branch frequency and program profile analysis", MICRO 1994), an
// alternative to HeuristicWeights (estimator.h) for the spanning tree's
// weights.
//
// Every Ball–Larus branch heuristic (PLDI 1993) that applies to a two-way
// branch contributes its measured hit rate; the rates are combined by
// Dempster–Shafer (as GCC's predict.cc combine_predictions_for_bb does), and
// block and edge frequencies follow from the branch probabilities by Wu &
// Larus' propagation (loops innermost first, each header's frequency
// divided by one less its cyclic probability).  wu_larus.cc documents the
// heuristics.  Unlike HeuristicWeights, the result is not an exact flow:
// frequencies are rounded and loops' cyclic probabilities capped.
#ifndef BALLARUS_ESTIMATOR_WU_LARUS_H_
#define BALLARUS_ESTIMATOR_WU_LARUS_H_

#include <cstdint>
#include <vector>

#include "core/model.h"
#include "estimator/estimator.h"

namespace ballarus {

// What the heuristics need to know about a block's code, which the graph
// alone does not tell (the plugin reads it from GIMPLE).
struct BlockHint {
  bool call = false;   // calls a function (not an internal function)
  bool store = false;  // stores to memory
  // For a block ending in a two-way condition (kEdgeTrue / kEdgeFalse
  // successors): which edge the pointer heuristic (a pointer compared for
  // (in)equality) and the opcode heuristic (an integer compared < 0, <= 0,
  // == constant, or a floating-point ==; or their negations) call likelier:
  // +1 the true edge, -1 the false edge, 0 the heuristic does not apply.
  int8_t pointer = 0;
  int8_t opcode = 0;
};

struct BranchHints {
  std::vector<BlockHint> blocks;  // per block; missing blocks: no facts
  // Per edge (parallel to Function::edges): the edge's target uses a value
  // its source's condition compares before defining it (guard heuristic).
  std::vector<bool> guard_use;
};

// The Ball–Larus heuristics with Wu & Larus' hit rates, in their order.
enum class Heuristic {
  kLoopBranch,  // 0.88: a back edge is taken
  kPointer,     // 0.60: pointers compare unequal
  kCall,        // 0.78: a successor that calls (not post-dominating) is not
  kOpcode,      // 0.84: < 0, <= 0, == constant, floating == fail
  kLoopExit,    // 0.80: an edge leaving the loop is not taken
  kReturn,      // 0.72: a successor that returns is not taken
  kStore,       // 0.55: a successor that stores (not post-dominating) is not
  kLoopHeader,  // 0.75: a successor that is (or leads straight to) a loop
                // header, not post-dominating, is taken
  kGuard,       // 0.62: a successor that uses the compared value, not
                // post-dominating, is taken
};
inline constexpr int kHeuristicCount = 9;
double HitRate(Heuristic h);
const char* HeuristicName(Heuristic h);  // "loop-branch", ...

// Dempster–Shafer combination of two independent probabilities that the
// same edge is taken: p q / (p q + (1-p)(1-q)).
double CombineEvidence(double p, double q);

// Per edge (parallel to fn.edges), the probability that its source leaves
// by it.  Two-way branches (exactly two ordinary successors) get the
// combined heuristics; other blocks split evenly over their ordinary
// successors; fake, EH, abnormal and ignored edges get 0 unless they are the
// only way out.
std::vector<double> WuLarusProbabilities(const Function& fn,
                                         const BranchHints& hints);

// Per block, the heuristics that apply to it (none unless it is a two-way
// branch), in the order above, each with the edge (index into fn.edges) it
// calls likelier.  For tests and the pass dump.
struct AppliedHeuristic {
  Heuristic heuristic;
  size_t likelier_edge;
};
std::vector<std::vector<AppliedHeuristic>> AppliedHeuristics(
    const Function& fn, const BranchHints& hints);

// Edge weights for the spanning tree: each edge's estimated frequency per
// function activation times kActivationWeight, rounded, at least 1 on every
// edge that is not kEdgeIgnored; virtual_edge is kActivationWeight; `extra`
// is empty.  Functions with fewer than 2 blocks get all zeros.
Weights WuLarusWeights(const Function& fn, const BranchHints& hints);

}  // namespace ballarus

#endif  // BALLARUS_ESTIMATOR_WU_LARUS_H_
