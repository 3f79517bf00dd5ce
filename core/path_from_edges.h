// path_from_edges.h — functions whose path counts follow from their edge
// counts, and those path counts.
#ifndef BALLARUS_CORE_PATH_FROM_EDGES_H_
#define BALLARUS_CORE_PATH_FROM_EDGES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {

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

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_FROM_EDGES_H_
