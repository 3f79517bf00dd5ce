/* trace_prog.c — drives the trace runtime for trace_rt_test:
     trace_prog PATH SPEC CMD N [T]
   SPEC is full, ring:N or none (the runtime is not started).  CMD:
     seq N          writes trace_seq(0, i), i < N, and exits 0
     threads N T    T threads, thread k writing trace_seq(k + 1, i), i < N
     segv N         N witnesses, then a null dereference
     abort N        N witnesses, then abort()
     fpe, ill, bus N  N witnesses, then an integer division by zero, a trap
                    instruction, an access past the end of a mapped file
     handler N      installs a SIGSEGV handler (before SPEC starts), then
                    as segv: the handler prints "handled" and exits 42
     late N         as handler, the handler installed after SPEC starts
     raise N, handler_raise N  as segv and handler, with raise(SIGSEGV)
                    instead of a fault
     segvthreads N T  T threads write N witnesses of streams 1..T and wait;
                    main writes N of stream 0 and dereferences null
     fork N         N witnesses, fork; the child writes N more of stream 1
                    and exits, the parent waits and writes N of stream 2  */
#define _GNU_SOURCE

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_buffer.h"

static uint32_t n_witnesses;

static void write_stream(uint32_t k) {
  for (uint32_t i = 0; i < n_witnesses; i++)
    ballarus_trace_witness(trace_seq(k, i));
}

static void *thread_main(void *arg) {
  write_stream((uint32_t)(uintptr_t)arg);
  return NULL;
}

static void on_segv(int sig) {
  (void)sig;
  static const char msg[] = "handled\n";
  write(1, msg, sizeof msg - 1);
  _exit(42);
}

static int run_threads(uint32_t t) {
  pthread_t th[64];
  if (t > 64) t = 64;
  for (uint32_t k = 0; k < t; k++)
    pthread_create(&th[k], NULL, thread_main, (void *)(uintptr_t)(k + 1));
  for (uint32_t k = 0; k < t; k++) pthread_join(th[k], NULL);
  return 0;
}

static pthread_barrier_t written;

static void *thread_wait(void *arg) {
  write_stream((uint32_t)(uintptr_t)arg);
  pthread_barrier_wait(&written);
  pause();
  return NULL;
}

static int run_segv_threads(uint32_t t) {
  pthread_t th;
  pthread_barrier_init(&written, NULL, t + 1);
  for (uint32_t k = 0; k < t; k++)
    pthread_create(&th, NULL, thread_wait, (void *)(uintptr_t)(k + 1));
  pthread_barrier_wait(&written);
  write_stream(0);
  volatile int *null = NULL;
  return *null;
}

/* SIGFPE, SIGILL or SIGBUS raised by the kernel for a fault.  */
static int fault(const char *cmd) {
  if (strcmp(cmd, "fpe") == 0) {
    volatile int one = 1, zero = 0; /* gcc turns 1 / x into compares */
    return one / zero;
  }
  if (strcmp(cmd, "ill") == 0) __builtin_trap();
  FILE *f = tmpfile();
  if (f == NULL || ftruncate(fileno(f), 4096) != 0) return 4;
  volatile char *m =
      mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
  if (m == MAP_FAILED || ftruncate(fileno(f), 0) != 0) return 4;
  return m[0];
}

static int run_fork(void) {
  write_stream(0);
  pid_t pid = fork();
  if (pid == 0) {
    write_stream(1);
    exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  write_stream(2);
  return st == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  char err[512] = "";
  if (argc < 5) return 2;
  const char *cmd = argv[3];
  n_witnesses = (uint32_t)strtoul(argv[4], NULL, 10);
  if (strncmp(cmd, "handler", 7) == 0) signal(SIGSEGV, on_segv);
  if (strcmp(argv[2], "none") != 0 &&
      ballarus_trace_start(argv[1], argv[2], err, sizeof err) != 0) {
    fprintf(stderr, "trace_prog: %s\n", err);
    return 3;
  }
  if (strcmp(cmd, "late") == 0) signal(SIGSEGV, on_segv);
  if (strcmp(cmd, "threads") == 0)
    return run_threads(argc > 5 ? (uint32_t)atoi(argv[5]) : 2);
  if (strcmp(cmd, "fork") == 0) return run_fork();
  if (strcmp(cmd, "segvthreads") == 0)
    return run_segv_threads(argc > 5 ? (uint32_t)atoi(argv[5]) : 2);
  write_stream(0);
  if (strcmp(cmd, "abort") == 0) abort();
  if (strstr(cmd, "raise")) return raise(SIGSEGV) + 5;
  if (strcmp(cmd, "fpe") == 0 || strcmp(cmd, "ill") == 0 ||
      strcmp(cmd, "bus") == 0)
    return fault(cmd);
  if (strcmp(cmd, "segv") == 0 || strcmp(cmd, "handler") == 0 ||
      strcmp(cmd, "late") == 0) {
    volatile int *null = NULL;
    return *null;
  }
  return 0;
}
