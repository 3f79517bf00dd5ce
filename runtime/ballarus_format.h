/* ballarus_format.h — the on-disk and in-memory layouts shared by the plugin,
   the runtime and ballarus-reconstruct.

   Two objects cross component boundaries:

   1. The *metadata blob* of a translation unit (TU).  The plugin serialises
      the TU's control-flow graphs into a byte array that is compiled into the
      object file (read-only data).  It starts with the fixed header
      `ballarus_meta_header` below; the body after the header is an encoded
      description of the functions (see core/metadata.h, which owns the body
      encoding), starting with a *names block* of plain C strings (profile
      path, object, source, compilation directory).  The runtime treats the
      rest of the body as opaque bytes: it reads the header to learn the
      blob's size, its stamp, its identity and how many counters the TU owns,
      and the names block to learn where the TU's profile lives and what to
      call it in messages.

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
#include <string.h>

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

/* update=thread (per-thread counters).  The plugin puts the counter array
   of every thread-mode TU into the section BALLARUS_THREAD_SECTION (zero-
   filled, no file space), so a module's thread-mode counters form one range
   __start_ballarus_thread_ctrs .. __stop_ballarus_thread_ctrs, and the
   runtime gives each thread that runs their code a private copy of that
   range (runtime/thread_counters.c).  Each TU has a thread-local pointer to
   its counters (static __thread uint64_t (*__ballarus_tc)[N]), initially
   &__ballarus_counters, which instrumented code loads once per function
   activation and adds to; and it lists the pointer in the module's table,
   section BALLARUS_TC_TABLE_SECTION, one ballarus_tc_entry per TU.  Where a
   thread can enter the TU from uninstrumented code, the function first
   checks whether the pointer still points at the shared array, and if so
   calls __ballarus_tc_register(&__ballarus_counters, &__ballarus_tc),
   which maps the thread's copy, points every TU pointer of the module (of
   this thread) into it, and returns this TU's; or returns the shared array
   itself if it cannot (the thread then counts into the shared counters,
   unsynchronised).  Defined with hidden visibility in libballarus_rt.a, so
   every module has its own.  In x86-64 code for executables the check is
   whether the runtime's thread-local __ballarus_tc_mine (the thread's
   copy) is still NULL, read local-exec: one compare with memory, no
   address to form; and the call is an asm call of
   __ballarus_tc_register_rs (keep_regs.h).  */
#define BALLARUS_THREAD_SECTION "ballarus_thread_ctrs"
#define BALLARUS_TC_TABLE_SECTION "ballarus_tc_table"

typedef struct ballarus_tc_entry {
  uint64_t *counters; /* the TU's (shared) counter array */
  uint64_t tc_dtpoff; /* offset of its __ballarus_tc in the module's TLS
                         block (R_X86_64_DTPOFF64) */
} ballarus_tc_entry;

/* update=tls, in code for executables: the TU counts into
   a thread-local array of its own (static __thread uint64_t
   __ballarus_tls_ctrs[N], in static TLS, addressed %fs:OFFSET with no
   pointer load) and lists it in section BALLARUS_TLS_TABLE_SECTION.  Its
   ballarus_tc_entry stays: registration still points its __ballarus_tc
   into the thread's copy, which the registration check reads, but the
   TU's part of that copy is never written; the runtime folds the TLS
   array instead.  */
#define BALLARUS_TLS_TABLE_SECTION "ballarus_tls_table"

/* update=thread through %gs (tune-thread-gs, on by default), in x86-64
   code for executables: the TU counts with
   `addq $1, %gs:counter(%rip)` into the shared array's range, and each
   registered thread's %gs base is its copy's address minus the range's
   start (runtime/thread_counters.c).  Each such TU adds the address of its
   counters (one 64-bit word) to section BALLARUS_GS_SECTION, which tells
   the module's runtime to set %gs.  */
#define BALLARUS_GS_SECTION "ballarus_gs_tus"

typedef struct ballarus_tls_entry {
  uint64_t *counters;  /* the TU's (shared) counter array */
  uint64_t tls_dtpoff; /* offset of its __ballarus_tls_ctrs in the module's
                          TLS block (R_X86_64_DTPOFF64) */
  uint64_t words;      /* N */
} ballarus_tls_entry;

void *__ballarus_tc_register(void *counters, void *tc);

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
#define BALLARUS_META_VERSION 4u     /* written */
#define BALLARUS_META_VERSION_MIN 2u /* oldest still read */
#define BALLARUS_META_HEADER_SIZE 56u

