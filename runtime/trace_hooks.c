/* trace_hooks.c — what mode=trace code calls (trace_events.h), and the
   start of tracing from the environment.

   BALLARUS_TRACE=full|ring:N starts tracing at start-up into
   BALLARUS_TRACE_FILE (default "ballarus.trace" in the working directory;
   "%p" in it is the process id, "%%" a "%", as in BALLARUS_PROFILE).
   Without BALLARUS_TRACE nothing starts and every hook's witness is
   dropped by the buffer (trace_buffer.h): the program runs as without
   tracing, only slower.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_buffer.h"
#include "trace_events.h"

/* The hooks are the process's one trace runtime's (trace_buffer.h
   BALLARUS_TRACE_SHARED).  */
#pragma GCC visibility push(default)

_Static_assert(BALLARUS_TRACE_CHUNK_BYTES == BALLARUS_TRACE_CHUNK_WORDS * 4u,
               "the plugin's inline witness tests the chunk's alignment");
_Static_assert(sizeof(ballarus_trace_frame) == BALLARUS_TRACE_ENTER_WORDS * 4u,
               "a frame is its activation's kEnter words");
_Static_assert(__builtin_offsetof(ballarus_trace_stack, site) ==
                   __builtin_offsetof(ballarus_trace_stack, depth) + 4,
               "kEnter's depth and site are read as one 8-byte word");

void __ballarus_trace_w(uint32_t id) { ballarus_trace_witness(id); }

/* The hooks keep the thread's stack of traced activations
   (trace_buffer.h ballarus_trace_stack) and write each event before they
   change it: a chunk that starts at an event's first word takes its
   checkpoint in the state the event starts from.  */
static inline uint32_t stack_push(ballarus_trace_stack *s,
                                  const ballarus_trace_frame *e) {
  uint32_t depth = e->depth;
  if (s->frames != NULL) s->frames[depth & BALLARUS_TRACE_FRAME_MASK] = *e;
  s->depth = depth + 1;
  return depth;
}

/* The frame of activation `depth` as checkpoints read it (below the cap:
   the thread's own frames), or NULL when it is not there (deeper, not
   registered, or overwritten by an activation deeper by a multiple of the
   mask's span).  */
static inline const ballarus_trace_frame *frame_of(
    const ballarus_trace_stack *s, uint32_t depth) {
  if (depth >= s->cap) return NULL;
  const ballarus_trace_frame *f =
      &s->frames[depth & BALLARUS_TRACE_FRAME_MASK];
  return f->depth == depth ? f : NULL;
}

/* kEnter's words: the frame the activation pushes.  */
static inline ballarus_trace_frame enter_words(const ballarus_trace_stack *s,
                                               uint32_t fn_index,
                                               uint32_t tu_stamp) {
  ballarus_trace_frame e;
  uint64_t depth_site; /* depth and site are adjacent: one load */
  __builtin_memcpy(&depth_site, &s->depth, 8);
  e.tag_fn = BALLARUS_TRACE_EVENT_TAG | fn_index;
  e.stamp = tu_stamp;
  __builtin_memcpy(&e.depth, &depth_site, 8);
  return e;
}

/* kEnter when it starts a new chunk: apart, so that the usual path makes
   no call (and saves no register).  */
__attribute__((noinline)) static uint32_t enter_slow(uint32_t fn_index,
                                                     uint32_t tu_stamp) {
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  const ballarus_trace_frame e = enter_words(s, fn_index, tu_stamp);
  __ballarus_trace_slow_event(&e.tag_fn, BALLARUS_TRACE_ENTER_WORDS);
  return stack_push(s, &e);
}

/* The usual path: one room test, the 16 bytes stored as the event and as
   the frame.  */
