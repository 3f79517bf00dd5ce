/* trace_threads.c — threads for the trace oracle (trace_e2e_test): four
   workers started together by a barrier, each calling hammer() a different
   number of times with its own parity pattern; worker 2 leaves by
   pthread_exit() three calls deep, worker 3 is detached and still blocked
   when main returns (its stream has no end).  Every thread's blocks are
   the same in every run: main learns that worker 3 is parked by one
   blocking read, not by polling.  threads.c's 4 * 500000 calls would make
   a naive trace of hundreds of megabytes.  */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define N_THREADS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t start;
static int parked_pipe[2];
static unsigned long total;

__attribute__((noinline)) unsigned long hammer(unsigned long x) {
  if (x % 3 == 0)
    return x * 3 + 1;
  if (x & 1)
    return x / 2;
  return x + 7;
}

__attribute__((noinline)) static unsigned long leave_deep(int depth,
                                                          unsigned long v) {
  if (depth > 0) return leave_deep(depth - 1, v + 1) + 1;
  if (v == 0) return 0; /* never: v counts the thread's calls */
  pthread_mutex_lock(&lock);
  total += v;
  pthread_mutex_unlock(&lock);
  pthread_exit(NULL);
}

static void *worker(void *arg) {
  unsigned long id = (unsigned long)arg, local = 0;
  pthread_barrier_wait(&start);
  for (unsigned long i = 0; i < 200 * (id + 1); i++)
    local += hammer(i * (id + 1));
  if (id == 2) leave_deep(3, local);
  pthread_mutex_lock(&lock);
  total += local;
  if (id == 3) {
    /* main takes the lock only once this thread waits */
    if (write(parked_pipe[1], "p", 1) != 1) return NULL;
    for (;;) pthread_cond_wait(&never, &lock);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t[N_THREADS];
  char c;
  if (pipe(parked_pipe) != 0) return 1;
  pthread_barrier_init(&start, NULL, N_THREADS);
  for (unsigned long i = 0; i < N_THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  pthread_detach(t[3]);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  if (read(parked_pipe[0], &c, 1) != 1) return 1;
  pthread_mutex_lock(&lock);
  printf("total=%lu\n", total);
  pthread_mutex_unlock(&lock);
  return 0;
}
