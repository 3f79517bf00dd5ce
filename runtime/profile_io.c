/* profile_io.c — parse, validate, merge and atomically write profile files
   (layout: runtime/ballarus_format.h; API: runtime/profile_io.h).

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

#define _GNU_SOURCE /* O_CLOEXEC, fsync, ... */

#include "runtime/profile_io.h"

#include "runtime/safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ballarus profiles are little-endian; big-endian hosts are unsupported"
#endif

typedef unsigned long long ull;

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static uint32_t rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void wr32(unsigned char *p, uint32_t v) { memcpy(p, &v, sizeof v); }
static void wr64(unsigned char *p, uint64_t v) { memcpy(p, &v, sizeof v); }

static uint64_t pad8(uint64_t n) { return (n + 7u) & ~(uint64_t)7u; }

/* malloc that never returns NULL for a zero size, so NULL always means
   out of memory.  */
static void *xmalloc(uint64_t n) {
  if (n > (uint64_t)SIZE_MAX) return NULL;
  return malloc(n == 0 ? 1 : (size_t)n);
}

int ballarus_profile_record_own_counters(ballarus_profile_record *r) {
  if (!r->counters_borrowed) return 0;
  uint64_t *own = xmalloc(r->n_counters * 8);
  if (own == NULL) return -1;
  if (r->n_counters > 0) memcpy(own, r->counters, r->n_counters * 8);
  r->counters = own;
  r->counters_borrowed = 0;
  return 0;
}

static void record_free(ballarus_profile_record *r) {
  if (!r->borrowed) free(r->metadata);
  if (!r->counters_borrowed) free(r->counters);
  free(r->sparse);
  memset(r, 0, sizeof *r);
}

void ballarus_profile_free(ballarus_profile *p) {
  if (p == NULL) return;
  for (uint32_t i = 0; i < p->n_records; i++) record_free(&p->records[i]);
  free(p->records);
  free(p->backing);
  memset(p, 0, sizeof *p);
}

static int sparse_less(const ballarus_sparse_entry *a,
                       const ballarus_sparse_entry *b) {
  return a->function < b->function ||
         (a->function == b->function && a->key < b->key);
}

/* ---------------------------------------------------------------------- */
/* Parsing.                                                                 */

/* A record's check (ballarus_format.h): its header's first 48 bytes, the
   metadata header, the counters, the sparse entries.  */
static uint64_t record_check(const unsigned char *rec_header,
                             const unsigned char *meta_header,
                             const void *counters, uint64_t counter_bytes,
                             const void *sparse, uint64_t sparse_bytes) {
  uint64_t h = ballarus_hash64(rec_header, 48);
  h = ballarus_hash64_update(h, meta_header, BALLARUS_META_HEADER_SIZE);
  h = ballarus_hash64_update(h, counters, counter_bytes);
  return ballarus_hash64_update(h, sparse, sparse_bytes);
}

/* Folds one record into the file check.  */
static uint64_t file_check_add(uint64_t h, uint64_t check, uint64_t stamp) {
  unsigned char b[16];
  memcpy(b, &check, 8);
  memcpy(b + 8, &stamp, 8);
  return ballarus_hash64_update(h, b, 16);
}

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
   `at` against its record.  */
/* `verified`: the blob is byte-identical to one whose stamp was verified
   (skips hashing the body again).  */
