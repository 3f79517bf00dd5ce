// path_plan.cc — Ball–Larus path profiling (Ball & Larus, "Efficient path
// profiling", MICRO 1996), the planning half: which code goes where.
//
// It runs on the CFG prepared like gcov's (cfg_prep.cc) while the fake edges
// still exist.  core/path_profile.h does the GCC-free work: the DAG (back
// edges from a DFS, dummy ENTRY/EXIT edges, cut blocks at cold code for
// functions above path-table-max paths), the exact numbering, the
// increments on the chords of a maximum spanning tree of the DAG plus
// EXIT->ENTRY, and the loops counted in locals.  This file adds what
// needs GCC's IR — which blocks may be cut (not a returns-twice call, not an
// abnormal dispatcher), which calls may not return (early termination),
// which calls may return as re-entries (fork, reset: reentry.h), which
// blocks are re-entered abnormally (setjmp receivers, nonlocal
// labels, computed-goto targets) — and turns it all into PathActions on
// edges and in blocks.  It also records the function's PathInfo (a metadata
// extension, core/metadata.h) and reserves its storage: a dense slice of the
// TU's counter array (at most path-table-max paths) or, with
// path-storage=hash, a hashed table.  Early termination counts a truncated
// path before each call that may not return and never undoes it
// (reconstruct settles it: SettlePrecounts), except before calls to the
// TU's functions that always return (path_returns.h).
// path_emit.cc emits the actions once the fake edges are gone; the table of
// actions and their code is in docs/DESIGN.md ("Path mode in the plugin").

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "core/spanning_tree.h"
#include "plugin/options.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/path_plan.h"

namespace ballarus::plugin {

namespace {

// A count in a loop that takes registers which at most this many path
// prefixes reach is made in locals (PathAction::choices): for two, the
// sum of the register and the number of counts, two register adds per
// execution, from which the loop's exits recover both paths' counts
// (path_emit.cc, CountChoices).
constexpr size_t kMaxCountChoices = 2;

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

// The successors of bb other than fake edges: 1 means no other way on (an
// edge from bb needs no split for code on it).
int RealSuccessors(basic_block bb) {
  int n = 0;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->succs) n += !(e->flags & EDGE_FAKE);
  return n;
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

namespace {

// Paths determined by edge counts (path-from-edges; core/path_profile.h
// PathsDeterminedByEdges): a function whose acyclic paths are linearly
// independent as edge vectors -- one if/else, one switch, a run of calls
// that may not return, a loop with a one-path body -- has its path counts
// determined by its edge counts, so it needs no path register, no path
// ends and no early-termination pre-counts: edge counters on the chords
// of the maximum spanning tree (what edge mode places; the caller does so
// in mode=path too) cost what edge profiling costs, and the fake edges'
// counts, which flow conservation gives, are the truncated paths'.
// Reconstruct solves the path counts (PathCountsFromEdges).  Only with
// the back edges cut (before loop entry cuts, which would add paths
// ending at each entry), no cut blocks, no abnormal edges or re-entries
// (their fake ENTRY edges are not counted), every chord able to hold a
// counter, and at most kFromEdgesMaxPaths paths (the check is an exact
// elimination over the rationals; such functions are small anyway).
bool PlanPathsFromEdges(ballarus::Function* fn, const ballarus::PathPlan& plan,
                        const ballarus::PathDag& dag,
                        const std::vector<uint64_t>& weights,
                        const std::vector<ReentryCall>& reentry,
                        const std::vector<bool>& returns_twice,
                        const std::vector<bool>& dispatcher, PathWork* work) {
  constexpr uint64_t kFromEdgesMaxPaths = 64;
  // auto: not where every path table is to be hashed (path-storage=hash,
  // path-table-max=0: the runtime's tables are what is asked for).
  if (!Options::IsOn(g_options.path_from_edges,
                     !g_options.path_storage_hash &&
                         g_options.path_table_max > 0))
    return false;
  if (!plan.cuts.blocks.empty() || !reentry.empty()) return false;
  for (size_t b = 0; b < returns_twice.size(); ++b)
    if (returns_twice[b] || dispatcher[b]) return false;
  for (const ballarus::Edge& e : fn->edges)
    if ((e.flags & (ballarus::kEdgeAbnormal | ballarus::kEdgeIgnored |
                    ballarus::kEdgeReentry)) ||
        ((e.flags & ballarus::kEdgeFake) && e.src == ballarus::kEntryBlock))
      return false;
  const ballarus::PathNumbering num = ballarus::NumberPaths(dag);
  if (!ballarus::PathsDeterminedByEdges(dag, num, kFromEdgesMaxPaths))
    return false;
  if (!ballarus::MaximumSpanningTree(*fn, weights).uncountable_chords.empty())
    return false;
  ballarus::PathInfo& info = work->info;
  info.storage = ballarus::PathInfo::kFromEdges;
  info.base = 0;
  info.n_paths = num.total().get_ui();
  info.cut_edges = plan.cuts.edges;
  info.flags = ballarus::kPathFlagEarlyTermination;
  work->from_edges = true;
  fn->extensions.push_back(
      {ballarus::kPathExtensionTag, ballarus::EncodePathInfo(info)});
  if (dump_file)
    fprintf(dump_file, "  paths: %llu, determined by the edge counts (no "
            "path register; edge counters on the chords); %zu cut edges\n",
            (unsigned long long)info.n_paths, info.cut_edges.size());
  return true;
}

// Multi-path loop entry cuts (part of path-loop-cuts).  The one-path loop
// entry cuts in PlanPathProfiling make the register a constant at the
// header of a loop whose iterations take one path.  A loop whose
// iterations take several paths has the same problem: the register at its
// header is a PHI of the register on entry (any path so far) and of the
// back edge's b, so every chord in the loop is an addition GCC cannot fold
// and the count at its back edge goes through a variable address --
// bzip2's mainQSort3 partition loops paid `add $c,%rax; addq $1,(%rax);
// mov %r10,%rax` per iteration, a register kept for b and another for r
// in a loop short of registers (spills).  Cutting every entry edge of the
// loop too makes the register b on every way into the header: the path
// prefix at each block of the body that one way reaches from the header is
// known, its chords fold and its counts are constant addresses; where
// several ways merge the register is a PHI of constants.  The price is one
// count per entry into the loop (at a constant address where the prefix
// before the loop is known), so only loops that iterate at least once per
// entry are cut: on the weights' evidence and, unless the weights are
// measured, on GCC's guessed profile too (header count at least twice its
// entries').  The static weights give every back edge 9 times its loop's
// entries; GCC's predictors see that bzip2's GET_BITS loops (0.47
// iterations per entry in its guess; in fact one per 8 bits read, entered
// per symbol) rarely go round, where mainQSort3's partition loops do
// (10-12): cutting those cost BZ2_decompress 13 M instructions (bzip2
// path 1.096 instead of 1.084).  (At -O0 GCC guesses no profile: the
// weights alone decide.)  A cut edge never adds paths: the table still
// fits.  Returns the edges cut (ascending), added to plan->cuts.
std::vector<uint32_t> CutMultiPathLoopEntries(
    const ballarus::Function& fn, const std::vector<edge>& gcc_edges,
    const std::vector<uint64_t>& weights, bool measured_weights, bool on,
    ballarus::PathPlan* plan) {
  std::vector<uint32_t> cut;
  if (!on || plan->cuts.edges.empty()) return cut;
  std::vector<bool> is_cut(fn.edges.size(), false);
  for (uint32_t i : plan->cuts.edges) is_cut[i] = true;
  for (const ballarus::LoopEntries& L :
       ballarus::FindLoopEntries(fn, plan->cuts)) {
    uint64_t in_w = 0;
    bool ok = true;
    for (uint32_t i : L.entries) {
      in_w += i < weights.size() ? weights[i] : 1;
      // A re-entry edge carries its own code (kReentry); a fake one none.
      ok = ok && !is_cut[i] &&
           !(fn.edges[i].flags &
             (ballarus::kEdgeFake | ballarus::kEdgeReentry)) &&
           i < gcc_edges.size() && gcc_edges[i] != NULL;
    }
    const uint64_t back_w =
        L.back_edge < weights.size() ? weights[L.back_edge] : 1;
    // GCC's own guess of the loop's header and entry counts (its branch
    // predictors see loop exits and iteration counts the static weights
    // do not), unless the weights are measured.
    bool rare = false;
    if (!measured_weights && ok) {
      const profile_count hc = BASIC_BLOCK_FOR_FN(cfun, L.header)->count;
      profile_count ec = profile_count::zero();
      for (uint32_t i : L.entries) ec += gcc_edges[i]->count();
      if (hc.initialized_p() && ec.initialized_p() && ec.nonzero_p())
        rare = hc.to_gcov_type() < 2 * ec.to_gcov_type();
    }
    if (!ok || back_w < in_w || rare) {
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): "
                "entry edges not cut (%s)\n",
                L.header, fn.edges[L.back_edge].src, L.header,
                !ok ? "a re-entry or cut entry edge"
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
              L.entries.size(), (unsigned long long)back_w,
              (unsigned long long)in_w);
  }
  std::sort(cut.begin(), cut.end());
  plan->cuts.edges.insert(plan->cuts.edges.end(), cut.begin(), cut.end());
  std::sort(plan->cuts.edges.begin(), plan->cuts.edges.end());
  return cut;
}

// Call cuts (path-call-cuts).  A call that may not return is pre-counted
// (early termination): count[r + a]++ before it, through the register of
// the path so far.  Where several path prefixes reach the call's block
// that register is a variable, and the path goes on after the call with
// it, so it lives across the call -- in a callee-saved register that
// every invocation pushes and pops, materialised (`lea`) on each way in:
// lua's small API functions (lua_callk, lua_compare, lua_geti: a test or
// two, then a call, then the end) paid 3-5 instructions per call where
// gcov pays 2 counter updates, and push/pop alone made up 106 M of lua's
// 116 M instructions over gcov.  Cutting the call's block instead ends the
// path on entering it (a count through the register, or, hoisted onto the
// in-edges, `addq $1,K(%rip)` on each) and starts the next one there: the
// register is the constant b across the call, and the pre-count goes
// (the block's paths are balanced against its cut counts:
// BalanceStartTruncations).  Same number of counts, no register across the
// call.  The price is information: a path no longer runs through such a
// call (its prefix and what follows are counted apart), as at a loop
// entry cut.  Only a call of the pre-counting kind (not a callee of the
// TU that always returns) whose block several prefixes reach, may be cut
// (not a returns-twice call or dispatcher, not a re-entry call), is
// entered by ordinary edges only and is not the target of a cut edge;
// with kept pre-counts (the balance needs them); and not in a function
// cut already to fit its table (sqlite3VdbeExec:
// its 119 call cuts cost 93 M instructions, 95 M more moves to and from
// the stack, where the other functions of sqlite3 saved 24 M).
// Returns the blocks cut (ascending), added to plan->cuts.
std::vector<uint32_t> CutCallBlocks(const ballarus::Function& fn,
                                    const ballarus::PathDag& dag,
                                    const std::vector<basic_block>& bbs,
                                    const std::vector<bool>& may_cut,
                                    const std::vector<ReentryCall>& reentry,
                                    const ReturningCallees& returning,
                                    ballarus::PathPlan* plan) {
  std::vector<uint32_t> cut;
  if (!Options::IsOn(g_options.path_call_cuts,
                     g_options.mode == Mode::kNone) ||
      !g_options.early_termination ||
      !plan->cuts.blocks.empty())
    return cut;
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  const std::vector<uint8_t> prefixes = ballarus::CountPrefixes(dag);
  std::vector<bool> excluded(nb, false);  // cut already, or a cut's target
  for (uint32_t b : plan->cuts.blocks) excluded[b] = true;
  for (uint32_t i : plan->cuts.edges)
    if (fn.edges[i].dst < nb) excluded[fn.edges[i].dst] = true;
  for (const ReentryCall& rc : reentry)
    excluded[static_cast<uint32_t>(rc.block->index)] = true;
  // A block entered abnormally too (a computed goto's target, a re-entry:
  // a fake edge from ENTRY) starts paths of its own already.
  for (const ballarus::Edge& me : fn.edges)
    if (me.dst < nb &&
        (me.flags & (ballarus::kEdgeFake | ballarus::kEdgeAbnormal |
                     ballarus::kEdgeIgnored | ballarus::kEdgeReentry)))
      excluded[me.dst] = true;
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const ballarus::Edge& me = fn.edges[i];
    const uint32_t u = me.src;
    if (!(me.flags & ballarus::kEdgeFake) || me.dst != ballarus::kExitBlock ||
        dag.dag_edge_of_cfg[i] < 0 || u < 2 || u >= nb || bbs[u] == NULL ||
        !may_cut[u] || excluded[u] || prefixes[dag.in_vertex[u]] < 2)
      continue;
    gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bbs[u]);
    gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
    if (last == NULL || !is_gimple_call(last)) continue;
    bool normal = false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[u]->succs)
      normal = normal ||
               !(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL));
    if (!normal) continue;
    if (!gimple_call_tail_p(as_a<gcall*>(last)) &&
        !gimple_call_must_tail_p(as_a<gcall*>(last)) &&
        returning.AlwaysReturns(last))
      continue;
    excluded[u] = true;
    cut.push_back(u);
    if (dump_file)
      fprintf(dump_file, "  path: block %u cut: its call may not return and "
              "several prefixes reach it\n", u);
  }
  std::sort(cut.begin(), cut.end());
  plan->cuts.blocks.insert(plan->cuts.blocks.end(), cut.begin(), cut.end());
  std::sort(plan->cuts.blocks.begin(), plan->cuts.blocks.end());
  return cut;
}

