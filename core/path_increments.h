// path_increments.h — the increments of the path register on the chords
// of a spanning tree of the path DAG.
//
// Instrumentation (Ball, TOPLAS 1994 event counting; MICRO'96 §3.3):
// increments Inc(e) go on the chords of a maximum spanning tree of the DAG
// plus the virtual EXIT->ENTRY edge, weighted by the estimator; the sum of
// Inc along any path equals its number (arithmetic modulo 2^64).
#ifndef BALLARUS_CORE_PATH_INCREMENTS_H_
#define BALLARUS_CORE_PATH_INCREMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {

// Increments for a DAG with at most kMaxInstrumentedPaths paths.
struct PathIncrements {
  uint64_t n_paths = 0;
  std::vector<uint64_t> val;   // per DAG edge
  std::vector<uint64_t> inc;   // per DAG edge, modulo 2^64; 0 on the tree
  std::vector<bool> in_tree;   // per DAG edge
};
// cfg_weights parallel to fn.edges (estimated frequencies).  The virtual
// EXIT->ENTRY edge and the fake edges out of ENTRY join the tree first
// (Inc 0: an abnormal re-entry starts with r = 0), then the other edges by
// decreasing weight (ties: lower DAG edge index).  Dummy edges weigh what
// the CFG edges they stand for weigh.  False if the DAG has too many paths.
bool PlaceIncrements(const Function& fn, const PathDag& dag,
                     const std::vector<uint64_t>& cfg_weights,
                     PathIncrements* out, std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_INCREMENTS_H_
