/* trace_fault.c — the fatal-signal handler (trace_internal.h).

   The handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT notes the
   fault (trace_format.h FAULT: the signal, its si_code and si_addr, the
   interrupted instruction's address from the ucontext and the module
   holding it, found in /proc/self/maps), writes every thread's kept
   chunks (the crashing thread's and every other registered thread's), or
   in full mode every live thread's partial chunk, and each live thread's
   POSITION, with open(2), read(2) and write(2) only — no malloc, stdio
   or lock — and renames the file over its path (renameat), once per
   process.  It then puts back the action that was installed before
   ballarus_trace_start (the program's handler, or SIG_DFL) and:
     - for a signal raised by the kernel for a fault (si_code > 0), returns:
       the faulting instruction runs again and the program's handler (or
       the default action) gets a genuine fault with its siginfo;
     - for a signal sent by kill, raise or abort (si_code <= 0), raises it
       again: blocked while the handler runs, it is delivered to the
       restored action when the handler returns.
   So the exit status and signal are those of the program without the
   runtime.  A handler the program installs later, while ours is
   installed, is kept behind ours (trace_signals.c).  The handler runs on the thread's alternate
   signal stack if the program set one (SA_ONSTACK); without one, a stack
   overflow cannot be recorded.  */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "runtime/trace_internal.h"

static trace_state *const g = &ballarus_trace_g;

const int ballarus_trace_fatal_signals[N_FATAL] = {SIGSEGV, SIGBUS, SIGILL,
                                                   SIGFPE, SIGABRT};

/* The interrupted instruction's address, 0 where unknown.  */
static uint64_t context_pc(const void *uc) {
  const ucontext_t *c = uc;
  if (c == NULL) return 0;
#if defined(__x86_64__)
  return (uint64_t)c->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
  return (uint64_t)(uint32_t)c->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
  return (uint64_t)c->uc_mcontext.pc;
#else
  return 0;
#endif
}

/* A hexadecimal number at *p, which moves past it.  */
static uint64_t hex(const char **p, const char *end) {
  uint64_t v = 0;
  for (; *p < end; (*p)++) {
    char c = **p;
    unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                 : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                        : 16u;
    if (d == 16u) break;
    v = v << 4 | d;
  }
  return v;
}

static const char *past_spaces(const char *p, const char *end) {
  while (p < end && *p == ' ') p++;
  return p;
}

/* Past the next field and the spaces before it.  */
static const char *past_field(const char *p, const char *end) {
  p = past_spaces(p, end);
  while (p < end && *p != ' ') p++;
  return p;
}

/* One line of /proc/self/maps ("START-END PERMS OFFSET DEV INODE
   PATH"): when its range holds f->pc, the module's path and pc's offset
   in its file go into *f; returns 1 then.  */
static int maps_line(const char *p, const char *end, trace_fault *f) {
  uint64_t start = hex(&p, end);
  if (p == end || *p++ != '-') return 0;
  uint64_t stop = hex(&p, end);
  if (f->pc < start || f->pc >= stop) return 0;
  p = past_spaces(past_field(p, end), end); /* perms */
  f->offset = hex(&p, end) + (f->pc - start);
  p = past_spaces(past_field(past_field(p, end), end), end); /* dev, inode */
  if (p == end || *p != '/') return 1; /* anonymous, [vdso], [stack] */
  size_t n = (size_t)(end - p);
  if (n >= sizeof f->path) n = sizeof f->path - 1;
  memcpy(f->path, p, n);
  f->path_len = (uint32_t)n;
  return 1;
}

/* Finds the mapping of f->pc in /proc/self/maps, read with open(2) and
   read(2) into a static buffer, line by line.  */
static void find_module(trace_fault *f) {
  static char buf[2 * PATH_MAX + 256];
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, buf + len, sizeof buf - len);
    if (n <= 0) break;
    len += (size_t)n;
    char *line = buf, *nl;
    while ((nl = memchr(line, '\n', len - (size_t)(line - buf))) != NULL) {
      if (maps_line(line, nl, f)) {
        close(fd);
        return;
      }
      line = nl + 1;
    }
    len -= (size_t)(line - buf);
    memmove(buf, line, len);
    if (len == sizeof buf) len = 0; /* a line longer than any path */
  }
  close(fd);
}

/* What finish writes as the FAULT record of the calling thread.  */
static void note_fault(int sig, const siginfo_t *si, const void *uc) {
  trace_fault *f = &g->fault;
  f->thread = ballarus_trace_self;
  f->signo = (uint32_t)sig;
  f->code = si ? (uint32_t)si->si_code : 0;
  f->addr = si ? (uint64_t)(uintptr_t)si->si_addr : 0;
  f->pc = context_pc(uc);
  f->offset = 0;
  f->path_len = 0;
  if (f->pc != 0) find_module(f);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc) {
  int saved = errno;
  /* The first thread to crash notes its fault; finish writes it.  */
  if (ballarus_trace_own_process() &&
      !__atomic_load_n(&g->finished, __ATOMIC_ACQUIRE) &&
      !__atomic_exchange_n(&g->faulted, 1, __ATOMIC_ACQ_REL))
    note_fault(sig, si, uc);
  ballarus_trace_finish();
  for (int i = 0; i < N_FATAL; i++)
    if (ballarus_trace_fatal_signals[i] == sig)
      ballarus_trace_real_sigaction(sig, &g->old[i], NULL);
  if (si == NULL || si->si_code <= 0) raise(sig);
  errno = saved;
}

int ballarus_trace_install_handlers(char *err, size_t errlen) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fatal_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < N_FATAL; i++) {
    if (ballarus_trace_real_sigaction(ballarus_trace_fatal_signals[i], &sa,
                                      &g->old[i]) != 0) {
      snprintf(err, errlen, "sigaction(%d): %s",
               ballarus_trace_fatal_signals[i], strerror(errno));
      return -1;
    }
    __atomic_store_n(&g->installed, i + 1, __ATOMIC_RELEASE);
  }
  return 0;
}
