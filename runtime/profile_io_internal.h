/* profile_io_internal.h — what the three parts of the profile codec share
   (profile_io.c: parsing and validation; profile_write.c: serialisation and
   safe writing; profile_merge.c: merging).  Not an API: the runtime compiles
   these files with hidden visibility, ballarus-reconstruct links them as
   //runtime:profile_io.  */

#ifndef BALLARUS_PROFILE_IO_INTERNAL_H
#define BALLARUS_PROFILE_IO_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/profile_io.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ballarus profiles are little-endian; big-endian hosts are unsupported"
#endif

typedef unsigned long long ull;

/* Formats the one-line message into err (errlen bytes); returns -1.  */
int ballarus_pio_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline uint32_t rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void wr32(unsigned char *p, uint32_t v) {
  memcpy(p, &v, sizeof v);
}
static inline void wr64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, sizeof v);
}

static inline uint64_t pad8(uint64_t n) { return (n + 7u) & ~(uint64_t)7u; }

/* malloc that never returns NULL for a zero size, so NULL always means
   out of memory.  */
static inline void *xmalloc(uint64_t n) {
  if (n > (uint64_t)SIZE_MAX) return NULL;
  return malloc(n == 0 ? 1 : (size_t)n);
}

static inline int sparse_less(const ballarus_sparse_entry *a,
                              const ballarus_sparse_entry *b) {
  return a->function < b->function ||
         (a->function == b->function && a->key < b->key);
}

/* Reads the header of the profile open as fd (file_size bytes, read from
   its current offset, normally 0) into head (BALLARUS_PROFILE_HEADER_SIZE
   bytes) and checks it (ballarus_profile_check_header): 0, -1 (not a
   profile: the header's error) or BALLARUS_PROFILE_UNREAD (a read error:
   the file is not known to be damaged).  The first step of both readers
   of a file: profile_io.c's and the runtime's (rt_read_old.c).  */
int ballarus_profile_read_head(int fd, uint64_t file_size,
                               unsigned char *head, char *err, size_t errlen);

/* Merges two sorted sparse arrays into `out` (room for na + nb): counts of
   equal keys added modulo 2^64, entries that sum to 0 dropped; returns the
   count.  Records and named records merge their path entries with it.  */
uint64_t ballarus_pio_merge_sparse(const ballarus_sparse_entry *a, uint64_t na,
                                   const ballarus_sparse_entry *b, uint64_t nb,
                                   ballarus_sparse_entry *out);

/* Chunks of n counters (profile_io.h, BALLARUS_CHUNK_COUNTERS).  */
static inline uint64_t chunk_count(uint64_t n) {
  return (n + BALLARUS_CHUNK_COUNTERS - 1) / BALLARUS_CHUNK_COUNTERS;
}

/* Counters [*lo, *hi) of chunk k of n counters.  */
static inline void chunk_bounds(uint64_t k, uint64_t n, uint64_t *lo,
                                uint64_t *hi) {
  *lo = k * BALLARUS_CHUNK_COUNTERS;
  *hi = *lo + BALLARUS_CHUNK_COUNTERS < n ? *lo + BALLARUS_CHUNK_COUNTERS : n;
}

#define BLOCKS_PER_CHUNK (BALLARUS_CHUNK_COUNTERS / BALLARUS_BLOCK_COUNTERS)

/* Counters [*lo, *hi) of block b of n counters.  */
static inline void block_bounds(uint64_t b, uint64_t n, uint64_t *lo,
                                uint64_t *hi) {
  *lo = b * BALLARUS_BLOCK_COUNTERS;
  *hi = *lo + BALLARUS_BLOCK_COUNTERS < n ? *lo + BALLARUS_BLOCK_COUNTERS : n;
}

/* Whether chunk k of n counters has a block `map` marks live.  */
static inline int chunk_live(const unsigned char *map, uint64_t k,
                             uint64_t n) {
  if (map == NULL) return 1;
  uint64_t b = k * BLOCKS_PER_CHUNK, end = b + BLOCKS_PER_CHUNK;
  if (end > ballarus_block_count(n)) end = ballarus_block_count(n);
  for (; b < end; b++)
    if (map[b] != 0) return 1;
  return 0;
}