/* Version 4 (written): as version 3, but some fields of the inflated body
   are differences to fields before them (a line to the previous line, an
   edge's target to its source, a counter index to the one after the
   previous counter: core/metadata.cc, "Deltas"), which deflate then
   compresses half as large again; the header and names block are
   unchanged.
   Version 3 (still read): as version 2, but the body after the names block is
   zlib-compressed (a varint of its inflated size, then the zlib stream;
   core/metadata.cc has the grammar).  The blob is what every profile
   carries and every dump rewrites, so its size is the dump's cost; deflate
   makes it 4.6x smaller (docs/DESIGN.md, "Metadata compression").  Nothing
   in this header changes: the runtime only reads the header and the names
   block, and the stamp still covers every byte after the header, now the
   compressed ones.
   Version 2 (still read everywhere, e.g. profiles and objects of older
   builds): the body starts with the *names block* and the identity is the
   TU's profile path.  Version 1 blobs (identity = hash of cwd and source,
   no names block) are refused wherever a blob is read.  */
typedef struct ballarus_meta_header {
  char magic[8];        /* BALLARUS_META_MAGIC */
  uint32_t version;     /* BALLARUS_META_VERSION */
  uint32_t header_size; /* BALLARUS_META_HEADER_SIZE */
  uint64_t stamp;       /* ballarus_hash64 of bytes [header_size, size): the
                           names block and the rest of the body */
  uint64_t size;        /* whole blob, header included */
  uint64_t n_counters;  /* 64-bit counters the TU's counter array holds */
  uint64_t identity;    /* ballarus_tu_identity() of the names block: which
                           TU this is (the object it was compiled into, i.e.
                           its profile path), whatever its build.  Two blobs
                           with the same identity and different stamps come
                           from two builds of one object: the newer one's
                           counts replace the older one's in a profile. */
  uint32_t flags;       /* BALLARUS_META_F_* */
  uint32_t names_size;  /* bytes of the names block (below) */
} ballarus_meta_header;

/* The names block: the first names_size bytes after the header, four
   NUL-terminated strings, in this order, with no other NUL byte:
     profile  absolute, lexically normalised path of the TU's profile file,
              fixed at compile time: where gcov would put the object's .gcda,
              with the suffix .bprof (plugin/profile_location.cc); "" for a
              TU that has no home (hand-made test TUs), which then goes to
              ballarus.profile in the working directory at start-up
     object   the object file, absolute and normalised, as the compiler
              driver was told (-c [-o]); "" when the object was a temporary
              of a compile-and-link command
     source   the main input file as given to the compiler
     cwd      the compilation directory
   They are plain C strings so that the runtime can find where to write and
   name files in its messages without decoding the body (whose encoding
   core/metadata.h owns); the stamp covers them.  */
typedef struct ballarus_meta_names {
  const char *profile, *object, *source, *cwd;
} ballarus_meta_names;

/* Header flags: which instrumentation the TU carries, and its update mode. */
#define BALLARUS_META_F_NAIVE 0x1u
#define BALLARUS_META_F_EDGE 0x2u
#define BALLARUS_META_F_PATH 0x4u
#define BALLARUS_META_F_ATOMIC 0x100u /* exact under threads: update=atomic
                                        or update=thread (same counters,
                                        same meaning) */

