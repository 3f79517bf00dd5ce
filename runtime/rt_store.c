/* rt_store.c — where the runtime's dump puts files (the API:
   ballarus_rt_internal.h): the directory's lock, a file written beside a
   profile that cannot be written, a damaged profile set aside.  Every
   creation goes through safe_file.h.  */

#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ballarus_rt_internal.h"
#include "runtime/profile_io.h"
#include "runtime/safe_file.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The directory's lock file of this effective user, LOCK_NAME with the
   uid: a regular file of this user, mode 0600, so that no other user can
   open it, hence none can hold its flock() (a flock on the directory
   itself could be taken by anyone allowed to read it).  It stays when the
   dump is done: it holds the redo log (rt_redo.c), and creating and
   unlinking a file costs more than its flock.  An older runtime unlinks
   it when done, so whoever obtains the lock checks that the name still
   leads to the file locked, else starts over.  */
#define LOCK_NAME ".ballarus-%u.lock"

/* Opens (creating) the lock file; -1 with *why set when it cannot be
   used.  Another process may create it between our failed open and our
   creation, or (an older runtime) unlink it: then both are tried again.
   *created: we created it (then it is a private file of ours, no need to
   look).  */
static int open_lock(int dfd, const char *name, int *created, char *why,
                     size_t len) {
  char sub[512];
  int fd = -1;
  *created = 0;
  for (int tries = 0; tries < 1000; tries++) {
    /* It usually exists: opened first, created when missing.  */
    fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT) break;
    fd = ballarus_sf_create(dfd, name, 0600, 0, sub, sizeof sub);
    if (fd >= 0) {
      *created = 1;
      return fd;
    }
    if (errno != EEXIST) break;
  }
  if (fd < 0) {
    snprintf(why, len, "cannot open its directory's lock file %s (%s)", name,
             errno == ELOOP ? "a symbolic link" : strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    snprintf(why, len,
             "its directory's lock file %s is not a private file of this "
             "user (uid %u, mode %o)",
             name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    close(fd);
    return -1;
  }
  return fd;
}

/* Whether `fd` is still the file `name` of dfd.  */
static int still_linked(int dfd, const char *name, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 &&
         fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int ballarus_rt_lock_dir(int dfd, double lock_timeout, char *name,
                         size_t name_len, int *created_it, char *why,
                         size_t len) {
  snprintf(name, name_len, LOCK_NAME, (unsigned)geteuid());
  const double start = now_seconds();
  long pause_us = -1;
  for (;;) {
    int created;
    int fd = open_lock(dfd, name, &created, why, len);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      *created_it = created;
      if (still_linked(dfd, name, fd)) return fd;
      flock(fd, LOCK_UN); /* its holder removed it meanwhile */
      close(fd);
      continue;
    }
    int e = errno;
    close(fd);
    if (e == EINTR) continue;
    if (e != EWOULDBLOCK) {
      snprintf(why, len, "cannot lock its directory (%s)", strerror(e));
      return -1;
    }
    const double waited = now_seconds() - start;
    if (waited >= lock_timeout) {
      snprintf(why, len,
               "its directory has been locked by another process for %g s "
               "(stopped? BALLARUS_LOCK_TIMEOUT)",
               lock_timeout);
      return -1;
    }
    double left = lock_timeout - waited;
    if (pause_us < 0) pause_us = 200 + (long)(getpid() % 300); /* apart */
    long us = pause_us;
    if ((double)us > left * 1e6) us = (long)(left * 1e6) + 1;
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    pause_us = pause_us * 2 > 20000 ? 20000 : pause_us * 2;
  }
}

void ballarus_rt_unlock_dir(int fd) {
  flock(fd, LOCK_UN);
  close(fd);
}

/* The mode of `name` in dfd when it is a regular file of this user (a
   file written in its stead gets it), else -1.  */
static int own_mode(int dfd, const char *name) {
  int mode;
  return ballarus_sf_not_ours(dfd, name, &mode) == NULL ? mode : -1;
}

int ballarus_rt_write_beside(int dfd, const char *path, const char *name,
                             const ballarus_profile *mine, char **out,
                             char *err, size_t errlen) {
  unsigned char *buf;
  uint64_t size;
  *out = NULL;
  if (ballarus_profile_serialize(mine, &buf, &size, err, errlen) != 0)
    return -1;
  const int mode = own_mode(dfd, name);
  size_t nlen = strlen(name) + 48, plen = strlen(path) + 48;
  char *bn = malloc(nlen), *bp = malloc(plen);
  char sub[512];
  int fd = -1;
  if (bn == NULL || bp == NULL)
    snprintf(sub, sizeof sub, "out of memory");
  else
    fd = ballarus_sf_create_unique(
        dfd, name, 0, mode >= 0 ? (unsigned)mode : 0666u,
        mode >= 0 ? BALLARUS_SF_EXACT_MODE : 0, bn, nlen, sub, sizeof sub);
  int rc = -1;
  if (fd < 0) {
    snprintf(err, errlen, "cannot create a file beside it: %s", sub);
  } else {
    snprintf(bp, plen, "%.*s%s", (int)(strlen(path) - strlen(name)), path, bn);
    if (ballarus_sf_write_all(fd, buf, (size_t)size) != 0) {
      snprintf(err, errlen, "cannot write %s: %s", bp, strerror(errno));
      close(fd);
      unlinkat(dfd, bn, 0);
    } else if (close(fd) != 0) {
      snprintf(err, errlen, "cannot close %s: %s", bp, strerror(errno));
      unlinkat(dfd, bn, 0);
    } else {
      rc = 0;
      *out = bp;
      bp = NULL;
    }
  }
  free(bn);
  free(bp);
  free(buf);
  return rc;
}

int ballarus_rt_rename_aside(int dfd, const char *name, char *kept,
                             size_t len) {
  int moved = -1, e = 0;
  for (int k = 0; k < 100 && moved != 0; k++) {
    if (k == 0)
      snprintf(kept, len, "%s.corrupt", name);
    else
      snprintf(kept, len, "%s.corrupt.%ld.%d", name, (long)getpid(), k);
    moved = renameat2(dfd, name, dfd, kept, RENAME_NOREPLACE);
    e = errno;
    if (moved != 0 && e == EINVAL) {
      /* No RENAME_NOREPLACE here: link + unlink keeps it as safe.  */
      moved = linkat(dfd, name, dfd, kept, 0);
      e = errno;
      if (moved == 0) unlinkat(dfd, name, 0);
    }
    if (moved != 0 && e != EEXIST) break;
  }
  return moved == 0 ? 0 : e;
}
