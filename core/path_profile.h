// path_profile.h — Ball–Larus path numbering (Ball & Larus, "Efficient Path
// Profiling", MICRO 1996), GCC-free, shared by the plugin (which
// instruments) and ballarus-reconstruct (which decodes).
//
// The path DAG of a function.  Its vertices are the function's blocks
// (block 0 ENTRY, 1 EXIT, as in core/model.h) plus, for every *cut block*,
// one virtual vertex "w_in" that receives all of w's incoming edges.  Its
// edges, each with a DagEdge::Kind:
//   kCfg      a CFG edge u->w (into w_in when w is a cut block).  Abnormal
//             and ignored CFG edges are not in the DAG: gcov's model (and
//             ours) replaces them by fake ENTRY/EXIT edges, which are.
//   kBackEnd  for every *cut edge* u->w (a back edge), the dummy u->EXIT
//             that ends the path taking it (its own edge, even when u has
//             other edges to EXIT: the DAG is a multigraph);
//   kStart    for every block w that is the target of a cut edge or is a
//             cut block, one dummy ENTRY->w: a path starting at w after a
//             back edge or a cut;
//   kCutEnd   for every cut block w, the dummy w_in->EXIT.
// Cut edges are the retreating edges of a depth-first search from ENTRY
// (FindBackEdges), so irreducible regions are handled; cut blocks are
// chosen by PlanPathsWeighted (the plugin: down to path-table-max paths, so
// that every function fits a dense table) or PlanPaths (down to any limit,
// e.g. 2^63 - 1 for a 64-bit path register).
//
// Out-edge order (which decides the numbering): a block's kCfg/kBackEnd
// edges in model edge order; ENTRY's kCfg edges, then its kStart edges by
// ascending block; a w_in vertex has its one kCutEnd edge.
//
// Numbering: NumPaths(EXIT) = 1, NumPaths(v) = sum over v's out-edges of
// NumPaths(dst); Val(e_i) = sum of NumPaths(dst(e_j)) for the out-edges
// e_j before e_i.  The sum of Val along an ENTRY->EXIT path is a unique
// number in [0, NumPaths(ENTRY)) — exact with GMP for any number of paths.
//
// Instrumentation (Ball, TOPLAS 1994 event counting; MICRO'96 §3.3):
// increments Inc(e) go on the chords of a maximum spanning tree of the DAG
// plus the virtual EXIT->ENTRY edge, weighted by the estimator; the sum of
// Inc along any path equals its number (arithmetic modulo 2^64).
#ifndef BALLARUS_CORE_PATH_PROFILE_H_
#define BALLARUS_CORE_PATH_PROFILE_H_

#include <gmpxx.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace ballarus {

// The largest number of paths a function is numbered with for
// instrumentation: path numbers fit a signed 64-bit register.
inline constexpr uint64_t kMaxInstrumentedPaths = (1ull << 63) - 1;

// True if a CFG edge belongs to the path DAG (not abnormal, not ignored).
bool IsPathEdge(const Edge& e);

// Retreating edges of a depth-first search from ENTRY over path edges
// (successors in model order; then from every unvisited block in index
// order, so cycles unreachable from ENTRY are broken too).  Ascending.
std::vector<uint32_t> FindBackEdges(const Function& fn);

// Where a function's paths are cut: cut edges end a path at their source
// and start a new one at their target; cut blocks end a path on every entry
// and start a new one.  No cut edge may target a cut block.  Ascending.
struct PathCuts {
  std::vector<uint32_t> edges;   // model edge indices
  std::vector<uint32_t> blocks;  // block indices (never ENTRY or EXIT)
};

struct DagEdge {
  enum Kind : uint8_t { kCfg, kBackEnd, kStart, kCutEnd };
  uint32_t src = 0;
  uint32_t dst = 0;
  Kind kind = kCfg;
  uint32_t ref = 0;  // kCfg, kBackEnd: model edge; kStart, kCutEnd: block
};

