// path_cuts.h — where a function's paths are cut so that they fit a
// table: back edges, then cut blocks chosen by path count or by estimated
// cost.
#ifndef BALLARUS_CORE_PATH_CUTS_H_
#define BALLARUS_CORE_PATH_CUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {

// Chooses the cuts for instrumentation: FindBackEdges, plus cut blocks
// (greedily, the successor with the most paths, among blocks with
// may_cut_block[b]; empty vector = every block but ENTRY/EXIT) until the
// function has at most `max_paths` paths.  Succeeds whenever max_paths is
// at least the number of DAG edges and every block may be cut (always the
// case for the plugin's limit, 2^63 - 1); otherwise may return false with
// *error.  Greedy, not minimal: it cuts a block's heaviest successors until
// the block is far below the limit, halving the limit until the whole
// function fits.
struct PathPlan {
  PathCuts cuts;
  uint64_t n_paths = 0;
};
bool PlanPaths(const Function& fn, const std::vector<bool>& may_cut_block,
               uint64_t max_paths, PathPlan* plan, std::string* error);

// As PlanPaths, but cuts where it costs least at run time: every entry into
// a cut block ends a path (one more count), so among the blocks whose cut
// reduces the number of paths it picks, one at a time, the one with the
// largest reduction (in log scale) per unit of estimated cost, until the
// function has at most max_paths paths.  A block's cost is the estimated
// frequency of its incoming path edges (cfg_weights, parallel to fn.edges;
// empty = uniform) other than back edges: a path taking a back edge ends
// there anyway (a counted cut edge), and ends at the block instead once
// the block is cut, so cutting a loop header costs only its entries from
// outside the loop -- and makes the path prefix at the loop's start
// unique, which is what an interpreter's dispatch loop (sqlite3VdbeExec)
// needs.  Then every cut the function still fits without is taken back,
// the costliest first (reverse delete), so the plan is minimal: removing
// any one cut block leaves more than max_paths paths.  A function with too
// many paths for 128-bit counts is first cut by PlanPaths at 2^63 - 1; if
// no single cut helps any more (greedy is not exhaustive), PlanPaths'
// cuts are taken instead (and trimmed likewise), so it succeeds whenever
// PlanPaths does.
bool PlanPathsWeighted(const Function& fn,
                       const std::vector<bool>& may_cut_block,
                       const std::vector<uint64_t>& cfg_weights,
                       uint64_t max_paths, PathPlan* plan, std::string* error);

// A plan's estimated run-time cost, in units of cfg_weights, to compare
// plans of one function: every path end (back edge, cut block, return,
// and the pre-count of a call that may not return, each time its block
// runs) once, twice where the register is not a known constant (more than
// one path prefix reaches it, so the count is indexed), plus every chord
// whose addition GCC cannot fold (the register not constant at its
// source).  HUGE_VALL if the cuts are invalid.
long double EstimatePlanCost(const Function& fn, const PathCuts& cuts,
                             const std::vector<uint64_t>& cfg_weights);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_CUTS_H_
