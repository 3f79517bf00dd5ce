/* rt_inplace.c — what a dump writes of an existing profile
   (ballarus_rt_internal.h): the byte ranges in which the merged profile
   differs from the file it was read from, into the redo log; the whole
   profile when its records moved.  */

#define _GNU_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ballarus_rt_internal.h"
#include "runtime/profile_io.h"

#define BLOCK 4096u

int ballarus_rt_shape_of(const ballarus_profile *p, ballarus_rt_shape *s) {
  s->n = p->n_records;
  s->rec = calloc(p->n_records + 1, sizeof *s->rec);
  if (s->rec == NULL) return -1;
  for (uint32_t i = 0; i < p->n_records; i++) {
    const ballarus_profile_record *r = &p->records[i];
    s->rec[i] = (ballarus_rt_shape_rec){r->stamp, r->meta_size, r->n_counters,
                                        r->n_sparse};
  }
  return 0;
}

void ballarus_rt_shape_free(ballarus_rt_shape *s) {
  free(s->rec);
  s->rec = NULL;
  s->n = 0;
}

/* Whether p's records lie where the file's (s) did: same stamps, sizes.  */
static int same_shape(const ballarus_profile *p, const ballarus_rt_shape *s) {
  if (p->n_records != s->n) return 0;
  for (uint32_t i = 0; i < s->n; i++) {
    const ballarus_profile_record *r = &p->records[i];
    const ballarus_rt_shape_rec *o = &s->rec[i];
    if (r->stamp != o->stamp || r->meta_size != o->meta_size ||
        r->n_counters != o->n_counters || r->n_sparse != o->n_sparse)
      return 0;
  }
  return 1;
}

typedef struct {
  ballarus_redo *redo;
  int same;
  const unsigned char *old; /* the file's bytes as read (holes zero) */
  uint64_t old_size;
  const ballarus_profile *mine;
  uint64_t last_end; /* where the last range added ends, or UINT64_MAX */
} diff_ctx;

/* Adds bytes [off, off + n) of the new file (p NULL: zeros).  In a file
   whose records stayed where they were, a gap to the last range within one
   block is filled from the bytes read (the same there, or, for counters
   merged in place, the new ones): one write instead of two, and no block
   written that would not be anyway.  */
static int add(diff_ctx *c, uint64_t off, const unsigned char *p, uint64_t n) {
  if (n == 0) return 0;
  const uint64_t last = c->last_end;
  if (c->same && p != NULL && last != UINT64_MAX && off > last &&
      (last - 1) / BLOCK == off / BLOCK && off <= c->old_size &&
      ballarus_redo_add(c->redo, last, c->old + last, off - last) != 0)
    return -1;
  c->last_end = off + n;
  return ballarus_redo_add(c->redo, off, p, n);
}

static const unsigned char zeros[BLOCK];

/* Adds the bytes of [off, off + n) that differ from the old ones: per
   block of the file, from its first differing byte to its last.  p NULL:
   zeros.  Bytes past the old file's end are new.  */
static int add_changed(diff_ctx *c, uint64_t off, const unsigned char *p,
                       uint64_t n) {
  const uint64_t end = off + n;
  while (off < end) {
    if (off >= c->old_size) return add(c, off, p, end - off);
    uint64_t stop = (off / BLOCK + 1) * BLOCK;
    if (stop > end) stop = end;
    if (stop > c->old_size) stop = c->old_size;
    const size_t k = (size_t)(stop - off);
    const unsigned char *q = p != NULL ? p : zeros;
    const unsigned char *o = c->old + off;
    if (memcmp(q, o, k) != 0) {
      size_t a = 0, b = k;
      while (q[a] == o[a]) a++;
      while (q[b - 1] == o[b - 1]) b--;
      if (add(c, off + a, p != NULL ? p + a : NULL, b - a) != 0)
        return -1;
    }
    if (p != NULL) p += k;
    off = stop;
  }
  return 0;
}

/* Whether mine's record r counted in counter i (its blocks marked zero
   not read).  */
static int counted(const ballarus_profile_record *r, uint64_t i) {
  return ballarus_block_live(r->block_map, i) && r->counters[i] != 0;
}

