/* rt_big.c — a plain C program with one hand-built TU of RT_BIG_N
   counters (many pages), for the runtime tests of what a dump reads and
   writes of a large counter array (ballarus_rt_test.cc, RuntimeChunks).

     rt_big OP...   runs the ops in order:
         J:DELTA       big_counters[J] += DELTA (decimal)
         dump          __ballarus_dump()
         reset         __ballarus_reset()
         fork:J        fork; the child adds 1 to big_counters[J] and exits
                       (its exit dumps); the parent waits for it
         untouched:J   fails (exit 4) unless the page that holds
                       big_counters[J] was never touched
                       (/proc/self/pagemap: neither present nor swapped)

   Exit status 0 on success, 3 on a usage or system error.  */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(big, RT_BIG_BODY, RT_BIG_N)

/* 1 when the page of p was ever touched, 0 when not, -1 when unknown.  */
static int touched(const void *p) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return -1;
  long page = sysconf(_SC_PAGESIZE);
  uint64_t e;
  ssize_t r = pread(fd, &e, sizeof e, (off_t)((uintptr_t)p / page * 8));
  close(fd);
  if (r != sizeof e) return -1;
  return ((e >> 62) & 3u) != 0;
}

static int run_op(const char *op) {
  if (strcmp(op, "dump") == 0) {
    __ballarus_dump();
    return 0;
  }
  if (strcmp(op, "reset") == 0) {
    __ballarus_reset();
    return 0;
  }
  if (strncmp(op, "untouched:", 10) == 0) {
    long j = atol(op + 10);
    if (j < 0 || j >= RT_BIG_N) return 3;
    return touched(&big_counters[j]) == 0 ? 0 : 4;
  }
  if (strncmp(op, "fork:", 5) == 0) {
    long j = atol(op + 5);
    if (j < 0 || j >= RT_BIG_N) return 3;
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      big_counters[j] += 1;
      exit(0);
    }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                   WEXITSTATUS(st) == 0
               ? 0
               : 3;
  }
  char *end;
  long j = strtol(op, &end, 10);
  if (*end != ':' || j < 0 || j >= RT_BIG_N) return 3;
  uint64_t delta = strtoull(end + 1, &end, 10);
  if (*end != '\0') return 3;
  big_counters[j] += delta;
  return 0;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    int rc = run_op(argv[i]);
    if (rc != 0) {
      fprintf(stderr, "rt_big: op %s failed (%d)\n", argv[i], rc);
      return rc;
    }
  }
  return 0;
}
