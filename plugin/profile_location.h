// profile_location.h — where a translation unit's profile lives, decided at
// compile time: the path gcov would give the object's .gcda, with the
// suffix .bprof, absolute and normalised; and the object file's name.
//
// GCC-free header (include it before plugin/gcc_compat.h like every other
// ballarus header); the implementation reads GCC's globals.
#ifndef BALLARUS_PLUGIN_PROFILE_LOCATION_H_
#define BALLARUS_PLUGIN_PROFILE_LOCATION_H_

#include "core/model.h"

namespace ballarus_plugin {

// Sets tu->profile and tu->object for the TU being compiled.  Call it after
// tu->cwd and tu->source are set, from the IPA pass (coverage_init, which
// settles profile_data_prefix, has run by then).
void SetProfileLocation(ballarus::TranslationUnit* tu);

}  // namespace ballarus_plugin

#endif  // BALLARUS_PLUGIN_PROFILE_LOCATION_H_
