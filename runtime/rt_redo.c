/* rt_redo.c — the redo log of a directory's dump (ballarus_rt_internal.h):
   the new bytes of every profile a dump changes are written into the
   directory's lock file first, committed by its header, then written in
   place; a writer killed in between leaves a committed log that the next
   holder of the lock replays before anything else.

   The lock file: a 64-byte header, then the entries.
     0  magic "BLRSRDO1"
     8  uint32 state       REDO_CLEAN, REDO_COMMITTED (the entries are to be
                           applied) or REDO_REPLACING (temporary files may
                           be lying about: a profile was being replaced)
    12  uint32 n_entries
    16  uint64 size        bytes of entries after the header
    24  uint64 entries     ballarus_hash64 of those bytes
    32  uint64 check       ballarus_hash64 of the 32 bytes before it
   An entry: uint32 name_len, uint32 flags (REDO_NEW: a file the dump
   creates, written directly, no ranges: a replay removes it unless it is
   whole), uint32 mode,
   uint32 n_ranges, uint64 new_size, the name, then n_ranges ranges: uint64 off,
   uint64 len (top bit REDO_ZERO: len zero bytes, no data follow; else len
   bytes of data follow).  Entries and ranges are packed, unaligned.

   In memory, a range whose bytes lie in the dump's read buffer (the
   counters merged in place there) holds a pointer to them instead of a
   copy, its len marked REDO_LENT: the log is written by one gather write
   of its pieces, its hash taken over them, so the changed bytes are not
   copied into fresh pages first.  ballarus_redo_own copies them before
   the read buffer is reused.  */

#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/profile_io.h"
#include "runtime/safe_file.h"

#define REDO_MAGIC "BLRSRDO1"
#define REDO_HEADER 64u
#define REDO_CLEAN 0u
#define REDO_COMMITTED 1u
#define REDO_REPLACING 2u
#define REDO_NEW 1u
#define REDO_ZERO (1ull << 63)
#define REDO_LENT (1ull << 62) /* in memory only: a pointer follows */
#define ENTRY_HEADER 24u
/* A log larger than this is cut back to its header once applied.  */
#define REDO_KEEP (256u << 10)

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Test-only (docs/DESIGN.md): BALLARUS_TEST_KILL_AT=POINT kills the
   process with SIGKILL at that point of a dump that writes a log.  */
void ballarus_redo_test_kill(const char *point) {
  const char *at = getenv("BALLARUS_TEST_KILL_AT");
  if (at != NULL && strcmp(at, point) == 0) raise(SIGKILL);
}

/* Appends n bytes of p (NULL: room only) to the memory of the log, of
   which disk_n are bytes of the log written.  */
static int append(ballarus_redo *r, const void *p, uint64_t n,
                  uint64_t disk_n) {
  if (r->failed) return -1;
  if (r->used + n > r->cap) {
    uint64_t cap = r->cap == 0 ? 4096 : r->cap;
    while (cap < r->used + n) cap *= 2;
    unsigned char *b = cap > SIZE_MAX ? NULL : realloc(r->buf, (size_t)cap);
    if (b == NULL) {
      r->failed = 1;
      return -1;
    }
    r->buf = b;
    r->cap = cap;
  }
  if (p != NULL) memcpy(r->buf + r->used, p, (size_t)n);
  r->used += n;
  r->size += disk_n;
  return 0;
}

/* Remembers the lent range whose header is at buf + at.  */
static int note_lent(ballarus_redo *r, uint64_t at) {
  if (r->n_lent == r->lent_cap) {
    const size_t cap = r->lent_cap == 0 ? 64 : 2 * r->lent_cap;
    uint64_t *l = realloc(r->lent_at, cap * sizeof *l);
    if (l == NULL) {
      r->failed = 1;
      return -1;
    }
    r->lent_at = l;
    r->lent_cap = cap;
  }
  r->lent_at[r->n_lent++] = at;
  return 0;
}

