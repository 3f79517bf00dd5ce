/* trace_format.h — the trace file written by the trace runtime
   (trace_buffer.c) and read back by trace_read.c.

   A trace is a stream of 32-bit words per thread (Ball & Larus,
   "Optimally profiling and tracing programs", section 4: the identifiers
   written on the chords of a spanning tree, from which the executed block
   sequence is regenerated offline), with the events of trace_events.h
   (kEnter, kLand, kEnd) among them.  Besides storing them, the runtime
   keeps each thread's stack of traced activations for the checkpoints.

   File layout (all integers little-endian):

     ballarus_trace_file_header              (once, 48 bytes)
     record*                                 (any number; records of
                                              different threads interleave,
                                              a thread's are in order)

   A record:

     ballarus_trace_record_header            (40 bytes)
     payload[bytes]                          (`count` words, encoded)
     uint32 checksum                         (FNV-1a 32 over the payload)

   Payload encoding: each word w_i as the unsigned LEB128 varint of
   zigzag(w_i - w_{i-1}) (32-bit wrap-around difference), w_{-1} = 0 at
   the start of every record, so each record decodes on its own.  A loop
   that writes the same few witnesses costs 1 byte per witness.

   `seq` numbers all of a thread's records 0, 1, 2, ... whatever their
   kind, so that a reader can check none is missing.  An event never spans
   two records: the runtime starts a new chunk before an event that would
   not fit in the current one, so a CHUNK or RING record starts with a
   witness or an event's first word.

   Record kinds:
     CHUNK  (full trace) the next `count` words of the thread's stream;
            `total` = words the thread wrote up to the record's end.
     END    (full trace) the thread exited (count 0).  A thread that has
            no END record was still running when the process ended or
            crashed.
     RING   (trace=ring:N) a chunk the thread wrote: `count` words (at most
            BALLARUS_TRACE_CHUNK_WORDS - 1), `total` = words the thread
            wrote up to its end.  The runtime keeps whole chunks, at least
            the last N words of the thread (the chunks are written oldest
            first, each after its CHECKPOINT), at exit or from the
            fatal-signal handler: CHECKPOINT, RING, CHECKPOINT, RING, ...
            A RING's first word follows the previous RING's last one when
            their totals say so (total - count of the later = total of the
            earlier).
     CHECKPOINT  the state of the thread at the first word of its next
            record, taken when that chunk started.  Words: D, then D frames
            (fn_index, tu_stamp, site), outermost first: the D traced
            activations live, frame k (k < D - 1) in its call at block
            `site` (the call that led to frame k + 1), the innermost
            frame's `site` its last call block (what the next kEnter, kLand
            or kEnd would carry as site).  If the next word is a witness,
            the innermost activation is about to take its edge.
            D = BALLARUS_TRACE_CHECKPOINT_UNKNOWN (and no frame) means
            unknown: the stack was deeper than the runtime keeps, or
            started before the thread was traced.  `total` = words the
            thread wrote before the next record's first word; count is D *
            3 + 1 (1 when unknown).  Ring mode writes one before each RING;
            full mode one at the start of the forking thread's stream in a
            fork child's file (the innermost frame in its call to fork).

     METADATA  the metadata blob of a translation unit of the process
            (ballarus_format.h: header, names block, body; the bytes a
            profile record embeds), so that the trace reads without a
            profile.  Not a thread's: `thread` and `tid` are 0, `seq`
            numbers the file's METADATA records 0, 1, 2, ...; the payload is
            the blob's bytes as they are (not varints): count = bytes = its
            size, `total` 0, the checksum as for the other kinds.  One per
            TU registered in the process (every module's) when the trace is
            written (exit, fatal signal, exec), or when its module goes
            before (dlclose).  A TU linked into two modules appears twice.

     POSITION  where a thread still live is when the file is written
            (exit, exec, fatal signal), after its other records: the words
            of a CHECKPOINT (D, then D frames, or D unknown) at the end of
            its stream; `total` = the words the thread wrote.  The innermost
            frame's site is its last call block: the thread is inside that
            call (parked in a blocking call, or crashed in a callee), or
            past it in traced code that wrote no word since.
     FAULT  the fatal signal a thread got, after its POSITION (at most one
            per file: the first thread's to crash).  Words: signal number,
            si_code, si_addr (low, high 32 bits), the interrupted
            instruction's address (pc: low, high), pc's offset in its
            module's file (low, high), L = the module's path length in
            bytes (0: not known), then the path's bytes, 4 per word, little-
            endian, zero-padded: count = 9 + ceil(L / 4).  `total` as
            POSITION's.  A reader maps (path, offset) to a source line with
            the module's debug information.

   Threads: `thread` is the runtime's serial number of the thread in this
   process (1 for the first thread that wrote a witness), `tid` the
   kernel's thread id (gettid), for matching with other tools.

   Processes: one file per process.  The program's own file is the path it
   was started with; a child of fork() writes PATH.<pid> with `generation`
   one more than its parent's and `parent_pid` set.  A file is written as
   PATH.tmp.<pid>.<serial> and renamed over PATH at exit, on a fatal
   signal or before an exec (trace_events.h __ballarus_trace_exec), so a
   reader never sees a file still being written.  */

