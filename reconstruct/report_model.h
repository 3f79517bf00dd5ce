// report_model.h — everything a profile says, gathered once for every
// report to read.
//
// BuildReport turns a loaded profile (reconstruct/loaded_profile.h) into
// plain data: the program's source files with their line counts, its
// functions with their blocks, edges, lines, conservation problems and
// executed Ball–Larus paths, and program-wide totals.  Every writer of
// ballarus-reconstruct (show, paths, stats and verify, as text and JSON)
// reads this model and nothing else, the way gcovr's writers read its one
// coverage model and llvm-cov's views read one CoverageReport; a new format
// (gcov, lcov, HTML, diff) adds a writer and touches nothing here.  The one
// question the model cannot answer ahead of time — the blocks of an
// arbitrary path number, executed or not (`paths --decode`) — is asked
// through DecodePathReport.
//
// Source positions name files by index into Report::files (one per
// absolute, lexically normalised path), so equal positions compare equal
// whichever TU recorded them, however it spelled the file.
// Counts are as loaded: `Count` (std::optional<uint64_t>) is unknown where
// flow propagation could not determine it; path counts are residues modulo
// 2^64 (runtime/ballarus_format.h).  GCC-free.
#ifndef BALLARUS_RECONSTRUCT_REPORT_MODEL_H_
#define BALLARUS_RECONSTRUCT_REPORT_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/flow.h"
#include "core/metadata.h"
#include "core/model.h"
#include "reconstruct/loaded_profile.h"

namespace ballarus {
namespace report {

// A source line: `file` indexes Report::files.
struct SourceLine {
  uint32_t file = 0;
  uint32_t line = 0;
  bool operator==(const SourceLine& o) const {
    return file == o.file && line == o.line;
  }
  bool operator!=(const SourceLine& o) const { return !(*this == o); }
};

// How an edge leaves its block, the first of these that applies: an
// exception edge, abnormal, fake, the true/false arm of a condition, a
// switch case, a fall-through, else a jump.
enum class EdgeKind : uint8_t {
  kEh,
  kAbnormal,
  kFake,
  kTrue,
  kFalse,
  kSwitch,
  kFallthrough,
  kJump,
  kReentry,  // ballarus' own counted re-entry edge (kEdgeReentry, not fake)
};
EdgeKind KindOfEdge(uint32_t edge_flags);
// "eh", "abnormal", "fake", "true", "false", "switch", "fallthrough", "jump",
// "reentry".
const char* EdgeKindName(EdgeKind kind);
// Names of the EdgeFlag bits set, in bit order ("fallthru", "true", "false",
// "eh", "abnormal", "fake", "switch", "ignored", "split", "critical",
// "reentry").
std::vector<std::string> EdgeFlagNames(uint32_t edge_flags);

// "dense" or "hashed" (PathInfo::Storage).
const char* PathStorageName(uint32_t storage);

struct BlockReport {
  Count count;
  std::vector<SourceLine> lines;  // Block::lines, in .gcno order
};

struct EdgeReport {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t flags = 0;  // EdgeFlag bits (core/model.h)
  EdgeKind kind = EdgeKind::kJump;
  Count count;               // solved
  bool counted = false;      // measured, or path-derived (edges_from_paths)
  bool has_counter = false;  // carries an edge counter
  // The function's entry edge whose count is the sum of its callers' call
  // blocks (core/entry_calls.h): known without a counter, not `counted`.
  bool from_calls = false;
  // Path mode: the edge belongs to the path DAG, and the sum of the counts
  // of the executed paths over it (modulo 2^64).
  bool in_path_dag = false;
  uint64_t path_derived = 0;
  // An arc of gcov's .gcno: GCC writes every edge but the abnormal ones it
  // replaces by fake edges and the fake edges off its spanning tree
  // (core/metadata.h GcovInfo).  Reports in gcov's formats read only these.
  bool gcov_arc = true;

