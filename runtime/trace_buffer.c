/* trace_buffer.c — per-thread witness buffers, the ring recorder, the
   fatal-signal flush and the trace file (trace_format.h).

   Threads.  A thread's state (trace_thread) is one anonymous mapping made
   at its first witness: the chunk the hot path writes (ring mode: and the
   kept ones), the frames of its stack of traced activations
   (BALLARUS_TRACE_STACK_FRAMES), the encoding buffer of full mode or the
   kept chunks' records and checkpoints of ring mode
   (untouched pages cost nothing: MAP_NORESERVE).  It is pushed onto a lock-free
   list (compare-and-swap on its head) and never freed before process exit,
   so the signal handler and the exit writer walk the list without a lock.
   A thread's position lives in its TLS; the list keeps its address while
   the thread runs, and the position it had when it exited.  Other threads
   are read racily: a thread still running while the process exits or
   crashes is written up to the witnesses it had stored (a witness being
   stored at that instant may be missing).

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
   registers the thread again, under a new serial number.

   The file.  Its path may hold "%p", the process id, and "%%", a "%"
   (as BALLARUS_PROFILE's: safe_file.h ballarus_sf_expand_pid), expanded
   when tracing starts; missing directories are created (0755 less the
   umask).  It is written as a temporary file beside its name and renamed
   over it at the end, unless the name is taken by something that is not a
   regular file of this user (safe_file.h ballarus_sf_not_ours: a symbolic
   link, a directory, a FIFO, another user's file): the trace then goes
   beside it, NAME.<pid> (or NAME.<pid>.<k>), with one line.

   fork(): the child gets its own file (generation + 1): the path expanded
   again for the child's pid when it holds "%p", else PATH.<pid>; the
   other threads' state belongs to the parent and is skipped.  Full mode
   drops the forking thread's pending chunk in the child (the parent writes
   it): the child's stream starts at the fork, with a CHECKPOINT of the
   forking thread's stack.  Ring mode keeps it: the child's chunks show
   what led to the fork too.

   Fatal signals: the handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and
   SIGABRT writes every thread's kept chunks (the crashing thread's and
   every other registered thread's), or in full mode every live thread's partial
   chunk, with write(2) only — no malloc, stdio
   or lock — and renames the file over its path (renameat), once per
   process.  It then puts back the action that was installed before
   ballarus_trace_start (the program's handler, or SIG_DFL) and:
     - for a signal raised by the kernel for a fault (si_code > 0), returns:
       the faulting instruction runs again and the program's handler (or
       the default action) gets a genuine fault with its siginfo;
     - for a signal sent by kill, raise or abort (si_code <= 0), raises it
       again: blocked while the handler runs, it is delivered to the
       restored action when the handler returns.
   So the exit status and signal are those of the program without the
   runtime.  A handler the program installs after ballarus_trace_start
   replaces ours (sigaction is not intercepted): the chunks are then
   written only at exit.  The handler runs on the thread's alternate
   signal stack if the program set one (SA_ONSTACK); without one, a stack
   overflow cannot be recorded.  */

#define _GNU_SOURCE

#include "runtime/trace_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/safe_file.h"
#include "runtime/trace_events.h"
#include "runtime/trace_format.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define CHUNK_BYTES (BALLARUS_TRACE_CHUNK_WORDS * 4u)
#define CHUNK_USED (BALLARUS_TRACE_CHUNK_WORDS - 1u)
#define OUT_BYTES                                                         \
  (sizeof(ballarus_trace_record_header) +                                 \
   BALLARUS_TRACE_VARINT_MAX * BALLARUS_TRACE_CHUNK_WORDS + 4u)
#define RING_MAX (1u << 28)
/* A chunk is drained early only when an event does not fit (trace_buffer.h
   ballarus_trace_event), so it holds at least this many words.  */
#define CHUNK_MIN (CHUNK_USED - (BALLARUS_TRACE_LAND_WORDS - 1u))
_Static_assert(BALLARUS_TRACE_ENTER_WORDS <= BALLARUS_TRACE_LAND_WORDS &&
                   BALLARUS_TRACE_END_WORDS <= BALLARUS_TRACE_LAND_WORDS,
               "kLand is the longest event");
/* Words of a checkpoint of the deepest stack kept.  */
#define REGION_WORDS (1u + 3u * BALLARUS_TRACE_STACK_FRAMES)

