// path_dag.h — the path DAG of a function and its exact Ball–Larus
// numbering (Ball & Larus, "Efficient Path Profiling", MICRO 1996).
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
#ifndef BALLARUS_CORE_PATH_DAG_H_
#define BALLARUS_CORE_PATH_DAG_H_

#include <gmpxx.h>

#include <cstdint>
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

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_DAG_H_
