// path_count128.h — path counts per DAG vertex in 128 bits, saturating, for
// the planners (path_cuts.cc) and PlaceIncrements (exact GMP counts are
// NumberPaths').
#ifndef BALLARUS_CORE_PATH_COUNT128_H_
#define BALLARUS_CORE_PATH_COUNT128_H_

#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {
namespace count128 {

using u128 = unsigned __int128;

inline constexpr u128 kSaturated = ~static_cast<u128>(0);

inline u128 SatAdd(u128 a, u128 b) {
  u128 s = a + b;
  return s < a ? kSaturated : s;
}

// Number of paths per vertex, saturating at 2^128 - 1.
inline std::vector<u128> CountPaths128(const PathDag& dag) {
  std::vector<u128> np(dag.n_vertices, 0);
  np[kExitBlock] = 1;
  for (size_t i = dag.topo.size(); i-- > 0;) {
    uint32_t v = dag.topo[i];
    if (v == kExitBlock) continue;
    u128 s = 0;
    for (uint32_t e : dag.out[v]) s = SatAdd(s, np[dag.edges[e].dst]);
    np[v] = s;
  }
  return np;
}

}  // namespace count128
}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_COUNT128_H_
