// pass.cc — the instrumentation pass, "ballarus": a simple IPA pass that
// drives the instrumentation of one translation unit.  It is to ballarus
// what tree_profiling (GCC's tree-profile.cc) is to gcov: it walks the
// functions, lets the other files decide and emit, and fixes up what
// instrumentation leaves behind.
//
// The pass runs right after GCC's own "profile" pass (plugin.cc says why),
// in two phases:
//
//   1. analysis, per function (AnalyseFunction): prepare the CFG as gcov
//      does and record it in the model (cfg_prep.cc), weigh its edges
//      (weights=: estimator/, GCC's frequencies or an earlier profile),
//      choose the edge counters (counter_emit.cc) and plan the path
//      profiling (path_plan.cc), numbering counters across the TU;
//   2. instrumentation, once every function is known and the TU's counter
//      array exists (tu_emit.cc): per function, emit the path code
//      (path_emit.cc) and the edge counters (counter_emit.cc), committing
//      the edge insertions once.
//
// Per translation unit the pass also emits (tu_emit.cc): the counter array,
// the metadata blob (core/metadata.h) and a descriptor in section
// "ballarus_tus" that the runtime finds at start-up
// (runtime/ballarus_format.h).
//
// The pass dump (-fplugin-arg-ballarus-dump, or -fdump-ipa-all: GCC 12
// refuses -fdump-ipa-ballarus itself, see options.cc) explains every
// decision.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/entry_calls.h"
#include "core/metadata.h"
#include "core/model.h"
#include "estimator/estimator.h"
#include "estimator/wu_larus.h"
#include "plugin/gcov_arcs.h"
#include "plugin/options.h"
#include "plugin/profile_location.h"
#include "plugin/profile_weights.h"
#include "runtime/ballarus_format.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/branch_hints.h"
#include "plugin/cfg_prep.h"
#include "plugin/counter_emit.h"
#include "plugin/entry_calls.h"
#include "plugin/pass.h"
#include "plugin/path_emit.h"
#include "plugin/path_plan.h"
#include "plugin/reentry.h"
#include "plugin/path_returns.h"
#include "plugin/trace_emit.h"
#include "plugin/tu_emit.h"

