/* rt_read_old.c — how a dump reads the existing profile it merges into
   (rt_dump_dir.c): into one buffer reused from file to file, a large
   file's holes and the metadata of this dump's own TUs left unread, then
   parsed with its metadata borrowed and its counters lent from the
   buffer.  */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/profile_io.h"
#include "runtime/profile_io_internal.h"

/* One buffer for the existing profiles a dump reads, reused from file to
   file (fresh memory for each would cost a page fault per 4 KiB), unmapped
   at the end of the dump.  Mapped by us, so that what lies beyond the
   bytes earlier files left in it (read_dirty) is known to be untouched
   zeros: a file's holes are not read into it, and stay untouched there.
   Under the master lock.  */
static unsigned char *read_buf;
static uint64_t read_cap, read_dirty;

void ballarus_rt_free_read_buf(void) {
  if (read_buf != NULL) munmap(read_buf, (size_t)read_cap);
  read_buf = NULL;
  read_cap = read_dirty = 0;
}

/* In a fork child: another thread of the parent may have been inside
   free or reserve_read_buf, between the system call (which a fork waits
   for) and the variables' update, so read_buf may name a mapping the
   child does not have.  Forgotten, never unmapped: a mapping the child
   does inherit is only leaked until it exits or execs.  */
void ballarus_rt_forget_read_buf(void) {
  read_buf = NULL;
  read_cap = read_dirty = 0;
}

const unsigned char *ballarus_rt_read_buf(void) { return read_buf; }

