// path_cuts.cc — path planning's cut steps: where a function's paths end
// early, beyond the back edges and the cut blocks that fit its table
// (FitPathTable).  A cut makes the register a known constant after it, so
// the counts and chords that follow fold; the price is one count at the
// cut and information (a path no longer runs through it).  Also the one
// step that plans no path code at all: functions whose paths the edge
// counts determine (PlanPathsFromEdges).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/metadata.h"
#include "core/path_plan_steps.h"
#include "core/path_profile.h"
#include "core/spanning_tree.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/options.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

namespace {

// Whether a model edge has an edge in GCC's CFG, per model edge.
std::vector<bool> HasCodeEdge(const PathPlanState& s) {
  std::vector<bool> out(s.fn->edges.size(), false);
  for (size_t i = 0; i < out.size() && i < s.gcc_edges.size(); ++i)
    out[i] = s.gcc_edges[i] != NULL;
  return out;
}

// Adds `cut` (ascending) to the cut edges and the loop entry cuts.
void AddEntryCuts(PathPlanState* s, const std::vector<uint32_t>& cut) {
  std::vector<uint32_t>& edges = s->plan.cuts.edges;
  edges.insert(edges.end(), cut.begin(), cut.end());
  std::sort(edges.begin(), edges.end());
  s->entry_cuts.insert(s->entry_cuts.end(), cut.begin(), cut.end());
  std::sort(s->entry_cuts.begin(), s->entry_cuts.end());
}

}  // namespace

// Paths determined by edge counts (path-from-edges; core/path_profile.h
// PathsDeterminedByEdges): a function whose acyclic paths are linearly
// independent as edge vectors -- one if/else, one switch, a run of calls
// that may not return, a loop with a one-path body -- has its path counts
// determined by its edge counts, so it needs no path register, no path
// ends and no early-termination pre-counts: edge counters on the chords of
// the maximum spanning tree (the caller places them in mode=path too) cost
// what edge profiling costs, and the fake edges' counts, which flow
// conservation gives, are the truncated paths'.  Reconstruct solves the
// path counts (PathCountsFromEdges).  Only with the back edges cut (before
// loop entry cuts, which would add paths ending at each entry), no cut
// blocks, no abnormal edges or re-entries (their fake ENTRY edges are not
// counted), every chord able to hold a counter, and at most
// kFromEdgesMaxPaths paths (the check is an exact elimination over the
// rationals; such functions are small anyway).
bool PlanPathsFromEdges(PathPlanState* s) {
  constexpr uint64_t kFromEdgesMaxPaths = 64;
  // auto: not where every path table is to be hashed (path-storage=hash,
  // path-table-max=0: the runtime's tables are what is asked for).
  if (!Options::IsOn(g_options.path_from_edges,
                     !g_options.path_storage_hash &&
                         g_options.path_table_max > 0))
    return false;
  auto refuse = [](const char* why) {
    if (dump_file)
      fprintf(dump_file, "  path: paths not taken from the edge counts "
              "(%s)\n", why);
    return false;
  };
  if (!s->plan.cuts.blocks.empty()) return refuse("cut blocks");
  if (!s->reentry.empty()) return refuse("re-entry calls");
  for (size_t b = 0; b < s->returns_twice.size(); ++b)
    if (s->returns_twice[b] || s->dispatcher[b])
      return refuse("abnormal receivers");
  for (const ballarus::Edge& e : s->fn->edges)
    if ((e.flags & (ballarus::kEdgeAbnormal | ballarus::kEdgeIgnored |
                    ballarus::kEdgeReentry)) ||
        ((e.flags & ballarus::kEdgeFake) && e.src == ballarus::kEntryBlock))
      return refuse("abnormal edges or re-entries");
  const ballarus::PathNumbering num = ballarus::NumberPaths(s->dag);
  if (!ballarus::PathsDeterminedByEdges(s->dag, num, kFromEdgesMaxPaths))
    return refuse("the edge counts do not determine them");
  if (!ballarus::MaximumSpanningTree(*s->fn, s->weights)
           .uncountable_chords.empty())
    return refuse("a chord cannot hold a counter");
  ballarus::PathInfo& info = s->work->info;
  info.storage = ballarus::PathInfo::kFromEdges;
  info.base = 0;
  info.n_paths = num.total().get_ui();
  info.cut_edges = s->plan.cuts.edges;
  info.flags = ballarus::kPathFlagEarlyTermination;
  s->work->from_edges = true;
  s->fn->extensions.push_back(
      {ballarus::kPathExtensionTag, ballarus::EncodePathInfo(info)});
  if (dump_file)
    fprintf(dump_file, "  paths: %llu, determined by the edge counts (no "
            "path register; edge counters on the chords); %zu cut edges\n",
            (unsigned long long)info.n_paths, info.cut_edges.size());
  return true;
}

