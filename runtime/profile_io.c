/* profile_io.c — parse and validate profile files (layout:
   runtime/ballarus_format.h; API: runtime/profile_io.h).  Serialisation and
   safe writing are in profile_write.c, merging in profile_merge.c.

   Shared by the runtime (compiled into libballarus_rt.a with hidden
   visibility, used at dump time inside the profiled program) and by
   ballarus-reconstruct.  Plain C11, libc only: it must never pull libstdc++
   into a C program.

   Trust nothing read from disk.  The parser checks, in file order, every
   field before it is used: magic, version, the header check, that n_records
   records can fit in the bytes left (so a corrupt count cannot make us
   allocate gigabytes), each record's tag, flags and sizes with explicit
   overflow checks, the record check (headers, counters, sparse entries), the
   embedded metadata header (magic, version, header size, size, stamp =
   hash of the body — not recomputed for a blob byte-identical to one the
   caller already verified —, n_counters, flags, names block, identity),
   zero padding, a record's runs not above the file's, sparse entries sorted
   and unique, records sorted by stamp without duplicates, no trailing
   bytes, and last the file check over every record's check and stamp: a
   damaged byte anywhere fails one of them.  Every error names the byte
   offset of the offending field.

   Determinism: serialisation writes records in stamp order and the file
   depends only on the profile's values, so equal profiles give equal bytes.

   Merging (the same rule for the runtime's dump and `reconstruct merge`):
   a source record whose stamp is in the destination is added into it
   (counters and sparse counts modulo 2^64 -- a dump may carry a "-1" that
   undoes a path count an earlier dump wrote, see ballarus_format.h --
   sparse entries whose sum is 0 dropped, runs summed saturating); a source
   record whose stamp is new is copied, unless the destination holds a
   record with the same identity — that is another build of the same TU,
   and mixing the two would attribute counts to the wrong code, so the
   whole merge is refused.  (A program may contain
   two builds of one source, e.g. compiled twice with different -D flags;
   both stamps then sit in the file side by side and later runs merge into
   each, which is why an identity clash only counts for a *new* stamp.)  */

#define _GNU_SOURCE /* O_CLOEXEC, ... */

#include "runtime/profile_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "runtime/profile_io_internal.h"

int ballarus_pio_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Arrays from this size on get a mapping of their own.  */
#define MAPPED_MIN_BYTES (64u * 1024u)