int ballarus_redo_begin_file(ballarus_redo *r, const char *name,
                             uint64_t new_size, int new_file, int mode) {
  unsigned char h[ENTRY_HEADER];
  const uint32_t len = (uint32_t)strlen(name);
  const uint32_t flags = new_file ? REDO_NEW : 0;
  const uint32_t m = mode >= 0 ? (uint32_t)mode : ~0u, zero = 0;
  memcpy(h, &len, 4);
  memcpy(h + 4, &flags, 4);
  memcpy(h + 8, &m, 4);
  memcpy(h + 12, &zero, 4);
  memcpy(h + 16, &new_size, 8);
  r->entry_at = r->used;
  r->range_at = UINT64_MAX;
  if (append(r, h, sizeof h, sizeof h) != 0 || append(r, name, len, len) != 0)
    return -1;
  r->n_entries++;
  return 0;
}

void ballarus_redo_lend(ballarus_redo *r, const void *p, uint64_t n) {
  r->lend_lo = p;
  r->lend_n = p != NULL ? n : 0;
}

/* Whether p[0, n) lies in the memory lent to r.  */
static int in_lent(const ballarus_redo *r, const unsigned char *p,
                   uint64_t n) {
  const unsigned char *lo = r->lend_lo;
  return p != NULL && lo != NULL && p >= lo &&
         (uint64_t)(p - lo) <= r->lend_n && n <= r->lend_n - (uint64_t)(p - lo);
}

static const unsigned char *lent_ptr(const unsigned char *slot) {
  const unsigned char *q;
  memcpy(&q, slot, sizeof q);
  return q;
}

/* Extends the last range by p[0, n) at off when it continues it: same
   kind, and for a lent range the next bytes of the same memory.  1 when
   done, 0 when not, -1 when out of memory.  */
static int extend_last(ballarus_redo *r, uint64_t off, const unsigned char *p,
                       uint64_t n, int lent) {
  if (r->range_at == UINT64_MAX) return 0;
  unsigned char *last = r->buf + r->range_at;
  const uint64_t lo = get64(last), ln = get64(last + 8);
  const uint64_t len = ln & ~(REDO_ZERO | REDO_LENT);
  const int zero = (ln & REDO_ZERO) != 0, was_lent = (ln & REDO_LENT) != 0;
  if (lo + len != off || zero != (p == NULL) || was_lent != lent) return 0;
  if (lent && lent_ptr(last + 16) + len != p) return 0;
  if (!zero && !lent) {
    if (append(r, p, n, n) != 0) return -1;
    last = r->buf + r->range_at;
  } else {
    r->size += lent ? n : 0;
  }
  const uint64_t nl = ln + n;
  memcpy(last + 8, &nl, 8);
  return 1;
}

int ballarus_redo_add(ballarus_redo *r, uint64_t off, const void *p,
                      uint64_t n) {
  if (n == 0) return 0;
  if (r->failed) return -1;
  const unsigned char *q = p;
  /* Shorter than a pointer: copied.  */
  const int lent = n >= sizeof(void *) && in_lent(r, q, n);
  const int ext = extend_last(r, off, q, n, lent);
  if (ext != 0) return ext > 0 ? 0 : -1;
  unsigned char h[16];
  const uint64_t len = q == NULL ? n | REDO_ZERO : lent ? n | REDO_LENT : n;
  memcpy(h, &off, 8);
  memcpy(h + 8, &len, 8);
  const uint64_t at = r->used;
  int rc = append(r, h, sizeof h, sizeof h);
  if (rc == 0 && lent)
    rc = note_lent(r, at) != 0 || append(r, &q, sizeof q, n) != 0 ? -1 : 0;
  else if (rc == 0 && q != NULL)
    rc = append(r, q, n, n);
  if (rc != 0) return -1;
  r->range_at = at;
  unsigned char *e = r->buf + r->entry_at;
  const uint32_t k = get32(e + 12) + 1;
  memcpy(e + 12, &k, 4);
  return 0;
}

/* The log's bytes as written, in order: pieces of its memory and, for
   each lent range, its len without the mark and the lent bytes.  iov
   holds room for 3 * n_lent + 1 pieces, lens for n_lent.  Returns the
   number of pieces.  */
