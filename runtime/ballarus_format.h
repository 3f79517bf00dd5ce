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

   How a TU reaches the runtime: the plugin emits, per TU, one descriptor of
   three pointers (`ballarus_tu_desc`) into the ELF section named
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

typedef struct ballarus_tu_desc {
  const unsigned char *metadata; /* the TU's metadata blob */
  uint64_t *counters;            /* meta->n_counters 64-bit counters */
  const void *anchor;            /* &__ballarus_runtime_anchor */
} ballarus_tu_desc;

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
             (function, key), keys unique)

   Counts saturate at UINT64_MAX when added.  */

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

/* Saturating add for merged counts.  */
static inline uint64_t ballarus_sat_add(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s < a ? UINT64_MAX : s;
}

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_FORMAT_H */
