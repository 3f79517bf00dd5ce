// profile_reader.h — a profile file read into its records, each function
// copy's counts gathered and its flow solved, once.
//
// The one decode-and-solve loop of ballarus: ballarus-reconstruct's loader
// (reconstruct/loaded_profile.h: COMDAT grouping, gcov line counts) and the
// plugin's weights=profile=FILE (plugin/profile_weights.h: exact counts as
// spanning-tree weights) both read profiles through ReadProfile.  GCC-free,
// and linked into the plugin, so its API reports errors by return value and
// never throws.
//
// Reading = parse and validate the file (runtime/profile_io.h), decode every
// record's metadata blob (core/metadata.h), and for every function of every
// record (a "copy": a COMDAT function has one per TU that emitted it):
//   * its measured edge counts (`known`): its edge counters, or, when it has
//     no edge counters (mode=path alone), the counts derived from its paths;
//   * its Ball–Larus path profile, when its metadata has a kPathExtensionTag
//     extension (core/metadata.h PathInfo): the path DAG rebuilt from the
//     CFG and the recorded cuts (core/path_profile.h) and renumbered exactly
//     (GMP); the numbering must give the recorded n_paths.  Counts come from
//     the dense counters [base, base + n_paths] or from the record's sparse
//     entries of the function; every executed path is decoded and its count
//     added to the CFG edges it takes;
//   * its flow, solved from `known` (core/flow.h SolveFlow); a function
//     whose entry count comes from its callers (core/entry_calls.h) is
//     solved after them, its entry edge known as the sum of their call
//     blocks' counts.
// Counts are residues modulo 2^64 (runtime/ballarus_format.h): sums of
// counts are taken modulo 2^64.
#ifndef BALLARUS_CORE_PROFILE_READER_H_
#define BALLARUS_CORE_PROFILE_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "runtime/profile_io.h"

namespace ballarus {

// The Ball–Larus path profile of one function (a single copy, or the sum of
// COMDAT copies whose path extensions have equal n_paths and cuts: copies
// with other cuts are never summed, they stay separate functions).
struct LoadedPaths {
  PathInfo info;  // the first copy's; `flags` is the AND over the copies
  PathDag dag;
  PathNumbering numbering;  // numbering.total() == info.n_paths
  // Executed paths: path number -> count (non-zero), summed modulo 2^64.
  std::map<uint64_t, uint64_t> counts;
  // The same paths decoded, once: path number -> its DAG edges, ENTRY to
  // EXIT (DecodePath).
  std::map<uint64_t, std::vector<uint32_t>> decoded;
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
  // Sum of the in-range counts as stored (modulo 2^64): the counter updates
  // the run executed, one per path end plus, with kPathFlagPrecountsKept,
  // one per pre-counted call (`counts` are settled: SettlePrecounts).
  uint64_t updates = 0;
  // PathInfo::kFromEdges: why the edge counts gave no path counts (a
  // needed edge count unknown, or counts that are not whole paths: racy or
  // damaged counters); empty when they did.  `counts` is then empty.
  std::string from_edges_problem;
  // kPathFlagDerivedCounts: why a derived path count is missing (its edge or
  // block count unknown: racy or damaged counters); empty when none is.
  // Also kPathFlagEntryBalanced's: a calling block's count unknown.
  std::string derived_problem;

  bool early_termination() const {
    return (info.flags & kPathFlagEarlyTermination) != 0;
  }
  bool in_dag(size_t edge) const { return dag.dag_edge_of_cfg[edge] >= 0; }
};

// One function of one record, read and solved.
struct FunctionCopy {
  std::vector<Count> known;          // measured (or path-derived) edge
                                     // counts, parallel to the edges
  bool edge_counters = false;        // its edges carry counters (naive or
                                     // edge mode)
  std::optional<LoadedPaths> paths;  // path mode
  FlowResult flow;                   // SolveFlow(function, known)
  // Edge mode, a function whose entry count its callers' call blocks give
  // (core/entry_calls.h): that edge, whose `known` count is their sum, and
  // why it is unknown if a call block's count is (empty otherwise).
  std::optional<uint32_t> entry_from_calls;
  std::string entry_problem;

  // mode=path alone: `known` holds the path-derived counts of the edges in
  // the path DAG; other edges (abnormal, ignored) are left to flow solving.
  bool edges_from_paths() const { return paths && !edge_counters; }
};

// One record of the file with its decoded metadata and its functions.
struct LoadedTu {
  const ballarus_profile_record* record = nullptr;
  uint64_t file_offset = 0;  // where the record starts in the file
  TranslationUnit tu;
  std::vector<FunctionCopy> copies;  // parallel to tu.functions
};

// A profile file as read: owns the parsed file, which `LoadedTu::record`
// points into.
class ProfileRecords {
 public:
  ProfileRecords() = default;
  ProfileRecords(const ProfileRecords&) = delete;
  ProfileRecords& operator=(const ProfileRecords&) = delete;
  ~ProfileRecords();

  ballarus_profile raw{};
  std::vector<LoadedTu> tus;  // in file (stamp) order
  // Some TU was built with path mode (BALLARUS_META_F_PATH) or some
  // function carries path data.
  bool has_paths = false;
};

// Reads `path` into *out (which must be fresh).  On failure returns false
// and sets *error to one line without the file name, e.g. "offset 120:
// record 0: metadata: function 'foo': edge 1 names block 42 of 6" (file
// offsets).  Path data that cannot be used is such an error too: cuts that
// do not give a DAG, a numbering that disagrees with the recorded n_paths,
// sparse entries naming a function without a hashed path table.  Counts
// that are merely wrong (out-of-range path numbers, negative residues)
// read fine; `ballarus-reconstruct verify` reports them.
bool ReadProfile(const std::string& path, ProfileRecords* out,
                 std::string* error);

// The same for a profile already parsed (e.g. several files merged in
// memory, reconstruct/profile_inputs.h): takes *raw over (leaving it
// empty) and decodes it as ReadProfile decodes a file; error offsets are
// those of the profile serialised.
bool ReadProfileFrom(ballarus_profile* raw, ProfileRecords* out,
                     std::string* error);

// The decoding step of both: out->raw is parsed, out->tus empty.
bool DecodeProfile(ProfileRecords* out, std::string* error);

// Named runs (runtime/ballarus_format.h): the test names of a profile's
// named records, sorted (memcmp), each once.
std::vector<std::string> TestNames(const ballarus_profile& raw);
std::vector<std::string> TestNames(const ProfileRecords& all);

// The counts of test `name` alone, decoded and solved like a profile: one
// record per TU the test executed (its counters zero but for the test's
// pairs, its sparse entries, its runs), so that every report of a profile
// works on one test.  The records borrow all.raw's metadata: `all` must
// outlive *out.  Fails when `name` has no named record or when decoding
// fails (error as DecodeProfile's, offsets of the whole profile's records
// are not meaningful then).
bool ReadNamedRun(const ProfileRecords& all, const std::string& name,
                  ProfileRecords* out, std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PROFILE_READER_H_
