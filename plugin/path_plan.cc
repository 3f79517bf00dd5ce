// path_plan.cc — Ball–Larus path profiling (Ball & Larus, "Efficient path
// profiling", MICRO 1996), the planning half: which code goes where.
//
// It runs on the CFG prepared like gcov's (cfg_prep.cc) while the fake edges
// still exist.  core/path_profile.h does the GCC-free numbering (the DAG,
// cut blocks for functions above path-table-max paths, the increments on
// the chords of a maximum spanning tree, the loops counted in locals) and
// core/path_plan_steps.h the GCC-free parts of the steps below; the steps
// add what needs GCC's IR -- which blocks may be cut, which calls may not
// return (early termination) or may return as re-entries (reentry.h),
// which blocks are re-entered abnormally -- and turn it all into
// PathActions on edges and in blocks, which path_emit.cc emits once the
// fake edges are gone (the table of actions and their code is in
// docs/DESIGN.md, "Path mode in the plugin").
//
// PlanPathProfiling is the pipeline: each step reads and extends one
// PathPlanState (path_plan_state.h) and prints its decisions to the pass
// dump.
//   numbering     ClassifyBlocks, FitPathTable            path_plan.cc
//   from edges    PlanPathsFromEdges (then no path code)  path_cuts.cc
//   cuts          CutOnePathLoopEntries,
//                 CutMultiPathLoopEntries, CutCallBlocks  path_cuts.cc
//   storage       ReserveStorage                          path_plan.cc
//   entries       PlanReentryCalls, AnalysePrefixes,
//                 FindGotoTargets                         path_entries.cc
//   path ends     PlanFakeExits (computed gotos,
//                 pre-counts)                             path_ends.cc
//   re-entries    PlanAbnormalEntries                     path_entries.cc
//   loops         PlanCountedLoops                        path_ends.cc
//   DAG edges     PlanDagEdges (chords, returns, back
//                 edges, cut blocks)                      path_ends.cc
//   counts        DeriveCountsFromEdges, PlanBalances,
//                 MarkLoopRegisterCounts                  path_counts.cc
//   record        RecordPlan                              path_plan.cc
// Count hoisting, which several steps ask, is path_hoist.cc.  The
// function's PathInfo (a metadata extension, core/metadata.h) records the
// numbering, the cuts and the storage: a dense slice of the TU's counter
// array (at most path-table-max paths) or, with path-storage=hash, a
// hashed table.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_plan_steps.h"
#include "core/path_profile.h"
#include "plugin/options.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/path_plan.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

namespace {

gimple* FirstStmt(basic_block bb) {
  gimple_stmt_iterator gsi = gsi_start_nondebug_after_labels_bb(bb);
  return gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
}

bool IsReturnsTwiceBlock(basic_block bb) {
  gimple* first = FirstStmt(bb);
  return first && is_gimple_call(first) &&
         (gimple_call_flags(first) & ECF_RETURNS_TWICE);
}

bool IsDispatcherBlock(basic_block bb) {
  gimple* first = FirstStmt(bb);
  return first && gimple_call_internal_p(first) &&
         gimple_call_internal_fn(first) == IFN_ABNORMAL_DISPATCHER;
}

}  // namespace

const char* PathActionName(PathAction::Kind k) {
  switch (k) {
    case PathAction::kCheckFlag: return "re-entry check";
    case PathAction::kReentry: return "re-entry (epoch) check";
    case PathAction::kSetFlag: return "mark normal entry";
    case PathAction::kInit: return "r = a";
    case PathAction::kAdd: return "r += a";
    case PathAction::kCount: return "count[r + a]++";
    case PathAction::kCountReset: return "count[r + a]++; r = b";
    case PathAction::kLoopExit: return "counted loop left: flush its count";
    case PathAction::kLoopEnter: return "counted loop entered: s = r; r = b";
    case PathAction::kLoopBack: return "counted loop: n++; r = b";
    case PathAction::kStartCheckFlag: return "re-entry check at start";
    case PathAction::kStartCut: return "cut: count[r + a]++; r = b";
    case PathAction::kPreCount: return "pre-count[r + a]++ before call";
    case PathAction::kEndCountReset: return "count[r + a]++; r = 0 at end";
    case PathAction::kEndCount: return "count[r + a]++ at end";
    case PathAction::kStartInit: return "r = a at start";
    case PathAction::kSaveRegister: return "s = r (normal entry)";
    case PathAction::kStartCheckSaved: return "re-entry check at start, r = s";
  }
  return "?";
}

