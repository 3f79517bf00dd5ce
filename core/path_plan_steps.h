// path_plan_steps.h — the GCC-free parts of the plugin's path planning
// steps (plugin/path_plan.cc): what the path register holds where few path
// prefixes reach, whether a loop's entries may be cut, which pre-counts a
// balance can stand for and which balances to take.  They work on the
// model and the path DAG only, so unit tests check them on hand-made
// graphs (path_plan_steps_test.cc).
#ifndef BALLARUS_CORE_PATH_PLAN_STEPS_H_
#define BALLARUS_CORE_PATH_PLAN_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"

namespace ballarus {

// The register's values at each DAG vertex that at most `max` path
// prefixes reach, sorted (empty where more do): the sums of the increments
// along each prefix, modulo 2^64.  Distinct prefixes of one vertex have
// distinct sums (two with the same sum would give the paths through them
// and one suffix the same number), so a vertex's values are as many as its
// prefixes.
std::vector<std::vector<uint64_t>> PrefixRegisterSets(
    const PathDag& dag, const PathIncrements& inc, size_t max);

// The register's value at each DAG vertex one path prefix reaches (0
// elsewhere), from its PrefixRegisterSets.
std::vector<uint64_t> PrefixRegisters(
    const std::vector<std::vector<uint64_t>>& sets);

// Whether the register may be a signed 64-bit integer: every value it
// takes is a sum of distinct increments (each DAG edge at most once per
// path), so below the sum of their magnitudes, which must stay below 2^62.
bool IncrementsFitSigned(const PathIncrements& inc);

// A loop's entry edges as candidates for a loop entry cut: `cuttable`
// where none is cut already, fake or a re-entry edge (which carries its
// own code), and each has an edge in GCC's CFG (has_code_edge, per model
// edge); the weights of the entries (summed) and of the back edge (a
// missing weight counts 1).
struct LoopEntryWeights {
  bool cuttable = true;
  uint64_t entries = 0;
  uint64_t back = 0;
};
LoopEntryWeights WeighLoopEntries(const Function& fn,
                                  const std::vector<uint32_t>& entries,
                                  uint32_t back_edge,
                                  const std::vector<uint64_t>& weights,
                                  const std::vector<bool>& is_cut,
                                  const std::vector<bool>& has_code_edge);

// The first pre-counts of one-prefix paths, which a balance can stand for
// (path-balance, path-entry-balance).  Per origin of the prefixes that one
// path reaches -- the block S of a kStart dummy (a loop header entered by
// cut edges only, or a cut block), or kFromEntry for the function's real
// entry edge (only without re-entries: no fake edge out of ENTRY) -- the
// pre-count with no pre-count before it on its prefix (whose settling
// would need it) in the block the weights make hottest.
inline constexpr uint32_t kFromEntry = UINT32_MAX - 1;
struct FirstPreCount {
  size_t index = 0;    // the site's index (PreCountSite::index)
  uint32_t block = 0;  // the call's block
  uint64_t path = 0;   // the path the pre-count lands on
  // How often its block runs: GCC's guess where there is one, else the
  // weights' (ChooseBalances compares it with an entry cut's).
  uint64_t estimate = 0;
};
// A pre-count that is made, in the order of the plan's actions: `a` is
// its increment (the count lands on the block's register + a).
struct PreCountSite {
  size_t index = 0;
  uint32_t block = 0;
  uint64_t a = 0;
  std::optional<uint64_t> guess;  // GCC's guessed count of the block
};
std::map<uint32_t, FirstPreCount> FirstPreCounts(
    const Function& fn, const PathDag& dag, const std::vector<uint64_t>& reg,
    const std::vector<uint8_t>& prefixes, const std::vector<uint64_t>& weights,
    const std::vector<bool>& reentry_block, uint32_t nb,
    const std::vector<PreCountSite>& sites);

// The end of the one path that reaches a loop entry cut edge into S (the
// plan's action at `index`), and how often that edge runs by the estimate.
struct EntryCutEnd {
  size_t index = 0;
  uint64_t path = 0;
  uint64_t weight = 0;
  uint32_t src = 0;  // the cut edge's source block
};

// Per DAG vertex that one prefix reaches: whether a pre-count still made
// (the sources of precount_edges other than the blocks `dropped`,
// ascending) lies on that prefix, up to and including the vertex.
std::vector<bool> PrecountsMadeBefore(const Function& fn, const PathDag& dag,
                                      const std::vector<uint8_t>& prefixes,
                                      const std::vector<uint32_t>& precounts,
                                      const std::vector<uint32_t>& dropped,
                                      uint32_t nb);

// Paths counted by the balance of their start (PathInfo::balanced): per S,
// the paths from S add up to the paths ending into S, so one count on
// either side can be left out.  Picks per S the first pre-count (first) or
// the entry cut's end (entry_ends), the hotter by the estimate; an end only
// where no pre-count still made lies on its path (SettlePrecounts needs
// what follows such a call).  The function's own entry (kFromEntry) is left
// to the entry balance.  Nothing (nullopt) when no count can go, or should
// two choices name one path or a path at or above n_paths (never: every
// count is then made).
struct BalanceChoice {
  std::map<uint32_t, FirstPreCount> pre_counts;  // per S
  std::map<uint32_t, EntryCutEnd> ends;          // per S
  std::vector<PathInfo::Balanced> balanced;      // ascending by path
};
std::optional<BalanceChoice> ChooseBalances(
    const std::map<uint32_t, FirstPreCount>& first,
    const std::map<uint32_t, EntryCutEnd>& entry_ends, const Function& fn,
    const PathDag& dag, const std::vector<uint8_t>& prefixes,
    const std::vector<uint32_t>& precount_edges, uint32_t nb,
    uint64_t n_paths);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_PLAN_STEPS_H_