uint64_t *ballarus_profile_counters_alloc(uint64_t n, int *mapped) {
  *mapped = 0;
  if (n > SIZE_MAX / 16) return NULL;
  if (n * 8 < MAPPED_MIN_BYTES) return calloc(n == 0 ? 1 : (size_t)n, 8);
  void *m = mmap(NULL, (size_t)(n * 8), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  *mapped = 1;
  return m;
}

void ballarus_profile_counters_free(uint64_t *c, uint64_t n, int mapped) {
  if (mapped)
    munmap(c, (size_t)(n * 8));
  else
    free(c);
}

int ballarus_profile_record_own_counters(ballarus_profile_record *r) {
  if (!r->counters_borrowed) return 0;
  const uint64_t n = r->n_counters;
  int mapped;
  uint64_t *own = ballarus_profile_counters_alloc(n, &mapped);
  if (own == NULL) return -1;
  r->counters_mapped = mapped;
  for (uint64_t b = 0, lo, hi; b < ballarus_block_count(n); b++) {
    block_bounds(b, n, &lo, &hi);
    if (ballarus_block_live(r->block_map, lo))
      memcpy(own + lo, r->counters + lo, (hi - lo) * 8);
  }
  r->counters = own;
  r->counters_borrowed = 0;
  return 0;
}

int ballarus_profile_record_add_counters(ballarus_profile_record *dst,
                                         const ballarus_profile_record *src) {
  const uint64_t n = src->n_counters;
  if (ballarus_profile_record_own_counters(dst) != 0) return -1;
  for (uint64_t b = 0, lo, hi; b < ballarus_block_count(n); b++) {
    block_bounds(b, n, &lo, &hi);
    if (!ballarus_block_live(src->block_map, lo)) continue;
    /* A zero adds nothing: dst's pages where src counted nothing (a
       profile's holes in the bytes read) stay untouched.  */
    for (uint64_t j = lo; j < hi; j++)
      if (src->counters[j] != 0) {
        dst->counters[j] = ballarus_count_add(dst->counters[j], src->counters[j]);
        if (dst->chunk_hash != NULL)
          dst->chunk_hash[j / BALLARUS_CHUNK_COUNTERS] = 0; /* changed */
      }
  }
  if (dst->block_map == NULL) return 0;
  if (src->block_map == NULL) {
    free(dst->block_map);
    dst->block_map = NULL;
    return 0;
  }
  for (uint64_t b = 0; b < ballarus_block_count(n); b++)
    dst->block_map[b] |= src->block_map[b];
  return 0;
}

void ballarus_pio_record_free(ballarus_profile_record *r) {
  if (!r->borrowed) free(r->metadata);
  if (!r->counters_borrowed && !r->counters_lent)
    ballarus_profile_counters_free(r->counters, r->n_counters,
                                   r->counters_mapped);
  free(r->sparse);
  free(r->block_map);
  free(r->chunk_hash);
  memset(r, 0, sizeof *r);
}

void ballarus_profile_free(ballarus_profile *p) {
  if (p == NULL) return;
  for (uint32_t i = 0; i < p->n_records; i++) ballarus_pio_record_free(&p->records[i]);
  free(p->records);
  ballarus_pio_named_free(p->named, p->n_named);
  free(p->backing);
  memset(p, 0, sizeof *p);
}


/* ---------------------------------------------------------------------- */
/* Parsing.                                                                 */

/* The known, verified blob `m` (meta_size bytes) is byte-identical to, or
   NULL.  */
static const unsigned char *find_known(const unsigned char *m,
                                       uint64_t meta_size,
                                       const unsigned char *const *known,
                                       size_t n_known) {
  for (size_t i = 0; i < n_known; i++) {
    uint64_t size;
    memcpy(&size, known[i] + 24, 8);
    if (size == meta_size && memcmp(known[i] + 16, m + 16, 8) == 0 &&
        memcmp(known[i], m, meta_size) == 0)
      return known[i];
  }
  return NULL;
}

/* Checks the metadata blob at data[0, meta_size) that starts at file offset
   `at` against its record.  `verified`: the blob is byte-identical to one
   whose stamp was verified (skips hashing the body again).  */
int ballarus_pio_check_meta(const unsigned char *m, uint64_t meta_size, uint64_t at,
                      uint32_t index, uint64_t stamp, uint64_t n_counters,
                      int verified, char *err, size_t errlen) {
  if (memcmp(m, BALLARUS_META_MAGIC, 8) != 0)
    return ballarus_pio_fail(err, errlen, "offset %llu: record %u: metadata: bad magic",
                (ull)at, index);
  uint32_t version = rd32(m + 8);
  if (version < BALLARUS_META_VERSION_MIN || version > BALLARUS_META_VERSION)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: unsupported version %u "
                "(expected %u to %u)",
                (ull)(at + 8), index, version, BALLARUS_META_VERSION_MIN,
                BALLARUS_META_VERSION);
  uint32_t header_size = rd32(m + 12);
  if (header_size != BALLARUS_META_HEADER_SIZE)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: header_size %u (expected "
                "%u)",
                (ull)(at + 12), index, header_size, BALLARUS_META_HEADER_SIZE);
  uint64_t mstamp = rd64(m + 16), msize = rd64(m + 24), mn = rd64(m + 32);
  if (msize != meta_size)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: size %llu disagrees with "
                "the record's meta_size %llu",
                (ull)(at + 24), index, (ull)msize, (ull)meta_size);
  if (mstamp != stamp)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: stamp 0x%016llx disagrees "
                "with the record's 0x%016llx",
                (ull)(at + 16), index, (ull)mstamp, (ull)stamp);
  if (mn != n_counters)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: n_counters %llu disagrees "
                "with the record's %llu",
                (ull)(at + 32), index, (ull)mn, (ull)n_counters);
  uint32_t flags = rd32(m + 48);
  if (flags & ~(uint32_t)(BALLARUS_META_F_NAIVE | BALLARUS_META_F_EDGE |
                          BALLARUS_META_F_PATH | BALLARUS_META_F_ATOMIC))
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: unknown flags 0x%x",
                (ull)(at + 48), index, flags);
  ballarus_meta_names names;
  if (ballarus_meta_get_names(m, meta_size, &names) != 0)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: names block of %u bytes is "
                "not four NUL-terminated names",
                (ull)(at + 52), index, rd32(m + 52));
  if ((names.profile[0] != '\0' && names.profile[0] != '/') ||
      (names.object[0] != '\0' && names.object[0] != '/'))
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: profile and object names "
                "must be absolute",
                (ull)(at + header_size), index);
  uint64_t body =
      verified ? stamp : ballarus_hash64(m + header_size, meta_size - header_size);
  if (body != stamp)
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: stamp 0x%016llx is not the "
                "hash of the body (0x%016llx)",
                (ull)(at + 16), index, (ull)stamp, (ull)body);
  if (rd64(m + 40) !=
      ballarus_tu_identity(names.profile, names.cwd, names.source))
    return ballarus_pio_fail(err, errlen,
                "offset %llu: record %u: metadata: identity is not the hash "
                "of the profile path %s",
                (ull)(at + 40), index, names.profile);
  return 0;
}

