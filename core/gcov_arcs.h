// gcov_arcs.h — what GCC 12's own -fprofile-arcs instrumentation would
// record for a translation unit, kept in ballarus' metadata so that a
// ballarus profile can be turned into the .gcda files GCC's -fprofile-use
// reads (ballarus-reconstruct gcda), with nothing guessed afterwards.
//
// gcov counts a function's edges with counters on the chords of a spanning
// tree of its closed CFG, chosen by gcc/profile.cc (branch_prob,
// find_spanning_tree, compare_freqs); the .gcda holds, per function, the
// counts of exactly those edges, in edge order.  GCC's -fprofile-use rebuilds
// the same tree on the same CFG (the cfg_checksum guards that), reads the
// counters and derives the other edges by flow conservation.  ballarus knows
// every edge count of gcov's own CFG (model.h); to write a .gcda it needs
// which edges gcov counts and in which order — GcovCounterEdges below, a
// GCC-free replica of profile.cc — plus the function's ident (coverage.cc
// profile_id, computed in the plugin by GCC's own coverage_compute_profile_id
// and value-prof.cc init_node_map's collision rule) and, per TU, where GCC
// looks for the .gcda (coverage.cc coverage_init's da_file_name, see
// core/gcda.h GcdaFileName) and the GCOV_VERSION word.
//
// The plugin stores these as metadata extensions (model.h Extension):
//   kGcovExtensionTag      on every instrumented function:
//     bytes := u32 ident  u32 flags  [u32 edge] counter_edges
//   kGcovUnitExtensionTag  once per TU, on its first function (the model has
//     no TU-level extension list; the first function always exists when a TU
//     has a blob at all):
//     bytes := u32 version  str da_file_name  str aux_name
//              u has_profile_dir  str profile_dir  str prefix_path
//              [str name  u32 ident  str why] not_instrumented
// (`u` unsigned LEB128, `str` = u length + bytes, `[x]` = u count + x's, as
// in core/metadata.cc).  Unknown tags are skipped by every other reader.
#ifndef BALLARUS_CORE_GCOV_ARCS_H_
#define BALLARUS_CORE_GCOV_ARCS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"

namespace ballarus {

inline constexpr uint32_t kGcovExtensionTag = 2;
inline constexpr uint32_t kGcovUnitExtensionTag = 3;

// The sort key GCC 12's compare_freqs gives an edge, taken by the plugin
// just before branch_prob's compact_blocks() (the edge list is sorted
// before the blocks are renumbered, so ties are broken by the *old* block
// indices).
struct GcovEdgeKey {
  // EDGE_FREQUENCY (e) * m + m, m = 2 for a critical edge, else 1: heavier
  // first.
  int64_t weight = 0;
  // e->src->index and e->dest->index before compact_blocks(): on equal
  // weight, the higher source index first, then the higher target index.
  int32_t src = 0;
  int32_t dst = 0;
};

// GCC 12 profile.cc, branch_prob + find_spanning_tree, on fn's graph (the
// CFG prepared like branch_prob's, fake edges included; keys parallel to
// fn.edges):
//   * abnormal edges neither out of ENTRY nor into EXIT are ignored;
//   * EXIT and ENTRY are joined (the virtual edge);
//   * in compare_freqs order, abnormal, fake and EXIT-bound edges join the
//     tree whenever they connect two components; then, in the same order,
//     every other non-ignored edge does;
//   * fake edges left off the tree are ignored; every other edge left off
//     gets a counter.
// Returns the counted edges, ascending (gcov's counter order: blocks in
// index order, each block's successors in order — model edge order).  Only
// the kEdgeAbnormal and kEdgeFake flags are read (not kEdgeIgnored, which
// ballarus' own cycle breaking adds).
// `dropped`, when given, receives the fake edges left off the tree, which
// gcov never writes into its .gcno (ascending): the reports in gcov's
// formats leave them out (core/metadata.h GcovReportInfo).
std::vector<uint32_t> GcovCounterEdges(const Function& fn,
                                       const std::vector<GcovEdgeKey>& keys,
                                       std::vector<uint32_t>* dropped = nullptr);

// GcovFunctionInfo::flags.
enum GcovFunctionFlag : uint32_t {
  // An extern inline body (DECL_EXTERNAL, e.g. a member of an `extern
  // template` class): never emitted, only inlined, yet -fprofile-arcs
  // counts it (unless -ftest-coverage) and -fprofile-use reads its counts.
  // ballarus instruments it for the .gcda alone: gcov's own reports
  // (-ftest-coverage) leave such bodies out, and so do ballarus' (see
  // IsProfileUseOnly).
  kGcovFunctionExternInline = 1u << 0,
  // A thunk, which -fprofile-arcs expands to GIMPLE and counts with one
  // counter on the edge out of ENTRY (its call count); its .gcda record has
  // lineno and cfg checksums 0 (profile.cc branch_prob (thunk = true)), and
  // -fprofile-use reads that one count (read_thunk_profile).  ballarus
  // expands and instruments it the same way.
  kGcovFunctionThunk = 1u << 1,
};

// Per function (kGcovExtensionTag).
struct GcovFunctionInfo {
  uint32_t ident = 0;                   // the .gcda FUNCTION ident
  uint32_t flags = 0;                   // GcovFunctionFlag bits
  std::vector<uint32_t> counter_edges;  // GcovCounterEdges, ascending
};

// True if `fn` was instrumented only so that its .gcda record can be
// written (kGcovFunctionExternInline): reports skip it.  A malformed
// extension reads as false (the .gcda writer reports it).
bool IsProfileUseOnly(const Function& fn);

// Per TU (kGcovUnitExtensionTag).
struct GcovUnitInfo {
  uint32_t version = 0;      // GCOV_VERSION of the compiler, e.g. "B22*"
  std::string da_file_name;  // where this compile's -fprofile-arcs would
                             // write and -fprofile-use would read the
                             // .gcda: absolute, or relative to the TU's cwd
                             // when -fprofile-dir was relative
  std::string aux_name;  // GCC's aux_base_name (object name without
                              // extension), to recompute the name for
                              // another -fprofile-dir
  bool has_profile_dir = false;  // -fprofile-dir= (or -fprofile-use=DIR,
                                 // -fprofile-generate=DIR) was given
  std::string profile_dir;       // its value
  std::string prefix_path;       // -fprofile-prefix-path= ("" if none)
  // Functions -fprofile-arcs would profile but ballarus does not (thunks,
  // extern inline bodies): their .gcda record cannot be written.
  struct Missing {
    std::string name;  // assembler name
    uint32_t ident = 0;
    std::string why;
  };
  std::vector<Missing> not_instrumented;
};

std::vector<uint8_t> EncodeGcovFunctionInfo(const GcovFunctionInfo& info);
std::vector<uint8_t> EncodeGcovUnitInfo(const GcovUnitInfo& info);
// False with *error ("gcov info: ...") on malformed bytes.  The function
// form also checks the counter edges against `fn` (ascending, in range,
// none fake or abnormal).
bool DecodeGcovFunctionInfo(const std::vector<uint8_t>& bytes,
                            const Function& fn, GcovFunctionInfo* info,
                            std::string* error);
bool DecodeGcovUnitInfo(const std::vector<uint8_t>& bytes, GcovUnitInfo* info,
                        std::string* error);

// The extension of `fn` with `tag`, or nullptr.  Two of them is an error
// (*error set, nullptr returned); none clears *error.
const Extension* FindExtension(const Function& fn, uint32_t tag,
                               std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_CORE_GCOV_ARCS_H_