/* ballarus_hash64_update of `words` zero words, without reading them.  */
static inline uint64_t hash_zero_words(uint64_t h, uint64_t words) {
  for (; words > 0; words--) h = ballarus_hash_step(h, 0);
  return h;
}

/* The counters of a version 2 or 3 record, word by word, the blocks `map`
   marks zero not read.  */
static inline uint64_t hash_counters_v2(uint64_t h, const uint64_t *counters,
                                        uint64_t n, const unsigned char *map) {
  if (map == NULL) return ballarus_hash64_update(h, counters, n * 8);
  for (uint64_t b = 0, lo, hi; b < ballarus_block_count(n); b++) {
    block_bounds(b, n, &lo, &hi);
    h = map[b] ? ballarus_hash64_update(h, counters + lo, (hi - lo) * 8)
               : hash_zero_words(h, hi - lo);
  }
  return h;
}

/* Folds n words into the four lanes of a chunk's hash, word 0 into lane
   0: a chunk fed in pieces of multiples of 4 words (all but the last)
   gives its lanes.  w NULL: n zero words.  */
static inline void hash_lanes(uint64_t l[4], const uint64_t *w, uint64_t n) {
  /* Lanes in locals and one loop per case (data or zeros): no test per
     word.  */
  uint64_t a = l[0], b = l[1], c = l[2], d = l[3], i = 0;
  if (w != NULL) {
    for (; i + 4 <= n; i += 4) {
      a = ballarus_hash_step(a, w[i]);
      b = ballarus_hash_step(b, w[i + 1]);
      c = ballarus_hash_step(c, w[i + 2]);
      d = ballarus_hash_step(d, w[i + 3]);
    }
  } else {
    for (; i + 4 <= n; i += 4) {
      a = ballarus_hash_step(a, 0);
      b = ballarus_hash_step(b, 0);
      c = ballarus_hash_step(c, 0);
      d = ballarus_hash_step(d, 0);
    }
  }
  if (i < n) a = ballarus_hash_step(a, w != NULL ? w[i] : 0);
  if (i + 1 < n) b = ballarus_hash_step(b, w != NULL ? w[i + 1] : 0);
  if (i + 2 < n) c = ballarus_hash_step(c, w != NULL ? w[i + 2] : 0);
  l[0] = a;
  l[1] = b;
  l[2] = c;
  l[3] = d;
}

/* The hash of one chunk of n counters (ballarus_format.h, version 4): four
   lanes (word i into lane i % 4, from BALLARUS_HASH_INIT ^ lane), then the
   lanes folded in order from BALLARUS_HASH_INIT.  w NULL: n zero words;
   the blocks `bmap` (the chunk's part of a block map, or NULL) marks zero
   are not read.  */
static inline uint64_t hash_chunk(const uint64_t *w, uint64_t n,
                                  const unsigned char *bmap) {
  uint64_t l[4] = {BALLARUS_HASH_INIT, BALLARUS_HASH_INIT ^ 1,
                   BALLARUS_HASH_INIT ^ 2, BALLARUS_HASH_INIT ^ 3};
  _Static_assert(BALLARUS_BLOCK_COUNTERS % 4 == 0, "blocks keep the lanes");
  if (bmap == NULL || w == NULL) {
    hash_lanes(l, w, n);
  } else {
    for (uint64_t b = 0, lo, hi; b * BALLARUS_BLOCK_COUNTERS < n; b++) {
      block_bounds(b, n, &lo, &hi);
      hash_lanes(l, bmap[b] ? w + lo : NULL, hi - lo);
    }
  }
  uint64_t h = ballarus_hash_step(BALLARUS_HASH_INIT, l[0]);
  h = ballarus_hash_step(h, l[1]);
  h = ballarus_hash_step(h, l[2]);
  return ballarus_hash_step(h, l[3]);
}

/* hash_chunk of a whole chunk of zeros, computed once.  */
static inline uint64_t hash_zero_chunk(void) {
  static uint64_t z; /* 0: not yet (a race computes the same value) */
  uint64_t h = __atomic_load_n(&z, __ATOMIC_RELAXED);
  if (h == 0) {
    h = hash_chunk(NULL, BALLARUS_CHUNK_COUNTERS, NULL);
    __atomic_store_n(&z, h, __ATOMIC_RELAXED);
  }
  return h;
}

