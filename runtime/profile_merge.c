/* profile_merge.c — merging profiles (profile_io.h): the rule of
   `reconstruct merge` (ballarus_profile_merge) and the runtime's dump
   (ballarus_profile_update), both all-or-nothing: every decision and
   allocation is made before dst changes.  */

#include <stdlib.h>
#include <string.h>

#include "runtime/profile_io.h"
#include "runtime/profile_io_internal.h"

/* ---------------------------------------------------------------------- */
/* Merging.                                                                 */

static int cmp_record_stamp(const void *a, const void *b) {
  uint64_t x = ((const ballarus_profile_record *)a)->stamp;
  uint64_t y = ((const ballarus_profile_record *)b)->stamp;
  return x < y ? -1 : x > y;
}

/* Index of the record with `stamp` in the stamp-sorted p, or -1.  */
static int64_t find_stamp(const ballarus_profile *p, uint64_t stamp) {
  uint32_t lo = 0, hi = p->n_records;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->records[mid].stamp < stamp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < p->n_records && p->records[lo].stamp == stamp ? (int64_t)lo : -1;
}

static int64_t find_identity(const ballarus_profile *p, uint64_t identity) {
  for (uint32_t i = 0; i < p->n_records; i++)
    if (p->records[i].identity == identity) return i;
  return -1;
}

/* A profile's runs: the largest of its records' (ballarus_format.h).  */
static uint64_t max_record_runs(const ballarus_profile *p) {
  uint64_t m = 0;
  for (uint32_t i = 0; i < p->n_records; i++)
    if (p->records[i].runs > m) m = p->records[i].runs;
  return m;
}

static int sorted_unique(const ballarus_profile *p) {
  for (uint32_t i = 1; i < p->n_records; i++)
    if (p->records[i - 1].stamp >= p->records[i].stamp) return 0;
  return 1;
}

/* First conflicting src record, or -1.  */
static int64_t first_conflict(const ballarus_profile *dst,
                              const ballarus_profile *src, int64_t *with) {
  for (uint32_t i = 0; i < src->n_records; i++) {
    const ballarus_profile_record *s = &src->records[i];
    if (find_stamp(dst, s->stamp) >= 0) continue;
    int64_t d = find_identity(dst, s->identity);
    if (d >= 0) {
      if (with != NULL) *with = d;
      return i;
    }
  }
  return -1;
}

int ballarus_profile_conflicts(const ballarus_profile *dst,
                               const ballarus_profile *src) {
  return first_conflict(dst, src, NULL) >= 0;
}

uint64_t ballarus_pio_merge_sparse(const ballarus_sparse_entry *a, uint64_t na,
                                   const ballarus_sparse_entry *b, uint64_t nb,
                                   ballarus_sparse_entry *out) {
  uint64_t i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && sparse_less(&a[i], &b[j]))) {
      out[n++] = a[i++];
    } else if (i == na || sparse_less(&b[j], &a[i])) {
      out[n++] = b[j++];
    } else {
      /* A +1 written earlier and its "-1" undo cancel: drop the entry,
         as the runtime never writes zero counts either.  */
      out[n] = a[i];
      out[n].count = ballarus_count_add(a[i].count, b[j].count);
      if (out[n].count != 0) n++;
      i++;
      j++;
    }
  }
  return n;
}

/* ballarus_pio_merge_sparse into a new array; NULL when out of memory.  */
static ballarus_sparse_entry *merge_sparse(const ballarus_sparse_entry *a,
                                           uint64_t na,
                                           const ballarus_sparse_entry *b,
                                           uint64_t nb, uint64_t *n_out) {
  ballarus_sparse_entry *m = xmalloc((na + nb) * sizeof *m);
  if (m == NULL) return NULL;
  *n_out = ballarus_pio_merge_sparse(a, na, b, nb, m);
  return m;
}

