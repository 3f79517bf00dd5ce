// gcda_export.h — turns ballarus profiles into the .gcda files GCC 12's
// -fprofile-use reads, so that a program profiled with ballarus is
// optimised exactly as if it had been profiled with -fprofile-arcs.
//
// Per translation unit (one .gcda per object, like gcov), from the gcov
// metadata extensions the plugin recorded (core/gcov_arcs.h):
//   * functions in the TU's order (GCC's FOR_EACH_DEFINED_FUNCTION order,
//     gcov's too), each with its ident, lineno and cfg checksums and the
//     counts of the edges gcov would have counted, in gcov's counter order.
//     The counts are the function's *own* copy's solved edge counts
//     (core/profile_reader.h FunctionCopy::flow): a COMDAT function is written per object, the copy
//     the linker kept with its counts and the others with zeros, as gcov's
//     per-object counters hold them;
//   * the object summary: runs = the dumps of this TU merged in the inputs;
//     sum_max = the sum over the input profiles of the largest gcov counter
//     value over the whole profile.  libgcov adds each run's largest counter
//     of the module; for a profile of one run of one program that is the
//     same number.  A profile of several merged runs only knows the merged
//     counts, whose largest is the sum of each run's largest when the same
//     counter is the largest in every run, and at most that otherwise (a
//     note says so: keep one profile per run for gcov's exact figure);
//   * version: the compiler's GCOV_VERSION; stamp: the TU's ballarus stamp
//     folded to 32 bits (GCC's -fprofile-use ignores it; libgcov would
//     overwrite rather than merge into such a file); checksum: GCC's object
//     checksum of the functions written.
//
// Where: kInPlace, the file the instrumented compile's own flags name
// (coverage_init's da_file_name, relative names against the compile's
// working directory); kDir, where a compile with -fprofile-use=DIR (or
// -fprofile-dir=DIR) of the same object looks (DIR/mangled-object-path.gcda).
//
// Never silently wrong: a function whose gcov counters cannot all be
// determined (or are negative residues) is left out of its .gcda — GCC then
// reports its profile missing — and a note says why; functions gcov profiles
// but ballarus does not instrument (thunks, extern inline bodies) are named
// in a note.  Two different builds of one .gcda, or a TU without gcov
// metadata, are errors.
#ifndef BALLARUS_RECONSTRUCT_GCDA_EXPORT_H_
#define BALLARUS_RECONSTRUCT_GCDA_EXPORT_H_

#include <string>
#include <vector>

#include "core/gcda.h"
#include "core/profile_reader.h"

namespace ballarus {

struct GcdaExportOptions {
  enum Where { kInPlace, kDir };
  Where where = kInPlace;
  std::string dir;  // kDir
};

struct GcdaOutput {
  std::string path;    // where the file goes
  std::string source;  // the TU's source, for messages
  GcdaFile file;
};

struct GcdaExport {
  std::vector<GcdaOutput> outputs;  // sorted by path
  // One line each, e.g. "a.c: function 'f': ...; left out of a.gcda";
  // sorted.
  std::vector<std::string> notes;
};

// One input profile, read (core/profile_reader.h ReadProfile).
struct GcdaInput {
  std::string path;  // for messages
  const ProfileRecords* records = nullptr;
};

// `profiles` are profiles of one program (one module; see above for what
// several merged runs or modules mean for sum_max).  On bad input returns
// false with *error = "FILE: problem" (one line).
bool BuildGcdaFiles(const std::vector<GcdaInput>& profiles,
                    const GcdaExportOptions& options, GcdaExport* out,
                    std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_GCDA_EXPORT_H_
