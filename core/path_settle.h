// path_settle.h — true path counts from the stored counts of early
// termination: kept pre-counts settled, left-out counts restored from the
// balance of a path start or of the function's entry.
#ifndef BALLARUS_CORE_PATH_SETTLE_H_
#define BALLARUS_CORE_PATH_SETTLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/path_dag.h"

namespace ballarus {

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

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATH_SETTLE_H_
