/* safe_file.c — creating files safely in directories other users may write
   (the promises: safe_file.h).  Plain C11 + POSIX/Linux calls, no
   allocation beyond a path copy per link followed.  */

#define _GNU_SOURCE /* O_PATH, renameat2 */

#include "runtime/safe_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#define MAX_LINKS 40 /* per path, as the kernel's */

static int sf_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int sf_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---------------------------------------------------------------------- */
/* The walk.                                                                */

typedef struct {
  unsigned flags;
  unsigned dir_mode;
  int links; /* links followed so far */
  char *err;
  size_t errlen;
} walk_ctx;

static int walk(int at, const char *path, walk_ctx *w);

/* A symbolic link may be followed when it belongs to this user or root.  */
static int link_trusted(const struct stat *st) {
  return st->st_uid == 0 || st->st_uid == geteuid();
}

/* Component path[0, end) of `path` is not a directory we opened: a link
   to follow (its target walked from `cur`), or an error.  Returns the
   directory's descriptor or -1.  */
static int follow(int cur, const char *comp, const char *path, size_t end,
                  walk_ctx *w) {
  struct stat st;
  if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return sf_fail(w->err, w->errlen, "cannot examine %.*s: %s", (int)end,
                   path, strerror(errno));
  if (!S_ISLNK(st.st_mode)) {
    errno = ENOTDIR;
    return sf_fail(w->err, w->errlen, "%.*s is not a directory", (int)end,
                   path);
  }
  if (!link_trusted(&st)) {
    errno = EPERM;
    return sf_fail(w->err, w->errlen,
                   "%.*s is a symbolic link of uid %u, not followed",
                   (int)end, path, (unsigned)st.st_uid);
  }
  if (++w->links > MAX_LINKS) {
    errno = ELOOP;
    return sf_fail(w->err, w->errlen, "%.*s: too many symbolic links",
                   (int)end, path);
  }
  char *target = malloc(PATH_MAX);
  if (target == NULL) return sf_fail(w->err, w->errlen, "out of memory");
  ssize_t n = readlinkat(cur, comp, target, PATH_MAX - 1);
  if (n < 0) {
    int e = errno;
    free(target);
    errno = e;
    return sf_fail(w->err, w->errlen, "cannot read link %.*s: %s", (int)end,
                   path, strerror(e));
  }
  target[n] = '\0';
  int fd = walk(cur, target, w);
  int e = errno;
  free(target);
  errno = e;
  return fd;
}

/* Opens directory `comp` in `cur` (creating it with BALLARUS_SF_MKDIR),
   without following a link of another user.  path[0, end) names it in
   messages.  */
static int step(int cur, const char *comp, const char *path, size_t end,
                walk_ctx *w) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      struct stat st;
      if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return fd;
      close(fd); /* an O_PATH descriptor of the link itself */
      return follow(cur, comp, path, end, w);
    }
    if (errno == ELOOP || errno == ENOTDIR)
      return follow(cur, comp, path, end, w);
    if (errno != ENOENT || !(w->flags & BALLARUS_SF_MKDIR) || attempt > 0)
      break;
    if (mkdirat(cur, comp, w->dir_mode & 07777) != 0 && errno != EEXIST)
      return sf_fail(w->err, w->errlen, "cannot create directory %.*s: %s",
                     (int)end, path, strerror(errno));
  }
  int e = errno;
  sf_fail(w->err, w->errlen, "cannot open directory %.*s: %s", (int)end, path,
          strerror(e));
  errno = e;
  return -1;
}

/* Walks `path` from the directory `at` (or "/" when absolute); returns an
   O_PATH descriptor of the directory it names.  `at` stays open.  */
