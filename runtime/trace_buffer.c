/* trace_buffer.c — per-thread witness buffers, the ring recorder and the
   slow paths of the hooks (trace_buffer.h); the records are written by
   trace_write.c, the file by trace_file.c (trace_internal.h).

   Threads.  A thread's state (trace_thread) is one anonymous mapping made
   at its first witness: the chunk the hot path writes (ring mode: and the
   kept ones), the frames of its stack of traced activations
   (BALLARUS_TRACE_STACK_FRAMES), the encoding buffer of full mode or the
   kept chunks' records and checkpoints of ring mode
   (untouched pages cost nothing: MAP_NORESERVE).  It is pushed onto a lock-free
   list (compare-and-swap on its head) and never freed before process exit,
   so the signal handler and the exit writer walk the list without a lock.
   A thread's position and stack live in its TLS; the list keeps their
   addresses while the thread runs, and the position it had when it exited.
   Other threads are read racily: a thread still running while the process
   exits or crashes is written up to the witnesses it had stored (a witness
   being stored at that instant may be missing).

   Ring mode keeps ceil(N / CHUNK_MIN) chunks besides the one being
   written: a chunk is drained early only before an event that does not
   fit, so each holds at least CHUNK_MIN words.  A filled chunk is kept
   as it is and the oldest kept one is written next (nothing copied).
   Each chunk's checkpoint
   is taken by its own thread when the chunk starts, in a region of its
   own (one per kept chunk and one for the chunk being written).

   Thread exit (a pthread key destructor): full mode writes the partial
   chunk and an END record; ring mode keeps the chunks for the process's
   final write.  Instrumented code that runs after the destructor
   registers the thread again, under a new serial number.  */

#define _GNU_SOURCE

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/trace_internal.h"

static trace_state *const g = &ballarus_trace_g;

/* Where the position of a thread not registered points while tracing is
   off: scratch chunks its words overwrite, so that its witnesses take the
   inline path and only the chunk's end comes here (chunk_start), which
   sends the thread back to the start of its scratch chunk, or registers it
   when tracing is on.  A thread's position starts NULL (so that a thread
   created while tracing registers at its first word) and goes to scratch
   at its first word while tracing is off.  Threads spread over
   SCRATCH_CHUNKS of them, so that they seldom write the same cache lines;
   each scratch chunk has scratch frames (trace_buffer.h: the hooks store
   a frame at every enter).  They are mapped at the first need (a static array would need its
   segment aligned to CHUNK_BYTES, which older dynamic loaders do not
   honour in shared libraries); untouched pages cost nothing.  */
#define SCRATCH_CHUNKS 16u
#define FRAMES_BYTES \
  (((size_t)BALLARUS_TRACE_FRAME_MASK + 1) * sizeof(ballarus_trace_frame))
static uint32_t *scratch; /* SCRATCH_CHUNKS chunks, then their frames */
static __thread uint32_t scratch_k; /* this thread's, plus 1; 0: none */
static uint32_t scratch_next;

__thread uint32_t *__ballarus_trace_pos2
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;
__thread ballarus_trace_stack __ballarus_trace_stack2
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;
__thread trace_thread *ballarus_trace_self;

uint32_t ballarus_trace_stack_words(const ballarus_trace_stack *s,
                                   uint32_t *a) {
  uint32_t depth = __atomic_load_n(&s->depth, __ATOMIC_RELAXED);
  uint32_t site = __atomic_load_n(&s->site, __ATOMIC_RELAXED);
  const ballarus_trace_frame *f = s->frames;
  a[0] = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  if (depth > s->cap || f == NULL) return 1;
  /* Frame k's site is read with frame k + 1 (whose call it made).  */
  for (uint32_t k = 0; k < depth; k++) {
    const ballarus_trace_frame *e = &f[k & BALLARUS_TRACE_FRAME_MASK];
    if (e->tag_fn == BALLARUS_TRACE_FRAME_UNKNOWN || e->depth != k) return 1;
    a[1 + 3 * k] = e->tag_fn & ~BALLARUS_TRACE_EVENT_TAG;
    a[2 + 3 * k] = e->stamp;
    if (k > 0) a[3 * k] = e->site;
  }
  if (depth > 0) a[3 * depth] = site;
  a[0] = depth;
  return 1 + 3 * depth;
}

/* Ring mode: the calling thread's checkpoint for the chunk it starts
   (unknown when the stack is deeper than frames[] or has an unknown
   frame).  */