int ballarus_profile_check_header(const unsigned char *data,
                                  uint64_t file_size, char *err,
                                  size_t errlen) {
  const uint64_t size = file_size;
  if (size >= 8 && memcmp(data, BALLARUS_PROFILE_MAGIC, 8) != 0)
    return ballarus_pio_fail(err, errlen, "offset 0: bad magic (not a ballarus profile)");
  if (size >= 12 && (rd32(data + 8) < BALLARUS_PROFILE_VERSION_MIN ||
                     rd32(data + 8) > BALLARUS_PROFILE_VERSION_NAMED)) {
    uint32_t version = rd32(data + 8);
    return ballarus_pio_fail(err, errlen,
                "offset 8: unsupported profile version %u (expected %u to "
                "%u%s)",
                version, BALLARUS_PROFILE_VERSION_MIN,
                BALLARUS_PROFILE_VERSION_NAMED,
                version < BALLARUS_PROFILE_VERSION_MIN
                    ? "; written by an older ballarus"
                    : "");
  }
  if (size < BALLARUS_PROFILE_HEADER_SIZE)
    return ballarus_pio_fail(err, errlen,
                "offset 0: file header truncated (file ends after %llu of %u "
                "bytes)",
                (ull)size, BALLARUS_PROFILE_HEADER_SIZE);
  if (rd64(data + 32) != ballarus_hash64(data, 32))
    return ballarus_pio_fail(err, errlen,
                "offset 32: header check mismatch (file header corrupted)");
  uint32_t n_records = rd32(data + 12);
  uint64_t min_record = BALLARUS_RECORD_HEADER_SIZE + BALLARUS_META_HEADER_SIZE;
  uint64_t room = (size - BALLARUS_PROFILE_HEADER_SIZE) / min_record;
  if (n_records > room)
    return ballarus_pio_fail(err, errlen,
                "offset 12: n_records %u impossible: the remaining %llu bytes "
                "hold at most %llu records",
                n_records, (ull)(size - BALLARUS_PROFILE_HEADER_SIZE),
                (ull)room);
  return 0;
}

/* Sparse entries sp[0, n) of record i (at file offset `at`) are sorted by
   (function, key), keys unique.  */
static int check_sparse_order(const ballarus_sparse_entry *sp, uint64_t n,
                              uint64_t at, uint32_t i, char *err,
                              size_t errlen) {
  for (uint64_t s = 1; s < n; s++)
    if (!sparse_less(&sp[s - 1], &sp[s]))
      return ballarus_pio_fail(
          err, errlen,
          "offset %llu: record %u: sparse entry %llu not sorted after the "
          "previous one (sorted by function, key; keys unique)",
          (ull)(at + s * sizeof(ballarus_sparse_entry)), i, (ull)s);
  return 0;
}