// Path ends hoisted onto chords (path-hoist; see "Count hoisting" in
// PlanPathProfiling).  The GCC edges that carry a chord -- a nonzero
// increment on a DAG edge of their own -- ascending by address: code on
// such an edge splits it anyway (unless its source has it as its only
// successor, or its target only this predecessor), so a path end counted
// on it as well adds no block.
std::vector<edge> ChordEdges(const ballarus::Function& fn,
                             const ballarus::PathDag& dag,
                             const ballarus::PathIncrements& inc,
                             const std::vector<edge>& gcc_edges) {
  std::vector<edge> out;
  for (size_t i = 0; i < fn.edges.size() && i < gcc_edges.size(); ++i) {
    const int64_t d = dag.dag_edge_of_cfg[i];
    if (d < 0 || gcc_edges[i] == NULL ||
        dag.edges[d].kind != ballarus::DagEdge::kCfg || inc.inc[d] == 0 ||
        (fn.edges[i].flags & (ballarus::kEdgeFake | ballarus::kEdgeReentry)))
      continue;
    out.push_back(gcc_edges[i]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool SplitForChordAnyway(edge e, const std::vector<edge>& chord_edges) {
  return std::binary_search(chord_edges.begin(), chord_edges.end(), e);
}

// Back-edge path ends hoisted onto the latch's in-edges (path-hoist, as
// returns are).  A loop's latch u (its one way out the back edge u->h) is
// often a merge of the iteration's paths -- bzip2's mainQSort3 partition
// loops: `continue` after a swap, or the plain step -- so the register
// there is a PHI and the back edge counts through a variable address
// (with the loop's entries cut, a PHI of constants that GCC keeps in
// registers: `lea K1,%rax` on each way in, `addq $1,(%rax)` at u).
// Counting and resetting on each edge into u instead counts at a constant
// address where one prefix reaches the edge's source, `addq $1,K(%rip)`, as
// an edge counter does.  hoist_onto is PlanPathProfiling's test for
// returns: true, with the edges in *into, where the end can move; never
// onto chords from branches here (the new blocks cost bzip2's
// BZ2_decompress 27 M instructions in its bit-reading loops).
//
// In a loop that takes registers (counter_emit.h) the latch's in-edges
// may be split too, where one prefix reaches each edge's source: each
// count then lands in a local of its own (bzip2's quadrant loop, `if
// (a2update < BZ_N_OVERSHOOT)`, counted its two paths at the latch
// through `addq $1,(%rdi)`, a PHI of two addresses, a read-modify-write of
// memory per iteration).  Where more than kMaxCountChoices prefixes reach
// the latch, each edge's source may be reached by up to kMaxCountChoices:
// each count then lands on one of two paths, counted in a pair of locals
// (PathAction::choices; bzip2's copyStart loops, `if (k < 0) k +=
// nblock;` then `if (!bigDone[c1]) ...`: four prefixes at the latch, two
// on each edge into it).
template <typename InRegisterLoop, typename HoistOnto>
bool HoistBackEdgeEnd(const ballarus::Edge& back, edge gcc_back,
                      size_t latch_prefixes,
                      InRegisterLoop& in_register_loop, HoistOnto& hoist_onto,
                      std::vector<edge>* into) {
  if (back.src == ballarus::kEntryBlock) return false;
  if (hoist_onto(back.src, /*any_preds=*/false, /*onto_chords=*/false, into))
    return true;
  if (!in_register_loop(gcc_back)) return false;
  if (hoist_onto(back.src, /*any_preds=*/false, /*onto_chords=*/false, into,
                 /*split_fixed=*/1))
    return true;
  return latch_prefixes > kMaxCountChoices &&
         hoist_onto(back.src, /*any_preds=*/false, /*onto_chords=*/false,
                    into, /*split_fixed=*/kMaxCountChoices);
}

}  // namespace

// The register's values at each DAG vertex that at most `max` path
// prefixes reach, sorted (empty where more do): the sums of the increments
// along each prefix, modulo 2^64.  Distinct prefixes of one vertex have
// distinct sums (two with the same sum would give the paths through them
// and one suffix the same number), so a vertex's values are as many as its
// prefixes.
std::vector<std::vector<uint64_t>> PrefixRegisterSets(
    const ballarus::PathDag& dag, const ballarus::PathIncrements& inc,
    size_t max) {
  std::vector<std::vector<uint64_t>> vals(dag.n_vertices);
  std::vector<bool> many(dag.n_vertices, false);
  vals[ballarus::kEntryBlock] = {0};
  for (uint32_t v : dag.topo) {
    for (uint32_t d : dag.out[v]) {
      const uint32_t w = dag.edges[d].dst;
      if (many[w]) continue;
      if (many[v]) {
        many[w] = true;
        vals[w].clear();
        continue;
      }
      for (uint64_t x : vals[v]) vals[w].push_back(x + inc.inc[d]);
      std::sort(vals[w].begin(), vals[w].end());
      vals[w].erase(std::unique(vals[w].begin(), vals[w].end()),
                    vals[w].end());
      if (vals[w].size() > max) {
        many[w] = true;
        vals[w].clear();
      }
    }
  }
  return vals;
}

// The register's value at each DAG vertex one path prefix reaches (0
// elsewhere), from its PrefixRegisterSets.
std::vector<uint64_t> PrefixRegisters(
    const std::vector<std::vector<uint64_t>>& sets) {
  std::vector<uint64_t> reg(sets.size(), 0);
  for (size_t v = 0; v < sets.size(); ++v)
    if (sets[v].size() == 1) reg[v] = sets[v].front();
  return reg;
}

// The first pre-counts of one-prefix paths, which a balance can stand for
// (path-balance, path-entry-balance).  Per origin of the prefixes that one
// path reaches -- the block S of a kStart dummy (a loop header entered by
// cut edges only, or a cut block), or kFromEntry for the function's real
// entry edge (only without re-entries: no fake edge out of ENTRY) -- the
// pre-count with no pre-count before it on its prefix (whose settling
// would need it) before the block the weights make hottest: its index in
// work.in_blocks and its path number.
constexpr uint32_t kFromEntry = UINT32_MAX - 1;
struct FirstPreCount {
  size_t index = 0;
  uint64_t path = 0;
  // How often its block runs: GCC's guessed count, or (measured weights,
  // no guess) the weights' (BalanceStartTruncations compares it with an
  // entry cut's).
  uint64_t estimate = 0;
};
std::map<uint32_t, FirstPreCount> FirstPreCounts(
    const ballarus::Function& fn, const ballarus::PathDag& dag,
    const std::vector<uint64_t>& reg, const std::vector<uint8_t>& prefixes,
    const std::vector<uint64_t>& weights, bool measured_weights,
    const std::vector<bool>& reentry_block, uint32_t nb,
    const PathWork& work) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<bool> pre_block(nb, false);
  for (const auto& [bb, act] : work.in_blocks)
    if (act.kind == PathAction::kPreCount && !act.derived &&
        static_cast<uint32_t>(bb->index) < nb)
      pre_block[bb->index] = true;
  // Per one-prefix vertex: the origin of its prefix (kNone if it starts
  // at a re-entry, or at the entry of a function that has re-entries), and
  // whether a pre-count lies on it before the vertex.
  std::vector<uint32_t> origin(dag.n_vertices, kNone);
  std::vector<bool> before(dag.n_vertices, false);
  // The entry is an origin where it is the only way in: one ENTRY edge
  // of the CFG, not fake.
  size_t entry_edges = 0;
  bool reentered = false;
  for (uint32_t d : dag.out[ballarus::kEntryBlock]) {
    const ballarus::DagEdge& de = dag.edges[d];
    if (de.kind != ballarus::DagEdge::kCfg) continue;
    ++entry_edges;
    reentered = reentered || (fn.edges[de.ref].flags & ballarus::kEdgeFake);
  }
  for (uint32_t d : dag.out[ballarus::kEntryBlock]) {
    const ballarus::DagEdge& de = dag.edges[d];
    if (prefixes[de.dst] != 1) continue;
    if (de.kind == ballarus::DagEdge::kStart) origin[de.dst] = de.ref;
    if (de.kind == ballarus::DagEdge::kCfg && entry_edges == 1 && !reentered)
      origin[de.dst] = kFromEntry;
  }
  for (uint32_t v : dag.topo) {
    if (v == ballarus::kEntryBlock || prefixes[v] != 1 || origin[v] == kNone)
      continue;
    for (uint32_t d : dag.out[v]) {
      const uint32_t w = dag.edges[d].dst;
      if (prefixes[w] != 1 || w == ballarus::kExitBlock) continue;
      origin[w] = origin[v];
      before[w] = before[v] || (v < nb && pre_block[v]);
    }
  }
  // Per block: the weight of its in-edges.
  std::vector<uint64_t> block_weight(nb, 0);
  for (size_t i = 0; i < fn.edges.size() && i < weights.size(); ++i)
    if (fn.edges[i].dst < nb) block_weight[fn.edges[i].dst] += weights[i];
  std::map<uint32_t, FirstPreCount> first;
  std::map<uint32_t, uint64_t> first_weight;
  for (size_t i = 0; i < work.in_blocks.size(); ++i) {
    const auto& [bb, act] = work.in_blocks[i];
    const uint32_t u = static_cast<uint32_t>(bb->index);
    if (act.kind != PathAction::kPreCount || act.derived || u < 2 ||
        u >= nb || reentry_block[u] || prefixes[u] != 1 ||
        origin[u] == kNone || before[u])
      continue;
    const uint64_t w = block_weight[u];
    auto it = first_weight.find(origin[u]);
    if (it == first_weight.end() || w > it->second) {
      const bool guessed = !measured_weights && bb->count.initialized_p();
      first[origin[u]] = {i, reg[u] + act.a,
                          guessed ? static_cast<uint64_t>(
                                        bb->count.to_gcov_type())
                                  : w};
      first_weight[origin[u]] = w;
    }
  }
  return first;
}

// The end of the one path that reaches a loop entry cut edge into S, made
// by a kCountReset on the edge (work.on_edges[index]), and how often that
// edge runs by the estimate (GCC's guess, or the weights when measured).
struct EntryCutEnd {
  size_t index = 0;
  uint64_t path = 0;
  uint64_t weight = 0;
  uint32_t src = 0;  // the cut edge's source block
};

// Paths counted by the balance of their start (mode=path, kept pre-counts;
// PathInfo::balanced).  A path that starts at block S -- a loop header
// entered by cut edges only, or a cut block -- begins each time a path ends
// at a cut edge into S (or at S's cut), and every one of them then ends
// once, completed or cut short at a call.  So the paths from S add up to
// the paths ending into S, and all are counted: one count on either side
// can be left out and taken from that balance.  On the side of the paths
// from S, the pre-count before the first call that may not return on the
// only prefix from S that reaches it (no pre-count before it on that
// prefix, whose settling would need it), the hottest such call by the
// weights (FirstPreCounts): a loop that calls an unknown function once per
// iteration (sqlite3's vdbeSorterMerge and its xCompare) then counts
// nothing for the call.  On the side of the ends into S, the end of the
// only path that reaches a loop entry cut edge (entry_ends): a loop
// entered once per invocation, and left at once most of the time (lua's
// luaD_precall: its `goto retry` for __call metamethods, its nil-filling
// loop for missing arguments) then pays nothing for its entry cut, where
// it paid one count per entry.  The hotter of the two when S has both.
// One per S: the balance is one equation.  An end is left out only where
// no pre-count that is made lies on its path (SettlePrecounts subtracts
// the counts of what follows such a call, which must be known by then; a
// pre-count left out too is no hindrance: reconstruct solves the balance
// where it is first).  made_before(dropped): per DAG vertex, whether a
// pre-count still made once those in the blocks `dropped` are not lies on
// the one prefix reaching it, up to and including it.
template <typename MadeBefore>
void BalanceStartTruncations(const std::map<uint32_t, FirstPreCount>& first,
                             const std::map<uint32_t, EntryCutEnd>& entry_ends,
                             const MadeBefore& made_before, PathWork* work) {
  std::map<uint32_t, FirstPreCount> chosen(first);
  chosen.erase(kFromEntry);
  std::map<uint32_t, EntryCutEnd> ends;
  for (const auto& [s, end] : entry_ends) {
    auto it = chosen.find(s);
    if (it != chosen.end() && it->second.estimate > end.weight) continue;
    if (it != chosen.end()) chosen.erase(it);
    ends[s] = end;
  }
  if (!ends.empty()) {
    std::vector<uint32_t> dropped;
    for (const auto& [s, pick] : chosen)
      dropped.push_back(
          static_cast<uint32_t>(work->in_blocks[pick.index].first->index));
    std::sort(dropped.begin(), dropped.end());
    const std::vector<bool> made = made_before(dropped);
    for (auto it = ends.begin(); it != ends.end();)
      it = made[it->second.src] ? ends.erase(it) : std::next(it);
  }
  if (chosen.empty() && ends.empty()) return;
  std::vector<ballarus::PathInfo::Balanced> balanced;
  std::vector<bool> drop(work->in_blocks.size(), false);
  for (const auto& [s, pick] : chosen) {
    if (pick.path >= work->info.n_paths) return;  // never: every count made
    balanced.push_back({pick.path, s});
    drop[pick.index] = true;
  }
  for (const auto& [s, end] : ends) {
    if (end.path >= work->info.n_paths) return;  // never: every count made
    balanced.push_back({end.path, s});
  }
  std::sort(balanced.begin(), balanced.end(),
            [](const auto& x, const auto& y) { return x.path < y.path; });
  for (size_t i = 1; i < balanced.size(); ++i)
    if (balanced[i].path == balanced[i - 1].path) return;
  if (dump_file) {
    for (const auto& [s, pick] : chosen)
      fprintf(dump_file, "  path: path %llu (cut short at a call) counted "
              "by the balance of block %u's paths: no pre-count\n",
              (unsigned long long)pick.path, s);
    for (const auto& [s, end] : ends)
      fprintf(dump_file, "  path: path %llu (ending at a loop entry cut) "
              "counted by the balance of block %u's paths: no count\n",
              (unsigned long long)end.path, s);
  }
  // The entry cut edge still resets the register: r = b.
  for (const auto& [s, end] : ends) {
    PathAction& act = work->on_edges[end.index].second;
    gcc_assert(act.kind == PathAction::kCountReset);
    act = PathAction{PathAction::kInit, act.b, 0};
  }
  size_t k = 0;
  std::vector<std::pair<basic_block, PathAction>> kept;
  for (auto& x : work->in_blocks)
    if (!drop[k++]) kept.push_back(x);
  work->in_blocks = std::move(kept);
  work->info.balanced = std::move(balanced);
  work->info.flags |= ballarus::kPathFlagBalancedStarts;
}

// Entry balance (path-entry-balance; mode=path with kept pre-counts): the
// paths from the function's entry begin once per invocation, and a
// function that only direct calls of path-profiled functions of its TU
// call is invoked as often as those calls' blocks execute, which their
// profiles give.  So, as at a loop header (BalanceStartTruncations), one
// pre-count on the entry's paths can be left out: the one before the
// first call that may not return on the only prefix from the entry that
// reaches it, the hottest by the weights (FirstPreCounts).  This picks it
// (entry_block, entry_path); pass.cc decides, once it has seen every call of the
// function, and ApplyEntryBalance drops it.  A small function that calls
// an unknown one on its way in (sqlite3's sqlite3DbFreeNN, moveToRoot)
// then pays nothing for that call.
void FindEntryTruncation(const std::map<uint32_t, FirstPreCount>& first,
                         PathWork* work) {
  const auto it = first.find(kFromEntry);
  if (it == first.end() || it->second.path >= work->info.n_paths) return;
  work->entry_block = work->in_blocks[it->second.index].first;
  work->entry_path = it->second.path;
}

void ApplyEntryBalance(const std::vector<ballarus::PathInfo::Call>& calls,
                       PathWork* work) {
  gcc_assert(work->entry_block != nullptr && !calls.empty());
  auto& ib = work->in_blocks;
  const auto it = std::find_if(ib.begin(), ib.end(), [&](const auto& x) {
    return x.first == work->entry_block &&
           x.second.kind == PathAction::kPreCount && !x.second.derived;
  });
  gcc_assert(it != ib.end());
  ib.erase(it);
  work->info.flags |= ballarus::kPathFlagEntryBalanced;
  work->info.entry_path = work->entry_path;
  work->info.entry_calls = calls;
  std::sort(work->info.entry_calls.begin(), work->info.entry_calls.end());
  work->entry_block = nullptr;
  if (dump_file)
    fprintf(dump_file, "  path: path %llu (cut short at a call) counted by "
            "the balance of the function's %zu calls: no pre-count\n",
            (unsigned long long)work->info.entry_path, calls.size());
}

// The counts that at most `max` path prefixes reach, each with the paths
// it can land on (sorted; one when one prefix reaches it): f(act, paths,
// e, bb) for the action on edge e (bb null) or in block bb (e null).
// `reg`: PrefixRegisterSets with at least `max` values per vertex.  The
// register on each edge and in each block is followed exactly as
// path_emit.cc sets it: r = a (kInit), r += a (kAdd), then the counts, in
// Kind order; an edge or block whose register another action may change
// first (re-entry checks, fork epochs, counted loops) is left out.
template <typename F>
void ForEachCountPaths(const ballarus::PathDag& dag,
                       const std::vector<std::vector<uint64_t>>& reg,
                       size_t max, const std::vector<bool>& reentry_block,
                       uint32_t nb, PathWork* work, F f) {
  // A vertex that more than `max` prefixes reach (none: more than reg
  // holds) is left out.
  auto few = [&](uint32_t v) {
    return !reg[v].empty() && reg[v].size() <= max;
  };
  auto is_count = [](PathAction::Kind k) {
    return k == PathAction::kCount || k == PathAction::kCountReset ||
           k == PathAction::kStartCut || k == PathAction::kPreCount ||
           k == PathAction::kEndCount || k == PathAction::kEndCountReset;
  };
  auto plus = [](std::vector<uint64_t> v, uint64_t a) {
    for (uint64_t& x : v) x += a;
    std::sort(v.begin(), v.end());  // modulo 2^64: the order may change
    return v;
  };
  // On edges: the actions of one edge are adjacent once sorted by edge.
  std::map<std::pair<int, int>, std::vector<size_t>> by_edge;
  for (size_t i = 0; i < work->on_edges.size(); ++i) {
    const edge e = work->on_edges[i].first;
    by_edge[{e->src->index, e->dest->index}].push_back(i);
  }
  for (auto& [key, idx] : by_edge) {
    const edge e = work->on_edges[idx.front()].first;
    const uint32_t src = static_cast<uint32_t>(e->src->index);
    if (src >= nb || !few(src) || (src >= 2 && reentry_block[src]))
      continue;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
      return work->on_edges[x].second.kind < work->on_edges[y].second.kind;
    });
    std::vector<uint64_t> r = reg[src];
    for (size_t i : idx) {
      PathAction& act = work->on_edges[i].second;
      if (act.kind == PathAction::kInit) {
        r = {act.a};
      } else if (act.kind == PathAction::kAdd) {
        r = plus(std::move(r), act.a);
      } else if (is_count(act.kind)) {
        f(act, plus(r, act.a), e, basic_block{nullptr});
        if (act.kind == PathAction::kCountReset) r = {act.b};
      } else if (act.kind != PathAction::kSetFlag &&
                 act.kind != PathAction::kSaveRegister) {
        break;  // the register may change in a way not followed here
      }
    }
  }
  // In blocks: a cut block counts the register it is entered with (its
  // w_in vertex), everything else the block's own.
  for (auto& [bb, act] : work->in_blocks) {
    const uint32_t u = static_cast<uint32_t>(bb->index);
    if (!is_count(act.kind) || u < 2 || u >= nb || reentry_block[u]) continue;
    const uint32_t v =
        act.kind == PathAction::kStartCut ? dag.in_vertex[u] : u;
    if (!few(v)) continue;
    f(act, plus(reg[v], act.a), edge{nullptr}, bb);
  }
}

