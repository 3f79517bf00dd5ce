/* mt.c — counting under threads: one scenario per run, for
   //tests:threads_test (tests/threads_test.cc holds the expected counts).

     mt SCENARIO [LIBRARY]

   Every scenario's output (stdout, stderr, exit status) is the same in a
   plain build, so an instrumented build that behaves differently is
   caught; and every instrumented function runs a number of times fixed by
   the scenario, whatever the scheduling (threads wait on barriers,
   semaphores and joins, all in uninstrumented libc, never in spin loops),
   so a profile can be compared counter by counter with another build's.
   The exceptions are named in threads_test.cc: noise() (runs while a dump
   or reset happens, so how much of it lands before is luck), spin() and
   park() (a thread still running at exit).

   The file is C and C++ alike: the C++ build adds mt_cxx.cc's scenarios.
   __ballarus_dump/__ballarus_reset are weak: the plain build has none.  */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif
extern void __ballarus_dump(void) __attribute__((weak));
extern void __ballarus_reset(void) __attribute__((weak));
#ifdef __cplusplus
}
int cxx_scenario(const char *name); /* mt_cxx.cc: -1 if not one of its */
#endif

/* No inlining, cloning or IPA: every call stays a call, so a function's
   execution count is its number of calls at -O2 too.  */
#define NOIPA __attribute__((noipa))

#define N_WORK 20000

/* The counted unit of work: a branch, so it has more than one counter.  */
NOIPA unsigned long work(unsigned long x) {
  if (x & 1) return 3 * x + 1;
  return x / 2;
}

NOIPA unsigned long work_n(unsigned long seed, unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; i++) s += work(seed + i);
  return s;
}

/* Runs while a dump or reset happens in another thread.  */
NOIPA unsigned long noise(unsigned long x) { return x * 7 + (x >> 3); }

static void die(const char *what) {
  fprintf(stderr, "mt: %s failed\n", what);
  exit(1);
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg) {
  if (pthread_create(t, NULL, fn, arg) != 0) die("pthread_create");
}

static unsigned long join(pthread_t t) {
  void *r;
  if (pthread_join(t, &r) != 0) die("pthread_join");
  return (unsigned long)r;
}

/* ---------------------------------------------------------------------- */
/* exit_around_main: 4 threads exit before main returns (joined), 4 after
   (main returns while they wait; an atexit handler lets them run their
   work and joins them, before the runtime's exit-time dump).
   work: 8 x N_WORK.  */

static pthread_barrier_t late_gate;
static pthread_t late[4];

static void *early_thread(void *arg) {
  return (void *)work_n((unsigned long)arg, N_WORK);
}

static void *late_thread(void *arg) {
  pthread_barrier_wait(&late_gate);
  return (void *)work_n((unsigned long)arg, N_WORK);
}

static void join_late(void) {
  pthread_barrier_wait(&late_gate);
  unsigned long s = 0;
  for (int i = 0; i < 4; i++) s += join(late[i]);
  printf("late %lu\n", s);
}

static int exit_around_main(void) {
  pthread_t t[4];
  pthread_barrier_init(&late_gate, NULL, 5);
  for (unsigned long i = 0; i < 4; i++) start(&late[i], late_thread, (void *)(i * 7));
  atexit(join_late);
  for (unsigned long i = 0; i < 4; i++) start(&t[i], early_thread, (void *)i);
  unsigned long s = 0;
  for (int i = 0; i < 4; i++) s += join(t[i]);
  printf("early %lu\n", s);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* detached: 8 detached threads, and main leaves with pthread_exit: the
   process exits when the last thread has (after its TLS destructors).
   work: 9 x N_WORK.  */

static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sum_all;
static int sum_left;

static void add_result(unsigned long s) {
  pthread_mutex_lock(&sum_lock);
  sum_all += s;
  if (--sum_left == 0) printf("detached %lu\n", sum_all);
  pthread_mutex_unlock(&sum_lock);
}

static void *detached_thread(void *arg) {
  add_result(work_n((unsigned long)arg, N_WORK));
  return NULL;
}

static int detached(void) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  sum_left = 9;
  for (unsigned long i = 0; i < 8; i++) {
    pthread_t t;
    if (pthread_create(&t, &a, detached_thread, (void *)(i * 3)) != 0)
      die("pthread_create");
  }
  add_result(work_n(100, N_WORK));
  fflush(stdout);
  pthread_exit(NULL);
}

/* ---------------------------------------------------------------------- */
/* short_lived: 1000 threads, 50 at a time, each calling work() 1000 times.
   short_thread: 1000, work: 1000000.  */

static void *short_thread(void *arg) {
  return (void *)work_n((unsigned long)arg, 1000);
}

