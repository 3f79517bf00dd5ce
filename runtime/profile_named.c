/* profile_named.c — the named section of a profile (named runs, layout:
   ballarus_format.h): validation, parsing, serialisation and the union of
   two profiles' named records.  Part of the profile codec (see
   profile_io.c), plain C11, libc only.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/profile_io_internal.h"

int ballarus_test_name_valid(const char *name, uint64_t size) {
  if (size == 0 || size > BALLARUS_TEST_NAME_MAX) return 0;
  for (uint64_t i = 0; i < size; i++)
    if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e)
      return 0;
  return 1;
}

/* Orders named records by name (bytes, a prefix first), then stamp.  */
static int named_cmp(const ballarus_named_record *a,
                     const ballarus_named_record *b) {
  uint32_t n = a->name_size < b->name_size ? a->name_size : b->name_size;
  int c = memcmp(a->name, b->name, n);
  if (c != 0) return c;
  if (a->name_size != b->name_size) return a->name_size < b->name_size ? -1 : 1;
  if (a->stamp != b->stamp) return a->stamp < b->stamp ? -1 : 1;
  return 0;
}

/* The record of `p` with `stamp`, or NULL.  */
static const ballarus_profile_record *record_of(const ballarus_profile *p,
                                                uint64_t stamp) {
  uint32_t lo = 0, hi = p->n_records;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->records[mid].stamp < stamp)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < p->n_records && p->records[lo].stamp == stamp)
    return &p->records[lo];
  /* A profile being serialised need not be sorted yet.  */
  for (uint32_t i = 0; i < p->n_records; i++)
    if (p->records[i].stamp == stamp) return &p->records[i];
  return NULL;
}

void ballarus_pio_named_free(ballarus_named_record *n, uint64_t count) {
  if (n == NULL) return;
  for (uint64_t i = 0; i < count; i++) {
    free(n[i].name);
    free(n[i].dense);
    free(n[i].sparse);
  }
  free(n);
}

/* Checks named record k of p against p's records and record k-1
   (dense_size: its encoded pairs' bytes; dense_checked: its pairs were
   checked as they were decoded).  On failure *field is the offending
   field's offset from the record's start (its file offset, when parsing,
   is added by the caller).  */