// GCC's blocks by index, which may be cut (a returns-twice call must stay
// first in its block; an abnormal dispatcher cannot be cut either), and
// the switches that several steps read.
void ClassifyBlocks(PathPlanState* s) {
  s->nb = static_cast<uint32_t>(s->fn->blocks.size());
  s->bbs.resize(s->nb);
  for (uint32_t i = 0; i < s->nb; ++i) s->bbs[i] = BASIC_BLOCK_FOR_FN(cfun, i);
  s->returns_twice.assign(s->nb, false);
  s->dispatcher.assign(s->nb, false);
  s->may_cut.assign(s->nb, false);
  for (uint32_t i = 2; i < s->nb; ++i) {
    if (s->bbs[i] == NULL) continue;
    s->returns_twice[i] = IsReturnsTwiceBlock(s->bbs[i]);
    s->dispatcher[i] = IsDispatcherBlock(s->bbs[i]);
    s->may_cut[i] = !s->returns_twice[i] && !s->dispatcher[i];
    if (dump_file && !s->may_cut[i])
      fprintf(dump_file, "  path: block %u may not be cut (%s)\n", i,
              s->returns_twice[i] ? "a returns-twice call first"
                                  : "the abnormal dispatcher");
  }
  s->derive_counts = g_options.mode != Mode::kNone &&
                     Options::IsOn(g_options.path_derive, true);
  s->loop_cuts = Options::IsOn(g_options.path_loop_cuts,
                               g_options.mode == Mode::kNone ||
                                   s->derive_counts);
}

// The DAG and its increments for the current cuts.
void Number(PathPlanState* s) {
  std::string err;
  if (!ballarus::BuildPathDag(*s->fn, s->plan.cuts, &s->dag, &err))
    internal_error("ballarus: path DAG for %s: %s", s->fn->name.c_str(),
                   err.c_str());
  if (!ballarus::PlaceIncrements(*s->fn, s->dag, s->weights, &s->inc, &err))
    internal_error("ballarus: path increments for %s: %s",
                   s->fn->name.c_str(), err.c_str());
}

// Dense storage (the default): a function with more than path-table-max
// paths is cut at cold blocks until it fits its dense table -- a cut costs
// one count where it is entered, a hashed table a call into the runtime at
// every path end.  Where no cuts get it there (blocks that cannot be cut),
// and with path-storage=hash or path-table-max=0, it is cut only as far as
// a 64-bit register needs and hashed.
void FitPathTable(PathPlanState* s) {
  std::string err;
  bool planned = false;
  if (!g_options.path_storage_hash && g_options.path_table_max > 0)
    planned = ballarus::PlanPathsWeighted(*s->fn, s->may_cut, s->weights,
                                          g_options.path_table_max, &s->plan,
                                          &err);
  if (!planned &&
      !ballarus::PlanPathsWeighted(*s->fn, s->may_cut, s->weights,
                                   ballarus::kMaxInstrumentedPaths, &s->plan,
                                   &err)) {
    internal_error("ballarus: path plan for %s: %s", s->fn->name.c_str(),
                   err.c_str());
  }
  if (dump_file)
    fprintf(dump_file, "  path: %llu paths with %zu blocks cut to fit %s\n",
            (unsigned long long)s->plan.n_paths, s->plan.cuts.blocks.size(),
            planned ? "the dense table" : "a 64-bit register");
  Number(s);
}