static int short_lived(void) {
  unsigned long s = 0;
  for (unsigned long wave = 0; wave < 20; wave++) {
    pthread_t t[50];
    for (unsigned long i = 0; i < 50; i++) start(&t[i], short_thread, (void *)(wave * 50 + i));
    for (int i = 0; i < 50; i++) s += join(t[i]);
  }
  printf("short %lu\n", s);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* exit_during_dump: a thread dumps 100 times while 400 threads (8 at a
   time) start, count and exit, and main counts between the waves (main
   owns the shared counters: those dumps must not add into them).  work:
   400 x 2000 + 50 x 100000, dump_loop: 1.  */

static void *dump_loop(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++)
    if (__ballarus_dump) __ballarus_dump();
  return NULL;
}

static void *exiting_thread(void *arg) {
  return (void *)work_n((unsigned long)arg, 2000);
}

static int exit_during_dump(void) {
  pthread_t d;
  start(&d, dump_loop, NULL);
  unsigned long s = 0;
  for (unsigned long wave = 0; wave < 50; wave++) {
    pthread_t t[8];
    for (unsigned long i = 0; i < 8; i++) start(&t[i], exiting_thread, (void *)(wave * 8 + i));
    s += work_n(wave, 100000);
    for (int i = 0; i < 8; i++) s += join(t[i]);
  }
  join(d);
  printf("exits %lu\n", s);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* dump_while_counting / reset_while_counting: 8 workers count phase 1
   (work: 8 x N_WORK) and wait; main dumps (and copies the profile to
   PROFILE.mid: exactly phase 1) or resets (phase 1 discarded) while two
   noise threads count (they have started: main waits for their first
   200000 calls; 3000000 more follow); then the workers count phase 2
   (8 x 2 x N_WORK) and exit.  Final work: 8 x 3 x N_WORK (dump),
   8 x 2 x N_WORK (reset).  */

static sem_t noisy;

/* The workers wait for main at a gate, blocked inside pthread_cond_wait
   (uninstrumented) by the time main goes on: no instrumented code of
   theirs runs while main dumps or resets, so every count is on one side
   of it.  (A barrier would not do: code between two waits would race.)  */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_open = PTHREAD_COND_INITIALIZER;
static sem_t gate_full;
static int gate_waiting, gate_opened;

static void gate_wait(void) {
  pthread_mutex_lock(&gate_lock);
  if (++gate_waiting == 8) sem_post(&gate_full);
  while (!gate_opened) pthread_cond_wait(&gate_open, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
}

/* The 8th worker posts gate_full holding gate_lock, which it releases only
   inside pthread_cond_wait: once main holds the lock, all 8 are blocked.
   (No waiting loop here: its iterations would depend on timing.)  */
static void gate_until_full(void) {
  while (sem_wait(&gate_full) != 0) {
  }
  pthread_mutex_lock(&gate_lock);
  pthread_mutex_unlock(&gate_lock);
}

static void gate_release(void) {
  pthread_mutex_lock(&gate_lock);
  gate_opened = 1;
  pthread_cond_broadcast(&gate_open);
  pthread_mutex_unlock(&gate_lock);
}

static void *phased_worker(void *arg) {
  unsigned long id = (unsigned long)arg;
  unsigned long s = work_n(id, N_WORK);
  gate_wait(); /* phase 1 done; main dumps or resets */
  s += work_n(id + 1000, 2 * N_WORK);
  return (void *)s;
}

static void *noise_thread(void *arg) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < 200000; i++) s += noise(i + (unsigned long)arg);
  sem_post(&noisy);
  for (unsigned long i = 0; i < 3000000; i++) s += noise(i + (unsigned long)arg);
  return (void *)s;
}

static void copy_profile(const char *suffix) {
  const char *p = getenv("BALLARUS_PROFILE");
  if (p == NULL || __ballarus_dump == NULL) return;
  char to[4096];
  snprintf(to, sizeof to, "%s%s", p, suffix);
  FILE *in = fopen(p, "rb"), *out = fopen(to, "wb");
  if (in == NULL || out == NULL) die("copying the profile");
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
}