/* How parse() treats its bytes.  */
typedef struct {
  const unsigned char *const *known; /* blobs verified already */
  size_t n_known;
  int borrow;          /* metadata point into the bytes */
  int lend_counters;   /* counters are lent (8-aligned bytes only) */
  const ballarus_zero_range *zeros; /* holes, never read */
  size_t n_zeros;
  const ballarus_known_meta *found; /* blobs found in place, never read */
  size_t n_found;
} parse_opts;

/* The blob found in place at offset `at` of meta_size bytes, or NULL.  */
static const unsigned char *found_at(const parse_opts *o, uint64_t at,
                                     uint64_t meta_size) {
  for (size_t i = 0; i < o->n_found; i++)
    if (o->found[i].off == at && o->found[i].size == meta_size)
      return o->found[i].blob;
  return NULL;
}

/* Whether counter block [a, b) of data (byte offsets) holds a non-zero
   word outside the zero ranges from z on, which it reads; the ranges'
   bytes are zero and never read.  */
static int block_nonzero(const unsigned char *data, uint64_t a, uint64_t b,
                         const parse_opts *o, size_t z) {
  uint64_t p = a;
  while (p < b) {
    if (z < o->n_zeros && o->zeros[z].off <= p) {
      const uint64_t e = o->zeros[z].off + o->zeros[z].len;
      if (e > p) p = e;
      z++;
      continue;
    }
    const uint64_t q = z < o->n_zeros && o->zeros[z].off < b ? o->zeros[z].off : b;
    for (uint64_t w = p; w + 8 <= q; w += 8)
      if (rd64(data + w) != 0) return 1;
    p = q;
  }
  return 0;
}

/* The block map of n counters at data offset `at`, given the zero ranges
   (holes): a block is zero when its bytes outside them are (the part of a
   block a file block shares with a counted one is data, the rest of it a
   hole).  *map is NULL when there are no zero ranges.  Returns -1 when out
   of memory.  */
static int map_from_zeros(const unsigned char *data, uint64_t at, uint64_t n,
                          const parse_opts *o, unsigned char **map) {
  *map = NULL;
  if (o->n_zeros == 0 || n < BALLARUS_CHUNK_COUNTERS) return 0;
  *map = xmalloc(ballarus_block_count(n));
  if (*map == NULL) return -1;
  size_t z = 0;
  for (uint64_t k = 0, lo, hi; k < ballarus_block_count(n); k++) {
    block_bounds(k, n, &lo, &hi);
    const uint64_t a = at + lo * 8, b = at + hi * 8;
    while (z < o->n_zeros && o->zeros[z].off + o->zeros[z].len <= a) z++;
    (*map)[k] = (unsigned char)block_nonzero(data, a, b, o, z);
  }
  return 0;
}

/* Checks the fields of record i's header h (at offset rec) that need no
   other bytes: tag, flags, and sizes that cannot overflow.  */
static int check_record_fields(const unsigned char *h, uint64_t rec,
                               uint32_t i, char *err, size_t errlen) {
  uint32_t tag = rd32(h), flags = rd32(h + 4);
  uint64_t meta_size = rd64(h + 16), n_counters = rd64(h + 24),
           n_sparse = rd64(h + 32);
  if (tag != BALLARUS_RECORD_TU)
    return ballarus_pio_fail(err, errlen, "offset %llu: record %u: bad tag "
                             "0x%08x (expected 0x%08x)",
                             (ull)rec, i, tag, BALLARUS_RECORD_TU);
  if (flags != 0)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: record %u: unknown flags 0x%x",
                             (ull)(rec + 4), i, flags);
  if (meta_size < BALLARUS_META_HEADER_SIZE || meta_size > UINT64_MAX - 7)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: record %u: meta_size %llu is not a "
                             "metadata blob size",
                             (ull)(rec + 16), i, (ull)meta_size);
  if (n_counters > UINT64_MAX / 8)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: record %u: n_counters %llu overflows",
                             (ull)(rec + 24), i, (ull)n_counters);
  if (n_sparse > UINT64_MAX / sizeof(ballarus_sparse_entry))
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: record %u: n_sparse %llu overflows",
                             (ull)(rec + 32), i, (ull)n_sparse);
  return 0;
}

