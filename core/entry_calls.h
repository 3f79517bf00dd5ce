// entry_calls.h — a function's entry count taken from its callers' call
// blocks instead of a counter of its own (interprocedural counter
// elimination, edge mode).
//
// Every activation of a function enters it through ENTRY's one real edge.
// In a closed CFG no spanning tree can leave that count to the others: the
// function's own counters always determine it, so a function executes
// about one counter increment per activation for its entry alone.  When
// every call of the function is known — a direct call from another
// function of the same TU with edge counters, and nothing else (not
// visible outside the TU, address never taken) — the entry count is the
// sum of the counts of the blocks holding those calls, which the callers'
// own profiles give exactly: a block is entered only to run all of its
// statements up to a call that may not return, which ends it (gcov's CFG,
// core/model.h), so a block holding a call runs the call as often as it
// runs.  Exits, longjmps and exceptions in the callee change nothing: the
// call was made.  The plugin (plugin/entry_calls.cc) records the calls; the
// spanning tree then treats that edge as measured (core/spanning_tree.h
// `known`), so it needs no counter, and reconstruct solves callers before
// callees (CallersFirstOrder, core/metadata.h) and gives the edge the sum.
//
// The extension (Extension::tag kEntryCallsExtensionTag):
//
//   bytes := u32 edge  [u32 function  u32 block] calls
//
// `edge` is the function's real ENTRY edge (RealEntryEdge), without a
// counter; `calls` name (function of the TU by index, block holding the
// call), at least one, ascending by (function, block); a block holding two
// calls of the function is listed twice; no block is entered by a re-entry
// edge that resumes after a call (ResumedAfterCall: fork, counter resets),
// as those entries run none of its calls.  No function lists itself and the
// functions' lists form no cycle (recursion keeps a counter).
#ifndef BALLARUS_CORE_ENTRY_CALLS_H_
#define BALLARUS_CORE_ENTRY_CALLS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/metadata.h"
#include "core/model.h"

namespace ballarus {

// 5 is the trace plan's (core/trace_ids.h).
inline constexpr uint32_t kEntryCallsExtensionTag = 6;

struct EntryCalls {
  uint32_t edge = 0;                   // the function's real ENTRY edge
  std::vector<PathInfo::Call> calls;   // ascending, repeats allowed
  bool operator==(const EntryCalls& o) const {
    return edge == o.edge && calls == o.calls;
  }
};

std::vector<uint8_t> EncodeEntryCalls(const EntryCalls& info);
// False with *error ("entry calls: ...") on malformed bytes.
bool DecodeEntryCalls(const std::vector<uint8_t>& bytes, EntryCalls* info,
                      std::string* error);

// The function's kEntryCallsExtensionTag extension decoded into *info:
// false when it has none (error empty) or it is malformed (*error set).
bool FindEntryCalls(const Function& f, EntryCalls* info, std::string* error);

// The index of the one edge out of ENTRY that activations take (not fake,
// abnormal, ignored or a re-entry edge), or -1 when there is not exactly
// one.
int64_t RealEntryEdge(const Function& f);

// Whether block `b` of `f` is entered by a re-entry edge that resumes an
// activation after a call (kEdgeReentry without kEdgeFake: after fork or
// a counter reset), whose entries do not run the block's calls: such a
// block cannot count calls.
bool ResumedAfterCall(const Function& f, uint32_t b);

// The sum of the call blocks' counts, `flows[function]` being the solved
// profile of `functions[function]` (nullptr: not solved).  Unknown, with
// *problem naming the first call whose block count is not known.
Count CountOfCalls(const std::vector<PathInfo::Call>& calls,
                   const std::vector<const FlowResult*>& flows,
                   const std::vector<Function>& functions,
                   std::string* problem);

}  // namespace ballarus

#endif  // BALLARUS_CORE_ENTRY_CALLS_H_