static size_t disk_pieces(const ballarus_redo *r, struct iovec *iov,
                          uint64_t *lens) {
  size_t n = 0;
  uint64_t from = 0;
  for (size_t k = 0; k < r->n_lent; k++) {
    const uint64_t at = r->lent_at[k];
    lens[k] = get64(r->buf + at + 8) & ~REDO_LENT;
    iov[n++] = (struct iovec){r->buf + from, (size_t)(at + 8 - from)};
    iov[n++] = (struct iovec){&lens[k], 8};
    iov[n++] = (struct iovec){(void *)lent_ptr(r->buf + at + 16),
                              (size_t)lens[k]};
    from = at + 16 + sizeof(void *);
  }
  if (from < r->used)
    iov[n++] = (struct iovec){r->buf + from, (size_t)(r->used - from)};
  return n;
}

/* Copies a log's lent bytes into its memory (the memory lent is about to
   be reused), in place: from the last lent range back, the bytes after
   each move up by what the ranges before it grow (a lent range is at
   least a pointer long, so nothing moves down).  */
int ballarus_redo_own(ballarus_redo *r) {
  r->lend_lo = NULL;
  r->lend_n = 0;
  if (r->failed) return -1;
  if (r->n_lent == 0) return 0;
  const uint64_t used = r->used;
  if (append(r, NULL, r->size - used, 0) != 0) return -1;
  uint64_t src_end = used, dst_end = r->size, shift = 0;
  for (size_t k = r->n_lent; k-- > 0;) {
    const uint64_t at = r->lent_at[k];
    unsigned char *h = r->buf + at;
    const uint64_t len = get64(h + 8) & ~REDO_LENT;
    const unsigned char *data = lent_ptr(h + 16);
    const uint64_t from = at + 16 + sizeof(void *);
    memmove(r->buf + dst_end - (src_end - from), r->buf + from,
            (size_t)(src_end - from));
    dst_end -= src_end - from;
    memcpy(r->buf + dst_end - len, data, (size_t)len);
    dst_end -= len;
    memcpy(h + 8, &len, 8);
    if (at < r->entry_at) shift += len - sizeof(void *);
    src_end = at + 16;
  }
  r->used = r->size;
  r->entry_at += shift;
  r->range_at = UINT64_MAX;
  r->n_lent = 0;
  return 0;
}

void ballarus_redo_set_size(ballarus_redo *r, uint64_t new_size) {
  if (!r->failed) memcpy(r->buf + r->entry_at + 16, &new_size, 8);
}

void ballarus_redo_free(ballarus_redo *r) {
  free(r->buf);
  free(r->lent_at);
  memset(r, 0, sizeof *r);
}

/* ballarus_hash64 of the concatenation of n pieces.  */
static uint64_t hash_pieces(const struct iovec *iov, size_t n) {
  uint64_t h = BALLARUS_HASH_INIT;
  unsigned char tail[8];
  size_t t = 0; /* bytes of an unfinished word, in tail */
  for (size_t i = 0; i < n; i++) {
    const unsigned char *p = iov[i].iov_base;
    size_t len = iov[i].iov_len;
    while (t > 0 && len > 0) {
      tail[t++] = *p++;
      len--;
      if (t == 8) {
        h = ballarus_hash64_update(h, tail, 8);
        t = 0;
      }
    }
    if (len == 0) continue;
    const size_t whole = len & ~(size_t)7;
    h = ballarus_hash64_update(h, p, whole);
    t = len - whole;
    memcpy(tail, p + whole, t);
  }
  return ballarus_hash64_update(h, tail, t);
}

static void make_header(unsigned char *h, uint32_t state, uint32_t n,
                        const struct iovec *iov, size_t n_iov,
                        uint64_t size) {
  memset(h, 0, REDO_HEADER);
  memcpy(h, REDO_MAGIC, 8);
  memcpy(h + 8, &state, 4);
  memcpy(h + 12, &n, 4);
  memcpy(h + 16, &size, 8);
  const uint64_t eh = hash_pieces(iov, n_iov);
  memcpy(h + 24, &eh, 8);
  const uint64_t check = ballarus_hash64(h, 32);
  memcpy(h + 32, &check, 8);
}

