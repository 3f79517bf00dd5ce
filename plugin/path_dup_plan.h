// path_dup_plan.h — where path-guided duplication copies blocks: the
// superblocks (Hwu et al., "The superblock", 1993) that a function's
// Ball–Larus path profile shows to be worth a copy.  GCC-free; the plugin's
// pass (path_dup.cc) checks each chain against GCC's CFG and copies it.
//
// An edge profile gives every branch one probability.  A path profile
// gives a branch's probability given how it was reached: a chain entered
// by edge a = p->j (j a join) whose branches, on the paths through a, go
// another way than their edge-profile majority, is worth a private copy
// for a.  The copy's branches then get the probabilities of the paths
// through a, and the original keeps the rest: each exact, where GCC's own
// duplicators (tracer, jump threading) only scale the original's.
//
// The measure of a chain is the branch directions it makes predictable: at
// a branch block v with outgoing counts T(e) (edge profile) and S(e) (the
// paths through a that reached v along the chain), a static layout
// following the majority mispredicts T_v - max T(e) times before and
// (S_v - max S(e)) + (R_v - max R(e)) after (R = T - S); the difference is
// the chain's gain at v (never negative).  The branch-level correlation of
// Young & Smith ("Static correlated branch prediction", TOPLAS 1999) is
// the special case of a chain of one block.
#ifndef BALLARUS_PLUGIN_PATH_DUP_PLAN_H_
#define BALLARUS_PLUGIN_PATH_DUP_PLAN_H_

#include <cstdint>
#include <vector>

#include "core/model.h"
#include "core/profile_reader.h"

namespace ballarus {

// What the planner may copy and how much.
struct PathDupLimits {
  // Per block (model numbering): whether the compiler can copy it.
  std::vector<bool> copyable;
  // Per block: its size in statements.
  std::vector<uint32_t> size;
  uint32_t max_chain = 8;        // blocks per chain
  uint32_t growth_percent = 10;  // statements copied, of the function's
  uint32_t min_growth = 24;      // statements a small function may grow by
  // A chain must save at least this share (per mille) of the function's
  // branch executions, and at least min_gain directions.
  uint32_t min_gain_permille = 1;
  uint64_t min_gain = 64;
};

// One chain to copy: blocks[0] = j entered by entry_edge, each next block
// entered by the chain edge before it.
struct DupChain {
  uint32_t entry_edge = 0;           // model edge p->j
  std::vector<uint32_t> blocks;      // j, v1, ..., vk
  std::vector<uint32_t> edges;       // chain edges v_i -> v_{i+1} (k of them)
  std::vector<uint64_t> copy_count;  // per block: executions of its copy
  // Per block: per out-edge of the block (model edge indices, in the
  // order of Function::edges), the copy's count on it.
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> copy_out;
  uint64_t gain = 0;  // mispredicted directions saved (see above)
  uint32_t cost = 0;  // statements copied
};

// Per function: the blocks' counts and out-edges from the path profile.
struct PathDupInput {
  const Function* fn = nullptr;
  const LoadedPaths* paths = nullptr;
};

// What the planner saw in a function, for the pass dump.
struct PathDupStats {
  uint64_t branch = 0;    // branch executions (the gain's denominator)
  uint64_t min_gain = 0;  // the gain a chain needed
  size_t entries = 0;     // entry edges into copyable joins on some path
  uint64_t best_gain = 0;     // the best chain's gain, chosen or not
  uint64_t sum_gain = 0;      // over every entry edge's chain
};

// The chains worth copying, best first, no block in two chains and no
// chain entered from a block of another.
std::vector<DupChain> PlanPathDuplication(const PathDupInput& in,
                                          const PathDupLimits& limits,
                                          PathDupStats* stats = nullptr);

}  // namespace ballarus

#endif  // BALLARUS_PLUGIN_PATH_DUP_PLAN_H_