#ifndef BALLARUS_TRACE_FORMAT_H
#define BALLARUS_TRACE_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BALLARUS_TRACE_MAGIC "BALTRACE" /* 8 bytes, no NUL */
#define BALLARUS_TRACE_VERSION 3u /* 2: no POSITION or FAULT; 1: no
                                     CHECKPOINT, one RING */
#define BALLARUS_TRACE_RECORD_MAGIC 0x52435254u /* "TRCR" */

#define BALLARUS_TRACE_MODE_FULL 1u
#define BALLARUS_TRACE_MODE_RING 2u

#define BALLARUS_TRACE_CHUNK 1u
#define BALLARUS_TRACE_END 2u
#define BALLARUS_TRACE_RING 3u
#define BALLARUS_TRACE_CHECKPOINT 4u
#define BALLARUS_TRACE_METADATA 5u
#define BALLARUS_TRACE_POSITION 6u
#define BALLARUS_TRACE_FAULT 7u
/* A FAULT's words before the path's.  */
#define BALLARUS_TRACE_FAULT_WORDS 9u

/* A CHECKPOINT's D when the stack is unknown.  */
#define BALLARUS_TRACE_CHECKPOINT_UNKNOWN 0xffffffffu

typedef struct ballarus_trace_file_header {
  char magic[8];          /* BALLARUS_TRACE_MAGIC */
  uint32_t version;       /* BALLARUS_TRACE_VERSION */
  uint32_t header_size;   /* sizeof this struct: 48 */
  uint32_t mode;          /* BALLARUS_TRACE_MODE_* */
  uint32_t ring_n;        /* N of trace=ring:N, 0 in full mode */
  uint32_t pid;           /* the writing process */
  uint32_t parent_pid;    /* the process it was forked from, 0 if none */
  uint32_t generation;    /* 0, or the parent's generation + 1 */
  uint32_t reserved[3];   /* 0 */
} ballarus_trace_file_header;

typedef struct ballarus_trace_record_header {
  uint32_t magic;    /* BALLARUS_TRACE_RECORD_MAGIC */
  uint32_t kind;     /* BALLARUS_TRACE_CHUNK, _END, _RING, _CHECKPOINT,
                        _METADATA, _POSITION, _FAULT */
  uint32_t thread;   /* serial number of the thread, from 1 (METADATA:
                        0) */
  uint32_t tid;      /* kernel thread id */
  uint32_t seq;      /* record number in the thread's stream */
  uint32_t count;    /* words in the payload */
  uint32_t bytes;    /* payload bytes (the checksum follows them) */
  uint32_t reserved; /* 0 */
  uint64_t total;    /* words the thread wrote up to this record's end
                        (CHECKPOINT: before the next record's start;
                        POSITION, FAULT: all of them) */
} ballarus_trace_record_header;

/* The largest encoding of one word (a 32-bit varint).  */
#define BALLARUS_TRACE_VARINT_MAX 5u

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_TRACE_FORMAT_H */
