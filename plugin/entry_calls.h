// entry_calls.h — which functions' entry counts their callers' call blocks
// give, in edge mode (interprocedural counter elimination,
// core/entry_calls.h).  See entry_calls.cc.
#ifndef BALLARUS_PLUGIN_ENTRY_CALLS_H_
#define BALLARUS_PLUGIN_ENTRY_CALLS_H_

#include <optional>
#include <vector>

#include "core/entry_calls.h"
#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Whether every call of `node` is a direct call from this TU, listed in its
// call-graph callers: what cgraph_node::local_p says, but without
// force_output, which -O0 sets on every static function only so that it is
// emitted (a `used` one, which asm might call, is refused by name).
bool OnlyCalledDirectlyHere(cgraph_node* node);

// For each instrumented function (nodes[i] recorded as functions[i], every
// CFG prepared as gcov's: cfg_prep.h), its entry calls when its entry count
// can come from them: every call of it is a direct call from another
// function of `nodes` (OnlyCalledDirectlyHere, none inlined, none from
// itself), found in the bodies as in the call graph, and the functions so
// chosen depend on one another without a cycle (of a cycle, the first one
// keeps its counter).  Dumps each decision.
std::vector<std::optional<ballarus::EntryCalls>> ChooseEntryCalls(
    const std::vector<cgraph_node*>& nodes,
    const std::vector<ballarus::Function>& functions);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_ENTRY_CALLS_H_
