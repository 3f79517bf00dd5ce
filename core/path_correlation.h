// path_correlation.h — what a function's path profile knows that its edge
// profile does not: the executions on paths the edge counts leave
// undetermined, and the branch directions a path-qualified prediction gets
// right where an edge-based one does not.
//
// Definite flow (Ball, Mataga & Sagiv, "Edge profiling versus path
// profiling: the showdown", POPL 1998).  The edge counts of the path DAG
// (core/path_dag.h: CFG edges plus the dummy edges of cut back edges and
// cut blocks) are derived from the path counts.  A path p = e1 .. ek's
// definite flow is the least count p has in any path profile of the DAG
// with those edge counts.  With c(v) the flow through vertex v:
//
//   definite(p) = max(0, c(e1) - sum_{i>=2} (c(src(e_i)) - c(e_i)))
//
// It is a lower bound: of the c(e1) executions that took e1, at most
// c(v) - c(e_i) can leave p at v = src(e_i) by v's other out-edges.  On a
// DAG it is also attained: build a decomposition vertex by vertex in
// topological order, sending the executions that have followed p's prefix
// so far out of v by its other edges first and filling e_i with the
// executions that reached v any other way (there are c(v) - (those on the
// prefix) of them, exactly enough, because flow is conserved at v).  A
// DAG path never returns to a vertex, so nothing routed off p's prefix can
// rejoin it: after vertex v_k exactly the bound's executions remain on p.
// (path_correlation_test.cc checks the bound against an exhaustive search
// of the decompositions of small DAGs.)
//
// Branch directions.  A conditional block has two or more out-edges in
// the DAG's CFG that are neither fake (a call that did not return) nor EH.
// Each time a path passes such a block b, it takes one of them (a cut back
// edge's dummy end counts as its back edge).  An edge-based static
// prediction takes b's most frequent direction:
//   miss_edge = sum_b (n(b) - max_s n(b -> s)).
// A path-qualified prediction predicts b's direction from the path's
// prefix from its start up to b (Ammons & Larus's path qualification):
//   miss_path = sum over (prefix, b) of (n(prefix, b) - majority count).
// miss_path <= miss_edge; the gain is their difference.
//
// Counts are the profile's (modulo 2^64); sums are taken in 128 bits and
// reported saturating at 2^64 - 1.  GCC-free.
#ifndef BALLARUS_CORE_PATH_CORRELATION_H_
#define BALLARUS_CORE_PATH_CORRELATION_H_

#include <cstdint>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {

// One executed path: its DAG edges, ENTRY to EXIT, and its count.
struct ExecutedPath {
  const std::vector<uint32_t>* edges = nullptr;
  uint64_t count = 0;
};

// One conditional block's branch figures.
struct BranchCorrelation {
  uint32_t block = 0;
  uint64_t executions = 0;  // n(b): directions taken
  uint64_t miss_edge = 0;   // n(b) - max_s n(b -> s)
  uint64_t miss_path = 0;   // over b's path prefixes
  uint64_t gain() const { return miss_edge - miss_path; }
};

// A function's (or, summed, a program's) figures.
struct PathCorrelation {
  uint64_t executions = 0;         // sum of the path counts
  uint64_t determined = 0;         // sum of the paths' definite flows
  uint64_t branch_executions = 0;  // sum of n(b)
  uint64_t miss_edge = 0;
  uint64_t miss_path = 0;
  // Conditional blocks with miss_edge > 0, by gain descending, ties by
  // block ascending.
  std::vector<BranchCorrelation> branches;

  uint64_t gain() const { return miss_edge - miss_path; }
  // 1 - determined / executions (0 without executions).
  double UndeterminedShare() const;
  // gain / branch_executions (0 without branches).
  double GainShare() const;
  // Sums the totals (saturating); `branches` are left alone.
  void Add(const PathCorrelation& o);
};

// The definite flow of each path of `paths`, in their order.  The edge
// counts are derived from `paths` themselves.
std::vector<uint64_t> DefiniteFlows(const PathDag& dag,
                                    const std::vector<ExecutedPath>& paths);

// Per DAG edge: the CFG edge whose direction it takes at a conditional
// block (kCfg and kBackEnd edges whose source is one), or -1.
std::vector<int64_t> BranchDirections(const Function& fn, const PathDag& dag);

// Every figure of one function.  `dag` is fn's path DAG; `paths` its
// executed paths (any order, zero counts ignored).
PathCorrelation Correlate(const Function& fn, const PathDag& dag,
                          const std::vector<ExecutedPath>& paths);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_CORRELATION_H_