static int walk(int at, const char *path, walk_ctx *w) {
  int cur = path[0] == '/'
                ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                : openat(at, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return sf_fail(w->err, w->errlen, "cannot open %s: %s",
                   path[0] == '/' ? "/" : "the working directory",
                   strerror(errno));
  char comp[NAME_MAX + 1];
  size_t i = 0;
  while (path[i] != '\0') {
    while (path[i] == '/') i++;
    size_t start = i;
    while (path[i] != '\0' && path[i] != '/') i++;
    size_t len = i - start;
    if (len == 0 || (len == 1 && path[start] == '.')) continue;
    if (len > NAME_MAX) {
      close(cur);
      errno = ENAMETOOLONG;
      return sf_fail(w->err, w->errlen, "%.*s: name too long", (int)i, path);
    }
    memcpy(comp, path + start, len);
    comp[len] = '\0';
    int next = step(cur, comp, path, i, w);
    int e = errno;
    close(cur);
    if (next < 0) {
      errno = e;
      return -1;
    }
    cur = next;
  }
  return cur;
}

/* The whole path opened in one system call, when none of its components
   is a symbolic link (openat2's RESOLVE_NO_SYMLINKS refuses any, trusted or
   not) and the directory exists and may be read: the usual case, and then
   the walk's promise holds trivially.  -1 otherwise (a link on the way, a
   missing directory, a kernel without openat2, a filter refusing it), and
   the walk does it component by component.  */
static int open_dir_at_once(const char *path) {
#ifdef SYS_openat2
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  return fd >= 0 ? (int)fd : -1;
#else
  (void)path;
  return -1;
#endif
}

int ballarus_sf_open_dir(const char *path, unsigned flags, unsigned dir_mode,
                         char *err, size_t errlen) {
  walk_ctx w = {flags, dir_mode, 0, err, errlen};
  if (path == NULL || path[0] == '\0') {
    errno = ENOENT;
    return sf_fail(err, errlen, "empty directory name");
  }
  int fd = open_dir_at_once(path);
  if (fd >= 0) return fd;
  fd = walk(AT_FDCWD, path, &w);
  if (fd < 0) return -1;
  /* A readable descriptor where allowed (to list it, to fsync it).  */
  int rd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rd < 0) return fd;
  close(fd);
  return rd;
}

int ballarus_sf_open_parent(const char *path, unsigned flags,
                            unsigned dir_mode, const char **name, char *err,
                            size_t errlen) {
  const char *slash = strrchr(path, '/');
  const char *base = slash == NULL ? path : slash + 1;
  *name = base;
  if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
    errno = EISDIR;
    return sf_fail(err, errlen, "%s names a directory, not a file", path);
  }
  if (slash == NULL) return ballarus_sf_open_dir(".", flags, dir_mode, err,
                                                 errlen);
  size_t len = slash == path ? 1 : (size_t)(slash - path);
  char *dir = strndup(path, len);
  if (dir == NULL) return sf_fail(err, errlen, "out of memory");
  int fd = ballarus_sf_open_dir(dir, flags, dir_mode, err, errlen);
  int e = errno;
  free(dir);
  errno = e;
  return fd;
}

/* ---------------------------------------------------------------------- */
/* Creating, committing.                                                    */

int ballarus_sf_create(int dirfd, const char *name, unsigned mode,
                       unsigned flags, char *err, size_t errlen) {
  int fd = openat(dirfd, name,
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  (mode_t)(mode & 07777));
  if (fd < 0) {
    int e = errno;
    sf_fail(err, errlen, "cannot create %s: %s", name, strerror(e));
    errno = e;
    return -1;
  }
  /* The umask only narrowed the mode: widening it now exposes nothing
     that was not meant to be.  */
  if ((flags & BALLARUS_SF_EXACT_MODE) && fchmod(fd, (mode_t)(mode & 07777)) != 0) {
    int e = errno;
    close(fd);
    unlinkat(dirfd, name, 0);
    sf_fail(err, errlen, "cannot set the mode of %s: %s", name, strerror(e));
    errno = e;
    return -1;
  }
  return fd;
}