static int copy_record(ballarus_profile_record *d,
                       const ballarus_profile_record *s) {
  *d = *s;
  /* Borrowed metadata stays borrowed: the copy lives no longer than its
     source's owner (the runtime's own blobs, a mapping freed with the
     destination's source).  */
  d->metadata = s->borrowed ? s->metadata : xmalloc(s->meta_size);
  /* Borrowed counters too (the runtime's snapshot, which outlives the
     profile it is written into): no copy of a large dense array.  */
  d->counters = s->counters_borrowed ? s->counters : xmalloc(s->n_counters * 8);
  d->counters_mapped = d->counters_lent = 0;
  d->chunk_hash = NULL; /* not copied: hashed again when written */
  d->sparse = xmalloc(s->n_sparse * sizeof(ballarus_sparse_entry));
  d->block_map =
      s->block_map == NULL ? NULL : xmalloc(ballarus_block_count(s->n_counters));
  if (d->metadata == NULL || d->counters == NULL || d->sparse == NULL ||
      (s->block_map != NULL && d->block_map == NULL)) {
    ballarus_pio_record_free(d);
    return -1;
  }
  if (!s->borrowed) memcpy(d->metadata, s->metadata, s->meta_size);
  if (s->n_counters > 0 && !s->counters_borrowed)
    memcpy(d->counters, s->counters, s->n_counters * 8);
  if (s->n_sparse > 0)
    memcpy(d->sparse, s->sparse, s->n_sparse * sizeof(ballarus_sparse_entry));
  if (s->block_map != NULL)
    memcpy(d->block_map, s->block_map, ballarus_block_count(s->n_counters));
  return 0;
}