static int check_meta(const unsigned char *m, uint64_t meta_size, uint64_t at,
                      uint32_t index, uint64_t stamp, uint64_t n_counters,
                      int verified, char *err, size_t errlen) {
  if (memcmp(m, BALLARUS_META_MAGIC, 8) != 0)
    return fail(err, errlen, "offset %llu: record %u: metadata: bad magic",
                (ull)at, index);
  uint32_t version = rd32(m + 8);
  if (version < BALLARUS_META_VERSION_MIN || version > BALLARUS_META_VERSION)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: unsupported version %u "
                "(expected %u to %u)",
                (ull)(at + 8), index, version, BALLARUS_META_VERSION_MIN,
                BALLARUS_META_VERSION);
  uint32_t header_size = rd32(m + 12);
  if (header_size != BALLARUS_META_HEADER_SIZE)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: header_size %u (expected "
                "%u)",
                (ull)(at + 12), index, header_size, BALLARUS_META_HEADER_SIZE);
  uint64_t mstamp = rd64(m + 16), msize = rd64(m + 24), mn = rd64(m + 32);
  if (msize != meta_size)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: size %llu disagrees with "
                "the record's meta_size %llu",
                (ull)(at + 24), index, (ull)msize, (ull)meta_size);
  if (mstamp != stamp)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: stamp 0x%016llx disagrees "
                "with the record's 0x%016llx",
                (ull)(at + 16), index, (ull)mstamp, (ull)stamp);
  if (mn != n_counters)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: n_counters %llu disagrees "
                "with the record's %llu",
                (ull)(at + 32), index, (ull)mn, (ull)n_counters);
  uint32_t flags = rd32(m + 48);
  if (flags & ~(uint32_t)(BALLARUS_META_F_NAIVE | BALLARUS_META_F_EDGE |
                          BALLARUS_META_F_PATH | BALLARUS_META_F_ATOMIC))
    return fail(err, errlen,
                "offset %llu: record %u: metadata: unknown flags 0x%x",
                (ull)(at + 48), index, flags);
  ballarus_meta_names names;
  if (ballarus_meta_get_names(m, meta_size, &names) != 0)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: names block of %u bytes is "
                "not four NUL-terminated names",
                (ull)(at + 52), index, rd32(m + 52));
  if ((names.profile[0] != '\0' && names.profile[0] != '/') ||
      (names.object[0] != '\0' && names.object[0] != '/'))
    return fail(err, errlen,
                "offset %llu: record %u: metadata: profile and object names "
                "must be absolute",
                (ull)(at + header_size), index);
  uint64_t body =
      verified ? stamp : ballarus_hash64(m + header_size, meta_size - header_size);
  if (body != stamp)
    return fail(err, errlen,
                "offset %llu: record %u: metadata: stamp 0x%016llx is not the "
                "hash of the body (0x%016llx)",
                (ull)(at + 16), index, (ull)stamp, (ull)body);
  if (rd64(m + 40) !=
      ballarus_tu_identity(names.profile, names.cwd, names.source))
    return fail(err, errlen,
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
    return fail(err, errlen, "offset 0: bad magic (not a ballarus profile)");
  if (size >= 12 && rd32(data + 8) != BALLARUS_PROFILE_VERSION) {
    uint32_t version = rd32(data + 8);
    return fail(err, errlen,
                "offset 8: unsupported profile version %u (expected %u%s)",
                version, BALLARUS_PROFILE_VERSION,
                version < BALLARUS_PROFILE_VERSION
                    ? "; written by an older ballarus"
                    : "");
  }
  if (size < BALLARUS_PROFILE_HEADER_SIZE)
    return fail(err, errlen,
                "offset 0: file header truncated (file ends after %llu of %u "
                "bytes)",
                (ull)size, BALLARUS_PROFILE_HEADER_SIZE);
  if (rd64(data + 32) != ballarus_hash64(data, 32))
    return fail(err, errlen,
                "offset 32: header check mismatch (file header corrupted)");
  uint32_t n_records = rd32(data + 12);
  uint64_t min_record = BALLARUS_RECORD_HEADER_SIZE + BALLARUS_META_HEADER_SIZE;
  uint64_t room = (size - BALLARUS_PROFILE_HEADER_SIZE) / min_record;
  if (n_records > room)
    return fail(err, errlen,
                "offset 12: n_records %u impossible: the remaining %llu bytes "
                "hold at most %llu records",
                n_records, (ull)(size - BALLARUS_PROFILE_HEADER_SIZE),
                (ull)room);
  return 0;
}

/* `borrow`: records' metadata point into `data` (which must outlive the
   profile) instead of being copied.  */