/* Parses record i at data[*off], advancing *off past it and folding its
   check into *file_check; the record goes to p->records[i] (p->n_records
   counts it, so that the caller frees it on failure).  */
static int parse_record(const unsigned char *data, uint64_t size,
                        uint64_t *off, uint32_t i, const parse_opts *opt,
                        ballarus_profile *p, uint64_t *file_check,
                        char *err, size_t errlen) {
  const int borrow = opt->borrow;
  uint64_t o = *off;
  const uint64_t rec = o;
  uint64_t left = size - o;
  if (left < BALLARUS_RECORD_HEADER_SIZE) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: header truncated (file ends after %llu of "
         "%u bytes)",
         (ull)rec, i, (ull)left, BALLARUS_RECORD_HEADER_SIZE);
    return -1;
  }
  const unsigned char *h = data + rec;
  uint64_t stamp = rd64(h + 8), meta_size = rd64(h + 16);
  uint64_t n_counters = rd64(h + 24), n_sparse = rd64(h + 32);
  uint64_t runs = rd64(h + 40), check = rd64(h + 48);
  if (check_record_fields(h, rec, i, err, errlen) != 0) return -1;
  o += BALLARUS_RECORD_HEADER_SIZE;
  left = size - o;
  const uint64_t meta_at = o;
  const uint64_t meta_bytes = pad8(meta_size);
  if (meta_bytes > left) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: metadata truncated (file ends after %llu "
         "of %llu bytes)",
         (ull)o, i, (ull)left, (ull)meta_bytes);
    return -1;
  }
  o += meta_bytes;
  left = size - o;
  const uint64_t counters_at = o;
  const uint64_t counter_bytes = n_counters * 8;
  if (counter_bytes > left) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: counters truncated (file ends after %llu "
         "of %llu bytes)",
         (ull)o, i, (ull)left, (ull)counter_bytes);
    return -1;
  }
  o += counter_bytes;
  left = size - o;
  const uint64_t sparse_at = o;
  const uint64_t sparse_bytes = n_sparse * sizeof(ballarus_sparse_entry);
  if (sparse_bytes > left) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: sparse entries truncated (file ends "
         "after %llu of %llu bytes)",
         (ull)o, i, (ull)left, (ull)sparse_bytes);
    return -1;
  }
  o += sparse_bytes;
  unsigned char *map;
  if (map_from_zeros(data, counters_at, n_counters, opt, &map) != 0) {
    ballarus_pio_fail(err, errlen, "out of memory");
    return -1;
  }
  const unsigned char *found = found_at(opt, meta_at, meta_size);
  const unsigned char *meta = found != NULL ? found : data + meta_at;
  const int chunked = rd32(data + 8) >= BALLARUS_PROFILE_VERSION;
  /* The runtime's records keep their chunks' hashes, for the writer
     (optional: none when out of memory).  */
  uint64_t *cache = opt->lend_counters && chunked && n_counters > 0
                        ? calloc((size_t)chunk_count(n_counters), 8)
                        : NULL;
  uint64_t actual =
      record_check(data + rec, meta,
                   (const uint64_t *)(const void *)(data + counters_at),
                   n_counters, map, data + sparse_at, sparse_bytes, chunked,
                   cache);
  if (actual != check) {
    free(map);
    free(cache);
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: check mismatch (record corrupted)",
         (ull)(rec + 48), i);
    return -1;
  }
  *file_check = file_check_add(*file_check, check, stamp);
  ballarus_profile_record *r = &p->records[i];
  p->n_records = i + 1; /* so `bad` frees this record too */
  r->block_map = map;
  r->chunk_hash = cache;
  const unsigned char *same =
      found != NULL ? found
                    : find_known(meta, meta_size, opt->known, opt->n_known);
  if (ballarus_pio_check_meta(meta, meta_size, meta_at, i, stamp, n_counters,
                 same != NULL, err, errlen) != 0)
    return -1;
  for (uint64_t b = meta_size; b < meta_bytes; b++) {
    if (data[meta_at + b] != 0) {
      ballarus_pio_fail(err, errlen, "offset %llu: record %u: nonzero metadata padding",
           (ull)(meta_at + b), i);
      return -1;
    }
  }
  /* A file's runs are the largest of its records' (files of older builds:
     the number of dumps into it, larger still), so a record never has more
     runs than its file.  (The record check covers the header too; this is
     a second line of defence and names the field.)  */
  if (runs > p->runs) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: runs %llu exceeds the file's runs %llu",
         (ull)(rec + 40), i, (ull)runs, (ull)p->runs);
    return -1;
  }
  if (i > 0 && stamp <= p->records[i - 1].stamp) {
    ballarus_pio_fail(err, errlen,
         "offset %llu: record %u: stamp 0x%016llx does not follow 0x%016llx "
         "(records must be sorted by stamp, without duplicates)",
         (ull)(rec + 8), i, (ull)stamp, (ull)p->records[i - 1].stamp);
    return -1;
  }

  r->stamp = stamp;
  r->identity = rd64(meta + 40);
  r->runs = runs;
  r->meta_size = meta_size;
  r->n_counters = n_counters;
  r->n_sparse = n_sparse;
  r->borrowed = borrow ? 1 : 0;
  /* Borrowing, a blob identical to a known one is that one: merging then
     recognises it by its address.  */
  r->metadata = !borrow ? xmalloc(meta_size)
                : same != NULL ? (unsigned char *)same
                               : (unsigned char *)meta;
  r->counters_lent =
      opt->lend_counters && (uintptr_t)(data + counters_at) % 8 == 0;
  r->counters = r->counters_lent
                    ? (uint64_t *)(uintptr_t)(data + counters_at)
                    : xmalloc(counter_bytes);
  r->sparse = xmalloc(sparse_bytes);
  if (r->metadata == NULL || r->counters == NULL || r->sparse == NULL) {
    ballarus_pio_fail(err, errlen, "out of memory");
    return -1;
  }
  if (!borrow) memcpy(r->metadata, meta, meta_size);
  if (!r->counters_lent)
    memcpy(r->counters, data + counters_at, counter_bytes);
  memcpy(r->sparse, data + sparse_at, sparse_bytes);
  if (check_sparse_order(r->sparse, n_sparse, sparse_at, i, err, errlen) != 0)
    return -1;
  *off = o;
  return 0;
}