static void checkpoint_take(trace_thread *t) {
  ring_slot c = {t->next_region, 0, 0, t->total, NULL};
  t->cur = c;
  uint32_t *a = t->arena + (size_t)c.region * REGION_WORDS;
  uint32_t n = ballarus_trace_stack_words(&__ballarus_trace_stack2, a);
  if (a[0] != BALLARUS_TRACE_CHECKPOINT_UNKNOWN)
    __atomic_store_n(&t->cur.cp_len, n, __ATOMIC_RELEASE);
}

/* Ring mode: the chunk being written (n words) kept in the next slot,
   replacing the oldest, whose chunk is written next and whose region the
   next checkpoint takes.  */
static void ring_push(trace_thread *t, uint32_t n) {
  ring_slot *sl = &t->slots[t->slot_head];
  uint32_t *next;
  if (t->slot_len == t->n_slots) {
    t->slot_len--;
    t->next_region = sl->region;
    next = sl->chunk;
  } else {
    t->next_region = t->slot_len + 1;
    next = t->chunk0 + (size_t)(t->slot_len + 1) * BALLARUS_TRACE_CHUNK_WORDS;
  }
  *sl = t->cur;
  sl->count = n;
  sl->chunk = t->chunk;
  t->chunk = next;
  t->total += n;
  t->slot_head = (t->slot_head + 1) % t->n_slots;
  __atomic_store_n(&t->slot_len, t->slot_len + 1, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------- */
/* Threads.                                                                 */

void *ballarus_trace_map_aligned(size_t size, size_t align) {
  uint8_t *m = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
  return (void *)a;
}

/* Ring mode: chunks kept besides the one being written, for at least N
   words.  */
static uint32_t ring_slots(void) {
  return (g->ring_n + CHUNK_MIN - 1) / CHUNK_MIN;
}

/* Chunks at the start of the thread's mapping: the one being written,
   and in ring mode one per kept chunk.  */
static uint32_t thread_chunks(void) {
  return g->mode == BALLARUS_TRACE_MODE_RING ? ring_slots() + 1 : 1;
}

/* Lays the thread's state out after its chunks in the mapping m: the
   thread, the stack's frames, then the ring's slots and arena, or full
   mode's encoding buffer.  Returns the mapping's size with m NULL.  */
static size_t thread_layout(uint8_t *m, trace_thread *t) {
  size_t at = (size_t)thread_chunks() * CHUNK_BYTES + CHUNK_PAD +
              sizeof(trace_thread);
  at += FRAMES_BYTES;
  if (g->mode != BALLARUS_TRACE_MODE_RING) {
    if (m) t->out = m + at;
    return at + OUT_BYTES;
  }
  uint32_t n = ring_slots();
  size_t arena = (size_t)(n + 1) * REGION_WORDS;
  if (m) {
    t->slots = (ring_slot *)(m + at);
    t->arena = (uint32_t *)(m + at + (size_t)n * sizeof(ring_slot));
    t->n_slots = n;
  }
  return at + (size_t)n * sizeof(ring_slot) + arena * 4;
}

/* The calling thread's stack gets its frames; those live before (the
   thread registers inside a traced activation) are unknown.  */
static void stack_register(ballarus_trace_frame *frames) {
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  uint32_t live = s->depth < BALLARUS_TRACE_STACK_FRAMES
                      ? s->depth
                      : BALLARUS_TRACE_STACK_FRAMES;
  for (uint32_t k = 0; k < live; k++)
    frames[k].tag_fn = BALLARUS_TRACE_FRAME_UNKNOWN;
  s->frames = frames;
  s->cap = BALLARUS_TRACE_STACK_FRAMES;
}

static trace_thread *thread_register(void) {
  uint8_t *m =
      ballarus_trace_map_aligned(thread_layout(NULL, NULL), CHUNK_BYTES);
  if (m == NULL) return NULL;
  trace_thread *t =
      (trace_thread *)(m + (size_t)thread_chunks() * CHUNK_BYTES + CHUNK_PAD);
  thread_layout(m, t);
  stack_register((ballarus_trace_frame *)(t + 1));
  t->chunk = t->chunk0 = (uint32_t *)m;
  t->posp = &__ballarus_trace_pos2;
  t->stackp = &__ballarus_trace_stack2;
  t->serial = __atomic_add_fetch(&g->serials, 1, __ATOMIC_RELAXED);
  t->tid = (uint32_t)syscall(SYS_gettid);
  t->next = __atomic_load_n(&g->threads, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&g->threads, &t->next, t, 1,
                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
  ballarus_trace_self = t;
  __ballarus_trace_pos2 = t->chunk + HEAD;
  pthread_setspecific(g->key, t);
  return t;
}

/* Moves the words of t's chunk out: written (full) or kept (ring).  */
static void chunk_drain(trace_thread *t, uint32_t n) {
  if (g->mode == BALLARUS_TRACE_MODE_FULL)
    ballarus_trace_write_chunk(t, t->chunk + HEAD, n);
  else
    ring_push(t, n);
}

/* Not tracing: the calling thread writes its scratch chunk again.  */
static void scratch_rewind(void) {
  uint32_t *base = __atomic_load_n(&scratch, __ATOMIC_ACQUIRE);
  if (base == NULL) {
    uint32_t *m = ballarus_trace_map_aligned(
        (size_t)SCRATCH_CHUNKS * (CHUNK_BYTES + FRAMES_BYTES) + CHUNK_PAD,
        CHUNK_BYTES);
    if (m == NULL) return; /* the slow path at every word */
    base = NULL;
    /* A thread that lost the race leaves its mapping unused.  */
    if (__atomic_compare_exchange_n(&scratch, &base, m, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      base = m;
  }
  if (scratch_k == 0)
    scratch_k = __atomic_fetch_add(&scratch_next, 1, __ATOMIC_RELAXED) %
                    SCRATCH_CHUNKS + 1;
  const size_t k = scratch_k - 1;
  ballarus_trace_stack *s = &__ballarus_trace_stack2;
  if (s->frames == NULL)
    s->frames = (ballarus_trace_frame *)((uint8_t *)base +
                                         SCRATCH_CHUNKS * CHUNK_BYTES +
                                         CHUNK_PAD + k * FRAMES_BYTES);
  __ballarus_trace_pos2 = base + k * BALLARUS_TRACE_CHUNK_WORDS + HEAD;
}

/* The calling thread, its chunk empty and the chunk's checkpoint taken
   (ring mode), ready for the words that did not fit; NULL when they are
   dropped (not tracing, finished, no memory).  */
static trace_thread *chunk_start(void) {
  trace_thread *t = ballarus_trace_self;
  if (__atomic_load_n(&g->mode, __ATOMIC_RELAXED) == 0) {
    scratch_rewind();
    return NULL;
  }
  if (__atomic_load_n(&g->finished, __ATOMIC_RELAXED)) return NULL;
  if (t == NULL) {
    t = thread_register();
    if (t == NULL) return NULL;
  } else {
    uint32_t n = (uint32_t)(__ballarus_trace_pos2 - (t->chunk + HEAD));
    if (n == 0) return t;
    chunk_drain(t, n);
  }
  if (g->mode == BALLARUS_TRACE_MODE_RING) checkpoint_take(t);
  return t;
}

void __ballarus_trace_slow(uint32_t id) {
  trace_thread *t = chunk_start();
  if (t == NULL) return;
  t->chunk[HEAD] = id;
  __ballarus_trace_pos2 = t->chunk + HEAD + 1;
}

void __ballarus_trace_slow_event(const uint32_t *words, uint32_t n) {
  trace_thread *t = chunk_start();
  if (t == NULL || n > BALLARUS_TRACE_CHUNK_WORDS - HEAD) return;
  memcpy(t->chunk + HEAD, words, (size_t)n * 4);
  __ballarus_trace_pos2 = t->chunk + HEAD + n;
}

uint32_t ballarus_trace_pending(const trace_thread *t) {
  uint32_t *pos = t->posp ? __atomic_load_n(t->posp, __ATOMIC_RELAXED)
                          : t->end_pos;
  const uint32_t *chunk = t->chunk;
  /* Another thread's position may be read in the middle of its change
     of chunk (ring_push): then nothing.  */
  if (pos == NULL || pos < chunk + HEAD || pos > chunk + HEAD + CHUNK_USED)
    return 0;
  return (uint32_t)(pos - (chunk + HEAD));
}

void ballarus_trace_thread_exit(void *arg) {
  trace_thread *t = arg;
  if (__atomic_load_n(&g->finished, __ATOMIC_ACQUIRE)) return;
  if (ballarus_trace_thread_end) ballarus_trace_thread_end();
  t->end_pos = __ballarus_trace_pos2;
  if (g->mode == BALLARUS_TRACE_MODE_FULL) {
    chunk_drain(t, ballarus_trace_pending(t));
    ballarus_trace_write_end(t);
    t->end_pos = t->chunk + HEAD;
  }
  __atomic_store_n(&t->stackp, NULL, __ATOMIC_RELEASE);
  __atomic_store_n(&t->posp, NULL, __ATOMIC_RELEASE);
  __ballarus_trace_pos2 = NULL;
  ballarus_trace_self = NULL;
}
