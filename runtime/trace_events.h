/* trace_events.h — how mode=trace code writes core's trace events
   (core/trace_plan.h TraceEvent) as words of a thread's trace stream
   (trace_buffer.h).  The reader of a trace file decodes them back.

   A word below BALLARUS_TRACE_EVENT_TAG is a witness: its id, per function
   (the index into the function's trace plan, metadata extension
   BALLARUS_TRACE_EXTENSION_TAG), or in mode=trace-naive a block index.  Otherwise the word starts an event:
     kEnter: TAG | function index in its TU, TU stamp, depth, site
     kLand:  BALLARUS_TRACE_EVENT_LAND, block, depth, site, live
     kEnd:   BALLARUS_TRACE_EVENT_END, depth, site
   (core/trace_plan.h says what each field means.)  A function index is
   below BALLARUS_TRACE_MAX_FUNCTIONS, so TAG | index is never LAND or END.
   The TU stamp is the low 32 bits of the TU's identity (core/metadata.h
   TuIdentity); the function index is its position in the TU's metadata.  */
#ifndef BALLARUS_RUNTIME_TRACE_EVENTS_H_
#define BALLARUS_RUNTIME_TRACE_EVENTS_H_

#include <stdint.h>

#define BALLARUS_TRACE_EVENT_TAG 0x80000000u
#define BALLARUS_TRACE_EVENT_END 0xffffffffu
#define BALLARUS_TRACE_EVENT_LAND 0xfffffffeu
#define BALLARUS_TRACE_MAX_FUNCTIONS 0x7ffffff0u
/* Words of each event, its first word included.  */
#define BALLARUS_TRACE_ENTER_WORDS 4u
#define BALLARUS_TRACE_LAND_WORDS 5u
#define BALLARUS_TRACE_END_WORDS 3u
/* The inline witness (plugin/trace_emit.cc) is trace_buffer.h's
   ballarus_trace_witness: a position aligned to the chunk's bytes means
   "call __ballarus_trace_slow".  trace_hooks.c checks they agree.  */
#define BALLARUS_TRACE_CHUNK_BYTES 16384u
/* A chunk's first words, which its own words never use: its words start
   after them, and the last event of the chunk before it in memory may end
   in them (trace_buffer.h).  A position in them means "full" (or not
   registered): the hooks test (p & BALLARUS_TRACE_FULL_MASK) == 0.  */
#define BALLARUS_TRACE_CHUNK_HEAD_WORDS 4u
#define BALLARUS_TRACE_FULL_MASK \
  (BALLARUS_TRACE_CHUNK_BYTES - 4u * BALLARUS_TRACE_CHUNK_HEAD_WORDS)
/* The frame of traced activation d is frames[d & BALLARUS_TRACE_FRAME_MASK]
   (trace_buffer.h ballarus_trace_stack).  */
#define BALLARUS_TRACE_FRAME_MASK ((1u << 20) - 1u)

/* Function extension (core/model.h Extension::tag) holding a traced
   function's plan: see plugin/trace_emit.h.  */
#define BALLARUS_TRACE_EXTENSION_TAG 5u
/* The extension's flags: the function writes block indices
   (mode=trace-naive), not witness ids.  */
#define BALLARUS_TRACE_PLAN_NAIVE 1u

#ifdef __cplusplus
extern "C" {
#endif

/* What instrumented code does (plugin/trace_emit.cc, which inlines the
   usual paths of the witness, the enter, the leave and the site).  */
void __ballarus_trace_w(uint32_t id);
/* Writes kEnter and returns the activation's depth (the d of its kEnter),
   which the function keeps for its landings.  The inline enter keeps the
   stack's depth and site as it found them (one 8-byte word), and its
   leave stores them back: what __ballarus_trace_leave does when the stack
   is as the enter left it.  */
uint32_t __ballarus_trace_enter(uint32_t fn_index, uint32_t tu_stamp);
void __ballarus_trace_leave(void);
void __ballarus_trace_site(uint32_t block);
/* First thing in a block that control can reach abnormally (an exception
   landing pad, the return of a setjmp-like call): writes kLand{block,
   depth} and makes the activation at `depth` the innermost again.  */
void __ballarus_trace_land(uint32_t block, uint32_t depth);
/* Before an exec-family call: the thread's kEnd, and the trace written as
   at exit (an exec that fails continues untraced).  */
void __ballarus_trace_exec(void);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_RUNTIME_TRACE_EVENTS_H_ */
