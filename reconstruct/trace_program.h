// trace_program.h — the traced program as the `trace` command regenerates
// it: the trace function table of core/trace_ids.h (the functions of the
// profiles' TUs, profile by profile, in file order, each TU's functions in
// metadata order) with each function's CFG and its trace plan (the
// kTracePlanExtensionTag extension; functions without one were not traced).
#ifndef BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_
#define BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_

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

struct TraceProgram {
  std::vector<std::unique_ptr<ProfileRecords>> profiles;
  std::vector<TraceProgramFunction> functions;  // by function id
  // For RegenerateTrace: untraced functions get an empty plan of their own
  // and must never be entered (TraceStreamProblem checks it first).
  std::vector<TracePlan> empty_plans;
  std::vector<TracedFunction> regen;
};

// Reads the profiles into *out; false with *file and *error on a profile
// that does not read or a malformed plan.
bool LoadTraceProgram(const std::vector<std::string>& profiles,
                      TraceProgram* out, std::string* file,
                      std::string* error);

// The first event that names a function the program cannot regenerate
// ("event N: kEnter of function id X, which ..."), or empty.
std::string TraceStreamProblem(const TraceProgram& p,
                               const std::vector<TraceEvent>& events);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_PROGRAM_H_
