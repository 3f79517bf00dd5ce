// model.h — the GCC-free description of an instrumented translation unit.
//
// The plugin fills these structures from GCC's CFGs and serialises them with
// EncodeMetadata (core/metadata.h) into the blob compiled into the object;
// ballarus-reconstruct decodes the blob from a profile and rebuilds counts.
//
// Graph conventions (identical to GCC's and therefore to gcov's .gcno):
//   * block 0 is ENTRY, block 1 is EXIT, blocks 2.. are the basic blocks in
//     GCC's index order after compact_blocks();
//   * `edges` lists, block by block in index order, each block's successor
//     edges in GCC's succs order — exactly gcov's GCOV_TAG_ARCS order;
//   * the virtual edge EXIT->ENTRY of the papers' closed graph is implicit
//     (never stored, never counted); every algorithm adds it itself.
#ifndef BALLARUS_CORE_MODEL_H_
#define BALLARUS_CORE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ballarus {

inline constexpr uint32_t kEntryBlock = 0;
inline constexpr uint32_t kExitBlock = 1;

// Edge flags.  The low bits mirror GCC's edge flags; the others are ballarus'.
enum EdgeFlag : uint32_t {
  kEdgeFallthru = 1u << 0,   // EDGE_FALLTHRU
  kEdgeTrue = 1u << 1,       // EDGE_TRUE_VALUE
  kEdgeFalse = 1u << 2,      // EDGE_FALSE_VALUE
  kEdgeEh = 1u << 3,         // EDGE_EH: exception edge (can hold a counter:
                             // GIMPLE splits it with a new landing pad)
  kEdgeAbnormal = 1u << 4,   // EDGE_ABNORMAL / EDGE_ABNORMAL_CALL (setjmp,
                             // computed goto, nonlocal goto)
  kEdgeFake = 1u << 5,       // EDGE_FAKE: edge to EXIT after a call that may
                             // not return / a noreturn block, or ENTRY->block
                             // standing for abnormal entries (as gcov adds)
  kEdgeSwitch = 1u << 6,     // the source block ends with a switch
  kEdgeIgnored = 1u << 7,    // an abnormal edge replaced by fake ENTRY/EXIT
                             // edges (gcov's "ignore"): its count is unknown
                             // and it takes no part in flow conservation
  kEdgeSplit = 1u << 8,      // its counter needed the edge to be split
  kEdgeCritical = 1u << 9,   // source has >1 successors, target >1 preds
  // An edge ENTRY->block of ballarus' own: in neither GCC's CFG nor gcov's
  // graph (a model-only edge, listed after ENTRY's real successors).  It
  // carries re-entries gcov cannot see, so that every count is a
  // circulation: with kEdgeFake, the second returns of a setjmp/vfork whose
  // block is also entered from ENTRY (gcov adds its fake ENTRY edge only to
  // receivers without one; its count is derived); without, an activation
  // going on after a call that forked (in the child, whose counts restart
  // at zero) or reset the counters (counted by an epoch check at the call's
  // return).  gcov's line counts leave these edges out.
  kEdgeReentry = 1u << 10,
};

// Where an edge's counter, if any, lives.
inline constexpr int64_t kNoCounter = -1;

struct Location {
  uint32_t file = 0;  // index into TranslationUnit::files
  uint32_t line = 0;
  bool operator==(const Location& o) const {
    return file == o.file && line == o.line;
  }
};

struct Block {
  // Source lines of the block, in the order gcov's .gcno lists them.
  std::vector<Location> lines;
};

struct Edge {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t flags = 0;            // EdgeFlag bits
  int64_t counter = kNoCounter;  // index into the TU's counter array
};

// An extension record attached to a function, for data later modes add
// (e.g. Ball–Larus path tables).  Unknown tags are preserved and skipped.
struct Extension {
  uint32_t tag = 0;
  std::vector<uint8_t> bytes;
};

struct Function {
  std::string name;       // assembler name (mangled)
  std::string demangled;  // human-readable name
  uint32_t file = 0;      // index into TranslationUnit::files
  uint32_t line = 0;      // first line
  uint32_t end_line = 0;  // last line
  uint32_t cfg_checksum = 0;     // GCC's coverage_compute_cfg_checksum
  uint32_t lineno_checksum = 0;  // GCC's coverage_compute_lineno_checksum
  uint32_t flags = 0;            // FunctionFlag bits
  std::vector<Block> blocks;     // blocks[0] ENTRY, blocks[1] EXIT
  std::vector<Edge> edges;
  std::vector<Extension> extensions;
};

enum FunctionFlag : uint32_t {
  kFunctionComdat = 1u << 0,    // may be emitted by several TUs (inline,
                                // template): merged by (name, cfg_checksum)
  kFunctionArtificial = 1u << 1,  // compiler-generated
};

struct TranslationUnit {
  std::string source;    // main input file as given to the compiler
  std::string cwd;       // compilation directory
  // Absolute, normalised path of the TU's profile file, fixed at compile
  // time (where gcov puts the object's .gcda, suffix .bprof); "" for a TU
  // without a home (hand-made ones: the runtime then uses ballarus.profile
  // in its start-up directory).  With the stamp, it is the TU's identity.
  std::string profile;
  // The object file (absolute, normalised), "" when it was a temporary of
  // a compile-and-link command.
  std::string object;
  std::string compiler;  // e.g. "gcc 12.2.0"
  uint32_t flags = 0;    // BALLARUS_META_F_* (runtime/ballarus_format.h)
  uint64_t n_counters = 0;
  std::vector<std::string> files;  // file table for Location::file
  std::vector<Function> functions;
};

}  // namespace ballarus

#endif  // BALLARUS_CORE_MODEL_H_