struct PathDag {
  uint32_t n_blocks = 0;    // vertices [0, n_blocks) are the blocks
  uint32_t n_vertices = 0;  // then one w_in vertex per cut block
  std::vector<DagEdge> edges;
  std::vector<std::vector<uint32_t>> out;  // per vertex, in numbering order
  std::vector<uint32_t> topo;              // topological order of vertices
  // Per model edge: its kCfg or kBackEnd DAG edge, or -1 (not a path edge).
  std::vector<int64_t> dag_edge_of_cfg;
  // Per block: the vertex its incoming kCfg edges go to (w_in if cut).
  std::vector<uint32_t> in_vertex;
  // Per block: its kStart edge, or -1.
  std::vector<int64_t> start_edge;
  // Per block: its kCutEnd edge (cut blocks), or -1.
  std::vector<int64_t> cut_end_edge;
  // The block a vertex stands for (w for w_in).
  uint32_t BlockOf(uint32_t vertex) const;
};

// Builds the DAG.  Fails (false, *error set) when the cuts are invalid
// (index out of range, a cut edge that is not a path edge or targets a cut
// block, ENTRY/EXIT cut) or leave a cycle.
bool BuildPathDag(const Function& fn, const PathCuts& cuts, PathDag* dag,
                  std::string* error);

// How many path prefixes reach each DAG vertex from ENTRY: 0, 1, or 2 for
// several (where one does, the path register there is a known constant).
std::vector<uint8_t> CountPrefixes(const PathDag& dag);

// Exact numbering.
struct PathNumbering {
  std::vector<mpz_class> num_paths;  // per vertex
  std::vector<mpz_class> val;        // per DAG edge
  const mpz_class& total() const { return num_paths[kEntryBlock]; }
};
PathNumbering NumberPaths(const PathDag& dag);

// The DAG edges of path `id`, ENTRY to EXIT.  False if id is out of
// [0, total).
bool DecodePath(const PathDag& dag, const PathNumbering& num,
                const mpz_class& id, std::vector<uint32_t>* edges);

// The number of a path given as DAG edges ENTRY to EXIT (sum of Val).
mpz_class EncodePath(const PathNumbering& num,
                     const std::vector<uint32_t>& edges);

// The path's blocks in order: the start block (ENTRY, or w after a kStart)
// and the target of every kCfg edge — for a path ending at a cut block w,
// that includes w (entered, then cut); kBackEnd/kCutEnd end the sequence
// without adding EXIT.  A path ending at a return ends with EXIT.
std::vector<uint32_t> PathBlocks(const PathDag& dag,
                                 const std::vector<uint32_t>& edges);

// Adds `count` to the CFG edges a path traverses: kCfg edges count their
// CFG edge, kBackEnd edges the cut edge; dummies count nothing.  Modulo
// 2^64, as profile counts are (runtime/ballarus_format.h).
// edge_counts is parallel to fn.edges.
void AddPathToEdgeCounts(const PathDag& dag, const std::vector<uint32_t>& edges,
                         uint64_t count, std::vector<uint64_t>* edge_counts);

// Early termination with kept pre-counts (core/metadata.h
// kPathFlagPrecountsKept).  A call block u whose fake edge u->EXIT is in
// `precount_edges` (model edges) counts, before its call, the path that
// would end there if the call never returned -- and nothing undoes that
// count when the call returns.  Each execution that reaches such a call and
// returns from it goes on to exactly one next counted event on its path:
// the pre-count of the next such call, or the path's end.  So the true
// count of the truncated path X (ending at u's fake edge) is its stored
// count minus the stored counts of the events whose last pre-counting call
// before their end is u reached by X's prefix.  SettlePrecounts applies
// that to `counts` (path number -> stored count, modulo 2^64; numbers below
// the DAG's total): on return they are the true counts, zeros dropped.
// False with *error if a pre-count edge is not a fake DAG edge into EXIT.
bool SettlePrecounts(const PathDag& dag, const PathNumbering& num,
                     const Function& fn,
                     const std::vector<uint32_t>& precount_edges,
                     std::map<uint64_t, uint64_t>* counts, std::string* error);