/* opt->borrow: records' metadata point into `data` (which must outlive
   the profile) instead of being copied.  */
static int parse(const unsigned char *data, uint64_t size,
                 const parse_opts *opt, ballarus_profile *out, char *err,
                 size_t errlen) {
  memset(out, 0, sizeof *out);
  if (ballarus_profile_check_header(data, size, err, errlen) != 0) return -1;
  const uint32_t n_records = rd32(data + 12);

  ballarus_profile p;
  memset(&p, 0, sizeof p);
  p.runs = rd64(data + 16);
  p.records = calloc(n_records == 0 ? 1 : n_records, sizeof *p.records);
  if (p.records == NULL) return ballarus_pio_fail(err, errlen, "out of memory");

  uint64_t off = BALLARUS_PROFILE_HEADER_SIZE;
  uint64_t file_check = BALLARUS_HASH_INIT;
  for (uint32_t i = 0; i < n_records; i++)
    if (parse_record(data, size, &off, i, opt, &p, &file_check, err,
                     errlen) != 0)
      goto bad;
  const uint32_t version = rd32(data + 8);
  if ((version == BALLARUS_PROFILE_VERSION_NAMED ||
       version == BALLARUS_PROFILE_VERSION_V2_NAMED) &&
      ballarus_pio_parse_named(data, size, &off, opt->borrow, &p, &file_check,
                               err, errlen) != 0)
    goto bad;
  if (off != size) {
    ballarus_pio_fail(err, errlen, "offset %llu: %llu trailing bytes after the last record",
         (ull)off, (ull)(size - off));
    goto bad;
  }
  if (file_check != rd64(data + 24)) {
    ballarus_pio_fail(err, errlen,
         "offset 24: file check mismatch (a record's check or stamp was "
         "changed, or records were lost)");
    goto bad;
  }
  *out = p;
  return 0;

bad:
  ballarus_profile_free(&p);
  return -1;
}