  bool ignored() const { return (flags & kEdgeIgnored) != 0; }
};

struct LineCount {
  SourceLine where;
  int64_t count = 0;  // gcov's line count (gcov_type)
  // gcov's flags: a block on the line never ran ("N*"); every block on
  // the line is exceptional, only reachable by a throw ("=====" when 0).
  bool unexecuted_block = false;
  bool exceptional = false;
};

// One Ball–Larus path as it ran.
struct PathReport {
  enum Start { kFromEntry, kAfterBackEdge, kAfterCut, kAtCutLoop };
  enum End { kReturn, kNoReturn, kBackEdge, kCut, kAbnormal, kLoopEntry };
  uint64_t number = 0;
  uint64_t count = 0;
  // The blocks the path executes: PathBlocks (core/path_profile.h) without
  // the cut block a kCut path enters (the next path starts there), so over
  // a complete profile a block's count is its number of occurrences.
  // Starts with ENTRY or the restart block; kReturn and kNoReturn paths end
  // with EXIT.
  std::vector<uint32_t> blocks;
  Start start = kFromEntry;  // began at ENTRY, after a back edge, at a cut
                             // block, or (kAtCutLoop) at the header of a
                             // loop whose entry edges are cut as well as its
                             // back edge (path-loop-cuts): on entering the
                             // loop or after its back edge
  End end = kReturn;         // returned, did not (a fake edge into EXIT:
                             // exit(), longjmp, an exception), a back
                             // edge, a cut, or kAbnormal: the fake edge
                             // into EXIT of a block with an abnormal out
                             // edge (a computed or nonlocal goto, a call
                             // that may longjmp to a setjmp receiver): the
                             // path left by that jump, and the next one
                             // starts ENTRY -> its target; kLoopEntry: a
                             // loop's entry edge that is cut
                             // (path-loop-cuts)
  uint32_t target = 0;       // kBackEdge, kLoopEntry: the cut edge's target
                             // (the loop's header); kCut: the cut block
  // The blocks' source lines, consecutive duplicates dropped.
  std::vector<SourceLine> lines;
};

// A path-mode function's path profile.
struct PathProfileReport {
  uint64_t n_paths = 0;
  uint32_t storage = PathInfo::kDense;  // PathInfo::Storage
  bool early_termination = false;       // kPathFlagEarlyTermination
  std::vector<uint32_t> cut_edges;      // edge indices, ascending
  // Of cut_edges, the loop entry edges (path-loop-cuts); the others are
  // back edges.  Ascending.
  std::vector<uint32_t> loop_entry_edges;
  std::vector<uint32_t> cut_blocks;     // ascending
  uint64_t total = 0;         // sum of the in-range counts (modulo 2^64)
  uint64_t updates = 0;       // counter updates: path ends + kept pre-counts
  // PathInfo::kFromEdges: why the edge counts gave no path counts (empty
  // when they did).
  std::string from_edges_problem;
  // PathInfo::derived: why a path count the edge counters give is missing
  // (empty when none is).
  std::string derived_problem;
  // Paths whose count the edge counters give (PathInfo::derived).
  size_t derived_paths = 0;
  // Truncated paths whose count is their start's balance
  // (PathInfo::balanced).
  size_t balanced_paths = 0;
  // 1 when a truncated path from the entry is counted by the balance of
  // the function's calls (path-entry-balance), else 0.
  size_t entry_balanced_paths = 0;
  uint64_t out_of_range = 0;  // counts of numbers >= n_paths
  // Hashed storage: each out-of-range number with its count, ascending.
  std::vector<std::pair<uint64_t, uint64_t>> out_of_range_keys;
  // Every executed path, by count descending, ties by ascending number.
  std::vector<PathReport> executed;
};

// One function: a single copy, or COMDAT copies summed.
struct FunctionReport {
  std::string name;       // assembler name
  std::string demangled;  // may be empty
  uint32_t file = 0;      // into Report::files
  uint32_t line = 0;
  uint32_t end_line = 0;
  // gcov's columns of the first and last line (0 in profiles of builds
  // that did not record them: core/metadata.h GcovInfo).
  uint32_t start_column = 0, end_column = 0;
  uint32_t checksum = 0;  // cfg_checksum
  uint32_t flags = 0;     // FunctionFlag bits
  std::vector<uint32_t> tus;  // into Report::tus, sorted by source name
  bool edge_counters = false;     // edges carry counters (naive, edge mode)
  bool edges_from_paths = false;  // edge counts derived from paths (path
                                  // mode alone): `counted` = path-derived
  Count execution_count;          // ENTRY's count through its real edges
                                  // (not ballarus' re-entry edges)
  Count exit_to_entry;            // the virtual EXIT->ENTRY edge
  // Edge mode: the entry count comes from the callers' call blocks (an
  // edge is `from_calls`); why it is unknown, empty when it is known.
  bool entry_from_calls = false;
  std::string entry_problem;
  std::vector<BlockReport> blocks;  // [0] ENTRY, [1] EXIT
  std::vector<EdgeReport> edges;    // model order
  std::vector<LineCount> lines;     // its own gcov line counts
  // Conservation problems (core/flow.h CheckConservation), in block order.
  std::vector<FlowIssue> flow_issues;
  std::optional<PathProfileReport> paths;
  // Counter work: edges gcov has arcs for (not ignored), the counters on
  // them, and the sum of those counters (increments executed; saturating).
  uint64_t arcs = 0, counters = 0, increments = 0;
  const LoadedFunction* loaded = nullptr;  // for DecodePathReport

