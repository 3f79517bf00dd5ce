/* rt_prog.c — a plain C program with two hand-built TUs (alpha, beta) linked
   against the runtime, driven by the runtime tests.

     rt_prog count N         alpha[j] += N*(j+1), beta[j] += N+j; exit
     rt_prog dumpmid N       count N, __ballarus_dump(), count N, exit
     rt_prog reset N M       count N, __ballarus_reset(), count M, exit
     rt_prog fork N M        count N, fork; the child counts M and exits,
                             the parent waits and exits
     rt_prog forkmany K N    K children each count N, then all exit at once
                             (released together through a pipe); the parent
                             counts nothing
     rt_prog threads T N     T threads each count N atomically, calling
                             __ballarus_dump() every 7th step
     rt_prog chdir DIR N     count N, chdir(DIR), exit (profile must not
                             move)
     rt_prog forkdump K N    a thread counts 1 and calls __ballarus_dump()
                             in a loop while main forks K children one
                             after the other, each counting N and exiting
                             (a fork often lands inside the thread's dump,
                             with the profile directory locked); writes
                             how many times the thread counted to
                             ./forkdump.rounds

   Exit status 0 on success, 3 on a usage or system error.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(alpha, RT_ALPHA_BODY, RT_ALPHA_N)
RT_DEFINE_TU(beta, RT_BETA_BODY, RT_BETA_N)

static void count(long n) {
  for (long i = 0; i < n; i++) {
    for (int j = 0; j < RT_ALPHA_N; j++) alpha_counters[j] += (uint64_t)j + 1;
    beta_counters[0] += 1;
    beta_counters[1] += 1;
    beta_counters[2] += 1;
  }
  beta_counters[1] += 1;
  beta_counters[2] += 2;
}

/* Same counts, one atomic increment at a time.  */
static void count_atomic(long n) {
  for (long i = 0; i < n; i++) {
    for (int j = 0; j < RT_ALPHA_N; j++)
      __atomic_fetch_add(&alpha_counters[j], (uint64_t)j + 1,
                         __ATOMIC_RELAXED);
    for (int j = 0; j < RT_BETA_N; j++)
      __atomic_fetch_add(&beta_counters[j], 1, __ATOMIC_RELAXED);
    if (i % 7 == 0) __ballarus_dump();
  }
  __atomic_fetch_add(&beta_counters[1], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&beta_counters[2], 2, __ATOMIC_RELAXED);
}

static volatile int stop_dumper;
static long dumper_rounds;
static void *dumper_main(void *arg) {
  (void)arg;
  while (!stop_dumper) {
    count(1);
    dumper_rounds++;
    __ballarus_dump();
  }
  return NULL;
}

static long n_per_thread;
static void *thread_main(void *arg) {
  (void)arg;
  count_atomic(n_per_thread);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 3;
  const char *mode = argv[1];
  long a = atol(argv[2]);
  long b = argc > 3 ? atol(argv[3]) : 0;
  if (strcmp(mode, "count") == 0) {
    count(a);
  } else if (strcmp(mode, "dumpmid") == 0) {
    count(a);
    __ballarus_dump();
    count(a);
  } else if (strcmp(mode, "reset") == 0) {
    count(a);
    __ballarus_reset();
    count(b);
  } else if (strcmp(mode, "fork") == 0) {
    count(a);
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      count(b);
      exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return 3;
  } else if (strcmp(mode, "forkmany") == 0) {
    int fds[2];
    if (pipe(fds) != 0) return 3;
    pid_t pids[64];
    if (a > 64) return 3;
    for (long k = 0; k < a; k++) {
      pids[k] = fork();
      if (pids[k] < 0) return 3;
      if (pids[k] == 0) {
        close(fds[1]);
        count(b);
        char c;
        while (read(fds[0], &c, 1) > 0) {
        }
        exit(0); /* all children dump at about the same time */
      }
    }
    close(fds[1]);
    for (long k = 0; k < a; k++) {
      int st;
      if (waitpid(pids[k], &st, 0) != pids[k] || !WIFEXITED(st) ||
          WEXITSTATUS(st) != 0)
        return 3;
    }
  } else if (strcmp(mode, "threads") == 0) {
    pthread_t t[32];
    if (a > 32) return 3;
    n_per_thread = b;
    for (long k = 0; k < a; k++)
      if (pthread_create(&t[k], NULL, thread_main, NULL) != 0) return 3;
    for (long k = 0; k < a; k++) pthread_join(t[k], NULL);
  } else if (strcmp(mode, "forkdump") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, dumper_main, NULL) != 0) return 3;
    for (long k = 0; k < a; k++) {
      pid_t pid = fork();
      if (pid < 0) return 3;
      if (pid == 0) {
        count(b);
        exit(0);
      }
      int st;
      if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
          WEXITSTATUS(st) != 0)
        return 3;
    }
    stop_dumper = 1;
    pthread_join(t, NULL);
    FILE *f = fopen("forkdump.rounds", "w");
    if (f == NULL) return 3;
    fprintf(f, "%ld\n", dumper_rounds);
    if (fclose(f) != 0) return 3;
  } else if (strcmp(mode, "chdir") == 0) {
    count(b);
    if (chdir(argv[2]) != 0) return 3;
  } else {
    fprintf(stderr, "rt_prog: unknown mode %s\n", mode);
    return 3;
  }
  return 0;
}