static int merge_records(ballarus_profile *dst, const ballarus_profile *src,
                         char *err, size_t errlen) {
  if (!sorted_unique(dst))
    return ballarus_pio_fail(err, errlen, "destination records not sorted by unique stamp");

  /* Phase 1: refuse before touching anything.  */
  int64_t with = -1;
  int64_t c = first_conflict(dst, src, &with);
  if (c >= 0) {
    ballarus_meta_names n;
    const ballarus_profile_record *r = &src->records[c];
    if (ballarus_meta_get_names(r->metadata, r->meta_size, &n) != 0)
      n.profile = n.object = n.source = "?";
    return ballarus_pio_fail(err, errlen,
                "two builds of one TU (source %s, %s %s): the profile merged "
                "in holds another build of it than the profiles before it",
                n.source, n.object[0] ? "object" : "profile",
                n.object[0] ? n.object : n.profile);
  }
  uint32_t n_new = 0;
  for (uint32_t i = 0; i < src->n_records; i++) {
    const ballarus_profile_record *s = &src->records[i];
    int64_t d = find_stamp(dst, s->stamp);
    if (d < 0) {
      n_new++;
      continue;
    }
    const ballarus_profile_record *r = &dst->records[d];
    if (r->meta_size != s->meta_size || r->n_counters != s->n_counters ||
        memcmp(r->metadata, s->metadata, s->meta_size) != 0)
      return ballarus_pio_fail(err, errlen,
                  "records with stamp 0x%016llx differ in metadata or counter "
                  "count",
                  (ull)s->stamp);
  }
  if ((uint64_t)dst->n_records + n_new > UINT32_MAX)
    return ballarus_pio_fail(err, errlen, "too many records");

  /* Phase 2: allocate everything the result needs.  */
  uint32_t n_out = dst->n_records + n_new;
  ballarus_profile_record *out = calloc(n_out == 0 ? 1 : n_out, sizeof *out);
  ballarus_sparse_entry **sparse = calloc(src->n_records + 1, sizeof *sparse);
  uint64_t *n_sparse = calloc(src->n_records + 1, sizeof *n_sparse);
  if (out == NULL || sparse == NULL || n_sparse == NULL) goto oom;
  /* New records go to out[dst->n_records ...] for now.  */
  uint32_t k = dst->n_records;
  for (uint32_t i = 0; i < src->n_records; i++) {
    const ballarus_profile_record *s = &src->records[i];
    int64_t d = find_stamp(dst, s->stamp);
    if (d < 0) {
      if (copy_record(&out[k], s) != 0) goto oom;
      k++;
    } else if (s->n_sparse > 0) {
      const ballarus_profile_record *r = &dst->records[d];
      sparse[i] = merge_sparse(r->sparse, r->n_sparse, s->sparse, s->n_sparse,
                               &n_sparse[i]);
      if (sparse[i] == NULL) goto oom;
    }
  }

  /* The new records in stamp order (src need not be sorted); two of them
     with one stamp would make an invalid profile.  */
  qsort(out + dst->n_records, n_new, sizeof *out, cmp_record_stamp);
  for (uint32_t i = dst->n_records + 1; i < n_out; i++) {
    if (out[i - 1].stamp == out[i].stamp) {
      uint64_t dup = out[i].stamp;
      for (uint32_t j = dst->n_records; j < n_out; j++) ballarus_pio_record_free(&out[j]);
      for (uint32_t j = 0; j < src->n_records; j++) free(sparse[j]);
      free(out);
      free(sparse);
      free(n_sparse);
      return ballarus_pio_fail(err, errlen, "two source records with stamp 0x%016llx",
                  (ull)dup);
    }
  }

  /* Phase 3: commit (cannot fail).  */
  for (uint32_t i = 0; i < src->n_records; i++) {
    const ballarus_profile_record *s = &src->records[i];
    int64_t d = find_stamp(dst, s->stamp);
    if (d < 0) continue;
    ballarus_profile_record *r = &dst->records[d];
    /* dst's records own their counters (parsed or merged): cannot fail.  */
    (void)ballarus_profile_record_add_counters(r, s);
    if (sparse[i] != NULL) {
      free(r->sparse);
      r->sparse = sparse[i];
      r->n_sparse = n_sparse[i];
    }
    r->runs = ballarus_sat_add(r->runs, s->runs);
  }
  /* Merge the old and new records, both sorted, by stamp.  */
  {
    ballarus_profile_record *merged =
        calloc(n_out == 0 ? 1 : n_out, sizeof *merged);
    if (merged == NULL) {
      /* Fall back to an in-place insertion sort of `out`.  */
      memcpy(out, dst->records, dst->n_records * sizeof *out);
      for (uint32_t i = 1; i < n_out; i++) {
        ballarus_profile_record v = out[i];
        uint32_t j = i;
        while (j > 0 && out[j - 1].stamp > v.stamp) {
          out[j] = out[j - 1];
          j--;
        }
        out[j] = v;
      }
      merged = out;
    } else {
      uint32_t a = 0, b = dst->n_records, m = 0;
      while (a < dst->n_records || b < n_out) {
        if (b == n_out ||
            (a < dst->n_records && dst->records[a].stamp < out[b].stamp))
          merged[m++] = dst->records[a++];
        else
          merged[m++] = out[b++];
      }
      free(out);
    }
    free(dst->records);
    dst->records = merged;
    dst->n_records = n_out;
  }
  dst->runs = max_record_runs(dst);
  free(sparse);
  free(n_sparse);
  return 0;

oom:
  if (out != NULL)
    for (uint32_t i = dst->n_records; i < n_out; i++) ballarus_pio_record_free(&out[i]);
  if (sparse != NULL)
    for (uint32_t i = 0; i < src->n_records; i++) free(sparse[i]);
  free(out);
  free(sparse);
  free(n_sparse);
  return ballarus_pio_fail(err, errlen, "out of memory");
}

/* ---------------------------------------------------------------------- */
/* The runtime's merge: rebuilt objects replace their old data.             */

/* What happens to each record in an update.  src: SKIP, ADD into dst
   record into[i], or COPY (a new stamp).  dst: kept, or replaced by src
   record by[d] (an earlier build of an identity src brings another build
   of).  */
enum { SKIP, ADD, COPY };

/* Phase 1 of an update: decides act, into and by (by[] preset to -1),
   counts the copies and the dst records kept, and refuses before anything
   is touched.  */
