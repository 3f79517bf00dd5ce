/* thread_gs.c — update=thread's counts through %gs (tune-thread-gs, on by
   default): code for executables (x86-64) counts
   with `addq $1, %gs:__ballarus_counters+OFF(%rip)` (plugin/
   thread_counters.cc), an address inside the module's thread-mode range
   [__start, __stop) plus the thread's %gs base.  A registered thread's
   base is (its copy's address - __start), so the add lands in its copy;
   base 0, a thread that has not registered, adds to the shared counters,
   as update=thread's pointer does before registration.  The base is set
   with arch_prctl(ARCH_SET_GS) (a system call, once per registration),
   which accepts user addresses only: the caller maps copies above the
   range, and a copy it could only map below gets no base (the caller
   warns, and that thread counts into the shared counters).

   The limits of the mechanism (docs/DESIGN.md, "Counting under threads"):
     - a thread inherits its creator's base when it is created (clone
       copies it), so until it registers it counts into its creator's
       copy; copies of exited threads are therefore never unmapped but
       kept for reuse (thread_counters.c), so such stray adds land in
       memory of ours;
     - a program (or tool) that uses %gs itself.  A base already set at
       the module's first registration is left alone, with a warning; the
       %gs code then adds at base + [__start, __stop), which this file
       maps (MAP_FIXED_NOREPLACE) and the caller folds like a copy: exact
       while one thread at a time counts there, racy like update=single
       otherwise.  If that range cannot be mapped the process ends with a
       message rather than let counts overwrite the program's memory.  A
       program that changes %gs after threads registered makes their
       counts land wherever its base points: not supported.  */

#define _GNU_SOURCE

#include "runtime/thread_gs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"

#if defined(__x86_64__) && defined(__linux__)

#include <asm/prctl.h>
#include <sys/syscall.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

extern uint64_t __start_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern uint64_t __stop_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern const uint64_t __start_ballarus_gs_tus[]
    __attribute__((weak, visibility("hidden")));
extern const uint64_t __stop_ballarus_gs_tus[]
    __attribute__((weak, visibility("hidden")));

static void gs_say(const char *text) {
  ssize_t w = write(2, text, strlen(text));
  (void)w;
}

static int gs_get(uintptr_t *base) {
  unsigned long b = 0;
  if (syscall(SYS_arch_prctl, ARCH_GET_GS, &b) != 0) return -1;
  *base = b;
  return 0;
}

/* Maps [base + __start, base + __stop), page-rounded, where it must be;
   NULL if it cannot.  */
static uint64_t *map_foreign(uintptr_t base) {
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t lo = base + (uintptr_t)__start_ballarus_thread_ctrs;
  const uintptr_t hi = base + (uintptr_t)__stop_ballarus_thread_ctrs;
  if (hi <= lo) return NULL;
  const uintptr_t first = lo & ~(page - 1);
  const size_t len = (size_t)(((hi + page - 1) & ~(page - 1)) - first);
  void *m = mmap((void *)first, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                     MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (m == MAP_FAILED) return NULL;
  if ((uintptr_t)m != first) { /* a kernel without MAP_FIXED_NOREPLACE */
    munmap(m, len);
    return NULL;
  }
  return (uint64_t *)lo;
}

int ballarus_gs_init(uint64_t **foreign) {
  *foreign = NULL;
  if (__start_ballarus_gs_tus == NULL ||
      (uintptr_t)__stop_ballarus_gs_tus <= (uintptr_t)__start_ballarus_gs_tus ||
      __start_ballarus_thread_ctrs == NULL)
    return 0;
  uintptr_t base = 0;
  if (gs_get(&base) != 0 || base == 0) return 1;
  char msg[512];
  *foreign = map_foreign(base);
  if (*foreign == NULL) {
    snprintf(msg, sizeof msg,
             "ballarus: the %%gs base is in use (%#lx) and per-thread counts "
             "through %%gs would overwrite memory at %#lx: rebuild with "
             "-fplugin-arg-ballarus-tune-thread-gs=off\n",
             (unsigned long)base,
             (unsigned long)(base + (uintptr_t)__start_ballarus_thread_ctrs));
    gs_say(msg);
    abort();
  }
  snprintf(msg, sizeof msg,
           "ballarus: the %%gs base is in use (%#lx): per-thread counts "
           "through %%gs go to one area for all threads, unsynchronised "
           "(exact with -fplugin-arg-ballarus-tune-thread-gs=off)\n",
           (unsigned long)base);
  gs_say(msg);
  return 2;
}

int ballarus_gs_point(const uint64_t *copy) {
  uintptr_t base = copy == NULL ? 0
                                 : (uintptr_t)copy -
                                       (uintptr_t)__start_ballarus_thread_ctrs;
  return syscall(SYS_arch_prctl, ARCH_SET_GS, base) == 0 ? 0 : -1;
}

int ballarus_gs_listed(const uint64_t *counters) {
  const uint64_t *e = __start_ballarus_gs_tus;
  const uint64_t *end = __stop_ballarus_gs_tus;
  if (e == NULL || end == NULL) return 0;
  for (; e < end; e++)
    if (*e == (uint64_t)(uintptr_t)counters) return 1;
  return 0;
}

#else /* no %gs code outside x86-64 Linux */

int ballarus_gs_init(uint64_t **foreign) {
  *foreign = NULL;
  return 0;
}

int ballarus_gs_point(const uint64_t *copy) {
  (void)copy;
  return -1;
}

int ballarus_gs_listed(const uint64_t *counters) {
  (void)counters;
  return 0;
}

#endif
