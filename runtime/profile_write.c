/* profile_write.c — serialisation and safe writing of profile files
   (profile_io.h): records in stamp order, so equal profiles give equal
   bytes; every record validated before it is written, so nothing is
   written that the parser would reject; the file written through a
   temporary file of safe_file.h, renamed over the old one.  */

#define _GNU_SOURCE /* renameat2, ... */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/profile_io.h"
#include "runtime/profile_io_internal.h"
#include "runtime/safe_file.h"

/* ---------------------------------------------------------------------- */
/* Serialisation.                                                           */

/* Index permutation of p's records in stamp order (stable).  Parse and
   merge keep records sorted, so this is normally the identity; otherwise
   an insertion sort (no static comparator state: the runtime may run this
   in several threads' dumps of unrelated modules).  */
static uint32_t *stamp_order(const ballarus_profile *p) {
  uint32_t *idx = xmalloc((uint64_t)p->n_records * sizeof *idx);
  if (idx == NULL) return NULL;
  int sorted = 1;
  for (uint32_t i = 0; i < p->n_records; i++) {
    idx[i] = i;
    if (i > 0 && p->records[i - 1].stamp > p->records[i].stamp) sorted = 0;
  }
  if (!sorted) {
    /* Insertion sort: stable, no static state, fine for TU counts.  */
    for (uint32_t i = 1; i < p->n_records; i++) {
      uint32_t v = idx[i];
      uint32_t j = i;
      while (j > 0 && p->records[idx[j - 1]].stamp > p->records[v].stamp) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
  }
  return idx;
}

/* Validates a record before it is written, so we never write a file the
   parser would reject.  */
static int check_record(const ballarus_profile_record *r, int trusted,
                        char *err, size_t errlen) {
  if (r->metadata == NULL || r->meta_size < BALLARUS_META_HEADER_SIZE)
    return ballarus_pio_fail(err, errlen, "record 0x%016llx: no metadata blob",
                (ull)r->stamp);
  if (r->meta_size > UINT64_MAX / 2 || r->n_counters > UINT64_MAX / 16 ||
      r->n_sparse > UINT64_MAX / 64)
    return ballarus_pio_fail(err, errlen, "record 0x%016llx: sizes overflow",
                (ull)r->stamp);
  if ((r->n_counters > 0 && r->counters == NULL) ||
      (r->n_sparse > 0 && r->sparse == NULL))
    return ballarus_pio_fail(err, errlen, "record 0x%016llx: missing counters",
                (ull)r->stamp);
  char sub[200];
  if (ballarus_pio_check_meta(r->metadata, r->meta_size, 0, 0, r->stamp, r->n_counters,
                 trusted, sub, sizeof sub) != 0)
    return ballarus_pio_fail(err, errlen, "record 0x%016llx: %s", (ull)r->stamp, sub);
  for (uint64_t s = 1; s < r->n_sparse; s++)
    if (!sparse_less(&r->sparse[s - 1], &r->sparse[s]))
      return ballarus_pio_fail(err, errlen,
                  "record 0x%016llx: sparse entries not sorted/unique",
                  (ull)r->stamp);
  return 0;
}

/* A profile laid out for writing: the file header and record headers in
   one small buffer, every other piece pointing into the records (metadata,
   often borrowed from a mapping or the program itself, is never copied).
   A piece with p NULL is n zero bytes: counter blocks marked zero, never
   read; left as a hole of the file when at least a chunk long, else
   written from zero_run (a hole would split the gather write).  */
typedef struct {
  const void *p;
  uint64_t n;
  const ballarus_profile_record *rec; /* the record it belongs to, or NULL */
  unsigned char kind;                 /* BALLARUS_PIECE_* */
} chunk;

typedef struct {
  unsigned char *headers; /* file header, then 56 bytes per record */
  chunk *chunks;
  size_t n_chunks;
  uint64_t total;
  unsigned char *named; /* the named section (version 3), or NULL */
} layout;

static void layout_free(layout *L) {
  free(L->headers);
  free(L->chunks);
  free(L->named);
  memset(L, 0, sizeof *L);
}

static const unsigned char zeros[8];

/* The shortest run of zero counter blocks left as a hole, and the zeros a
   shorter one is written from.  */
#define HOLE_MIN (BALLARUS_CHUNK_COUNTERS * 8u)
static const unsigned char zero_run[HOLE_MIN];

/* Pieces for n counters with block map `map`: runs of live blocks, and
   runs of zero blocks as p NULL.  Returns the pieces' count (at most
   ballarus_block_count(n) + 1), written to out unless NULL.  */
static uint64_t counter_pieces(const ballarus_profile_record *r,
                               chunk *out) {
  const uint64_t *c = r->counters, n = r->n_counters;
  const unsigned char *map = r->block_map;
  if (n == 0) return 0;
  if (map == NULL) {
    if (out != NULL) out[0] = (chunk){c, n * 8, r, BALLARUS_PIECE_COUNTERS};
    return 1;
  }
  uint64_t m = 0;
  for (uint64_t k = 0, lo, hi; k < ballarus_block_count(n); k++) {
    block_bounds(k, n, &lo, &hi);
    const void *p = map[k] ? (const void *)(c + lo) : NULL;
    if (m > 0 && k > 0 && (map[k] != 0) == (map[k - 1] != 0)) {
      if (out != NULL) out[m - 1].n += (hi - lo) * 8;
      continue;
    }
    if (out != NULL) out[m] = (chunk){p, (hi - lo) * 8, r,
                                      BALLARUS_PIECE_COUNTERS};
    m++;
  }
  return m;
}

static int plan(const ballarus_profile *p, int trusted, layout *L, char *err,
                size_t errlen) {
  memset(L, 0, sizeof *L);
  uint64_t total = BALLARUS_PROFILE_HEADER_SIZE;
  for (uint32_t i = 0; i < p->n_records; i++) {
    const ballarus_profile_record *r = &p->records[i];
    if (check_record(r, trusted, err, errlen) != 0) return -1;
    if (r->runs > p->runs)
      return ballarus_pio_fail(err, errlen, "record 0x%016llx: runs %llu exceed the "
                  "profile's %llu", (ull)r->stamp, (ull)r->runs, (ull)p->runs);
    uint64_t bytes = BALLARUS_RECORD_HEADER_SIZE + pad8(r->meta_size) +
                     r->n_counters * 8 +
                     r->n_sparse * sizeof(ballarus_sparse_entry);
    if (bytes > UINT64_MAX - total)
      return ballarus_pio_fail(err, errlen, "profile too large");
    total += bytes;
  }
  uint32_t *idx = stamp_order(p);
  if (idx == NULL) return ballarus_pio_fail(err, errlen, "out of memory");
  for (uint32_t i = 1; i < p->n_records; i++) {
    if (p->records[idx[i - 1]].stamp == p->records[idx[i]].stamp) {
      uint64_t s = p->records[idx[i]].stamp;
      free(idx);
      return ballarus_pio_fail(err, errlen, "two records with stamp 0x%016llx", (ull)s);
    }
  }
  L->headers = xmalloc(BALLARUS_PROFILE_HEADER_SIZE +
                       (uint64_t)p->n_records * BALLARUS_RECORD_HEADER_SIZE);
  uint64_t n_pieces = 2 + 5 * (uint64_t)p->n_records;
  for (uint32_t i = 0; i < p->n_records; i++)
    n_pieces += counter_pieces(&p->records[i], NULL);
  L->chunks = xmalloc(n_pieces * sizeof *L->chunks);
  if (L->headers == NULL || L->chunks == NULL) {
    free(idx);
    layout_free(L);
    return ballarus_pio_fail(err, errlen, "out of memory");
  }
  unsigned char *out = L->headers;
  memcpy(out, BALLARUS_PROFILE_MAGIC, 8);
  wr32(out + 8, p->n_named > 0 ? BALLARUS_PROFILE_VERSION_NAMED
                               : BALLARUS_PROFILE_VERSION);
  wr32(out + 12, p->n_records);
  wr64(out + 16, p->runs);
  L->chunks[L->n_chunks++] =
      (chunk){out, BALLARUS_PROFILE_HEADER_SIZE, NULL, BALLARUS_PIECE_HEADER};
  uint64_t file_check = BALLARUS_HASH_INIT;
  for (uint32_t k = 0; k < p->n_records; k++) {
    const ballarus_profile_record *r = &p->records[idx[k]];
    unsigned char *h = out + BALLARUS_PROFILE_HEADER_SIZE +
                       (uint64_t)k * BALLARUS_RECORD_HEADER_SIZE;
    wr32(h, BALLARUS_RECORD_TU);
    wr32(h + 4, 0);
    wr64(h + 8, r->stamp);
    wr64(h + 16, r->meta_size);
    wr64(h + 24, r->n_counters);
    wr64(h + 32, r->n_sparse);
    wr64(h + 40, r->runs);
    const uint64_t sb = r->n_sparse * sizeof(ballarus_sparse_entry);
    const uint64_t check = record_check(h, r->metadata, r->counters,
                                        r->n_counters, r->block_map,
                                        r->sparse, sb, 1, r->chunk_hash);
    wr64(h + 48, check);
    file_check = file_check_add(file_check, check, r->stamp);
    L->chunks[L->n_chunks++] =
        (chunk){h, BALLARUS_RECORD_HEADER_SIZE, r, BALLARUS_PIECE_HEADER};
    L->chunks[L->n_chunks++] =
        (chunk){r->metadata, r->meta_size, r, BALLARUS_PIECE_META};
    if (pad8(r->meta_size) > r->meta_size)
      L->chunks[L->n_chunks++] = (chunk){
          zeros, pad8(r->meta_size) - r->meta_size, r, BALLARUS_PIECE_META};
    L->n_chunks += counter_pieces(r, L->chunks + L->n_chunks);
    if (sb > 0)
      L->chunks[L->n_chunks++] = (chunk){r->sparse, sb, r,
                                         BALLARUS_PIECE_SPARSE};
  }
  free(idx);
  if (p->n_named > 0) {
    uint64_t named_size;
    if (ballarus_pio_named_bytes(p, &L->named, &named_size, &file_check, err,
                                 errlen) != 0) {
      layout_free(L);
      return -1;
    }
    if (named_size > UINT64_MAX - total) {
      layout_free(L);
      return ballarus_pio_fail(err, errlen, "profile too large");
    }
    total += named_size;
    L->chunks[L->n_chunks++] =
        (chunk){L->named, named_size, NULL, BALLARUS_PIECE_NAMED};
  }
  wr64(out + 24, file_check);
  wr64(out + 32, ballarus_hash64(out, 32));
  L->total = total;
  return 0;
}

static int serialize(const ballarus_profile *p, int trusted,
                     unsigned char **buf, uint64_t *size, char *err,
                     size_t errlen) {
  *buf = NULL;
  *size = 0;
  layout L;
  if (plan(p, trusted, &L, err, errlen) != 0) return -1;
  unsigned char *out = xmalloc(L.total);
  if (out == NULL) {
    uint64_t t = L.total;
    layout_free(&L);
    return ballarus_pio_fail(err, errlen, "out of memory (%llu bytes)", (ull)t);
  }
  uint64_t off = 0;
  for (size_t i = 0; i < L.n_chunks; i++) {
    if (L.chunks[i].p == NULL)
      memset(out + off, 0, L.chunks[i].n);
    else
      memcpy(out + off, L.chunks[i].p, L.chunks[i].n);
    off += L.chunks[i].n;
  }
  *buf = out;
  *size = L.total;
  layout_free(&L);
  return 0;
}

int ballarus_profile_serialize(const ballarus_profile *p, unsigned char **buf,
                               uint64_t *size, char *err, size_t errlen) {
  return serialize(p, 0, buf, size, err, errlen);
}

/* Whether piece c is left as a hole of the file.  */
static int is_hole(const chunk *c) { return c->p == NULL && c->n >= HOLE_MIN; }

/* Writes pieces [i, j) of L, none a hole, with writev, as many per call as
   allowed.  */
static int write_run(int fd, const layout *L, size_t i, size_t j) {
  uint64_t done_in_chunk = 0;
  struct iovec iov[64];
  while (i < j) {
    int n = 0;
    for (size_t k = i; k < j && n < 64; k++, n++) {
      uint64_t skip = k == i ? done_in_chunk : 0;
      const void *p = L->chunks[k].p != NULL ? L->chunks[k].p : zero_run;
      iov[n].iov_base = (void *)((const unsigned char *)p + skip);
      iov[n].iov_len = (size_t)(L->chunks[k].n - skip);
    }
    ssize_t w = writev(fd, iov, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    uint64_t left = (uint64_t)w;
    while (i < j && left > 0) {
      uint64_t rest = L->chunks[i].n - done_in_chunk;
      if (left >= rest) {
        left -= rest;
        i++;
        done_in_chunk = 0;
      } else {
        done_in_chunk += left;
        left = 0;
      }
    }
    while (i < j && L->chunks[i].n == done_in_chunk) {
      i++;
      done_in_chunk = 0;
    }
  }
  return 0;
}

/* Writes the laid-out pieces to the new, empty file fd: holes are skipped
   (the file reads zeros there, and a short process's untouched counter
   pages cost neither a read nor page-cache pages), and the file is
   extended to its size when it ends in one.  */
static int write_chunks(int fd, const layout *L) {
  uint64_t at = 0;
  int hole_at_end = 0;
  for (size_t i = 0; i < L->n_chunks;) {
    if (is_hole(&L->chunks[i])) {
      at += L->chunks[i].n;
      if (lseek(fd, (off_t)at, SEEK_SET) < 0) return -1;
      hole_at_end = 1;
      i++;
      continue;
    }
    size_t j = i;
    while (j < L->n_chunks && !is_hole(&L->chunks[j])) at += L->chunks[j++].n;
    if (write_run(fd, L, i, j) != 0) return -1;
    hole_at_end = 0;
    i = j;
  }
  if (hole_at_end && ftruncate(fd, (off_t)at) != 0) return -1;
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Atomic write.                                                            */


int ballarus_profile_write_at(int dirfd, const char *name,
                              const ballarus_profile *p, int mode,
                              unsigned flags, char *err, size_t errlen) {
  layout L;
  if (plan(p, (flags & BALLARUS_WRITE_TRUSTED) != 0, &L, err, errlen) != 0)
    return -1;
  /* The temporary file has its final mode from its creation (safe_file.h):
     nobody can open it before the profile is complete and renamed.  */
  unsigned sf = (flags & BALLARUS_WRITE_EXCHANGE) ? BALLARUS_SF_EXCHANGE : 0;
  unsigned create = mode >= 0 ? BALLARUS_SF_EXACT_MODE : 0;
  size_t len = strlen(name) + 64;
  char *tmp = malloc(len);
  if (tmp == NULL) {
    layout_free(&L);
    return ballarus_pio_fail(err, errlen, "out of memory");
  }
  int fd = ballarus_sf_create_unique(dirfd, name, 1,
                                     mode >= 0 ? (unsigned)mode : 0666u,
                                     create, tmp, len, err, errlen);
  if (fd < 0) {
    free(tmp);
    layout_free(&L);
    return -1;
  }
  int rc = 0;
  if (write_chunks(fd, &L) != 0)
    rc = ballarus_pio_fail(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
  else if ((flags & BALLARUS_WRITE_FSYNC) && fsync(fd) != 0)
    rc = ballarus_pio_fail(err, errlen, "cannot fsync %s: %s", tmp, strerror(errno));
  if (close(fd) != 0 && rc == 0)
    rc = ballarus_pio_fail(err, errlen, "cannot close %s: %s", tmp, strerror(errno));
  if (rc == 0)
    rc = ballarus_sf_commit(dirfd, tmp, name, sf, err, errlen);
  else
    unlinkat(dirfd, tmp, 0);
  free(tmp);
  layout_free(&L);
  return rc;
}

int ballarus_profile_write_new(int dirfd, const char *name,
                               const ballarus_profile *p, int mode,
                               unsigned flags, int *created, char *err,
                               size_t errlen) {
  *created = 0;
  layout L;
  if (plan(p, (flags & BALLARUS_WRITE_TRUSTED) != 0, &L, err, errlen) != 0)
    return -1;
  int fd = ballarus_sf_create(dirfd, name, mode >= 0 ? (unsigned)mode : 0666u,
                              mode >= 0 ? BALLARUS_SF_EXACT_MODE : 0, err,
                              errlen);
  int rc = 0;
  if (fd < 0) {
    rc = -1;
  } else {
    *created = 1;
    if (write_chunks(fd, &L) != 0)
      rc = ballarus_pio_fail(err, errlen, "cannot write: %s", strerror(errno));
    if (close(fd) != 0 && rc == 0)
      rc = ballarus_pio_fail(err, errlen, "cannot close: %s", strerror(errno));
  }
  layout_free(&L);
  return rc;
}

int ballarus_profile_pieces(const ballarus_profile *p, unsigned flags,
                            ballarus_piece_fn fn, void *ctx, uint64_t *total,
                            char *err, size_t errlen) {
  layout L;
  if (plan(p, (flags & BALLARUS_WRITE_TRUSTED) != 0, &L, err, errlen) != 0)
    return -1;
  uint64_t off = 0;
  int rc = 0;
  for (size_t i = 0; i < L.n_chunks && rc == 0; i++) {
    const chunk *c = &L.chunks[i];
    rc = fn(ctx, c->kind, c->rec, off, c->p, c->n);
    off += c->n;
  }
  if (rc != 0) ballarus_pio_fail(err, errlen, "out of memory");
  *total = L.total;
  layout_free(&L);
  return rc;
}

int ballarus_profile_write_runs_in_place(int fd, const ballarus_profile *p,
                                         char *err, size_t errlen) {
  if (p->n_records != 1)
    return ballarus_pio_fail(err, errlen, "not a profile of one record");
  layout L;
  if (plan(p, 1, &L, err, errlen) != 0) return -1;
  /* The file header from its version on (a version 2 file becomes a
     version 4 one: its record check is computed anew), then the record
     header up to its check: the only bytes a change of runs changes,
     contiguous.  */
  const size_t from = 8;
  const size_t n = BALLARUS_PROFILE_HEADER_SIZE + BALLARUS_RECORD_HEADER_SIZE -
                   from;
  ssize_t w;
  do {
    w = pwrite(fd, L.headers + from, n, (off_t)from);
  } while (w < 0 && errno == EINTR);
  int rc = 0;
  if (w != (ssize_t)n)
    rc = ballarus_pio_fail(err, errlen, "cannot write: %s",
                           w < 0 ? strerror(errno) : "short write");
  layout_free(&L);
  return rc;
}

int ballarus_profile_write_file(const char *path, const ballarus_profile *p,
                                char *err, size_t errlen) {
  const char *name;
  int dfd = ballarus_sf_open_parent(path, 0, 0, &name, err, errlen);
  if (dfd < 0) return -1;
  int rc = ballarus_profile_write_at(dfd, name, p, -1, BALLARUS_WRITE_FSYNC,
                                     err, errlen);
  /* Make the rename itself durable.  Best effort: some file systems refuse
     fsync on directories.  */
  if (rc == 0) (void)fsync(dfd);
  close(dfd);
  return rc;
}
