// trace_ids.h — how a thread's trace stream (trace_plan.h's TraceEvents)
// is written as the 32-bit words of a trace file (runtime/trace_format.h),
// and how a function's trace plan travels in the profile's metadata.
//
// Words (runtime/trace_events.h, whose constants these are): a word below
// kTraceEventTag is a witness, its per-function witness id; any other word
// starts an event:
//   kEnter  kTraceEventTag | function index in its TU, TU stamp, depth, site
//   kEnd    kTraceEventEnd, depth, site
//   kLand   kTraceEventLand, block, depth, site, live
// The TU stamp is the low 32 bits of the TU's TuIdentity (core/metadata.h),
// so a kEnter names its function across TUs and profiles.
//
// Plans: the plan a function was instrumented with depends on the
// compiler's edge weights and call blocks, which the metadata does not
// otherwise carry, so the instrumenting side stores it as the function's
// kTracePlanExtensionTag extension: little-endian uint32 words
//   flags (bit 0 kTracePlanNaive: every block writes its index instead;
//          bit 1 kTracePlanBlockWitnesses: the last list follows;
//          bit 2 kTracePlanSites: call blocks are not blocked, the events'
//          sites decide branches towards them, CallDecision::kSite — a
//          reader that does not know the bit refuses the plan, as it could
//          not regenerate its traces),
//   n, the n call blocks (ascending),
//   w, the w witness edges (edge indices, by witness id),
//   u, the u unwitnessable edges,
//   [b, the b blocks with a block witness (ascending; ids w, w+1, ...)].
// A plan without block witnesses is encoded without bit 1 and the list.
#ifndef BALLARUS_CORE_TRACE_IDS_H_
#define BALLARUS_CORE_TRACE_IDS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/trace_plan.h"
#include "runtime/trace_events.h"

namespace ballarus {

inline constexpr uint32_t kTracePlanExtensionTag = BALLARUS_TRACE_EXTENSION_TAG;
inline constexpr uint32_t kTracePlanNaive = BALLARUS_TRACE_PLAN_NAIVE;
inline constexpr uint32_t kTracePlanBlockWitnesses = 2;
inline constexpr uint32_t kTracePlanSites = 4;
inline constexpr uint32_t kTraceEventTag = BALLARUS_TRACE_EVENT_TAG;
inline constexpr uint32_t kTraceEventEnd = BALLARUS_TRACE_EVENT_END;
inline constexpr uint32_t kTraceEventLand = BALLARUS_TRACE_EVENT_LAND;

// Appends the words of `e` to `out`; for kEnter, e.id is the function's
// index in its TU and `tu_stamp` the TU's stamp.
void EncodeTraceEvent(const TraceEvent& e, uint32_t tu_stamp,
                      std::vector<uint32_t>* out);

// The function id (trace_regen.h's program index) of a TU's function, or
// -1 when no loaded profile has it.
using TraceFunctionResolver =
    std::function<int64_t(uint32_t tu_stamp, uint32_t index)>;

// Decodes words into events (kEnter ids resolved).  A multi-word event cut
// by the end of the words is dropped and `cut` set (the stream then
// regenerates as truncated); a kEnter the resolver does not know sets
// `error` ("event N: ...") and stops.
struct DecodedTrace {
  std::vector<TraceEvent> events;
  bool cut = false;  // the last event was incomplete
  std::string error;
};
DecodedTrace DecodeTraceWords(const std::vector<uint32_t>& words,
                              const TraceFunctionResolver& resolve);

// The extension bytes of `plan` (see above); `naive`: the function was
// instrumented by mode=trace-naive (flag kTracePlanNaive).
std::vector<uint8_t> EncodeTracePlanExtension(const TracePlan& plan,
                                              bool naive = false);

// The plan of `fn` from its extension; false with *error set if the bytes
// are malformed, name blocks/edges `fn` does not have, or the plan is
// mode=trace-naive's (not regenerated here).
bool DecodeTracePlanExtension(const Function& fn,
                              const std::vector<uint8_t>& bytes,
                              TracePlan* plan, std::string* error);

// The function's plan extension, or nullptr.
const Extension* FindTracePlanExtension(const Function& fn);

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_IDS_H_