// The register's type, the PathInfo's numbering and cuts, and the path
// table: n_paths + 1 counters from *next_counter, or the next hashed
// table.
void ReserveStorage(PathPlanState* s, uint64_t* next_counter,
                    uint64_t* next_hash) {
  s->work->signed_register =
      g_options.path_signed && ballarus::IncrementsFitSigned(s->inc);
  ballarus::PathInfo& info = s->work->info;
  info.n_paths = s->inc.n_paths;
  info.cut_edges = s->plan.cuts.edges;
  info.cut_blocks = s->plan.cuts.blocks;
  info.flags = !g_options.early_termination
                   ? 0
                   : ballarus::kPathFlagEarlyTermination |
                         ballarus::kPathFlagPrecountsKept;
  if (s->inc.n_paths <= g_options.path_table_max) {
    info.storage = ballarus::PathInfo::kDense;
    info.base = *next_counter;
    *next_counter += s->inc.n_paths + 1;
  } else {
    info.storage = ballarus::PathInfo::kHashed;
    info.base = (*next_hash)++;
  }
  s->work->enabled = true;
  if (!dump_file) return;
  fprintf(dump_file, "  paths: %llu (%s %llu); %zu cut edges, %zu cut "
          "blocks; early termination %s\n",
          (unsigned long long)s->inc.n_paths,
          info.storage == ballarus::PathInfo::kDense ? "dense from counter"
                                                     : "runtime hash table",
          (unsigned long long)info.base, info.cut_edges.size(),
          info.cut_blocks.size(),
          !g_options.early_termination ? "off" : "counted, pre-counts kept");
  fprintf(dump_file, "  path: register %s\n",
          s->work->signed_register ? "signed (no value can overflow)"
                                   : "unsigned (modulo 2^64)");
  for (uint32_t i : info.cut_edges)
    fprintf(dump_file, "  %s %u->%u cut\n",
            std::binary_search(s->entry_cuts.begin(), s->entry_cuts.end(), i)
                ? "loop entry edge"
                : "back edge",
            s->fn->edges[i].src, s->fn->edges[i].dst);
  for (uint32_t b : info.cut_blocks)
    fprintf(dump_file, "  block %u cut (%s)\n", b,
            std::binary_search(s->call_cuts.begin(), s->call_cuts.end(), b)
                ? "its call may not return"
                : "too many paths through it");
}

// The PathInfo is complete (pre-count edges included): record it, and put
// each edge's and block's actions in Kind order (stable: planning order
// within), the order path_emit.cc emits them in.
void RecordPlan(PathPlanState* s) {
  PathWork* work = s->work;
  ballarus::PathInfo& info = work->info;
  std::sort(info.precount_edges.begin(), info.precount_edges.end());
  info.precount_edges.erase(
      std::unique(info.precount_edges.begin(), info.precount_edges.end()),
      info.precount_edges.end());
  s->fn->extensions.push_back(
      {ballarus::kPathExtensionTag, ballarus::EncodePathInfo(info)});
  std::stable_sort(work->on_edges.begin(), work->on_edges.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  std::stable_sort(work->in_blocks.begin(), work->in_blocks.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  if (!dump_file) return;
  for (const auto& [e, act] : work->on_edges)
    fprintf(dump_file, "  path: edge %d->%d: %s (a=%llu, b=%llu%s%s)\n",
            e->src->index, e->dest->index, PathActionName(act.kind),
            (unsigned long long)act.a, (unsigned long long)act.b,
            act.loop >= 0 ? ", loop" : "",
            act.derived ? ", count derived" : "");
  for (const auto& [bb, act] : work->in_blocks)
    fprintf(dump_file, "  path: block %d: %s (a=%llu, b=%llu%s)\n",
            bb->index, PathActionName(act.kind), (unsigned long long)act.a,
            (unsigned long long)act.b, act.derived ? ", count derived" : "");
}

void PlanPathProfiling(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       bool measured_weights,
                       const std::vector<ReentryCall>& reentry,
                       const ReturningCallees& returning,
                       uint64_t* next_counter, uint64_t* next_hash,
                       PathWork* work) {
  PathPlanState s(fn, gcc_edges, weights, measured_weights, reentry,
                  returning, work);
  ClassifyBlocks(&s);
  FitPathTable(&s);
  if (PlanPathsFromEdges(&s)) return;
  CutOnePathLoopEntries(&s);
  CutMultiPathLoopEntries(&s);
  CutCallBlocks(&s);
  ReserveStorage(&s, next_counter, next_hash);
  PlanReentryCalls(&s);
  AnalysePrefixes(&s);
  FindGotoTargets(&s);
  PlanFakeExits(&s);
  PlanAbnormalEntries(&s);
  PlanCountedLoops(&s);
  PlanDagEdges(&s);
  if (s.derive_counts && work->loops.empty()) DeriveCountsFromEdges(&s);
  PlanBalances(&s);
  if (s.loop_registers && work->loops.empty()) MarkLoopRegisterCounts(&s);
  RecordPlan(&s);
}

}  // namespace ballarus::plugin