namespace ballarus::plugin {

namespace {

// One function's analysis result, kept between the analysis and the
// instrumentation phases.
struct FunctionWork {
  cgraph_node* node = nullptr;
  size_t model_index = 0;
  EdgeCounters counters;
  // mode=edge: the CFG's edges (parallel to the model's; the fake ones are
  // gone) and their weights, for PlaceEdgeCountersOfUnit.
  std::vector<edge> gcc_edges;
  std::vector<uint64_t> weights;
  PathWork path;
  std::vector<ReentryCall> reentry;  // calls ending with a re-entry edge
  TraceWork trace;                    // mode=trace
};

// Spanning-tree weights for fn's edges (parallel to fn.edges), per
// -fplugin-arg-ballarus-weights.  The re-entry edges are left out of the
// estimate (an estimator would split ENTRY's flow across them) and get
// weight 0: they are as cold as edges get.
std::vector<uint64_t> GraphEdgeWeights(const ballarus::Function& fn,
                                       const std::vector<edge>& gcc_edges,
                                       uint64_t tu_identity,
                                       bool* measured = nullptr);

// The Wu-Larus heuristics that apply to each two-way branch.
void DumpHeuristics(const ballarus::Function& fn,
                    const ballarus::BranchHints& hints) {
  const std::vector<std::vector<ballarus::AppliedHeuristic>> all =
      ballarus::AppliedHeuristics(fn, hints);
  for (uint32_t b = 0; b < all.size(); ++b) {
    const std::vector<ballarus::AppliedHeuristic>& applied = all[b];
    if (applied.empty()) continue;
    fprintf(dump_file, "  bb %u heuristics:", b);
    for (const ballarus::AppliedHeuristic& a : applied)
      fprintf(dump_file, " %s->%u", ballarus::HeuristicName(a.heuristic),
              fn.edges[a.likelier_edge].dst);
    fputs("\n", dump_file);
  }
}

// *measured: the weights are an earlier profile's exact counts.
std::vector<uint64_t> EdgeWeights(const ballarus::Function& fn,
                                  const std::vector<edge>& gcc_edges,
                                  uint64_t tu_identity, bool* measured) {
  *measured = false;
  std::vector<size_t> kept;
  for (size_t i = 0; i < fn.edges.size(); ++i)
    if (!(fn.edges[i].flags & ballarus::kEdgeReentry)) kept.push_back(i);
  if (kept.size() == fn.edges.size() ||
      g_options.weights == WeightKind::kProfile)
    return GraphEdgeWeights(fn, gcc_edges, tu_identity, measured);
  ballarus::Function g = fn;
  g.edges.clear();
  std::vector<edge> g_edges;
  for (size_t i : kept) {
    g.edges.push_back(fn.edges[i]);
    g_edges.push_back(gcc_edges[i]);
  }
  std::vector<uint64_t> gw = GraphEdgeWeights(g, g_edges, tu_identity);
  std::vector<uint64_t> w(fn.edges.size(), 0);
  for (size_t k = 0; k < kept.size(); ++k) w[kept[k]] = gw[k];
  return w;
}

std::vector<uint64_t> GraphEdgeWeights(const ballarus::Function& fn,
                                       const std::vector<edge>& gcc_edges,
                                       uint64_t tu_identity, bool* measured) {
  WeightKind kind = g_options.weights;
  if (kind == WeightKind::kProfile) {
    std::vector<uint64_t> counts;
    if (g_profile_weights.Lookup(fn.name, fn.cfg_checksum, tu_identity,
                                 &counts) &&
        counts.size() == fn.edges.size()) {
      if (dump_file) fprintf(dump_file, "  weights: profile counts\n");
      for (uint64_t& c : counts) c = ballarus_sat_add(c, 1);
      if (measured) *measured = true;
      return counts;
    }
    if (dump_file)
      fprintf(dump_file,
              "  weights: %s not in the profile (or another CFG); using the "
              "heuristic\n",
              fn.name.c_str());
    kind = WeightKind::kHeuristic;
  }
  if (kind == WeightKind::kGcc) {
    if (profile_status_for_fn(cfun) != PROFILE_ABSENT) {
      std::vector<uint64_t> w(fn.edges.size(), 1);
      for (size_t i = 0; i < gcc_edges.size(); ++i)
        if (gcc_edges[i] != nullptr && !(gcc_edges[i]->flags & EDGE_FAKE))
          w[i] = static_cast<uint64_t>(EDGE_FREQUENCY(gcc_edges[i])) + 1;
      if (dump_file) fprintf(dump_file, "  weights: GCC edge frequencies\n");
      return w;
    }
    if (dump_file)
      fprintf(dump_file,
              "  weights: GCC has no profile estimate here; using the "
              "heuristic\n");
    kind = WeightKind::kHeuristic;
  }
  if (kind == WeightKind::kUniform) {
    if (dump_file) fprintf(dump_file, "  weights: uniform\n");
    return ballarus::UniformWeights(fn).edges;
  }
  if (g_options.estimator == Options::Estimator::kWuLarus) {
    if (dump_file) fprintf(dump_file, "  weights: Wu-Larus heuristic\n");
    const ballarus::BranchHints hints =
        ReadBranchHints(fn.blocks.size(), gcc_edges);
    if (dump_file) DumpHeuristics(fn, hints);
    return ballarus::WuLarusWeights(fn, hints).edges;
  }
  if (dump_file) fprintf(dump_file, "  weights: Ball-Larus heuristic\n");
  return ballarus::HeuristicWeights(fn).edges;
}

// The pass dump's weights line (every edge's weight, in edge order) and
// GCC's own branch probabilities ("-" where GCC has none): what
// bench/estimator compares with a measured profile.
void DumpWeights(const std::vector<uint64_t>& weights,
                 const std::vector<edge>& gcc_edges) {
  fputs("  edge weights:", dump_file);
  for (uint64_t w : weights) fprintf(dump_file, " %llu", (unsigned long long)w);
  fputs("\n  gcc probabilities:", dump_file);
  for (edge e : gcc_edges) {
    if (e != nullptr && e->probability.initialized_p())
      fprintf(dump_file, " %d", e->probability.to_reg_br_prob_base());
    else
      fputs(" -", dump_file);
  }
  fputs("\n", dump_file);
}

// Analyses cfun: prepares the CFG, fills `fn`, chooses counters.
void AnalyseFunction(ballarus::Function* fn, FileTable* files,
                     const ReentryCallees& callees, uint64_t tu_identity,
                     const ReturningCallees& returning,
                     uint64_t* next_counter, uint64_t* next_hash,
                     FunctionWork* work) {
  std::vector<edge> gcc_edges;  // parallel to fn->edges
  PrepareAndRecordFunction(fn, files, callees, &gcc_edges, &work->reentry);

  std::vector<uint64_t> weights;
  bool measured = false;
  if (g_options.mode == Mode::kEdge || g_options.paths || g_options.trace)
    weights = EdgeWeights(*fn, gcc_edges, tu_identity, &measured);
  if (dump_file && !weights.empty()) DumpWeights(weights, gcc_edges);
  if (g_options.trace)
    PlanFunctionTrace(fn, weights, static_cast<uint32_t>(work->model_index),
                      g_options.trace_naive, &work->trace);
  // mode=edge: the counters are placed once every function is known
  // (PlaceEdgeCountersOfUnit), as a function's entry count may come from
  // its callers.
  if (g_options.mode == Mode::kEdge) {
    work->gcc_edges = gcc_edges;
    work->weights = weights;
  } else {
    PlaceEdgeCounters(fn, gcc_edges, weights, next_counter, &work->counters);
  }
  if (g_options.paths)
    PlanPathProfiling(fn, gcc_edges, weights, measured, work->reentry,
                      returning, next_counter,
                      next_hash, &work->path);
  // Paths determined by the edge counts: in mode=path the edge counters
  // the first call did not place (mode=edge,path has them already).
  if (work->path.from_edges && g_options.mode == Mode::kNone)
    PlaceEdgeCounters(fn, gcc_edges, weights, next_counter, &work->counters,
                      /*spanning_tree=*/true);
  // The fake edges have served: gcov removes them before instrumenting too.
  remove_fake_edges();
}

// Entry balance (path-entry-balance): which functions' entry pre-count
// (PathWork::entry_block) the balance of their calls can stand for.  A
// function qualifies when every call of it is known: local to the TU
// (OnlyCalledDirectlyHere: not visible outside, address never taken, no
// aliases),
// and each of its call-graph callers a direct call, not yet inlined, from
// another function instrumented here, the call last in its block (gcov's
// CFG ends a block at a call that may not return, and such a function's
// calls may not return: it has a pre-count).  A caller that is itself
// balanced must be solved first, so the balanced functions' dependencies
// must not form a cycle: candidates are accepted once all their callers
// are settled (not candidates, accepted or refused); when none can be,
// one is refused.
void ChooseEntryBalances(std::vector<FunctionWork>* work,
                         std::vector<ballarus::Function>* functions) {
  std::map<cgraph_node*, size_t> index_of;
  for (size_t i = 0; i < work->size(); ++i) index_of[(*work)[i].node] = i;
  enum State : uint8_t { kNotCandidate, kPending, kAccepted, kRefused };
  std::vector<State> state(work->size(), kNotCandidate);
  std::vector<std::vector<ballarus::PathInfo::Call>> calls(work->size());
  std::vector<std::vector<size_t>> callers(work->size());
  for (size_t i = 0; i < work->size(); ++i) {
    FunctionWork& w = (*work)[i];
    if (w.path.entry_block == nullptr) continue;
    cgraph_node* node = w.node;
    if (!OnlyCalledDirectlyHere(node) || node->callers == NULL) {
      if (dump_file)
        fprintf(dump_file, "ballarus: %s: entry not balanced: %s\n",
                node->dump_name(),
                node->callers == NULL ? "no calls"
                                      : "called from elsewhere too");
      continue;
    }
    bool ok = true;
    for (cgraph_edge* e = node->callers; e != NULL && ok; e = e->next_caller) {
      auto it = index_of.find(e->caller);
      if (it == index_of.end() || it->second == i || !e->inline_failed ||
          e->caller->inlined_to != NULL || e->call_stmt == NULL ||
          gimple_bb(e->call_stmt) == NULL) {
        ok = false;
        break;
      }
      const FunctionWork& g = (*work)[it->second];
      if (!g.path.enabled && !g.path.from_edges) {
        ok = false;
        break;
      }
      basic_block bb = gimple_bb(e->call_stmt);
      gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
      const uint32_t block = static_cast<uint32_t>(bb->index);
      if (gsi_end_p(gsi) || gsi_stmt(gsi) != e->call_stmt || block < 2 ||
          block >= (*functions)[g.model_index].blocks.size()) {
        ok = false;
        break;
      }
      calls[i].push_back(
          {static_cast<uint32_t>(g.model_index), block});
      callers[i].push_back(it->second);
    }
    if (ok) state[i] = kPending;
    else if (dump_file)
      fprintf(dump_file, "ballarus: %s: entry not balanced: a call from "
              "outside the path-profiled code of this TU\n",
              node->dump_name());
  }
  for (bool pending = true; pending;) {
    pending = false;
    bool progress = false;
    for (size_t i = 0; i < work->size(); ++i) {
      if (state[i] != kPending) continue;
      bool settled = true;
      for (size_t g : callers[i]) settled = settled && state[g] != kPending;
      if (!settled) {
        pending = true;
        continue;
      }
      state[i] = kAccepted;
      progress = true;
    }
    if (pending && !progress) {
      // A cycle of candidates: refuse the first one left.
      for (size_t i = 0; i < work->size(); ++i)
        if (state[i] == kPending) {
          state[i] = kRefused;
          break;
        }
    }
  }
  for (size_t i = 0; i < work->size(); ++i) {
    FunctionWork& w = (*work)[i];
    if (state[i] != kAccepted) {
      w.path.entry_block = nullptr;
      continue;
    }
    push_cfun(DECL_STRUCT_FUNCTION(w.node->decl));
    ApplyEntryBalance(calls[i], &w.path);
    pop_cfun();
    for (ballarus::Extension& x : (*functions)[w.model_index].extensions)
      if (x.tag == ballarus::kPathExtensionTag)
        x.bytes = ballarus::EncodePathInfo(w.path.info);
  }
}

// Turns off cross-jumping (-fcrossjumping, on from -O2) for the function
// of cfun, through a function-specific optimization node like
// __attribute__((optimize("no-crossjumping"))) gives.  Path profiling
// counts a computed goto's path end on the edges into it, before the
// predecessors' common code (an interpreter's "fetch the next
// instruction"), which then ends every predecessor alike; cross-jumping
// would fold those tails into shared blocks, reached by an extra jump,
// that the computed goto can no longer be duplicated into
// (pass_duplicate_computed_gotos).  gcov's own counts sit in those tails
// and keep them apart.  Cross-jumping only shares code: without it the
// function executes no more instructions, rather fewer
// (docs/performance.md, "Keeping tails apart").
void KeepTailsApart() {
  if (!global_options.x_flag_crossjumping) return;
  gcc_options opts = global_options;
  opts.x_flag_crossjumping = 0;
  DECL_FUNCTION_SPECIFIC_OPTIMIZATION(current_function_decl) =
      build_optimization_node(&opts, &global_options_set);
}

std::string GetCwd() {
  const char* pwd = getpwd();
  return pwd ? pwd : "";
}

// The TU's record before its functions: its source, directory, profile
// location, compiler and flags.
void DescribeUnit(UpdateMode update, ballarus::TranslationUnit* tu) {
  const bool exact_under_threads =
      update == UpdateMode::kAtomic || update == UpdateMode::kThread;
  tu->source = main_input_filename ? main_input_filename : "";
  tu->cwd = GetCwd();
  ballarus_plugin::SetProfileLocation(tu);
  tu->compiler = std::string("gcc ") + version_string;
  tu->flags = (g_options.mode == Mode::kNaive  ? BALLARUS_META_F_NAIVE
               : g_options.mode == Mode::kEdge ? BALLARUS_META_F_EDGE
                                               : 0u) |
              (g_options.paths ? BALLARUS_META_F_PATH : 0u) |
              // Exact under threads (atomic or per-thread counters): the
              // counts, their layout and their meaning are the same.
              (exact_under_threads ? BALLARUS_META_F_ATOMIC : 0u);
  if (dump_file)
    fprintf(dump_file, "ballarus: mode %s%s, update %s\n",
            g_options.mode == Mode::kNaive  ? "naive"
            : g_options.mode == Mode::kEdge ? "edge"
                                            : "",
            g_options.paths ? (g_options.mode == Mode::kNone ? "path" : ",path")
                            : "",
            UpdateName(update));
}

// Phase 1: analyse every function to instrument; choose its counters,
// numbered across the TU (*n_counters; *n_hashes hashed path tables).
std::vector<FunctionWork> AnalyseFunctions(ballarus::TranslationUnit* tu,
                                           FileTable* files,
                                           uint64_t* n_counters,
                                           uint64_t* n_hashes) {
  std::vector<FunctionWork> work;
  const uint64_t tu_identity = ballarus::TuIdentity(*tu);
  ReentryCallees callees;
  callees.Compute();
  // Path mode's early termination: the TU's functions that always return
  // (path_returns.cc) need no pre-count at their calls.
  ReturningCallees returning;
  if (g_options.paths && g_options.early_termination &&
      g_options.path_returns) {
    returning.Compute();
    if (dump_file)
      fprintf(dump_file, "ballarus: %zu functions always return\n",
              returning.size());
  }
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    if (!ShouldInstrument(node)) continue;
    push_cfun(DECL_STRUCT_FUNCTION(node->decl));
    FunctionWork w;
    w.node = node;
    w.model_index = tu->functions.size();
    tu->functions.emplace_back();
    AnalyseFunction(&tu->functions.back(), files, callees, tu_identity,
                    returning, n_counters, n_hashes, &w);
    work.push_back(std::move(w));
    free_dominance_info(CDI_DOMINATORS);
    free_dominance_info(CDI_POST_DOMINATORS);
    pop_cfun();
  }
  return work;
}

// mode=edge, once every function is analysed: each function's edge
// counters, numbered from *n_counters on, the entry edge of those whose
// entry count their calls give (entry_calls.h, tune-entry-calls) known
// without a counter and recorded as an extension of its function.
void PlaceEdgeCountersOfUnit(std::vector<FunctionWork>* work,
                             ballarus::TranslationUnit* tu,
                             uint64_t* n_counters) {
  std::vector<std::optional<ballarus::EntryCalls>> entry(work->size());
  if (g_options.entry_calls) {
    std::vector<cgraph_node*> nodes;
    for (const FunctionWork& w : *work) nodes.push_back(w.node);
    entry = ChooseEntryCalls(nodes, tu->functions);
  }
  for (size_t i = 0; i < work->size(); ++i) {
    FunctionWork& w = (*work)[i];
    ballarus::Function& fn = tu->functions[w.model_index];
    if (dump_file)
      fprintf(dump_file, "ballarus: function %s: edge counters\n",
              fn.demangled.c_str());
    std::vector<size_t> known;
    if (entry[i]) {
      known.push_back(entry[i]->edge);
      fn.extensions.push_back({ballarus::kEntryCallsExtensionTag,
                               ballarus::EncodeEntryCalls(*entry[i])});
    }
    PlaceEdgeCounters(&fn, w.gcc_edges, w.weights, n_counters, &w.counters,
                      /*spanning_tree=*/false, known);
    w.gcc_edges.clear();
    w.weights.clear();
  }
}

// The TU's declarations the instrumentation refers to.
struct UnitDecls {
  tree counters = NULL_TREE;  // the counter array
  PathHashDecls hashes;       // hashed path tables
  tree arrived = NULL_TREE;   // the re-entry flag, where a function uses it
  tree epoch = NULL_TREE;     // the fork epoch, where a function reads it
  uint64_t tu_identity = 0;   // TuIdentity: mode=trace's TU stamp
};

// The TU's counter array and hashed path tables.  The array is never
// DECL_NONALIASED: dense path tables addressed through a pointer register
// (path_emit.cc) are indirect accesses, which would break that promise;
// and without them the promise costs more than it saves, since GCC moves
// loops' counter updates into registers anyway (docs/performance.md,
// "Non-aliased counter array").
UnitDecls EmitUnitDecls(const std::vector<FunctionWork>& work,
                        uint64_t n_counters, uint64_t n_hashes,
                        bool per_thread) {
  UnitDecls d;
  d.counters = EmitCounterArray(n_counters, /*nonaliased=*/false);
  if (per_thread) PrepareThreadCounters(d.counters);
  std::vector<HashedPathTable> hashed;
  for (const FunctionWork& w : work)
    if (w.path.enabled && w.path.info.storage == ballarus::PathInfo::kHashed)
      hashed.push_back({w.path.info.base, w.model_index});
  gcc_assert(hashed.size() == n_hashes);
  d.hashes = EmitPathHashTables(hashed);
  for (const FunctionWork& w : work)
    if (w.path.uses_flag && d.arrived == NULL_TREE)
      d.arrived = MakeArrivedFlag();
  for (const FunctionWork& w : work)
    if (!w.reentry.empty() && d.epoch == NULL_TREE) d.epoch = EpochDecl();
  return d;
}

// Phase 2, one function (cfun): its path code and edge counters, with one
// commit of the edge insertions; an edge is split only where neither end
// can hold its code.
void InstrumentFunction(FunctionWork* w, ballarus::Function* fn,
                        const UnitDecls& d, bool atomic, bool per_thread) {
  if (dump_file)
    fprintf(dump_file, "ballarus: function %s: %zu counters\n",
            fn->demangled.c_str(), w->counters.counted.size());
  if (per_thread) BeginThreadCounters();
  JudgeLoops();
  BeginLoopRegisters(LoopRegistersWanted(atomic, per_thread));
  EmitEpochReads(*fn, w->path.enabled, d.epoch, &w->reentry);
  if (w->path.enabled)
    EmitPathProfiling(w->path, d.counters, d.hashes.tables, d.hashes.add_fn,
                      d.arrived, w->reentry, d.epoch, atomic);
  if (w->path.enabled && w->path.goto_end_hoisted &&
      g_options.path_keep_tails)
    KeepTailsApart();
  EmitEdgeCounters(w->counters, fn, d.counters, atomic);
  EmitTrace(w->trace, static_cast<uint32_t>(d.tu_identity));
  QueueReentryCounts(w->reentry, *fn, d.counters, d.epoch, atomic);
  EndLoopRegisters(d.counters);
  gsi_commit_edge_inserts();
  if (w->trace.enabled) InlineTraceHooks();
  if (per_thread) EndThreadCounters();
}

// Instrumented functions write memory now: they are no longer const/pure
// (as tree_profiling does for gcov), and their call statements and the
// call graph need refreshing.
void RefreshInstrumented(const std::vector<FunctionWork>& work) {
  for (const FunctionWork& w : work) {
    w.node->set_const_flag(false, false);
    w.node->set_pure_flag(false, false);
  }
  for (const FunctionWork& w : work) {
    push_cfun(DECL_STRUCT_FUNCTION(w.node->decl));
    basic_block bb;
    FOR_EACH_BB_FN(bb, cfun) {
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
           gsi_next(&gsi)) {
        gimple* stmt = gsi_stmt(gsi);
        if (is_gimple_call(stmt)) update_stmt(stmt);
      }
    }
    cleanup_tree_cfg();
    mark_virtual_operands_for_renaming(cfun);
    update_ssa(TODO_update_ssa);
    cgraph_edge::rebuild_edges();
    pop_cfun();
  }
}

