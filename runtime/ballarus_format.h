/* ballarus_format.h — the on-disk and in-memory layouts shared by the plugin,
   the runtime and ballarus-reconstruct.

   Two objects cross component boundaries:

   1. The *metadata blob* of a translation unit (TU).  The plugin serialises
      the TU's control-flow graphs into a byte array that is compiled into the
      object file (read-only data).  It starts with the fixed header
      `ballarus_meta_header` below; the body after the header is an encoded
      description of the functions (see core/metadata.h, which owns the body
      encoding).  The runtime treats the body as opaque bytes: it only reads
      the header to learn the blob's size, its stamp and how many counters the
      TU owns.

   2. The *profile file* written by the runtime and read/merged by
      ballarus-reconstruct.  It is self-contained: it carries every TU's
      metadata blob next to its counters, so `ballarus-reconstruct show
      PROFILE` needs no object or side file.

   How a TU reaches the runtime: the plugin emits, per TU, one descriptor
   (`ballarus_tu_desc`, five 8-byte fields) into the ELF section named
   BALLARUS_TU_SECTION.  The linker gathers the descriptors of all TUs of a
   module (executable or shared library) into one array bounded by the
   symbols __start_ballarus_tus / __stop_ballarus_tus; the runtime copy
   linked into that module walks it from a constructor.  The third pointer
   references __ballarus_runtime_anchor, which is defined by the runtime, so
   that linking an instrumented object always pulls the runtime in.

   All integers are little-endian (the only byte order ballarus supports).
   Everything here is plain C so the dependency-free runtime can include it;
   C++ includes it too.  */

#ifndef BALLARUS_FORMAT_H
#define BALLARUS_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* TU descriptors (emitted by the plugin, read by the runtime).            */

#define BALLARUS_TU_SECTION "ballarus_tus"

/* One hashed path table (Ball-Larus path profiling): one per function
   whose paths are too many for a dense slice of the TU's counter array.
   The plugin emits, per TU, a zero-initialised static array of these with
   only `function` set; the instrumented code passes &array[i] to
   __ballarus_path_add at every path end of function i's hashed table.  */
typedef struct ballarus_path_hash {
  uint64_t function; /* index of the function in the TU's metadata (order of
                        functions in the blob); copied into the profile's
                        sparse entries, never checked by the runtime */
  void *table;       /* runtime-owned, NULL until the first count; never
                        touched by the plugin's code */
} ballarus_path_hash;

typedef struct ballarus_tu_desc {
  const unsigned char *metadata;   /* the TU's metadata blob */
  uint64_t *counters;              /* meta->n_counters 64-bit counters */
  const void *anchor;              /* &__ballarus_runtime_anchor */
  ballarus_path_hash *path_hashes; /* NULL when the TU has none */
  uint64_t n_path_hashes;
} ballarus_tu_desc;

/* Adds `delta` modulo 2^64 to the count of path `key` in hashed table `h`.
   Any uint64 key is exact (path numbers are in [0, 2^63)).  `delta` is 1,
   or UINT64_MAX (-1) to undo an earlier +1: path mode counts a path cut
   short by a call before the call and undoes it when the call returns, so
   that exit()/longjmp/exceptions inside the call leave the truncated path
   counted.  Lock-free and exact under any number of threads; never calls
   malloc (tables are mmap'ed), so it is also usable from signal handlers.
   Defined with hidden visibility in libballarus_rt.a: every module calls
   its own copy.  The dump writes each table's non-zero counts as the TU
   record's sparse entries {function, key, count}.  */
void __ballarus_path_add(ballarus_path_hash *h, uint64_t key, uint64_t delta);

/* ---------------------------------------------------------------------- */
/* Metadata blob header (first BALLARUS_META_HEADER_SIZE bytes of a blob). */

#define BALLARUS_META_MAGIC "BLRSMETA" /* 8 bytes, no NUL stored */
#define BALLARUS_META_VERSION 1u
#define BALLARUS_META_HEADER_SIZE 56u

typedef struct ballarus_meta_header {
  char magic[8];        /* BALLARUS_META_MAGIC */
  uint32_t version;     /* BALLARUS_META_VERSION */
  uint32_t header_size; /* BALLARUS_META_HEADER_SIZE */
  uint64_t stamp;       /* ballarus_hash64 of bytes [header_size, size) */
  uint64_t size;        /* whole blob, header included */
  uint64_t n_counters;  /* 64-bit counters the TU's counter array holds */
  uint64_t identity;    /* ballarus_hash64 of "<cwd>\0<source>": which TU this
                           is, whatever its build.  Two blobs with the same
                           identity and different stamps come from two
                           builds of one TU and must never be mixed. */
  uint32_t flags;       /* BALLARUS_META_F_* */
  uint32_t reserved;    /* 0 */
} ballarus_meta_header;