// The counts that one path prefix reaches, each with the path it always
// lands on: f(act, path, e, bb) (ForEachCountPaths).
template <typename F>
void ForEachKnownCount(const ballarus::PathDag& dag,
                       const std::vector<std::vector<uint64_t>>& reg,
                       const std::vector<bool>& reentry_block, uint32_t nb,
                       PathWork* work, F f) {
  ForEachCountPaths(dag, reg, 1, reentry_block, nb, work,
                    [&](PathAction& act, const std::vector<uint64_t>& paths,
                        edge e, basic_block bb) {
                      f(act, paths.front(), e, bb);
                    });
}

// Path counts the edge counters give (path-derive; mode=edge,path or
// naive,path).  Where one path prefix reaches a count -- a path end on an
// edge, a pre-count before a call, a cut block's or a computed goto's end
// -- the register there is one known value (the sum of the increments on
// that prefix), so the count always lands on the same path p, once per
// execution of the edge or block that holds it: p's count is that edge's
// or block's count, which the edge profile has.  Such a count is not
// made; PathInfo::derived tells reconstruct where to take it from (before
// SettlePrecounts, which then settles a pre-count as if it had been
// counted).  A count behind a register reset (r = b) keeps the reset.
void DeriveCountsFromEdges(
    const ballarus::PathDag& dag,
    const std::vector<std::vector<uint64_t>>& prefix_sets,
    const std::unordered_map<edge, uint32_t>& model_edge_of,
    const std::vector<bool>& reentry_block, uint32_t nb, PathWork* work) {
  std::vector<ballarus::PathInfo::Derived> derived;
  std::vector<PathAction*> acts;  // parallel to derived
  ForEachKnownCount(dag, prefix_sets, reentry_block, nb, work,
                    [&](PathAction& act, uint64_t path, edge e,
                        basic_block bb) {
                      if (e != nullptr) {
                        auto m = model_edge_of.find(e);
                        if (m == model_edge_of.end()) return;
                        derived.push_back({path, m->second, false});
                      } else {
                        derived.push_back(
                            {path, static_cast<uint32_t>(bb->index), true});
                      }
                      acts.push_back(&act);
                    });
  if (derived.empty()) return;
  // Each path is counted at one place at most, below n_paths; should the
  // following above ever disagree, every count is made as usual.
  std::vector<size_t> order(derived.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return derived[x].path < derived[y].path;
  });
  std::vector<ballarus::PathInfo::Derived> sorted;
  for (size_t i : order) {
    if (derived[i].path >= work->info.n_paths ||
        (!sorted.empty() && sorted.back().path == derived[i].path)) {
      if (dump_file)
        fprintf(dump_file, "  path: derived count of path %llu refused: "
                "every count made\n", (unsigned long long)derived[i].path);
      return;
    }
    sorted.push_back(derived[i]);
  }
  derived = std::move(sorted);
  for (PathAction* act : acts) act->derived = true;
  work->info.derived = std::move(derived);
  work->info.flags |= ballarus::kPathFlagDerivedCounts;
  // A count with nothing else to do goes altogether.
  auto gone = [](const PathAction& act) {
    return act.derived && (act.kind == PathAction::kCount ||
                           act.kind == PathAction::kPreCount ||
                           act.kind == PathAction::kEndCount);
  };
  work->on_edges.erase(
      std::remove_if(work->on_edges.begin(), work->on_edges.end(),
                     [&](const auto& x) { return gone(x.second); }),
      work->on_edges.end());
  work->in_blocks.erase(
      std::remove_if(work->in_blocks.begin(), work->in_blocks.end(),
                     [&](const auto& x) { return gone(x.second); }),
      work->in_blocks.end());
  if (dump_file) {
    fprintf(dump_file, "  path: %zu counts derived from the edge counters\n",
            work->info.derived.size());
    for (const auto& d : work->info.derived)
      fprintf(dump_file, "  path: path %llu counted by %s %u's count\n",
              (unsigned long long)d.path, d.block ? "block" : "edge",
              d.where);
  }
}

