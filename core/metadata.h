// metadata.h — encoding of a TranslationUnit (core/model.h) into the
// metadata blob the plugin compiles into each object, and its decoding.
//
// Blob = ballarus_meta_header (runtime/ballarus_format.h) + body.  The body
// is the names block, then (versions 4 and 3) a zlib stream of a sequence
// of LEB128 unsigned varints and length-prefixed strings, some of them
// (version 4) differences to earlier fields, or (version 2, still read)
// that sequence itself; see metadata.cc for the exact grammar.  Encoding is
// deterministic: the same TranslationUnit always gives the same bytes (no
// pointers, no hash order, a fixed zlib level).  The header's stamp is
// ballarus_hash64 of the body as stored (compressed); its identity is
// TuIdentity(): the hash of the TU's profile path (which names the object
// it was compiled into), or of cwd + '\0' + source for a TU without one.
//
// Decoding never trusts its input: every length and index is range-checked,
// and a malformed blob yields an error naming the byte offset and the problem.
#ifndef BALLARUS_CORE_METADATA_H_
#define BALLARUS_CORE_METADATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

// The header's identity of a TU: ballarus_tu_identity (ballarus_format.h)
// of tu.profile, tu.cwd, tu.source.
uint64_t TuIdentity(const TranslationUnit& tu);

// Serialises `tu` into a complete blob (header + body) of metadata version
// `version`: BALLARUS_META_VERSION (4, the body after the names block
// deflated, with deltas), 3 (deflated, no deltas) or 2 (uncompressed, no
// deltas), the last two as older builds wrote them: for tests of the
// backward path and of the body grammar.  A body above the decoder's limit
// for inflating (256 MiB) is always written as version 2.
std::vector<uint8_t> EncodeMetadata(const TranslationUnit& tu,
                                    uint32_t version = BALLARUS_META_VERSION);

// The path-profiling extension of a function (Extension::tag
// kPathExtensionTag), present when the TU was built with path mode.  It
// tells reconstruct how to rebuild the path DAG (core/path_profile.h: the
// cuts; the numbering is recomputed from the CFG) and where the counts are.
//
//   bytes := u storage  u base  u n_paths  u flags
//            [u32 edge] cut_edges  [u32 block] cut_blocks
//            ([u32 edge] precount_edges   only with kPathFlagPrecountsKept)
//            ([u path  u where] derived    only with kPathFlagDerivedCounts;
//             where = 2 * model edge, or 2 * block + 1)
//            ([u path  u32 start] balanced  only with kPathFlagBalancedStarts)
//            (u entry_path  [u32 function  u32 block] entry_calls
//                                            only with kPathFlagEntryBalanced)
inline constexpr uint32_t kPathExtensionTag = 1;

struct PathInfo {
  enum Storage : uint32_t {
    // n_paths + 1 counters of the TU's counter array from `base`: path p
    // counts at base + p; the last one counts path numbers out of range
    // (never, unless instrumentation is broken: reconstruct reports it).
    kDense = 0,
    // Runtime hash table number `base` of the TU (ballarus_tu_desc
    // path_hashes[base]); counts arrive as the profile record's sparse
    // entries {function index, path number, count}.
    kHashed = 1,
    // No path counters: the function's edge counters (on the chords of a
    // spanning tree, as in edge mode) determine every path's count
    // (PathsDeterminedByEdges, core/path_profile.h); `base` is 0 and no
    // pre-counts are kept (the fake edges' counts are the truncated
    // paths').
    kFromEdges = 2,
  };
  uint32_t storage = kDense;
  uint64_t base = 0;
  uint64_t n_paths = 0;  // numbers are [0, n_paths); n_paths < 2^63
  uint32_t flags = 0;    // kPathFlag* bits
  std::vector<uint32_t> cut_edges;   // model edge indices, ascending
  std::vector<uint32_t> cut_blocks;  // block indices, ascending
  // kPathFlagPrecountsKept: the fake edges u->EXIT whose call block u counts
  // the path ending there before its call (model edge indices, ascending).
  std::vector<uint32_t> precount_edges;
  // kPathFlagDerivedCounts: path counts the instrumentation does not make
  // because the function's edge counters give them (path-derive in
  // mode=edge,path): where one path prefix reaches a path end, a pre-count
  // or a cut, the event is counted by every execution of one CFG edge or
  // block, so reconstruct adds that edge's or block's count to path
  // `path`'s stored count (before SettlePrecounts).  Ascending by path,
  // each path at most once; the path passes the edge or block.
  struct Derived {
    uint64_t path = 0;
    uint32_t where = 0;  // a model edge index, or a block index if `block`
    bool block = false;
    bool operator==(const Derived& o) const {
      return path == o.path && where == o.where && block == o.block;
    }
  };
  std::vector<Derived> derived;
  // kPathFlagBalancedStarts: paths whose count is not made (mode=path).
  // Path `path` either starts at block `start` (a loop header entered by
  // cut edges, or a cut block) and ends at the fake edge of the first
  // pre-counting call on its way, the only prefix reaching that call; or
  // ends into `start` (at a loop entry cut edge, the only path ending
  // there) without starting there.  Every path that starts at `start`
  // begins when a path ends at a cut edge into it (or at its cut), so the
  // paths from `start` add up to those ends; reconstruct gives `path`,
  // after SettlePrecounts, what makes them add up.  Ascending by path; each
  // start at most once.
  struct Balanced {
    uint64_t path = 0;
    uint32_t start = 0;
    bool operator==(const Balanced& o) const {
      return path == o.path && start == o.start;
    }
  };
  std::vector<Balanced> balanced;
  // kPathFlagEntryBalanced: a truncated path from the function's entry
  // whose pre-count is not made (mode=path, path-entry-balance).  Path
  // `entry_path` starts at ENTRY and ends at the fake edge of the first
  // pre-counting call on its way, the only prefix reaching that call.  The
  // function is called only by the direct calls `entry_calls` (a function
  // of the same TU, by its index, and the block of the call, which ends
  // there), so the paths from its entry add up to the executions of those
  // blocks, which the callers' profiles give; reconstruct gives
  // `entry_path`, after SettlePrecounts, what makes them add up.  Ascending
  // by (function, block); no function lists itself, and the functions'
  // lists form no cycle.
  struct Call {
    uint32_t function = 0;
    uint32_t block = 0;
    bool operator==(const Call& o) const {
      return function == o.function && block == o.block;
    }
    bool operator<(const Call& o) const {
      return function != o.function ? function < o.function : block < o.block;
    }
  };
  uint64_t entry_path = 0;
  std::vector<Call> entry_calls;
};