  const std::string& display_name() const {
    return demangled.empty() ? name : demangled;
  }
};

struct BlockRef {
  uint32_t function = 0;  // into Report::functions
  uint32_t block = 0;
};

// One line of a source file that has code.
struct FileLine {
  uint32_t line = 0;
  // gcov's count of the line (per TU over all its functions, summed over
  // TUs); unknown for a line whose code only compiler-generated functions
  // hold (gcov drops those).
  std::optional<int64_t> count;
  bool unexecuted_block = false;  // gcov's flags, as LineCount's
  bool exceptional = false;
  // Its blocks: FileReport::blocks[first_block, first_block + n_blocks).
  uint32_t first_block = 0, n_blocks = 0;
};

struct FileReport {
  std::vector<uint32_t> functions;  // whose `file` it is, Report order
  std::vector<FileLine> lines;      // ascending
  // The blocks on each line, line by line, then by function and block.
  std::vector<BlockRef> blocks;
};

// A function as one TU emitted it.
struct TuFunction {
  static constexpr uint32_t kNone = UINT32_MAX;
  // Into Report::functions; kNone for a function reports leave out (an
  // extern inline body, instrumented for profile use only).
  uint32_t function = kNone;
  // This copy's own solved counts when the function sums several COMDAT
  // copies; null when the function's counts are this copy's.  They point
  // into the loaded profile.
  const std::vector<Count>* edges = nullptr;
  const std::vector<Count>* blocks = nullptr;
};

struct TuReport {
  std::string source, cwd, compiler;
  uint32_t flags = 0;  // BALLARUS_META_F_*
  uint64_t file_offset = 0;
  uint64_t runs = 0;
  uint64_t sparse_entries = 0;
  // Its functions in the order the TU lists them (gcov's .gcno order), for
  // reports in gcov's per-TU semantics (reconstruct/gcov_view.h).
  std::vector<TuFunction> functions;
  // Report file index -> this TU's own spelling of it (gcov names a
  // source as its TU compiled it).
  std::map<uint32_t, std::string> spelling;
  const std::string& SpellingOf(uint32_t file,
                                const std::string& otherwise) const {
    auto it = spelling.find(file);
    return it == spelling.end() ? otherwise : it->second;
  }
};

// Program-wide sums over the functions.
struct Totals {
  uint64_t blocks = 0, edges = 0;  // every block and edge
  uint64_t arcs = 0, counters = 0, increments = 0;  // as FunctionReport
  // Path mode: functions with path data, their dense counter slots
  // (n_paths + 1 each), hashed functions, the file's sparse entries, path
  // increments (every count, out-of-range ones included; modulo 2^64) and
  // distinct executed paths.
  uint64_t path_functions = 0, path_dense_slots = 0, path_hashed_functions = 0,
           path_hashed_entries = 0, path_increments = 0, distinct_paths = 0;
};

struct Report {
  std::string profile;  // the file's path as given
  std::string test;     // the named test whose counts these are alone
                        // (--test, LoadedProfile::test), or empty
  uint64_t runs = 0;
  bool has_paths = false;  // some TU built with path mode, or path data
  // One per absolute path (LoadedProfile::files): shown as its shortest
  // spelling as compiled; `paths` absolute, lexically normalised;
  // `spellings` every spelling as compiled.
  std::vector<std::string> files, paths;
  std::vector<std::vector<std::string>> spellings;
  std::vector<FileReport> by_file;  // parallel to files
  std::vector<TuReport> tus;        // file order
  // By (file, line, name, checksum, first TU's source).
  std::vector<FunctionReport> functions;
  Totals totals;

  const std::string& file_name(uint32_t file) const { return files[file]; }
};

// Builds the model; `p` must outlive it (DecodePathReport reads it).
Report BuildReport(const LoadedProfile& p);

// Path `number` of path-mode function `f`, executed or not, with its count
// (0 if it never ran).  False if f has no paths or number >= n_paths.
bool DecodePathReport(const FunctionReport& f, uint64_t number,
                      PathReport* out);

}  // namespace report
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_REPORT_MODEL_H_
