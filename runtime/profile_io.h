/* profile_io.h — reading, merging and atomically writing profile files.

   Plain C, dependency-free; used by the runtime (libballarus_rt.a) at dump
   time and by ballarus-reconstruct (merge, show, ...).  The file layout is
   documented in ballarus_format.h.

   Every function that can fail returns 0 on success and -1 on failure, with
   a one-line message in `err` (errlen bytes) naming the problem and, for
   parse errors, the byte offset, e.g.
     "offset 4104: record 2: counters truncated (file ends after 8 of 96 bytes)".
   The caller prefixes the file name.  */

#ifndef BALLARUS_PROFILE_IO_H
#define BALLARUS_PROFILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ballarus_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ballarus_profile_record {
  uint64_t stamp;
  uint64_t identity; /* copied from the metadata header */
  uint64_t runs;
  unsigned char *metadata; /* meta_size bytes, a whole blob */
  uint64_t meta_size;
  uint64_t *counters;
  uint64_t n_counters;
  ballarus_sparse_entry *sparse; /* sorted by (function, key) */
  uint64_t n_sparse;
  int borrowed; /* metadata is not owned (points into the profile's
                   backing bytes or the program's own blob): never freed */
  int counters_borrowed; /* counters are not owned (the runtime's snapshot
                            of a TU's live counters): never freed nor
                            written; a copy of the record borrows them too,
                            and an update that adds into such a record
                            first gives it its own copy */
  int counters_mapped; /* owned counters that are a mapping of their own
                          (ballarus_profile_counters_alloc) */
  int counters_lent; /* counters are not owned but may be written: they
                        lie in the buffer ballarus_profile_parse_borrowing
                        parsed, which its caller lends (never freed; a
                        copy of the record owns a copy) */
  unsigned char *block_map; /* NULL, or one byte per block of
                               BALLARUS_BLOCK_COUNTERS counters: 0 where
                               every counter of the block is zero and its
                               memory is never read (owned, freed with the
                               record) */
  uint64_t *chunk_hash; /* NULL, or one per chunk of BALLARUS_CHUNK_COUNTERS:
                           the chunk's hash (ballarus_format.h, version 4)
                           as the counters hold now, 0 where not known (owned,
                           freed with the record).  Kept by the runtime's
                           parse (ballarus_profile_parse_borrowing) and by
                           add_counters, which zeroes the chunks it adds
                           into; a copy drops it.  Code that writes a
                           record's counters otherwise must free it and
                           set it NULL.  The writer then hashes only the
                           chunks not known.  */
} ballarus_profile_record;

/* Counters in chunks of 512 (4 KiB), from index 0: the unit of the record
   check (ballarus_format.h).  */
#define BALLARUS_CHUNK_COUNTERS 512u

/* Counters in blocks of 64 (512 bytes), from index 0, eight to a chunk:
   the unit of a block map, which lets the runtime leave counter memory
   that was never touched untouched: a large path-mode array of which a
   short process counted a few pages, the zero pages of the snapshot it
   copies them into, the holes of a file it wrote.  Every memory page read
   costs a page fault, and a block known to be zero is hashed, merged and
   written (within a hole when its whole chunk is zero) without being
   read.  Blocks, not chunks: a counter array starts anywhere in .bss, so
   a chunk straddles two pages where a block seldom does, and a live chunk
   would read the untouched page beside a touched one.  The map is a
   promise about values, never a change of them: code that ignores it
   reads the same zeros.  */
#define BALLARUS_BLOCK_COUNTERS 64u

/* The bytes of a block map of n counters: one per block.  */
static inline uint64_t ballarus_block_count(uint64_t n) {
  return (n + BALLARUS_BLOCK_COUNTERS - 1) / BALLARUS_BLOCK_COUNTERS;
}

/* Whether counter i of a record with block map `map` may hold a count (map
   NULL: every counter may).  */
static inline int ballarus_block_live(const unsigned char *map, uint64_t i) {
  return map == NULL || map[i / BALLARUS_BLOCK_COUNTERS] != 0;
}

/* The counts of one TU record under one test name (ballarus_format.h,
   "Named runs").  */
typedef struct ballarus_named_record {
  char *name; /* name_size bytes, NUL-terminated in memory */
  uint32_t name_size;
  uint64_t stamp; /* a record of the same profile */
  uint64_t runs;
  ballarus_named_entry *dense; /* index strictly increasing */
  uint64_t n_dense;
  ballarus_sparse_entry *sparse; /* sorted by (function, key) */
  uint64_t n_sparse;
  /* Sealed (ballarus_profile_parse_borrowing only): the record's bytes in
     the parsed buffer, header and data, verified; dense and sparse are
     NULL then, and the record is written back as these bytes unless a
     merge adds to it.  */
  const unsigned char *sealed;
  uint64_t sealed_size;
} ballarus_named_record;

