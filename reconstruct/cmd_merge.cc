// cmd_merge.cc — `ballarus-reconstruct merge -o OUT PROFILE...`: adds
// profiles together (counters of equal builds are added, modulo 2^64;
// runtime/profile_io.h) and writes OUT atomically.  Inputs are files and
// directories (of *.bprof), read one at a time and validated in full
// before they are added, so a profile whose metadata or path data is bad
// is refused (or, with --skip-bad, named and left out) rather than merged;
// memory is bounded by the result (reconstruct/profile_inputs.h).  OUT is
// written as every output is (reconstruct/output_file.h): a temporary
// file renamed into place, those of killed merges removed.
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "reconstruct/output_file.h"
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
  unsigned char* bytes = nullptr;
  uint64_t size = 0;
  if (ballarus_profile_serialize(&merged, &bytes, &size, err, sizeof err) != 0)
    Fail(out_path, err);
  const std::unique_ptr<unsigned char, decltype(&std::free)> owned(bytes,
                                                                   &std::free);
  // Made durable: a merged profile is often the only copy of its runs.
  OutputFile::Options options;
  options.fsync = true;
  std::string error;
  if (!WriteOutputFile(out_path,
                       std::string_view(reinterpret_cast<char*>(bytes), size),
                       options, &error))
    Fail(out_path, error);
  return 0;
}

}  // namespace ballarus