/* Ring mode: a chunk kept, and the checkpoint taken when it started.  */
typedef struct ring_slot {
  uint32_t region; /* its checkpoint's region */
  uint32_t cp_len; /* its words; 0: unknown (one word D = unknown) */
  uint32_t count;  /* the chunk's words */
  uint64_t total;  /* words the thread wrote before the chunk */
  uint32_t *chunk; /* the chunk (its words from chunk + 1) */
} ring_slot;

typedef struct trace_thread {
  struct trace_thread *next;
  uint32_t *chunk;       /* being written: CHUNK_BYTES, aligned to
                            CHUNK_BYTES (ring mode: one of chunks) */
  uint32_t *chunk0;      /* the first chunk, at the mapping's start */
  uint32_t **posp;       /* the thread's __ballarus_trace_pos, NULL once
                            it exited */
  uint32_t *end_pos;     /* its position at exit */
  uint32_t serial, tid, seq;
  int dead;              /* another process's (after fork) */
  uint64_t total;        /* words moved out of the chunk so far */
  uint8_t *out;          /* full mode: one record's encoding */
  /* Ring mode: n_slots kept chunks, slot_len of them filled, the oldest
     taken next at slot_head; the chunk being written and its checkpoint
     (cur).  The n_slots + 1 chunks are at the mapping's start; a chunk
     filled becomes a slot's and the oldest slot's (or a chunk not used
     yet) becomes the one written: whole chunks change hands, no word is
     copied.  The
     checkpoints' words: region r at arena + r * REGION_WORDS, one per
     kept chunk and one for cur, the next checkpoint's in next_region (its
     untouched pages cost no memory).  */
  ring_slot *slots;
  uint32_t n_slots, slot_head, slot_len;
  ring_slot cur;
  uint32_t *arena;
  uint32_t next_region;
} trace_thread;

/* Where the position of a thread not registered points while tracing is
   off: scratch chunks its words overwrite, so that its witnesses take the
   inline path and only the chunk's end comes here (chunk_start), which
   sends the thread back to the start of its scratch chunk, or registers it
   when tracing is on.  A thread's position starts NULL (so that a thread
   created while tracing registers at its first word) and goes to scratch
   at its first word while tracing is off.  Threads spread over
   SCRATCH_CHUNKS of them, so that they seldom write the same cache lines.
   They are mapped at the first need (a static array would need its
   segment aligned to CHUNK_BYTES, which older dynamic loaders do not
   honour in shared libraries); untouched pages cost nothing.  */
#define SCRATCH_CHUNKS 16u
static uint32_t *scratch;
static __thread uint32_t scratch_k; /* this thread's, plus 1; 0: none */
static uint32_t scratch_next;

__thread uint32_t *__ballarus_trace_pos
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;
__thread ballarus_trace_stack __ballarus_trace_stack
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;
static __thread trace_thread *self;

static struct {
  int mode;              /* 0 when not tracing */
  uint32_t ring_n;
  int dirfd, fd;
  char tmpl[PATH_MAX];   /* the path as given (may hold %p) */
  char path[PATH_MAX];   /* ... expanded */
  size_t dir_len;        /* path's length up to its last component */
  unsigned pids;         /* how many %p tmpl holds */
  char base[256];        /* the last component of the path */
  char name[280];        /* the final name in dirfd: base, or base.<pid> */
  char tmp[330];         /* the file being written in dirfd */
  ballarus_trace_file_header header;
  trace_thread *threads; /* the list */
  uint32_t serials;
  int finished;          /* finish has begun */
  int written;           /* ... and is over */
  int write_errno;       /* the first write error, 0 if none */
  int rename_errno;      /* the final rename's error, 0 if none */
  int end_at_exit;       /* the exiting thread's kEnd before the trace */
  ballarus_trace_tus *tus; /* the modules' TUs (trace_buffer.h) */
  uint32_t meta_seq;     /* METADATA records written to the file */
  pthread_key_t key;
  struct sigaction old[5];
  int installed;          /* how many of old[] were saved */
} g = {.dirfd = -1, .fd = -1};

static const int fatal_signals[5] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE,
                                     SIGABRT};

/* Writes to the trace file, remembering the first error for the message at
   exit (async-signal-safe).  */
static void trace_write(const void *data, size_t size) {
  if (g.fd >= 0 && ballarus_sf_write_all(g.fd, data, size) != 0 &&
      g.write_errno == 0)
    g.write_errno = errno ? errno : EIO;
}

/* ---------------------------------------------------------------------- */
/* Encoding (trace_format.h): a sink of witnesses, streamed into buf.      */

typedef struct sink {
  uint8_t *buf;
  size_t cap, len;
  int fd;         /* flushed there when buf fills; -1: buf is large enough */
  int count_only; /* only count the bytes */
  uint32_t prev, fnv, bytes;
} sink;

