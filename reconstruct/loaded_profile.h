// loaded_profile.h — a profile file loaded into the decoded, merged,
// solved in-memory form every ballarus-reconstruct subcommand renders.
//
// Loading = read and validate the file (runtime/profile_io.h), decode every
// record's metadata blob (core/metadata.h), group functions (COMDAT copies
// flagged kFunctionComdat with equal assembler name and cfg_checksum and
// identical graphs are summed into one entry listing all their TUs; static
// functions with equal names in different TUs stay apart), solve every
// function's edge and block counts (core/flow.h) and compute gcov's line
// counts (core/gcov_lines.h).  Every subcommand (show, verify, stats,
// paths) renders the same structure.
//
// Path profiles (mode=path, mode=edge,path): a function whose metadata has
// a kPathExtensionTag extension (core/metadata.h PathInfo) gets its path DAG
// rebuilt from the CFG and the recorded cuts (core/path_profile.h) and
// renumbered exactly (GMP); the numbering must give the recorded n_paths.
// Its counts come from the dense counters [base, base + n_paths] or from the
// record's sparse entries of the function.  When the function has no edge
// counters (mode=path alone), every path edge's count is derived from the
// paths (the sum of the counts of the paths over it) and flow solving runs
// on those as on measured counters, so every subcommand treats a path-only
// function like an edge-profiled one.  Counts are residues modulo 2^64
// (runtime/ballarus_format.h): sums of counts are taken modulo 2^64.
#ifndef BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
#define BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/gcov_lines.h"
#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "runtime/profile_io.h"

namespace ballarus {

// One record of the file with its decoded metadata.
struct LoadedTu {
  const ballarus_profile_record* record = nullptr;
  uint64_t file_offset = 0;  // where the record starts in the file
  TranslationUnit tu;
};

// The Ball–Larus path profile of one function (a single copy, or the sum of
// COMDAT copies whose path extensions have equal n_paths and cuts: copies
// with other cuts are never summed, they stay separate functions).
struct LoadedPaths {
  PathInfo info;  // the first copy's; `flags` is the AND over the copies
  PathDag dag;
  PathNumbering numbering;  // numbering.total() == info.n_paths
  // Executed paths: path number -> count (non-zero), summed modulo 2^64.
  std::map<uint64_t, uint64_t> counts;
  // Counts of path numbers >= n_paths (instrumentation errors): dense, the
  // overflow counter base + n_paths; hashed, the sum over such keys, which
  // out_of_range_keys lists.
  uint64_t out_of_range = 0;
  std::map<uint64_t, uint64_t> out_of_range_keys;
  // Per CFG edge: the sum of the counts of the paths over it (modulo 2^64;
  // 0 for edges not in the DAG).
  std::vector<uint64_t> derived;
  // Sum of all in-range counts (modulo 2^64).
  uint64_t total = 0;

  bool early_termination() const {
    return (info.flags & kPathFlagEarlyTermination) != 0;
  }
  bool in_dag(size_t edge) const { return dag.dag_edge_of_cfg[edge] >= 0; }
};

// How one path reads: its executed blocks and how it began and ended.
struct PathView {
  enum Start { kFromEntry, kAfterBackEdge, kAfterCut };
  enum End { kReturn, kNoReturn, kBackEdge, kCut };
  // PathBlocks (core/path_profile.h) without the cut block a kCut path
  // enters (the next path starts there): every listed block ran on this
  // path, so over a complete profile a block's count is its number of
  // occurrences.  Starts with ENTRY or the restart block; kReturn and
  // kNoReturn paths end with EXIT.
  std::vector<uint32_t> blocks;
  Start start = kFromEntry;
  End end = kReturn;
  uint32_t target = 0;  // kBackEdge: the back edge's target; kCut: the cut
                        // block
};
PathView DescribePath(const Function& f, const PathDag& dag,
                      const std::vector<uint32_t>& dag_edges);

// One function as shown: a single copy, or the sum of COMDAT copies.
struct LoadedFunction {
  const Function* function = nullptr;  // the graph (first copy)
  const TranslationUnit* tu = nullptr;  // the first copy's TU (file names)
  std::vector<size_t> tus;             // indices into LoadedProfile::tus,
                                       // sorted by source name
  std::vector<Count> known;            // measured edge counts, summed
                                       // (path-derived: see edges_from_paths)
  bool edge_counters = false;          // its edges carry counters (naive or
                                       // edge mode)
  std::optional<LoadedPaths> paths;    // path mode
  FlowResult flow;
  std::vector<GcovLine> lines;         // gcov line counts, files of `tu`

  const std::string& file_name() const { return tu->files[function->file]; }
  const std::string& display_name() const {
    return function->demangled.empty() ? function->name
                                       : function->demangled;
  }
  // mode=path alone: `known` holds the path-derived counts of the edges in
  // the path DAG; other edges (abnormal, ignored) are left to flow solving.
  bool edges_from_paths() const { return paths && !edge_counters; }
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
  // Some TU was built with path mode (BALLARUS_META_F_PATH) or some
  // function carries path data.
  bool has_paths = false;
};

// Loads `path`.  On failure returns false and sets *error to one line
// without the file name, e.g. "offset 120: record 0: metadata: function
// 'foo': edge 1 names block 42 of 6" (file offsets; the caller prefixes the
// file name).  Path data that cannot be used is such an error too: cuts
// that do not give a DAG, a numbering that disagrees with the recorded
// n_paths, sparse entries naming a function without a hashed path table.
// Counts that are merely wrong (out-of-range path numbers, negative
// residues) load fine; `verify` reports them.
bool LoadProfile(const std::string& path, LoadedProfile* out,
                 std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_LOADED_PROFILE_H_
