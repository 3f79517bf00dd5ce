/* trace_prog.c — drives the trace runtime for trace_rt_test,
   trace_rt_stack_test and trace_rt_read_test:
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
     actions N      installs and reads back actions of SIGSEGV (the
                    recorder's signal) and SIGUSR1 after SPEC starts,
                    printing what it reads, and raises SIGUSR1
     raise N, handler_raise N  as segv and handler, with raise(SIGSEGV)
                    instead of a fault
     segvthreads N T  T threads write N witnesses of streams 1..T and wait;
                    main writes N of stream 0 and dereferences null
     fork N         N witnesses, fork; the child writes N more of stream 1
                    and exits, the parent waits and writes N of stream 2
   and a simulated program calling the hooks of trace_events.h (sim_step:
   random calls, returns, landings and blocks from seed S, default 1):
     hooks N [S]    N steps
     hooks_segv N [S]  N steps, then a null dereference
     hooks_fork N [S]  N steps, block FORK_BLOCK inside an activation and
                    fork; the child takes N more steps and exits, the
                    parent waits and takes N more steps
     hooks_exec N [S]  N steps, __ballarus_trace_exec and exec /bin/true
     hooks_vfork N [S]  N steps, vfork: the child calls
                    __ballarus_trace_exec and execs /bin/true; the parent
                    waits, takes N more steps and does as hooks_exec
     hooks_execfail N [S]  as hooks_exec with an exec that fails, twice,
                    N more steps between them
     hooks_threads N T  T threads, thread k taking N steps from seed k + 1
     deep N         N nested calls, each from its own block, then N returns
     prestart N     2 calls before SPEC starts, N witnesses in a third,
                    3 returns, a call and N witnesses in it
     prethread N    a thread writes PRE_WORDS of stream 2 before SPEC
                    starts, then N of stream 1 after it
   A block b is its word (the naive mode's block index) and the site b; a
   return writes the word 1 (EXIT's index) before its leave, as
   mode=trace-naive does, so that the stream alone tells the stack.  */
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

/* glibc defines it; its header declares it only for older standards.  */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);
#include "runtime/trace_buffer.h"
#include "runtime/trace_events.h"

#define FORK_BLOCK 7777u
#define SIM_DEPTH 40u

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

#define PRE_WORDS 100u

static pthread_barrier_t started;
static pthread_t pre_thread;

static void *thread_pre(void *arg) {
  (void)arg;
  for (uint32_t i = 0; i < PRE_WORDS; i++)
    ballarus_trace_witness(trace_seq(2, i));
  pthread_barrier_wait(&started); /* written */
  pthread_barrier_wait(&started); /* SPEC started */
  write_stream(1);
  return NULL;
}

static void prethread_begin(void) {
  pthread_barrier_init(&started, NULL, 2);
  pthread_create(&pre_thread, NULL, thread_pre, NULL);
  pthread_barrier_wait(&started);
}

static int prethread_end(void) {
  pthread_barrier_wait(&started);
  pthread_join(pre_thread, NULL);
  return 0;
}

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

static __thread uint32_t sim_seed;
static __thread uint32_t sim_live; /* activations the simulation has live */

static uint32_t sim_rand(void) {
  sim_seed = sim_seed * 1103515245u + 12345u;
  return sim_seed >> 8;
}

static void sim_block(uint32_t b) {
  ballarus_trace_witness(b);
  __ballarus_trace_site(b);
}

static void sim_call(uint32_t r) {
  uint32_t fn = (r >> 4) % 50;
  sim_block(2 + (r >> 10) % 997);
  if (__ballarus_trace_enter(fn, fn * 2654435761u) != sim_live) abort();
  sim_live++;
}

static void sim_step(void) {
  uint32_t r = sim_rand(), op = r % 16;
  if (op < 5 && sim_live < SIM_DEPTH) {
    sim_call(r);
  } else if (op < 9 && sim_live > 0) {
    ballarus_trace_witness(1);
    __ballarus_trace_leave();
    sim_live--;
  } else if (op == 9 && sim_live > 0) {
    uint32_t d = (r >> 4) % sim_live;
    __ballarus_trace_land(2 + (r >> 10) % 997, d);
    sim_live = d + 1;
  } else {
    sim_block(2 + (r >> 4) % 997);
  }
}

static void sim_steps(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) sim_step();
}

static int run_deep(uint32_t n) {
  for (uint32_t k = 0; k < n; k++) {
    sim_block(2 + k % 997);
    __ballarus_trace_enter(k % 50, k);
  }
  for (uint32_t k = 0; k < n; k++) {
    ballarus_trace_witness(1);
    __ballarus_trace_leave();
  }
  return 0;
}

static void *sim_thread(void *arg) {
  sim_seed = (uint32_t)(uintptr_t)arg;
  sim_steps(n_witnesses);
  return NULL;
}

static int run_hooks_threads(uint32_t t) {
  pthread_t th[64];
  if (t > 64) t = 64;
  for (uint32_t k = 0; k < t; k++)
    pthread_create(&th[k], NULL, sim_thread, (void *)(uintptr_t)(k + 1));
  for (uint32_t k = 0; k < t; k++) pthread_join(th[k], NULL);
  return 0;
}

static int run_prestart(uint32_t n) {
  __ballarus_trace_enter(3, 30);
  for (uint32_t i = 0; i < n; i++) ballarus_trace_witness(2 + i % 7);
  for (int k = 0; k < 3; k++) __ballarus_trace_leave();
  sim_block(9);
  __ballarus_trace_enter(4, 40);
  for (uint32_t i = 0; i < n; i++) ballarus_trace_witness(2 + i % 7);
  return 0;
}