// Loop entry cuts (path-loop-cuts) of loops whose iterations all take one
// path (FindCountedLoops: header h, one latch, one DAG path from h to the
// back edge).  Every iteration after the first ends the same path K at the
// back edge, but GCC sees the register at h as a PHI of the register on
// entry and of b, so every iteration counts through a variable address.
// Cutting each entry edge as well (it ends the path that reaches the loop
// and starts the one at h, as the back edge does) makes the register at h
// the constant b on every way in: each iteration counts the constant
// counter of path K, which GCC folds and, in a loop without calls, moves
// out of the loop as it does edge counters.  The price is one count per
// entry, so only loops that iterate at least once per entry by the
// weights are cut.  A cut edge never adds paths: the table still fits.
// On by default in mode=path, and in mode=edge,path where the counts one
// prefix reaches come from the edge counters (path-derive): there the
// header and what follows it up to the first merge cost nothing; with
// every count made the cuts cost more than they save (docs/performance.md,
// "Loop entry cuts").
void CutOnePathLoopEntries(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  if (!s->loop_cuts || s->plan.cuts.edges.empty()) return;
  const std::vector<bool> no_exclusion(s->nb, false);
  const std::vector<bool> has_code = HasCodeEdge(*s);
  std::vector<bool> is_cut(fn.edges.size(), false);
  for (uint32_t i : s->plan.cuts.edges) is_cut[i] = true;
  std::vector<uint32_t> cut;
  for (const ballarus::CountedLoop& L : ballarus::FindCountedLoops(
           fn, s->dag, s->plan.cuts, s->inc, no_exclusion)) {
    const ballarus::LoopEntryWeights w = ballarus::WeighLoopEntries(
        fn, L.entries, L.back_edge, s->weights, is_cut, has_code);
    if (!w.cuttable || w.back < w.entries) {
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): "
                "one path per iteration, entry edges not cut (%s)\n",
                L.header, fn.edges[L.back_edge].src, L.header,
                !w.cuttable ? "a re-entry or cut entry edge"
                            : "the weights show fewer iterations than entries");
      continue;
    }
    for (uint32_t i : L.entries) {
      is_cut[i] = true;
      cut.push_back(i);
    }
    if (dump_file)
      fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): one "
              "path per iteration; its %zu entry edges cut\n",
              L.header, fn.edges[L.back_edge].src, L.header,
              L.entries.size());
  }
  if (cut.empty()) return;
  std::sort(cut.begin(), cut.end());
  AddEntryCuts(s, cut);
  Number(s);
}

namespace {

// GCC's own guess that the loop goes round less than once per entry (its
// branch predictors see loop exits and iteration counts the static weights
// do not): its header's count under twice its entries'.
bool GuessedRare(const PathPlanState& s, const ballarus::LoopEntries& L) {
  const profile_count hc = BASIC_BLOCK_FOR_FN(cfun, L.header)->count;
  profile_count ec = profile_count::zero();
  for (uint32_t i : L.entries) ec += s.gcc_edges[i]->count();
  return hc.initialized_p() && ec.initialized_p() && ec.nonzero_p() &&
         hc.to_gcov_type() < 2 * ec.to_gcov_type();
}

}  // namespace

// Multi-path loop entry cuts (part of path-loop-cuts).  A loop whose
// iterations take several paths has the problem of the one-path loops
// above: the register at its header is a PHI of the register on entry and
// of the back edge's b, so every chord in the loop is an addition GCC
// cannot fold and the back edge counts through a variable address, with a
// register kept for b and another for r in a loop short of registers.
// Cutting every entry edge too makes the register b on every way into the
// header: the prefix at each block that one way reaches from the header is
// known, its chords fold and its counts are constant addresses; where
// several ways merge the register is a PHI of constants.  The price is one
// count per entry, so only loops that iterate at least once per entry are
// cut: on the weights' evidence and, unless the weights are measured, on
// GCC's guessed profile too, which sees loops that rarely go round where
// the static weights give every back edge 9 times its entries
// (docs/performance.md, "Multi-path loop entry cuts").  At -O0 GCC guesses
// no profile: the weights alone decide.
void CutMultiPathLoopEntries(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  if (!s->loop_cuts || s->plan.cuts.edges.empty()) return;
  const std::vector<bool> has_code = HasCodeEdge(*s);
  std::vector<bool> is_cut(fn.edges.size(), false);
  for (uint32_t i : s->plan.cuts.edges) is_cut[i] = true;
  std::vector<uint32_t> cut;
  for (const ballarus::LoopEntries& L :
       ballarus::FindLoopEntries(fn, s->plan.cuts)) {
    const ballarus::LoopEntryWeights w = ballarus::WeighLoopEntries(
        fn, L.entries, L.back_edge, s->weights, is_cut, has_code);
    const bool rare = !s->measured_weights && w.cuttable && GuessedRare(*s, L);
    if (!w.cuttable || w.back < w.entries || rare) {
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): "
                "entry edges not cut (%s)\n",
                L.header, fn.edges[L.back_edge].src, L.header,
                !w.cuttable ? "a re-entry or cut entry edge"
                : rare ? "GCC's estimate: under one iteration per entry"
                       : "the weights show fewer iterations than entries");
      continue;
    }
    for (uint32_t i : L.entries) {
      is_cut[i] = true;
      cut.push_back(i);
    }
    if (dump_file)
      fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): its "
              "%zu entry edges cut (several paths per iteration; weights: "
              "back edge %llu, entries %llu)\n",
              L.header, fn.edges[L.back_edge].src, L.header,
              L.entries.size(), (unsigned long long)w.back,
              (unsigned long long)w.entries);
  }
  if (cut.empty()) return;
  std::sort(cut.begin(), cut.end());
  AddEntryCuts(s, cut);
  Number(s);
}

