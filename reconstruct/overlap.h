// overlap.h — how much two profiles of one program agree: the overlap
// figure of `llvm-profdata overlap` and `gcov-tool overlap`, over every
// edge of every function's CFG.
//
// Each side's edge counts are normalised by that side's total (the sum of
// all its edge counts over all its functions), so that runs of different
// lengths compare; the overlap is the sum, over the edges both sides know,
// of the smaller of the two normalised counts:
//
//     overlap(A, B) = Σ_e min(a_e / ΣA, b_e / ΣB)
//
// 1 (100%) when every edge carries the same share of its side's total; 0
// when no edge ran in both.  Since both sides' shares add up to 1,
// overlap = 1 - ½ Σ_e |a_e/ΣA - b_e/ΣB|: one minus the total variation
// distance of the two distributions of edge executions.
//
// Per function, the same figure on the function's own counts (normalised
// by the function's totals, as llvm-profdata's function level does), and
// its part of the program figure: its contribution Σ_e min(a_e/ΣA,
// b_e/ΣB) (gcov-tool's function level) and its loss, (share_a + share_b)/2
// - contribution, where share_x is the function's part of side x's total.
// The losses of all functions add up to 1 - overlap, so they say where the
// two profiles disagree, weighted by how much runs there.
//
// A function known to one side only (not compiled in, filtered out, or
// never matched), or whose CFG differs between the sides (the edges do not
// correspond), contributes 0 to the program figure while its counts stay
// in its side's total: it lowers the overlap by its share.  Its own figure
// is 0 when it only ran on one side, and absent when it ran on neither
// side or cannot be compared edge by edge (changed CFG).
//
// Counts are residues modulo 2^64 read as unsigned values (as every other
// report shows them); an edge whose count is unknown (flow solving could
// not derive it) counts as 0 on its side and is counted in `unknown`.
// GCC-free and free of the report model: its input is plain count vectors.
#ifndef BALLARUS_RECONSTRUCT_OVERLAP_H_
#define BALLARUS_RECONSTRUCT_OVERLAP_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "core/flow.h"

namespace ballarus {

// One function on the two sides: its edge counts in A and in B (null:
// the side does not have the function).  `same_cfg`: the two count
// vectors are indexed by the same edges (only then are they compared).
struct OverlapInput {
  const std::vector<Count>* a = nullptr;
  const std::vector<Count>* b = nullptr;
  bool same_cfg = false;
};

struct FunctionOverlap {
  long double total_a = 0, total_b = 0;  // the function's edge counts
  double share_a = 0, share_b = 0;       // of its side's total
  // Σ_e min(a_e/total_a, b_e/total_b); absent when it never ran on either
  // side or is not comparable (see above).
  std::optional<double> overlap;
  double contribution = 0;  // its part of the program figure
  double loss = 0;          // (share_a + share_b) / 2 - contribution
  size_t unknown = 0;       // edges of unknown count, both sides
};

struct ProgramOverlap {
  long double total_a = 0, total_b = 0;
  // Σ over functions of their contributions; absent when neither side ran
  // anything, 0 when only one did.
  std::optional<double> overlap;
  std::vector<FunctionOverlap> functions;  // parallel to the inputs
  size_t unknown = 0;
};

ProgramOverlap ComputeOverlap(const std::vector<OverlapInput>& functions);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_OVERLAP_H_