/* Header flags: which instrumentation the TU carries, and its update mode. */
#define BALLARUS_META_F_NAIVE 0x1u
#define BALLARUS_META_F_EDGE 0x2u
#define BALLARUS_META_F_PATH 0x4u
#define BALLARUS_META_F_ATOMIC 0x100u

/* ---------------------------------------------------------------------- */
/* Profile file.

   file    := file_header record*
   file_header (32 bytes):
     char     magic[8]      BALLARUS_PROFILE_MAGIC
     uint32   version       BALLARUS_PROFILE_VERSION
     uint32   n_records
     uint64   runs          how many program runs (dumps) were merged in
     uint64   header_check  ballarus_hash64 of the 24 bytes before it
   record  := record_header metadata[pad8] counters sparse
   record_header (56 bytes):
     uint32   tag           BALLARUS_RECORD_TU
     uint32   flags         0
     uint64   stamp         = the metadata header's stamp
     uint64   meta_size     bytes of metadata (a whole blob, header included)
     uint64   n_counters    = the metadata header's n_counters
     uint64   n_sparse      sparse entries that follow the counters
     uint64   runs          how many dumps of this TU were merged in
     uint64   check         ballarus_hash64 over the record header's first
                            48 bytes (tag .. runs), then the record's payload
                            (metadata bytes incl. padding, then counters, then
                            sparse entries, as stored)
   metadata: meta_size bytes, then zero padding to a multiple of 8
   counters: n_counters x uint64
   sparse:   n_sparse x { uint64 function; uint64 key; uint64 count }
             (per-function hash-table entries, e.g. path counters of functions
             whose path table is too large for a dense array; sorted by
             (function, key), keys unique; written by the runtime only with a
             non-zero count)

   Counts (counters and sparse counts) are added modulo 2^64; runs saturate
   at UINT64_MAX.  Why modular: path mode counts a path cut short by a call
   before the call and undoes it (-1, i.e. + 2^64-1) when the call returns.
   A dump taken between the two writes the +1 and subtracts it from the live
   counter, which the undo then leaves at 2^64-1; the next dump must add
   that "-1" to the file to restore the true count.  A count file is thus a
   sum of residues, exact as long as the true total stays below 2^64, which
   no real run approaches (584 years at one increment per nanosecond).  A
   stored value >= 2^63 is therefore a (transiently) negative count, e.g. a
   profile written by a process that undid a path the previous dump wrote
   into another file.  Saturation would break exactly this case and buys
   nothing.  */

#define BALLARUS_PROFILE_MAGIC "BLRSPROF" /* 8 bytes, no NUL stored */
#define BALLARUS_PROFILE_VERSION 1u
#define BALLARUS_PROFILE_HEADER_SIZE 32u
#define BALLARUS_RECORD_HEADER_SIZE 56u
#define BALLARUS_RECORD_TU 0x55544c42u /* "BLTU" little-endian */

typedef struct ballarus_profile_header {
  char magic[8];
  uint32_t version;
  uint32_t n_records;
  uint64_t runs;
  uint64_t header_check;
} ballarus_profile_header;

typedef struct ballarus_record_header {
  uint32_t tag;
  uint32_t flags;
  uint64_t stamp;
  uint64_t meta_size;
  uint64_t n_counters;
  uint64_t n_sparse;
  uint64_t runs;
  uint64_t check;
} ballarus_record_header;

typedef struct ballarus_sparse_entry {
  uint64_t function;
  uint64_t key;
  uint64_t count;
} ballarus_sparse_entry;

/* ---------------------------------------------------------------------- */
/* The one hash used for stamps and checks: 64-bit FNV-1a.  Incremental:
   start from BALLARUS_HASH_INIT and feed chunks in order.  */

#define BALLARUS_HASH_INIT 0xcbf29ce484222325ull

static inline uint64_t ballarus_hash64_update(uint64_t h, const void *data,
                                              uint64_t len) {
  const unsigned char *p = (const unsigned char *)data;
  for (uint64_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static inline uint64_t ballarus_hash64(const void *data, uint64_t len) {
  return ballarus_hash64_update(BALLARUS_HASH_INIT, data, len);
}

/* How profile counts are added (counters and sparse counts): modulo 2^64,
   see the profile file comment above.  */
static inline uint64_t ballarus_count_add(uint64_t a, uint64_t b) {
  return a + b;
}

/* Saturating add, for run counts and derived totals that never decrease.  */
static inline uint64_t ballarus_sat_add(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s < a ? UINT64_MAX : s;
}

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_FORMAT_H */
