/* trace_hooks.c — what mode=trace code calls (trace_events.h), and the
   start of tracing from the environment.

   BALLARUS_TRACE=full|ring:N starts tracing at start-up into
   BALLARUS_TRACE_FILE (default "ballarus.trace" in the working directory).
   Without BALLARUS_TRACE nothing starts and every hook's witness is
   dropped by the buffer (trace_buffer.h): the program runs as without
   tracing, only slower.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_buffer.h"
#include "trace_events.h"

_Static_assert(BALLARUS_TRACE_CHUNK_BYTES == BALLARUS_TRACE_CHUNK_WORDS * 4u,
               "the plugin's inline witness tests the chunk's alignment");

/* The thread's traced activations live, and the block of the innermost
   one's last call (trace_plan.h: kEnter's site).  */
static __thread uint32_t trace_depth
    __attribute__((tls_model("initial-exec")));
static __thread uint32_t trace_site
    __attribute__((tls_model("initial-exec")));

void __ballarus_trace_w(uint32_t id) { ballarus_trace_witness(id); }

uint32_t __ballarus_trace_enter(uint32_t fn_index, uint32_t tu_stamp) {
  uint32_t depth = trace_depth;
  ballarus_trace_witness(BALLARUS_TRACE_EVENT_TAG | fn_index);
  ballarus_trace_witness(tu_stamp);
  ballarus_trace_witness(depth);
  ballarus_trace_witness(trace_site);
  trace_depth = depth + 1;
  return depth;
}

void __ballarus_trace_land(uint32_t block, uint32_t depth) {
  ballarus_trace_witness(BALLARUS_TRACE_EVENT_LAND);
  ballarus_trace_witness(block);
  ballarus_trace_witness(depth);
  ballarus_trace_witness(trace_site);
  ballarus_trace_witness(trace_depth);
  trace_depth = depth + 1;
}

void __ballarus_trace_leave(void) {
  if (trace_depth > 0) trace_depth--;
}

void __ballarus_trace_site(uint32_t block) { trace_site = block; }

/* kEnd of the calling thread.  trace_buffer.c calls it when a thread
   that wrote witnesses ends (its key destructor).  */
void ballarus_trace_thread_end(void) {
  ballarus_trace_witness(BALLARUS_TRACE_EVENT_END);
  ballarus_trace_witness(trace_depth);
  ballarus_trace_witness(trace_site);
}

void __ballarus_trace_exec(void) {
  ballarus_trace_thread_end();
  ballarus_trace_finish();
}

/* kEnd of the thread calling exit, before the buffer's own exit handler
   (which start registered earlier, so it runs later) flushes it.  */
static void trace_end_at_exit(void) { ballarus_trace_thread_end(); }

/* Early among constructors, so that the program's own constructors are
   traced too.  */
__attribute__((constructor(101))) static void trace_start_from_env(void) {
  const char *spec = getenv("BALLARUS_TRACE");
  if (spec == NULL || spec[0] == '\0') return;
  const char *path = getenv("BALLARUS_TRACE_FILE");
  if (path == NULL || path[0] == '\0') path = "ballarus.trace";
  char err[256];
  if (ballarus_trace_start(path, spec, err, sizeof err) != 0) {
    fprintf(stderr, "ballarus: BALLARUS_TRACE=%s: %s\n", spec, err);
    return;
  }
  atexit(trace_end_at_exit);
}
