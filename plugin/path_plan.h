// path_plan.h — Ball–Larus path profiling, planning: per function, the path
// numbering and the code (PathActions) that path_emit.h emits.  See
// path_plan.cc.
#ifndef BALLARUS_PLUGIN_PATH_PLAN_H_
#define BALLARUS_PLUGIN_PATH_PLAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/reentry.h"
#include "plugin/path_returns.h"

namespace ballarus::plugin {

// Path-register code, planned in the analysis phase (while the fake edges
// exist) and emitted in the instrumentation phase.  r is the function's
// 64-bit path register (a local: recursion and threads are safe); "count
// [x]" is count[x] += 1 in the function's path table (dense slice of the
// counter array, index clamped to the overflow slot, or the runtime hash).
struct PathAction {
  enum Kind {
    // On an edge, in this order when several meet on one edge:
    kCheckFlag,   // r = arrived ? r : a; arrived = 0   (abnormal re-entry)
    kReentry,     // after a call that may return as a re-entry (fork,
                  // reset: reentry.h): if the epoch changed, r = b (a new
                  // path starts; the pre-count went with the old counts)
    kSetFlag,     // arrived = 1         (a normal entry into a re-entry block)
    kLoopExit,    // counted loop `loop` (core/path_profile.h CountedLoop)
                  // left: count[s + d] += (n != 0); count[K] += n - (n != 0);
                  // if (n == 0) r += s - b  (entries cut: count[K] += n)
    kInit,        // r = a               (edge out of ENTRY)
    kAdd,         // r += a              (chord)
    kLoopEnter,   // counted loop entered: s = r; r = b; n = 0
                  // (entries cut: n = 0)
    kCount,       // count[r + a] += 1   (return)
    kCountReset,  // count[r + a] += 1; r = b   (cut edge: back edge)
    kLoopBack,    // a counted loop's back edge: n += 1; r = b
    kSaveRegister,  // s = r   (a normal entry into a computed goto's target
                    // that is also entered by computed gotos: read by its
                    // kStartCheckSaved; last, after every change of r)
    // In a block:
    kStartCheckFlag,  // at its start: as kCheckFlag
    kStartCut,        // at its start: count[r + a] += 1; r = b (cut block)
    kPreCount,        // before its last statement (a call that may not
                      // return), or its first exec-family call:
                      // count[r + a] += 1, settled by reconstruct
                      // (SettlePrecounts)
    kEndCountReset,   // before its last statement (computed goto): the path
                      // ends here, the abnormal target starts one with r = 0
    kEndCount,        // before its last statement (computed goto whose
                      // targets all start their path themselves,
                      // kStartInit): count[r + a] += 1
    kStartInit,       // at its start (a computed goto's target entered by
                      // computed gotos only): r = a
    kStartCheckSaved,  // at its start (a computed goto's target entered
                       // otherwise too): r = arrived ? s : a; arrived = 0
  };
  Kind kind;
  uint64_t a = 0;
  uint64_t b = 0;
  int call = -1;      // kReentry: index into the function's ReentryCalls
  int loop = -1;      // kLoop*: index into PathWork::loops
  // kCount, kCountReset, kStartCut, kPreCount, kEndCount, kEndCountReset:
  // the count is not made (only the reset, if any): reconstruct derives it
  // from the edge counters (PathInfo::derived, path-derive).
  bool derived = false;
  // Count kinds: one path prefix reaches the count, so it always lands on
  // path `path` (the register's known value plus a; set by
  // PlanPathProfiling where loop-registers is on).  In
  // a loop that takes registers (counter_emit.h) such a count is made in
  // a local.
  bool known = false;
  uint64_t path = 0;
  // Count kinds not `known`: the paths the count can land on, where a few
  // prefixes reach it (2 to kMaxCountChoices, sorted; set likewise).  In a
  // loop that takes registers, two are counted in a pair of locals (the
  // register's sum and the number of counts, path_emit.cc CountChoices)
  // instead of through memory.
  std::vector<uint64_t> choices;
};

// A loop counted in locals (kLoop* actions): its constants.
struct PathLoop {
  uint64_t start = 0;         // b
  uint64_t iteration = 0;     // K
  uint64_t first_offset = 0;  // d = K - b
  // Its entry edges are cut (path-loop-cuts): r = b on entry already, and
  // every iteration ends path K -- kLoopEnter is n = 0, kLoopExit
  // count[K] += n.
  bool entries_cut = false;
};

// A description of the action kind, for dumps.
const char* PathActionName(PathAction::Kind k);

// One function's path profiling plan, kept between the analysis and the
// instrumentation phases.
struct PathWork {
  bool enabled = false;
  ballarus::PathInfo info;
  std::vector<std::pair<edge, PathAction>> on_edges;
  std::vector<std::pair<basic_block, PathAction>> in_blocks;
  bool uses_flag = false;
  // The register is a signed 64-bit integer: no value it takes on any path
  // can overflow (the increments' magnitudes sum below 2^62), so GCC's value
  // ranges see the path numbers as they are -- within [0, n_paths) -- and
  // drop the range check of most counts.  Otherwise unsigned, modulo 2^64.
  bool signed_register = false;
  // The paths are determined by the edge counts (PathInfo::kFromEdges,
  // path-from-edges): no path code at all (`enabled` stays false); the
  // function needs edge counters on the chords of its spanning tree, which
  // the caller places in mode=path too.
  bool from_edges = false;
  std::vector<PathLoop> loops;
  // Entry balance (path-entry-balance, mode=path): the pre-count that the
  // invocations of the function could stand for -- in `entry_block`, on
  // the only prefix from the function's entry that reaches it, the first
  // pre-count on that prefix -- and the number of its path; null when
  // there is none.  pass.cc drops it (EntryBalance) when every call of the
  // function is a direct call from a path-profiled function of the TU.
  basic_block entry_block = nullptr;
  uint64_t entry_path = 0;
  // The path end at a computed goto or a cut block went back onto the
  // edges into it (path-cut-hoist): the tails of its predecessors, an
  // interpreter's instruction fetch, are then alike, and
  // GCC's cross-jumping would merge them back into shared blocks that the
  // computed goto can no longer be duplicated into (pass.cc,
  // KeepTailsApart).
  bool goto_end_hoisted = false;
};

// Entry balance: drops `work`'s entry pre-count and records in its
// PathInfo that the path's count is what the calls (function index in the
// TU, block of the call) add up to beyond the other paths from the entry.
void ApplyEntryBalance(const std::vector<ballarus::PathInfo::Call>& calls,
                       PathWork* work);

// Plans Ball-Larus path profiling for cfun (CFG prepared, fake edges
// present), as a pipeline of steps (path_plan.cc): the DAG and its cuts, the increments on the chords of a
// maximum spanning tree (weights), the path table, and every piece of code.
// The function's PathInfo is added to fn's extensions; a dense path table
// takes n_paths + 1 counters from *next_counter, a hashed one the next
// table index from *next_hash.
// Calls to `returning` callees (path_returns.h) get no early-termination
// pre-count.  measured_weights: `weights` are an earlier profile's counts
// (loops are counted in locals only on their evidence, see path-loops).
void PlanPathProfiling(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       bool measured_weights,
                       const std::vector<ReentryCall>& reentry,
                       const ReturningCallees& returning,
                       uint64_t* next_counter, uint64_t* next_hash,
                       PathWork* work);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PATH_PLAN_H_