int ballarus_profile_parse(const unsigned char *data, uint64_t size,
                           ballarus_profile *out, char *err, size_t errlen) {
  const parse_opts opt = {NULL, 0, 0, 0, NULL, 0, NULL, 0};
  return parse(data, size, &opt, out, err, errlen);
}

/* Reads the regular file open as fd into a malloc'd buffer, its header
   first: a file that is not a profile costs 40 bytes, and the buffer is
   the file's size only once the header allows it.  Returns 0, -1 (not a
   profile: the header's error) or BALLARUS_PROFILE_UNREAD (cannot stat,
   read or allocate: the file is not known to be damaged).  (Not mmap: a
   file truncated meanwhile by another process would make the program die
   of SIGBUS; the runtime must never kill the program.)  */
static int load_fd(int fd, unsigned char **buf, uint64_t *size, char *err,
                   size_t errlen) {
  *buf = NULL;
  *size = 0;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    ballarus_pio_fail(err, errlen, "cannot stat: %s", strerror(errno));
    return BALLARUS_PROFILE_UNREAD;
  }
  if (!S_ISREG(st.st_mode)) {
    ballarus_pio_fail(err, errlen, "not a regular file");
    return BALLARUS_PROFILE_UNREAD;
  }
  unsigned char head[BALLARUS_PROFILE_HEADER_SIZE];
  uint64_t n = (uint64_t)st.st_size;
  const int rc = ballarus_profile_read_head(fd, n, head, err, errlen);
  if (rc != 0) return rc;
  unsigned char *b = xmalloc(n);
  if (b == NULL) {
    ballarus_pio_fail(err, errlen, "out of memory reading %llu bytes", (ull)n);
    return BALLARUS_PROFILE_UNREAD;
  }
  memcpy(b, head, sizeof head);
  uint64_t rest = 0;
  if (n > sizeof head &&
      ballarus_profile_read_bounded(fd, b + sizeof head, n - sizeof head,
                                    &rest, err, errlen) != 0) {
    free(b);
    return BALLARUS_PROFILE_UNREAD;
  }
  *buf = b;
  *size = sizeof head + rest; /* shrank while reading: parse what we have */
  return 0;
}

int ballarus_profile_read_head(int fd, uint64_t file_size,
                               unsigned char *head, char *err,
                               size_t errlen) {
  uint64_t got = 0;
  if (ballarus_profile_read_bounded(fd, head, BALLARUS_PROFILE_HEADER_SIZE,
                                    &got, err, errlen) != 0)
    return BALLARUS_PROFILE_UNREAD;
  return ballarus_profile_check_header(
      head, got < BALLARUS_PROFILE_HEADER_SIZE ? got : file_size, err,
      errlen) != 0 ? -1 : 0;
}

int ballarus_profile_read_bounded(int fd, unsigned char *buf, uint64_t n,
                                  uint64_t *got, char *err, size_t errlen) {
  *got = 0;
  while (*got < n) {
    uint64_t want = n - *got;
    ssize_t r = read(fd, buf + *got, want > (1u << 30) ? (1u << 30)
                                                        : (size_t)want);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      return ballarus_pio_fail(err, errlen, "read error at offset %llu: %s", (ull)*got,
                  strerror(errno));
    if (r == 0) break;
    *got += (uint64_t)r;
  }
  return 0;
}