static void sink_init(sink *s, uint8_t *buf, size_t cap, int fd, int count) {
  s->buf = buf;
  s->cap = cap;
  s->len = 0;
  s->fd = fd;
  s->count_only = count;
  s->prev = 0;
  s->fnv = 2166136261u;
  s->bytes = 0;
}

static void sink_flush(sink *s) {
  if (s->fd >= 0 && s->len > 0) trace_write(s->buf, s->len);
  s->len = 0;
}

static void sink_put(sink *s, uint32_t w) {
  uint32_t d = w - s->prev;
  uint32_t z = (d << 1) ^ (uint32_t)((int32_t)d >> 31);
  uint8_t tmp[BALLARUS_TRACE_VARINT_MAX];
  unsigned n = 0;
  s->prev = w;
  do {
    tmp[n] = (uint8_t)(z & 0x7f);
    z >>= 7;
    if (z) tmp[n] |= 0x80;
    n++;
  } while (z);
  s->bytes += n;
  if (s->count_only) return;
  if (s->len + n > s->cap) sink_flush(s);
  for (unsigned i = 0; i < n; i++) {
    s->fnv = (s->fnv ^ tmp[i]) * 16777619u;
    s->buf[s->len++] = tmp[i];
  }
}

static void fill_header(ballarus_trace_record_header *h, const trace_thread *t,
                        uint32_t kind, uint32_t count, uint32_t bytes,
                        uint64_t total) {
  memset(h, 0, sizeof *h);
  h->magic = BALLARUS_TRACE_RECORD_MAGIC;
  h->kind = kind;
  h->thread = t->serial;
  h->tid = t->tid;
  h->seq = t->seq;
  h->count = count;
  h->bytes = bytes;
  h->total = total;
}

/* Full mode: words[0..n) as one CHUNK record, one write.  */
static void write_chunk(trace_thread *t, const uint32_t *words, uint32_t n) {
  ballarus_trace_record_header h;
  size_t hs = sizeof h;
  sink s;
  sink_init(&s, t->out + hs, OUT_BYTES - hs - 4, -1, 0);
  for (uint32_t i = 0; i < n; i++) sink_put(&s, words[i]);
  t->total += n;
  fill_header(&h, t, BALLARUS_TRACE_CHUNK, n, s.bytes, t->total);
  memcpy(t->out, &h, hs);
  memcpy(t->out + hs + s.len, &s.fnv, 4);
  trace_write(t->out, hs + s.len + 4);
  t->seq++;
}

static void write_end(trace_thread *t) {
  uint8_t r[sizeof(ballarus_trace_record_header) + 4];
  ballarus_trace_record_header h;
  uint32_t fnv = 2166136261u; /* of the empty payload */
  fill_header(&h, t, BALLARUS_TRACE_END, 0, 0, t->total);
  memcpy(r, &h, sizeof h);
  memcpy(r + sizeof h, &fnv, 4);
  trace_write(r, sizeof r);
  t->seq++;
}

/* A record's words: a[(at + i) & mask], or with `stack` the checkpoint of
   that stack as it is now.  */
typedef struct words {
  const uint32_t *a;
  uint64_t at, mask;
  const ballarus_trace_stack *stack;
} words;

/* Whether the checkpoint of stack s would say "unknown".  */
static int stack_unknown(const ballarus_trace_stack *s) {
  if (s->depth > s->cap) return 1;
  for (uint32_t k = 0; k < s->depth; k++)
    if (s->frames[k].tag_fn == BALLARUS_TRACE_FRAME_UNKNOWN) return 1;
  return 0;
}

/* Word i of s's checkpoint (trace_format.h CHECKPOINT), s known.  */
static uint32_t stack_word(const ballarus_trace_stack *s, uint32_t i) {
  if (i == 0) return s->depth;
  uint32_t k = (i - 1) / 3;
  const ballarus_trace_frame *f = &s->frames[k];
  switch ((i - 1) % 3) {
    case 0: return f->tag_fn & ~BALLARUS_TRACE_EVENT_TAG;
    case 1: return f->stamp;
    default: return k + 1 < s->depth ? s->frames[k + 1].site : s->site;
  }
}

static uint32_t word_at(const words *w, uint32_t i) {
  if (w->stack) return stack_word(w->stack, i);
  return w->a[(w->at + i) & w->mask];
}

/* One record of `count` words, streamed (its size counted first), for
   the writes of finish and of a fork child, where no other thread writes
   meanwhile.  */
