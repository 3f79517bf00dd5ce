/* trace_format.h — the trace file written by the trace runtime
   (trace_buffer.c) and read back by trace_read.c.

   A trace is a sequence of 32-bit witnesses per thread (Ball & Larus,
   "Optimally profiling and tracing programs", section 4: the identifiers
   written on the chords of a spanning tree, from which the executed block
   sequence is regenerated offline).  The runtime does not interpret them.

   File layout (all integers little-endian):

     ballarus_trace_file_header              (once, 48 bytes)
     record*                                 (any number, any order of
                                              threads: records of different
                                              threads interleave)

   A record:

     ballarus_trace_record_header            (40 bytes)
     payload[bytes]                          (`count` witnesses, encoded)
     uint32 checksum                         (FNV-1a 32 over the payload)

   Payload encoding: each witness w_i as the unsigned LEB128 varint of
   zigzag(w_i - w_{i-1}) (32-bit wrap-around difference), w_{-1} = 0 at
   the start of every record, so each record decodes on its own.  A loop
   that writes the same few witnesses costs 1 byte per witness.

   Record kinds:
     CHUNK  (full trace) the next `count` witnesses of the thread's stream;
            `seq` numbers a thread's records 0, 1, 2, ... so that a reader
            can check none is missing.
     END    (full trace) the thread exited (count 0).  A thread that has
            no END record was still running when the process ended or
            crashed.
     RING   (trace=ring:N) the thread's last `count` witnesses (count <=
            N), oldest first; `total` is how many the thread wrote in all,
            so total - count were overwritten.  One RING record per thread,
            written at exit or by the fatal-signal handler.

   Threads: `thread` is the runtime's serial number of the thread in this
   process (1 for the first thread that wrote a witness), `tid` the
   kernel's thread id (gettid), for matching with other tools.

   Processes: one file per process.  The program's own file is the path it
   was started with; a child of fork() writes PATH.<pid> with `generation`
   one more than its parent's and `parent_pid` set.  A file is written as
   PATH.tmp.<pid>.<serial> and renamed over PATH at exit or on a fatal
   signal, so a reader never sees a file still being written.  */

#ifndef BALLARUS_TRACE_FORMAT_H
#define BALLARUS_TRACE_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BALLARUS_TRACE_MAGIC "BALTRACE" /* 8 bytes, no NUL */
#define BALLARUS_TRACE_VERSION 1u
#define BALLARUS_TRACE_RECORD_MAGIC 0x52435254u /* "TRCR" */

#define BALLARUS_TRACE_MODE_FULL 1u
#define BALLARUS_TRACE_MODE_RING 2u

#define BALLARUS_TRACE_CHUNK 1u
#define BALLARUS_TRACE_END 2u
#define BALLARUS_TRACE_RING 3u

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
  uint32_t kind;     /* BALLARUS_TRACE_CHUNK, _END or _RING */
  uint32_t thread;   /* serial number of the thread, from 1 */
  uint32_t tid;      /* kernel thread id */
  uint32_t seq;      /* record number in the thread's stream */
  uint32_t count;    /* witnesses in the payload */
  uint32_t bytes;    /* payload bytes (the checksum follows them) */
  uint32_t reserved; /* 0 */
  uint64_t total;    /* witnesses the thread wrote up to this record's end */
} ballarus_trace_record_header;

/* The largest encoding of one witness (a 32-bit varint).  */
#define BALLARUS_TRACE_VARINT_MAX 5u

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_TRACE_FORMAT_H */
