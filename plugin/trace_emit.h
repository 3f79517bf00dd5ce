// trace_emit.h — mode=trace: per function, core's trace plan
// (core/trace_plan.h PlanTrace) and the calls that write its events
// (runtime/trace_events.h):
//   * at the entry, kEnter, the depth and site kept by the runtime (what
//     __ballarus_trace_enter(function index, TU stamp) does, inlined by
//     InlineTraceHooks); the depth and site it found are kept as one
//     8-byte value ds, whose depth d the landings take;
//   * before each call (and each resx, which unwinds on as a throwing call
//     does), the thread's site = block (a store into the runtime's
//     __ballarus_trace_stack2): the site of the callee's kEnter;
//   * on each witness edge, __ballarus_trace_w(id);
//   * where control arrives abnormally, __ballarus_trace_land(block, d):
//     kLand, first thing on each EH edge that unwinds out of a call (at
//     the landing pad's start when all its edges do and none has a
//     witness; the edge's witness follows), and right after each
//     returns-twice call (setjmp: both returns; block = the call's block);
//   * before each exec-family call, __ballarus_trace_exec(): kEnd and the
//     trace written;
//   * on each edge into EXIT, the stack's depth and site set back to ds:
//     one activation fewer, the caller's site back (after the edge's
//     witness; what __ballarus_trace_leave() does when the stack is as the
//     enter left it).
// mode=trace-naive writes the same events, the index of every block but
// ENTRY and EXIT at its start instead of the witnesses, and the word 1
// (EXIT) before each leave: a stack decodes it.
// Ids: a witness id is the index into the function's plan; the function
// index its position in the TU's metadata; the TU stamp the low 32 bits of
// TuIdentity.  The plan goes into the metadata as the function's extension
// (core/trace_ids.h EncodeTracePlanExtension; its naive flag set by
// mode=trace-naive).
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
  // Blocks with a block witness (computed-goto targets, core/trace_plan.h);
  // witness_blocks[k]'s id is witness_edges.size() + k.
  std::vector<uint32_t> witness_blocks;
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
// ballarus_trace_witness), the slow path staying on the very unlikely
// path (on x86-64 an asm call that keeps every register but rax:
// runtime/trace_regs.c), and the enter and leave placeholders the
// runtime's code, reading and writing the thread's __ballarus_trace_stack2
// (trace_buffer.h) directly (the enter's slow path as the witness's when
// its event does not fit in the chunk).
void InlineTraceHooks();

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_TRACE_EMIT_H_
