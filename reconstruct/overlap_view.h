// overlap_view.h — the overlap figure (reconstruct/overlap.h) of two
// loaded sides, as `diff` and `overlap` print it: one program line, and
// the functions by the overlap they lose, in text and in JSON.
#ifndef BALLARUS_RECONSTRUCT_OVERLAP_VIEW_H_
#define BALLARUS_RECONSTRUCT_OVERLAP_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reconstruct/json_writer.h"
#include "reconstruct/overlap.h"
#include "reconstruct/profile_pair.h"

namespace ballarus {

struct OverlapView {
  std::vector<FunctionPair> pairs;
  std::vector<std::vector<Count>> edges_a, edges_b;  // per pair (empty: absent)
  ProgramOverlap figures;  // functions parallel to pairs
  // Pairs that ran on some side, by loss (largest first; ties: file, line,
  // name), cut to --top (0 = all); `listed_of` before the cut.
  std::vector<size_t> listed;
  size_t listed_of = 0;
};

// The figures of the paired functions (PairFunctions).
OverlapView ComputeOverlapView(const Side& A, const Side& B,
                               std::vector<FunctionPair> pairs, uint64_t top);

// "overlap: 79.17% of edge executions in common (...)".
std::string OverlapLine(const OverlapView& v);

// The listed functions' rows under a header line.
void PrintOverlapFunctions(const Side& A, const Side& B, const OverlapView& v);

// {"overlap", "edge_executions_a", "edge_executions_b", "unknown_edges",
//  "functions": [{name, demangled, file, line, overlap, share_a, share_b,
//  contribution, loss, same_cfg, in_a, in_b}]}.
ojson OverlapJson(const Side& A, const Side& B, const OverlapView& v);

// A side as JSON: {"profile", "runs", "test"} (test null: the whole
// profile).
ojson SideJson(const Side& s);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_OVERLAP_VIEW_H_