static int check_named(const ballarus_profile *p, uint64_t k,
                       uint64_t dense_size, int dense_checked,
                       uint64_t *field, char *err, size_t errlen) {
  const ballarus_named_record *n = &p->named[k];
  const uint64_t data = BALLARUS_NAMED_HEADER_SIZE + pad8(n->name_size);
  *field = 4;
  if (!ballarus_test_name_valid(n->name, n->name_size))
    return ballarus_pio_fail(err, errlen,
                             "named record %llu: name of %u bytes is not 1 to "
                             "%u printable characters",
                             (ull)k, n->name_size, BALLARUS_TEST_NAME_MAX);
  const ballarus_profile_record *r = record_of(p, n->stamp);
  *field = 8;
  if (r == NULL)
    return ballarus_pio_fail(err, errlen,
                             "named record %llu (test '%s'): stamp 0x%016llx "
                             "is no record of the file",
                             (ull)k, n->name, (ull)n->stamp);
  *field = 16;
  if (n->runs > r->runs)
    return ballarus_pio_fail(err, errlen,
                             "named record %llu (test '%s'): runs %llu exceed "
                             "its record's %llu",
                             (ull)k, n->name, (ull)n->runs, (ull)r->runs);
  /* A sealed record's data were checked when it was parsed.  */
  for (uint64_t j = 0; !dense_checked && n->sealed == NULL && j < n->n_dense;
       j++) {
    *field = data;
    if (n->dense[j].index >= r->n_counters ||
        (j > 0 && n->dense[j].index <= n->dense[j - 1].index))
      return ballarus_pio_fail(err, errlen,
                               "named record %llu (test '%s'): counter pair "
                               "%llu: index %llu not increasing or not below "
                               "n_counters %llu",
                               (ull)k, n->name, (ull)j,
                               (ull)n->dense[j].index, (ull)r->n_counters);
  }
  for (uint64_t j = 1; n->sealed == NULL && j < n->n_sparse; j++) {
    *field = data + pad8(dense_size) + j * sizeof(ballarus_sparse_entry);
    if (!sparse_less(&n->sparse[j - 1], &n->sparse[j]))
      return ballarus_pio_fail(err, errlen,
                               "named record %llu (test '%s'): sparse entry "
                               "%llu not sorted after the previous one",
                               (ull)k, n->name, (ull)j);
  }
  *field = 0;
  if (k > 0 && named_cmp(&p->named[k - 1], n) >= 0)
    return ballarus_pio_fail(err, errlen,
                             "named record %llu (test '%s'): not sorted after "
                             "the previous one (by name, then stamp, each "
                             "once)",
                             (ull)k, n->name);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* The pairs' encoding: per pair the index's distance from the previous
   index + 1 (the first: the index itself), then the count, each an
   unsigned LEB128 varint in its shortest form.  */

static unsigned varint_size(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Reads one varint of at most 10 bytes from p[*at, end); -1 if it is
   truncated, longer than its shortest form or above 2^64 - 1.  */
static int get_varint(const unsigned char *p, uint64_t end, uint64_t *at,
                      uint64_t *v) {
  uint64_t x = 0;
  for (unsigned i = 0; i < 10 && *at < end; i++) {
    const unsigned char b = p[(*at)++];
    if (i == 9 && b > 1) return -1;
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      if (i > 0 && b == 0) return -1;
      *v = x;
      return 0;
    }
  }
  return -1;
}

static uint64_t dense_size_of(const ballarus_named_record *n) {
  uint64_t size = 0;
  for (uint64_t j = 0; j < n->n_dense; j++)
    size += varint_size(j == 0 ? n->dense[0].index
                               : n->dense[j].index - n->dense[j - 1].index - 1) +
            varint_size(n->dense[j].count);
  return size;
}

static unsigned char *put_dense(unsigned char *p,
                                const ballarus_named_record *n) {
  for (uint64_t j = 0; j < n->n_dense; j++) {
    p = put_varint(p, j == 0 ? n->dense[0].index
                             : n->dense[j].index - n->dense[j - 1].index - 1);
    p = put_varint(p, n->dense[j].count);
  }
  return p;
}

/* Decodes the n->n_dense pairs of d[0, size) into n->dense; every index
   below n_counters.  On failure *bad is the offset in d of the pair at
   fault.  */
static int get_dense(const unsigned char *d, uint64_t size,
                     ballarus_named_record *n, uint64_t n_counters,
                     uint64_t *bad, char *why, size_t len) {
  uint64_t at = 0, next = 0; /* the lowest index the pair may have */
  for (uint64_t j = 0; j < n->n_dense; j++) {
    uint64_t gap, count;
    *bad = at;
    /* Most gaps and counts are below 128: one byte each.  */
    if (size - at >= 2 && (d[at] | d[at + 1]) < 0x80) {
      gap = d[at];
      count = d[at + 1];
      at += 2;
    } else if (get_varint(d, size, &at, &gap) != 0 ||
               get_varint(d, size, &at, &count) != 0)
      return ballarus_pio_fail(why, len,
                               "counter pair %llu: bad varint (truncated, "
                               "not in its shortest form or above 2^64 - 1)",
                               (ull)j);
    if (next >= n_counters || gap >= n_counters - next)
      return ballarus_pio_fail(why, len,
                               "counter pair %llu: index not below "
                               "n_counters %llu",
                               (ull)j, (ull)n_counters);
    n->dense[j] = (ballarus_named_entry){next + gap, count};
    next = next + gap + 1;
  }
  *bad = at;
  if (at != size)
    return ballarus_pio_fail(why, len,
                             "%llu bytes after the last counter pair",
                             (ull)(size - at));
  return 0;
}

/* The record's check: its header's first 48 bytes, then its data (name,
   pairs and sparse entries with their padding).  */
static uint64_t named_check(const unsigned char *header,
                            const unsigned char *data, uint64_t data_bytes) {
  uint64_t h = ballarus_hash64(header, BALLARUS_NAMED_HEADER_SIZE - 8);
  return ballarus_hash64_update(h, data, data_bytes);
}

/* The record at h's header fields, bounded by the `left` bytes after its
   header; its data's size in *data_bytes.  */
static int named_header(const unsigned char *h, uint64_t at, uint64_t k,
                        uint64_t left, uint64_t *data_bytes, char *err,
                        size_t errlen) {
  uint32_t tag = rd32(h), name_size = rd32(h + 4);
  uint64_t n_dense = rd64(h + 24), dense_size = rd64(h + 32),
           n_sparse = rd64(h + 40);
  if (tag != BALLARUS_RECORD_NAMED)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: bad tag 0x%08x "
                             "(expected 0x%08x)",
                             (ull)at, (ull)k, tag, BALLARUS_RECORD_NAMED);
  if (name_size == 0 || name_size > BALLARUS_TEST_NAME_MAX)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: name_size %u "
                             "(expected 1 to %u)",
                             (ull)(at + 4), (ull)k, name_size,
                             BALLARUS_TEST_NAME_MAX);
  if (dense_size > left || n_dense > dense_size / 2 ||
      n_sparse > left / sizeof(ballarus_sparse_entry) ||
      pad8(name_size) + pad8(dense_size) +
              n_sparse * sizeof(ballarus_sparse_entry) >
          left)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: truncated (%u "
                             "name bytes, %llu pairs in %llu bytes, %llu "
                             "sparse entries do not fit in the %llu bytes "
                             "left)",
                             (ull)at, (ull)k, name_size, (ull)n_dense,
                             (ull)dense_size, (ull)n_sparse, (ull)left);
  *data_bytes = pad8(name_size) + pad8(dense_size) +
                n_sparse * sizeof(ballarus_sparse_entry);
  return 0;
}