int ballarus_sf_create_unique(int dirfd, const char *name, int temp,
                              unsigned mode, unsigned flags, char *made,
                              size_t madelen, char *err, size_t errlen) {
  static unsigned long serial;
  const long pid = (long)getpid();
  int fd = -1;
  for (int k = 0; k < 100 && fd < 0; k++) {
    int n;
    if (temp)
      n = snprintf(made, madelen, "%s" BALLARUS_SF_TMP_INFIX "%ld.%lu", name,
                   pid, __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    else if (k == 0)
      n = snprintf(made, madelen, "%s.%ld", name, pid);
    else
      n = snprintf(made, madelen, "%s.%ld.%d", name, pid, k);
    if (n < 0 || (size_t)n >= madelen) {
      errno = ENAMETOOLONG;
      return sf_fail(err, errlen, "%s: name too long", name);
    }
    fd = ballarus_sf_create(dirfd, made, mode, flags, err, errlen);
    if (fd < 0 && errno != EEXIST) return -1;
  }
  return fd;
}

int ballarus_sf_commit(int dirfd, const char *tmp, const char *name,
                       unsigned flags, char *err, size_t errlen) {
  int exchanged = 0, rc = 0;
  if (flags & BALLARUS_SF_EXCHANGE) {
    /* Not possible when `name` does not exist yet (ENOENT) or the file
       system lacks it (EINVAL): a plain rename then.  */
    if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0)
      exchanged = 1;
    else if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
      rc = sf_fail(err, errlen, "cannot rename %s to %s: %s", tmp, name,
                   strerror(errno));
  }
  if (rc == 0 && !exchanged && renameat(dirfd, tmp, dirfd, name) != 0)
    rc = sf_fail(err, errlen, "cannot rename %s to %s: %s", tmp, name,
                 strerror(errno));
  if (rc != 0 || exchanged) unlinkat(dirfd, tmp, 0);
  /* Make the rename durable.  Best effort: some file systems refuse fsync
     on directories.  */
  if (rc == 0 && (flags & BALLARUS_SF_FSYNC)) (void)fsync(dirfd);
  return rc;
}

const char *ballarus_sf_not_ours(int dirfd, const char *name, int *mode) {
  struct stat st;
  if (mode != NULL) *mode = -1;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? NULL : "cannot be examined";
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (st.st_uid != geteuid()) return "belongs to another user";
  if (mode != NULL) *mode = (int)(st.st_mode & 07777);
  return NULL;
}

/* The writer's pid of NAMES[i].tmp.<pid>.<serial> `n`, or 0 if n is not
   one of them.  */
static long temp_writer(const char *n, const char *name) {
  const size_t len = strlen(name), infix = strlen(BALLARUS_SF_TMP_INFIX);
  if (strncmp(n, name, len) != 0 ||
      strncmp(n + len, BALLARUS_SF_TMP_INFIX, infix) != 0)
    return 0;
  const char *p = n + len + infix;
  char *end;
  errno = 0;
  long pid = strtol(p, &end, 10);
  if (errno != 0 || end == p || *end != '.' || pid <= 0) return 0;
  const char *q = end + 1;
  if (*q < '0' || *q > '9') return 0;
  strtoul(q, &end, 10);
  return *end == '\0' ? pid : 0;
}

int ballarus_sf_remove_orphans(int dirfd, const char *const *names,
                               size_t n_names, ballarus_sf_removed_fn removed,
                               void *ctx) {
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    close(fd);
    return 0;
  }
  int count = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    for (size_t i = 0; i < n_names; i++) {
      long pid = temp_writer(de->d_name, names[i]);
      if (pid == 0) continue;
      if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        break; /* its writer may be at work */
      struct stat st;
      if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
          unlinkat(dirfd, de->d_name, 0) == 0) {
        count++;
        if (removed != NULL) removed(ctx, de->d_name, pid);
      }
      break;
    }
  }
  closedir(dir);
  return count;
}

/* ---------------------------------------------------------------------- */
/* Transactions.                                                            */

int ballarus_sf_write_all(int fd, const void *data, size_t size) {
  const unsigned char *p = data;
  while (size > 0) {
    ssize_t w = write(fd, p, size > (1u << 30) ? (1u << 30) : size);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) {
      errno = EIO;
      return -1;
    }
    p += w;
    size -= (size_t)w;
  }
  return 0;
}

static void tx_free(ballarus_sf_tx *tx) {
  if (tx->fd >= 0) close(tx->fd);
  if (tx->dirfd >= 0) close(tx->dirfd);
  free(tx->name);
  free(tx->tmp);
  tx->fd = tx->dirfd = -1;
  tx->name = tx->tmp = NULL;
}