namespace {

// Blocks a call cut may not take: cut already, a cut edge's target, a
// re-entry call's block, or entered abnormally (a computed goto's target,
// a re-entry: a fake edge from ENTRY), which starts paths of its own.
std::vector<bool> CallCutExclusions(const PathPlanState& s) {
  const ballarus::Function& fn = *s.fn;
  std::vector<bool> excluded(s.nb, false);
  for (uint32_t b : s.plan.cuts.blocks) excluded[b] = true;
  for (uint32_t i : s.plan.cuts.edges)
    if (fn.edges[i].dst < s.nb) excluded[fn.edges[i].dst] = true;
  for (const ReentryCall& rc : s.reentry)
    excluded[static_cast<uint32_t>(rc.block->index)] = true;
  for (const ballarus::Edge& me : fn.edges)
    if (me.dst < s.nb &&
        (me.flags & (ballarus::kEdgeFake | ballarus::kEdgeAbnormal |
                     ballarus::kEdgeIgnored | ballarus::kEdgeReentry)))
      excluded[me.dst] = true;
  return excluded;
}

// Whether block u ends with a call that pre-counts (not one of the TU's
// callees that always return, unless a tail call) and goes on normally.
bool EndsWithPreCountingCall(const PathPlanState& s, uint32_t u) {
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb(s.bbs[u]);
  gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
  if (last == NULL || !is_gimple_call(last)) return false;
  bool normal = false;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s.bbs[u]->succs)
    normal = normal ||
             !(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL));
  if (!normal) return false;
  return gimple_call_tail_p(as_a<gcall*>(last)) ||
         gimple_call_must_tail_p(as_a<gcall*>(last)) ||
         !s.returning.AlwaysReturns(last);
}

}  // namespace

// Call cuts (path-call-cuts).  A call that may not return is pre-counted
// through the register of the path so far.  Where several path prefixes
// reach the call's block that register is a variable that lives across
// the call -- in a callee-saved register that every invocation pushes and
// pops, materialised on each way in: small functions that test, call and
// return pay more for it than gcov for its counters (docs/performance.md,
// "Call cuts").  Cutting the call's block instead ends the path on
// entering it and starts the next one there: the register is the constant
// b across the call, and the pre-count goes (the block's paths are
// balanced against its cut counts: PlanBalances).  The price is
// information: a path no longer runs through such a call.  Only a
// pre-counting call whose block several prefixes reach, may be cut (not a
// returns-twice call or dispatcher, not a re-entry call), is entered by
// ordinary edges only and is not the target of a cut edge; with kept
// pre-counts (the balance needs them); and not in a function cut already
// to fit its table (an interpreter's many call cuts then cost more moves to
// and from the stack than they save).
void CutCallBlocks(PathPlanState* s) {
  const ballarus::Function& fn = *s->fn;
  s->call_cut.assign(s->nb, false);
  if (!Options::IsOn(g_options.path_call_cuts,
                     g_options.mode == Mode::kNone) ||
      !g_options.early_termination || !s->plan.cuts.blocks.empty())
    return;
  const std::vector<uint8_t> prefixes = ballarus::CountPrefixes(s->dag);
  std::vector<bool> excluded = CallCutExclusions(*s);
  std::vector<uint32_t> cut;
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const ballarus::Edge& me = fn.edges[i];
    const uint32_t u = me.src;
    if (!(me.flags & ballarus::kEdgeFake) || me.dst != ballarus::kExitBlock ||
        s->dag.dag_edge_of_cfg[i] < 0 || u < 2 || u >= s->nb ||
        s->bbs[u] == NULL || !s->may_cut[u] || excluded[u] ||
        prefixes[s->dag.in_vertex[u]] < 2 || !EndsWithPreCountingCall(*s, u))
      continue;
    excluded[u] = true;
    cut.push_back(u);
    if (dump_file)
      fprintf(dump_file, "  path: block %u cut: its call may not return and "
              "several prefixes reach it\n", u);
  }
  if (cut.empty()) return;
  std::sort(cut.begin(), cut.end());
  s->call_cuts = cut;
  for (uint32_t b : cut) s->call_cut[b] = true;
  std::vector<uint32_t>& blocks = s->plan.cuts.blocks;
  blocks.insert(blocks.end(), cut.begin(), cut.end());
  std::sort(blocks.begin(), blocks.end());
  Number(s);
}

}  // namespace ballarus::plugin
