// path_loops.h — loops of the path DAG: one-path loops counted in a local
// iteration count, and loops whose entry edges can be cut.
#ifndef BALLARUS_CORE_PATH_LOOPS_H_
#define BALLARUS_CORE_PATH_LOOPS_H_

#include <cstdint>
#include <vector>

#include "core/model.h"
#include "core/path_cuts.h"
#include "core/path_dag.h"
#include "core/path_increments.h"

namespace ballarus {

// Loops counted without a memory update per iteration.  Every iteration
// of a loop ends a path at its back edge (count[r + a]++; r = b), a counter
// update with an index GCC cannot keep in a register.  For a loop whose
// iterations all take one path -- header h, one latch u, exactly one DAG
// path from h to the back edge u->h -- every iteration but the first ends
// the same path K, and the first ends the path s + (K - b) where s is the
// register on entering the loop (b = Inc of the dummy ENTRY->h).  Such a
// loop counts its iterations in a local n instead:
//   on each entry edge (after its own increment):  s = r; r = b; n = 0
//   on the back edge:                              n += 1; r = b
//   on each exit edge (before anything else that counts):
//       count[s + first_offset] += (n != 0); count[K] += n - (n != 0);
//       if (n == 0) r += s - b     (the register as if never reset)
// so the counts are exactly those of Ball-Larus' instrumentation; GCC
// keeps n in a register, or computes it from the loop's induction
// variable.  A loop qualifies only if nothing can leave it but its exit
// edges: its blocks are entered from outside only at h (single entry, so
// s and n are set), hold no cut block and no other loop's header, have no
// abnormal or EH edges and no fake ENTRY edges, and none of them is
// `excluded` (the caller excludes pre-counting calls and computed gotos:
// their fake EXIT edges would leave the loop with n unsaved).  Fake EXIT
// edges of calls that always return stay allowed.
struct CountedLoop {
  uint32_t header = 0;
  uint32_t back_edge = 0;          // model edge latch->header (a cut edge)
  std::vector<uint32_t> entries;   // model edges into header from outside
  std::vector<uint32_t> exits;     // model edges from the loop to outside
                                   // (EXIT included), not fake
  uint64_t start = 0;         // b: the register at h on a path starting there
  uint64_t iteration = 0;     // K: the number of the one path h .. back edge
  uint64_t first_offset = 0;  // K - b (modulo 2^64)
};
std::vector<CountedLoop> FindCountedLoops(const Function& fn,
                                          const PathDag& dag,
                                          const PathCuts& cuts,
                                          const PathIncrements& inc,
                                          const std::vector<bool>& excluded);

// Loops by their cut back edges, for cutting their entries (the plugin's
// multi-path loop entry cuts, path_plan.cc): for each cut edge u->h that is
// the only cut edge into h (h not a cut block), its natural loop (h and
// every block reaching u without passing h, over non-fake path edges) and
// the model edges into h from outside it.  Only loops entered at h alone
// (no other block of the body entered from outside, no fake or abnormal
// edge into h) and with at least one entry are listed; they may take any
// number of paths per iteration and hold calls and other loops.  Cutting
// every entry edge of such a loop starts every path through h at the same
// register value b (Inc of the dummy ENTRY->h), as after its back edge.
// Ascending by back edge.
struct LoopEntries {
  uint32_t header = 0;
  uint32_t back_edge = 0;         // model edge latch->header (a cut edge)
  std::vector<uint32_t> entries;  // model edges into header from outside
  std::vector<uint32_t> body;     // the natural loop's blocks, header first
};
std::vector<LoopEntries> FindLoopEntries(const Function& fn,
                                         const PathCuts& cuts);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_LOOPS_H_