int ballarus_sf_begin(ballarus_sf_tx *tx, const char *path, unsigned mode,
                      unsigned flags, char *err, size_t errlen) {
  tx->fd = tx->dirfd = -1;
  tx->flags = flags;
  tx->name = tx->tmp = NULL;
  const char *name;
  tx->dirfd = ballarus_sf_open_parent(path, flags, 0777, &name, err, errlen);
  if (tx->dirfd < 0) return -1;
  size_t len = strlen(name) + 64;
  tx->name = strdup(name);
  tx->tmp = malloc(len);
  if (tx->name == NULL || tx->tmp == NULL) {
    tx_free(tx);
    return sf_fail(err, errlen, "out of memory");
  }
  if (flags & BALLARUS_SF_REMOVE_ORPHANS) {
    const char *names[1] = {tx->name};
    ballarus_sf_remove_orphans(tx->dirfd, names, 1, NULL, NULL);
  }
  tx->fd = ballarus_sf_create_unique(tx->dirfd, tx->name, 1, mode, flags,
                                     tx->tmp, len, err, errlen);
  if (tx->fd < 0) {
    int e = errno;
    tx_free(tx);
    errno = e;
    return -1;
  }
  return tx->fd;
}

int ballarus_sf_finish(ballarus_sf_tx *tx, char *err, size_t errlen) {
  int rc = 0;
  if ((tx->flags & BALLARUS_SF_FSYNC) && fsync(tx->fd) != 0)
    rc = sf_fail(err, errlen, "cannot fsync %s: %s", tx->tmp, strerror(errno));
  if (close(tx->fd) != 0 && rc == 0)
    rc = sf_fail(err, errlen, "cannot write %s: %s", tx->tmp, strerror(errno));
  tx->fd = -1;
  if (rc == 0)
    rc = ballarus_sf_commit(tx->dirfd, tx->tmp, tx->name, tx->flags, err,
                            errlen);
  else
    unlinkat(tx->dirfd, tx->tmp, 0);
  tx_free(tx);
  return rc;
}

void ballarus_sf_abort(ballarus_sf_tx *tx) {
  if (tx->tmp != NULL && tx->dirfd >= 0) unlinkat(tx->dirfd, tx->tmp, 0);
  tx_free(tx);
}

int ballarus_sf_write_file(const char *path, const void *data, size_t size,
                           unsigned mode, unsigned flags, char *err,
                           size_t errlen) {
  ballarus_sf_tx tx;
  if (ballarus_sf_begin(&tx, path, mode, flags, err, errlen) < 0) return -1;
  if (ballarus_sf_write_all(tx.fd, data, size) != 0) {
    int e = errno;
    sf_fail(err, errlen, "cannot write %s: %s", tx.tmp, strerror(e));
    ballarus_sf_abort(&tx);
    errno = e;
    return -1;
  }
  return ballarus_sf_finish(&tx, err, errlen);
}

/* ---------------------------------------------------------------------- */
/* Names.                                                                   */

size_t ballarus_sf_expand_pid(const char *tmpl, long pid, char *out,
                              size_t cap, unsigned *pids) {
  char digits[24];
  size_t nd = 0, len = 0;
  unsigned long v = pid < 0 ? 0ul - (unsigned long)pid : (unsigned long)pid;
  do {
    digits[nd++] = (char)('0' + v % 10);
  } while ((v /= 10) != 0);
  if (pid < 0) digits[nd++] = '-';
  if (pids != NULL) *pids = 0;
  for (const char *p = tmpl; *p; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      for (size_t i = nd; i-- > 0; len++)
        if (len + 1 < cap) out[len] = digits[i];
      if (pids != NULL) ++*pids;
      p++;
      continue;
    }
    if (len + 1 < cap) out[len] = *p;
    len++;
    if (p[0] == '%' && p[1] == '%') p++;
  }
  if (cap > 0) out[len < cap ? len : cap - 1] = '\0';
  return len;
}