/* The counters of [*lo, *hi) of mine's record r from its first non-zero
   one to its last (*lo == *hi when none).  */
static void counted_span(const ballarus_profile_record *r, uint64_t *lo,
                         uint64_t *hi) {
  const uint64_t B = BALLARUS_BLOCK_COUNTERS;
  const unsigned char *map = r->block_map;
  while (*lo < *hi && !counted(r, *lo)) {
    if (!ballarus_block_live(map, *lo)) /* a dead block: past it at once */
      *lo = (*lo / B + 1) * B < *hi ? (*lo / B + 1) * B : *hi;
    else
      (*lo)++;
  }
  while (*hi > *lo && !counted(r, *hi - 1)) {
    if (!ballarus_block_live(map, *hi - 1))
      *hi = (*hi - 1) / B * B > *lo ? (*hi - 1) / B * B : *lo;
    else
      (*hi)--;
  }
}

/* Counters merged in place into the bytes read (rec's counters lent from
   them, at their own offset): only those mine counted in changed (per
   chunk, from the first it counted in to the last).  */
static int add_counted(diff_ctx *c, const ballarus_profile_record *rec,
                       uint64_t off, const unsigned char *p, uint64_t n) {
  const ballarus_profile_record *m = NULL;
  for (uint32_t i = 0; i < c->mine->n_records && m == NULL; i++)
    if (c->mine->records[i].stamp == rec->stamp &&
        c->mine->records[i].n_counters == rec->n_counters)
      m = &c->mine->records[i];
  if (m == NULL || m->counters == NULL) return 0;
  const uint64_t first = (uint64_t)((const uint64_t *)p - rec->counters);
  const uint64_t last = first + n / 8;
  for (uint64_t lo = first; lo < last;) {
    uint64_t hi = (lo / BALLARUS_CHUNK_COUNTERS + 1) * BALLARUS_CHUNK_COUNTERS;
    if (hi > last) hi = last;
    uint64_t a = lo, b = hi;
    counted_span(m, &a, &b);
    if (a < b &&
        add(c, off + (a - first) * 8, p + (a - first) * 8, (b - a) * 8) != 0)
      return -1;
    lo = hi;
  }
  return 0;
}

static int on_piece(void *ctx, int kind, const ballarus_profile_record *rec,
                    uint64_t off, const void *bytes, uint64_t n) {
  diff_ctx *c = ctx;
  const unsigned char *p = bytes;
  /* A run of zero counter blocks shorter than a file block is written as
     zeros, not punched: a hole that small would only zero part of one.  */
  if (!c->same) return add(c, off, p != NULL || n >= BLOCK ? p : zeros, n);
  if (kind == BALLARUS_PIECE_META) return 0; /* the same records' */
  /* Blocks zero after the merge were zero before (the merge only adds, and
     a block map marks a block zero only where it is): not even compared,
     which would touch the pages of the bytes read that hold holes.  */
  if (kind == BALLARUS_PIECE_COUNTERS && p == NULL) return 0;
  if (kind == BALLARUS_PIECE_COUNTERS && p == c->old + off)
    return add_counted(c, rec, off, p, n);
  return add_changed(c, off, p, n);
}

int ballarus_rt_diff(ballarus_redo *redo, const char *name,
                     const ballarus_profile *merged,
                     const ballarus_profile *mine,
                     const ballarus_rt_shape *old_shape,
                     const unsigned char *old, uint64_t old_size, char *err,
                     size_t errlen) {
  diff_ctx c = {redo, 0, old, old_size, mine, UINT64_MAX};
  c.same = same_shape(merged, old_shape);
  /* The bytes read stay as they are until the log is written (the next
     file's read first has the log own them).  */
  ballarus_redo_lend(redo, old, old_size);
  uint64_t total = 0;
  if (ballarus_redo_begin_file(redo, name, 0, 0, -1) != 0 ||
      ballarus_profile_pieces(merged, BALLARUS_WRITE_TRUSTED, on_piece, &c,
                              &total, err, errlen) != 0)
    return -1;
  ballarus_redo_set_size(redo, total);
  return 0;
}