int ballarus_profile_read_fd_known(int fd, const unsigned char *const *known,
                                   size_t n_known, ballarus_profile *out,
                                   char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  unsigned char *buf;
  uint64_t size;
  int loaded = load_fd(fd, &buf, &size, err, errlen);
  if (loaded != 0) return loaded;
  /* The records' metadata stay in the buffer (borrowed, never copied
     again): the runtime rewrites the profiles of the TUs it ran at every
     exit, and they are mostly metadata.  */
  const parse_opts opt = {known, n_known, 1, 0, NULL, 0, NULL, 0};
  int rc = parse(buf, size, &opt, out, err, errlen);
  if (rc == 0) {
    out->backing = buf;
    out->backing_size = size;
  } else {
    free(buf);
  }
  return rc;
}

int ballarus_profile_parse_borrowing(unsigned char *data, uint64_t size,
                                     const ballarus_parse_hints *hints,
                                     ballarus_profile *out, char *err,
                                     size_t errlen) {
  const ballarus_parse_hints none = {NULL, 0, NULL, 0, NULL, 0};
  const ballarus_parse_hints *h = hints != NULL ? hints : &none;
  const parse_opts opt = {h->known, h->n_known, 1, 1, h->zeros, h->n_zeros,
                          h->found, h->n_found};
  return parse(data, size, &opt, out, err, errlen);
}

int ballarus_profile_read_fd(int fd, ballarus_profile *out, char *err,
                             size_t errlen) {
  memset(out, 0, sizeof *out);
  unsigned char *buf;
  uint64_t size;
  int loaded = load_fd(fd, &buf, &size, err, errlen);
  if (loaded != 0) return loaded;
  const parse_opts opt = {NULL, 0, 0, 0, NULL, 0, NULL, 0};
  int rc = parse(buf, size, &opt, out, err, errlen);
  free(buf);
  return rc;
}

/* The lock file the dumps of the profile's owner hold in the directory of
   `path` (its final target: links followed, as the reader follows them):
   a dump writes profiles in place and holds the lock meanwhile.  *in_store
   says whether it exists (a regular file, not followed if a link).  When
   the profile and the lock file are this user's, the lock is taken shared,
   waiting up to about 2 s for a holder, and its descriptor returned; else
   -1 (the reader reads without it).  */
static int lock_shared(const char *path, int *in_store) {
  struct stat st;
  *in_store = 0;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const uid_t owner = st.st_uid;
  char *real = realpath(path, NULL);
  if (real == NULL) return -1;
  char *slash = strrchr(real, '/');
  size_t len = strlen(real) + 48;
  char *lock = malloc(len);
  int fd = -1;
  if (slash != NULL && lock != NULL) {
    snprintf(lock, len, "%.*s/.ballarus-%u.lock", (int)(slash - real), real,
             (unsigned)owner);
    *in_store = lstat(lock, &st) == 0 && S_ISREG(st.st_mode);
    if (*in_store && owner == geteuid())
      fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  free(lock);
  free(real);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
    close(fd);
    return -1;
  }
  for (int tries = 0; tries < 200; tries++) {
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) return fd;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  close(fd);
  return -1;
}

int ballarus_profile_read_file(const char *path, ballarus_profile *out,
                               char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  int in_store;
  const int lfd = lock_shared(path, &in_store);
  /* A reader without the lock (another user, or a holder that kept it
     too long) of a profile in a store may read it while a dump writes it
     in place: a read whose checks fail is tried again a few times (about
     0.5 s in all) before the file is called damaged.  Under the lock, or
     outside a store, a failed check is the file's.  */
  const int attempts = lfd < 0 && in_store ? 10 : 1;
  int rc = -1;
  for (int tries = 0; tries < attempts; tries++) {
    if (tries > 0) {
      struct timespec ts = {0, 50 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      rc = ballarus_pio_fail(err, errlen, "cannot open: %s", strerror(errno));
      break;
    }
    rc = ballarus_profile_read_fd(fd, out, err, errlen);
    close(fd);
    if (rc != -1) break;
  }
  if (lfd >= 0) close(lfd);
  return rc;
}
