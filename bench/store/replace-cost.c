/* replace-cost.c — what replacing a small file costs on this file system,
   by way of doing it (docs/performance.md, "What the exit still costs").

   usage: cc -O2 replace-cost.c -o replace-cost
          ./replace-cost SIZE N       (in the directory to measure)

   Each way rewrites a SIZE-byte file N times (one byte changed each time)
   and prints its CPU time (user + system) per rewrite:
     exchange  a new temporary file written, renameat2(RENAME_EXCHANGE)
               with the file, the old content unlinked (the runtime's way)
     rename    a new temporary file written and renamed over the file
               (ext4 then flushes the new file: auto_da_alloc)
     churn     an empty file created and unlinked (what a lock file or a
               temporary file costs by itself, its data aside)
     in-place  the file opened and rewritten with one pwrite (gcov's way:
               not atomic)  */

#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static void write_new(int d, const char *name, const char *buf, size_t n) {
  int f = openat(d, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (f < 0 || write(f, buf, n) != (ssize_t)n || close(f) != 0) {
    perror(name);
    exit(1);
  }
}

static void one(int d, int way, char *buf, size_t n) {
  switch (way) {
    case 0:
      write_new(d, "f.tmp", buf, n);
      renameat2(d, "f.tmp", d, "f", RENAME_EXCHANGE);
      unlinkat(d, "f.tmp", 0);
      break;
    case 1:
      write_new(d, "f.tmp", buf, n);
      renameat(d, "f.tmp", d, "f");
      break;
    case 2:
      write_new(d, "f.tmp", buf, 0);
      unlinkat(d, "f.tmp", 0);
      break;
    default: {
      int f = openat(d, "f", O_WRONLY);
      if (f < 0 || pwrite(f, buf, n, 0) != (ssize_t)n) {
        perror("f");
        exit(1);
      }
      close(f);
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SIZE N\n", argv[0]);
    return 2;
  }
  const size_t n = (size_t)atol(argv[1]);
  const int rounds = atoi(argv[2]);
  static const char *const names[] = {"exchange", "rename", "churn",
                                      "in-place"};
  char *buf = malloc(n + 1);
  if (buf == NULL || n == 0 || rounds <= 0) return 2;
  memset(buf, 7, n);
  int d = open(".", O_RDONLY | O_DIRECTORY);
  unlinkat(d, "f.tmp", 0);
  unlinkat(d, "f", 0);
  write_new(d, "f", buf, n);
  for (int way = 0; way < 4; way++) {
    const double t0 = cpu_seconds();
    for (int i = 0; i < rounds; i++) {
      buf[(size_t)i % n]++;
      one(d, way, buf, n);
    }
    printf("%-9s %zu bytes: %.1f us of CPU a rewrite\n", names[way], n,
           (cpu_seconds() - t0) / rounds * 1e6);
  }
  unlinkat(d, "f", 0);
  return 0;
}