// Path-info flags.
inline constexpr uint32_t kPathFlagEarlyTermination = 1u << 0;  // paths cut
    // short by exit/longjmp/exceptions are counted (at the call that did
    // not return); without it they are lost.
inline constexpr uint32_t kPathFlagPrecountsKept = 1u << 1;  // with early
    // termination: the call blocks of precount_edges count the path ending
    // at their fake edge before the call and never undo it; the stored
    // count of such a truncated path therefore also counts the executions
    // that went on past the call, which reconstruct subtracts
    // (SettlePrecounts, core/path_profile.h).  Without it a returning call
    // undid its pre-count at run time.
inline constexpr uint32_t kPathFlagDerivedCounts = 1u << 2;  // `derived`
    // lists path counts taken from the function's edge counts (only in a
    // TU with edge counters: BALLARUS_META_F_EDGE or _NAIVE).
inline constexpr uint32_t kPathFlagBalancedStarts = 1u << 3;  // `balanced`
    // lists truncated paths counted by the balance of their start (only
    // with kPathFlagPrecountsKept).
inline constexpr uint32_t kPathFlagEntryBalanced = 1u << 4;  // entry_path
    // is counted by the balance of the function's calls (only with
    // kPathFlagPrecountsKept).
inline constexpr uint32_t kPathFlagsKnown =
    kPathFlagEarlyTermination | kPathFlagPrecountsKept |
    kPathFlagDerivedCounts | kPathFlagBalancedStarts |
    kPathFlagEntryBalanced;

// The order in which reconstruct solves a TU's functions: a function
// whose entry is balanced (PathInfo::entry_calls) or whose entry count
// comes from its calls (core/entry_calls.h) after every function it reads,
// `callers[i]` for function i; otherwise by index.  Shorter
// than callers.size() when those dependencies form a cycle (the functions
// on or behind it are left out).
std::vector<uint32_t> CallersFirstOrder(
    const std::vector<std::vector<uint32_t>>& callers);

std::vector<uint8_t> EncodePathInfo(const PathInfo& info);
// False with *error ("path info: ...") on malformed bytes.
bool DecodePathInfo(const std::vector<uint8_t>& bytes, PathInfo* info,
                    std::string* error);

// What gcov's reports show of a function that its CFG alone does not give
// (Extension::tag kGcovReportExtensionTag): the columns gcov's JSON reports,
// and the fake edges GCC leaves out of its .gcno.  GCC 12's branch_prob()
// puts abnormal, fake and into-EXIT edges on its spanning tree first (in
// the order of its frequency-sorted edge list); a fake edge that would
// close a cycle there is off the tree, never instrumented, marked ignored:
// gcov never sees it.  The plugin takes them from its replica of GCC's tree
// (core/gcov_arcs.h GcovCounterEdges) so that reports written in gcov's
// formats (reconstruct/gcov_view.h) see gcov's arcs exactly.  Absent in
// profiles of older builds: columns 0, no edge dropped.  (Tags 2 and 3 are
// profile use's, core/gcov_arcs.h.)
//
//   bytes := u32 start_column  u32 end_column  [u32 edge] gcov_dropped
inline constexpr uint32_t kGcovReportExtensionTag = 4;

struct GcovReportInfo {
  uint32_t start_column = 0;  // of the function's declaration
  uint32_t end_column = 0;    // of its closing brace (start_column when the
                              // function ends in another file)
  std::vector<uint32_t> dropped_edges;  // fake model edges gcov has no arc
                                        // for, ascending
  bool recorded = false;  // set by GcovReportInfoOf when the extension exists
};

std::vector<uint8_t> EncodeGcovReportInfo(const GcovReportInfo& info);
// False with *error ("gcov info: ...") on malformed bytes.
bool DecodeGcovReportInfo(const std::vector<uint8_t>& bytes, GcovReportInfo* info,
                    std::string* error);
// The function's GcovReportInfo: its kGcovReportExtensionTag extension decoded, or the
// defaults when it has none (DecodeMetadata has validated it).
GcovReportInfo GcovReportInfoOf(const Function& f);

// Result of decoding: on failure `ok` is false and `error` reads like
// "offset 123: edge 4 of function 'foo' names block 17 of 9".
struct DecodeResult {
  bool ok = false;
  std::string error;
  uint64_t offset = 0;  // byte offset of the problem within the blob
};

// Parses a complete blob.  Validates the header (magic, version, sizes,
// stamp) and the body (indices in range, counters < n_counters, etc).
DecodeResult DecodeMetadata(const uint8_t* data, size_t size,
                            TranslationUnit* tu);

}  // namespace ballarus

#endif  // BALLARUS_CORE_METADATA_H_