/* The counters of a version 4 or 5 record: each chunk's hash folded in,
   the blocks `map` marks zero not read (a chunk of them: one step).
   cache (NULL, or one per chunk, a record's chunk_hash): a non-zero entry
   is the chunk's hash, not computed again; a zero one is filled.  */
static inline uint64_t hash_counters(uint64_t h, const uint64_t *counters,
                                     uint64_t n, const unsigned char *map,
                                     uint64_t *cache) {
  for (uint64_t k = 0, lo, hi; k < chunk_count(n); k++) {
    chunk_bounds(k, n, &lo, &hi);
    uint64_t c;
    if (cache != NULL && cache[k] != 0)
      c = cache[k];
    else if (chunk_live(map, k, n))
      c = hash_chunk(counters + lo, hi - lo,
                     map != NULL ? map + k * BLOCKS_PER_CHUNK : NULL);
    else if (hi - lo == BALLARUS_CHUNK_COUNTERS)
      c = hash_zero_chunk();
    else
      c = hash_chunk(NULL, hi - lo, NULL);
    if (cache != NULL) cache[k] = c;
    h = ballarus_hash_step(h, c);
  }
  return h;
}

/* A record's check (ballarus_format.h): its header's first 48 bytes, the
   metadata header, the counters (n_counters, block map `map`; by chunk in
   versions 4 and 5, `chunked`: with the chunk hashes `cache`, as
   hash_counters), the sparse entries.  */
static inline uint64_t record_check(const unsigned char *rec_header,
                                    const unsigned char *meta_header,
                                    const uint64_t *counters,
                                    uint64_t n_counters,
                                    const unsigned char *map,
                                    const void *sparse,
                                    uint64_t sparse_bytes, int chunked,
                                    uint64_t *cache) {
  uint64_t h = ballarus_hash64(rec_header, 48);
  h = ballarus_hash64_update(h, meta_header, BALLARUS_META_HEADER_SIZE);
  h = chunked ? hash_counters(h, counters, n_counters, map, cache)
              : hash_counters_v2(h, counters, n_counters, map);
  return ballarus_hash64_update(h, sparse, sparse_bytes);
}

/* Folds one record into the file check.  */
static inline uint64_t file_check_add(uint64_t h, uint64_t check,
                                      uint64_t stamp) {
  unsigned char b[16];
  memcpy(b, &check, 8);
  memcpy(b + 8, &stamp, 8);
  return ballarus_hash64_update(h, b, 16);
}

/* Checks the metadata blob m[0, meta_size) at file offset `at` against its
   record (profile_io.c).  `verified`: byte-identical to a blob whose stamp
   was verified (the body is not hashed again).  */
int ballarus_pio_check_meta(const unsigned char *m, uint64_t meta_size,
                            uint64_t at, uint32_t index, uint64_t stamp,
                            uint64_t n_counters, int verified, char *err,
                            size_t errlen);

/* The named section (profile_named.c).  Parses it at data[*off] (after
   the TU records of a version 3 or 5 file) into p->named, folding it into
   *file_check; p->records must be parsed already.  `seal`: the records
   stay sealed in `data` (profile_io.h).  */
int ballarus_pio_parse_named(const unsigned char *data, uint64_t size,
                             uint64_t *off, int seal, ballarus_profile *p,
                             uint64_t *file_check, char *err, size_t errlen);

/* Serialises p's named section (checked as the parser checks it) into a
   malloc'd buffer, folding it into *file_check.  */
int ballarus_pio_named_bytes(const ballarus_profile *p, unsigned char **buf,
                             uint64_t *size, uint64_t *file_check, char *err,
                             size_t errlen);

/* The sorted union of dst's and src's named records, deep copies, counts
   of equal (name, stamp) added; neither input changes.  */
int ballarus_pio_named_union(const ballarus_profile *dst,
                             const ballarus_profile *src,
                             ballarus_named_record **out, uint64_t *n_out,
                             char *err, size_t errlen);

/* Frees the named records whose stamp p no longer holds.  */
void ballarus_pio_named_drop_orphans(ballarus_profile *p);

void ballarus_pio_named_free(ballarus_named_record *n, uint64_t count);

/* Frees what a record owns and zeroes it.  */
void ballarus_pio_record_free(ballarus_profile_record *r);

#endif /* BALLARUS_PROFILE_IO_INTERNAL_H */
