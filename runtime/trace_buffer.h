/* trace_buffer.h — the per-thread witness buffer of the trace runtime.

   Instrumented code calls ballarus_trace_witness(id) on every witnessed
   edge.  The hot path is one thread-local load, one store, one pointer
   increment and one test: each thread writes into a chunk of
   BALLARUS_TRACE_CHUNK_WORDS words aligned to its own size, and the
   position reaching the chunk's end (the next chunk's head words, below)
   sends the call to the slow path, which
     - registers the thread when tracing is on (until then its position
       points into a scratch chunk that is overwritten: trace_buffer.c),
     - full trace: encodes the chunk and appends it to the trace file as one
       CHUNK record (trace_format.h), one write(2) with O_APPEND, so threads
       need no lock;
     - ring (trace=ring:N): keeps the chunk, overwriting the oldest kept
       one (whole chunks, at least the last N words), and takes the new
       chunk's checkpoint (trace_format.h CHECKPOINT) from the thread's
       stack of traced activations (ballarus_trace_stack below).
   A chunk's head words (trace_events.h BALLARUS_TRACE_CHUNK_HEAD_WORDS)
   are never written by the chunk itself (its words start after them), so
   a position in them only ever means "full" or "not registered"; an
   event that starts in the chunk may end in the next chunk's head (at
   most 3 words: the inline enter tests no more than the witness, and
   each thread's mapping has 16 bytes after its last chunk).
   Events (trace_events.h) go through ballarus_trace_event, which starts
   a new chunk when the event would not fit in the current one.

   What is written when:
     - full: a chunk when it fills; a thread's partial chunk and an END
       record at its exit; every live thread's partial chunk at process
       exit (threads still running then are traced up to what they had
       stored), also from the fatal-signal handler (below).
     - ring: every registered thread's kept chunks, oldest first, each
       after its checkpoint, and its partial chunk, at process exit, before
       an exec, or from the fatal-signal handler: SIGSEGV, SIGBUS, SIGILL,
       SIGFPE, SIGABRT.  Threads that exited keep their chunks until then.
       See trace_buffer.c for the handler's chaining rules.  */

#ifndef BALLARUS_RUNTIME_TRACE_BUFFER_H
#define BALLARUS_RUNTIME_TRACE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_events.h" /* the chunk's bytes and head words */