/* ---------------------------------------------------------------------- */
/* Profile file.

   file    := file_header record*
   file_header (40 bytes):
     char     magic[8]      BALLARUS_PROFILE_MAGIC
     uint32   version       BALLARUS_PROFILE_VERSION
     uint32   n_records
     uint64   runs          the largest of its records' runs (a file of
                            one object: that object's runs).  Files of
                            older builds hold the number of dumps merged
                            in, never less than any record's runs; the
                            parser accepts both, and the next dump or
                            merge recomputes it
     uint64   file_check    ballarus_hash64 of every record's (check,
                            stamp), 16 bytes per record in file order: the
                            whole-file checksum, as a hash tree.  Each
                            record's check covers its headers, counters and
                            sparse entries, its stamp its metadata's names
                            and body, the parser checks the padding is zero
                            and nothing trails; so a damaged byte anywhere
                            fails one of these checks in the one reader,
                            profile_io.c, that the runtime and
                            ballarus-reconstruct share.  (A tree, not one
                            hash of all bytes, so that a metadata blob
                            byte-identical to one already verified need not
                            be hashed again: the runtime rewrites its own
                            TUs' profiles at every dump.)
     uint64   header_check  ballarus_hash64 of the 32 bytes before it
   record  := record_header metadata[pad8] counters sparse
   record_header (56 bytes):
     uint32   tag           BALLARUS_RECORD_TU
     uint32   flags         0
     uint64   stamp         = the metadata header's stamp
     uint64   meta_size     bytes of metadata (a whole blob, header included)
     uint64   n_counters    = the metadata header's n_counters
     uint64   n_sparse      sparse entries that follow the counters
     uint64   runs          gcov's runs: how many processes that linked
                            this build of the TU added to it, whether its
                            code ran or not (each adds 1 at its first dump,
                            none at later ones); restarts with the build
                            that replaces an earlier one.  Records of
                            older builds may hold 0 (a TU that had not
                            run, written so that its file lists it) or
                            count only the dumps that executed its code
     uint64   check         ballarus_hash64 over the record header's first
                            48 bytes (tag .. runs), the metadata header (56
                            bytes), the counters and the sparse entries, as
                            stored (the rest of the metadata is covered by
                            its stamp).  The counters (version 4 on) by
                            chunk: per BALLARUS_CHUNK_COUNTERS counters (the
                            last chunk shorter), one word folded in, the
                            chunk's hash: four lanes, counter i of the chunk
                            folded into lane i % 4 (lane j starts at
                            BALLARUS_HASH_INIT ^ j), the four lanes then
                            folded in order from BALLARUS_HASH_INIT.  A
                            chunk of zeros has one hash, so a reader or
                            writer that knows a chunk is zero (a hole, an
                            untouched page) pays one step for it, and the
                            lanes are independent chains.  Versions 2 and
                            3: the counters word by word
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

/* Named runs (versions 3 and 5).  A process run with BALLARUS_TEST=NAME
   adds its counts to the records above (the sum) and also under NAME: a
   file that holds named runs is written as version 5, which is version 4
   followed by a named section (3: version 2 followed by one); a file
   without them is written as version 4.
   named_section := section_header named_record*
   section_header (16 bytes):
     uint32   tag           BALLARUS_SECTION_NAMED
     uint32   flags         0
     uint64   n_named
   named_record (56-byte header, then its data):
     uint32   tag           BALLARUS_RECORD_NAMED
     uint32   name_size     1 .. BALLARUS_TEST_NAME_MAX bytes, each printable
                            ASCII (0x20 .. 0x7e); no NUL stored
     uint64   stamp         the TU record of this file the counts belong to
     uint64   runs          processes under this name that added to that
                            record (not above the record's runs)
     uint64   n_dense       counter pairs: counters of the TU's array
                            (indices < n_counters, strictly increasing)
     uint64   dense_size    bytes of the encoded pairs (at least 2 a pair)
     uint64   n_sparse      sparse entries, as the TU record's (sorted by
                            (function, key), keys unique)
     uint64   check         ballarus_hash64 of the first 48 bytes, then of
                            the data below with its padding
     name: name_size bytes, zero padding to a multiple of 8
     pairs: dense_size bytes, zero padding to a multiple of 8; per pair two
            unsigned LEB128 varints in their shortest form (at most 10
            bytes, below 2^64): the index's distance from the previous
            pair's index + 1 (the first pair: its index), then the count
     sparse: n_sparse ballarus_sparse_entry
   Only counters the named processes changed are stored (counts are residues
   modulo 2^64 as above; zero counts are dropped).  Records are sorted by
   name (bytes, a prefix first), then stamp, each (name, stamp) once.  The
   file check folds in, after the TU records, the section header's 16 bytes
   and then each named record's (check, stamp) like a TU record's.  */
#define BALLARUS_PROFILE_MAGIC "BLRSPROF" /* 8 bytes, no NUL stored */
/* Written: 4, and 5 (4 + a named section).  Still read: 2 and 3, whose
   record checks hash the counters word by word (a merge rewrites them as
   4 or 5).  1: no file_check, 32-byte header.  */
