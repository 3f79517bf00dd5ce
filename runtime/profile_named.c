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

/* Checks named record k of p against p's records and record k-1.  On
   failure *field is the offending field's offset from the record's start
   (its file offset, when parsing, is added by the caller).  */
static int check_named(const ballarus_profile *p, uint64_t k, uint64_t *field,
                       char *err, size_t errlen) {
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
  for (uint64_t j = 0; j < n->n_dense; j++) {
    *field = data + j * sizeof(ballarus_named_entry);
    if (n->dense[j].index >= r->n_counters ||
        (j > 0 && n->dense[j].index <= n->dense[j - 1].index))
      return ballarus_pio_fail(err, errlen,
                               "named record %llu (test '%s'): counter pair "
                               "%llu: index %llu not increasing or not below "
                               "n_counters %llu",
                               (ull)k, n->name, (ull)j,
                               (ull)n->dense[j].index, (ull)r->n_counters);
  }
  for (uint64_t j = 1; j < n->n_sparse; j++) {
    *field = data + n->n_dense * sizeof(ballarus_named_entry) +
             j * sizeof(ballarus_sparse_entry);
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

static uint64_t named_check(const unsigned char *header, const char *name,
                            uint32_t name_size, const void *dense,
                            uint64_t dense_bytes, const void *sparse,
                            uint64_t sparse_bytes) {
  /* The name with its padding as one chunk of whole words: the hash of
     chunks is that of their concatenation only for such chunks.  */
  unsigned char padded[BALLARUS_TEST_NAME_MAX + 8] = {0};
  memcpy(padded, name, name_size);
  uint64_t h = ballarus_hash64(header, 40);
  h = ballarus_hash64_update(h, padded, pad8(name_size));
  h = ballarus_hash64_update(h, dense, dense_bytes);
  return ballarus_hash64_update(h, sparse, sparse_bytes);
}

/* Parses named record k at data[*off] into p->named[k] (p->n_named counts
   it, so that the caller frees it on failure).  */
static int parse_named_record(const unsigned char *data, uint64_t size,
                              uint64_t *off, uint64_t k, ballarus_profile *p,
                              uint64_t *file_check, char *err,
                              size_t errlen) {
  const uint64_t at = *off;
  if (size - at < BALLARUS_NAMED_HEADER_SIZE)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: header "
                             "truncated (file ends after %llu of %u bytes)",
                             (ull)at, (ull)k, (ull)(size - at),
                             BALLARUS_NAMED_HEADER_SIZE);
  const unsigned char *h = data + at;
  uint32_t tag = rd32(h), name_size = rd32(h + 4);
  uint64_t n_dense = rd64(h + 24), n_sparse = rd64(h + 32);
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
  uint64_t left = size - at - BALLARUS_NAMED_HEADER_SIZE;
  const uint64_t name_bytes = pad8(name_size);
  if (n_dense > left / sizeof(ballarus_named_entry) ||
      n_sparse > left / sizeof(ballarus_sparse_entry) ||
      name_bytes + n_dense * sizeof(ballarus_named_entry) +
              n_sparse * sizeof(ballarus_sparse_entry) >
          left)
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: truncated (%u "
                             "name bytes, %llu pairs, %llu sparse entries do "
                             "not fit in the %llu bytes left)",
                             (ull)at, (ull)k, name_size, (ull)n_dense,
                             (ull)n_sparse, (ull)left);
  const unsigned char *name = h + BALLARUS_NAMED_HEADER_SIZE;
  const unsigned char *dense = name + name_bytes;
  const uint64_t dense_bytes = n_dense * sizeof(ballarus_named_entry);
  const unsigned char *sparse = dense + dense_bytes;
  const uint64_t sparse_bytes = n_sparse * sizeof(ballarus_sparse_entry);
  if (named_check(h, (const char *)name, name_size, dense, dense_bytes, sparse,
                  sparse_bytes) != rd64(h + 40))
    return ballarus_pio_fail(err, errlen,
                             "offset %llu: named record %llu: check mismatch "
                             "(record corrupted)",
                             (ull)(at + 40), (ull)k);
  for (uint64_t b = name_size; b < name_bytes; b++)
    if (name[b] != 0)
      return ballarus_pio_fail(err, errlen,
                               "offset %llu: named record %llu: nonzero name "
                               "padding",
                               (ull)(at + BALLARUS_NAMED_HEADER_SIZE + b),
                               (ull)k);
  ballarus_named_record *n = &p->named[k];
  p->n_named = k + 1;
  n->name_size = name_size;
  n->stamp = rd64(h + 8);
  n->runs = rd64(h + 16);
  n->n_dense = n_dense;
  n->n_sparse = n_sparse;
  n->name = xmalloc((uint64_t)name_size + 1);
  n->dense = xmalloc(dense_bytes);
  n->sparse = xmalloc(sparse_bytes);
  if (n->name == NULL || n->dense == NULL || n->sparse == NULL)
    return ballarus_pio_fail(err, errlen, "out of memory");
  memcpy(n->name, name, name_size);
  n->name[name_size] = '\0';
  memcpy(n->dense, dense, dense_bytes);
  memcpy(n->sparse, sparse, sparse_bytes);
  uint64_t field;
  char why[400];
  if (check_named(p, k, &field, why, sizeof why) != 0)
    return ballarus_pio_fail(err, errlen, "offset %llu: %s",
                             (ull)(at + field), why);
  *file_check = file_check_add(*file_check, rd64(h + 40), n->stamp);
  *off = at + BALLARUS_NAMED_HEADER_SIZE + name_bytes + dense_bytes +
         sparse_bytes;
  return 0;
}

int ballarus_pio_parse_named(const unsigned char *data, uint64_t size,
                             uint64_t *off, ballarus_profile *p,
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
  for (uint64_t k = 0; k < n_named; k++)
    if (parse_named_record(data, size, off, k, p, file_check, err, errlen) !=
        0)
      return -1;
  return 0;
}

int ballarus_pio_named_bytes(const ballarus_profile *p, unsigned char **buf,
                             uint64_t *size, uint64_t *file_check, char *err,
                             size_t errlen) {
  *buf = NULL;
  *size = 0;
  uint64_t total = BALLARUS_NAMED_SECTION_SIZE;
  for (uint64_t k = 0; k < p->n_named; k++) {
    const ballarus_named_record *n = &p->named[k];
    uint64_t field;
    if (check_named(p, k, &field, err, errlen) != 0) return -1;
    total += BALLARUS_NAMED_HEADER_SIZE + pad8(n->name_size) +
             n->n_dense * sizeof(ballarus_named_entry) +
             n->n_sparse * sizeof(ballarus_sparse_entry);
  }
  unsigned char *out = calloc(1, total);
  if (out == NULL)
    return ballarus_pio_fail(err, errlen, "out of memory (%llu bytes)",
                             (ull)total);
  wr32(out, BALLARUS_SECTION_NAMED);
  wr32(out + 4, 0);
  wr64(out + 8, p->n_named);
  uint64_t fc = ballarus_hash64_update(*file_check, out,
                                       BALLARUS_NAMED_SECTION_SIZE);
  uint64_t o = BALLARUS_NAMED_SECTION_SIZE;
  for (uint64_t k = 0; k < p->n_named; k++) {
    const ballarus_named_record *n = &p->named[k];
    unsigned char *h = out + o;
    const uint64_t db = n->n_dense * sizeof(ballarus_named_entry);
    const uint64_t sb = n->n_sparse * sizeof(ballarus_sparse_entry);
    wr32(h, BALLARUS_RECORD_NAMED);
    wr32(h + 4, n->name_size);
    wr64(h + 8, n->stamp);
    wr64(h + 16, n->runs);
    wr64(h + 24, n->n_dense);
    wr64(h + 32, n->n_sparse);
    unsigned char *d = h + BALLARUS_NAMED_HEADER_SIZE;
    memcpy(d, n->name, n->name_size);
    d += pad8(n->name_size);
    if (db > 0) memcpy(d, n->dense, db);
    if (sb > 0) memcpy(d + db, n->sparse, sb);
    uint64_t check = named_check(h, n->name, n->name_size, d, db, d + db, sb);
    wr64(h + 40, check);
    fc = file_check_add(fc, check, n->stamp);
    o += BALLARUS_NAMED_HEADER_SIZE + pad8(n->name_size) + db + sb;
  }
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

static uint64_t merge_sparse_into(const ballarus_sparse_entry *a, uint64_t na,
                                  const ballarus_sparse_entry *b, uint64_t nb,
                                  ballarus_sparse_entry *out) {
  uint64_t i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && sparse_less(&a[i], &b[j]))) {
      out[n++] = a[i++];
    } else if (i == na || sparse_less(&b[j], &a[i])) {
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

/* d = a + b (b may be NULL: d = a's copy).  -1 when out of memory.  */
static int combine(ballarus_named_record *d, const ballarus_named_record *a,
                   const ballarus_named_record *b) {
  static const ballarus_named_record none;
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
  d->n_sparse = merge_sparse_into(a->sparse, a->n_sparse, b->sparse,
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