/* -1 when one of p[from, to) is not zero (*at: its offset in p).  */
static int nonzero_at(const unsigned char *p, uint64_t from, uint64_t to,
                      uint64_t *at) {
  for (*at = from; *at < to; (*at)++)
    if (p[*at] != 0) return -1;
  return 0;
}

/* Where a sealed record's data are decoded to be checked: grown as
   needed, freed after the section.  */
typedef struct {
  ballarus_named_entry *dense;
  ballarus_sparse_entry *sparse;
  uint64_t dense_cap, sparse_cap;
} scratch;

/* n's dense and sparse arrays: its own (malloc'd), or the scratch's.  */
static int data_arrays(ballarus_named_record *n, scratch *s) {
  if (s == NULL) {
    n->dense = xmalloc(n->n_dense * sizeof *n->dense);
    n->sparse = xmalloc(n->n_sparse * sizeof *n->sparse);
    return n->dense == NULL || n->sparse == NULL ? -1 : 0;
  }
  if (n->n_dense > s->dense_cap) {
    free(s->dense);
    s->dense_cap = 0;
    if ((s->dense = xmalloc(n->n_dense * sizeof *s->dense)) == NULL) return -1;
    s->dense_cap = n->n_dense;
  }
  if (n->n_sparse > s->sparse_cap) {
    free(s->sparse);
    s->sparse_cap = 0;
    if ((s->sparse = xmalloc(n->n_sparse * sizeof *s->sparse)) == NULL)
      return -1;
    s->sparse_cap = n->n_sparse;
  }
  n->dense = s->dense;
  n->sparse = s->sparse;
  return 0;
}

/* Parses named record k at data[*off] into p->named[k] (p->n_named counts
   it, so that the caller frees it on failure); with a scratch, sealed.  */