static int phased(int reset) {
  pthread_t w[8], z[2];
  sem_init(&gate_full, 0, 0);
  for (unsigned long i = 0; i < 8; i++) start(&w[i], phased_worker, (void *)(i * 11));
  gate_until_full();
  sem_init(&noisy, 0, 0);
  for (unsigned long i = 0; i < 2; i++) start(&z[i], noise_thread, (void *)i);
  for (int i = 0; i < 2; i++)
    while (sem_wait(&noisy) != 0) {
    }
  if (reset) {
    if (__ballarus_reset) __ballarus_reset();
  } else {
    if (__ballarus_dump) __ballarus_dump();
    copy_profile(".mid");
  }
  gate_release();
  unsigned long s = 0, n = 0;
  for (int i = 0; i < 8; i++) s += join(w[i]);
  for (int i = 0; i < 2; i++) n += join(z[i]);
  printf("%s %lu %lu\n", reset ? "reset" : "dump", s, n);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* fork_from_thread (BALLARUS_PROFILE=...%p): 4 threads count; thread 0,
   after N_WORK calls, forks while the others are still counting.  The
   child calls child_work() 100 times and work() 500 times, and exits: its
   profile holds exactly that.  The parent's: work = 4 x N_WORK + N_WORK
   (thread 0 goes on after the child has exited).  */

NOIPA unsigned long child_work(unsigned long x) { return work(x) ^ 5; }

static void *forking_thread(void *arg) {
  unsigned long id = (unsigned long)arg;
  unsigned long s = work_n(id, N_WORK);
  if (id != 0) return (void *)s;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    unsigned long c = 0;
    for (unsigned long i = 0; i < 100; i++) c += child_work(i);
    c += work_n(7, 500);
    printf("child %lu\n", c);
    exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    die("the child");
  return (void *)(s + work_n(id, N_WORK));
}

static int fork_from_thread(void) {
  pthread_t t[4];
  for (unsigned long i = 0; i < 4; i++) start(&t[i], forking_thread, (void *)i);
  unsigned long s = 0;
  for (int i = 0; i < 4; i++) s += join(t[i]);
  printf("parent %lu\n", s);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* dlopen LIBRARY: 4 threads call the library's lib_loop (lib_work: 4 x
   N_WORK) while it is open; main closes it; the same threads then run
   this program's work_n (work: 4 x N_WORK) and exit after the library is
   gone (its thread-exit hook must be gone with it); then 20 more cycles of
   open / 2 threads count / close / the threads exit must not grow the
   process (the copies of threads alive at dlclose are unmapped there).  lib_work: 4 x N_WORK + 20 x 2 x 1000
   in the library's records, written at each dlclose.  */

static unsigned long (*lib_loop)(unsigned long, unsigned long);
static pthread_barrier_t lib_phase;

static void *lib_thread(void *arg) {
  unsigned long id = (unsigned long)arg;
  unsigned long s = lib_loop(id, N_WORK);
  pthread_barrier_wait(&lib_phase); /* main closes the library */
  pthread_barrier_wait(&lib_phase);
  return (void *)(s + work_n(id, N_WORK));
}

/* Counts in the library, and exits only after main has closed it.  */
static void *lib_cycle_thread(void *arg) {
  unsigned long s = lib_loop((unsigned long)arg, 1000);
  pthread_barrier_wait(&lib_phase);
  pthread_barrier_wait(&lib_phase);
  return (void *)s;
}

static void *open_library(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "mt: dlopen: %s\n", dlerror());
    exit(1);
  }
  *(void **)&lib_loop = dlsym(h, "lib_loop");
  if (lib_loop == NULL) die("dlsym");
  return h;
}

static long vm_pages(void) {
  long pages = -1;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld", &pages) != 1) die("reading statm");
  fclose(f);
  return pages;
}

static int dlopen_scenario(const char *path) {
  if (path == NULL) die("dlopen: no library given");
  /* One malloc arena: a thread's first malloc may otherwise reserve a new
     64 MiB arena in any cycle, which the page count would take for a
     leak.  */
  mallopt(M_ARENA_MAX, 1);
  void *h = open_library(path);
  pthread_t t[4];
  pthread_barrier_init(&lib_phase, NULL, 5);
  for (unsigned long i = 0; i < 4; i++) start(&t[i], lib_thread, (void *)i);
  pthread_barrier_wait(&lib_phase);
  dlclose(h);
  pthread_barrier_wait(&lib_phase);
  unsigned long s = 0;
  for (int i = 0; i < 4; i++) s += join(t[i]);
  long before = 0;
  pthread_barrier_destroy(&lib_phase);
  pthread_barrier_init(&lib_phase, NULL, 3);
  for (int cycle = 0; cycle < 21; cycle++) {
    if (cycle == 1) before = vm_pages();
    h = open_library(path);
    pthread_t c[2];
    for (unsigned long i = 0; i < 2; i++) start(&c[i], lib_cycle_thread, (void *)i);
    pthread_barrier_wait(&lib_phase);
    dlclose(h);
    pthread_barrier_wait(&lib_phase);
    for (int i = 0; i < 2; i++) s += join(c[i]);
  }
  long growth = vm_pages() - before;
  /* A leaked copy per thread and cycle would be 40 mappings of at least
     two pages each.  */
  printf("dlopen %lu%s\n", s, growth > 40 ? " (the process grew)" : "");
  return 0;
}