static int pwrite_all(int fd, const void *p, uint64_t n, uint64_t off) {
  const unsigned char *b = p;
  while (n > 0) {
    ssize_t w = pwrite(fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n,
                       (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (uint64_t)w;
    off += (uint64_t)w;
  }
  return 0;
}

/* Writes the header of state `state` with no entries.  */
static int write_state(int lfd, uint32_t state) {
  unsigned char h[REDO_HEADER];
  make_header(h, state, 0, NULL, 0, 0);
  return pwrite_all(lfd, h, sizeof h, 0);
}

/* Writes the first `limit` bytes of pieces iov[0, n) at off of fd (the
   pieces are consumed), in as few system calls as they allow.  Returns
   how many it took, or -1.  */
static int write_pieces(int fd, struct iovec *iov, size_t n, uint64_t off,
                        uint64_t limit) {
  int calls = 0;
  while (n > 0 && limit > 0) {
    size_t k = 0;
    uint64_t want = 0;
    while (k < n && k < IOV_MAX && want < limit) want += iov[k++].iov_len;
    const size_t cut = want > limit ? (size_t)(want - limit) : 0;
    iov[k - 1].iov_len -= cut;
    ssize_t w = pwritev(fd, iov, (int)k, (off_t)off);
    iov[k - 1].iov_len += cut;
    calls++;
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    off += (uint64_t)w;
    limit -= (uint64_t)w;
    for (size_t got = (size_t)w; got > 0;) {
      const size_t take = got < iov->iov_len ? got : iov->iov_len;
      iov->iov_base = (unsigned char *)iov->iov_base + take;
      iov->iov_len -= take;
      got -= take;
      if (iov->iov_len == 0) {
        iov++;
        n--;
      }
    }
  }
  return calls;
}

int ballarus_redo_commit(int lfd, const ballarus_redo *r) {
  unsigned char h[REDO_HEADER];
  struct iovec *iov = malloc((3 * r->n_lent + 2) * sizeof *iov);
  uint64_t *lens = malloc((r->n_lent + 1) * sizeof *lens);
  if (iov == NULL || lens == NULL) {
    free(iov);
    free(lens);
    errno = ENOMEM;
    return -1;
  }
  const size_t n = disk_pieces(r, iov + 1, lens) + 1;
  make_header(h, REDO_COMMITTED, r->n_entries, iov + 1, n - 1, r->size);
  iov[0] = (struct iovec){h, sizeof h};
  const uint64_t want = sizeof h + r->size;
  const char *kill_at = getenv("BALLARUS_TEST_KILL_AT");
  /* Test-only: the header and half the entries, as a kill mid-write.  */
  if (kill_at != NULL && strcmp(kill_at, "torn") == 0 && r->size > 1 &&
      write_pieces(lfd, iov, n, 0, sizeof h + r->size / 2) >= 0)
    raise(SIGKILL);
  /* One system call where the pieces allow; a write cut short by the kill
     leaves entries that fail their hash, which the next holder ignores.
     Written in several, the header is written again last (it is what
     commits).  */
  const int calls = write_pieces(lfd, iov, n, 0, want);
  int rc = calls < 0 ? -1 : 0;
  if (calls > 1) rc = pwrite_all(lfd, h, sizeof h, 0);
  free(iov);
  free(lens);
  return rc;
}

int ballarus_redo_set_replacing(int lfd) {
  return write_state(lfd, REDO_REPLACING);
}

void ballarus_redo_clear(int lfd, uint64_t log_size) {
  write_state(lfd, REDO_CLEAN);
  if (log_size > REDO_KEEP) (void)ftruncate(lfd, REDO_HEADER);
}

/* One entry, parsed.  */
typedef struct {
  const char *name; /* not NUL-terminated: name_len bytes */
  uint32_t name_len, flags, mode, n_ranges;
  uint64_t new_size;
  const unsigned char *ranges; /* packed */
  uint64_t ranges_size;
} redo_entry;

/* Parses the entry at buf[*at, size); -1 when it does not add up.  mem:
   a log in memory, whose lent ranges hold pointers.  */
static int next_entry(const unsigned char *buf, uint64_t size, uint64_t *at,
                      redo_entry *e, int mem) {
  if (size - *at < ENTRY_HEADER) return -1;
  const unsigned char *h = buf + *at;
  e->name_len = get32(h);
  e->flags = get32(h + 4);
  e->mode = get32(h + 8);
  e->n_ranges = get32(h + 12);
  e->new_size = get64(h + 16);
  uint64_t o = *at + ENTRY_HEADER;
  if (e->name_len == 0 || e->name_len > 4096 || size - o < e->name_len)
    return -1;
  e->name = (const char *)buf + o;
  o += e->name_len;
  e->ranges = buf + o;
  for (uint32_t k = 0; k < e->n_ranges; k++) {
    if (size - o < 16) return -1;
    const uint64_t off = get64(buf + o), len = get64(buf + o + 8);
    const int lent = mem && (len & REDO_LENT);
    const uint64_t n = len & ~(REDO_ZERO | (lent ? REDO_LENT : 0));
    if (off > e->new_size || n > e->new_size - off) return -1;
    o += 16;
    if (lent) {
      if (size - o < sizeof(void *)) return -1;
      o += sizeof(void *);
    } else if (!(len & REDO_ZERO)) {
      if (size - o < n) return -1;
      o += n;
    }
  }
  e->ranges_size = (uint64_t)(buf + o - e->ranges);
  *at = o;
  return 0;
}

/* Zeroes [off, off + n) of fd: a hole punched, or zeros written where
   the file system cannot.  */
static int zero_range(int fd, uint64_t off, uint64_t n) {
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
                (off_t)n) == 0)
    return 0;
  static const unsigned char zeros[4096];
  while (n > 0) {
    const uint64_t k = n < sizeof zeros ? n : sizeof zeros;
    if (pwrite_all(fd, zeros, k, off) != 0) return -1;
    off += k;
    n -= k;
  }
  return 0;
}