#define BALLARUS_PROFILE_VERSION 4u
#define BALLARUS_PROFILE_VERSION_NAMED 5u
#define BALLARUS_PROFILE_VERSION_MIN 2u
#define BALLARUS_PROFILE_VERSION_V2_NAMED 3u
#define BALLARUS_SECTION_NAMED 0x534e4c42u /* "BLNS" little-endian */
#define BALLARUS_RECORD_NAMED 0x524e4c42u  /* "BLNR" little-endian */
#define BALLARUS_NAMED_SECTION_SIZE 16u
#define BALLARUS_NAMED_HEADER_SIZE 56u
#define BALLARUS_TEST_NAME_MAX 255u
#define BALLARUS_PROFILE_HEADER_SIZE 40u
#define BALLARUS_RECORD_HEADER_SIZE 56u
#define BALLARUS_RECORD_TU 0x55544c42u /* "BLTU" little-endian */

typedef struct ballarus_profile_header {
  char magic[8];
  uint32_t version;
  uint32_t n_records;
  uint64_t runs;
  uint64_t file_check;
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

typedef struct ballarus_named_entry {
  uint64_t index;
  uint64_t count;
} ballarus_named_entry;

typedef struct ballarus_sparse_entry {
  uint64_t function;
  uint64_t key;
  uint64_t count;
} ballarus_sparse_entry;

/* ---------------------------------------------------------------------- */
/* The one hash used for stamps and checks: 64-bit words (little-endian)
   folded in by h = (h ^ w) * M; h ^= h >> 32, then the bytes of a tail
   shorter than a word the same way, one at a time.  Every step is a
   bijection of h for a given input and of the input for a given h, so a
   change confined to one word (any single damaged byte) always changes the
   result; M is the odd golden-ratio constant, so every input bit reaches
   every output bit within two steps.  About five times faster than byte-
   wise FNV-1a, which mattered: the runtime checks and writes the profiles
   of every TU a process ran, at every exit.  Incremental: start from
   BALLARUS_HASH_INIT and feed chunks in order; chunks whose lengths are
   multiples of 8 give the hash of their concatenation.  */

#define BALLARUS_HASH_INIT 0xcbf29ce484222325ull
#define BALLARUS_HASH_MUL 0x9e3779b97f4a7c15ull

/* One step of the hash: word (or tail byte) w folded into h.  */
static inline uint64_t ballarus_hash_step(uint64_t h, uint64_t w) {
  h = (h ^ w) * BALLARUS_HASH_MUL;
  return h ^ (h >> 32);
}

static inline uint64_t ballarus_hash64_update(uint64_t h, const void *data,
                                              uint64_t len) {
  const unsigned char *p = (const unsigned char *)data;
  for (; len >= 8; p += 8, len -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = ballarus_hash_step(h, w);
  }
  for (; len > 0; p++, len--) h = ballarus_hash_step(h, *p);
  return h;
}

static inline uint64_t ballarus_hash64(const void *data, uint64_t len) {
  return ballarus_hash64_update(BALLARUS_HASH_INIT, data, len);
}

/* The names block of a metadata blob whose header fields (header_size,
   size) were checked: 0 and *out pointing into the blob, or -1 when the
   block is malformed (too large, not four NUL-terminated strings).  */
static inline int ballarus_meta_get_names(const unsigned char *blob,
                                          uint64_t blob_size,
                                          ballarus_meta_names *out) {
  ballarus_meta_header h;
  if (blob_size < BALLARUS_META_HEADER_SIZE) return -1;
  memcpy(&h, blob, sizeof h);
  if (h.header_size != BALLARUS_META_HEADER_SIZE || h.size != blob_size ||
      h.names_size < 4 || h.names_size > blob_size - h.header_size)
    return -1;
  const char *p = (const char *)blob + h.header_size;
  const char *s[4];
  uint32_t k = 0, start = 0;
  for (uint32_t i = 0; i < h.names_size; i++) {
    if (p[i] != '\0') continue;
    if (k == 4) return -1;
    s[k++] = p + start;
    start = i + 1;
  }
  if (k != 4 || start != h.names_size) return -1;
  out->profile = s[0];
  out->object = s[1];
  out->source = s[2];
  out->cwd = s[3];
  return 0;
}

/* The identity of a TU: ballarus_hash64 of its profile path, or, for a TU
   without one, of cwd, a NUL and source, fed as three chunks.  */
static inline uint64_t ballarus_tu_identity(const char *profile,
                                            const char *cwd,
                                            const char *source) {
  if (profile[0] != '\0') return ballarus_hash64(profile, strlen(profile));
  uint64_t h = ballarus_hash64_update(BALLARUS_HASH_INIT, cwd, strlen(cwd));
  h = ballarus_hash64_update(h, "", 1);
  return ballarus_hash64_update(h, source, strlen(source));
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
