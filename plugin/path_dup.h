// path_dup.h — path-guided duplication (-fplugin-arg-ballarus-tune-path-use=FILE)
// in the -fprofile-use compile: a simple IPA pass, "ballarus-pathdup", right
// after GCC's "profile" pass has read the edge profile, that copies the
// chains path_dup_plan.h chooses and gives every copy and original its
// exact counts from the path profile.  See docs/path-guided.md.
#ifndef BALLARUS_PLUGIN_PATH_DUP_H_
#define BALLARUS_PLUGIN_PATH_DUP_H_

#include <string>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Reads the ballarus profile FILE (a path profile of a build of the same
// sources: mode=path or edge,path).  False with a one-line message.
bool LoadPathProfile(const std::string& file, std::string* error);

simple_ipa_opt_pass* make_path_dup_pass(gcc::context* ctxt);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PATH_DUP_H_
