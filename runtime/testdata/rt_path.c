/* rt_path.c — a plain C program whose hand-built TUs count Ball-Larus paths
   in hashed tables through __ballarus_path_add, as path-mode code does,
   driven by the runtime tests (ballarus_rt_test.cc).

     rt_path ops OP...        runs the ops in order:
         pK:KEY:DELTA         path_add(&paths_hashes[K], KEY, DELTA)
         tA:KEY:DELTA         twin copy A's table (tB: copy B's)
         dJ:DELTA             paths_counters[J] += DELTA (atomic)
         cA:DELTA             twin copy A's counter 0 += DELTA (cB: copy B's)
         dump                 __ballarus_dump()
         reset                __ballarus_reset()
         copy:SUFFIX          copy $BALLARUS_PROFILE to PROFILE SUFFIX
       DELTA is +1, -1 (UINT64_MAX) or a decimal number; KEY is decimal
       (any uint64).
     rt_path threads T N      T threads start together and each run N steps
                              of the shared random workload (rt_work_step,
                              seed 1000+t), each dumping every 4000 steps
                              (from step 2000, while the tables still grow),
                              while another thread dumps in a loop;
                              paths_counters[0] += 1 per step,
                              paths_counters[1] gets each cut's +1 and -1
     rt_path forkmany K N     K children each run N steps (seed 2000+k) and
                              exit at about the same time; the parent counts
                              nothing
     rt_path fork N M         path 1 of table 0 counted N times, path 2
                              once; fork; the child counts path 1 M times,
                              path 3 once, exits; the parent then counts
                              path 4 once and exits
     rt_path oom              counts path 0 of table 0 (its first table is
                              mapped), then limits the address space so no
                              more can be mapped, counts paths 1..399 of
                              table 0 once each and paths 0..9 of table 1,
                              lifts the limit and exits: table 0 holds as
                              many paths as its first generation has slots,
                              and the rest are reported as not recorded

   Exit status 0 on success, 3 on a usage or system error.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/testdata/rt_test_tus.h"

static ballarus_path_hash paths_hashes[2] = {{RT_PATHS_FN0, NULL},
                                             {RT_PATHS_FN1, NULL}};
RT_DEFINE_TU_WITH_PATHS(paths, "paths", RT_PATHS_BODY, RT_PATHS_N,
                        paths_hashes, 2)

static ballarus_path_hash twin_a_hashes[1] = {{RT_TWIN_FN, NULL}};
static ballarus_path_hash twin_b_hashes[1] = {{RT_TWIN_FN, NULL}};
RT_DEFINE_TU_WITH_PATHS(twin_a, "twin", RT_TWIN_BODY, RT_TWIN_N,
                        twin_a_hashes, 1)
RT_DEFINE_TU_WITH_PATHS(twin_b, "twin", RT_TWIN_BODY, RT_TWIN_N,
                        twin_b_hashes, 1)

static int copy_file(const char *from, const char *suffix) {
  char to[4096];
  snprintf(to, sizeof to, "%s%s", from, suffix);
  FILE *in = fopen(from, "rb");
  if (in == NULL) return -1;
  FILE *out = fopen(to, "wb");
  if (out == NULL) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  return fclose(out) == 0 ? 0 : -1;
}

static int parse_delta(const char *s, uint64_t *out) {
  if (strcmp(s, "+1") == 0) {
    *out = 1;
  } else if (strcmp(s, "-1") == 0) {
    *out = UINT64_MAX;
  } else {
    char *end;
    *out = strtoull(s, &end, 10);
    if (*end != '\0') return -1;
  }
  return 0;
}

static int run_op(const char *op) {
  char buf[256];
  if (strlen(op) >= sizeof buf) return -1;
  strcpy(buf, op);
  if (strcmp(op, "dump") == 0) {
    __ballarus_dump();
    return 0;
  }
  if (strcmp(op, "reset") == 0) {
    __ballarus_reset();
    return 0;
  }
  if (strncmp(op, "copy:", 5) == 0) {
    const char *profile = getenv("BALLARUS_PROFILE");
    return profile != NULL ? copy_file(profile, op + 5) : -1;
  }
  char *f1 = strchr(buf, ':');
  if (f1 == NULL) return -1;
  *f1++ = '\0';
  uint64_t delta;
  if (buf[0] == 'd') {
    int j = atoi(buf + 1);
    if (j < 0 || j >= RT_PATHS_N || parse_delta(f1, &delta) != 0) return -1;
    __atomic_fetch_add(&paths_counters[j], delta, __ATOMIC_RELAXED);
    return 0;
  }
  if (strcmp(buf, "cA") == 0 || strcmp(buf, "cB") == 0) {
    if (parse_delta(f1, &delta) != 0) return -1;
    __atomic_fetch_add(buf[1] == 'A' ? &twin_a_counters[0] : &twin_b_counters[0],
                       delta, __ATOMIC_RELAXED);
    return 0;
  }
  char *f2 = strchr(f1, ':');
  if (f2 == NULL) return -1;
  *f2++ = '\0';
  char *end;
  uint64_t key = strtoull(f1, &end, 10);
  if (*end != '\0' || parse_delta(f2, &delta) != 0) return -1;
  ballarus_path_hash *h;
  if (strcmp(buf, "p0") == 0)
    h = &paths_hashes[0];
  else if (strcmp(buf, "p1") == 0)
    h = &paths_hashes[1];
  else if (strcmp(buf, "tA") == 0)
    h = &twin_a_hashes[0];
  else if (strcmp(buf, "tB") == 0)
    h = &twin_b_hashes[0];
  else
    return -1;
  __ballarus_path_add(h, key, delta);
  return 0;
}

/* Steps between a worker's own dumps (0: none).  */
static long dump_every;