unsigned int ExecuteBallarus() {
  ballarus::GcovExpandThunks();  // as -fprofile-arcs does, to count them
  const UpdateMode update = ChosenUpdate();
  const bool atomic = update == UpdateMode::kAtomic;
  const bool per_thread = update == UpdateMode::kThread;
  ballarus::TranslationUnit tu;
  DescribeUnit(update, &tu);
  FileTable files(&tu.files);
  uint64_t n_counters = 0;
  uint64_t n_hashes = 0;
  std::vector<FunctionWork> work =
      AnalyseFunctions(&tu, &files, &n_counters, &n_hashes);
  if (work.empty()) return 0;
  if (g_options.mode == Mode::kEdge)
    PlaceEdgeCountersOfUnit(&work, &tu, &n_counters);
  if (g_options.paths) ChooseEntryBalances(&work, &tu.functions);
  tu.n_counters = n_counters;
  ballarus::GcovRecordUnit(&tu);  // where the .gcda goes, for -fprofile-use
  UnitDecls decls = EmitUnitDecls(work, n_counters, n_hashes, per_thread);
  decls.tu_identity = ballarus::TuIdentity(tu);
  for (FunctionWork& w : work) {
    push_cfun(DECL_STRUCT_FUNCTION(w.node->decl));
    InstrumentFunction(&w, &tu.functions[w.model_index], decls, atomic,
                       per_thread);
    pop_cfun();
  }
  RefreshInstrumented(work);
  // The metadata blob and the descriptor the runtime walks.
  const size_t blob_size = EmitMetadataAndDescriptor(
      tu, decls.counters, decls.hashes.tables, n_hashes);
  if (dump_file)
    fprintf(dump_file,
            "ballarus: %zu functions, %llu counters, metadata %zu bytes\n",
            tu.functions.size(), (unsigned long long)n_counters, blob_size);
  return 0;
}

const pass_data kPassData = {
    SIMPLE_IPA_PASS,  // type
    "ballarus",       // name: -fdump-ipa-ballarus
    OPTGROUP_NONE,    // optinfo_flags
    TV_NONE,          // tv_id
    0,                // properties_required
    0,                // properties_provided
    0,                // properties_destroyed
    0,                // todo_flags_start
    0,                // todo_flags_finish
};

class ballarus_pass : public simple_ipa_opt_pass {
 public:
  explicit ballarus_pass(gcc::context* ctxt)
      : simple_ipa_opt_pass(kPassData, ctxt) {}
  bool gate(function*) override { return !seen_error() && !in_lto_p; }
  unsigned int execute(function*) override { return ExecuteBallarus(); }
};

}  // namespace

simple_ipa_opt_pass* make_ballarus_pass(gcc::context* ctxt) {
  return new ballarus_pass(ctxt);
}

}  // namespace ballarus::plugin