static int parse(const unsigned char *data, uint64_t size,
                 const unsigned char *const *known, size_t n_known,
                 int borrow, ballarus_profile *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (ballarus_profile_check_header(data, size, err, errlen) != 0) return -1;
  const uint32_t n_records = rd32(data + 12);

  ballarus_profile p;
  memset(&p, 0, sizeof p);
  p.runs = rd64(data + 16);
  p.records = calloc(n_records == 0 ? 1 : n_records, sizeof *p.records);
  if (p.records == NULL) return fail(err, errlen, "out of memory");

  uint64_t off = BALLARUS_PROFILE_HEADER_SIZE;
  uint64_t file_check = BALLARUS_HASH_INIT;
  for (uint32_t i = 0; i < n_records; i++) {
    const uint64_t rec = off;
    uint64_t left = size - off;
    if (left < BALLARUS_RECORD_HEADER_SIZE) {
      fail(err, errlen,
           "offset %llu: record %u: header truncated (file ends after %llu of "
           "%u bytes)",
           (ull)rec, i, (ull)left, BALLARUS_RECORD_HEADER_SIZE);
      goto bad;
    }
    const unsigned char *h = data + rec;
    uint32_t tag = rd32(h), flags = rd32(h + 4);
    uint64_t stamp = rd64(h + 8), meta_size = rd64(h + 16);
    uint64_t n_counters = rd64(h + 24), n_sparse = rd64(h + 32);
    uint64_t runs = rd64(h + 40), check = rd64(h + 48);
    if (tag != BALLARUS_RECORD_TU) {
      fail(err, errlen, "offset %llu: record %u: bad tag 0x%08x (expected "
           "0x%08x)", (ull)rec, i, tag, BALLARUS_RECORD_TU);
      goto bad;
    }
    if (flags != 0) {
      fail(err, errlen, "offset %llu: record %u: unknown flags 0x%x",
           (ull)(rec + 4), i, flags);
      goto bad;
    }
    if (meta_size < BALLARUS_META_HEADER_SIZE || meta_size > UINT64_MAX - 7) {
      fail(err, errlen,
           "offset %llu: record %u: meta_size %llu is not a metadata blob "
           "size",
           (ull)(rec + 16), i, (ull)meta_size);
      goto bad;
    }
    if (n_counters > UINT64_MAX / 8) {
      fail(err, errlen, "offset %llu: record %u: n_counters %llu overflows",
           (ull)(rec + 24), i, (ull)n_counters);
      goto bad;
    }
    if (n_sparse > UINT64_MAX / sizeof(ballarus_sparse_entry)) {
      fail(err, errlen, "offset %llu: record %u: n_sparse %llu overflows",
           (ull)(rec + 32), i, (ull)n_sparse);
      goto bad;
    }
    off += BALLARUS_RECORD_HEADER_SIZE;
    left = size - off;
    const uint64_t meta_at = off;
    const uint64_t meta_bytes = pad8(meta_size);
    if (meta_bytes > left) {
      fail(err, errlen,
           "offset %llu: record %u: metadata truncated (file ends after %llu "
           "of %llu bytes)",
           (ull)off, i, (ull)left, (ull)meta_bytes);
      goto bad;
    }
    off += meta_bytes;
    left = size - off;
    const uint64_t counters_at = off;
    const uint64_t counter_bytes = n_counters * 8;
    if (counter_bytes > left) {
      fail(err, errlen,
           "offset %llu: record %u: counters truncated (file ends after %llu "
           "of %llu bytes)",
           (ull)off, i, (ull)left, (ull)counter_bytes);
      goto bad;
    }
    off += counter_bytes;
    left = size - off;
    const uint64_t sparse_at = off;
    const uint64_t sparse_bytes = n_sparse * sizeof(ballarus_sparse_entry);
    if (sparse_bytes > left) {
      fail(err, errlen,
           "offset %llu: record %u: sparse entries truncated (file ends "
           "after %llu of %llu bytes)",
           (ull)off, i, (ull)left, (ull)sparse_bytes);
      goto bad;
    }
    off += sparse_bytes;
    uint64_t actual =
        record_check(data + rec, data + meta_at, data + counters_at,
                     counter_bytes, data + sparse_at, sparse_bytes);
    if (actual != check) {
      fail(err, errlen,
           "offset %llu: record %u: check mismatch (record corrupted)",
           (ull)(rec + 48), i);
      goto bad;
    }
    file_check = file_check_add(file_check, check, stamp);
    const unsigned char *same =
        find_known(data + meta_at, meta_size, known, n_known);
    if (check_meta(data + meta_at, meta_size, meta_at, i, stamp, n_counters,
                   same != NULL, err, errlen) != 0)
      goto bad;
    for (uint64_t b = meta_size; b < meta_bytes; b++) {
      if (data[meta_at + b] != 0) {
        fail(err, errlen, "offset %llu: record %u: nonzero metadata padding",
             (ull)(meta_at + b), i);
        goto bad;
      }
    }
    /* Every dump adds 1 to the file's runs and at most 1 to a record's, and
       merges add both alike, so a record never has more runs than its file.
       (The record check covers the header too; this is a second line of
       defence and names the field.)  */
    if (runs > p.runs) {
      fail(err, errlen,
           "offset %llu: record %u: runs %llu exceeds the file's runs %llu",
           (ull)(rec + 40), i, (ull)runs, (ull)p.runs);
      goto bad;
    }
    if (i > 0 && stamp <= p.records[i - 1].stamp) {
      fail(err, errlen,
           "offset %llu: record %u: stamp 0x%016llx does not follow 0x%016llx "
           "(records must be sorted by stamp, without duplicates)",
           (ull)(rec + 8), i, (ull)stamp, (ull)p.records[i - 1].stamp);
      goto bad;
    }

    ballarus_profile_record *r = &p.records[i];
    p.n_records = i + 1; /* so `bad` frees this record too */
    r->stamp = stamp;
    r->identity = rd64(data + meta_at + 40);
    r->runs = runs;
    r->meta_size = meta_size;
    r->n_counters = n_counters;
    r->n_sparse = n_sparse;
    r->borrowed = borrow ? 1 : 0;
    /* Borrowing, a blob identical to a known one is that one: merging then
       recognises it by its address.  */
    r->metadata = !borrow ? xmalloc(meta_size)
                  : same != NULL ? (unsigned char *)same
                                 : (unsigned char *)(data + meta_at);
    r->counters = xmalloc(counter_bytes);
    r->sparse = xmalloc(sparse_bytes);
    if (r->metadata == NULL || r->counters == NULL || r->sparse == NULL) {
      fail(err, errlen, "out of memory");
      goto bad;
    }
    if (!borrow) memcpy(r->metadata, data + meta_at, meta_size);
    memcpy(r->counters, data + counters_at, counter_bytes);
    memcpy(r->sparse, data + sparse_at, sparse_bytes);
    for (uint64_t s = 1; s < n_sparse; s++) {
      if (!sparse_less(&r->sparse[s - 1], &r->sparse[s])) {
        fail(err, errlen,
             "offset %llu: record %u: sparse entry %llu not sorted after the "
             "previous one (sorted by function, key; keys unique)",
             (ull)(sparse_at + s * sizeof(ballarus_sparse_entry)), i,
             (ull)s);
        goto bad;
      }
    }
  }
  if (off != size) {
    fail(err, errlen, "offset %llu: %llu trailing bytes after the last record",
         (ull)off, (ull)(size - off));
    goto bad;
  }
  if (file_check != rd64(data + 24)) {
    fail(err, errlen,
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
  return parse(data, size, NULL, 0, 0, out, err, errlen);
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
    fail(err, errlen, "cannot stat: %s", strerror(errno));
    return BALLARUS_PROFILE_UNREAD;
  }
  if (!S_ISREG(st.st_mode)) {
    fail(err, errlen, "not a regular file");
    return BALLARUS_PROFILE_UNREAD;
  }
  unsigned char head[BALLARUS_PROFILE_HEADER_SIZE];
  uint64_t n = (uint64_t)st.st_size;
  uint64_t got = 0;
  if (ballarus_profile_read_bounded(fd, head, sizeof head, &got, err,
                                    errlen) != 0)
    return BALLARUS_PROFILE_UNREAD;
  if (ballarus_profile_check_header(head, got < sizeof head ? got : n, err,
                                    errlen) != 0)
    return -1;
  unsigned char *b = xmalloc(n);
  if (b == NULL) {
    fail(err, errlen, "out of memory reading %llu bytes", (ull)n);
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

int ballarus_profile_read_bounded(int fd, unsigned char *buf, uint64_t n,
                                  uint64_t *got, char *err, size_t errlen) {
  *got = 0;
  while (*got < n) {
    uint64_t want = n - *got;
    ssize_t r = read(fd, buf + *got, want > (1u << 30) ? (1u << 30)
                                                        : (size_t)want);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      return fail(err, errlen, "read error at offset %llu: %s", (ull)*got,
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
  int rc = parse(buf, size, known, n_known, 1, out, err, errlen);
  if (rc == 0) {
    out->backing = buf;
    out->backing_size = size;
  } else {
    free(buf);
  }
  return rc;
}

int ballarus_profile_parse_borrowing(const unsigned char *data, uint64_t size,
                                     const unsigned char *const *known,
                                     size_t n_known, ballarus_profile *out,
                                     char *err, size_t errlen) {
  return parse(data, size, known, n_known, 1, out, err, errlen);
}

int ballarus_profile_read_fd(int fd, ballarus_profile *out, char *err,
                             size_t errlen) {
  memset(out, 0, sizeof *out);
  unsigned char *buf;
  uint64_t size;
  int loaded = load_fd(fd, &buf, &size, err, errlen);
  if (loaded != 0) return loaded;
  int rc = parse(buf, size, NULL, 0, 0, out, err, errlen);
  free(buf);
  return rc;
}

int ballarus_profile_read_file(const char *path, ballarus_profile *out,
                               char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(err, errlen, "cannot open: %s", strerror(errno));
  int rc = ballarus_profile_read_fd(fd, out, err, errlen);
  close(fd);
  return rc;
}

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
    return fail(err, errlen, "record 0x%016llx: no metadata blob",
                (ull)r->stamp);
  if (r->meta_size > UINT64_MAX / 2 || r->n_counters > UINT64_MAX / 16 ||
      r->n_sparse > UINT64_MAX / 64)
    return fail(err, errlen, "record 0x%016llx: sizes overflow",
                (ull)r->stamp);
  if ((r->n_counters > 0 && r->counters == NULL) ||
      (r->n_sparse > 0 && r->sparse == NULL))
    return fail(err, errlen, "record 0x%016llx: missing counters",
                (ull)r->stamp);
  char sub[200];
  if (check_meta(r->metadata, r->meta_size, 0, 0, r->stamp, r->n_counters,
                 trusted, sub, sizeof sub) != 0)
    return fail(err, errlen, "record 0x%016llx: %s", (ull)r->stamp, sub);
  for (uint64_t s = 1; s < r->n_sparse; s++)
    if (!sparse_less(&r->sparse[s - 1], &r->sparse[s]))
      return fail(err, errlen,
                  "record 0x%016llx: sparse entries not sorted/unique",
                  (ull)r->stamp);
  return 0;
}

/* A profile laid out for writing: the file header and record headers in
   one small buffer, every other piece pointing into the records (metadata,
   often borrowed from a mapping or the program itself, is never copied).  */
typedef struct {
  const void *p;
  uint64_t n;
} chunk;

typedef struct {
  unsigned char *headers; /* file header, then 56 bytes per record */
  chunk *chunks;
  size_t n_chunks;
  uint64_t total;
} layout;

static void layout_free(layout *L) {
  free(L->headers);
  free(L->chunks);
  memset(L, 0, sizeof *L);
}

static const unsigned char zeros[8];

static int plan(const ballarus_profile *p, int trusted, layout *L, char *err,
                size_t errlen) {
  memset(L, 0, sizeof *L);
  uint64_t total = BALLARUS_PROFILE_HEADER_SIZE;
  for (uint32_t i = 0; i < p->n_records; i++) {
    const ballarus_profile_record *r = &p->records[i];
    if (check_record(r, trusted, err, errlen) != 0) return -1;
    if (r->runs > p->runs)
      return fail(err, errlen, "record 0x%016llx: runs %llu exceed the "
                  "profile's %llu", (ull)r->stamp, (ull)r->runs, (ull)p->runs);
    uint64_t bytes = BALLARUS_RECORD_HEADER_SIZE + pad8(r->meta_size) +
                     r->n_counters * 8 +
                     r->n_sparse * sizeof(ballarus_sparse_entry);
    if (bytes > UINT64_MAX - total)
      return fail(err, errlen, "profile too large");
    total += bytes;
  }
  uint32_t *idx = stamp_order(p);
  if (idx == NULL) return fail(err, errlen, "out of memory");
  for (uint32_t i = 1; i < p->n_records; i++) {
    if (p->records[idx[i - 1]].stamp == p->records[idx[i]].stamp) {
      uint64_t s = p->records[idx[i]].stamp;
      free(idx);
      return fail(err, errlen, "two records with stamp 0x%016llx", (ull)s);
    }
  }
  L->headers = xmalloc(BALLARUS_PROFILE_HEADER_SIZE +
                       (uint64_t)p->n_records * BALLARUS_RECORD_HEADER_SIZE);
  L->chunks = xmalloc((1 + 5 * (uint64_t)p->n_records) * sizeof *L->chunks);
  if (L->headers == NULL || L->chunks == NULL) {
    free(idx);
    layout_free(L);
    return fail(err, errlen, "out of memory");
  }
  unsigned char *out = L->headers;
  memcpy(out, BALLARUS_PROFILE_MAGIC, 8);
  wr32(out + 8, BALLARUS_PROFILE_VERSION);
  wr32(out + 12, p->n_records);
  wr64(out + 16, p->runs);
  L->chunks[L->n_chunks++] = (chunk){out, BALLARUS_PROFILE_HEADER_SIZE};
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
                                        r->n_counters * 8, r->sparse, sb);
    wr64(h + 48, check);
    file_check = file_check_add(file_check, check, r->stamp);
    L->chunks[L->n_chunks++] = (chunk){h, BALLARUS_RECORD_HEADER_SIZE};
    L->chunks[L->n_chunks++] = (chunk){r->metadata, r->meta_size};
    if (pad8(r->meta_size) > r->meta_size)
      L->chunks[L->n_chunks++] =
          (chunk){zeros, pad8(r->meta_size) - r->meta_size};
    if (r->n_counters > 0)
      L->chunks[L->n_chunks++] = (chunk){r->counters, r->n_counters * 8};
    if (sb > 0) L->chunks[L->n_chunks++] = (chunk){r->sparse, sb};
  }
  wr64(out + 24, file_check);
  wr64(out + 32, ballarus_hash64(out, 32));
  free(idx);
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
    return fail(err, errlen, "out of memory (%llu bytes)", (ull)t);
  }
  uint64_t off = 0;
  for (size_t i = 0; i < L.n_chunks; i++) {
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

/* Writes the laid-out chunks with writev, as many per call as allowed.  */
static int write_chunks(int fd, const layout *L) {
  size_t i = 0;
  uint64_t done_in_chunk = 0;
  struct iovec iov[64];
  while (i < L->n_chunks) {
    int n = 0;
    for (size_t j = i; j < L->n_chunks && n < 64; j++, n++) {
      uint64_t skip = j == i ? done_in_chunk : 0;
      iov[n].iov_base = (void *)((const unsigned char *)L->chunks[j].p + skip);
      iov[n].iov_len = (size_t)(L->chunks[j].n - skip);
    }
    ssize_t w = writev(fd, iov, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    uint64_t left = (uint64_t)w;
    while (i < L->n_chunks && left > 0) {
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
    while (i < L->n_chunks && L->chunks[i].n == done_in_chunk) {
      i++;
      done_in_chunk = 0;
    }
  }
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
    return fail(err, errlen, "out of memory");
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
    rc = fail(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
  else if ((flags & BALLARUS_WRITE_FSYNC) && fsync(fd) != 0)
    rc = fail(err, errlen, "cannot fsync %s: %s", tmp, strerror(errno));
  if (close(fd) != 0 && rc == 0)
    rc = fail(err, errlen, "cannot close %s: %s", tmp, strerror(errno));
  if (rc == 0)
    rc = ballarus_sf_commit(dirfd, tmp, name, sf, err, errlen);
  else
    unlinkat(dirfd, tmp, 0);
  free(tmp);
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

/* Merges two sorted sparse arrays into a new one (counts of equal keys
   added modulo 2^64, entries that sum to 0 dropped); returns NULL when out
   of memory.  */
static ballarus_sparse_entry *merge_sparse(const ballarus_sparse_entry *a,
                                           uint64_t na,
                                           const ballarus_sparse_entry *b,
                                           uint64_t nb, uint64_t *n_out) {
  ballarus_sparse_entry *m = xmalloc((na + nb) * sizeof *m);
  if (m == NULL) return NULL;
  uint64_t i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && sparse_less(&a[i], &b[j]))) {
      m[n++] = a[i++];
    } else if (i == na || sparse_less(&b[j], &a[i])) {
      m[n++] = b[j++];
    } else {
      /* A +1 written earlier and its "-1" undo cancel: drop the entry,
         as the runtime never writes zero counts either.  */
      m[n] = a[i];
      m[n].count = ballarus_count_add(a[i].count, b[j].count);
      if (m[n].count != 0) n++;
      i++;
      j++;
    }
  }
  *n_out = n;
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
  d->sparse = xmalloc(s->n_sparse * sizeof(ballarus_sparse_entry));
  if (d->metadata == NULL || d->counters == NULL || d->sparse == NULL) {
    record_free(d);
    return -1;
  }
  if (!s->borrowed) memcpy(d->metadata, s->metadata, s->meta_size);
  if (s->n_counters > 0 && !s->counters_borrowed)
    memcpy(d->counters, s->counters, s->n_counters * 8);
  if (s->n_sparse > 0)
    memcpy(d->sparse, s->sparse, s->n_sparse * sizeof(ballarus_sparse_entry));
  return 0;
}

int ballarus_profile_merge(ballarus_profile *dst, const ballarus_profile *src,
                           char *err, size_t errlen) {
  if (!sorted_unique(dst))
    return fail(err, errlen, "destination records not sorted by unique stamp");

  /* Phase 1: refuse before touching anything.  */
  int64_t with = -1;
  int64_t c = first_conflict(dst, src, &with);
  if (c >= 0) {
    ballarus_meta_names n;
    const ballarus_profile_record *r = &src->records[c];
    if (ballarus_meta_get_names(r->metadata, r->meta_size, &n) != 0)
      n.profile = n.object = n.source = "?";
    return fail(err, errlen,
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
      return fail(err, errlen,
                  "records with stamp 0x%016llx differ in metadata or counter "
                  "count",
                  (ull)s->stamp);
  }
  if ((uint64_t)dst->n_records + n_new > UINT32_MAX)
    return fail(err, errlen, "too many records");

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
      for (uint32_t j = dst->n_records; j < n_out; j++) record_free(&out[j]);
      for (uint32_t j = 0; j < src->n_records; j++) free(sparse[j]);
      free(out);
      free(sparse);
      free(n_sparse);
      return fail(err, errlen, "two source records with stamp 0x%016llx",
                  (ull)dup);
    }
  }

  /* Phase 3: commit (cannot fail).  */
  for (uint32_t i = 0; i < src->n_records; i++) {
    const ballarus_profile_record *s = &src->records[i];
    int64_t d = find_stamp(dst, s->stamp);
    if (d < 0) continue;
    ballarus_profile_record *r = &dst->records[d];
    for (uint64_t j = 0; j < s->n_counters; j++)
      r->counters[j] = ballarus_count_add(r->counters[j], s->counters[j]);
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
  dst->runs = ballarus_sat_add(dst->runs, src->runs);
  free(sparse);
  free(n_sparse);
  return 0;

oom:
  if (out != NULL)
    for (uint32_t i = dst->n_records; i < n_out; i++) record_free(&out[i]);
  if (sparse != NULL)
    for (uint32_t i = 0; i < src->n_records; i++) free(sparse[i]);
  free(out);
  free(sparse);
  free(n_sparse);
  return fail(err, errlen, "out of memory");
}

/* ---------------------------------------------------------------------- */
/* The runtime's merge: rebuilt objects replace their old data.             */

int ballarus_profile_update(ballarus_profile *dst, const ballarus_profile *src,
                            ballarus_replace_fn on_replace, void *ctx,
                            char *err, size_t errlen) {
  if (!sorted_unique(dst))
    return fail(err, errlen, "destination records not sorted by unique stamp");
  const uint32_t nd = dst->n_records, ns = src->n_records;
  /* What happens to each record.  src: 0 skip, 1 add into dst record
     `into`, 2 copy (a new stamp).  dst: kept, or replaced by src record
     `by` (an earlier build of an identity src brings another build of).  */
  enum { SKIP, ADD, COPY };
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
    fail(err, errlen, "out of memory");
    goto done;
  }
  for (uint32_t d = 0; d < nd; d++) by[d] = -1;

  /* Phase 1: decide, refuse before touching anything.  */
  for (uint32_t i = 0; i < ns; i++) {
    const ballarus_profile_record *s = &src->records[i];
    for (uint32_t j = 0; j < i; j++)
      if (src->records[j].stamp == s->stamp) {
        fail(err, errlen, "two source records with stamp 0x%016llx",
             (ull)s->stamp);
        goto done;
      }
    int64_t d = find_stamp(dst, s->stamp);
    if (d >= 0) {
      const ballarus_profile_record *r = &dst->records[d];
      if (r->meta_size != s->meta_size || r->n_counters != s->n_counters ||
          (r->metadata != s->metadata &&
           memcmp(r->metadata, s->metadata, s->meta_size) != 0)) {
        fail(err, errlen,
             "records with stamp 0x%016llx differ in metadata or counter "
             "count",
             (ull)s->stamp);
        goto done;
      }
      act[i] = ADD;
      into[i] = d;
      continue;
    }
    /* A zero record (runs 0: a TU that has not run, written so its file
       shows it) never replaces counts, and is not needed where its
       identity is already present.  */
    if (s->runs == 0 && find_identity(dst, s->identity) >= 0) {
      act[i] = SKIP;
      continue;
    }
    act[i] = COPY;
    n_copies++;
  }
  for (uint32_t d = 0; d < nd; d++) {
    const ballarus_profile_record *r = &dst->records[d];
    for (uint32_t i = 0; i < ns; i++) {
      const ballarus_profile_record *s = &src->records[i];
      if (act[i] == COPY && s->runs > 0 && s->identity == r->identity) {
        by[d] = i;
        n_kept--;
        break;
      }
    }
  }
  if ((uint64_t)n_kept + n_copies > UINT32_MAX) {
    fail(err, errlen, "too many records");
    goto done;
  }

  /* Phase 2: allocate everything the result needs.  */
  out = calloc((size_t)n_kept + n_copies + 1, sizeof *out);
  if (out == NULL) {
    fail(err, errlen, "out of memory");
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
        fail(err, errlen, "out of memory");
        goto done;
      }
      if (act[i] == COPY) {
        if (copy_record(&copies[k], s) != 0) {
          fail(err, errlen, "out of memory");
          goto done;
        }
        k++;
      } else if (act[i] == ADD && s->n_sparse > 0) {
        const ballarus_profile_record *r = &dst->records[into[i]];
        sparse[i] = merge_sparse(r->sparse, r->n_sparse, s->sparse,
                                 s->n_sparse, &n_sparse[i]);
        if (sparse[i] == NULL) {
          fail(err, errlen, "out of memory");
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
    for (uint64_t j = 0; j < s->n_counters; j++)
      r->counters[j] = ballarus_count_add(r->counters[j], s->counters[j]);
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
        record_free(&dst->records[a]);
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
  dst->runs = ballarus_sat_add(dst->runs, src->runs);
  rc = 0;

done:
  if (copies != NULL)
    for (uint32_t k = 0; k < n_copies; k++) record_free(&copies[k]);
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
