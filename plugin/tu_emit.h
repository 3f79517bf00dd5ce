// tu_emit.h — the per-translation-unit data the runtime reads: counter
// array, hashed path tables, metadata blob, runtime anchor and descriptor.
// See tu_emit.cc.
#ifndef BALLARUS_PLUGIN_TU_EMIT_H_
#define BALLARUS_PLUGIN_TU_EMIT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// static uint64_t __ballarus_counters[n_counters].  `nonaliased`: only
// ever accessed directly (DECL_NONALIASED, as gcov's counters: GCC's alias
// oracle then knows no pointer reaches them).  The pass passes false (see
// pass.cc): the promise does not hold with a pointer path register, and
// costs more instructions than it saves without one.
tree EmitCounterArray(uint64_t n_counters, bool nonaliased);

// A function whose path counts go to a hashed table.
struct HashedPathTable {
  uint64_t index;     // its table in the TU (PathInfo::base)
  uint64_t function;  // its index in the TU's metadata
};

struct PathHashDecls {
  tree tables = NULL_TREE;  // __ballarus_path_hashes
  tree add_fn = NULL_TREE;  // the runtime's __ballarus_path_add
};

// The TU's hashed path tables, in `tables` order, and the declaration of
// the runtime function that counts into them; both NULL_TREE when `tables`
// is empty.
PathHashDecls EmitPathHashTables(const std::vector<HashedPathTable>& tables);

// Encodes tu (core/metadata.h) into the object with the descriptor the
// runtime finds at start-up; counters and hashes as returned above.
// Returns the size of the metadata blob.  Called last: tu must be final
// (edge splits recorded).
size_t EmitMetadataAndDescriptor(const ballarus::TranslationUnit& tu,
                                 tree counters, tree hashes,
                                 uint64_t n_hashes);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_TU_EMIT_H_
