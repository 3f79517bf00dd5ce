// gcov_arcs.h — the plugin's side of profile use: records, per function and
// per translation unit, what GCC 12's -fprofile-arcs would have recorded
// for the same compile (which edges it counts, the function idents, where
// the .gcda goes), as metadata extensions (core/gcov_arcs.h), so that
// `ballarus-reconstruct gcda` can write the .gcda files -fprofile-use reads.
//
// GcovRegister, from plugin_init, makes the compile's early passes those
// of a -fprofile-arcs compile where they differ (see gcov_arcs.cc).
// GcovExpandThunks, first thing in the pass, expands the thunks
// -fprofile-arcs would expand (and count).  Then three calls, in the order
// the pass reaches them:
//   GcovCaptureEdgeKeys   in the CFG preparation, just before
//                         compact_blocks(): branch_prob sorts its edge list
//                         (compare_freqs) before it renumbers the blocks, so
//                         ties between equally frequent edges are broken by
//                         the old block indices, which are gone afterwards;
//   GcovRecordFunction    once the model's edges exist (gcc_edges parallel
//                         to fn->edges), with the fake edges still present;
//   GcovRecordUnit        after every function of the TU was recorded.
//
// Include before plugin/gcc_compat.h, like every GCC-free header: it only
// forward-declares GCC's types.
#ifndef BALLARUS_PLUGIN_GCOV_ARCS_H_
#define BALLARUS_PLUGIN_GCOV_ARCS_H_

#include <vector>

#include "core/model.h"

struct edge_def;
typedef struct edge_def* edge;

namespace ballarus {

void GcovRegister(const char* plugin_name);
void GcovExpandThunks();
void GcovCaptureEdgeKeys();
void GcovRecordFunction(Function* fn, const std::vector<edge>& gcc_edges);
void GcovRecordUnit(TranslationUnit* tu);

}  // namespace ballarus

#endif  // BALLARUS_PLUGIN_GCOV_ARCS_H_