// Truncated paths counted by the balance of their start (core/metadata.h
// kPathFlagBalancedStarts).  A path starts at block S (its first DAG edge
// S's kStart dummy) each time a path ends at a cut edge into S (a kBackEnd
// whose cut edge leads to S) or at S's cut (kCutEnd); each such path then
// ends once: completed, or cut short at a call.  So the counts of the
// paths ending into S equal those of the paths from S, and one count on
// either side can be left out.  For each {path, S} of `balanced` (one per
// S) -- a path from S truncated at a call whose pre-count was not made, or
// a path ending into S (at a loop entry cut edge, not starting at S) whose
// end count was not made -- BalanceStarts adds to `counts` (settled: after
// SettlePrecounts) what makes the two sides add up.  False with *error if
// a listed path is neither (a path from S's kStart dummy to a fake edge
// into EXIT, or a path ending into S that does not start there) or S is
// listed twice.
bool BalanceStarts(const PathDag& dag, const PathNumbering& num,
                   const Function& fn,
                   const std::vector<std::pair<uint64_t, uint32_t>>& balanced,
                   std::map<uint64_t, uint64_t>* counts, std::string* error);

// A truncated path counted by the balance of the function's entry (core/
// metadata.h kPathFlagEntryBalanced).  The paths whose first DAG edge is
// the function's real entry edge (a kCfg edge from ENTRY that is not fake)
// begin once per invocation, and each ends once; `path` -- one of them,
// cut short at a call whose pre-count was not made -- gets what makes
// their counts (settled) add up to `invocations`, modulo 2^64.  False with
// *error if `path` does not start at the entry edge and end at a fake edge
// into EXIT.
bool BalanceEntry(const PathDag& dag, const PathNumbering& num,
                  const Function& fn, uint64_t path, uint64_t invocations,
                  std::map<uint64_t, uint64_t>* counts, std::string* error);

// Paths determined by edge counts.  A DAG's paths span its flow space
// (every flow is a sum of ENTRY->EXIT paths), so when there are no more
// paths than that space has dimensions -- the paths are linearly
// independent as vectors of the edges they take -- the edge counts
// determine every path's count: one way to write a flow as a sum of
// paths.  (Ball, Mataga and Sagiv, "Edge profiling versus path
// profiling: the showdown", POPL 1998, ask how much of a path profile an
// edge profile gives; here only the exact case is used.)  Such a
// function needs no path register: the counters of an edge profile on
// the chords of a spanning tree (Knuth) are enough, and cost what edge
// profiling costs.  Typical: a function with one if/else or one switch,
// calls that may not return (a fake edge into EXIT each), a loop with a
// one-path body.  Two if statements in a row are not (4 paths, 3
// dimensions).
//
// DAG edges and the model edges whose counts give theirs: kCfg and
// kBackEnd the model edge's, kStart the sum over the cut edges into its
// block.  No cut blocks (kCutEnd: the count of entering a block is not
// one model edge's).
//
// PathsDeterminedByEdges: true if the DAG has no cut block, at most
// max_paths paths, and they are linearly independent (exact Gaussian
// elimination over the rationals).
bool PathsDeterminedByEdges(const PathDag& dag, const PathNumbering& num,
                            uint64_t max_paths);
// The path counts of such a DAG from the count of every model edge
// (`edge_counts`, parallel to fn.edges; unknown edges: nullopt).  Into
// *counts (path number -> count, zeros dropped).  False with *error when
// a needed edge count is unknown or the counts are not those of whole
// paths (negative or fractional path counts: counters that raced or were
// damaged).
bool PathCountsFromEdges(const PathDag& dag, const PathNumbering& num,
                         const Function& fn,
                         const std::vector<std::optional<uint64_t>>& edge_counts,
                         std::map<uint64_t, uint64_t>* counts,
                         std::string* error);

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

