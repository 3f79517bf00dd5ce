// trace_ids.h — how a thread's trace stream (trace_plan.h's TraceEvents)
// is written as the 32-bit words of a trace file (runtime/trace_format.h),
// and how a function's trace plan travels in the profile's metadata.
//
// Words: the low 2 bits of an event's first word are its kind, the rest
// its main field; multi-word events follow with plain words:
//   witness  (id << 2) | 0                       id: per-function witness id
//   enter    (function << 2) | 1, depth, site
//   land     (block << 2) | 2, depth, site, live
//   end      (depth << 2) | 3, site
// A witness, the hot case, is one word whose value stays small (ids are
// below the function's edge count), so the file's delta varints stay at
// one byte in loops.  Fields must be below 2^30.
//
// Function ids: the index of the function in the program's trace
// function table — the functions of the profile's translation units in
// the order the profile lists them, each TU's functions in metadata order
// (TraceFunctionTable in reconstruct/trace_program.h).
//
// Plans: the plan a function was instrumented with depends on the
// compiler's edge weights and call blocks, which the metadata does not
// otherwise carry, so the instrumenting side stores it as the function's
// kTracePlanExtensionTag extension: little-endian uint32 words
//   n_call_blocks, call block indices (ascending),
//   n_witnesses, witness edge indices (ascending; witness id = position).
#ifndef BALLARUS_CORE_TRACE_IDS_H_
#define BALLARUS_CORE_TRACE_IDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/trace_plan.h"

namespace ballarus {

inline constexpr uint32_t kTracePlanExtensionTag = 5;

// Appends the words of `e` to `out`.
void EncodeTraceEvent(const TraceEvent& e, std::vector<uint32_t>* out);

// Decodes words into events.  A multi-word event cut by the end of the
// words is dropped and `cut` set (the stream regenerates as truncated).
struct DecodedTrace {
  std::vector<TraceEvent> events;
  bool cut = false;  // the last event was incomplete
};
DecodedTrace DecodeTraceWords(const std::vector<uint32_t>& words);

// The extension bytes of `plan` (see above).
std::vector<uint8_t> EncodeTracePlanExtension(const TracePlan& plan);

// The plan of `fn` from its extension; false with *error set if the bytes
// are malformed or name blocks/edges `fn` does not have.
bool DecodeTracePlanExtension(const Function& fn,
                              const std::vector<uint8_t>& bytes,
                              TracePlan* plan, std::string* error);

// The function's plan extension, or nullptr.
const Extension* FindTracePlanExtension(const Function& fn);

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_IDS_H_
