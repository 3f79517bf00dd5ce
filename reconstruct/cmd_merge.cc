// cmd_merge.cc — `ballarus-reconstruct merge -o OUT PROFILE...`: adds
// profiles together (counters of equal builds are added, modulo 2^64;
// runtime/profile_io.h) and writes OUT atomically.  Every input is loaded
// in full first, so a profile whose metadata or path data is bad is
// refused rather than merged.
#include <string>
#include <vector>

#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "runtime/profile_io.h"

namespace ballarus {

int RunMerge(const std::string& out_path,
             const std::vector<std::string>& inputs) {
  ballarus_profile merged{};
  char err[512];
  struct Free {
    ballarus_profile* p;
    ~Free() { ballarus_profile_free(p); }
  } free_merged{&merged};
  for (const std::string& in : inputs) {
    ProfileRecords p;  // full validation, metadata and path data included
    std::string problem;
    if (!ReadProfile(in, &p, &problem)) Fail(in, problem);
    if (ballarus_profile_merge(&merged, &p.raw, err, sizeof err) != 0)
      Fail(in, std::string("cannot merge: ") + err);
  }
  if (ballarus_profile_write_file(out_path.c_str(), &merged, err,
                                  sizeof err) != 0)
    Fail(out_path, err);
  return 0;
}

}  // namespace ballarus