static void write_words(trace_thread *t, uint32_t kind, const words *w,
                        uint32_t count, uint64_t total) {
  uint8_t buf[4096];
  sink s;
  ballarus_trace_record_header h;
  sink_init(&s, buf, sizeof buf, -1, 1);
  for (uint32_t i = 0; i < count; i++) sink_put(&s, word_at(w, i));
  fill_header(&h, t, kind, count, s.bytes, total);
  trace_write(&h, sizeof h);
  sink_init(&s, buf, sizeof buf, g.fd, 0);
  for (uint32_t i = 0; i < count; i++) sink_put(&s, word_at(w, i));
  sink_flush(&s);
  trace_write(&s.fnv, 4);
  t->seq++;
}

/* The CHECKPOINT of the calling thread's stack as it is now.  */
static void write_live_checkpoint(trace_thread *t) {
  static const uint32_t unknown = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  const ballarus_trace_stack *s = &__ballarus_trace_stack;
  words w = {&unknown, 0, 0, NULL};
  uint32_t count = 1;
  if (!stack_unknown(s)) {
    w.stack = s;
    count = 1 + 3 * s->depth;
  }
  write_words(t, BALLARUS_TRACE_CHECKPOINT, &w, count, t->total);
}

/* Ring mode: the calling thread's checkpoint for the chunk it starts
   (unknown when the stack is deeper than frames[] or has an unknown
   frame).  */