static int update_decide(const ballarus_profile *dst,
                         const ballarus_profile *src, uint8_t *act,
                         int64_t *into, int64_t *by, uint32_t *n_copies,
                         uint32_t *n_kept, char *err, size_t errlen) {
  const uint32_t nd = dst->n_records, ns = src->n_records;
  for (uint32_t i = 0; i < ns; i++) {
    const ballarus_profile_record *s = &src->records[i];
    for (uint32_t j = 0; j < i; j++)
      if (src->records[j].stamp == s->stamp) {
        ballarus_pio_fail(err, errlen, "two source records with stamp 0x%016llx",
             (ull)s->stamp);
        return -1;
      }
    int64_t d = find_stamp(dst, s->stamp);
    if (d >= 0) {
      const ballarus_profile_record *r = &dst->records[d];
      if (r->meta_size != s->meta_size || r->n_counters != s->n_counters ||
          (r->metadata != s->metadata &&
           memcmp(r->metadata, s->metadata, s->meta_size) != 0)) {
        ballarus_pio_fail(err, errlen,
             "records with stamp 0x%016llx differ in metadata or counter "
             "count",
             (ull)s->stamp);
        return -1;
      }
      act[i] = ADD;
      into[i] = d;
      continue;
    }
    /* A zero record (runs 0: older runtimes' record of a TU that had not
       run, written so its file shows it) never replaces counts, and is not
       needed where its identity is already present.  */
    if (s->runs == 0 && find_identity(dst, s->identity) >= 0) {
      act[i] = SKIP;
      continue;
    }
    act[i] = COPY;
    (*n_copies)++;
  }
  for (uint32_t d = 0; d < nd; d++) {
    const ballarus_profile_record *r = &dst->records[d];
    for (uint32_t i = 0; i < ns; i++) {
      const ballarus_profile_record *s = &src->records[i];
      if (act[i] == COPY && s->runs > 0 && s->identity == r->identity) {
        by[d] = i;
        (*n_kept)--;
        break;
      }
    }
  }
  if ((uint64_t)*n_kept + *n_copies > UINT32_MAX) {
    ballarus_pio_fail(err, errlen, "too many records");
    return -1;
  }

  return 0;
}

