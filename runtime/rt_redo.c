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
   bytes of data follow).  Entries and ranges are packed, unaligned.  */

#define _GNU_SOURCE

#include <errno.h>
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

static int append(ballarus_redo *r, const void *p, uint64_t n) {
  if (r->failed) return -1;
  if (r->size + n > r->cap) {
    uint64_t cap = r->cap == 0 ? 65536 : r->cap;
    while (cap < r->size + n) cap *= 2;
    unsigned char *b = cap > SIZE_MAX ? NULL : realloc(r->buf, (size_t)cap);
    if (b == NULL) {
      r->failed = 1;
      return -1;
    }
    r->buf = b;
    r->cap = cap;
  }
  if (p != NULL) memcpy(r->buf + r->size, p, (size_t)n);
  r->size += n;
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
  r->entry_at = r->size;
  r->range_at = UINT64_MAX;
  if (append(r, h, sizeof h) != 0 || append(r, name, len) != 0) return -1;
  r->n_entries++;
  return 0;
}

int ballarus_redo_add(ballarus_redo *r, uint64_t off, const void *p,
                      uint64_t n) {
  if (n == 0) return 0;
  if (r->range_at != UINT64_MAX) {
    /* Continues the last range: one write where the file is contiguous.  */
    unsigned char *last = r->buf + r->range_at;
    const uint64_t lo = get64(last), ln = get64(last + 8);
    const int zero = (ln & REDO_ZERO) != 0;
    if (lo + (ln & ~REDO_ZERO) == off && zero == (p == NULL)) {
      if (!zero && append(r, p, n) != 0) return -1;
      last = r->buf + r->range_at;
      const uint64_t nl = ln + n;
      memcpy(last + 8, &nl, 8);
      return 0;
    }
  }
  unsigned char h[16];
  const uint64_t len = p == NULL ? n | REDO_ZERO : n;
  memcpy(h, &off, 8);
  memcpy(h + 8, &len, 8);
  const uint64_t at = r->size;
  if (append(r, h, sizeof h) != 0 || (p != NULL && append(r, p, n) != 0))
    return -1;
  r->range_at = at;
  unsigned char *e = r->buf + r->entry_at;
  const uint32_t k = get32(e + 12) + 1;
  memcpy(e + 12, &k, 4);
  return 0;
}

void ballarus_redo_set_size(ballarus_redo *r, uint64_t new_size) {
  if (!r->failed) memcpy(r->buf + r->entry_at + 16, &new_size, 8);
}

void ballarus_redo_free(ballarus_redo *r) {
  free(r->buf);
  memset(r, 0, sizeof *r);
}

static void make_header(unsigned char *h, uint32_t state, uint32_t n,
                        const unsigned char *entries, uint64_t size) {
  memset(h, 0, REDO_HEADER);
  memcpy(h, REDO_MAGIC, 8);
  memcpy(h + 8, &state, 4);
  memcpy(h + 12, &n, 4);
  memcpy(h + 16, &size, 8);
  const uint64_t eh = ballarus_hash64(entries, size);
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
  make_header(h, state, 0, NULL, 0);
  return pwrite_all(lfd, h, sizeof h, 0);
}

int ballarus_redo_commit(int lfd, const ballarus_redo *r) {
  unsigned char h[REDO_HEADER];
  make_header(h, REDO_COMMITTED, r->n_entries, r->buf, r->size);
  /* One system call; a write cut short by the kill leaves entries that
     fail their hash, which the next holder ignores.  */
  struct iovec iov[2] = {{h, sizeof h}, {r->buf, (size_t)r->size}};
  const char *kill_at = getenv("BALLARUS_TEST_KILL_AT");
  if (kill_at != NULL && strcmp(kill_at, "torn") == 0 && r->size > 1) {
    /* Test-only: the header and half the entries, as a kill mid-write.  */
    iov[1].iov_len /= 2;
    if (pwritev(lfd, iov, 2, 0) >= 0) raise(SIGKILL);
    iov[1].iov_len = (size_t)r->size;
  }
  uint64_t want = sizeof h + r->size;
  ssize_t w;
  do {
    w = pwritev(lfd, iov, 2, 0);
  } while (w < 0 && errno == EINTR);
  if (w == (ssize_t)want) return 0;
  if (w < 0) return -1;
  /* Short: the rest, then the header again (it is what commits).  */
  if (pwrite_all(lfd, r->buf, r->size, REDO_HEADER) != 0) return -1;
  return pwrite_all(lfd, h, sizeof h, 0);
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

/* Parses the entry at buf[*at, size); -1 when it does not add up.  */
static int next_entry(const unsigned char *buf, uint64_t size, uint64_t *at,
                      redo_entry *e) {
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
    const uint64_t n = len & ~REDO_ZERO;
    if (off > e->new_size || n > e->new_size - off) return -1;
    o += 16;
    if (!(len & REDO_ZERO)) {
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
  int first = 1;
  for (uint32_t k = 0; k < e->n_ranges; k++) {
    const uint64_t off = get64(p), len = get64(p + 8);
    const uint64_t n = len & ~REDO_ZERO;
    p += 16;
    *wrote = 1;
    if (len & REDO_ZERO) {
      if (off < cur_size && zero_range(fd, off, n) != 0) return -1;
    } else {
      if (pwrite_all(fd, p, n, off) != 0) return -1;
      p += n;
    }
    if (first) ballarus_redo_test_kill("applying");
    first = 0;
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
    if (next_entry(buf, size, &at, &e) != 0) return;
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
  return next_entry(r->buf, r->size, at, &e);
}

int ballarus_redo_apply(int dfd, const ballarus_redo *r, uint64_t *at,
                        int *fd, uint64_t cur_size, const char *name,
                        int *wrote, char *err, size_t errlen) {
  redo_entry e;
  *wrote = 0;
  if (next_entry(r->buf, r->size, at, &e) != 0) {
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
