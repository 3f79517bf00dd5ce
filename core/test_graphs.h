// test_graphs.h — hand-made CFGs for the GCC-free core's unit tests: a
// Function from a block count and a list of (src, dst, flags) edges, in the
// model's conventions (block 0 ENTRY, 1 EXIT; no counters assigned).
// Test-only (//core:test_graphs).
#ifndef BALLARUS_CORE_TEST_GRAPHS_H_
#define BALLARUS_CORE_TEST_GRAPHS_H_

#include <cstdint>
#include <vector>

#include "core/model.h"

namespace ballarus {

struct E {
  uint32_t src, dst;
  uint32_t flags;
};

inline Function Make(uint32_t n_blocks, const std::vector<E>& es) {
  Function f;
  f.name = "f";
  f.blocks.resize(n_blocks);
  for (const E& e : es) {
    Edge x;
    x.src = e.src;
    x.dst = e.dst;
    x.flags = e.flags;
    f.edges.push_back(x);
  }
  return f;
}

}  // namespace ballarus

#endif  // BALLARUS_CORE_TEST_GRAPHS_H_
