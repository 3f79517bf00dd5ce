// cmd_merge.cc — `ballarus-reconstruct merge -o OUT PROFILE...`: adds
// profiles together (counters of equal builds are added, modulo 2^64;
// runtime/profile_io.h) and writes OUT atomically.  Inputs are files and
// directories (of *.bprof), read one at a time and validated in full
// before they are added, so a profile whose metadata or path data is bad
// is refused (or, with --skip-bad, named and left out) rather than merged;
// memory is bounded by the result (reconstruct/profile_inputs.h).
#include <string>
#include <vector>

#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "runtime/profile_io.h"

namespace ballarus {

int RunMerge(const std::string& out_path, const ProfileInputs& in) {
  ballarus_profile merged{};
  char err[512];
  struct Free {
    ballarus_profile* p;
    ~Free() { ballarus_profile_free(p); }
  } free_merged{&merged};
  MergeProfileFiles(ExpandProfileInputs(in.args), in.skip_bad, &merged,
                    nullptr);
  if (ballarus_profile_write_file(out_path.c_str(), &merged, err,
                                  sizeof err) != 0)
    Fail(out_path, err);
  return 0;
}

}  // namespace ballarus
