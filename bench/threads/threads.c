/* threads.c — the multi-threaded workloads of bench/run.sh: NTHREADS
 * threads run the same instrumented code at once, so its counters are
 * updated concurrently from every thread.
 *
 *   threads call|loop NTHREADS ITERATIONS CONCURRENT
 *
 *   call   each thread calls the one-block function bench_hot() ITERATIONS
 *          times (program `threads` of the bench): the hot function's one
 *          counter is shared by all threads;
 *   loop   each thread runs ITERATIONS iterations of a loop with a
 *          data-dependent branch and no calls, in the one function
 *          shared_loop() (program `threads-loop`): the loop's counters are
 *          shared by all threads.
 *
 *   CONCURRENT 1: the threads run at once (the measurement, "par");
 *   CONCURRENT 0: the same threads run one after another (each holds one
 *          shared mutex for its whole work): the reference run ("seq").
 *          Both modes execute exactly the same instrumented code the same
 *          number of times — the number only selects which mutex a worker
 *          locks, by address arithmetic, not by a branch (a string
 *          comparison would branch in main) — so an exact profiler gives
 *          the two runs equal counters, counter by counter, and the harness
 *          takes the seq run's counters as the expected ones.
 *
 * bench_hot() is one basic block, so every profiler gives it exactly one
 * counter (ballarus: |E|-|V|+1 = 1; gcov: one arc off its spanning tree;
 * clang: one) whose value must be NTHREADS x ITERATIONS in the call
 * workload.
 *
 * The output (the per-thread sums, combined in a fixed order) is
 * deterministic and the same for every build and both modes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTHREADS 64

#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa)) /* no inlining, cloning or IPA-SRA */
#endif

NOIPA unsigned long bench_hot(unsigned long x) {
  return (x * 2654435761u) ^ (x >> 7);
}

struct job {
  unsigned long id, n, sum;
  pthread_mutex_t *lock;
};

/* The call workload: the loop's counters and bench_hot's counter shared. */
NOIPA static unsigned long call_loop(unsigned long id, unsigned long n) {
  unsigned long acc = 0;
  for (unsigned long i = 0; i < n; ++i) {
    unsigned long v = bench_hot(i + id);
    if (v & 1)
      acc += v >> 3;
    else
      acc ^= v;
  }
  return acc;
}

/* The loop workload: no calls in the loop, a branch every iteration. */
NOIPA static unsigned long shared_loop(unsigned long id, unsigned long n) {
  unsigned long acc = 0, x = id + 1;
  for (unsigned long i = 0; i < n; ++i) {
    x ^= x << 13; /* xorshift64 */
    x ^= x >> 7;
    x ^= x << 17;
    if (x & 4)
      acc += x >> 5;
    else
      acc ^= x;
  }
  return acc;
}

static unsigned long (*const workloads[2])(unsigned long, unsigned long) = {
    call_loop, shared_loop};
static unsigned long which;

static void *worker(void *arg) {
  struct job *j = arg;
  pthread_mutex_lock(j->lock);
  j->sum = workloads[which](j->id, j->n);
  pthread_mutex_unlock(j->lock);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[1], "call") && strcmp(argv[1], "loop")) ||
      strtoul(argv[4], 0, 10) > 1) {
    fprintf(stderr, "usage: threads call|loop NTHREADS ITERATIONS 0|1\n");
    return 2;
  }
  which = strcmp(argv[1], "call") != 0;
  unsigned long nthreads = strtoul(argv[2], 0, 10);
  unsigned long n = strtoul(argv[3], 0, 10);
  if (nthreads < 1 || nthreads > MAXTHREADS) {
    fprintf(stderr, "threads: NTHREADS must be 1..%d\n", MAXTHREADS);
    return 2;
  }
  /* 0 (seq): every worker locks locks[0]; 1 (par): worker k locks locks[k]. */
  unsigned long stride = strtoul(argv[4], 0, 10);
  static pthread_mutex_t locks[MAXTHREADS];
  pthread_t t[MAXTHREADS];
  struct job jobs[MAXTHREADS];
  for (unsigned long k = 0; k < nthreads; ++k) {
    pthread_mutex_init(&locks[k], 0);
    jobs[k] = (struct job){.id = k, .n = n, .sum = 0, .lock = &locks[k * stride]};
  }
  for (unsigned long k = 0; k < nthreads; ++k) {
    if (pthread_create(&t[k], 0, worker, &jobs[k]) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  unsigned long total = 0;
  for (unsigned long k = 0; k < nthreads; ++k) {
    pthread_join(t[k], 0);
    total = total * 31 + jobs[k].sum;
  }
  printf("threads=%lu workload=%s iterations=%lu checksum=%lu\n", nthreads,
         argv[1], n, total);
  return 0;
}
