// trace_program.h — the traced program as the `trace` command regenerates
// it: the functions of the profiles' TUs (profile by profile, in file
// order), then those of the TUs only the trace files' METADATA records
// carry (runtime/trace_format.h; each TU's functions in metadata order:
// their function ids), found
// by kEnter's (TU stamp, index in the TU) (core/trace_ids.h), each with its
// CFG and its trace plan (the kTracePlanExtensionTag extension; functions
// without one were not traced).
#ifndef BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_
#define BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/profile_reader.h"
#include "core/trace_plan.h"
#include "core/trace_regen.h"

namespace ballarus {

struct TraceProgramFunction {
  const Function* fn = nullptr;
  const TranslationUnit* tu = nullptr;
  std::optional<TracePlan> plan;  // absent: not traced
};

// A TU's metadata blob from a trace file's METADATA record.
struct TraceMetadata {
  std::string file;  // the trace file, for errors
  std::vector<uint8_t> blob;
};

struct TraceProgram {
  std::vector<std::unique_ptr<ProfileRecords>> profiles;
  std::vector<std::unique_ptr<TranslationUnit>> trace_tus;  // from METADATA
  std::vector<TraceProgramFunction> functions;  // by function id
  // For RegenerateTrace: untraced functions get an empty plan of their own
  // and must never be entered (TraceStreamProblem checks it first).
  std::vector<TracePlan> empty_plans;
  std::vector<TracedFunction> regen;
  std::map<std::pair<uint32_t, uint32_t>, size_t> ids;  // (stamp, index)
  // The traced functions were built with mode=trace-naive: their streams
  // name every block (the plans then hold only the call blocks).
  bool naive = false;
  size_t plans_seen = 0;
  // The function id of a kEnter's (TU stamp, index), or -1.
  int64_t Resolve(uint32_t tu_stamp, uint32_t index) const;
};

// Reads the profiles and then the trace files' metadata into *out.  A TU
// (by identity) that a profile holds is taken from the profile, and must
// be the same build (stamp) as the trace file's; a TU carried twice (two
// modules, several files) must be one build too.  False with *file and
// *error on a profile or blob that does not read, such a disagreement, a
// malformed plan, or naive and witness plans mixed.
bool LoadTraceProgram(const std::vector<std::string>& profiles,
                      TraceProgram* out, std::string* file,
                      std::string* error,
                      const std::vector<TraceMetadata>& metadata = {});

// The first kEnter of a function without a trace plan ("event N: kEnter
// of F, which has no trace plan"), or empty.
std::string TraceStreamProblem(const TraceProgram& p,
                               const std::vector<TraceEvent>& events);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_
