/* threads.c — four threads hammer the same functions a known number of
   times.  With atomic counter updates every count is exact: hammer() runs
   4 * 500000 times, its odd branch exactly half of them.  A barrier starts
   the workers together so they really contend: with non-atomic
   (update=single) counters updates get lost, which is what makes the exact
   counts a test of atomicity.  */
#include <pthread.h>
#include <stdio.h>

#define N_THREADS 4
#define N_CALLS 500000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;
static pthread_barrier_t start;

__attribute__((noinline)) unsigned long hammer(unsigned long x) {
  if (x & 1)
    return x * 3 + 1; /* count(1000000) */
  return x / 2;       /* count(1000000) */
}

static void *worker(void *arg) {
  unsigned long id = (unsigned long)arg;
  unsigned long local = 0;
  pthread_barrier_wait(&start);
  for (unsigned long i = 0; i < N_CALLS; i++)
    local += hammer(i + id * N_CALLS); /* count(2000000) */
  pthread_mutex_lock(&lock);
  total += local; /* count(4) */
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t[N_THREADS];
  pthread_barrier_init(&start, NULL, N_THREADS);
  for (unsigned long i = 0; i < N_THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < N_THREADS; i++)
    pthread_join(t[i], NULL);
  printf("total=%lu\n", total);
  return 0;
}
