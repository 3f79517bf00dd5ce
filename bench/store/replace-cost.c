/* replace-cost.c — what replacing a small file, and locking its directory,
   cost on this file system, by way of doing it (docs/performance.md, "A
   short process's store transaction").

   usage: cc -O2 replace-cost.c -o replace-cost
          ./replace-cost SIZE N       (in the directory to measure)

   Each way rewrites a SIZE-byte file N times (one byte changed each time),
   or takes and releases a lock N times, and prints its CPU time (user +
   system) per rewrite:
     exchange  a new temporary file written, renameat2(RENAME_EXCHANGE)
               with the file, the old content unlinked (the runtime's way)
     rename    a new temporary file written and renamed over the file
               (ext4 then flushes the new file: auto_da_alloc)
     spare     a permanent spare file beside the file rewritten in place
               (fstat, pwrite, ftruncate had it been longer), then
               exchanged with the file: the old content is the next spare;
               no inode created, nothing unlinked
     churn     an empty file created and unlinked (what a lock file or a
               temporary file costs by itself, its data aside)
     in-place  the file opened and rewritten with one pwrite (gcov's way:
               not atomic)
     lock-new  the runtime's lock: a lock file created (O_EXCL), flock'ed,
               checked still linked (fstat, fstatat), unlinked, unlocked,
               closed
     lock-keep a permanent lock file opened, fstat'ed (is it private?),
               flock'ed, unlocked, closed
     lock-ofd  the same with fcntl(F_OFD_SETLKW) and F_UNLCK for flock
     lock-mark lock-keep with a dead-writer marker in the lock file: read
               after locking (pread), set (pwrite), cleared before
               unlocking (pwrite)  */

#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void write_new(int d, const char *name, const char *buf, size_t n) {
  int f = openat(d, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (f < 0 || write(f, buf, n) != (ssize_t)n || close(f) != 0) die(name);
}

static void exchange(int d, const char *buf, size_t n) {
  write_new(d, "f.tmp", buf, n);
  renameat2(d, "f.tmp", d, "f", RENAME_EXCHANGE);
  unlinkat(d, "f.tmp", 0);
}

static void rename_over(int d, const char *buf, size_t n) {
  write_new(d, "f.tmp", buf, n);
  renameat(d, "f.tmp", d, "f");
}

static void spare(int d, const char *buf, size_t n) {
  struct stat st;
  int f = openat(d, ".f.spare", O_WRONLY | O_NOFOLLOW);
  if (f < 0 || fstat(f, &st) != 0 || pwrite(f, buf, n, 0) != (ssize_t)n)
    die(".f.spare");
  if ((size_t)st.st_size > n && ftruncate(f, (off_t)n) != 0) die("ftruncate");
  close(f);
  if (renameat2(d, ".f.spare", d, "f", RENAME_EXCHANGE) != 0) die("exchange");
}

static void churn(int d, const char *buf, size_t n) {
  (void)n;
  write_new(d, "f.tmp", buf, 0);
  unlinkat(d, "f.tmp", 0);
}

static void in_place(int d, const char *buf, size_t n) {
  int f = openat(d, "f", O_WRONLY);
  if (f < 0 || pwrite(f, buf, n, 0) != (ssize_t)n) die("f");
  close(f);
}

static void lock_new(int d, const char *buf, size_t n) {
  (void)buf, (void)n;
  struct stat a, b;
  int f = openat(d, "l.new", O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (f < 0 || flock(f, LOCK_EX | LOCK_NB) != 0 || fstat(f, &a) != 0 ||
      fstatat(d, "l.new", &b, AT_SYMLINK_NOFOLLOW) != 0 || a.st_ino != b.st_ino)
    die("l.new");
  unlinkat(d, "l.new", 0);
  flock(f, LOCK_UN);
  close(f);
}

/* The permanent lock file opened and checked as the runtime checks one
   it did not create.  */
static int open_kept(int d) {
  struct stat st;
  int f = openat(d, "l.keep", O_RDWR | O_NOFOLLOW | O_NONBLOCK);
  if (f < 0 || fstat(f, &st) != 0 || st.st_uid != geteuid() ||
      (st.st_mode & 077) != 0)
    die("l.keep");
  return f;
}

static void lock_keep(int d, const char *buf, size_t n) {
  (void)buf, (void)n;
  int f = open_kept(d);
  if (flock(f, LOCK_EX | LOCK_NB) != 0) die("flock");
  flock(f, LOCK_UN);
  close(f);
}

static void lock_ofd(int d, const char *buf, size_t n) {
  (void)buf, (void)n;
  struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  int f = open_kept(d);
  if (fcntl(f, F_OFD_SETLKW, &l) != 0) die("F_OFD_SETLKW");
  l.l_type = F_UNLCK;
  fcntl(f, F_OFD_SETLK, &l);
  close(f);
}

static void lock_mark(int d, const char *buf, size_t n) {
  (void)buf, (void)n;
  char mark = 0, busy = 1, idle = 0;
  int f = open_kept(d);
  if (flock(f, LOCK_EX | LOCK_NB) != 0 || pread(f, &mark, 1, 0) != 1 ||
      mark != 0 || pwrite(f, &busy, 1, 0) != 1)
    die("mark");
  if (pwrite(f, &idle, 1, 0) != 1) die("unmark");
  flock(f, LOCK_UN);
  close(f);
}

static const struct {
  const char *name;
  void (*one)(int d, const char *buf, size_t n);
} ways[] = {
    {"exchange", exchange},   {"rename", rename_over}, {"spare", spare},
    {"churn", churn},         {"in-place", in_place},  {"lock-new", lock_new},
    {"lock-keep", lock_keep}, {"lock-ofd", lock_ofd},  {"lock-mark", lock_mark},
};

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SIZE N\n", argv[0]);
    return 2;
  }
  const size_t n = (size_t)atol(argv[1]);
  const int rounds = atoi(argv[2]);
  char *buf = malloc(n + 1);
  if (buf == NULL || n == 0 || rounds <= 0) return 2;
  memset(buf, 7, n);
  int d = open(".", O_RDONLY | O_DIRECTORY);
  static const char *const files[] = {"f.tmp", "f", ".f.spare", "l.new",
                                      "l.keep"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    unlinkat(d, files[i], 0);
  write_new(d, "f", buf, n);
  write_new(d, ".f.spare", buf, n);
  int k = openat(d, "l.keep", O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (k < 0 || write(k, "", 1) != 1 || close(k) != 0) die("l.keep");
  for (size_t w = 0; w < sizeof ways / sizeof *ways; w++) {
    const double t0 = cpu_seconds();
    for (int i = 0; i < rounds; i++) {
      buf[(size_t)i % n]++;
      ways[w].one(d, buf, n);
    }
    printf("%-9s %zu bytes: %.1f us of CPU a rewrite\n", ways[w].name, n,
           (cpu_seconds() - t0) / rounds * 1e6);
  }
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    unlinkat(d, files[i], 0);
  return 0;
}
