/* trace_signals.c — the program's own handlers for the fatal signals, kept
   behind the recorder's (trace_internal.h).

   A program that installs a SIGSEGV handler after the recorder started
   would replace the recorder's handler, and its crash would not be
   recorded.  So, while the recorder's handlers are installed, this
   module's calls of sigaction(2) and signal(3) for the fatal signals do
   not reach the kernel: the action is kept as the one the recorder's
   handler puts back and passes the signal on to (trace_fault.c), and the
   program reads back what it set, as without the recorder.  Every other
   call — another signal, or no recorder — goes on unchanged to the next
   sigaction in the lookup order: the C library's, or the one of a
   runtime that intercepts it too (a sanitizer's).

   The definitions are hidden: each module (the executable, or a shared
   library linked with the runtime) intercepts only its own calls, and
   libraries that call sigaction themselves reach the C library as before
   (the README says so).  They are weak, so that a program defining its
   own sigaction or signal links as before (without this interception).
   glibc's other ways to set a handler, sysv_signal, bsd_signal, and
   System V's sigset and sigignore, are intercepted too.  */

#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "runtime/trace_internal.h"

static trace_state *const g = &ballarus_trace_g;

/* The C library's sigaction, under the name glibc exports it by besides
   sigaction.  */
extern int __sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old);

typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);

/* The sigaction this module's calls would reach without ours, found once
   (racing finders find the same).  */
static sigaction_fn *next_sigaction(void) {
  static sigaction_fn *next;
  sigaction_fn *f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    *(void **)&f = dlsym(RTLD_NEXT, "sigaction");
    if (f == NULL) f = __sigaction;
    __atomic_store_n(&next, f, __ATOMIC_RELEASE);
  }
  return f;
}

int ballarus_trace_real_sigaction(int sig, const struct sigaction *act,
                                  struct sigaction *old) {
  return next_sigaction()(sig, act, old);
}

/* Serialises the programs' updates of g->old[] (the handler reads it
   without the lock: a crash during an update is not worth more).  */
static int kept_lock;

/* The index in g->old[] of sig when the recorder's handler for it is
   installed, -1 otherwise.  */
static int kept_index(int sig) {
  int installed = __atomic_load_n(&g->installed, __ATOMIC_ACQUIRE);
  for (int i = 0; i < installed; i++)
    if (ballarus_trace_fatal_signals[i] == sig) return i;
  return -1;
}

#define INTERCEPTED __attribute__((weak)) HIDDEN

INTERCEPTED int sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old) {
  while (__atomic_test_and_set(&kept_lock, __ATOMIC_ACQUIRE)) {
  }
  int i = kept_index(sig);
  if (i >= 0) {
    if (old != NULL) *old = g->old[i];
    if (act != NULL) g->old[i] = *act;
  }
  __atomic_clear(&kept_lock, __ATOMIC_RELEASE);
  return i >= 0 ? 0 : next_sigaction()(sig, act, old);
}

/* Sets sig's handler with `flags`, as glibc's signal functions do through
   sigaction (above); the signal blocked while the handler runs unless
   SA_NODEFER.  */
static __sighandler_t set_handler(int sig, __sighandler_t handler,
                                  int flags) {
  struct sigaction act, old;
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (handler == SIG_ERR || sigaddset(&act.sa_mask, sig) < 0) {
    errno = EINVAL;
    return SIG_ERR;
  }
  if (flags & SA_NODEFER) sigemptyset(&act.sa_mask);
  act.sa_flags = flags;
  if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

/* glibc's signal and bsd_signal: BSD semantics (the handler stays,
   interrupted calls restart, the signal is blocked while its handler
   runs).  */
INTERCEPTED __sighandler_t signal(int sig, __sighandler_t handler) {
  return set_handler(sig, handler, SA_RESTART);
}

__sighandler_t bsd_signal(int sig, __sighandler_t handler);
INTERCEPTED __sighandler_t bsd_signal(int sig, __sighandler_t handler) {
  return set_handler(sig, handler, SA_RESTART);
}

/* glibc's sysv_signal: System V semantics (the action goes back to
   SIG_DFL when the handler runs, the signal is not blocked meanwhile,
   interrupted calls fail with EINTR).  */
INTERCEPTED __sighandler_t sysv_signal(int sig, __sighandler_t handler) {
  return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

/* System V's sigset: a handler with no flags, the signal taken out of the
   thread's mask; or, for SIG_HOLD, the signal added to the mask, the
   action unchanged.  SIG_HOLD is returned when the signal was blocked
   before, else the previous handler (as glibc's).  */
INTERCEPTED __sighandler_t sigset(int sig, __sighandler_t disp) {
  sigset_t one, before;
  struct sigaction act, old;
  if (disp == SIG_ERR || sigemptyset(&one) < 0 || sigaddset(&one, sig) < 0) {
    errno = EINVAL;
    return SIG_ERR;
  }
  if (disp == SIG_HOLD) {
    if (pthread_sigmask(SIG_BLOCK, &one, &before) != 0) return SIG_ERR;
    if (sigismember(&before, sig)) return SIG_HOLD;
    if (sigaction(sig, NULL, &old) < 0) return SIG_ERR;
    return old.sa_handler;
  }
  act.sa_handler = disp;
  sigemptyset(&act.sa_mask);
  act.sa_flags = 0;
  if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
  if (pthread_sigmask(SIG_UNBLOCK, &one, &before) != 0) return SIG_ERR;
  return sigismember(&before, sig) ? SIG_HOLD : old.sa_handler;
}

/* System V's sigignore: SIG_IGN with no flags.  */
INTERCEPTED int sigignore(int sig) {
  struct sigaction act;
  act.sa_handler = SIG_IGN;
  if (sigemptyset(&act.sa_mask) < 0) return -1;
  act.sa_flags = 0;
  return sigaction(sig, &act, NULL);
}

/* At exit, or when starting failed: the kept actions go in place, and
   later calls reach the C library again.  */
void ballarus_trace_restore_handlers(void) {
  while (__atomic_test_and_set(&kept_lock, __ATOMIC_ACQUIRE)) {
  }
  int installed = g->installed;
  __atomic_store_n(&g->installed, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < installed; i++)
    next_sigaction()(ballarus_trace_fatal_signals[i], &g->old[i], NULL);
  __atomic_clear(&kept_lock, __ATOMIC_RELEASE);
}