static int parse_named_record(const unsigned char *data, uint64_t size,
                              uint64_t *off, uint64_t k, scratch *seal,
                              ballarus_profile *p, uint64_t *file_check,
                              char *err, size_t errlen) {
  const uint64_t at = *off;
  if (size - at < BALLARUS_NAMED_HEADER_SIZE)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: header "
                             "truncated (file ends after %llu of %u bytes)",
                             (ull)at, (ull)k, (ull)(size - at),
                             BALLARUS_NAMED_HEADER_SIZE);
  const unsigned char *h = data + at;
  uint64_t data_bytes = 0;
  if (named_header(h, at, k, size - at - BALLARUS_NAMED_HEADER_SIZE,
                   &data_bytes, err, errlen) != 0)
    return -1;
  const uint32_t name_size = rd32(h + 4);
  const uint64_t dense_size = rd64(h + 32);
  const unsigned char *name = h + BALLARUS_NAMED_HEADER_SIZE;
  const unsigned char *dense = name + pad8(name_size);
  const unsigned char *sparse = dense + pad8(dense_size);
  const uint64_t sparse_bytes = rd64(h + 40) * sizeof(ballarus_sparse_entry);
  if (named_check(h, name, data_bytes) != rd64(h + 48))
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: check mismatch "
                             "(record corrupted)",
                             (ull)(at + 48), (ull)k);
  uint64_t z;
  if (nonzero_at(name, name_size, pad8(name_size), &z) != 0)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: nonzero name "
                             "padding",
                             (ull)(name - data + z), (ull)k);
  if (nonzero_at(dense, dense_size, pad8(dense_size), &z) != 0)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: nonzero "
                             "padding after the counter pairs",
                             (ull)(dense - data + z), (ull)k);
  ballarus_named_record *n = &p->named[k];
  p->n_named = k + 1;
  n->name_size = name_size;
  n->stamp = rd64(h + 8);
  n->runs = rd64(h + 16);
  n->n_dense = rd64(h + 24);
  n->n_sparse = rd64(h + 40);
  n->name = xmalloc((uint64_t)name_size + 1);
  if (n->name == NULL || data_arrays(n, seal) != 0) {
    if (seal != NULL) n->dense = NULL, n->sparse = NULL;
    return ballarus_pio_fail(err, errlen, "out of memory");
  }
  memcpy(n->name, name, name_size);
  n->name[name_size] = '\0';
  if (sparse_bytes > 0) /* an empty scratch array is NULL */
    memcpy(n->sparse, sparse, sparse_bytes);
  const ballarus_profile_record *r = record_of(p, n->stamp);
  uint64_t field;
  char why[400];
  int rc = 0;
  if (get_dense(dense, dense_size, n, r == NULL ? UINT64_MAX : r->n_counters,
                &field, why, sizeof why) != 0)
    rc = ballarus_pio_fail(err, errlen, "offset %llu: named record %llu: %s",
                           (ull)(dense - data + field), (ull)k, why);
  else if (check_named(p, k, dense_size, 1, &field, why, sizeof why) != 0)
    rc = ballarus_pio_fail(err, errlen, "offset %llu: %s", (ull)(at + field),
                           why);
  if (seal != NULL) { /* the scratch's, not the record's */
    n->dense = NULL;
    n->sparse = NULL;
    n->sealed = h;
    n->sealed_size = BALLARUS_NAMED_HEADER_SIZE + data_bytes;
  }
  if (rc != 0) return -1;
  *file_check = file_check_add(*file_check, rd64(h + 48), n->stamp);
  *off = at + BALLARUS_NAMED_HEADER_SIZE + data_bytes;
  return 0;
}

int ballarus_pio_parse_named(const unsigned char *data, uint64_t size,
                             uint64_t *off, int seal, ballarus_profile *p,
                             uint64_t *file_check, char *err, size_t errlen) {
  const uint64_t at = *off;
  if (size - at < BALLARUS_NAMED_SECTION_SIZE)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named section header truncated "
                             "(file ends after %llu of %u bytes)",
                             (ull)at, (ull)(size - at),
                             BALLARUS_NAMED_SECTION_SIZE);
  uint32_t tag = rd32(data + at), flags = rd32(data + at + 4);
  uint64_t n_named = rd64(data + at + 8);
  if (tag != BALLARUS_SECTION_NAMED || flags != 0)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: bad named section header (tag "
                             "0x%08x, flags 0x%x; expected 0x%08x, 0)",
                             (ull)at, tag, flags, BALLARUS_SECTION_NAMED);
  uint64_t room = (size - at - BALLARUS_NAMED_SECTION_SIZE) /
                  (BALLARUS_NAMED_HEADER_SIZE + 8);
  if (n_named > room)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: n_named %llu impossible: the "
                             "remaining bytes hold at most %llu named records",
                             (ull)(at + 8), (ull)n_named, (ull)room);
  *file_check =
      ballarus_hash64_update(*file_check, data + at, BALLARUS_NAMED_SECTION_SIZE);
  p->named = calloc(n_named == 0 ? 1 : n_named, sizeof *p->named);
  if (p->named == NULL) return ballarus_pio_fail(err, errlen, "out of memory");
  *off = at + BALLARUS_NAMED_SECTION_SIZE;
  scratch s = {0};
  int rc = 0;
  for (uint64_t k = 0; k < n_named && rc == 0; k++)
    rc = parse_named_record(data, size, off, k, seal ? &s : NULL, p,
                            file_check, err, errlen);
  free(s.dense);
  free(s.sparse);
  return rc;
}