uint32_t __ballarus_trace_enter(uint32_t fn_index, uint32_t tu_stamp) {
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  uint32_t *p = __ballarus_trace_pos2;
  if (__builtin_expect(!ballarus_trace_room(p, BALLARUS_TRACE_ENTER_WORDS),
                       0))
    return enter_slow(fn_index, tu_stamp);
  const ballarus_trace_frame e = enter_words(s, fn_index, tu_stamp);
  __builtin_memcpy(p, &e, sizeof e);
  __ballarus_trace_pos2 = p + BALLARUS_TRACE_ENTER_WORDS;
  return stack_push(s, &e);
}

/* The activation at `depth` is the innermost again.  Its last call block
   is that of its call to activation depth + 1 when the control came from
   deeper (a throw or longjmp through it).  Activations the landing makes
   live that were not (depth >= live: a jump forward) are unknown.  */
void __ballarus_trace_land(uint32_t block, uint32_t depth) {
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  uint32_t live = s->depth;
  const uint32_t w[BALLARUS_TRACE_LAND_WORDS] = {
      BALLARUS_TRACE_EVENT_LAND, block, depth, s->site, live};
  ballarus_trace_event(w, BALLARUS_TRACE_LAND_WORDS);
  if (live > depth + 1) {
    const ballarus_trace_frame *f = frame_of(s, depth + 1);
    if (f != NULL) s->site = f->site;
  }
  for (uint32_t k = live; k <= depth && k < s->cap; k++)
    s->frames[k & BALLARUS_TRACE_FRAME_MASK].tag_fn =
        BALLARUS_TRACE_FRAME_UNKNOWN;
  s->depth = depth + 1;
}

/* Back in the caller, whose last call block is the one of this call.  */
void __ballarus_trace_leave(void) {
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  uint32_t depth = s->depth - 1; /* depth 0: UINT32_MAX */
  if (depth == UINT32_MAX) return;
  const ballarus_trace_frame *f = frame_of(s, depth);
  if (__builtin_expect(f != NULL, 1)) {
    s->site = f->site;
    /* Two plain stores: without this gcc packs them through SSE.  */
    __asm__("" ::: "memory");
  }
  s->depth = depth;
}

void __ballarus_trace_site(uint32_t block) {
  __ballarus_trace_stack2.site = block;
}

/* kEnd of the calling thread.  trace_buffer.c calls it when a thread
   that wrote witnesses ends (its key destructor).  */
void ballarus_trace_thread_end(void) {
  const ballarus_trace_stack *s = &__ballarus_trace_stack2;
  const uint32_t w[BALLARUS_TRACE_END_WORDS] = {BALLARUS_TRACE_EVENT_END,
                                                s->depth, s->site};
  ballarus_trace_event(w, BALLARUS_TRACE_END_WORDS);
}

/* In a vfork child (which execs with the parent's memory) nothing: the
   trace and the thread's chunk are the parent's.  */
void __ballarus_trace_exec(void) {
  if (!ballarus_trace_own_process()) return;
  ballarus_trace_thread_end();
  ballarus_trace_finish();
}

/* Early among constructors, so that the program's own constructors are
   traced too.  Each module's copy runs it; the first to run starts.  */
__attribute__((constructor(101))) static void trace_start_from_env(void) {
  const char *spec = getenv("BALLARUS_TRACE");
  if (spec == NULL || spec[0] == '\0') return;
  const char *path = getenv("BALLARUS_TRACE_FILE");
  if (path == NULL || path[0] == '\0') path = "ballarus.trace";
  char err[256];
  int rc = ballarus_trace_start(path, spec, err, sizeof err);
  if (rc < 0) fprintf(stderr, "ballarus: BALLARUS_TRACE=%s: %s\n", spec, err);
  /* The kEnd of the thread calling exit, written by the exit handler of
     the runtime that started (whichever module's constructor ran first):
     a handler of this module's could run after it, as modules are
     finalised in their own order.  */
  if (rc == 0) ballarus_trace_end_at_exit();
}

#pragma GCC visibility pop