#ifdef __cplusplus
extern "C" {
#endif

#define BALLARUS_TRACE_CHUNK_WORDS 4096u /* 16 KiB, a power of two */

/* One trace runtime per process.  Every module (the executable, each
   shared library) that links the runtime has a copy of it; its entry
   points and the thread-local state instrumented code reaches (the
   position below, the stack, the hooks of trace_events.h) have default
   visibility, so the dynamic linker binds every module to one definition
   (the executable's when it exports them, else the first loaded
   library's) and the other copies' code and static state are never used:
   one file, one stream per thread with every module's words in program
   order.  Starting a second time is a no-op.  */
#define BALLARUS_TRACE_SHARED __attribute__((visibility("default")))

/* This thread's next free word in its chunk (NULL, or in a scratch chunk
   while tracing is off, until it registers).
   initial-exec: a %fs-relative load even in position-independent code,
   where the default model would call __tls_get_addr at every witness (a
   shared library using it takes static TLS, which dlopen can still
   satisfy for one pointer).  */
extern __thread uint32_t *__ballarus_trace_pos2
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;

BALLARUS_TRACE_SHARED void __ballarus_trace_slow(uint32_t id);

static inline void ballarus_trace_witness(uint32_t id) {
  uint32_t *p = __ballarus_trace_pos2;
  if (__builtin_expect(((uintptr_t)p & BALLARUS_TRACE_FULL_MASK) == 0, 0)) {
    __ballarus_trace_slow(id);
    return;
  }
  *p = id;
  __ballarus_trace_pos2 = p + 1;
}

/* The thread's traced activations, kept by the hooks (trace_hooks.c) and
   read by the checkpoints (trace_format.h) the slow path takes.
   The frame of activation d is frames[d & BALLARUS_TRACE_FRAME_MASK]: the
   words of its kEnter (trace_events.h), so that the hook stores the same
   16 bytes twice: its function (with the event tag), TU stamp, depth d,
   and `site`: the block of the call in activation d - 1 that made it.
   The innermost activation's own last call block is `site` below.  The
   hooks store every frame without a bound test (one mask): frames has
   BALLARUS_TRACE_FRAME_MASK + 1 entries (deeper than a default machine
   stack holds traced activations), and a reader takes frames[k & mask]
   for activation k only if its depth field is k.  frames is NULL until
   the thread's first slow path gives it an array: its own when it
   registers, a scratch one shared with other threads while tracing is
   off.  Checkpoints read the frames of depths below `cap`: 0 before the
   thread registers, BALLARUS_TRACE_STACK_FRAMES after (a deeper stack
   is unknown).  A frame whose tag_fn is BALLARUS_TRACE_FRAME_UNKNOWN was
   live before the thread registered, or was skipped by a landing.  */
#define BALLARUS_TRACE_STACK_FRAMES 16384u
/* BALLARUS_TRACE_FRAME_MASK: trace_events.h (the plugin's too).  */
#define BALLARUS_TRACE_FRAME_UNKNOWN 0xffffffffu

typedef struct ballarus_trace_frame {
  uint32_t tag_fn; /* BALLARUS_TRACE_EVENT_TAG | fn, or ..._FRAME_UNKNOWN */
  uint32_t stamp, depth, site;
} ballarus_trace_frame;

typedef struct ballarus_trace_stack {
  uint32_t depth; /* traced activations live */
  uint32_t site;  /* the innermost activation's last call block */
  uint32_t cap;   /* checkpoints read the frames below it */
  ballarus_trace_frame *frames;
} ballarus_trace_stack;

/* (The position's and the stack's names end with the version of the
   protocol instrumented code follows, 2: frames by mask, chunk heads.
   Objects of an older plugin, whose hooks would write past a chunk
   among objects of this one, do not bind to this runtime.)  */
extern __thread ballarus_trace_stack __ballarus_trace_stack2
    __attribute__((tls_model("initial-exec"))) BALLARUS_TRACE_SHARED;

BALLARUS_TRACE_SHARED void __ballarus_trace_slow_event(const uint32_t *words,
                                                       uint32_t n);

/* Writes an event's n words (n < BALLARUS_TRACE_CHUNK_WORDS) into the
   current chunk if they all fit there; returns 0 (nothing written) when
   they do not: then __ballarus_trace_slow_event starts a new chunk and
   writes them, so that no event spans two chunks.  */
/* Whether n words fit at p: p is past its chunk's head words (not full,
   registered), and the words end at most 3 words past the chunk's end,
   in the next chunk's head.  */
static inline int ballarus_trace_room(const uint32_t *p, uint32_t n) {
  uintptr_t off = (uintptr_t)p & (BALLARUS_TRACE_CHUNK_BYTES - 1u);
  return off >= 4u * BALLARUS_TRACE_CHUNK_HEAD_WORDS &&
         off + 4u * n <=
             BALLARUS_TRACE_CHUNK_BYTES +
                 4u * (BALLARUS_TRACE_CHUNK_HEAD_WORDS - 1u);
}

static inline int ballarus_trace_event_fits(const uint32_t *words,
                                            uint32_t n) {
  uint32_t *p = __ballarus_trace_pos2;
  if (__builtin_expect(!ballarus_trace_room(p, n), 0)) return 0;
  __builtin_memcpy(p, words, n * 4u);
  __ballarus_trace_pos2 = p + n;
  return 1;
}

static inline void ballarus_trace_event(const uint32_t *words, uint32_t n) {
  if (!ballarus_trace_event_fits(words, n))
    __ballarus_trace_slow_event(words, n);
}

/* Starts tracing into `path` ("%p" the process id, "%%" a "%"; missing
   directories created) with `spec` "full" or "ring:N" (N from 1 to
   2^28).  Call before any witness (a witness written before is
   dropped; so are up to a chunk of words of other threads already
   running, until their scratch chunk ends).  Installs the fatal-signal handlers.  Returns 0, 1 when
   tracing had already started (nothing done: the first start holds), or
   -1 with a one-line message in err[errlen].  */
BALLARUS_TRACE_SHARED int ballarus_trace_start(const char *path, const char *spec, char *err,
                         size_t errlen);

/* At exit, the exiting thread's kEnd (trace_hooks.c) is written before
   the trace: what BALLARUS_TRACE's start asks for.  */
BALLARUS_TRACE_SHARED void ballarus_trace_end_at_exit(void);

/* The translation units of a module (rt_register.c), whose metadata
   blobs the trace file carries (trace_format.h METADATA) so that a trace
   reads without a profile: a crashing process writes none.  The runtime
   of the module adds its node at start-up and removes it when the module
   goes (exit, dlclose); the trace writes every TU of every node still
   there when it is written, and a node's TUs at its removal while the
   trace is being written (before a dlclose unmaps the blobs).  */
struct ballarus_tu_desc;
typedef struct ballarus_trace_tus {
  struct ballarus_trace_tus *next;
  const struct ballarus_tu_desc *const *tus;
  uint64_t n;
} ballarus_trace_tus;

BALLARUS_TRACE_SHARED void ballarus_trace_add_tus(ballarus_trace_tus *m);
BALLARUS_TRACE_SHARED void ballarus_trace_remove_tus(ballarus_trace_tus *m);

/* Whether this process is tracing and is the one its file is written for:
   not a vfork child, which shares the parent's memory (its trace state
   included) until it execs or exits.  */
BALLARUS_TRACE_SHARED int ballarus_trace_own_process(void);

/* Writes what is pending (as at process exit) and renames the file over
   its path; witnesses after it are dropped.  Also run by atexit.  Does
   nothing in a vfork child.  */
BALLARUS_TRACE_SHARED void ballarus_trace_finish(void);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_RUNTIME_TRACE_BUFFER_H */