static int update_records(ballarus_profile *dst, const ballarus_profile *src,
                          ballarus_replace_fn on_replace, void *ctx,
                          char *err, size_t errlen) {
  if (!sorted_unique(dst))
    return ballarus_pio_fail(err, errlen, "destination records not sorted by unique stamp");
  const uint32_t nd = dst->n_records, ns = src->n_records;
  uint8_t *act = calloc(ns + 1, 1);
  int64_t *into = calloc(ns + 1, sizeof *into);
  int64_t *by = calloc(nd + 1, sizeof *by);
  ballarus_profile_record *copies = calloc(ns + 1, sizeof *copies);
  ballarus_sparse_entry **sparse = calloc(ns + 1, sizeof *sparse);
  uint64_t *n_sparse = calloc(ns + 1, sizeof *n_sparse);
  ballarus_profile_record *out = NULL;
  uint32_t n_copies = 0, n_kept = nd;
  int rc = -1;
  if (act == NULL || into == NULL || by == NULL || copies == NULL ||
      sparse == NULL || n_sparse == NULL) {
    ballarus_pio_fail(err, errlen, "out of memory");
    goto done;
  }
  for (uint32_t d = 0; d < nd; d++) by[d] = -1;

  /* Phase 1: decide, refuse before touching anything.  */
  if (update_decide(dst, src, act, into, by, &n_copies, &n_kept, err,
                    errlen) != 0)
    goto done;

  /* Phase 2: allocate everything the result needs.  */
  out = calloc((size_t)n_kept + n_copies + 1, sizeof *out);
  if (out == NULL) {
    ballarus_pio_fail(err, errlen, "out of memory");
    goto done;
  }
  {
    uint32_t k = 0;
    for (uint32_t i = 0; i < ns; i++) {
      const ballarus_profile_record *s = &src->records[i];
      /* A record phase 3 adds into gets its own counters (the same
         counts: dst is unchanged if a later allocation fails).  */
      if (act[i] == ADD &&
          ballarus_profile_record_own_counters(&dst->records[into[i]]) != 0) {
        ballarus_pio_fail(err, errlen, "out of memory");
        goto done;
      }
      if (act[i] == COPY) {
        if (copy_record(&copies[k], s) != 0) {
          ballarus_pio_fail(err, errlen, "out of memory");
          goto done;
        }
        k++;
      } else if (act[i] == ADD && s->n_sparse > 0) {
        const ballarus_profile_record *r = &dst->records[into[i]];
        sparse[i] = merge_sparse(r->sparse, r->n_sparse, s->sparse,
                                 s->n_sparse, &n_sparse[i]);
        if (sparse[i] == NULL) {
          ballarus_pio_fail(err, errlen, "out of memory");
          goto done;
        }
      }
    }
  }

  /* Phase 3: commit (cannot fail).  */
  for (uint32_t i = 0; i < ns; i++) {
    if (act[i] != ADD) continue;
    const ballarus_profile_record *s = &src->records[i];
    ballarus_profile_record *r = &dst->records[into[i]];
    /* Given its own counters in phase 2: cannot fail.  */
    (void)ballarus_profile_record_add_counters(r, s);
    if (sparse[i] != NULL) {
      free(r->sparse);
      r->sparse = sparse[i];
      r->n_sparse = n_sparse[i];
      sparse[i] = NULL;
    }
    r->runs = ballarus_sat_add(r->runs, s->runs);
  }
  qsort(copies, n_copies, sizeof *copies, cmp_record_stamp);
  {
    uint32_t a = 0, b = 0, m = 0;
    while (a < nd || b < n_copies) {
      if (a < nd && by[a] >= 0) {
        if (on_replace != NULL)
          on_replace(ctx, &dst->records[a], &src->records[by[a]]);
        ballarus_pio_record_free(&dst->records[a]);
        a++;
        continue;
      }
      if (b == n_copies ||
          (a < nd && dst->records[a].stamp < copies[b].stamp))
        out[m++] = dst->records[a++];
      else
        out[m++] = copies[b++];
    }
    n_copies = 0; /* moved into out */
    free(dst->records);
    dst->records = out;
    dst->n_records = m;
    out = NULL;
  }
  dst->runs = max_record_runs(dst);
  rc = 0;

done:
  if (copies != NULL)
    for (uint32_t k = 0; k < n_copies; k++) ballarus_pio_record_free(&copies[k]);
  if (sparse != NULL)
    for (uint32_t i = 0; i < ns; i++) free(sparse[i]);
  free(act);
  free(into);
  free(by);
  free(copies);
  free(sparse);
  free(n_sparse);
  free(out);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Named runs: the named records are united (deep copies) before the
   records are merged, and the union replaces dst's only once that merge
   succeeded, so that a refused merge leaves dst unchanged.  */

static void replace_named(ballarus_profile *dst, ballarus_named_record *named,
                          uint64_t n_named) {
  ballarus_pio_named_free(dst->named, dst->n_named);
  dst->named = named;
  dst->n_named = n_named;
}

int ballarus_profile_merge(ballarus_profile *dst, const ballarus_profile *src,
                           char *err, size_t errlen) {
  if (dst->n_named == 0 && src->n_named == 0)
    return merge_records(dst, src, err, errlen);
  ballarus_named_record *named;
  uint64_t n_named;
  if (ballarus_pio_named_union(dst, src, &named, &n_named, err, errlen) != 0)
    return -1;
  if (merge_records(dst, src, err, errlen) != 0) {
    ballarus_pio_named_free(named, n_named);
    return -1;
  }
  replace_named(dst, named, n_named);
  return 0;
}

int ballarus_profile_update(ballarus_profile *dst, const ballarus_profile *src,
                            ballarus_replace_fn on_replace, void *ctx,
                            char *err, size_t errlen) {
  if (dst->n_named == 0 && src->n_named == 0)
    return update_records(dst, src, on_replace, ctx, err, errlen);
  ballarus_named_record *named;
  uint64_t n_named;
  if (ballarus_pio_named_union(dst, src, &named, &n_named, err, errlen) != 0)
    return -1;
  if (update_records(dst, src, on_replace, ctx, err, errlen) != 0) {
    ballarus_pio_named_free(named, n_named);
    return -1;
  }
  replace_named(dst, named, n_named);
  /* A rebuilt TU's old counts went with its record: so do its named ones. */
  ballarus_pio_named_drop_orphans(dst);
  return 0;
}