static void checkpoint_take(trace_thread *t) {
  const ballarus_trace_stack *s = &__ballarus_trace_stack;
  ring_slot c = {t->next_region, 0, 0, t->total};
  t->cur = c;
  uint32_t depth = s->depth;
  if (depth > s->cap) return;
  uint32_t *a = t->arena + (size_t)c.region * REGION_WORDS;
  const ballarus_trace_frame *f = s->frames;
  /* One pass over the frames (stack_word's words, unknown at the first
     unknown frame).  */
  a[0] = depth;
  for (uint32_t k = 0; k < depth; k++, a += 3) {
    if (f[k].tag_fn == BALLARUS_TRACE_FRAME_UNKNOWN) return;
    a[1] = f[k].tag_fn & ~BALLARUS_TRACE_EVENT_TAG;
    a[2] = f[k].stamp;
    a[3] = k + 1 < depth ? f[k + 1].site : s->site;
  }
  __atomic_store_n(&t->cur.cp_len, 1 + 3 * depth, __ATOMIC_RELEASE);
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

/* A kept chunk as CHECKPOINT and RING records.  */
static void write_slot(trace_thread *t, const ring_slot *sl) {
  const uint32_t *w = sl->chunk + 1;
  static const uint32_t unknown = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  words cp = {t->arena, (uint64_t)sl->region * REGION_WORDS, ~(uint64_t)0,
              NULL};
  words ring = {w, 0, ~(uint64_t)0, NULL};
  if (sl->cp_len == 0) cp = (words){&unknown, 0, 0, NULL};
  write_words(t, BALLARUS_TRACE_CHECKPOINT, &cp, sl->cp_len ? sl->cp_len : 1,
              sl->total);
  write_words(t, BALLARUS_TRACE_RING, &ring, sl->count, sl->total + sl->count);
}

/* Ring mode at exit: the thread's kept chunks, oldest first, then the
   chunk being written (its `pending` words).  */
static void write_ring(trace_thread *t, uint32_t pending) {
  uint32_t len = __atomic_load_n(&t->slot_len, __ATOMIC_ACQUIRE);
  uint32_t first = (t->slot_head + t->n_slots - len) % t->n_slots;
  for (uint32_t i = 0; i < len; i++) {
    uint32_t k = (first + i) % t->n_slots;
    write_slot(t, &t->slots[k]);
  }
  if (pending > 0) {
    ring_slot c = t->cur;
    c.count = pending;
    c.chunk = t->chunk;
    write_slot(t, &c);
  }
}

/* ---------------------------------------------------------------------- */
/* Threads.                                                                 */

static void thread_exit(void *arg);

static void *map_aligned(size_t size, size_t align) {
  uint8_t *m = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
  return (void *)a;
}

/* Ring mode: chunks kept besides the one being written, for at least N
   words.  */
static uint32_t ring_slots(void) {
  return (g.ring_n + CHUNK_MIN - 1) / CHUNK_MIN;
}

/* Chunks at the start of the thread's mapping: the one being written,
   and in ring mode one per kept chunk.  */
static uint32_t thread_chunks(void) {
  return g.mode == BALLARUS_TRACE_MODE_RING ? ring_slots() + 1 : 1;
}

/* Lays the thread's state out after its chunks in the mapping m: the
   thread, the stack's frames, then the ring's slots and arena, or full
   mode's encoding buffer.  Returns the mapping's size with m NULL.  */
static size_t thread_layout(uint8_t *m, trace_thread *t) {
  size_t at = (size_t)thread_chunks() * CHUNK_BYTES + sizeof(trace_thread);
  at += (size_t)BALLARUS_TRACE_STACK_FRAMES * sizeof(ballarus_trace_frame);
  if (g.mode != BALLARUS_TRACE_MODE_RING) {
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
  ballarus_trace_stack *s = &__ballarus_trace_stack;
  uint32_t live = s->depth < BALLARUS_TRACE_STACK_FRAMES
                      ? s->depth
                      : BALLARUS_TRACE_STACK_FRAMES;
  for (uint32_t k = 0; k < live; k++)
    frames[k].tag_fn = BALLARUS_TRACE_FRAME_UNKNOWN;
  s->frames = frames;
  s->cap = BALLARUS_TRACE_STACK_FRAMES;
}

static trace_thread *thread_register(void) {
  uint8_t *m = map_aligned(thread_layout(NULL, NULL), CHUNK_BYTES);
  if (m == NULL) return NULL;
  trace_thread *t =
      (trace_thread *)(m + (size_t)thread_chunks() * CHUNK_BYTES);
  thread_layout(m, t);
  stack_register((ballarus_trace_frame *)(t + 1));
  t->chunk = t->chunk0 = (uint32_t *)m;
  t->posp = &__ballarus_trace_pos;
  t->serial = __atomic_add_fetch(&g.serials, 1, __ATOMIC_RELAXED);
  t->tid = (uint32_t)syscall(SYS_gettid);
  t->next = __atomic_load_n(&g.threads, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&g.threads, &t->next, t, 1,
                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
  self = t;
  __ballarus_trace_pos = t->chunk + 1;
  pthread_setspecific(g.key, t);
  return t;
}

/* Moves the words of t's chunk out: written (full) or kept (ring).  */
static void chunk_drain(trace_thread *t, uint32_t n) {
  if (g.mode == BALLARUS_TRACE_MODE_FULL)
    write_chunk(t, t->chunk + 1, n);
  else
    ring_push(t, n);
}

/* Not tracing: the calling thread writes its scratch chunk again.  */
static void scratch_rewind(void) {
  uint32_t *base = __atomic_load_n(&scratch, __ATOMIC_ACQUIRE);
  if (base == NULL) {
    uint32_t *m = map_aligned((size_t)SCRATCH_CHUNKS * CHUNK_BYTES,
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
  __ballarus_trace_pos =
      base + (size_t)(scratch_k - 1) * BALLARUS_TRACE_CHUNK_WORDS + 1;
}

/* The calling thread, its chunk empty and the chunk's checkpoint taken
   (ring mode), ready for the words that did not fit; NULL when they are
   dropped (not tracing, finished, no memory).  */
static trace_thread *chunk_start(void) {
  trace_thread *t = self;
  if (__atomic_load_n(&g.mode, __ATOMIC_RELAXED) == 0) {
    scratch_rewind();
    return NULL;
  }
  if (__atomic_load_n(&g.finished, __ATOMIC_RELAXED)) return NULL;
  if (t == NULL) {
    t = thread_register();
    if (t == NULL) return NULL;
  } else {
    uint32_t n = (uint32_t)(__ballarus_trace_pos - (t->chunk + 1));
    if (n == 0) return t;
    chunk_drain(t, n);
  }
  if (g.mode == BALLARUS_TRACE_MODE_RING) checkpoint_take(t);
  return t;
}

void __ballarus_trace_slow(uint32_t id) {
  trace_thread *t = chunk_start();
  if (t == NULL) return;
  t->chunk[1] = id;
  __ballarus_trace_pos = t->chunk + 2;
}

void __ballarus_trace_slow_event(const uint32_t *words, uint32_t n) {
  trace_thread *t = chunk_start();
  if (t == NULL || n > CHUNK_USED) return;
  memcpy(t->chunk + 1, words, (size_t)n * 4);
  __ballarus_trace_pos = t->chunk + 1 + n;
}

static uint32_t pending_of(const trace_thread *t) {
  uint32_t *pos = t->posp ? __atomic_load_n(t->posp, __ATOMIC_RELAXED)
                          : t->end_pos;
  const uint32_t *chunk = t->chunk;
  /* Another thread's position may be read in the middle of its change
     of chunk (ring_push): then nothing.  */
  if (pos == NULL || pos < chunk + 1 || pos > chunk + CHUNK_USED + 1) return 0;
  return (uint32_t)(pos - (chunk + 1));
}

/* The exiting thread's last words (trace_hooks.c: kEnd), where the
   runtime has them.  */
extern void ballarus_trace_thread_end(void)
    __attribute__((weak)) BALLARUS_TRACE_SHARED;

static void thread_exit(void *arg) {
  trace_thread *t = arg;
  if (__atomic_load_n(&g.finished, __ATOMIC_ACQUIRE)) return;
  if (ballarus_trace_thread_end) ballarus_trace_thread_end();
  t->end_pos = __ballarus_trace_pos;
  if (g.mode == BALLARUS_TRACE_MODE_FULL) {
    chunk_drain(t, pending_of(t));
    write_end(t);
    t->end_pos = t->chunk + 1;
  }
  __atomic_store_n(&t->posp, NULL, __ATOMIC_RELEASE);
  __ballarus_trace_pos = NULL;
  self = NULL;
}

/* ---------------------------------------------------------------------- */
/* The file, exit and fatal signals.                                       */

/* One line on standard error with write(2), from a static buffer: finish
   (also run by the signal handler) says where the trace went.  */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...) {
  static char line[2 * PATH_MAX + 256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n
                                                           : sizeof line - 1);
}

/* Renames the temporary file over its name, or beside it when the name is
   taken by something not ours to replace (the file comment), with one
   line saying so.  */
static void commit_file(void) {
  static char beside[sizeof g.name + 48];
  char err[256];
  const char *why = ballarus_sf_not_ours(g.dirfd, g.name, NULL);
  if (why == NULL) {
    if (renameat(g.dirfd, g.tmp, g.dirfd, g.name) != 0) g.rename_errno = errno;
    return;
  }
  int fd = ballarus_sf_create_unique(g.dirfd, g.name, 0, 0600, 0, beside,
                                     sizeof beside, err, sizeof err);
  if (fd >= 0) close(fd);
  const int d = (int)g.dir_len;
  if (fd < 0 || renameat(g.dirfd, g.tmp, g.dirfd, beside) != 0)
    say("ballarus: trace %.*s%s %s, not replaced; the trace is left in "
        "%.*s%s\n", d, g.path, g.name, why, d, g.path, g.tmp);
  else
    say("ballarus: trace %.*s%s %s, not replaced; the trace is written to "
        "%.*s%s instead\n", d, g.path, g.name, why, d, g.path, beside);
}

/* ---------------------------------------------------------------------- */
/* The modules' metadata (trace_format.h METADATA).                        */

static pthread_mutex_t tus_lock = PTHREAD_MUTEX_INITIALIZER;

/* One METADATA record: the TU's blob, one writev(2) (async-signal-safe,
   appended whole among other threads' records).  */
static void write_metadata(const ballarus_tu_desc *d) {
  ballarus_meta_header mh;
  memcpy(&mh, d->metadata, sizeof mh);
  if (mh.size < sizeof mh || mh.size > UINT32_MAX) return;
  uint32_t fnv = 2166136261u;
  for (uint64_t i = 0; i < mh.size; i++)
    fnv = (fnv ^ d->metadata[i]) * 16777619u;
  ballarus_trace_record_header h;
  memset(&h, 0, sizeof h);
  h.magic = BALLARUS_TRACE_RECORD_MAGIC;
  h.kind = BALLARUS_TRACE_METADATA;
  h.seq = __atomic_fetch_add(&g.meta_seq, 1, __ATOMIC_RELAXED);
  h.count = h.bytes = (uint32_t)mh.size;
  struct iovec v[3] = {{&h, sizeof h},
                       {(void *)d->metadata, (size_t)mh.size},
                       {&fnv, 4}};
  size_t want = sizeof h + (size_t)mh.size + 4;
  if (g.fd >= 0 && writev(g.fd, v, 3) != (ssize_t)want && g.write_errno == 0)
    g.write_errno = errno ? errno : EIO;
}

static void write_module(const ballarus_trace_tus *m) {
  for (uint64_t t = 0; t < m->n; t++) write_metadata(m->tus[t]);
}

void ballarus_trace_add_tus(ballarus_trace_tus *m) {
  pthread_mutex_lock(&tus_lock);
  m->next = g.tus;
  __atomic_store_n(&g.tus, m, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&tus_lock);
}

void ballarus_trace_remove_tus(ballarus_trace_tus *m) {
  pthread_mutex_lock(&tus_lock);
  if (ballarus_trace_own_process() &&
      !__atomic_load_n(&g.finished, __ATOMIC_ACQUIRE))
    write_module(m);
  for (ballarus_trace_tus **p = &g.tus; *p; p = &(*p)->next)
    if (*p == m) {
      __atomic_store_n(p, m->next, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&tus_lock);
}

/* A vfork child shares the parent's memory and runs no fork handler: its
   pid is not the one the file is written for.  */
int ballarus_trace_own_process(void) {
  return __atomic_load_n(&g.mode, __ATOMIC_ACQUIRE) != 0 &&
         (uint32_t)getpid() == g.header.pid;
}

/* Async-signal-safe: write(2), fstatat(2), renameat(2) and close(2)
   only, once (a name not ours adds openat(2) and snprintf, which does not
   allocate for the numbers and strings it is given here).  A second
   caller (another thread crashing meanwhile) waits up to a second for the
   first to be done, so that the process does not die while the file is
   half written.  */
void ballarus_trace_finish(void) {
  if (!ballarus_trace_own_process()) return;
  if (__atomic_exchange_n(&g.finished, 1, __ATOMIC_ACQ_REL)) {
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 1000 && !__atomic_load_n(&g.written, __ATOMIC_ACQUIRE);
         i++)
      nanosleep(&ms, NULL);
    return;
  }
  for (trace_thread *t = __atomic_load_n(&g.threads, __ATOMIC_ACQUIRE); t;
       t = t->next) {
    if (t->dead) continue;
    if (g.mode == BALLARUS_TRACE_MODE_RING)
      write_ring(t, pending_of(t));
    else if (t->posp != NULL)
      write_chunk(t, t->chunk + 1, pending_of(t));
  }
  for (const ballarus_trace_tus *m = __atomic_load_n(&g.tus, __ATOMIC_ACQUIRE);
       m; m = m->next)
    write_module(m);
  commit_file();
  close(g.fd);
  g.fd = -1;
  __atomic_store_n(&g.written, 1, __ATOMIC_RELEASE);
}

void ballarus_trace_end_at_exit(void) { g.end_at_exit = 1; }

/* At exit: finishes, and says what went wrong, if anything.  */
static void trace_atexit(void) {
  int was_finished = g.finished;
  if (g.end_at_exit && !was_finished && ballarus_trace_thread_end)
    ballarus_trace_thread_end();
  ballarus_trace_finish();
  if (was_finished) return;
  if (g.write_errno)
    dprintf(2, "ballarus: trace %s: write: %s (trace incomplete)\n", g.name,
            strerror(g.write_errno));
  if (g.rename_errno)
    dprintf(2, "ballarus: trace %s: rename to %s: %s\n", g.tmp, g.name,
            strerror(g.rename_errno));
}

static void fatal_handler(int sig, siginfo_t *si, void *uc) {
  int saved = errno;
  (void)uc;
  ballarus_trace_finish();
  for (int i = 0; i < 5; i++)
    if (fatal_signals[i] == sig) sigaction(sig, &g.old[i], NULL);
  if (si == NULL || si->si_code <= 0) raise(sig);
  errno = saved;
}

static int install_handlers(char *err, size_t errlen) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fatal_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 5; i++)
    if (sigaction(fatal_signals[i], &sa, &g.old[i]) != 0) {
      snprintf(err, errlen, "sigaction(%d): %s", fatal_signals[i],
               strerror(errno));
      return -1;
    } else {
      g.installed = i + 1;
    }
  return 0;
}

/* Creates the temporary file beside g.name in g.dirfd and writes the file
   header.  */
static int open_file(char *err, size_t errlen) {
  g.fd = ballarus_sf_create_unique(g.dirfd, g.name, 1, 0600, 0, g.tmp,
                                   sizeof g.tmp, err, errlen);
  if (g.fd < 0) return -1;
  fcntl(g.fd, F_SETFL, fcntl(g.fd, F_GETFL) | O_APPEND);
  g.header.pid = (uint32_t)getpid();
  if (ballarus_sf_write_all(g.fd, &g.header, sizeof g.header) != 0) {
    snprintf(err, errlen, "%s: %s", g.tmp, strerror(errno));
    return -1;
  }
  return 0;
}

/* Expands the path for this process, opens its directory (created if
   missing) and names the file in it.  */
static int open_dir(char *err, size_t errlen) {
  const char *name;
  if (ballarus_sf_expand_pid(g.tmpl, (long)getpid(), g.path, sizeof g.path,
                             &g.pids) >= sizeof g.path) {
    snprintf(err, errlen, "%s: name too long", g.tmpl);
    return -1;
  }
  g.dirfd = ballarus_sf_open_parent(g.path, BALLARUS_SF_MKDIR, 0755, &name,
                                    err, errlen);
  if (g.dirfd < 0) return -1;
  if (strlen(name) >= sizeof g.base) {
    snprintf(err, errlen, "%s: name too long", g.path);
    return -1;
  }
  strcpy(g.base, name);
  strcpy(g.name, name);
  g.dir_len = (size_t)(name - g.path);
  return 0;
}

/* The child of fork: its own file; the other threads are the parent's.
   Full mode: the forking thread's stream starts here, with a CHECKPOINT
   of its stack (the innermost activation in its call to fork).  */
static void atfork_child(void) {
  char err[256];
  if (g.mode == 0 || g.finished) return;
  close(g.fd);
  for (trace_thread *t = g.threads; t; t = t->next)
    if (t != self) t->dead = 1;
  if (g.pids > 0) {
    close(g.dirfd);
    if (open_dir(err, sizeof err) != 0) {
      dprintf(2, "ballarus: trace %s: %s\n", g.path, err);
      g.mode = 0;
      return;
    }
  } else {
    snprintf(g.name, sizeof g.name, "%s.%ld", g.base, (long)getpid());
  }
  g.meta_seq = 0;
  pthread_mutex_init(&tus_lock, NULL);
  g.header.parent_pid = g.header.pid;
  g.header.generation++;
  g.write_errno = g.rename_errno = 0;
  if (open_file(err, sizeof err) != 0) {
    dprintf(2, "ballarus: trace %s: %s\n", g.name, err);
    g.mode = 0;
    return;
  }
  if (g.mode == BALLARUS_TRACE_MODE_FULL && self != NULL &&
      __ballarus_trace_pos != NULL) {
    __ballarus_trace_pos = self->chunk + 1;
    self->seq = 0;
    self->total = 0;
    write_live_checkpoint(self);
  }
}

static int parse_spec(const char *spec, char *err, size_t errlen) {
  if (strcmp(spec, "full") == 0) {
    g.mode = BALLARUS_TRACE_MODE_FULL;
    return 0;
  }
  char *end;
  unsigned long n;
  errno = 0;
  if (strncmp(spec, "ring:", 5) == 0 && spec[5] >= '0' && spec[5] <= '9' &&
      (n = strtoul(spec + 5, &end, 10), errno == 0 && *end == 0) && n >= 1 &&
      n <= RING_MAX) {
    g.mode = BALLARUS_TRACE_MODE_RING;
    g.ring_n = (uint32_t)n;
    return 0;
  }
  snprintf(err, errlen,
           "trace \"%s\": expected full or ring:N with N from 1 to %u", spec,
           RING_MAX);
  return -1;
}

/* Undoes what ballarus_trace_start did before it failed; returns -1.  */
static int start_failed(void) {
  for (int i = 0; i < g.installed; i++)
    sigaction(fatal_signals[i], &g.old[i], NULL);
  g.installed = 0;
  if (g.fd >= 0) {
    unlinkat(g.dirfd, g.tmp, 0);
    close(g.fd);
  }
  close(g.dirfd);
  g.fd = g.dirfd = -1;
  g.ring_n = 0;
  return -1;
}

int ballarus_trace_start(const char *path, const char *spec, char *err,
                         size_t errlen) {
  if (g.mode != 0) return 1;
  if (parse_spec(spec, err, errlen) != 0) return -1;
  int mode = g.mode;
  g.mode = 0;
  if (strlen(path) >= sizeof g.tmpl) {
    snprintf(err, errlen, "trace file name too long");
    return -1;
  }
  strcpy(g.tmpl, path);
  if (open_dir(err, errlen) != 0) return start_failed();
  memcpy(g.header.magic, BALLARUS_TRACE_MAGIC, 8);
  g.header.version = BALLARUS_TRACE_VERSION;
  g.header.header_size = sizeof g.header;
  g.header.mode = (uint32_t)mode;
  g.header.ring_n = g.ring_n;
  if (open_file(err, errlen) != 0) return start_failed();
  if (pthread_key_create(&g.key, thread_exit) != 0) {
    snprintf(err, errlen, "pthread_key_create failed");
    return start_failed();
  }
  if (install_handlers(err, errlen) != 0) {
    pthread_key_delete(g.key);
    return start_failed();
  }
  pthread_atfork(NULL, NULL, atfork_child);
  atexit(trace_atexit);
  __atomic_store_n(&g.mode, mode, __ATOMIC_RELEASE);
  /* The calling thread registers at its next word; other threads running
     meanwhile when they reach the end of their scratch chunk.  */
  __ballarus_trace_pos = NULL;
  return 0;
}
