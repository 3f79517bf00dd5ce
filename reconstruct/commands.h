// commands.h — what the subcommands of ballarus-reconstruct share.
//
// main.cc parses the command line (CLI11) and calls one Run* function;
// each subcommand lives in its own file (cmd_show.cc, cmd_verify.cc,
// cmd_merge.cc, cmd_stats.cc, cmd_paths.cc).  A subcommand that reports
// loads its profile once (LoadedProfile, reconstruct/loaded_profile.h),
// builds the report model once (reconstruct/report_model.h) and hands it
// to its writers: the text and JSON pieces several subcommands print are
// in text_writer.h and json_writer.h.
//
// Errors: Fail() throws Fatal, which main() turns into one line
// `ballarus-reconstruct: FILE: problem` and exit status 2
// (docs/DESIGN.md); nothing else escapes.
#ifndef BALLARUS_RECONSTRUCT_COMMANDS_H_
#define BALLARUS_RECONSTRUCT_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reconstruct/loaded_profile.h"
#include "reconstruct/report_model.h"

namespace ballarus {

inline constexpr const char* kProg = "ballarus-reconstruct";

// Thrown only by Fail, caught in main(): exit status 2.
struct Fatal {
  std::string message;
};

// "FILE: problem" (just the problem when `file` is empty).
[[noreturn]] void Fail(const std::string& file, const std::string& problem);

// A profile loaded and its report built (LoadProfile's errors: Fail).
// The report points into the profile, so they live together.
struct LoadedReport {
  LoadedProfile profile;
  report::Report report;
};
void LoadReport(const std::string& path, LoadedReport* out);

// The functions whose name or demangled name matches `regex` (all when it
// is empty), in report order; a bad regex is a Fail.
std::vector<const report::FunctionReport*> Select(const report::Report& r,
                                                  const std::string& regex);

int RunShow(const std::string& path, bool json, const std::string& regex);
int RunVerify(const std::string& path, const std::string& against);
int RunMerge(const std::string& out_path,
             const std::vector<std::string>& inputs);
int RunStats(const std::string& path, bool json,
             const std::vector<std::string>& gcdas);
int RunPaths(const std::string& path, const std::string& regex, uint64_t top,
             bool json, const std::string& decode, bool decode_given);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_COMMANDS_H_