int ballarus_pio_named_bytes(const ballarus_profile *p, unsigned char **buf,
                             uint64_t *size, uint64_t *file_check, char *err,
                             size_t errlen) {
  *buf = NULL;
  *size = 0;
  uint64_t total = BALLARUS_NAMED_SECTION_SIZE;
  uint64_t *dense_sizes = xmalloc(p->n_named * sizeof *dense_sizes);
  if (dense_sizes == NULL) return ballarus_pio_fail(err, errlen, "out of memory");
  for (uint64_t k = 0; k < p->n_named; k++) {
    const ballarus_named_record *n = &p->named[k];
    uint64_t field;
    dense_sizes[k] = n->sealed != NULL ? 0 : dense_size_of(n);
    if (check_named(p, k, dense_sizes[k], 0, &field, err, errlen) != 0) {
      free(dense_sizes);
      return -1;
    }
    total += n->sealed != NULL
                 ? n->sealed_size
                 : BALLARUS_NAMED_HEADER_SIZE + pad8(n->name_size) +
                       pad8(dense_sizes[k]) +
                       n->n_sparse * sizeof(ballarus_sparse_entry);
  }
  unsigned char *out = calloc(1, total);
  if (out == NULL) {
    free(dense_sizes);
    return ballarus_pio_fail(err, errlen, "out of memory (%llu bytes)",
                             (ull)total);
  }
  wr32(out, BALLARUS_SECTION_NAMED);
  wr32(out + 4, 0);
  wr64(out + 8, p->n_named);
  uint64_t fc = ballarus_hash64_update(*file_check, out,
                                       BALLARUS_NAMED_SECTION_SIZE);
  uint64_t o = BALLARUS_NAMED_SECTION_SIZE;
  for (uint64_t k = 0; k < p->n_named; k++) {
    const ballarus_named_record *n = &p->named[k];
    unsigned char *h = out + o;
    if (n->sealed != NULL) {
      memcpy(h, n->sealed, n->sealed_size);
      fc = file_check_add(fc, rd64(h + 48), n->stamp);
      o += n->sealed_size;
      continue;
    }
    const uint64_t sb = n->n_sparse * sizeof(ballarus_sparse_entry);
    wr32(h, BALLARUS_RECORD_NAMED);
    wr32(h + 4, n->name_size);
    wr64(h + 8, n->stamp);
    wr64(h + 16, n->runs);
    wr64(h + 24, n->n_dense);
    wr64(h + 32, dense_sizes[k]);
    wr64(h + 40, n->n_sparse);
    unsigned char *d = h + BALLARUS_NAMED_HEADER_SIZE;
    memcpy(d, n->name, n->name_size);
    unsigned char *pairs = d + pad8(n->name_size);
    put_dense(pairs, n);
    if (sb > 0) memcpy(pairs + pad8(dense_sizes[k]), n->sparse, sb);
    const uint64_t data_bytes =
        pad8(n->name_size) + pad8(dense_sizes[k]) + sb;
    const uint64_t check = named_check(h, d, data_bytes);
    wr64(h + 48, check);
    fc = file_check_add(fc, check, n->stamp);
    o += BALLARUS_NAMED_HEADER_SIZE + data_bytes;
  }
  free(dense_sizes);
  *buf = out;
  *size = total;
  *file_check = fc;
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Union of two profiles' named records.                                    */

/* Merges two sorted pair arrays into `out` (equal indices added modulo
   2^64, zero sums dropped); returns the count.  */
static uint64_t merge_dense(const ballarus_named_entry *a, uint64_t na,
                            const ballarus_named_entry *b, uint64_t nb,
                            ballarus_named_entry *out) {
  uint64_t i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && a[i].index < b[j].index)) {
      out[n++] = a[i++];
    } else if (i == na || b[j].index < a[i].index) {
      out[n++] = b[j++];
    } else {
      out[n] = a[i];
      out[n].count = ballarus_count_add(a[i].count, b[j].count);
      if (out[n].count != 0) n++;
      i++;
      j++;
    }
  }
  return n;
}

/* A sealed record's data decoded into arrays of its own (it was checked
   when parsed); a copy of the pointers of any other.  */
