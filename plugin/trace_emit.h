// trace_emit.h — mode=trace: per function, core's trace plan
// (core/trace_plan.h PlanTrace) and the calls that write its events
// (runtime/trace_events.h):
//   * at the entry, __ballarus_trace_enter(function index, TU stamp):
//     kEnter, the depth and site kept by the runtime;
//   * before each call, __ballarus_trace_site(block): the site of the
//     callee's kEnter;
//   * on each witness edge, __ballarus_trace_w(id);
//   * on each edge into EXIT, __ballarus_trace_leave(): one activation
//     fewer.
// Ids: a witness id is the index into the function's plan; the function
// index its position in the TU's metadata; the TU stamp the low 32 bits of
// TuIdentity.  The plan goes into the metadata as the function's extension
// BALLARUS_TRACE_EXTENSION_TAG, little-endian 32-bit words:
//   flags: bit 0 (BALLARUS_TRACE_PLAN_NAIVE) mode=trace-naive: instead of
//     witnesses, every block but ENTRY and EXIT writes its index at its
//     start (the lists below are still the plan's);
//   n, then the n call blocks (ascending);
//   w, then the w witness edges (edge indices, by witness id);
//   u, then the u unwitnessable edges (the trace is exact when u = 0).
#ifndef BALLARUS_PLUGIN_TRACE_EMIT_H_
#define BALLARUS_PLUGIN_TRACE_EMIT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/model.h"

namespace ballarus::plugin {

struct TraceWork {
  bool enabled = false;
  bool naive = false;  // mode=trace-naive
  uint32_t fn_index = 0;
  // By witness id: the edge's (source, destination) block indices.
  std::vector<std::pair<uint32_t, uint32_t>> witness_edges;
  std::vector<bool> call_block;  // by block index
};

// Plans cfun's trace (fn just recorded, weights parallel to fn->edges) and
// adds the plan's extension to *fn.
void PlanFunctionTrace(ballarus::Function* fn,
                       const std::vector<uint64_t>& weights,
                       uint32_t fn_index, bool naive, TraceWork* work);

// Emits cfun's trace calls; the edge insertions are queued for the
// caller's gsi_commit_edge_inserts.
void EmitTrace(const TraceWork& work, uint32_t tu_stamp);

// After the edge insertions are committed: each __ballarus_trace_w call
// of cfun becomes the buffer's inline hot path (trace_buffer.h
// ballarus_trace_witness), the call staying on the very unlikely path.
void InlineTraceWitnesses();

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_TRACE_EMIT_H_