typedef struct ballarus_profile {
  uint64_t runs;
  uint32_t n_records;
  ballarus_profile_record *records; /* sorted by stamp */
  uint64_t n_named;
  ballarus_named_record *named; /* sorted by (name, stamp); NULL if none */
  void *backing;      /* the file's bytes, which records with `borrowed`
                         metadata point into (read_fd_known), or NULL;
                         freed with the profile */
  uint64_t backing_size;
} ballarus_profile;

/* Parses `size` bytes.  Checks magic, version, the header check and the
   whole-file check, record checks, tags, sizes, and that each embedded
   metadata header agrees with its record (magic, size, stamp, n_counters)
   and is sound (known flags, names block, identity = hash of the profile
   path).  On success *out owns its memory.  This is the one validation the
   runtime (before it merges into an existing profile) and
   ballarus-reconstruct (which also decodes the metadata bodies) share.  */
int ballarus_profile_parse(const unsigned char *data, uint64_t size,
                           ballarus_profile *out, char *err, size_t errlen);

/* Checks a file's header before the rest is read: `data` holds its first
   min(file_size, BALLARUS_PROFILE_HEADER_SIZE) bytes.  Magic, version,
   the header check, and that n_records records fit in file_size bytes: a
   file that is not a profile is refused after 40 bytes, and what reading
   the rest needs is bounded by file_size.  Part of every parse too.  */
int ballarus_profile_check_header(const unsigned char *data,
                                  uint64_t file_size, char *err,
                                  size_t errlen);

/* Reads up to n bytes of fd into buf (fewer at the end of the file), *got
   bytes read.  -1 on a read error.  */
int ballarus_profile_read_bounded(int fd, unsigned char *buf, uint64_t n,
                                  uint64_t *got, char *err, size_t errlen);

/* What the read functions below return when the file could not be read
   (stat or read error, out of memory): it is not known to be damaged, and
   must not be treated as such.  -1 means the bytes read are not a valid
   profile.  */
#define BALLARUS_PROFILE_UNREAD (-2)

/* Reads and parses a file (following symbolic links: for files the user
   names).  A missing file is an error too; callers that accept absence
   check with access() first.  The runtime writes profiles in place under
   its directory's lock file: a profile of this user is read with that lock
   held shared; without it, a read of a profile beside its owner's lock file
   whose checks fail is tried again for about 0.5 s before it is reported
   (it may have seen a write half done).  */
int ballarus_profile_read_file(const char *path, ballarus_profile *out,
                               char *err, size_t errlen);

/* Reads and parses the regular file open as `fd` (from its current
   offset, normally 0).  The runtime opens its profiles itself (O_NOFOLLOW,
   ownership checked) and reads them through this.  */
int ballarus_profile_read_fd(int fd, ballarus_profile *out, char *err,
                             size_t errlen);

/* The same, given metadata blobs already verified (the runtime's own TUs):
   a record whose metadata is byte-identical to one of them is not hashed
   again for its stamp; every other check is made as always.  The records'
   metadata are borrowed from the profile's copy of the file's bytes
   (`backing`, until ballarus_profile_free).  */
int ballarus_profile_read_fd_known(int fd, const unsigned char *const *known,
                                   size_t n_known, ballarus_profile *out,
                                   char *err, size_t errlen);

/* Bytes [off, off + len) of a file known to be zero without being read:
   a hole (lseek SEEK_HOLE), sorted, not overlapping.  */
typedef struct ballarus_zero_range {
  uint64_t off, len;
} ballarus_zero_range;

/* A metadata blob the caller found, byte for byte, at offset `off` of the
   bytes parsed, as the caller compared them with one of its own verified
   blobs: the parser takes `blob` for them, and never reads them.  */
typedef struct ballarus_known_meta {
  uint64_t off;
  const unsigned char *blob;
  uint64_t size;
} ballarus_known_meta;

/* What ballarus_profile_parse_borrowing may take for granted.  */
typedef struct ballarus_parse_hints {
  const unsigned char *const *known; /* verified blobs (read_fd_known) */
  size_t n_known;
  const ballarus_zero_range *zeros; /* ranges of zeros, never read */
  size_t n_zeros;
  const ballarus_known_meta *found; /* blobs found in place, never read */
  size_t n_found;
} ballarus_parse_hints;