/* ---------------------------------------------------------------------- */
/* running_at_exit: one thread calls work() N_WORK times and blocks for
   good in park(); another calls spin() in a loop until the process ends.
   main returns once both have got that far: the profile counts work()
   exactly, and spin() at least as often as main saw it return.  */

static sem_t parked, forever;
static volatile unsigned long spins;

NOIPA unsigned long spin(unsigned long x) { return x * 5 + 1; }

NOIPA void park(void) {
  sem_post(&parked);
  while (sem_wait(&forever) != 0) {
  }
}

static void *parking_thread(void *arg) {
  (void)arg;
  work_n(3, N_WORK);
  park();
  return NULL;
}

static void *spinning_thread(void *arg) {
  unsigned long x = (unsigned long)arg;
  for (;;) {
    x = spin(x);
    __atomic_fetch_add(&spins, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static int running_at_exit(void) {
  pthread_t a, b;
  sem_init(&parked, 0, 0);
  sem_init(&forever, 0, 0);
  start(&a, parking_thread, NULL);
  start(&b, spinning_thread, (void *)1);
  while (sem_wait(&parked) != 0) {
  }
  while (__atomic_load_n(&spins, __ATOMIC_RELAXED) < 100000) usleep(1000);
  /* What main saw, in a file: it varies from run to run, and the output
     is compared with the plain build's.  */
  FILE *f = fopen("spins-seen", "w");
  if (f == NULL) die("writing spins-seen");
  fprintf(f, "%lu\n", __atomic_load_n(&spins, __ATOMIC_RELAXED));
  fclose(f);
  printf("running\n");
  fflush(stdout);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* paths: 8 threads released at once by a barrier, each calling classify()
   on N_WORK consecutive numbers from a multiple of 4 and loop_sum(100)
   1000 times, so that every kind of path count (dense or hashed table,
   pointer or number register, counted loops) is updated by 8 threads at
   the same time.  classify: 8 x N_WORK, each of its 4 paths 2 x N_WORK;
   loop_sum: 8000 calls of 100 iterations (its entry edge cut, every
   iteration on one path, 8000 x 100; with tune-path-loops=on counted in a
   local).  */

#define N_PATHS_THREADS 8
static pthread_barrier_t paths_go;
/* Written, never read (the output must not depend on the scheduling): the
   volatile stores keep classify's branches branches at -O2.  */
static volatile unsigned long sink;

NOIPA unsigned long classify(unsigned long x) {
  unsigned long r = x;
  if (x & 1) {
    sink = x;
    r += 3;
  }
  if (x & 2) {
    sink = r;
    r ^= 5;
  }
  return r;
}

NOIPA unsigned long loop_sum(unsigned long x, unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; i++) s += (i ^ x) * (s | 1);
  return s;
}

static void *paths_thread(void *arg) {
  unsigned long id = (unsigned long)arg, s = 0;
  pthread_barrier_wait(&paths_go);
  for (unsigned long i = 0; i < N_WORK; i++) s += classify(4 * id * N_WORK + i);
  for (unsigned long i = 0; i < 1000; i++) s += loop_sum(id + i, 100);
  return (void *)s;
}

static int paths(void) {
  pthread_t t[N_PATHS_THREADS];
  pthread_barrier_init(&paths_go, NULL, N_PATHS_THREADS);
  for (unsigned long i = 0; i < N_PATHS_THREADS; i++)
    start(&t[i], paths_thread, (void *)i);
  unsigned long s = 0;
  for (int i = 0; i < N_PATHS_THREADS; i++) s += join(t[i]);
  printf("paths %lu\n", s);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage: mt SCENARIO [LIBRARY]");
  const char *s = argv[1];
  if (strcmp(s, "exit_around_main") == 0) return exit_around_main();
  if (strcmp(s, "detached") == 0) return detached();
  if (strcmp(s, "short_lived") == 0) return short_lived();
  if (strcmp(s, "exit_during_dump") == 0) return exit_during_dump();
  if (strcmp(s, "dump_while_counting") == 0) return phased(0);
  if (strcmp(s, "reset_while_counting") == 0) return phased(1);
  if (strcmp(s, "fork_from_thread") == 0) return fork_from_thread();
  if (strcmp(s, "dlopen") == 0) return dlopen_scenario(argc > 2 ? argv[2] : NULL);
  if (strcmp(s, "running_at_exit") == 0) return running_at_exit();
  if (strcmp(s, "paths") == 0) return paths();
#ifdef __cplusplus
  int r = cxx_scenario(s);
  if (r >= 0) return r;
#endif
  fprintf(stderr, "mt: unknown scenario %s\n", s);
  return 2;
}