// Increments for a DAG with at most kMaxInstrumentedPaths paths.
struct PathIncrements {
  uint64_t n_paths = 0;
  std::vector<uint64_t> val;   // per DAG edge
  std::vector<uint64_t> inc;   // per DAG edge, modulo 2^64; 0 on the tree
  std::vector<bool> in_tree;   // per DAG edge
};
// cfg_weights parallel to fn.edges (estimated frequencies).  The virtual
// EXIT->ENTRY edge and the fake edges out of ENTRY join the tree first
// (Inc 0: an abnormal re-entry starts with r = 0), then the other edges by
// decreasing weight (ties: lower DAG edge index).  Dummy edges weigh what
// the CFG edges they stand for weigh.  False if the DAG has too many paths.
bool PlaceIncrements(const Function& fn, const PathDag& dag,
                     const std::vector<uint64_t>& cfg_weights,
                     PathIncrements* out, std::string* error);

// Loops counted without a memory update per iteration.  Every iteration
// of a loop ends a path at its back edge (count[r + a]++; r = b), a counter
// update with an index GCC cannot keep in a register.  For a loop whose
// iterations all take one path -- header h, one latch u, exactly one DAG
// path from h to the back edge u->h -- every iteration but the first ends
// the same path K, and the first ends the path s + (K - b) where s is the
// register on entering the loop (b = Inc of the dummy ENTRY->h).  Such a
// loop counts its iterations in a local n instead:
//   on each entry edge (after its own increment):  s = r; r = b; n = 0
//   on the back edge:                              n += 1; r = b
//   on each exit edge (before anything else that counts):
//       count[s + first_offset] += (n != 0); count[K] += n - (n != 0);
//       if (n == 0) r += s - b     (the register as if never reset)
// so the counts are exactly those of Ball-Larus' instrumentation; GCC
// keeps n in a register, or computes it from the loop's induction
// variable.  A loop qualifies only if nothing can leave it but its exit
// edges: its blocks are entered from outside only at h (single entry, so
// s and n are set), hold no cut block and no other loop's header, have no
// abnormal or EH edges and no fake ENTRY edges, and none of them is
// `excluded` (the caller excludes pre-counting calls and computed gotos:
// their fake EXIT edges would leave the loop with n unsaved).  Fake EXIT
// edges of calls that always return stay allowed.
struct CountedLoop {
  uint32_t header = 0;
  uint32_t back_edge = 0;          // model edge latch->header (a cut edge)
  std::vector<uint32_t> entries;   // model edges into header from outside
  std::vector<uint32_t> exits;     // model edges from the loop to outside
                                   // (EXIT included), not fake
  uint64_t start = 0;         // b: the register at h on a path starting there
  uint64_t iteration = 0;     // K: the number of the one path h .. back edge
  uint64_t first_offset = 0;  // K - b (modulo 2^64)
};
std::vector<CountedLoop> FindCountedLoops(const Function& fn,
                                          const PathDag& dag,
                                          const PathCuts& cuts,
                                          const PathIncrements& inc,
                                          const std::vector<bool>& excluded);

// Loops by their cut back edges, for cutting their entries (the plugin's
// multi-path loop entry cuts, path_plan.cc): for each cut edge u->h that is
// the only cut edge into h (h not a cut block), its natural loop (h and
// every block reaching u without passing h, over non-fake path edges) and
// the model edges into h from outside it.  Only loops entered at h alone
// (no other block of the body entered from outside, no fake or abnormal
// edge into h) and with at least one entry are listed; they may take any
// number of paths per iteration and hold calls and other loops.  Cutting
// every entry edge of such a loop starts every path through h at the same
// register value b (Inc of the dummy ENTRY->h), as after its back edge.
// Ascending by back edge.
struct LoopEntries {
  uint32_t header = 0;
  uint32_t back_edge = 0;         // model edge latch->header (a cut edge)
  std::vector<uint32_t> entries;  // model edges into header from outside
  std::vector<uint32_t> body;     // the natural loop's blocks, header first
};
std::vector<LoopEntries> FindLoopEntries(const Function& fn,
                                         const PathCuts& cuts);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_PROFILE_H_