/* Writes entry e into fd, a file of cur_size bytes.  *wrote: whether any
   byte of it changed.  */
static int apply_entry(int fd, const redo_entry *e, uint64_t cur_size,
                       int *wrote) {
  const unsigned char *p = e->ranges;
  /* Ranges of data that continue each other: one gather write.  */
  struct iovec iov[16];
  size_t n_iov = 0;
  uint64_t at = 0, end = 0;
  int first = 1;
  for (uint32_t k = 0; k <= e->n_ranges; k++) {
    uint64_t off = 0, n = 0;
    const unsigned char *data = NULL;
    if (k < e->n_ranges) {
      const uint64_t len = get64(p + 8);
      off = get64(p);
      n = len & ~(REDO_ZERO | REDO_LENT);
      p += 16;
      if (len & REDO_LENT) {
        data = lent_ptr(p);
        p += sizeof(void *);
      } else if (!(len & REDO_ZERO)) {
        data = p;
        p += n;
      }
    }
    if (n_iov > 0 && (k == e->n_ranges || data == NULL || off != end ||
                      n_iov == sizeof iov / sizeof *iov)) {
      if (write_pieces(fd, iov, n_iov, at, end - at) < 0) return -1;
      n_iov = 0;
      if (first) ballarus_redo_test_kill("applying");
      first = 0;
    }
    if (k == e->n_ranges) break;
    *wrote = 1;
    if (data == NULL) {
      if (off < cur_size && zero_range(fd, off, n) != 0) return -1;
      if (first) ballarus_redo_test_kill("applying");
      first = 0;
      continue;
    }
    if (n_iov == 0) at = off;
    iov[n_iov++] = (struct iovec){(void *)data, (size_t)n};
    end = off + n;
  }
  if (cur_size != e->new_size) {
    *wrote = 1;
    if (ftruncate(fd, (off_t)e->new_size) != 0) return -1;
  }
  return 0;
}

/* Opens the entry's file in dfd for writing, never through a link, only a
   regular file of this user.  */
static int open_target(int dfd, const char *name, uint64_t *cur_size,
                       char *err, size_t errlen) {
  int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "%s", errno == ELOOP ? "a symbolic link"
                                               : strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    snprintf(err, errlen, "not a regular file of this user");
    close(fd);
    return -1;
  }
  *cur_size = (uint64_t)st.st_size;
  return fd;
}

/* The new profile `name` of dfd a killed writer was creating: kept when
   it was written whole (it reads as a valid profile), else removed, if
   it is a regular file of this user (the counts it would hold were only
   its writer's).  */
