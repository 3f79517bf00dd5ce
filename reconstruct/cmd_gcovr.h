// cmd_gcovr.h — `ballarus-reconstruct gcovr-json PROFILE... [-o OUT]
// [--root DIR] [--include-internal-functions]`: gcovr's JSON tracefile
// (reconstruct/gcovr_json_writer.h) of the files and functions the filters
// keep (reconstruct/report_filter.h), for `gcovr --add-tracefile OUT`.
#ifndef BALLARUS_RECONSTRUCT_CMD_GCOVR_H_
#define BALLARUS_RECONSTRUCT_CMD_GCOVR_H_

#include <string>

#include "reconstruct/gcovr_json_writer.h"
#include "reconstruct/profile_inputs.h"
#include "reconstruct/report_filter.h"

namespace ballarus {

// Writes to `out_path` (stdout when empty or "-"); 0, or a Fail.
int RunGcovrJson(const ProfileInputs& in, const std::string& out_path,
                 const GcovrJsonOptions& options, const FilterOptions& filter);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CMD_GCOVR_H_
