// spanning_tree.h — maximum spanning tree of a function's closed CFG, whose
// chords are the edges that get counters in optimal edge profiling.
//
// Ball & Larus, "Optimally Profiling and Tracing Programs", TOPLAS 16(4)
// 1994, §3.1–3.2: counting only the chords (non-tree edges) of any spanning
// tree of the closed graph (CFG + EXIT->ENTRY) determines every edge count
// by flow conservation (core/flow.h); a MAXIMUM spanning tree under an
// edge-frequency estimate (estimator/estimator.h) puts the counters where
// they are expected to run least.  Number of chords = |E| - |V| + 1 for a
// connected closed graph.
//
// Construction (Kruskal, union-find with path compression + union by rank):
//   1. the virtual edge EXIT->ENTRY joins the tree first (it is never
//      counted: its count is derived);
//   2. the edges that cannot hold a counter (kEdgeFake,
//      kEdgeAbnormal) next, in edge order, whenever they join two components
//      (gcov's profile.cc does the same);
//   3. the other edges by decreasing weight; ties prefer kEdgeCritical edges
//      (counting them would need an edge split), then the lower edge index;
//   4. last, the edges whose count is known without a counter (a function's
//      entry edge whose count its callers give, core/entry_calls.h), only
//      if they still join two components: otherwise they are chords that
//      need no counter, and one counter fewer is placed.
// Edges flagged kEdgeIgnored take no part (not in the tree, not chords).  If
// uncounted edges alone form a cycle, one of them must end up a chord; such
// edges are reported in `uncountable_chords`, and the caller decides (their
// count stays unknown to propagation).
#ifndef BALLARUS_CORE_SPANNING_TREE_H_
#define BALLARUS_CORE_SPANNING_TREE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model.h"

namespace ballarus {

struct SpanningTree {
  // Parallel to Function::edges: the edge is a tree edge (no counter).
  // false for ignored edges and for chords.
  std::vector<bool> in_tree;
  // Chords that can hold a counter, ascending edge index: instrument these.
  std::vector<size_t> chords;
  // Chords that cannot hold a counter (fake/abnormal edges closing a
  // cycle of such edges), ascending edge index.  Usually empty.
  std::vector<size_t> uncountable_chords;
  // Chords whose count is known without a counter (of `known`), ascending.
  std::vector<size_t> known_chords;
  // Connected components of the closed graph (undirected sense, ignored
  // edges left out); 1 for every sane CFG.  Then
  // chords.size() + uncountable_chords.size() + known_chords.size()
  //     == |E| (non-ignored, + the virtual edge) - |V| + components.
  size_t components = 0;
};

// True if `e` can never hold a counter (fake or abnormal edge; EH edges can).
bool IsUncountableEdge(const Edge& e);

// The maximum spanning tree of `fn`'s closed graph; weights[i] is the
// estimated frequency of fn.edges[i] (missing entries count as 0); `known`
// lists countable edges whose count is given without a counter (step 4).
// Edges whose endpoints are not blocks of `fn` are treated as ignored.
// Deterministic: depends only on the graph, the flags, the weights and
// `known`.
SpanningTree MaximumSpanningTree(const Function& fn,
                                 const std::vector<uint64_t>& weights,
                                 const std::vector<size_t>& known = {});

// Flags kEdgeIgnored on every edge that cannot hold a counter (fake or
// abnormal, not yet ignored) and would close a cycle of such edges together
// with the virtual EXIT->ENTRY edge — as GCC's branch_prob() drops fake
// edges left off its spanning tree.  Such a cycle's edges cannot all be
// derived from counts, so one must go; fake edges out of ENTRY (abnormal
// re-entries, e.g. a longjmp landing after setjmp) are kept in preference
// to edges into EXIT, because block counts need the re-entries.  Run before
// choosing counters; afterwards the uncountable edges form a forest and
// every count of the function is derivable.  Returns the edges flagged.
std::vector<size_t> IgnoreUncountableCycles(Function* fn);

}  // namespace ballarus

#endif  // BALLARUS_CORE_SPANNING_TREE_H_