void PlanPathProfiling(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       bool measured_weights,
                       const std::vector<ReentryCall>& reentry,
                       const ReturningCallees& returning,
                       uint64_t* next_counter, uint64_t* next_hash,
                       PathWork* work) {
  const uint32_t nb = static_cast<uint32_t>(fn->blocks.size());
  std::vector<basic_block> bbs(nb);
  for (uint32_t i = 0; i < nb; ++i) bbs[i] = BASIC_BLOCK_FOR_FN(cfun, i);
  std::vector<bool> returns_twice(nb, false), dispatcher(nb, false);
  std::vector<bool> may_cut(nb, false);
  for (uint32_t i = 2; i < nb; ++i) {
    if (bbs[i] == NULL) continue;
    returns_twice[i] = IsReturnsTwiceBlock(bbs[i]);
    dispatcher[i] = IsDispatcherBlock(bbs[i]);
    // A returns-twice call must stay first in its block.
    may_cut[i] = !returns_twice[i] && !dispatcher[i];
  }

  // Dense storage (the default): a function with more than path-table-max
  // paths is cut at cold blocks until it fits its dense table -- a cut
  // costs one count where it is entered, a hashed table a call into the
  // runtime at every path end.  Where no cuts get it there (blocks that
  // cannot be cut), and with path-storage=hash or path-table-max=0, it is
  // cut only as far as a 64-bit register needs and hashed.
  ballarus::PathPlan plan;
  std::string err;
  bool planned = false;
  if (!g_options.path_storage_hash && g_options.path_table_max > 0)
    planned = ballarus::PlanPathsWeighted(*fn, may_cut, weights,
                                          g_options.path_table_max, &plan,
                                          &err);
  if (!planned &&
      !ballarus::PlanPathsWeighted(*fn, may_cut, weights,
                                   ballarus::kMaxInstrumentedPaths, &plan,
                                   &err)) {
    internal_error("ballarus: path plan for %s: %s", fn->name.c_str(),
                   err.c_str());
  }
  ballarus::PathDag dag;
  ballarus::PathIncrements inc;
  auto number = [&]() {
    if (!ballarus::BuildPathDag(*fn, plan.cuts, &dag, &err))
      internal_error("ballarus: path DAG for %s: %s", fn->name.c_str(),
                     err.c_str());
    if (!ballarus::PlaceIncrements(*fn, dag, weights, &inc, &err))
      internal_error("ballarus: path increments for %s: %s",
                     fn->name.c_str(), err.c_str());
  };
  number();
  if (PlanPathsFromEdges(fn, plan, dag, weights, reentry, returns_twice,
                         dispatcher, work))
    return;
  std::vector<uint32_t> entry_cuts;  // ascending
  // Loop entry cuts (path-loop-cuts).  In a loop whose iterations all take
  // one path (FindCountedLoops: header h, one latch, one DAG path from h
  // to the back edge), every iteration after the first ends the same path
  // K at the back edge -- but GCC sees the register at h as a PHI of the
  // register on entry (any path so far) and of b, so every iteration counts
  // through a variable address, an update store motion cannot keep in a
  // register.  Cutting each entry edge as well (it ends the path that
  // reaches the loop and starts the one at h, like the back edge) makes
  // the register at h the constant b on every way in: each iteration
  // counts the constant counter of path K, which GCC folds and, in a loop
  // without calls, moves out of the loop as it does edge counters.  The
  // price is one count per entry into the loop (at a constant counter
  // where the path so far is known); it pays where the loop iterates at
  // least once per entry, on the weights' evidence.  A cut edge never adds
  // paths (the ones through it become the ones ending there), so the table
  // still fits.  By default (path-loop-cuts=auto) in mode=path, and in
  // mode=edge,path where counts one prefix reaches come from the edge
  // counters (path-derive): there a cut entry makes the loop's header, and
  // what follows it up to the first merge, one-prefix code whose counts
  // cost nothing (lua edge,path -103 M instructions, bzip2 -167 M).  With
  // every count made (path-derive=off) the cuts cost bzip2 +56 M
  // (BZ2_decompress +40 M, not analysed) where they save 42 M in mode=path
  // (bench/README.md).
  const bool derive_counts = g_options.mode != Mode::kNone &&
                             Options::IsOn(g_options.path_derive, true);
  const bool loop_cuts =
      Options::IsOn(g_options.path_loop_cuts,
                    g_options.mode == Mode::kNone || derive_counts);
  if (loop_cuts && !plan.cuts.edges.empty()) {
    std::vector<bool> no_exclusion(nb, false);
    std::vector<bool> is_cut(fn->edges.size(), false);
    for (uint32_t i : plan.cuts.edges) is_cut[i] = true;
    for (const ballarus::CountedLoop& L :
         ballarus::FindCountedLoops(*fn, dag, plan.cuts, inc, no_exclusion)) {
      uint64_t in_w = 0;
      bool ok = true;
      for (uint32_t i : L.entries) {
        in_w += i < weights.size() ? weights[i] : 1;
        // A re-entry edge carries its own code (kReentry); a fake one none.
        ok = ok && !is_cut[i] &&
             !(fn->edges[i].flags &
               (ballarus::kEdgeFake | ballarus::kEdgeReentry)) &&
             gcc_edges[i] != NULL;
      }
      const uint64_t back_w =
          L.back_edge < weights.size() ? weights[L.back_edge] : 1;
      if (dump_file && (!ok || back_w < in_w))
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): "
                "one path per iteration, entry edges not cut (%s)\n",
                L.header, fn->edges[L.back_edge].src, L.header,
                !ok ? "a re-entry or cut entry edge"
                    : "the weights show fewer iterations than entries");
      if (!ok || back_w < in_w) continue;
      for (uint32_t i : L.entries) {
        is_cut[i] = true;
        entry_cuts.push_back(i);
      }
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): one "
                "path per iteration; its %zu entry edges cut\n",
                L.header, fn->edges[L.back_edge].src, L.header,
                L.entries.size());
    }
    if (!entry_cuts.empty()) {
      std::sort(entry_cuts.begin(), entry_cuts.end());
      plan.cuts.edges.insert(plan.cuts.edges.end(), entry_cuts.begin(),
                             entry_cuts.end());
      std::sort(plan.cuts.edges.begin(), plan.cuts.edges.end());
      number();
    }
  }
  const std::vector<uint32_t> multi_cuts =
      CutMultiPathLoopEntries(*fn, gcc_edges, weights, measured_weights,
                              loop_cuts, &plan);
  if (!multi_cuts.empty()) {
    entry_cuts.insert(entry_cuts.end(), multi_cuts.begin(), multi_cuts.end());
    std::sort(entry_cuts.begin(), entry_cuts.end());
    number();
  }
  const std::vector<uint32_t> call_cuts =
      CutCallBlocks(*fn, dag, bbs, may_cut, reentry, returning, &plan);
  if (!call_cuts.empty()) number();

  // Every value of the register is a sum of distinct increments (each DAG
  // edge at most once per path), so below the sum of their magnitudes.
  {
    const uint64_t kLimit = uint64_t{1} << 62;
    uint64_t sum = 0;
    for (uint64_t x : inc.inc) {
      const int64_t v = static_cast<int64_t>(x);
      const uint64_t mag = v < 0 ? uint64_t{0} - x : x;
      sum = mag >= kLimit || sum + mag >= kLimit ? kLimit : sum + mag;
    }
    work->signed_register = g_options.path_signed && sum < kLimit;
  }

  ballarus::PathInfo& info = work->info;
  info.n_paths = inc.n_paths;
  info.cut_edges = plan.cuts.edges;
  info.cut_blocks = plan.cuts.blocks;
  info.flags = !g_options.early_termination
                   ? 0
                   : ballarus::kPathFlagEarlyTermination |
                         ballarus::kPathFlagPrecountsKept;
  if (inc.n_paths <= g_options.path_table_max) {
    info.storage = ballarus::PathInfo::kDense;
    info.base = *next_counter;
    *next_counter += inc.n_paths + 1;
  } else {
    info.storage = ballarus::PathInfo::kHashed;
    info.base = (*next_hash)++;
  }
  work->enabled = true;

  if (dump_file) {
    fprintf(dump_file, "  paths: %llu (%s %llu); %zu cut edges, %zu cut "
            "blocks; early termination %s\n",
            (unsigned long long)inc.n_paths,
            info.storage == ballarus::PathInfo::kDense ? "dense from counter"
                                                       : "runtime hash table",
            (unsigned long long)info.base, info.cut_edges.size(),
            info.cut_blocks.size(),
            !g_options.early_termination ? "off" : "counted, pre-counts kept");
    for (uint32_t i : info.cut_edges)
      fprintf(dump_file, "  %s %u->%u cut\n",
              std::binary_search(entry_cuts.begin(), entry_cuts.end(), i)
                  ? "loop entry edge"
                  : "back edge",
              fn->edges[i].src, fn->edges[i].dst);
    for (uint32_t b : info.cut_blocks)
      fprintf(dump_file, "  block %u cut (%s)\n", b,
              std::binary_search(call_cuts.begin(), call_cuts.end(), b)
                  ? "its call may not return"
                  : "too many paths through it");
  }

  auto on_edge = [&](edge e, PathAction::Kind k, uint64_t a, uint64_t b) {
    work->on_edges.push_back({e, {k, a, b}});
  };
  auto in_block = [&](uint32_t bi, PathAction::Kind k, uint64_t a,
                      uint64_t b) {
    work->in_blocks.push_back({bbs[bi], {k, a, b}});
  };

  // Blocks whose path ends because they leave by abnormal edges only
  // (computed goto): their targets need no re-entry check.
  std::vector<bool> end_reset(nb, false);

  // Calls that may return as re-entries (fork, reset; reentry.h): the path
  // cut short by the call is pre-counted as for any call that may not
  // return; on the way out, a changed epoch means the counts (the
  // pre-count with them) are gone and the path starts afresh at the call's
  // block, through its re-entry edge (SettlePrecounts knows such a path
  // begins after the call); otherwise the path goes on, and reconstruct
  // settles the pre-count.
  std::vector<bool> reentry_block(nb, false);
  for (size_t c = 0; c < reentry.size(); ++c) {
    const ReentryCall& rc = reentry[c];
    const uint32_t u = rc.block->index;
    reentry_block[u] = true;
    const int re_dag = dag.dag_edge_of_cfg[rc.model_edge];
    if (re_dag < 0)
      internal_error("ballarus: path DAG for %s lacks the re-entry edge into block %d",
                     fn->name.c_str(), static_cast<int>(u));
    int fake_dag = -1;
    for (size_t i = 0; i < fn->edges.size(); ++i)
      if (fn->edges[i].src == u && fn->edges[i].dst == ballarus::kExitBlock &&
          (fn->edges[i].flags & ballarus::kEdgeFake))
        fake_dag = dag.dag_edge_of_cfg[i];
    const bool pre = g_options.early_termination && fake_dag >= 0;
    const uint64_t a = pre ? inc.inc[fake_dag] : 0;
    if (pre) {
      in_block(u, PathAction::kPreCount, a, 0);
      info.precount_edges.push_back(
          static_cast<uint32_t>(dag.edges[fake_dag].ref));
    }
    for (edge n : CodeSuccessors(rc.block)) {
      PathAction act{PathAction::kReentry, a, inc.inc[re_dag]};
      act.call = static_cast<int>(c);
      work->on_edges.push_back({n, act});
    }
  }

  // Count hoisting.  A path end u->EXIT (a return, or the fake edge of a
  // block left by a computed goto) whose block u has no other way out in
  // the DAG and is entered only by ordinary edges can count on each of
  // those edges instead, where the register is often a known constant:
  // GCC then folds count[r + a] into one increment of a fixed counter,
  // instead of merging the paths in u first (one register move per
  // predecessor, then an indexed increment).  For a computed goto it also
  // keeps GCC's factored dispatcher block (every computed goto of the
  // function jumps to one `goto *x`) small enough for the RTL passes to
  // duplicate it back into each predecessor.  Only where no edge needs
  // splitting (each predecessor's only successor is u) -- for returns, an
  // edge from a branch that carries a chord (split for it anyway,
  // ChordEdges) too -- and, for returns and back edges (HoistBackEdgeEnd),
  // where at most kHoistMaxPreds of the edges come from a block that more
  // than one path prefix reaches (elsewhere the count folds to a constant;
  // before, all of them or at most kHoistMaxPreds edges in all).  bzip2's
  // mainGtU: its 12 early returns each reach the return block through a
  // chord from a compare, and its loop's 12 more from blocks one prefix
  // reaches (the loop's entry cut); counted in the return block, each
  // return cost `lea K,%rax`, `addq $1,(%rax)` and a move of the result,
  // on its chord `addq $1,K(%rip)` as gcov's arc counter (mainGtU 201 ->
  // 190 M instructions, plain 181 M; lua's lua_settop 344 -> 318 M).
  const std::vector<uint8_t> prefixes = ballarus::CountPrefixes(dag);
  // The register's values where at most kMaxCountChoices prefixes reach
  // (known where one does), and how many (SIZE_MAX where more).
  const std::vector<std::vector<uint64_t>> prefix_sets =
      PrefixRegisterSets(dag, inc, kMaxCountChoices);
  const std::vector<uint64_t> prefix_reg = PrefixRegisters(prefix_sets);
  auto few_prefixes = [&](uint32_t v) {
    return prefix_sets[v].empty() ? SIZE_MAX : prefix_sets[v].size();
  };
  std::map<uint32_t, EntryCutEnd> entry_ends;  // per loop header
  constexpr size_t kHoistMaxPreds = 8;
  const std::vector<edge> chord_edges = ChordEdges(*fn, dag, inc, gcc_edges);
  size_t hoisted_onto_chords = 0;  // of the last hoist_onto's edges
  // An edge a count can move onto: an ordinary edge from a block of the
  // function (not ENTRY, not fake, abnormal or EH).
  auto ordinary_in_edge = [&](edge e) {
    return !(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL |
                         EDGE_EH)) &&
           e->src != ENTRY_BLOCK_PTR_FOR_FN(cfun) && e->src->index >= 2 &&
           static_cast<uint32_t>(e->src->index) < nb;
  };
  // split_fixed: onto any edge, split or not, where every edge's source is
  // reached by at most that many prefixes (a loop that takes registers:
  // each count then lands in a local, or one of a few, HoistBackEdgeEnd).
  auto hoist_onto = [&](uint32_t u, bool any_preds, bool onto_chords,
                        std::vector<edge>* into, size_t split_fixed = 0) {
    into->clear();
    if (u < 2 || u >= nb || bbs[u] == NULL || !g_options.path_hoist)
      return false;
    if (dag.in_vertex[u] != u || dag.start_edge[u] >= 0 ||
        dag.out[u].size() != 1)
      return false;
    size_t variable = 0;  // edges whose source many prefixes reach
    hoisted_onto_chords = 0;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[u]->preds) {
      if (!ordinary_in_edge(e)) return false;
      if (split_fixed && few_prefixes(e->src->index) > split_fixed)
        return false;
      if (RealSuccessors(e->src) != 1 && !split_fixed) {
        if (!onto_chords || !SplitForChordAnyway(e, chord_edges))
          return false;
        ++hoisted_onto_chords;
      }
      variable += prefixes[e->src->index] != 1;
      into->push_back(e);
    }
    return !into->empty() && (any_preds || variable <= kHoistMaxPreds);
  };
  // Loops whose fixed-address counts are made in locals (loop-registers),
  // found when a back edge first asks (in_register_loop).
  const bool loop_registers =
      LoopRegistersWanted(ChosenUpdate() == UpdateMode::kAtomic,
                          ChosenUpdate() == UpdateMode::kThread);
  std::optional<RegisterLoops> register_loops;
  auto in_register_loop = [&](edge e) {
    if (!loop_registers || e == NULL) return false;
    if (!register_loops) register_loops = FindRegisterLoops(/*dump=*/false);
    return register_loops->Of(e) >= 0;
  };
  std::vector<edge> hoisted;
  // Blocks that may leave the function other than by a return: a fake edge
  // to EXIT whose call may not return (or a computed goto).
  std::vector<bool> may_leave(nb, false);

  // Computed gotos (GCC factors them into one `goto *x` block, left by
  // abnormal edges only): the path ends there, and each target starts a
  // new one with r = Inc(ENTRY->w), which is 0 (fake ENTRY edges are tree
  // edges).  Setting r at the goto hands the target a register GCC cannot
  // see through (an SSA name on abnormal edges), so every count in the
  // target's code goes through it (lua's interpreter: a register load per
  // opcode at the dispatch, then indexed counts in the handler).  With
  // path-goto-targets, the goto only counts, and each target entered by
  // computed gotos only (self_start) sets r itself, at its start: a
  // constant there, which GCC folds into the handler's chords and counts.
  // A target also entered by ordinary edges (a label the code before it
  // reaches too: lua's OP_TFORCALL) gets the setjmp receivers' treatment
  // below, with a copy: its ordinary entries set the re-entry flag and
  // save r in s, and its start sets r = flag ? s : a -- so that no target
  // reads r as the goto leaves it, r is dead at every computed goto, and
  // the path ends can be counted before the goto (hoisted deep, below).
  auto is_goto_end = [&](uint32_t u) {
    if (u < 2 || u >= nb || bbs[u] == NULL || returns_twice[u] ||
        dispatcher[u] || reentry_block[u])
      return false;
    gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bbs[u]);
    gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
    if (last != NULL && is_gimple_call(last)) return false;
    edge e;
    edge_iterator ei;
    bool abnormal = false;
    FOR_EACH_EDGE(e, ei, bbs[u]->succs) {
      if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
        return false;
      abnormal = abnormal || (e->flags & EDGE_ABNORMAL);
    }
    return abnormal;
  };
  std::vector<bool> goto_end(nb, false), self_start(nb, false);
  // Targets entered by computed gotos and otherwise too: see "Computed-goto
  // path ends hoisted deep" below.
  std::vector<bool> saved_start(nb, false);
  for (uint32_t u = 2; u < nb; ++u) goto_end[u] = is_goto_end(u);
  // By default (path-goto-targets=auto) not on an earlier profile's
  // weights: there the hot handlers' chords are tree edges, the register
  // stays the one constant through them, and GCC keeps that constant in a
  // callee-saved register for the whole function and copies it at every
  // dispatch (lua's luaV_execute +45 M instructions, where static weights
  // save 35 M).
  const bool sources_reset =
      !Options::IsOn(g_options.path_goto_targets, !measured_weights);
  for (uint32_t w = 2; w < nb && !sources_reset; ++w) {
    if (bbs[w] == NULL || returns_twice[w] || dispatcher[w]) continue;
    bool from_goto = false, only_goto = true;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds) {
      if (e->flags & EDGE_FAKE) continue;  // gcov's ENTRY->w for the gotos
      const bool g = (e->flags & EDGE_ABNORMAL) && e->src->index >= 2 &&
                     static_cast<uint32_t>(e->src->index) < nb &&
                     goto_end[e->src->index];
      from_goto = from_goto || g;
      only_goto = only_goto && g;
    }
    self_start[w] = from_goto && only_goto;
    saved_start[w] = from_goto && !only_goto && !returns_twice[w];
    if (dump_file && from_goto && !only_goto)
      fprintf(dump_file, "  path: computed goto target %u is entered "
              "otherwise too: its normal entries set the re-entry flag\n",
              w);
  }

  // Computed-goto path ends hoisted deep (path-goto-targets; a section of
  // its own).  Every handler of an interpreter's computed-goto dispatch
  // (lua's luaV_execute) ends its path at GCC's factored `goto *` block,
  // and hoisting onto that block's in-edges (above) puts the count in the
  // block that merges every handler's `vmfetch` tail: there the register
  // is a PHI of every handler's value, so each handler materialises its
  // constant (`lea`) and counts through it (`addq $1,(%reg)`), and the
  // register stays live into the dispatch.  The count can go on back,
  // through blocks that have no other way on (one successor, one DAG out
  // edge: no pre-count, not cut, entered by ordinary edges only) until the
  // source of an in-edge is reached by a single path prefix: there the
  // register is a constant and count[r + a] one increment of a fixed
  // counter (`addq $1,C(%rip)`), with a the sum of the increments passed.
  // Every execution still takes exactly one of the counted edges, so this
  // never counts more often; where a source is reached by several
  // prefixes and cannot be passed, the count stays indexed there.  With r
  // dead at the goto (every target sets it, kStartInit, or reads the copy
  // s saved on its normal entries, kStartCheckSaved), GCC drops the chords
  // whose only use was the dispatch's count.
  std::unordered_map<edge, uint32_t> model_edge_of;
  for (size_t i = 0; i < gcc_edges.size(); ++i)
    if (gcc_edges[i] != NULL) model_edge_of[gcc_edges[i]] = i;
  // A block the count passes: one successor but fake ones and one DAG out
  // edge (no pre-count, no cut, no return), a plain block (not a goto,
  // receiver or re-entry), entered by ordinary edges only (an edge whose
  // source has other successors is split for the count, as for a chord).
  auto passable = [&](uint32_t p, std::vector<edge>* in) {
    in->clear();
    if (p < 2 || p >= nb || bbs[p] == NULL || returns_twice[p] ||
        dispatcher[p] || reentry_block[p] || goto_end[p] ||
        dag.in_vertex[p] != p || dag.start_edge[p] >= 0 ||
        dag.out[p].size() != 1)
      return false;
    if (RealSuccessors(bbs[p]) != 1) return false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[p]->preds) {
      if (!ordinary_in_edge(e)) return false;
      in->push_back(e);
    }
    return !in->empty();
  };
  // A cut block's in-edges, where its count can go (path-cut-hoist): each
  // ordinary, from a block with no other way on (no edge to split).
  // (onto_chords: also an edge from a branch that is split anyway, for a
  // chord's increment.)
  auto unsplit_in_edges = [&](uint32_t w, std::vector<edge>* in,
                              bool onto_chords = false) {
    in->clear();
    if (w < 2 || w >= nb || bbs[w] == NULL || !g_options.path_hoist)
      return false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds) {
      if (!ordinary_in_edge(e)) return false;
      if (RealSuccessors(e->src) != 1 &&
          !(onto_chords && SplitForChordAnyway(e, chord_edges)))
        return false;
      in->push_back(e);
    }
    return !in->empty();
  };
  // A call cut (CutCallBlocks) stands for the pre-count it replaces and is
  // hoisted as one (onto chords too), and further: onto any edge, split or
  // not, where every edge into the block then counts a fixed counter.
  std::vector<bool> call_cut(nb, false);
  for (uint32_t b : call_cuts) call_cut[b] = true;
  auto cut_in_edges = [&](uint32_t w, std::vector<edge>* in) {
    if (!g_options.path_cut_hoist) return false;
    if (unsplit_in_edges(w, in, /*onto_chords=*/call_cut[w])) return true;
    if (!call_cut[w] || bbs[w] == NULL) return false;
    in->clear();
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds) {
      if (!ordinary_in_edge(e) || prefixes[e->src->index] != 1) return false;
      in->push_back(e);
    }
    return !in->empty();
  };
  // The count of a path end at block u -- a computed goto's (u the goto's
  // block), or with `cut` a cut block's entry (u the cut block), or an
  // early-termination pre-count (u the call's block, which is not a path
  // start: its register is the one its in-edges leave) -- moved back onto
  // edges where it costs least (below).
  enum class HoistFrom { kGoto, kCut, kPreCount };
  auto hoist_path_end = [&](uint32_t u, uint64_t a,
                            std::vector<std::pair<edge, uint64_t>>* sites,
                            int* depth, HoistFrom from = HoistFrom::kGoto) {
    sites->clear();
    *depth = 0;
    constexpr int kMaxDepth = 16;
    struct Item { uint32_t block; uint64_t a; int depth; };
    std::vector<Item> work_list{{u, a, 0}};
    std::vector<edge> in, in_p;
    auto top_edges = [&](std::vector<edge>* into) {
      switch (from) {
        case HoistFrom::kGoto:
          return hoist_onto(u, /*any_preds=*/true, /*onto_chords=*/false,
                            into);
        case HoistFrom::kCut:
          return cut_in_edges(u, into);
        case HoistFrom::kPreCount:
          return g_options.path_precount_hoist && dag.in_vertex[u] == u &&
                 dag.start_edge[u] < 0 &&
                 unsplit_in_edges(u, into, /*onto_chords=*/true);
      }
      return false;
    };
    while (!work_list.empty()) {
      const Item it = work_list.back();
      work_list.pop_back();
      if (!(it.block == u ? top_edges(&in) : passable(it.block, &in))) {
        if (it.block == u) return false;
        internal_error("ballarus: path end hoisting lost block %u",
                       it.block);
      }
      for (edge e : in) {
        const uint32_t p = static_cast<uint32_t>(e->src->index);
        auto m = model_edge_of.find(e);
        const int d = m == model_edge_of.end()
                          ? -1
                          : dag.dag_edge_of_cfg[m->second];
        // Pass p only where its register is not known and p can be
        // passed: then each in-edge of p counts, with e's increment too.
        if (d >= 0 && prefixes[p] != 1 && it.depth < kMaxDepth &&
            passable(p, &in_p)) {
          work_list.push_back({p, it.a + inc.inc[d], it.depth + 1});
          *depth = std::max(*depth, it.depth + 1);
          continue;
        }
        sites->push_back({e, it.a});
      }
    }
    return true;
  };
  std::vector<std::pair<edge, uint64_t>> goto_sites;

  // Fake edges into EXIT: a call that may not return (early termination)
  // or a block left by abnormal edges only.
  for (size_t i = 0; i < fn->edges.size(); ++i) {
    const ballarus::Edge& me = fn->edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.dst != ballarus::kExitBlock ||
        dag.dag_edge_of_cfg[i] < 0)
      continue;
    const uint32_t u = me.src;
    may_leave[u] = true;  // unless its callee always returns, below
    if (returns_twice[u] || dispatcher[u] || bbs[u] == NULL) continue;
    if (reentry_block[u]) continue;  // above
    const uint64_t a = inc.inc[dag.dag_edge_of_cfg[i]];
    basic_block bb = bbs[u];
    gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
    gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
    std::vector<edge> normal;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs)
      if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
        normal.push_back(e);
    if ((last == NULL || !is_gimple_call(last)) && normal.empty()) {
      int depth = 0;
      if (!sources_reset && hoist_path_end(u, a, &goto_sites, &depth)) {
        for (const auto& [h, ha] : goto_sites)
          on_edge(h, PathAction::kCount, ha, 0);
        work->goto_end_hoisted = true;
        if (dump_file)
          fprintf(dump_file, "  path: computed goto at block %u: its path "
                  "end counted on %zu edges, up to %d blocks before its "
                  "in-edges\n", u, goto_sites.size(), depth);
      } else if (hoist_onto(u, /*any_preds=*/true, /*onto_chords=*/false,
                                   &hoisted)) {
        for (edge h : hoisted)
          on_edge(h, sources_reset ? PathAction::kCountReset
                                   : PathAction::kCount, a, 0);
      } else {
        in_block(u, sources_reset ? PathAction::kEndCountReset
                                  : PathAction::kEndCount, a, 0);
      }
      end_reset[u] = sources_reset;
      continue;
    }
    if (!g_options.early_termination) continue;
    // A callee of this TU that always returns cannot cut the path short --
    // unless the path has no other way on, or the call is a tail call (a
    // thunk's: GCC jumps to the callee, which returns to our caller, and
    // the code after the call never runs: the fake edge is where the path
    // ends).
    if (!normal.empty() && last && is_gimple_call(last) &&
        !gimple_call_tail_p(as_a<gcall*>(last)) &&
        !gimple_call_must_tail_p(as_a<gcall*>(last)) &&
        returning.AlwaysReturns(last)) {
      may_leave[u] = false;
      if (dump_file)
        fprintf(dump_file, "  path: block %u: the callee always returns: no "
                "pre-count\n", u);
      continue;
    }
    // Pre-count hoisting (path-precount-hoist): where several prefixes
    // reach u its register is a PHI, and the pre-count an indexed
    // increment through a materialised base (`lea`, or a pointer register
    // kept across the branches, often a callee-saved one); on the edges
    // into u, or further back through blocks with one way on, the prefix
    // is known and the count one increment of a fixed counter.  Nothing
    // between those edges and the call can leave (gcov's CFG ends a block
    // at every call that may not return), so the count is the same.  Only
    // where every site ends up with a constant register and no edge needs
    // splitting: a site that stays indexed keeps the register live on more
    // edges (edge,path's sqlite3VdbeExec executed 83 M more instructions
    // when 3 of 7 sites did).  In edge,path every such count is derived.
    if (prefixes[u] != 1) {
      int depth = 0;
      if (hoist_path_end(u, a, &goto_sites, &depth, HoistFrom::kPreCount)) {
        size_t fixed = 0;
        for (const auto& [h, ha] : goto_sites)
          fixed += prefixes[h->src->index] == 1;
        if (fixed == goto_sites.size()) {
          for (const auto& [h, ha] : goto_sites)
            on_edge(h, PathAction::kCount, ha, 0);
          info.precount_edges.push_back(static_cast<uint32_t>(i));
          if (dump_file)
            fprintf(dump_file, "  path: block %u: pre-count made on %zu "
                    "edges (%zu fixed), up to %d blocks before it\n", u,
                    goto_sites.size(), fixed, depth);
          continue;
        }
      }
    }
    // Reconstruct subtracts the executions that went on past the call
    // (SettlePrecounts, core/path_profile.h).
    in_block(u, PathAction::kPreCount, a, 0);
    info.precount_edges.push_back(static_cast<uint32_t>(i));
  }

  // Fake edges out of ENTRY: abnormal re-entries (setjmp receivers,
  // nonlocal labels, computed-goto targets).  The path starts afresh with
  // r = Inc(ENTRY->w) = 0 (fake ENTRY edges are tree edges).
  for (size_t i = 0; i < fn->edges.size(); ++i) {
    const ballarus::Edge& me = fn->edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.src != ballarus::kEntryBlock ||
        dag.dag_edge_of_cfg[i] < 0)
      continue;
    // (A fake re-entry edge, reentry.h, is one of these: its block is a
    // returns-twice receiver entered from ENTRY too.)
    const uint32_t w = me.dst;
    if (dispatcher[w] || bbs[w] == NULL) continue;
    const uint64_t a = inc.inc[dag.dag_edge_of_cfg[i]];
    if (self_start[w]) {
      in_block(w, PathAction::kStartInit, a, 0);
      continue;
    }
    if (saved_start[w]) {
      // Its normal entries save r for it (s), so r itself stays dead at
      // every computed goto.
      work->uses_flag = true;
      edge e;
      edge_iterator ei;
      FOR_EACH_EDGE(e, ei, bbs[w]->preds)
        if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL))) {
          on_edge(e, PathAction::kSetFlag, 0, 0);
          on_edge(e, PathAction::kSaveRegister, 0, 0);
        }
      in_block(w, PathAction::kStartCheckSaved, a, 0);
      continue;
    }
    bool all_sources_reset = true;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds)
      if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
          !(e->src->index >= 0 && (uint32_t)e->src->index < nb &&
            end_reset[e->src->index]))
        all_sources_reset = false;
    if (all_sources_reset && a == 0) continue;
    work->uses_flag = true;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds)
      if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
        on_edge(e, PathAction::kSetFlag, 0, 0);
    if (returns_twice[w]) {
      // The call returns a second time at its end: check on its way out.
      FOR_EACH_EDGE(e, ei, bbs[w]->succs)
        if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
          on_edge(e, PathAction::kCheckFlag, a, 0);
    } else {
      in_block(w, PathAction::kStartCheckFlag, a, 0);
    }
  }

  // Loops whose iterations take one path count them in locals (core/
  // path_profile.h FindCountedLoops): an increment of a register per
  // iteration instead of a counter update in memory.
  //
  // A loop whose entry edges are cut (above) starts every iteration with
  // r = b, so all its iterations end path K: n = 0 on entry, n += 1 on the
  // back edge, count[K] += n on each exit.  Otherwise the loop also saves
  // the register on entry, s, and on exit counts the first iteration's
  // path s + d apart.  Only where nothing leaves the loop but its exits
  // (FindCountedLoops excludes blocks with calls that may not return): a
  // pending n would be lost.
  //
  // Each run of a counted loop costs a few instructions at its entry and
  // exit, more than it saves unless the loop iterates: BZ2_decompress's
  // GET_BITS loops (0-1 iterations, three exits) cost bzip2 +10%
  // instructions, lua's nil-filling loops in luaD_precall +1%.  Even with
  // the entries cut (the exit is one add), counting in locals on static
  // estimates costs lua +34 M instructions and bzip2 +78 M over counting
  // the constant counter K in memory (lua_settop +14 M, luaD_precall
  // +25 M: their nil-filling loops rarely run; bzip2's mainSort +34 M,
  // not analysed).  So by default (path-loops=profile)
  // only an earlier profile's counts (weights=profile=) decide: at least
  // 8 iterations per entry.  path-loops=on trusts any weights (2 per
  // entry).
  std::vector<int> loop_of_back_edge(fn->edges.size(), -1);
  const bool count_loops =
      g_options.path_loops == Options::PathLoops::kOn ||
      (g_options.path_loops == Options::PathLoops::kProfile &&
       measured_weights);
  const uint64_t min_ratio =
      g_options.path_loops == Options::PathLoops::kOn ? 2 : 8;
  if (count_loops) {
    // FindCountedLoops wants a loop's header to be the target of its back
    // edge only: the cuts without the entry cuts (the DAG is the final one).
    ballarus::PathCuts back_cuts = plan.cuts;
    back_cuts.edges.clear();
    for (uint32_t i : plan.cuts.edges)
      if (!std::binary_search(entry_cuts.begin(), entry_cuts.end(), i))
        back_cuts.edges.push_back(i);
    for (const ballarus::CountedLoop& L :
         ballarus::FindCountedLoops(*fn, dag, back_cuts, inc, may_leave)) {
      bool cut = true;
      for (uint32_t i : L.entries)
        cut = cut &&
              std::binary_search(entry_cuts.begin(), entry_cuts.end(), i);
      uint64_t in_w = 0;
      for (uint32_t i : L.entries)
        in_w += i < weights.size() ? weights[i] : 1;
      const uint64_t back_w =
          L.back_edge < weights.size() ? weights[L.back_edge] : 1;
      if (back_w < min_ratio * in_w) continue;
      const int l = static_cast<int>(work->loops.size());
      work->loops.push_back({L.start, L.iteration, L.first_offset, cut});
      loop_of_back_edge[L.back_edge] = l;
      auto act = [&](PathAction::Kind k) {
        PathAction x{k, 0, 0};
        x.loop = l;
        return x;
      };
      for (uint32_t i : L.entries)
        work->on_edges.push_back({gcc_edges[i], act(PathAction::kLoopEnter)});
      for (uint32_t i : L.exits)
        work->on_edges.push_back({gcc_edges[i], act(PathAction::kLoopExit)});
      work->on_edges.push_back(
          {gcc_edges[L.back_edge], act(PathAction::kLoopBack)});
      if (dump_file)
        fprintf(dump_file, "  path: loop at block %u (back edge %u->%u): one "
                "path per iteration (%llu), counted in a local%s; %zu "
                "entries, %zu exits\n",
                L.header, fn->edges[L.back_edge].src, L.header,
                (unsigned long long)L.iteration,
                cut ? " (entries cut)" : "", L.entries.size(),
                L.exits.size());
    }
  }

  // The DAG's real edges and the cuts.
  for (size_t d = 0; d < dag.edges.size(); ++d) {
    const ballarus::DagEdge& de = dag.edges[d];
    if (de.kind == ballarus::DagEdge::kCfg) {
      const ballarus::Edge& me = fn->edges[de.ref];
      // Fake edges carry no code; a re-entry edge's is its kReentry.
      if (me.flags & (ballarus::kEdgeFake | ballarus::kEdgeReentry)) continue;
      edge e = gcc_edges[de.ref];
      if (me.src == ballarus::kEntryBlock)
        on_edge(e, PathAction::kInit, inc.inc[d], 0);
      else if (me.dst == ballarus::kExitBlock &&
               hoist_onto(me.src, /*any_preds=*/false, /*onto_chords=*/true,
                          &hoisted)) {
        for (edge h : hoisted) {
          // From a call that always returns, the count goes before the
          // call: nothing of the path is left after it, so GCC can make it
          // a tail call (lua's luaV_lessthan -> LTnum), as without
          // instrumentation -- the call cannot cut the path short.
          const int pi = h->src->index;
          const uint32_t p = static_cast<uint32_t>(pi);
          gimple* last = NULL;
          if (pi >= 2 && p < nb && bbs[p] != NULL && !returns_twice[p] &&
              !dispatcher[p] && !reentry_block[p] &&
              RealSuccessors(bbs[p]) == 1) {
            gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bbs[p]);
            last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
          }
          auto m = model_edge_of.find(h);
          const int64_t hd = m == model_edge_of.end()
                                 ? -1
                                 : dag.dag_edge_of_cfg[m->second];
          if (last != NULL && is_gimple_call(last) && hd >= 0 &&
              g_options.early_termination && returning.AlwaysReturns(last)) {
            in_block(p, PathAction::kEndCount, inc.inc[d] + inc.inc[hd], 0);
            if (dump_file)
              fprintf(dump_file, "  path: block %u: its return counted "
                      "before block %u's call, which always returns\n",
                      me.src, p);
            continue;
          }
          on_edge(h, PathAction::kCount, inc.inc[d], 0);
        }
        if (dump_file && hoisted_onto_chords > 0)
          fprintf(dump_file, "  path: block %u: its return counted on the "
                  "%zu edges into it (%zu of them chords from branches)\n",
                  me.src, hoisted.size(), hoisted_onto_chords);
      }
      else if (me.dst == ballarus::kExitBlock)
        on_edge(e, PathAction::kCount, inc.inc[d], 0);
      else if (inc.inc[d] != 0)
        on_edge(e, PathAction::kAdd, inc.inc[d], 0);
    } else if (de.kind == ballarus::DagEdge::kBackEnd) {
      const ballarus::Edge& me = fn->edges[de.ref];
      if (loop_of_back_edge[de.ref] >= 0) continue;  // kLoopBack instead
      // A loop entry cut that one prefix reaches ends one path, which the
      // balance of its loop's header may count (BalanceStartTruncations).
      auto note_entry_end = [&]() {
        if (me.src == ballarus::kEntryBlock || me.src >= nb ||
            prefixes[me.src] != 1 ||
            !std::binary_search(entry_cuts.begin(), entry_cuts.end(),
                                static_cast<uint32_t>(de.ref)))
          return;
        uint64_t w = de.ref < weights.size() ? weights[de.ref] : 1;
        if (!measured_weights && gcc_edges[de.ref]->count().initialized_p())
          w = gcc_edges[de.ref]->count().to_gcov_type();
        auto [it, fresh] = entry_ends.try_emplace(me.dst);
        if (fresh || w > it->second.weight)
          it->second = {work->on_edges.size(), prefix_reg[me.src] + inc.inc[d],
                        w, me.src};
      };
      if (HoistBackEdgeEnd(me, gcc_edges[de.ref], few_prefixes(me.src),
                           in_register_loop, hoist_onto, &hoisted)) {
        if (hoisted.size() == 1) note_entry_end();
        for (edge h : hoisted)
          on_edge(h, PathAction::kCountReset, inc.inc[d],
                  inc.inc[dag.start_edge[me.dst]]);
        if (dump_file)
          fprintf(dump_file, "  path: back edge %u->%u: its path end "
                  "counted on the %zu edges into %u\n",
                  me.src, me.dst, hoisted.size(), me.src);
        continue;
      }
      // A cut edge out of ENTRY (a loop entry cut) ends the empty path.
      if (me.src == ballarus::kEntryBlock)
        on_edge(gcc_edges[de.ref], PathAction::kInit, 0, 0);
      note_entry_end();
      on_edge(gcc_edges[de.ref], PathAction::kCountReset, inc.inc[d],
              inc.inc[dag.start_edge[me.dst]]);
    } else if (de.kind == ballarus::DagEdge::kCutEnd) {
      // The count of the path ending at the cut goes back onto the edges
      // into the block, and through blocks several prefixes reach, to
      // where the register is a constant (as a computed goto's end, above:
      // an interpreter's switch dispatch, sqlite3VdbeExec's block 10, is
      // cut, and each handler's `break` then counts one fixed counter);
      // the block itself only resets the register (kStartInit).
      int depth = 0;
      if (hoist_path_end(de.ref, inc.inc[d], &goto_sites, &depth,
                         HoistFrom::kCut)) {
        for (const auto& [h, ha] : goto_sites)
          on_edge(h, PathAction::kCount, ha, 0);
        work->goto_end_hoisted = true;
        in_block(de.ref, PathAction::kStartInit,
                 inc.inc[dag.start_edge[de.ref]], 0);
        if (dump_file)
          fprintf(dump_file, "  path: cut block %u: its count made on %zu "
                  "edges, up to %d blocks before it\n",
                  de.ref, goto_sites.size(), depth);
      } else {
        in_block(de.ref, PathAction::kStartCut, inc.inc[d],
                 inc.inc[dag.start_edge[de.ref]]);
      }
    }
  }
  // Counts the edge counters give (path-derive, mode=edge,path).
  if (derive_counts && work->loops.empty())
    DeriveCountsFromEdges(dag, prefix_sets, model_edge_of, reentry_block,
                          nb, work);
  // Without edge counters, one pre-count per loop header or cut block
  // taken from the balance of its paths (path-balance), and one on the
  // entry's paths where pass.cc finds every call of the function
  // (path-entry-balance).
  if (!derive_counts && g_options.early_termination && work->loops.empty() &&
      (g_options.path_balance || g_options.path_entry_balance)) {
    const std::map<uint32_t, FirstPreCount> first =
        FirstPreCounts(*fn, dag, prefix_reg, prefixes, weights,
                       measured_weights,
                       reentry_block, nb, *work);
    if (g_options.path_entry_balance) FindEntryTruncation(first, work);
    if (g_options.path_balance) {
      // Only where nothing else runs on the entry cut edge: its count
      // becomes a plain reset, which runs before other actions there.
      for (auto it = entry_ends.begin(); it != entry_ends.end();) {
        const edge e = work->on_edges[it->second.index].first;
        size_t on_e = 0;
        for (const auto& x : work->on_edges) on_e += x.first == e;
        it = on_e == 1 ? std::next(it) : entry_ends.erase(it);
      }
      auto made_before = [&](const std::vector<uint32_t>& dropped) {
        std::vector<bool> made(dag.n_vertices, false);
        for (uint32_t i : info.precount_edges) {
          const uint32_t u = fn->edges[i].src;
          if (u < nb && !std::binary_search(dropped.begin(), dropped.end(), u))
            made[u] = true;
        }
        for (uint32_t v : dag.topo) {
          if (prefixes[v] != 1 || !made[v]) continue;
          for (uint32_t d : dag.out[v])
            if (prefixes[dag.edges[d].dst] == 1) made[dag.edges[d].dst] = true;
        }
        return made;
      };
      BalanceStartTruncations(first, entry_ends, made_before, work);
    }
  }

  // Counts that land on one path, or on one of a few, which a loop's
  // locals can make (loop-registers, counter_emit.h).
  if (loop_registers && work->loops.empty())
    ForEachCountPaths(dag, prefix_sets, kMaxCountChoices, reentry_block, nb,
                      work,
                      [](PathAction& act, const std::vector<uint64_t>& paths,
                         edge, basic_block) {
                        if (paths.size() == 1) {
                          act.known = true;
                          act.path = paths.front();
                        } else {
                          act.choices = paths;
                        }
                      });

  // The PathInfo is complete (pre-count edges included): record it.
  std::sort(info.precount_edges.begin(), info.precount_edges.end());
  info.precount_edges.erase(
      std::unique(info.precount_edges.begin(), info.precount_edges.end()),
      info.precount_edges.end());
  fn->extensions.push_back(
      {ballarus::kPathExtensionTag, ballarus::EncodePathInfo(info)});

  // Per edge, the actions in Kind order (stable: planning order within).
  std::stable_sort(work->on_edges.begin(), work->on_edges.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  std::stable_sort(work->in_blocks.begin(), work->in_blocks.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  if (dump_file) {
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
}

}  // namespace ballarus::plugin