/* Makes read_buf hold at least n bytes (its contents kept).  */
static int reserve_read_buf(uint64_t n) {
  if (n <= read_cap) return 0;
  const uint64_t cap = (n + 65535) & ~(uint64_t)65535;
  if (cap > SIZE_MAX) return -1;
  void *b = read_buf == NULL
                ? mmap(NULL, (size_t)cap, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : mremap(read_buf, (size_t)read_cap, (size_t)cap,
                         MREMAP_MAYMOVE);
  if (b == MAP_FAILED) return -1;
  read_buf = b;
  read_cap = cap;
  return 0;
}

/* The holes of a file being read: ranges of read_buf that hold zeros and
   were not read (profile_io.h).  */
typedef struct {
  ballarus_zero_range *r;
  size_t n, cap;
} zero_list;

/* Records [a, b) as a hole of the file, zero in read_buf.  */
static int add_hole(zero_list *z, uint64_t a, uint64_t b) {
  if (a < read_dirty)
    memset(read_buf + a, 0, (size_t)((b < read_dirty ? b : read_dirty) - a));
  if (z->n == z->cap) {
    size_t c = z->cap == 0 ? 16 : 2 * z->cap;
    ballarus_zero_range *r = realloc(z->r, c * sizeof *r);
    if (r == NULL) return -1;
    z->r = r;
    z->cap = c;
  }
  z->r[z->n++] = (ballarus_zero_range){a, b - a};
  return 0;
}

/* Reads bytes [at, n) of fd into read_buf[at, n), its data only: holes
   (SEEK_HOLE; none where the file system does not say) go to *z, and the
   ranges skip[0, n_skip) (sorted) are not read.  Without `holes` (a file
   with none, or too small to be worth the system calls) every byte is
   data.  *end: where the bytes end (earlier if the file shrank while
   read).  */
static int read_data(int fd, uint64_t at, uint64_t n, int holes,
                     const ballarus_zero_range *skip, size_t n_skip,
                     zero_list *z, uint64_t *end, char *err, size_t errlen) {
  size_t k = 0;
  while (at < n) {
    off_t d = holes ? lseek(fd, (off_t)at, SEEK_DATA) : (off_t)at;
    if (d < 0) d = errno == ENXIO ? (off_t)n : (off_t)at;
    if ((uint64_t)d > n) d = (off_t)n;
    if ((uint64_t)d > at) {
      if (add_hole(z, at, (uint64_t)d) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
      }
      at = (uint64_t)d;
      if (at >= n) break;
    }
    off_t h = holes ? lseek(fd, (off_t)at, SEEK_HOLE) : (off_t)n;
    if (h < 0 || (uint64_t)h <= at || (uint64_t)h > n) h = (off_t)n;
    while (k < n_skip && skip[k].off + skip[k].len <= at) k++;
    uint64_t stop = (uint64_t)h;
    if (k < n_skip && skip[k].off <= at) {
      at = skip[k].off + skip[k].len; /* not read */
      continue;
    }
    if (k < n_skip && skip[k].off < stop) stop = skip[k].off;
    uint64_t got = 0;
    while (at + got < stop) {
      ssize_t r = pread(fd, read_buf + at + got, (size_t)(stop - at - got),
                        (off_t)(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        snprintf(err, errlen, "read error at offset %llu: %s",
                 (unsigned long long)(at + got), strerror(errno));
        return -1;
      }
      if (r == 0) break;
      got += (uint64_t)r;
    }
    at += got;
    if (at > read_dirty) read_dirty = at;
    if (at < stop) break; /* shrank: parse what there is */
  }
  *end = at < n ? at : n;
  return 0;
}

/* Whether bytes [off, off + size) of fd equal blob, compared through a
   small buffer (the file's bytes never land in read_buf).  */
static int file_equals(int fd, uint64_t off, const unsigned char *blob,
                       uint64_t size) {
  unsigned char buf[16384];
  for (uint64_t done = 0; done < size;) {
    size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
    ssize_t r = pread(fd, buf, want, (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || memcmp(buf, blob + done, (size_t)r) != 0) return 0;
    done += (uint64_t)r;
  }
  return 1;
}

/* Walks the record headers of the file fd of n bytes (n_records, from its
   checked file header) and finds the metadata of this dump's own TUs
   (known, their blobs) in place: each found into found[] (room for
   n_known), and its whole pages into skip[] (room as much): what the
   parser takes from the program's blob instead of reading.  The file is
   not trusted: any header that does not add up ends the walk, and the
   parser then reads and checks the rest as always.  Returns the count.  */
static size_t find_own_metadata(int fd, uint64_t n, uint32_t n_records,
                                const unsigned char *const *known,
                                size_t n_known, ballarus_known_meta *found,
                                ballarus_zero_range *skip) {
  size_t m = 0;
  uint64_t at = BALLARUS_PROFILE_HEADER_SIZE;
  for (uint32_t i = 0; i < n_records && m < n_known; i++) {
    unsigned char h[BALLARUS_RECORD_HEADER_SIZE];
    if (n - at < sizeof h || pread(fd, h, sizeof h, (off_t)at) != sizeof h)
      break;
    ballarus_record_header rh;
    memcpy(&rh, h, sizeof rh);
    const uint64_t meta_at = at + sizeof h;
    if (rh.tag != BALLARUS_RECORD_TU || rh.meta_size > n - meta_at ||
        rh.n_counters > n / 8 || rh.n_sparse > n / 8)
      break;
    const uint64_t next = meta_at + ((rh.meta_size + 7) & ~(uint64_t)7) +
                          rh.n_counters * 8 +
                          rh.n_sparse * sizeof(ballarus_sparse_entry);
    if (next > n || next < meta_at) break;
    for (size_t k = 0; k < n_known; k++) {
      ballarus_meta_header mh;
      memcpy(&mh, known[k], sizeof mh);
      if (mh.stamp != rh.stamp || mh.size != rh.meta_size ||
          !file_equals(fd, meta_at, known[k], mh.size))
        continue;
      found[m] = (ballarus_known_meta){meta_at, known[k], mh.size};
      const uint64_t lo = (meta_at + 4095) & ~(uint64_t)4095;
      const uint64_t hi = (meta_at + mh.size) & ~(uint64_t)4095;
      skip[m++] = (ballarus_zero_range){lo, hi > lo ? hi - lo : 0};
      break;
    }
    at = next;
  }
  return m;
}

/* Files from this size on are worth finding holes and own metadata in.  */
#define LARGE_FILE (256u * 1024u)

/* A small file (n bytes, below LARGE_FILE, which bounds what is
   allocated) is read whole in one system call, then its header checked and
   the whole parsed as read_profile does.  */
static int read_small_profile(int fd, uint64_t n,
                              const unsigned char *const *known,
                              size_t n_known, ballarus_profile *out, char *err,
                              size_t errlen) {
  uint64_t end = 0;
  if (reserve_read_buf(n + 1) != 0) {
    snprintf(err, errlen, "out of memory reading %llu bytes",
             (unsigned long long)n);
    return BALLARUS_PROFILE_UNREAD;
  }
  zero_list z = {NULL, 0, 0};
  if (read_data(fd, 0, n, 0, NULL, 0, &z, &end, err, errlen) != 0)
    return BALLARUS_PROFILE_UNREAD;
  if (ballarus_profile_check_header(
          read_buf, end < BALLARUS_PROFILE_HEADER_SIZE ? end : n, err,
          errlen) != 0)
    return -1;
  const ballarus_parse_hints hints = {known, n_known, NULL, 0, NULL, 0};
  return ballarus_profile_parse_borrowing(read_buf, end, &hints, out, err,
                                          errlen);
}

/* Reads the regular file fd (st: its fstat) into read_buf, its header
   first (profile_io.h), its holes and the metadata of this dump's own TUs
   (known: compared in place) left unread when it is large, and parses it, its metadata
   borrowed and its counters lent from read_buf.  Returns 0, -1 (damaged)
   or BALLARUS_PROFILE_UNREAD (a read error, or out of memory: not a
   reason to call the file damaged).  */
int ballarus_rt_read_profile(int fd, const struct stat *st,
                             const unsigned char *const *known,
                             size_t n_known, ballarus_profile *out, char *err,
                             size_t errlen) {
  memset(out, 0, sizeof *out);
  const uint64_t n = (uint64_t)st->st_size;
  if (n < LARGE_FILE) return read_small_profile(fd, n, known, n_known, out,
                                                err, errlen);
  unsigned char head[BALLARUS_PROFILE_HEADER_SIZE];
  uint64_t end = 0;
  const int head_rc = ballarus_profile_read_head(fd, n, head, err, errlen);
  if (head_rc != 0) return head_rc;
  ballarus_known_meta *found = calloc(n_known + 1, sizeof *found);
  ballarus_zero_range *skip = calloc(n_known + 1, sizeof *skip);
  if (found == NULL || skip == NULL || reserve_read_buf(n + 1) != 0) {
    free(found);
    free(skip);
    snprintf(err, errlen, "out of memory reading %llu bytes",
             (unsigned long long)n);
    return BALLARUS_PROFILE_UNREAD;
  }
  uint32_t n_records;
  memcpy(&n_records, head + 12, sizeof n_records);
  const size_t n_found =
      find_own_metadata(fd, n, n_records, known, n_known, found, skip);
  const int holes = (uint64_t)st->st_blocks * 512 < n;
  memcpy(read_buf, head, sizeof head);
  if (read_dirty < sizeof head) read_dirty = sizeof head;
  zero_list z = {NULL, 0, 0};
  int rc = BALLARUS_PROFILE_UNREAD;
  if (read_data(fd, sizeof head, n, holes, skip, n_found, &z, &end, err,
                errlen) == 0) {
    /* A file that shrank while read is parsed as it is.  */
    const ballarus_parse_hints hints = {known, n_known, z.r, z.n,
                                        found, n_found};
    rc = ballarus_profile_parse_borrowing(read_buf, end, &hints, out, err,
                                          errlen);
  }
  free(z.r);
  free(found);
  free(skip);
  return rc;
}
