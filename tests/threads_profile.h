// threads_profile.h — the per-thread counting tests' view of a profile:
// each function's executions, edges and paths by source-level name, read
// with the installed ballarus-reconstruct (threads_test.cc,
// threads_gs_test.cc).
#ifndef BALLARUS_TESTS_THREADS_PROFILE_H_
#define BALLARUS_TESTS_THREADS_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace threads_profile {

// One function of a profile, by its source-level name (the demangled name
// up to its parameter list, so C and C++ builds name functions alike).
struct Fn {
  int64_t executions = -1;
  std::vector<std::string> edges;  // "src->dst=count"
  std::vector<std::string> paths;  // "id=count"
};
using Profile = std::map<std::string, Fn>;

// Reads the profile at path (paths: `paths --json`, else `show --json`)
// into *out; false with *error set when ballarus-reconstruct fails.
bool LoadProfile(const std::string& path, bool paths, Profile* out,
                 std::string* error);

// The execution count of function `name` (C: its name; C++: its name and
// parameter list), -2 if absent.
int64_t Exec(const Profile& p, const std::string& name);

}  // namespace threads_profile

#endif  // BALLARUS_TESTS_THREADS_PROFILE_H_