/* Parses `size` bytes like ballarus_profile_parse, with the hints' known
   blobs (as read_fd_known's), the records' metadata borrowed from `data`
   (or the known blob equal to it) and their
   counters lent from it (written in place by a merge into them), which
   the caller keeps alive (and otherwise unchanged) until
   ballarus_profile_free(out); its named records are sealed (checked, not
   decoded: a dump writes back the other tests' counts without decoding and
   encoding them again).  The hints' zero ranges (the holes of the file
   `data` was read from, left untouched there) are never read: the
   records' counter blocks inside them are marked zero in their block maps;
   nor are the blobs found in place (the runtime's own metadata, compared
   with the file without reading it into `data`).  hints may be NULL.  */
int ballarus_profile_parse_borrowing(unsigned char *data, uint64_t size,
                                     const ballarus_parse_hints *hints,
                                     ballarus_profile *out, char *err,
                                     size_t errlen);

/* Serialises into a malloc'd buffer (records in stamp order, so equal
   profiles give equal bytes).  */
int ballarus_profile_serialize(const ballarus_profile *p, unsigned char **buf,
                               uint64_t *size, char *err, size_t errlen);

/* Temporary files are named NAME + BALLARUS_TMP_INFIX + "<pid>.<serial>"
   (the runtime removes those of dead processes).  */
#define BALLARUS_TMP_INFIX ".tmp."

/* ballarus_profile_write_at flags.  */
#define BALLARUS_WRITE_FSYNC 1u /* fsync the file before the rename */
#define BALLARUS_WRITE_EXCHANGE 2u /* replace an existing file by
                                      renameat2(RENAME_EXCHANGE) and unlink
                                      (cheaper than rename on ext4) */
#define BALLARUS_WRITE_TRUSTED 4u /* every record's stamp was verified (or
                                     is the program's own blob): do not
                                     hash the metadata again */

/* Writes file `name` in the directory open as `dirfd` (or AT_FDCWD)
   atomically: a temporary file beside it, created by safe_file.h with its
   final mode from the start (`mode` exactly when mode >= 0, else gcov's
   0666 & ~umask), written, then renamed over `name` (with
   BALLARUS_WRITE_EXCHANGE: exchanged with it, and the old content
   unlinked; readers see the old file or the new one either way).  Never
   follows a symbolic link; on failure nothing is left behind and `name` is
   untouched.  */
int ballarus_profile_write_at(int dirfd, const char *name,
                              const ballarus_profile *p, int mode,
                              unsigned flags, char *err, size_t errlen);

/* Creates the new file `name` in dirfd (O_EXCL, never through a link;
   `mode` exactly when mode >= 0, else 0666 less the umask) and writes p
   into it directly, its zero chunks left as holes (flags:
   BALLARUS_WRITE_TRUSTED).  Not atomic: the runtime, which creates new
   profiles so under its lock, has its redo log remove a file whose writer
   was killed.  *created: the file was created (then it may hold part of
   p on failure).  */
int ballarus_profile_write_new(int dirfd, const char *name,
                               const ballarus_profile *p, int mode,
                               unsigned flags, int *created, char *err,
                               size_t errlen);

/* The pieces of p's file, in file order, as ballarus_profile_write_at
   would write them (flags: BALLARUS_WRITE_TRUSTED): fn is called with each
   piece's kind, its record (NULL for the file header and the named
   section), its file offset, its bytes (NULL: counter blocks marked zero,
   n zero bytes never read) and size; the bytes live until fn returns.  A
   non-zero return of fn stops the walk (-1, "out of memory").  *total:
   the file's size.  The runtime writes the changed bytes of a profile in
   place with it.  */
#define BALLARUS_PIECE_HEADER 0   /* the file header or a record header */
#define BALLARUS_PIECE_META 1     /* a metadata blob, or its padding */
#define BALLARUS_PIECE_COUNTERS 2 /* a run of a record's counters */
#define BALLARUS_PIECE_SPARSE 3   /* a record's sparse entries */
#define BALLARUS_PIECE_NAMED 4    /* the named section */
typedef int (*ballarus_piece_fn)(void *ctx, int kind,
                                 const ballarus_profile_record *rec,
                                 uint64_t off, const void *bytes, uint64_t n);
int ballarus_profile_pieces(const ballarus_profile *p, unsigned flags,
                            ballarus_piece_fn fn, void *ctx, uint64_t *total,
                            char *err, size_t errlen);