static int run_hooks(const char *cmd, uint32_t n) {
  sim_steps(n);
  if (strcmp(cmd, "hooks_segv") == 0) {
    volatile int *null = NULL;
    return *null;
  }
  if (strcmp(cmd, "hooks_fork") == 0) {
    if (sim_live == 0) sim_call(sim_rand());
    sim_block(FORK_BLOCK);
    pid_t pid = fork();
    sim_steps(n);
    if (pid == 0) exit(0);
    int st;
    waitpid(pid, &st, 0);
    return st == 0 ? 0 : 1;
  }
  if (strcmp(cmd, "hooks_exec") == 0) {
    __ballarus_trace_exec();
    execl("/bin/true", "true", (char *)NULL);
    return 5;
  }
  if (strcmp(cmd, "hooks_vfork") == 0) {
    pid_t pid = vfork();
    if (pid == 0) {
      __ballarus_trace_exec();
      execl("/bin/true", "true", (char *)NULL);
      _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (st != 0) return 1;
    sim_steps(n);
    __ballarus_trace_exec();
    execl("/bin/true", "true", (char *)NULL);
    return 5;
  }
  if (strcmp(cmd, "hooks_execfail") == 0) {
    __ballarus_trace_exec();
    execl("/nonexistent/true", "true", (char *)NULL);
    sim_steps(n);
    __ballarus_trace_exec();
    execl("/nonexistent/true", "true", (char *)NULL);
  }
  return 0;
}

static volatile sig_atomic_t usr1_ran;
static void on_usr1(int sig) {
  (void)sig;
  usr1_ran = 1;
}

static const char *handler_name(void (*h)(int)) {
  return h == SIG_DFL ? "dfl" : h == on_segv ? "on_segv"
                              : h == on_usr1 ? "on_usr1" : "other";
}

static int run_actions(void) {
  struct sigaction sa, now;
  void (*before)(int) = signal(SIGSEGV, SIG_DFL);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv;
  sigemptyset(&sa.sa_mask);
  struct sigaction prev;
  if (sigaction(SIGSEGV, &sa, &prev) != 0 || sigaction(SIGSEGV, NULL, &now))
    return 4;
  printf("SIGSEGV %s %s %s\n", handler_name(before),
         handler_name(now.sa_handler), handler_name(signal(SIGSEGV, on_segv)));
  if (signal(SIGUSR1, on_usr1) == SIG_ERR || sigaction(SIGUSR1, NULL, &now))
    return 5;
  raise(SIGUSR1);
  printf("SIGUSR1 %s %s\n", handler_name(now.sa_handler),
         usr1_ran ? "ran" : "did not run");
  /* glibc's other names for signal, with their own flags.  */
  if (sysv_signal(SIGBUS, on_segv) == SIG_ERR || sigaction(SIGBUS, NULL, &now))
    return 6;
  printf("SIGBUS %s%s\n", handler_name(now.sa_handler),
         (now.sa_flags & (SA_RESETHAND | SA_NODEFER)) ==
                 (SA_RESETHAND | SA_NODEFER)
             ? " oneshot"
             : "");
  void (*was)(int) = bsd_signal(SIGILL, on_segv);
  if (was == SIG_ERR || sigaction(SIGILL, NULL, &now)) return 7;
  printf("SIGILL %s %s%s\n", handler_name(was), handler_name(now.sa_handler),
         now.sa_flags & SA_RESTART ? " restart" : "");
  /* System V's: sigset with its mask, and sigignore.  */
  was = sigset(SIGFPE, on_segv);
  void (*held)(int) = sigset(SIGFPE, SIG_HOLD);
  sigset_t mask;
  if (was == SIG_ERR || held == SIG_ERR ||
      pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 ||
      sigaction(SIGFPE, NULL, &now))
    return 8;
  printf("SIGFPE %s %s %s%s", handler_name(was), handler_name(held),
         handler_name(now.sa_handler),
         sigismember(&mask, SIGFPE) ? " held" : "");
  printf(" %s\n", sigset(SIGFPE, on_usr1) == SIG_HOLD ? "was held" : "?");
  if (sigignore(SIGABRT) != 0 || sigaction(SIGABRT, NULL, &now)) return 9;
  printf("SIGABRT %s\n", now.sa_handler == SIG_IGN ? "ign" : "not ign");
  return 0;
}

int main(int argc, char **argv) {
  char err[512] = "";
  if (argc < 5) return 2;
  const char *cmd = argv[3];
  n_witnesses = (uint32_t)strtoul(argv[4], NULL, 10);
  if (strncmp(cmd, "handler", 7) == 0) signal(SIGSEGV, on_segv);
  if (strcmp(cmd, "prestart") == 0) {
    __ballarus_trace_enter(1, 10);
    __ballarus_trace_enter(2, 20);
  }
  if (strcmp(cmd, "prethread") == 0) prethread_begin();
  if (strcmp(argv[2], "none") != 0 &&
      ballarus_trace_start(argv[1], argv[2], err, sizeof err) != 0) {
    fprintf(stderr, "trace_prog: %s\n", err);
    return 3;
  }
  if (strcmp(cmd, "late") == 0) signal(SIGSEGV, on_segv);
  if (strcmp(cmd, "actions") == 0) return run_actions();
  if (strcmp(cmd, "hooks_threads") == 0)
    return run_hooks_threads(argc > 5 ? (uint32_t)atoi(argv[5]) : 2);
  if (strncmp(cmd, "hooks", 5) == 0) {
    sim_seed = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 10) : 1;
    return run_hooks(cmd, n_witnesses);
  }
  if (strcmp(cmd, "deep") == 0) return run_deep(n_witnesses);
  if (strcmp(cmd, "prestart") == 0) return run_prestart(n_witnesses);
  if (strcmp(cmd, "prethread") == 0) return prethread_end();
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
