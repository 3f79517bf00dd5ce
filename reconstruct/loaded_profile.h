// loaded_profile.h — a profile file loaded into the grouped, solved form
// ballarus-reconstruct reports on (reconstruct/report_model.h is built from
// it).
//
// Loading = ReadProfile (core/profile_reader.h: parse and validate the file,
// decode every record's metadata, gather every function copy's edge and
// path counts and solve its flow, once), then:
//   * gcov's line counts of every source file (core/gcov_lines.h), per TU
//     over all of its functions from each copy's own solved counts, summed
//     over TUs;
//   * functions grouped: COMDAT copies flagged kFunctionComdat with equal
//     assembler name and cfg_checksum, identical graphs and equal path cuts
//     are summed into one entry listing all their TUs (static functions
//     with equal names in different TUs stay apart).  A group's solved flow
//     is the sum of its copies' solved flows — flow propagation is linear
//     as long as no copy meets a negative derivation, no sum wraps and the
//     copies know the same edges (checked); otherwise, and only then, the
//     group's summed counts are solved again;
//   * each function's own gcov line counts.
// A function copy is solved once: the per-TU line counts and the grouped
// view read the same solution.  Functions instrumented only for profile use (extern
// inline bodies, core/gcov_arcs.h IsProfileUseOnly) are left out of both,
// as gcov's reports leave them out (`gcda` reads them from ReadProfile).
#ifndef BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
#define BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/gcov_lines.h"
#include "core/model.h"
#include "core/profile_reader.h"

namespace ballarus {

// One function as shown: a single copy, or the sum of COMDAT copies.
struct LoadedFunction {
  const Function* function = nullptr;  // the graph (first copy)
  const TranslationUnit* tu = nullptr;  // the first copy's TU (file names)
  std::vector<size_t> tus;             // indices into records.tus, sorted
                                       // by source name
  std::vector<Count> known;            // measured edge counts, summed
                                       // (path-derived: see edges_from_paths)
  bool edge_counters = false;          // its edges carry counters (naive or
                                       // edge mode)
  std::optional<LoadedPaths> paths;    // path mode
  FlowResult flow;                     // == SolveFlow(*function, known)
  // Edge mode: the entry edge whose `known` count its callers' call blocks
  // give (core/entry_calls.h), and why it is unknown (empty if it is not).
  std::optional<uint32_t> entry_from_calls;
  std::string entry_problem;
  std::vector<GcovLine> lines;         // gcov line counts, files of `tu`
  // Each copy, parallel to `tus`: its index among its TU's functions and,
  // when the function sums several copies, that copy's own solved counts
  // (gcov's view is per TU: reconstruct/gcov_view.h).  A single copy's
  // counts are `flow`'s, and `edges`/`blocks` stay empty.
  struct Copy {
    uint32_t index = 0;
    std::vector<Count> edges, blocks;
  };
  std::vector<Copy> copies;

  const std::string& file_name() const { return tu->files[function->file]; }
  const std::string& display_name() const {
    return function->demangled.empty() ? function->name
                                       : function->demangled;
  }
  // mode=path alone: `known` holds the path-derived counts of the edges in
  // the path DAG; other edges (abnormal, ignored) are left to flow solving.
  bool edges_from_paths() const { return paths && !edge_counters; }
};

struct LoadedProfile {
  std::string path;
  // The named test loaded alone (`--test`), or empty: the whole profile.
  // With a test, `records` are the test's (reconstruct/named_runs.h
  // TestProfile) and borrow the metadata of `whole`, the profile as read
  // (parsed, not decoded).
  std::string test;
  std::unique_ptr<ProfileRecords> whole;
  // The file as read.  LoadProfile moves every function copy's counts into
  // `functions`: records.tus[t].copies is empty afterwards.
  ProfileRecords records;
  // Sorted by (file, line, name, checksum, first TU's source).
  std::vector<LoadedFunction> functions;
  // The source files: one per absolute, lexically normalised path (every
  // TU's names resolved against its compile directory, core/paths.h
  // SourcePath), so "src/os.cc" and "test/../src/os.cc" of one directory
  // are one file, and "a.c" of two directories two.  `files` shows each
  // by its shortest spelling as compiled, `paths` holds the absolute path,
  // `spellings` every spelling as compiled (sorted).  Ordered by (files,
  // paths).  Per TU, its file table's entries as indices into `files`.
  std::vector<std::string> files, paths;
  std::vector<std::vector<std::string>> spellings;
  std::vector<std::vector<uint32_t>> tu_files;
  // Line counts of every source file, computed the way gcov 12 does: per
  // TU over all of its functions at once (a line shared by several
  // functions, e.g. inlined header code, is accumulated across them), then
  // summed over TUs.  By (file, line), ascending; `file` indexes `files`.
  // With gcov's flags, combined over the line's entries as gcov combines a
  // source line's (unexecuted_block or-ed; exceptional only if it is in
  // every entry: gcov ors "unexceptional").
  struct FileLineCount {
    uint32_t file = 0;
    uint32_t line = 0;
    int64_t count = 0;
    bool unexecuted_block = false;
    bool exceptional = true;
  };
  std::vector<FileLineCount> file_lines;

  const std::vector<LoadedTu>& tus() const { return records.tus; }
  uint64_t runs() const { return records.raw.runs; }
  // Some TU was built with path mode or some function carries path data.
  bool has_paths() const { return records.has_paths; }
};

// Loads `path` into *out (which must be fresh).  On failure returns false
// and sets *error to one line without the file name (ReadProfile's
// errors, core/profile_reader.h).  With a `test` name, loads the counts
// of that named test alone (see `test` above); a name the profile does not
// hold is an error listing the names it does (named_runs.h NoSuchTest).
bool LoadProfile(const std::string& path, LoadedProfile* out,
                 std::string* error, const std::string& test = {});

// The same for a profile already parsed (several files merged in memory:
// reconstruct/profile_inputs.h), taken over from *raw; `label` becomes
// `path` (what reports call the profile).
bool LoadProfileFrom(ballarus_profile* raw, const std::string& label,
                     LoadedProfile* out, std::string* error,
                     const std::string& test = {});

// The counts of named test `test` of `whole`, or with an empty `test` the
// counts of its unnamed runs (reconstruct/named_runs.h), loaded into *out
// (fresh) as a profile called `label`.  Its records borrow `whole`'s
// metadata: `whole` must outlive *out.  A test `whole` does not hold is an
// error (NoSuchTest).
bool LoadPartOf(const ballarus_profile& whole, const std::string& test,
                const std::string& label, LoadedProfile* out,
                std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