/* Rewrites, in the file open (for writing) as `fd`, the runs of `p`, a
   profile of one record (trusted: as read from that file and checked)
   that the file holds byte for byte but for its runs and the checks that
   cover them: one pwrite of the 80 bytes from the file header's runs to
   the record header's check, which lie in the file's first sector.  The
   runtime's cheap way to add a run to an object that did not run: no
   temporary file, rename or unlink.  A concurrent reader without the
   directory's lock can see the old bytes, the new ones, or (a torn read)
   a mix that fails the header check, never wrong counts.  */
int ballarus_profile_write_runs_in_place(int fd, const ballarus_profile *p,
                                         char *err, size_t errlen);

/* Writes to `path` atomically (write_at in its directory, fsync'd, the
   directory fsync'd after the rename); the directories of `path` are
   walked as safe_file.h does (no link of another user followed).  ballarus-reconstruct's writer.  */
int ballarus_profile_write_file(const char *path, const ballarus_profile *p,
                                char *err, size_t errlen);

/* Adds `src` into `dst`: records with equal stamps have their counters and
   sparse counts added modulo 2^64 (a source may hold "negative" deltas, see
   ballarus_format.h; sparse entries whose sum is 0 are dropped) and their
   runs summed (saturating); other records are copied; dst->runs becomes
   its largest record's runs.  Named runs are united: equal (name, stamp)
   records have their counts added like the records' (zero sums dropped)
   and their runs summed, others are copied.  Fails, leaving dst
   unchanged, if a src record has the identity of a dst record but another
   stamp (two builds of one TU), or if records with equal stamps disagree in
   size.  */
int ballarus_profile_merge(ballarus_profile *dst, const ballarus_profile *src,
                           char *err, size_t errlen);

/* The runtime's merge of a dump (src) into an existing profile (dst), one
   rule per record of src:
     - a record whose stamp dst holds is added into it, as in merge;
     - a record with a new stamp is copied, and every dst record of the same
       identity whose stamp src does not hold is removed first: the object
       was rebuilt, its old counts describe code that no longer exists
       (gcov: "overwriting an existing profile data with a different
       checksum").  on_replace (may be NULL) is called with each removed
       record and the src record replacing it, before it is freed;
     - a zero record (runs 0: what older runtimes wrote for a TU that had
       not run, so that its file listed it) is copied only when dst has no
       record of its identity: it never replaces counts.  (A record of
       zero counts with a run, what a process writes for a TU it linked
       but did not run, is a record like any other: a new build of it
       replaces the old one, as gcov's overwrite does.)
   dst->runs becomes its largest record's runs (a replaced record's runs
   go with it).  Named runs are united as in merge, and those of a removed
   record removed with it.  Fails, leaving dst unchanged, if records
   with equal stamps disagree in size or src repeats a stamp.  */
typedef void (*ballarus_replace_fn)(void *ctx,
                                    const ballarus_profile_record *old_rec,
                                    const ballarus_profile_record *new_rec);
int ballarus_profile_update(ballarus_profile *dst, const ballarus_profile *src,
                            ballarus_replace_fn on_replace, void *ctx,
                            char *err, size_t errlen);

/* Gives a record whose counters are borrowed (counters_borrowed) its own
   copy of them, the same counts, before anything adds into it; does
   nothing to a record that owns its counters.  Returns -1 when out of
   memory (the record is unchanged).  */
int ballarus_profile_record_own_counters(ballarus_profile_record *r);

/* n zeroed counters.  Large arrays are a mapping of their own (*mapped
   set), page-aligned, so that no block straddles two pages and pages
   never written stay untouched; small ones come from calloc.  NULL when
   out of memory.  */
uint64_t *ballarus_profile_counters_alloc(uint64_t n, int *mapped);

/* Frees what ballarus_profile_counters_alloc returned.  */
void ballarus_profile_counters_free(uint64_t *c, uint64_t n, int mapped);

/* Adds src's counters into dst's (which dst owns), modulo 2^64, reading
   only the blocks src's map marks (and writing only where src's counters
   are non-zero); dst's map becomes the union.  Both have
   n_counters counters.  Returns -1 when out of memory (dst unchanged).  */
int ballarus_profile_record_add_counters(ballarus_profile_record *dst,
                                         const ballarus_profile_record *src);

/* Returns 1 if merging src into dst would hit an identity/stamp conflict.  */
int ballarus_profile_conflicts(const ballarus_profile *dst,
                               const ballarus_profile *src);

/* 1 when name[0, size) may name a test (BALLARUS_TEST): 1 to
   BALLARUS_TEST_NAME_MAX bytes, each printable ASCII.  */
int ballarus_test_name_valid(const char *name, uint64_t size);

void ballarus_profile_free(ballarus_profile *p);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_PROFILE_IO_H */