static int unsealed(const ballarus_named_record *n, ballarus_named_record *u) {
  *u = *n;
  if (n->sealed == NULL) return 0;
  const unsigned char *h = n->sealed;
  const unsigned char *dense = h + BALLARUS_NAMED_HEADER_SIZE + pad8(n->name_size);
  const uint64_t dense_size = rd64(h + 32);
  u->sealed = NULL;
  uint64_t bad;
  char why[200];
  if (data_arrays(u, NULL) != 0 ||
      get_dense(dense, dense_size, u, UINT64_MAX, &bad, why, sizeof why) != 0) {
    free(u->dense); /* get_dense cannot fail: checked when parsed */
    free(u->sparse);
    return -1;
  }
  memcpy(u->sparse, dense + pad8(dense_size),
         n->n_sparse * sizeof(ballarus_sparse_entry));
  return 0;
}

static void free_unsealed(const ballarus_named_record *n,
                          ballarus_named_record *u) {
  if (n->sealed == NULL) return;
  free(u->dense);
  free(u->sparse);
}

/* d = a + b (b may be NULL: d = a's copy, sealed if a is).  -1 when out of
   memory.  */
static int combine(ballarus_named_record *d, const ballarus_named_record *a,
                   const ballarus_named_record *b) {
  static const ballarus_named_record none;
  if (b == NULL && a->sealed != NULL) {
    *d = *a;
    d->name = xmalloc((uint64_t)a->name_size + 1);
    if (d->name == NULL) return -1;
    memcpy(d->name, a->name, (size_t)a->name_size + 1);
    return 0;
  }
  if (a->sealed != NULL || (b != NULL && b->sealed != NULL)) {
    ballarus_named_record ua, ub;
    if (unsealed(a, &ua) != 0) return -1;
    if (b != NULL && unsealed(b, &ub) != 0) {
      free_unsealed(a, &ua);
      return -1;
    }
    int rc = combine(d, &ua, b == NULL ? NULL : &ub);
    free_unsealed(a, &ua);
    if (b != NULL) free_unsealed(b, &ub);
    return rc;
  }
  if (b == NULL) b = &none;
  memset(d, 0, sizeof *d);
  d->name_size = a->name_size;
  d->stamp = a->stamp;
  d->runs = ballarus_sat_add(a->runs, b->runs);
  d->name = xmalloc((uint64_t)a->name_size + 1);
  d->dense = xmalloc((a->n_dense + b->n_dense) * sizeof *d->dense);
  d->sparse = xmalloc((a->n_sparse + b->n_sparse) * sizeof *d->sparse);
  if (d->name == NULL || d->dense == NULL || d->sparse == NULL) return -1;
  memcpy(d->name, a->name, a->name_size);
  d->name[a->name_size] = '\0';
  d->n_dense = merge_dense(a->dense, a->n_dense, b->dense, b->n_dense,
                           d->dense);
  d->n_sparse = ballarus_pio_merge_sparse(a->sparse, a->n_sparse, b->sparse,
                                          b->n_sparse, d->sparse);
  return 0;
}

int ballarus_pio_named_union(const ballarus_profile *dst,
                             const ballarus_profile *src,
                             ballarus_named_record **out, uint64_t *n_out,
                             char *err, size_t errlen) {
  *out = NULL;
  *n_out = 0;
  const uint64_t nd = dst->n_named, ns = src->n_named;
  ballarus_named_record *m = calloc(nd + ns + 1, sizeof *m);
  if (m == NULL) return ballarus_pio_fail(err, errlen, "out of memory");
  uint64_t i = 0, j = 0, n = 0;
  while (i < nd || j < ns) {
    int c = i == nd   ? 1
            : j == ns ? -1
                      : named_cmp(&dst->named[i], &src->named[j]);
    int rc = c < 0   ? combine(&m[n], &dst->named[i++], NULL)
             : c > 0 ? combine(&m[n], &src->named[j++], NULL)
                     : combine(&m[n], &dst->named[i++], &src->named[j++]);
    n++;
    if (rc != 0) {
      ballarus_pio_named_free(m, n);
      return ballarus_pio_fail(err, errlen, "out of memory");
    }
  }
  *out = m;
  *n_out = n;
  return 0;
}

void ballarus_pio_named_drop_orphans(ballarus_profile *p) {
  uint64_t n = 0;
  for (uint64_t k = 0; k < p->n_named; k++) {
    ballarus_named_record *r = &p->named[k];
    if (record_of(p, r->stamp) == NULL) {
      free(r->name);
      free(r->dense);
      free(r->sparse);
      continue;
    }
    p->named[n++] = *r;
  }
  p->n_named = n;
}
