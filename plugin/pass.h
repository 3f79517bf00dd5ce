// pass.h — the instrumentation pass, "ballarus": a simple IPA pass that
// plugin_init (plugin.cc) inserts right after GCC's own "profile" pass.
#ifndef BALLARUS_PLUGIN_PASS_H_
#define BALLARUS_PLUGIN_PASS_H_

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

simple_ipa_opt_pass* make_ballarus_pass(gcc::context* ctxt);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PASS_H_
