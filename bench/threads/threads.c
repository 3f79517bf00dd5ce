/* threads.c — the multi-threaded workload of bench/run.sh: 4 threads run
 * the same instrumented hot loop, so every counter of bench_hot() and of
 * worker() is incremented concurrently from 4 threads.
 *
 *   threads ITERATIONS      each of the 4 threads calls bench_hot()
 *                           ITERATIONS times
 *
 * bench_hot() is one basic block, so every profiler gives it exactly one
 * counter (ballarus: |E|-|V|+1 = 1; gcov: one arc off its spanning tree;
 * clang: one) whose value must be 4 x ITERATIONS.  With atomic updates the
 * count is exact; with single (plain, racy) updates increments can be lost.
 * The harness compares each profile's count of bench_hot with that number.
 *
 * The output (the per-thread sums, added in a fixed order) is deterministic
 * and must be the same for every build. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

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
};

static void *worker(void *arg) {
  struct job *j = arg;
  unsigned long acc = 0;
  for (unsigned long i = 0; i < j->n; ++i) {
    unsigned long v = bench_hot(i + j->id);
    if (v & 1)
      acc += v >> 3;
    else
      acc ^= v;
  }
  j->sum = acc;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: threads ITERATIONS\n");
    return 2;
  }
  unsigned long n = strtoul(argv[1], 0, 10);
  pthread_t t[NTHREADS];
  struct job jobs[NTHREADS];
  for (int k = 0; k < NTHREADS; ++k) {
    jobs[k] = (struct job){.id = (unsigned long)k, .n = n, .sum = 0};
    if (pthread_create(&t[k], 0, worker, &jobs[k]) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  unsigned long total = 0;
  for (int k = 0; k < NTHREADS; ++k) {
    pthread_join(t[k], 0);
    total = total * 31 + jobs[k].sum;
  }
  printf("threads=%d iterations=%lu checksum=%lu\n", NTHREADS, n, total);
  return 0;
}