static void remove_new(int dfd, const char *dir, const char *name) {
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  int whole = 1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return;
  }
  ballarus_profile p;
  char err[256];
  whole = ballarus_profile_read_fd(fd, &p, err, sizeof err) == 0;
  if (whole) ballarus_profile_free(&p);
  close(fd);
  if (!whole && unlinkat(dfd, name, 0) == 0 && ballarus_rt_verbose)
    ballarus_rt_warn("%s/%s: removed, left incomplete by a process killed "
                     "while writing it", dir, name);
}

/* Replays the committed log buf[0, size) in dfd: every entry written
   again (they hold the new bytes, so a second application changes
   nothing).  */
static void replay(int dfd, const char *dir, const unsigned char *buf,
                   uint64_t size, uint32_t n) {
  uint64_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    redo_entry e;
    if (next_entry(buf, size, &at, &e, 0) != 0) return;
    char name[4097], err[256] = "";
    memcpy(name, e.name, e.name_len);
    name[e.name_len] = '\0';
    if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
      continue;
    uint64_t cur = 0;
    int wrote = 0;
    if (e.flags & REDO_NEW) {
      /* Its writer was creating it: what it wrote may be partial.  */
      remove_new(dfd, dir, name);
      continue;
    }
    int fd = open_target(dfd, name, &cur, err, sizeof err);
    if (fd >= 0 && apply_entry(fd, &e, cur, &wrote) != 0)
      snprintf(err, sizeof err, "%s", strerror(errno));
    if (fd >= 0) close(fd);
    if (err[0] != '\0')
      ballarus_rt_warn("%s/%s: cannot complete the dump of a process killed "
                       "while writing it (%s)", dir, name, err);
    else if (ballarus_rt_verbose)
      ballarus_rt_warn("%s/%s: completed the dump of a process killed while "
                       "writing it", dir, name);
  }
}

int ballarus_redo_recover(int dfd, const char *dir, int lfd, int created) {
  unsigned char h[REDO_HEADER];
  ssize_t got = 0;
  /* A lock file just created is empty (and open for writing only).  */
  while (!created && (got = pread(lfd, h, sizeof h, 0)) < 0 && errno == EINTR)
    ;
  if (got < (ssize_t)sizeof h) {
    /* New, or an older runtime's lock file left by a holder killed
       mid-dump: its temporary files may be lying about.  */
    write_state(lfd, REDO_CLEAN);
    return !created;
  }
  const uint32_t state = get32(h + 8), n = get32(h + 12);
  const uint64_t size = get64(h + 16);
  if (memcmp(h, REDO_MAGIC, 8) != 0 || get64(h + 32) != ballarus_hash64(h, 32)) {
    write_state(lfd, REDO_CLEAN);
    return 1;
  }
  if (state == REDO_CLEAN) return 0;
  if (state == REDO_COMMITTED && size < ((uint64_t)1 << 40)) {
    unsigned char *buf = malloc(size == 0 ? 1 : (size_t)size);
    uint64_t have = 0;
    while (buf != NULL && have < size) {
      ssize_t r = pread(lfd, buf + have, (size_t)(size - have),
                        (off_t)(REDO_HEADER + have));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      have += (uint64_t)r;
    }
    /* A torn log (its writer killed while writing it) was never applied:
       the profiles are as they were, and it is dropped.  */
    if (buf != NULL && have == size && ballarus_hash64(buf, size) == get64(h + 24))
      replay(dfd, dir, buf, size, n);
    free(buf);
  }
  ballarus_redo_clear(lfd, size);
  return state == REDO_REPLACING;
}

int ballarus_redo_skip(const ballarus_redo *r, uint64_t *at) {
  redo_entry e;
  return next_entry(r->buf, r->used, at, &e, 1);
}

int ballarus_redo_apply(int dfd, const ballarus_redo *r, uint64_t *at,
                        int *fd, uint64_t cur_size, const char *name,
                        int *wrote, char *err, size_t errlen) {
  redo_entry e;
  *wrote = 0;
  if (next_entry(r->buf, r->used, at, &e, 1) != 0) {
    snprintf(err, errlen, "the redo log does not add up");
    return -1;
  }
  if (*fd < 0) {
    *fd = open_target(dfd, name, &cur_size, err, errlen);
    if (*fd < 0) return -1;
  }
  if (apply_entry(*fd, &e, cur_size, wrote) != 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    return -1;
  }
  return 0;
}
