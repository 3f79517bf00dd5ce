// test_path_checks.h — oracles and checks shared by the path profiling
// tests (path_*_test.cc), each written independently of the implementation
// in core/path_*.cc: path counts by a memoised DP over the DAG's edge list,
// every path by DFS, dominators for the back edges of reducible loops, the
// cycle property for the maximum spanning tree.  Test-only
// (//core:test_path_checks).
#ifndef BALLARUS_CORE_TEST_PATH_CHECKS_H_
#define BALLARUS_CORE_TEST_PATH_CHECKS_H_

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"

namespace ballarus {
namespace path_testing {

using Path = std::vector<uint32_t>;  // DAG edges, ENTRY to EXIT
using U = std::vector<uint32_t>;

mpz_class Z(uint64_t v);
mpz_class Pow2(unsigned k);
// v modulo 2^64 (v >= 0).
uint64_t Low64(const mpz_class& v);
// -x modulo 2^64, for expected increments.
constexpr uint64_t Neg(uint64_t x) { return uint64_t{0} - x; }

// Written independently of IsPathEdge: abnormal and ignored edges are not in
// the path DAG.
bool InDag(const Edge& e);
// The cuts of FindBackEdges alone.
PathCuts BackEdgeCuts(const Function& f);

// ---------------------------------------------------------------- oracles

// Paths from ENTRY to each vertex and from each vertex to EXIT, by memoised
// recursion over the DAG's edge list (not dag.out, dag.topo or NumberPaths).
struct Counts {
  std::vector<mpz_class> from_entry;
  std::vector<mpz_class> to_exit;
};
Counts CountByDp(const PathDag& dag);

// True if the DAG's edge list has no directed cycle (own DFS).
bool Acyclic(const PathDag& dag);

// Every ENTRY->EXIT path, by DFS over dag.out (pruned at vertices without a
// path to EXIT).  False if there are more than `cap`.
bool AllPaths(const PathDag& dag, const Counts& counts, size_t cap,
              std::vector<Path>* paths);

// Union-find for the tree checks.
struct Sets {
  std::vector<uint32_t> p;
  explicit Sets(size_t n) : p(n) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  }
  uint32_t Find(uint32_t x) {
    while (p[x] != x) x = p[x] = p[p[x]];
    return x;
  }
  bool Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    p[a] = b;
    return true;
  }
};

// Components of the undirected graph (DAG vertices; DAG edges and the
// virtual EXIT->ENTRY edge).
size_t Components(const PathDag& dag);

// The weight PlaceIncrements documents for each DAG edge (see the
// definition).
std::vector<uint64_t> DagWeights(const Function& f, const PathDag& dag,
                                 const std::vector<uint64_t>& cfg);

// A fake edge out of ENTRY.
bool IsFakeEntry(const Function& f, const DagEdge& d);

// The blocks of path `id`.
U BlocksOf(const PathDag& dag, const PathNumbering& num, unsigned id);
// Val of a model edge's DAG edge.
mpz_class ValOf(const PathDag& dag, const PathNumbering& num, uint32_t edge);

// The dominator back edges {u->w : w dominates u} of the blocks reachable
// from ENTRY along path edges, and whether the reachable graph is reducible
// (acyclic once they are removed).  Up to 64 blocks.
struct Loops {
  std::vector<bool> reachable;
  U dominator_back_edges;
  bool reducible = true;
};
Loops FindLoops(const Function& f);

// ----------------------------------------------------------------- graphs

// A chain of n diamonds: 2^n paths (see the definition for its numbering).
Function DiamondChain(uint32_t n);
inline constexpr uint32_t kDiamonds = 70;  // 2^70 paths

// A random CFG, edges grouped by source (see the definition).
Function RandomCfg(std::mt19937_64& rng, bool well_formed);

// The number of path edges (InDag) of f.
size_t CountPathEdges(const Function& f);

// ----------------------------------------------------------------- checks

// CheckDag enumerates every path of DAGs with at most this many.
inline constexpr size_t kEnumerateCap = 20000;

struct Checked {
  bool built = false;
  bool enumerated = false;
  mpz_class total;
};

// Builds the DAG of `f` cut at `cuts` and checks everything on it: its
// structure, the numbering against CountByDp, every path (or sampled ones)
// decoded, encoded and turned into blocks and edge counts, and
// PlaceIncrements under three weightings.
Checked CheckDag(const Function& f, const PathCuts& cuts, uint64_t seed);

// Checks a plan: valid cuts, a DAG, the count it claims, the limit.
void CheckPlan(const Function& f, const PathPlan& plan,
               const std::vector<bool>& may_cut, uint64_t limit,
               uint64_t seed);

}  // namespace path_testing
}  // namespace ballarus

#endif  // BALLARUS_CORE_TEST_PATH_CHECKS_H_
