// flow.h — derive every edge and block count of a function from the counted
// edges, by flow conservation, and check conservation.
//
// The graph is the function's CFG closed by the virtual edge EXIT->ENTRY
// (model.h); edges flagged kEdgeIgnored take no part.  Knowing some edge
// counts, repeatedly pick a vertex with exactly one unknown incident edge
// and solve that edge from Kirchhoff's law (in-flow = out-flow) — Ball &
// Larus, "Optimally profiling and tracing programs", TOPLAS 16(4) 1994,
// Fig. 6; Knuth & Stevenson 1973.  If the known edges are the chords of a
// spanning tree of the closed graph, every edge is determined; with a
// counter on every countable edge (naive mode) only the fake/EH edges are
// derived and every block is an independent consistency check.  Edge mode
// (counters on chords only) uses the same solver unchanged.
#ifndef BALLARUS_CORE_FLOW_H_
#define BALLARUS_CORE_FLOW_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model.h"

namespace ballarus {

// Index used for the virtual EXIT->ENTRY edge in FlowIssue::edge.
inline constexpr size_t kVirtualEdge = static_cast<size_t>(-1);

using Count = std::optional<uint64_t>;

struct FlowIssue {
  enum Kind {
    kImbalance,  // every incident edge known but in_sum != out_sum
    kNegative,   // solving `edge` at `block` would need a negative count
    kUnknown,    // `edge` (not ignored) could not be determined
  };
  Kind kind = kImbalance;
  uint32_t block = 0;
  size_t edge = 0;       // kNegative/kUnknown: index into Function::edges or
                         // kVirtualEdge
  uint64_t in_sum = 0;   // kImbalance/kNegative: sums of the known incident
  uint64_t out_sum = 0;  // edges (virtual edge included; saturating)
};

struct FlowResult {
  std::vector<Count> edges;   // parallel to Function::edges
  std::vector<Count> blocks;  // parallel to Function::blocks
  Count virtual_edge;         // EXIT->ENTRY: activations that ended
  // Negative derivations met while solving (the edge stays unknown).
  std::vector<FlowIssue> negatives;
};

// Known edge values from a counter array: edge i gets counters[edge.counter]
// if it has a counter (indices >= n_counters stay unknown).
std::vector<Count> KnownFromCounters(const Function& f,
                                     const uint64_t* counters,
                                     size_t n_counters);

// Solves the closed graph.  `known` is parallel to f.edges (shorter means
// the rest unknown); values given for ignored edges are kept as given but
// not used.  `known_virtual` is the EXIT->ENTRY count if it was measured.
FlowResult SolveFlow(const Function& f, const std::vector<Count>& known,
                     Count known_virtual = std::nullopt);

// Every conservation problem of a solved function, in block order:
// imbalances at vertices whose incident edges are all known, the negative
// derivations of `r`, and (non-ignored) edges left unknown.
std::vector<FlowIssue> CheckConservation(const Function& f,
                                         const FlowResult& r);

}  // namespace ballarus

#endif  // BALLARUS_CORE_FLOW_H_
