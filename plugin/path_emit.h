// path_emit.h — Ball–Larus path profiling, emission: the path register and
// the path counts of one function, as planned by path_plan.h.  See
// path_emit.cc.
#ifndef BALLARUS_PLUGIN_PATH_EMIT_H_
#define BALLARUS_PLUGIN_PATH_EMIT_H_

#include <vector>

#include "plugin/path_plan.h"
#include "plugin/reentry.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Declares the TU's "arrived" flag (see path_emit.cc), needed when a
// function's plan has uses_flag.
tree MakeArrivedFlag();

// Emits cfun's planned path code: block actions are inserted, edge actions
// queued on their edges (gsi_insert_seq_on_edge) for the caller to commit.
// counters is the TU's counter array; hashes and add_fn the hashed path
// tables and __ballarus_path_add (tu_emit.h), NULL_TREE when the TU has
// none; arrived the flag, NULL_TREE when no function uses it.
void EmitPathProfiling(const PathWork& work, tree counters, tree hashes,
                       tree add_fn, tree arrived,
                       const std::vector<ReentryCall>& reentry, tree epoch,
                       bool atomic);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PATH_EMIT_H_
