/* trace_internal.h — the trace runtime's state shared by its files:
     trace_buffer.c  threads, chunks, the ring, the slow paths;
     trace_write.c   the records of the trace file (trace_format.h) and the
                     modules' metadata;
     trace_file.c    the file, start, fork, exit and finish;
     trace_fault.c   the fatal-signal handler and the FAULT record;
     trace_regs.c    the slow paths as x86-64 instrumented code calls
                     them, every register kept (keep_regs.h).
   Everything here is hidden: each module's copy of the runtime has its own
   (trace_buffer.h BALLARUS_TRACE_SHARED says which copy the process uses).  */

#ifndef BALLARUS_RUNTIME_TRACE_INTERNAL_H
#define BALLARUS_RUNTIME_TRACE_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/trace_buffer.h"
#include "runtime/trace_events.h"
#include "runtime/trace_format.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define CHUNK_BYTES (BALLARUS_TRACE_CHUNK_WORDS * 4u)
#define HEAD BALLARUS_TRACE_CHUNK_HEAD_WORDS
/* The most words a chunk holds: up to its end, and 3 of an event in the
   next chunk's head.  */
#define CHUNK_USED (BALLARUS_TRACE_CHUNK_WORDS - 1u)
/* After the last chunk of a mapping: room for those 3 words.  */
#define CHUNK_PAD 16u
#define OUT_BYTES                                                         \
  (sizeof(ballarus_trace_record_header) +                                 \
   BALLARUS_TRACE_VARINT_MAX * BALLARUS_TRACE_CHUNK_WORDS + 4u)
#define RING_MAX (1u << 28)
/* A chunk is drained early only when an event does not fit (trace_buffer.h
   ballarus_trace_event), so it holds at least this many words.  */
#define CHUNK_MIN (CHUNK_USED - (BALLARUS_TRACE_LAND_WORDS - 1u))
/* Words of a checkpoint of the deepest stack kept.  */
#define REGION_WORDS (1u + 3u * BALLARUS_TRACE_STACK_FRAMES)
#define N_FATAL 5

/* Ring mode: a chunk kept, and the checkpoint taken when it started.  */
typedef struct ring_slot {
  uint32_t region; /* its checkpoint's region */
  uint32_t cp_len; /* its words; 0: unknown (one word D = unknown) */
  uint32_t count;  /* the chunk's words */
  uint64_t total;  /* words the thread wrote before the chunk */
  uint32_t *chunk; /* the chunk (its words from chunk + HEAD) */
} ring_slot;

typedef struct trace_thread {
  struct trace_thread *next;
  uint32_t *chunk;       /* being written: CHUNK_BYTES, aligned to
                            CHUNK_BYTES (ring mode: one of chunks) */
  uint32_t *chunk0;      /* the first chunk, at the mapping's start */
  uint32_t **posp;       /* the thread's __ballarus_trace_pos2, NULL once
                            it exited */
  /* The thread's stack (its TLS __ballarus_trace_stack2), NULL once it
     exited: read by finish for the thread's POSITION record.  */
  const ballarus_trace_stack *stackp;
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
     copied.  The checkpoints' words: region r at arena + r * REGION_WORDS,
     one per kept chunk and one for cur, the next checkpoint's in
     next_region (its untouched pages cost no memory).  */
  ring_slot *slots;
  uint32_t n_slots, slot_head, slot_len;
  ring_slot cur;
  uint32_t *arena;
  uint32_t next_region;
} trace_thread;

/* What the fatal-signal handler saw (trace_format.h FAULT), for finish.  */
typedef struct trace_fault {
  const trace_thread *thread; /* the thread that got the signal, or NULL */
  uint32_t signo, code;
  uint64_t addr, pc, offset; /* offset: of pc in the module's file */
  uint32_t path_len;         /* 0: the module is not known */
  char path[PATH_MAX];
} trace_fault;

typedef struct trace_state {
  int mode;              /* 0 when not tracing */
  uint32_t ring_n;
  int dirfd, fd;          /* -1 when closed (from start on) */
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
  struct sigaction old[N_FATAL];
  int installed;         /* how many of old[] were saved */
  trace_fault fault;     /* set by the handler before it finishes */
  int faulted;
} trace_state;

extern trace_state ballarus_trace_g HIDDEN;
extern const int ballarus_trace_fatal_signals[N_FATAL] HIDDEN;

/* trace_buffer.c */
HIDDEN void *ballarus_trace_map_aligned(size_t size, size_t align);
HIDDEN uint32_t ballarus_trace_pending(const trace_thread *t);
HIDDEN void ballarus_trace_thread_exit(void *arg);
/* The CHECKPOINT words of stack s (trace_format.h) into a[REGION_WORDS],
   each read once; their count (1: a[0] says unknown).  */
HIDDEN uint32_t ballarus_trace_stack_words(const ballarus_trace_stack *s,
                                           uint32_t *a);
extern __thread trace_thread *ballarus_trace_self HIDDEN;
/* trace_hooks.c: the calling thread's kEnd, where the runtime has the
   hooks.  */
extern void ballarus_trace_thread_end(void)
    __attribute__((weak)) BALLARUS_TRACE_SHARED;

/* trace_write.c: records (async-signal-safe: write(2) only).  */
HIDDEN void ballarus_trace_write(const void *data, size_t size);
HIDDEN void ballarus_trace_write_chunk(trace_thread *t, const uint32_t *words,
                                       uint32_t n);
HIDDEN void ballarus_trace_write_end(trace_thread *t);
HIDDEN void ballarus_trace_write_live_checkpoint(trace_thread *t);
HIDDEN void ballarus_trace_write_ring(trace_thread *t, uint32_t pending);
HIDDEN void ballarus_trace_write_position(trace_thread *t, uint64_t total);
HIDDEN void ballarus_trace_write_fault(trace_thread *t, const trace_fault *f,
                                       uint64_t total);
HIDDEN void ballarus_trace_write_modules(void);
HIDDEN void ballarus_trace_tus_reset(void);

/* trace_fault.c */
HIDDEN int ballarus_trace_install_handlers(char *err, size_t errlen);

/* trace_signals.c: the C library's sigaction (this module's own calls of
   sigaction and signal keep the program's actions for the fatal signals
   behind the recorder's), and putting the kept actions in place.  */
HIDDEN int ballarus_trace_real_sigaction(int sig, const struct sigaction *act,
                                         struct sigaction *old);
HIDDEN void ballarus_trace_restore_handlers(void);

#endif /* BALLARUS_RUNTIME_TRACE_INTERNAL_H */
