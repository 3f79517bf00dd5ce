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

#include "reconstruct/html_combined_widgets.h"
#include "reconstruct/html_writer.h"
#include "reconstruct/loaded_profile.h"
#include "reconstruct/profile_inputs.h"
#include "reconstruct/report_filter.h"
#include "reconstruct/report_model.h"

namespace ballarus {

inline constexpr const char* kProg = "ballarus-reconstruct";

// Thrown only by Fail, caught in main(): exit status 2.
struct Fatal {
  std::string message;
};

// "FILE: problem" (just the problem when `file` is empty).
[[noreturn]] void Fail(const std::string& file, const std::string& problem);

// `s` safe to print on one line of a terminal: every byte that is not part
// of printable UTF-8 (control characters, DEL, NUL, bytes of no valid
// sequence) is written \xNN.  Idempotent; main() applies it to every
// error message, so a name with a newline, an escape sequence or Latin-1
// bytes never splits, colours or garbles it.
std::string Printable(const std::string& s);

// A profile loaded and its report built (LoadProfile's errors: Fail).
// The report points into the profile, so they live together.
// Its inputs are files and directories, merged in memory when there are
// several (reconstruct/profile_inputs.h).
struct LoadedReport {
  LoadedProfile profile;
  report::Report report;
  std::vector<std::string> files;  // the profile files read
};
void LoadReport(const ProfileInputs& in, LoadedReport* out);

// The functions whose name or demangled name matches `regex` (all when it
// is empty), in report order; a bad regex is a Fail.
std::vector<const report::FunctionReport*> Select(const report::Report& r,
                                                  const std::string& regex);

// gcov's options (reconstruct/cmd_gcov.cc).
struct GcovOptions {
  bool branches = false, counts = false, unconditional = false;
  bool demangle = false, human = false, function_summaries = false;
  bool json = false, to_stdout = false, no_output = false;
  bool long_names = false, preserve_paths = false, relative_only = false;
  bool all_blocks = false;
  std::string source_prefix;
  std::string object_dir;  // -o: where gcov-style inputs' profiles lie
  std::vector<std::string> tus;  // --tu: sources of the TUs to read
};

int RunShow(const ProfileInputs& in, bool json, const std::string& regex);
int RunGcov(const ProfileInputs& in, const GcovOptions& options,
            const FilterOptions& filter);
// diff and overlap compare two sides, each a profile or one named test of
// it (reconstruct/profile_pair.h).
struct SideSpec {
  ProfileInputs inputs;
  std::string test;  // empty: the whole profile (every run's counts)
};
struct DiffSides {
  SideSpec a, b;
};
int RunDiff(const DiffSides& sides, bool json, uint64_t top,
            const FilterOptions& filter);
int RunOverlap(const DiffSides& sides, bool json, uint64_t top,
               const FilterOptions& filter);
// A combined profile (the only input) gets its own report
// (reconstruct/html_combined.h), ranked by `variation`.
int RunHtml(const ProfileInputs& in, const HtmlOptions& options,
            const FilterOptions& filter, const VariationOptions& variation);
struct LcovOptions {
  std::string test_name;     // -t: TN: of the sum (or of the unnamed runs)
  bool one_section = false;  // no TN: section per named test
};
int RunLcov(const ProfileInputs& in, const std::string& out_path,
            const LcovOptions& options, const FilterOptions& filter);
int RunCobertura(const ProfileInputs& in, const std::string& out_path,
                 const std::string& root, const FilterOptions& filter);
int RunVerify(const ProfileInputs& in, const ProfileInputs& against);
int RunMerge(const std::string& out_path, const ProfileInputs& in);
int RunStats(const ProfileInputs& in, bool json,
             const std::vector<std::string>& gcdas);
struct PathsOptions {
  std::string regex;  // --function
  uint64_t top = 10;
  bool json = false;
  bool program = false;  // one ranking across functions
  bool source = false;   // the text of each path's lines
  std::string decode;
  bool decode_given = false;
};
int RunPaths(const ProfileInputs& in, const PathsOptions& options,
             const FilterOptions& filter);
// `correlation`: where paths are correlated (reconstruct/cmd_correlation.cc).
struct CorrelationOptions {
  std::string regex;  // --function
  uint64_t top = 20;
  bool json = false;
};
int RunCorrelation(const ProfileInputs& in, const CorrelationOptions& options,
                   const FilterOptions& filter);
// `tests`: the named tests of the profiles (reconstruct/cmd_tests.cc).
int RunTests(const ProfileInputs& in, bool json);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_COMMANDS_H_
