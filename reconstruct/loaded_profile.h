// loaded_profile.h — a profile file loaded into the decoded, merged,
// solved in-memory form every ballarus-reconstruct subcommand renders.
//
// Loading = read and validate the file (runtime/profile_io.h), decode every
// record's metadata blob (core/metadata.h), group functions (COMDAT copies
// flagged kFunctionComdat with equal assembler name and cfg_checksum and
// identical graphs are summed into one entry listing all their TUs; static
// functions with equal names in different TUs stay apart), solve every
// function's edge and block counts (core/flow.h) and compute gcov's line
// counts (core/gcov_lines.h).  Later subcommands (stats, paths,
// compare-gcov) render the same structure.
#ifndef BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
#define BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_

#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/gcov_lines.h"
#include "core/model.h"
#include "runtime/profile_io.h"

namespace ballarus {

// One record of the file with its decoded metadata.
struct LoadedTu {
  const ballarus_profile_record* record = nullptr;
  uint64_t file_offset = 0;  // where the record starts in the file
  TranslationUnit tu;
};

// One function as shown: a single copy, or the sum of COMDAT copies.
struct LoadedFunction {
  const Function* function = nullptr;  // the graph (first copy)
  const TranslationUnit* tu = nullptr;  // the first copy's TU (file names)
  std::vector<size_t> tus;             // indices into LoadedProfile::tus,
                                       // sorted by source name
  std::vector<Count> known;            // measured edge counts, summed
  FlowResult flow;
  std::vector<GcovLine> lines;         // gcov line counts, files of `tu`

  const std::string& file_name() const { return tu->files[function->file]; }
  const std::string& display_name() const {
    return function->demangled.empty() ? function->name
                                       : function->demangled;
  }
};

class LoadedProfile {
 public:
  LoadedProfile() = default;
  LoadedProfile(const LoadedProfile&) = delete;
  LoadedProfile& operator=(const LoadedProfile&) = delete;
  ~LoadedProfile();

  std::string path;
  ballarus_profile raw{};  // as read (owned)
  std::vector<LoadedTu> tus;
  // Sorted by (file, line, name, checksum, first TU's source).
  std::vector<LoadedFunction> functions;
  // Line counts of every source file, computed the way gcov 12 does: per
  // TU over all of its functions at once (a line shared by several
  // functions, e.g. inlined header code, is accumulated across them), then
  // summed over TUs.  Keyed by (file name, line).
  std::map<std::pair<std::string, uint32_t>, int64_t> file_lines;
};

// Loads `path`.  On failure returns false and sets *error to one line
// without the file name, e.g. "offset 120: record 0: metadata: offset 64:
// ..." (file offsets; the caller prefixes the file name).
bool LoadProfile(const std::string& path, LoadedProfile* out,
                 std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
