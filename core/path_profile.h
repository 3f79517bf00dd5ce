// path_profile.h — Ball–Larus path numbering (Ball & Larus, "Efficient Path
// Profiling", MICRO 1996), GCC-free, shared by the plugin (which
// instruments) and ballarus-reconstruct (which decodes).
//
// What each part holds:
//   path_dag.h         the DAG (cut edges and cut blocks), its exact
//                      numbering, decoding a path number into edges;
//   path_cuts.h        the cuts that make a function fit a path table;
//   path_increments.h  the increments on the chords of a spanning tree;
//   path_loops.h       one-path loops counted in a register, loop entries;
//   path_settle.h      true counts from early termination's stored counts;
//   path_from_edges.h  paths whose counts follow from edge counts.
#ifndef BALLARUS_CORE_PATH_PROFILE_H_
#define BALLARUS_CORE_PATH_PROFILE_H_

#include "core/path_cuts.h"
#include "core/path_dag.h"
#include "core/path_from_edges.h"
#include "core/path_increments.h"
#include "core/path_loops.h"
#include "core/path_settle.h"

#endif  // BALLARUS_CORE_PATH_PROFILE_H_
