// profile_inputs.h — the profiles a command reads: files and directories,
// merged in memory one at a time.
//
// Every subcommand that reads profiles takes PROFILE... : files, and
// directories searched recursively for `*.bprof` (the per-object profiles
// the runtime writes beside the objects, README "Where the counts go").
// The files are read in sorted order (byte-wise on the whole path; a
// directory's files in the place of the directory among the arguments), so
// the result never depends on readdir's order; symbolic links to
// directories are not followed (no loops), links to files are.
//
// Merging streams: one input is read, validated exactly as a single
// profile is (core/profile_reader.h ReadProfile: file checks, metadata,
// path data), added into the accumulated result
// (runtime/profile_io.h ballarus_profile_merge: counters of equal builds
// added modulo 2^64, runs summed saturating) and freed before the next is
// read.  Memory is bounded by the result (plus the largest input), not by
// the number of inputs.  `merge` writes the result; the reports load it as
// if it were the merged file, so `html -o r build/` equals `merge -o
// all.profile build/ && html -o r all.profile`.
//
// A file that cannot be used (unreadable, damaged, another format, not a
// profile, another build of a TU already read) stops the command with one
// line `ballarus-reconstruct: FILE: problem` (exit 2); with --skip-bad it
// is named on stderr, one line `ballarus-reconstruct: FILE: skipped:
// problem`, and left out; the command still fails if nothing was read.
#ifndef BALLARUS_RECONSTRUCT_PROFILE_INPUTS_H_
#define BALLARUS_RECONSTRUCT_PROFILE_INPUTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/profile_io.h"

namespace ballarus {

struct ProfileInputs {
  std::vector<std::string> args;  // as given: files and directories
  bool skip_bad = false;
  std::string test;  // --test: one named test's counts (loaded_profile.h)
};

// The files `args` name, directories expanded (see above).  Fails (Fatal)
// on an argument that does not exist or a directory without `*.bprof`.
std::vector<std::string> ExpandProfileInputs(
    const std::vector<std::string>& args);

// Reads `files` one at a time into *merged (see above); `read` (may be
// null) gets the files actually merged.  Fails if a file is bad (without
// skip_bad) or if none could be read.
void MergeProfileFiles(const std::vector<std::string>& files, bool skip_bad,
                       ballarus_profile* merged,
                       std::vector<std::string>* read);

// What reports call the inputs: the argument, or the arguments joined by
// spaces.
std::string InputsLabel(const std::vector<std::string>& args);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_PROFILE_INPUTS_H_
