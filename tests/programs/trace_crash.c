/* trace_crash.c — the flight recorder's test program (tests/trace_crash_test.cc).
   Reads "ROUNDS PATTERN_A PATTERN_B" from stdin; step() takes, for each
   letter of a pattern, the branch the letter names (a, b, anything else),
   ROUNDS times over; then the program dereferences NULL.

   argv[1] chooses the variant:
     "st"       main runs PATTERN_A and crashes;
     "handler"  the same with the program's own SIGSEGV handler (installed
                in main with signal(), after the recorder started, and read
                back with sigaction(): it prints one line and _exits with
                42);
     "mt"       worker_a runs PATTERN_A and parks in pthread_cond_wait;
                worker_b waits until worker_a is parked and main sleeps in
                pthread_join, runs PATTERN_B and crashes;
     "libc"     main runs PATTERN_A and crashes inside strlen (in another
                module than the last witness's function);
     "abort"    main runs PATTERN_A and calls abort();
     "ok"       main runs PATTERN_A and returns 0 (a run that exits, so
                writes the profile: the CFGs the trace is read with).
   The lines marked BRANCH_A, BRANCH_B, BRANCH_C, CRASH, CRASH_LIBC, ABORT
   and PARK are found by the test by their markers.  */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;
static int rounds;
static char pattern_a[64], pattern_b[64];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parked_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int parked;

__attribute__((noinline)) static unsigned long step(char c, unsigned long acc) {
  if (c == 'a')
    sink = acc + 1; /* BRANCH_A */
  else if (c == 'b')
    sink = acc * 3; /* BRANCH_B */
  else
    sink = acc - 2; /* BRANCH_C */
  return sink;
}

__attribute__((noinline)) static unsigned long run(const char *pattern) {
  unsigned long acc = 0;
  for (int r = 0; r < rounds; r++)
    for (const char *p = pattern; *p; p++) acc = step(*p, acc);
  return acc;
}

/* The store is alone in its block (the test's inputs never make acc 1),
   so the block the fault interrupts has no line after the fault's.  */
__attribute__((noinline)) static void crash(unsigned long acc) {
  volatile int *volatile target = NULL;
  if (acc != 1)
    *target = (int)acc; /* CRASH */
}

/* The call is the last statement of its block: the branch on its value
   ends the block.  */
__attribute__((noinline)) static unsigned long crash_in_libc(unsigned long acc) {
  const char *volatile text = NULL;
  if (strlen(text) > acc) /* CRASH_LIBC */
    return 1;
  return 0;
}

static void on_segv(int sig) {
  static const char msg[] = "SIGSEGV handled\n";
  (void)sig;
  if (write(2, msg, sizeof msg - 1) < 0) _exit(43);
  _exit(42);
}

/* The program sees its own action, as without a recorder.  */
static void install_handler(void) {
  struct sigaction now;
  if (signal(SIGSEGV, on_segv) != SIG_DFL)
    fprintf(stderr, "SIGSEGV had another handler\n");
  if (sigaction(SIGSEGV, NULL, &now) != 0 || now.sa_handler != on_segv)
    fprintf(stderr, "SIGSEGV's handler is not on_segv\n");
}

static void *worker_a(void *arg) {
  unsigned long acc = run(pattern_a);
  (void)arg;
  printf("a %lu\n", acc);
  fflush(stdout);
  pthread_mutex_lock(&lock);
  parked = 1;
  pthread_cond_signal(&parked_cond);
  for (;;) pthread_cond_wait(&never, &lock); /* PARK */
  return NULL;
}

/* Returns once main sleeps in pthread_join, so that main's last line is
   the same in every run however the threads are scheduled.  */
static volatile int main_joining;
static void wait_for_main_to_block(void) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
  while (!main_joining) sched_yield();
  for (;;) {
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    const char *state = strrchr(buf, ')');
    if (state && state[1] == ' ' && state[2] == 'S') return;
    sched_yield();
  }
}

static void *worker_b(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (!parked) pthread_cond_wait(&parked_cond, &lock);
  pthread_mutex_unlock(&lock);
  wait_for_main_to_block();
  unsigned long acc = run(pattern_b);
  printf("b %lu\n", acc);
  fflush(stdout);
  crash(acc);
  return NULL;
}

int main(int argc, char **argv) {
  const char *variant = argc > 1 ? argv[1] : "st";
  if (scanf("%d %63s %63s", &rounds, pattern_a, pattern_b) != 3) return 1;
  if (strcmp(variant, "mt") == 0) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker_a, NULL);
    pthread_create(&b, NULL, worker_b, NULL);
    main_joining = 1;
    pthread_join(b, NULL);
    return 2;
  }
  if (strcmp(variant, "handler") == 0) install_handler();
  unsigned long acc = run(pattern_a);
  printf("main %lu\n", acc);
  fflush(stdout);
  if (strcmp(variant, "ok") == 0) return 0;
  if (strcmp(variant, "libc") == 0) return (int)crash_in_libc(acc);
  if (strcmp(variant, "abort") == 0) abort(); /* ABORT */
  crash(acc);
  return 0;
}