/* The shared random workload: see rt_work_step in rt_test_tus.h.  */
static void work(uint64_t seed, long n) {
  uint64_t s = seed;
  ballarus_path_hash *pending = NULL;
  uint64_t pending_key = 0;
  for (long i = 0; i < n; i++) {
    if (dump_every > 0 && i % dump_every == dump_every / 2) __ballarus_dump();
    rt_step st = rt_work_step(&s, (uint64_t)i);
    __ballarus_path_add(&paths_hashes[st.table], st.key, 1);
    __atomic_fetch_add(&paths_counters[0], 1, __ATOMIC_RELAXED);
    if (pending != NULL) { /* the call returned: undo the cut path */
      __ballarus_path_add(pending, pending_key, UINT64_MAX);
      __atomic_fetch_add(&paths_counters[1], UINT64_MAX, __ATOMIC_RELAXED);
      pending = NULL;
    }
    if (st.cut) { /* a call cuts path key^1 short: count it before */
      pending = &paths_hashes[st.table];
      pending_key = st.key ^ 1;
      __ballarus_path_add(pending, pending_key, 1);
      __atomic_fetch_add(&paths_counters[1], 1, __ATOMIC_RELAXED);
    }
  }
  if (pending != NULL) {
    __ballarus_path_add(pending, pending_key, UINT64_MAX);
    __atomic_fetch_add(&paths_counters[1], UINT64_MAX, __ATOMIC_RELAXED);
  }
}

static long steps;
static int workers_left;
static pthread_barrier_t start;

static void *worker(void *arg) {
  uint64_t seed = 1000 + (uint64_t)(uintptr_t)arg;
  pthread_barrier_wait(&start); /* all race for the first tables at once */
  work(seed, steps);
  __atomic_sub_fetch(&workers_left, 1, __ATOMIC_RELEASE);
  return NULL;
}

static long dumps;
static void *dumper(void *arg) {
  (void)arg;
  pthread_barrier_wait(&start);
  while (__atomic_load_n(&workers_left, __ATOMIC_ACQUIRE) > 0) {
    __ballarus_dump();
    dumps++;
  }
  return NULL;
}

/* Current address-space size, from /proc/self/statm (pages).  */
static long vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  long pages = -1;
  if (fscanf(f, "%ld", &pages) != 1) pages = -1;
  fclose(f);
  return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv) {
  if (argc < 2) return 3;
  const char *mode = argv[1];
  if (strcmp(mode, "ops") == 0) {
    for (int i = 2; i < argc; i++) {
      if (run_op(argv[i]) != 0) {
        fprintf(stderr, "rt_path: bad op %s\n", argv[i]);
        return 3;
      }
    }
  } else if (strcmp(mode, "threads") == 0 && argc == 4) {
    long t = atol(argv[2]);
    steps = atol(argv[3]);
    dump_every = 4000;
    if (t < 1 || t > 32) return 3;
    pthread_t th[33];
    workers_left = (int)t;
    if (pthread_barrier_init(&start, NULL, (unsigned)t + 1) != 0) return 3;
    for (long k = 0; k < t; k++)
      if (pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)k) != 0)
        return 3;
    if (pthread_create(&th[t], NULL, dumper, NULL) != 0) return 3;
    for (long k = 0; k <= t; k++) pthread_join(th[k], NULL);
    if (dumps < 1) return 3;
  } else if (strcmp(mode, "forkmany") == 0 && argc == 4) {
    long k = atol(argv[2]), n = atol(argv[3]);
    if (k < 1 || k > 64) return 3;
    int fds[2];
    if (pipe(fds) != 0) return 3;
    pid_t pids[64];
    for (long c = 0; c < k; c++) {
      pids[c] = fork();
      if (pids[c] < 0) return 3;
      if (pids[c] == 0) {
        close(fds[1]);
        work(2000 + (uint64_t)c, n);
        char ch;
        while (read(fds[0], &ch, 1) > 0) {
        }
        exit(0); /* all children dump at about the same time */
      }
    }
    close(fds[1]);
    for (long c = 0; c < k; c++) {
      int st;
      if (waitpid(pids[c], &st, 0) != pids[c] || !WIFEXITED(st) ||
          WEXITSTATUS(st) != 0)
        return 3;
    }
  } else if (strcmp(mode, "fork") == 0 && argc == 4) {
    long n = atol(argv[2]), m = atol(argv[3]);
    for (long i = 0; i < n; i++) __ballarus_path_add(&paths_hashes[0], 1, 1);
    __ballarus_path_add(&paths_hashes[0], 2, 1);
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      for (long i = 0; i < m; i++) __ballarus_path_add(&paths_hashes[0], 1, 1);
      __ballarus_path_add(&paths_hashes[0], 3, 1);
      exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return 3;
    __ballarus_path_add(&paths_hashes[0], 4, 1);
  } else if (strcmp(mode, "oom") == 0) {
    __ballarus_path_add(&paths_hashes[0], 0, 1);
    struct rlimit old, lim;
    if (getrlimit(RLIMIT_AS, &old) != 0) return 3;
    long vm = vm_bytes();
    if (vm <= 0) return 3;
    lim = old;
    lim.rlim_cur = (rlim_t)vm; /* no new mapping fits */
    if (setrlimit(RLIMIT_AS, &lim) != 0) return 3;
    for (uint64_t k = 1; k < 400; k++)
      __ballarus_path_add(&paths_hashes[0], k, 1);
    for (uint64_t k = 0; k < 10; k++)
      __ballarus_path_add(&paths_hashes[1], k, 1);
    if (setrlimit(RLIMIT_AS, &old) != 0) return 3;
  } else {
    fprintf(stderr, "rt_path: unknown mode %s\n", mode);
    return 3;
  }
  return 0;
}
