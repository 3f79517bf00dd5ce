// path_plan_state.h — the plan that path planning's steps hand on, and the
// steps themselves (path_plan.cc runs them in order; see its header for
// the pipeline).  Internal to the path planner.
#ifndef BALLARUS_PLUGIN_PATH_PLAN_STATE_H_
#define BALLARUS_PLUGIN_PATH_PLAN_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/path_plan_steps.h"
#include "core/path_profile.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/path_plan.h"

namespace ballarus::plugin {

// A count in a loop that takes registers which at most this many path
// prefixes reach is made in locals (PathAction::choices): for two, the
// sum of the register and the number of counts, two register adds per
// execution, from which the loop's exits recover both paths' counts
// (path_emit.cc, CountChoices).
constexpr size_t kMaxCountChoices = 2;

// One function's path plan while it is being made.
struct PathPlanState {
  PathPlanState(ballarus::Function* fn, const std::vector<edge>& gcc_edges,
                const std::vector<uint64_t>& weights, bool measured_weights,
                const std::vector<ReentryCall>& reentry,
                const ReturningCallees& returning, PathWork* work)
      : fn(fn), gcc_edges(gcc_edges), weights(weights),
        measured_weights(measured_weights), reentry(reentry),
        returning(returning), work(work) {}

  // What the caller knows of the function; `work` receives the plan.
  ballarus::Function* fn;
  const std::vector<edge>& gcc_edges;  // per model edge (null: none)
  const std::vector<uint64_t>& weights;
  bool measured_weights;
  const std::vector<ReentryCall>& reentry;
  const ReturningCallees& returning;
  PathWork* work;

  // ClassifyBlocks: GCC's blocks by index, and which may be cut.
  uint32_t nb = 0;
  std::vector<basic_block> bbs;
  std::vector<bool> returns_twice, dispatcher, may_cut;

  // The cuts, and the DAG and increments numbered for them (Number).
  ballarus::PathPlan plan;
  ballarus::PathDag dag;
  ballarus::PathIncrements inc;
  std::vector<uint32_t> entry_cuts;  // loop entry cut edges, ascending
  std::vector<uint32_t> call_cuts;   // call cut blocks, ascending
  bool derive_counts = false;        // path-derive: counts from edge counters
  bool loop_cuts = false;            // path-loop-cuts

  // PlanReentryCalls, FindGotoTargets: what some blocks are.
  std::vector<bool> reentry_block;  // holds a call that may re-enter
  std::vector<bool> end_reset;      // a computed goto that resets r
  std::vector<bool> goto_end;       // left by computed gotos only
  std::vector<bool> self_start;     // entered by computed gotos only
  std::vector<bool> saved_start;    // entered by computed gotos and otherwise
  std::vector<bool> may_leave;      // may leave other than by a return
  std::vector<bool> call_cut;       // per block: in call_cuts
  bool sources_reset = false;       // computed gotos reset r (not targets)

  // AnalysePrefixes: the register along the final DAG.
  std::vector<uint8_t> prefixes;  // CountPrefixes
  // The register's values where at most kMaxCountChoices prefixes reach
  // (known where one does).
  std::vector<std::vector<uint64_t>> prefix_sets;
  std::vector<uint64_t> prefix_reg;
  std::vector<edge> chord_edges;  // ChordEdges
  std::unordered_map<edge, uint32_t> model_edge_of;
  // Loops whose fixed-address counts are made in locals (loop-registers),
  // found when a back edge first asks (InRegisterLoop).
  bool loop_registers = false;
  std::optional<RegisterLoops> register_loops;

  // PlanCountedLoops, PlanDagEdges: for the balances.
  std::vector<int> loop_of_back_edge;  // per model edge: counted loop or -1
  std::map<uint32_t, ballarus::EntryCutEnd> entry_ends;  // per loop header
  size_t hoisted_onto_chords = 0;  // of the last HoistOnto's edges

  void OnEdge(edge e, PathAction::Kind k, uint64_t a, uint64_t b) {
    work->on_edges.push_back({e, {k, a, b}});
  }
  void InBlock(uint32_t bi, PathAction::Kind k, uint64_t a, uint64_t b) {
    work->in_blocks.push_back({bbs[bi], {k, a, b}});
  }
  // The number of prefixes reaching v where at most kMaxCountChoices do,
  // SIZE_MAX elsewhere.
  size_t FewPrefixes(uint32_t v) const {
    return prefix_sets[v].empty() ? SIZE_MAX : prefix_sets[v].size();
  }
};

// The steps, in the order PlanPathProfiling runs them.
// path_plan.cc
void ClassifyBlocks(PathPlanState* s);
void FitPathTable(PathPlanState* s);
void Number(PathPlanState* s);
void ReserveStorage(PathPlanState* s, uint64_t* next_counter,
                    uint64_t* next_hash);
void RecordPlan(PathPlanState* s);
// path_cuts.cc
bool PlanPathsFromEdges(PathPlanState* s);
void CutOnePathLoopEntries(PathPlanState* s);
void CutMultiPathLoopEntries(PathPlanState* s);
void CutCallBlocks(PathPlanState* s);
// path_entries.cc
void PlanReentryCalls(PathPlanState* s);
void AnalysePrefixes(PathPlanState* s);
void FindGotoTargets(PathPlanState* s);
void PlanAbnormalEntries(PathPlanState* s);
// path_ends.cc
void PlanFakeExits(PathPlanState* s);
void PlanCountedLoops(PathPlanState* s);
void PlanDagEdges(PathPlanState* s);
// path_counts.cc
void DeriveCountsFromEdges(PathPlanState* s);
void PlanBalances(PathPlanState* s);
void MarkLoopRegisterCounts(PathPlanState* s);

// Hoisting a count off its block onto edges before it (path_hoist.cc).
// The successors of bb other than fake edges.
int RealSuccessors(basic_block bb);
// The GCC edges that carry a chord, ascending by address (ChordEdges).
std::vector<edge> ChordEdges(const PathPlanState& s);
bool SplitForChordAnyway(const PathPlanState& s, edge e);
// An ordinary edge from a block of the function.
bool OrdinaryInEdge(const PathPlanState& s, edge e);
// The in-edges of u a path end at u can move onto.
bool HoistOnto(PathPlanState* s, uint32_t u, bool any_preds, bool onto_chords,
               std::vector<edge>* into, size_t split_fixed = 0);
bool InRegisterLoop(PathPlanState* s, edge e);
bool HoistBackEdgeEnd(PathPlanState* s, const ballarus::Edge& back,
                      edge gcc_back, std::vector<edge>* into);
// A path end at block u, moved back onto edges where it costs least.
enum class HoistFrom { kGoto, kCut, kPreCount };
bool HoistPathEnd(PathPlanState* s, uint32_t u, uint64_t a,
                  std::vector<std::pair<edge, uint64_t>>* sites, int* depth,
                  HoistFrom from = HoistFrom::kGoto);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PATH_PLAN_STATE_H_
