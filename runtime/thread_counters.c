/* thread_counters.c — update=thread: every thread counts into its own copy
   of its module's counters, and the copies are added into the shared
   counters at thread exit and at every dump.  Exact under any number of
   threads with plain (non-atomic) increments.  Why this design, and what
   it costs, measured: docs/DESIGN.md ("Counting under threads").

   The instrumented side (plugin/counter_emit.cc).  The plugin puts the
   counter array of every thread-mode TU into section
   BALLARUS_THREAD_SECTION, so the module's thread-mode counters are one
   range [__start, __stop) of n words, and gives each TU a thread-local
   pointer to its counters, __ballarus_tc, initially the shared array; a
   function loads it once and adds 1 at pointer + index.  Registration
   (__ballarus_tc_register, called where a thread can enter a TU from
   uninstrumented code, e.g. at a thread's start routine) maps the thread's
   copy `ctr` of the range and points every TU pointer of the module, in
   this thread, at the TU's part of it: the table in section
   BALLARUS_TC_TABLE_SECTION gives each pointer's offset in the module's
   TLS block, and the block's address in this thread is the registering
   TU's pointer address minus its offset.

   A copy.  One anonymous private mapping per (module, thread):

     [tc_copy header, 64 bytes][ctr: n words ...][pad to a page][base: n words]

   mapped MAP_NORESERVE and without huge pages, so the kernel commits only
   the pages a thread touches: a thread costs about the pages of the
   counters it increments (plus as many baseline pages, below), not the
   module's size.  `ctr` is written only by its thread (plain adds: a
   function may even keep a counter in a register through a loop, as in
   update=single).  `base` is what has already been added to the shared
   counters, and only folders write it, under tc_lock.

   Folding (fold()): for every counter, v = ctr[i] read racily (a 64-bit
   aligned load: some value the counter really had), d = v - base[i]; the
   shared counter gets d (atomic add) and base[i] becomes v.  What the
   thread adds meanwhile is in a later v, so nothing is lost or counted
   twice, however folds and increments interleave; counts are residues
   mod 2^64, so path mode's undo (-1) folds exactly too.  Only pages that
   hold data are read: /proc/self/pagemap says which pages are present or
   swapped out (mincore() cannot tell a swapped-out page from one never
   touched); without it every page is read.  Folds happen:
     - at every dump and reset (ballarus_tc_sync, called by ballarus_rt.c
       for each module of the chain, with the master lock held), for every
       live copy;
     - at thread exit, by the thread itself: a pthread key (one per
       module) whose destructor folds the copy, unlinks it and unmaps it.
       C++ thread_local destructors run before key destructors; instrumented
       code run after ours (by a later key destructor) maps a new copy,
       which the next destructor round folds, or which stays registered
       (and is folded by every dump) if glibc's four rounds are used up.
   The registry of live copies and every baseline are protected by one
   mutex, tc_lock, shared by dumps, thread exits and new copies.  Lock
   order: the master lock (ballarus_rt.c), then tc_lock.

   fork().  The child has only the forking thread: the other threads'
   copies belong to the parent (which folds them) and are unmapped in the
   child; the forking thread's copy gets base := ctr, so the child's
   counts start from zero, as the shared counters do (ballarus_rt.c).
   tc_lock is held across fork (pthread_atfork), so the child finds the
   registry consistent.

   Module exit.  ballarus_rt.c's destructor dumps (folding every copy) and
   then calls ballarus_tc_module_fini.  At dlclose the module's code is
   going away, so no thread can still be running it: the key is deleted
   (no destructor left pointing into unmapped code) and every copy is
   unmapped; a later dlopen starts afresh (new TLS blocks, initialised
   from the library's image: every pointer at its shared array).  At
   process exit other threads may still be running instrumented code, so
   nothing is unmapped: those threads are counted up to the exit-time
   dump's fold.  An atexit handler registered with the module's first copy
   tells the two apart: exit() runs it before any destructor, while
   dlclose runs the module's atexit handlers (__cxa_finalize, from crtbegin's
   .fini_array entry, executed last) after ours.

   At thread exit the thread's TU pointers go back to the shared arrays:
   instrumented code that runs later in the thread (a later pthread key
   destructor) counts there, or registers again (a new copy, folded by the
   next destructor round) if it passes a registration check.

   Signals.  A signal handler that runs instrumented code while its thread
   is inside __ballarus_tc_register counts into the shared counters
   (unsynchronised) for that activation rather than wait for a lock its
   own thread may hold.  A thread whose copy cannot be mapped (out of
   memory) counts into the shared counters too, with one warning per
   module.  */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/thread_counters.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* The slow path's state for this thread, and its copy (NULL until it
   registers, and again after its copy was folded at thread exit).  */
enum { TC_IDLE = 0, TC_BUSY = 1, TC_FAILED = 2 };
static __thread int tc_state;
typedef struct tc_copy tc_copy;
static __thread tc_copy *tc_mine;

extern uint64_t __start_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern uint64_t __stop_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tc_entry __start_ballarus_tc_table[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tc_entry __stop_ballarus_tc_table[]
    __attribute__((weak, visibility("hidden")));

#define TC_HEADER 64

struct tc_copy {
  struct tc_copy *next, *prev; /* the registry, under tc_lock */
  size_t map_size;             /* the whole mapping, header included */
  uint64_t *ctr;               /* n counters, written by the owner only */
  uint64_t *base;              /* n baselines, written under tc_lock only */
  char *tls_block;             /* the owner's TLS block of this module */
};

_Static_assert(sizeof(tc_copy) <= TC_HEADER, "tc_copy header too large");

static pthread_mutex_t tc_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_copy *tc_head;           /* live copies, under tc_lock */
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static int tc_inited;              /* tc_init has run */
static pthread_key_t tc_key;
static int tc_key_ok;
static volatile int tc_exiting;    /* exit() has begun (atexit handler) */
static size_t tc_page = 4096;
static int tc_warned;              /* one warning about failed copies */

static void tc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tc_warn(const char *fmt, ...) {
  char buf[512];
  int n = snprintf(buf, sizeof buf, "ballarus: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  buf[len++] = '\n';
  ssize_t w = write(2, buf, len);
  (void)w;
}

/* Words in the module's thread-mode range.  */
static uint64_t tc_words(void) {
  uintptr_t lo = (uintptr_t)__start_ballarus_thread_ctrs;
  uintptr_t hi = (uintptr_t)__stop_ballarus_thread_ctrs;
  if (lo == 0 || hi <= lo) return 0;
  return (uint64_t)(hi - lo) / 8;
}

/* Points the calling thread's TU pointers at `c` (or, NULL, back at the
   shared arrays).  */
static void point_tus(char *tls_block, tc_copy *c) {
  const ballarus_tc_entry *e = __start_ballarus_tc_table;
  const ballarus_tc_entry *end = __stop_ballarus_tc_table;
  if (e == NULL || end == NULL) return;
  for (; e < end; e++) {
    uint64_t *to = e->counters;
    if (c != NULL)
      to = c->ctr + (e->counters - __start_ballarus_thread_ctrs);
    *(uint64_t **)(tls_block + e->tc_dtpoff) = to;
  }
}

/* ---------------------------------------------------------------------- */
/* Which pages hold data: /proc/self/pagemap, one 64-bit entry per page,
   bit 63 present, bit 62 swapped.  A cursor caches a window of entries.  */

#define PM_WINDOW 256

typedef struct {
  int fd;             /* -1: unknown, every page counts as in use */
  uintptr_t first;    /* page number of buf[0] */
  size_t n;           /* valid entries in buf */
  uint64_t buf[PM_WINDOW];
} pm_cursor;

static void pm_init(pm_cursor *pc, int fd) {
  pc->fd = fd;
  pc->first = 0;
  pc->n = 0;
}

static int pm_in_use(pm_cursor *pc, const void *addr) {
  if (pc->fd < 0) return 1;
  uintptr_t page = (uintptr_t)addr / tc_page;
  if (pc->n == 0 || page < pc->first || page >= pc->first + pc->n) {
    ssize_t r = pread(pc->fd, pc->buf, sizeof pc->buf, (off_t)(page * 8));
    if (r < 8) return 1;
    pc->first = page;
    pc->n = (size_t)r / 8;
  }
  uint64_t e = pc->buf[page - pc->first];
  return (int)((e >> 62) & 3u) != 0;
}

static int pagemap_open(void) {
  return open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

/* ---------------------------------------------------------------------- */
/* Folding.                                                                 */

enum { FOLD_EXIT, FOLD_DUMP, FOLD_DISCARD, FOLD_REBASE };

/* Under tc_lock.  FOLD_DUMP: shared += ctr - base, base = ctr (another
   thread's copy, or this one's).  FOLD_EXIT: shared += ctr - base by the
   owner at its exit (the copy is dropped next; base is not updated).
   FOLD_DISCARD, FOLD_REBASE: base = ctr without adding (reset; the fork
   child).  */
static void fold(tc_copy *c, uint64_t n, int fd, int how) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  pm_cursor pc_ctr, pc_base;
  pm_init(&pc_ctr, fd);
  pm_init(&pc_base, fd);
  const uint64_t per_page = tc_page / 8;
  uint64_t i = 0;
  while (i < n) {
    /* A run of words whose counters share a page and whose baselines
       share a page.  */
    uintptr_t ca = (uintptr_t)&c->ctr[i], ba = (uintptr_t)&c->base[i];
    uint64_t run = per_page - (ca % tc_page) / 8;
    uint64_t brun = per_page - (ba % tc_page) / 8;
    if (brun < run) run = brun;
    if (run > n - i) run = n - i;
    int cu = pm_in_use(&pc_ctr, &c->ctr[i]);
    int bu = pm_in_use(&pc_base, &c->base[i]);
    if (cu || bu) {
      for (uint64_t k = i; k < i + run; k++) {
        uint64_t v = cu ? __atomic_load_n(&c->ctr[k], __ATOMIC_RELAXED) : 0;
        uint64_t b = bu ? c->base[k] : 0;
        if (v == b) continue;
        if (how == FOLD_DUMP || how == FOLD_EXIT)
          __atomic_fetch_add(&shared[k], v - b, __ATOMIC_RELAXED);
        if (how != FOLD_EXIT) c->base[k] = v;
      }
    }
    i += run;
  }
}

static void unlink_copy(tc_copy *c) {
  if (c->next != NULL) c->next->prev = c->prev;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    tc_head = c->next;
  c->next = c->prev = NULL;
}

/* The key destructor: the thread is exiting.  */
static void tc_thread_exit(void *p) {
  tc_copy *c = p;
  if (c == NULL) return;
  uint64_t n = tc_words();
  int fd = pagemap_open();
  pthread_mutex_lock(&tc_lock);
  fold(c, n, fd, FOLD_EXIT);
  unlink_copy(c);
  pthread_mutex_unlock(&tc_lock);
  if (fd >= 0) close(fd);
  point_tus(c->tls_block, NULL);
  if (tc_mine == c) tc_mine = NULL;
  munmap(c, c->map_size);
}

/* ---------------------------------------------------------------------- */
/* fork.                                                                    */

static void tc_prepare(void) { pthread_mutex_lock(&tc_lock); }
static void tc_parent(void) { pthread_mutex_unlock(&tc_lock); }

static void tc_child(void) {
  pthread_mutex_init(&tc_lock, NULL);
  tc_copy *mine = tc_mine;
  tc_copy *c = tc_head;
  while (c != NULL) {
    tc_copy *next = c->next;
    if (c != mine) munmap(c, c->map_size);
    c = next;
  }
  tc_head = mine;
  if (mine != NULL) {
    mine->next = mine->prev = NULL;
    int fd = pagemap_open();
    fold(mine, tc_words(), fd, FOLD_REBASE);
    if (fd >= 0) close(fd);
  }
}

/* ---------------------------------------------------------------------- */
/* Making a copy.                                                           */

static void tc_mark_exiting(void) { tc_exiting = 1; }

static void tc_init(void) {
  long p = sysconf(_SC_PAGESIZE);
  if (p > 0) tc_page = (size_t)p;
  if (pthread_key_create(&tc_key, tc_thread_exit) == 0)
    tc_key_ok = 1;
  else
    tc_warn("no pthread key left (%s): counts of threads that exit are "
            "folded at dumps only, and their counter copies are not freed",
            strerror(errno));
  pthread_atfork(tc_prepare, tc_parent, tc_child);
  atexit(tc_mark_exiting);
  tc_inited = 1;
}

static tc_copy *map_copy(uint64_t n) {
  size_t ctr_bytes = (TC_HEADER + n * 8 + tc_page - 1) / tc_page * tc_page;
  size_t base_bytes = (n * 8 + tc_page - 1) / tc_page * tc_page;
  size_t total = ctr_bytes + base_bytes;
  void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  /* A huge page would commit 2 MiB for one counter.  */
  madvise(m, total, MADV_NOHUGEPAGE);
  tc_copy *c = m;
  c->map_size = total;
  c->ctr = (uint64_t *)((char *)m + TC_HEADER);
  c->base = (uint64_t *)((char *)m + ctr_bytes);
  return c;
}

/* The table entry of the TU whose counters are `counters`.  */
static const ballarus_tc_entry *find_tu(const uint64_t *counters) {
  const ballarus_tc_entry *e = __start_ballarus_tc_table;
  const ballarus_tc_entry *end = __stop_ballarus_tc_table;
  if (e == NULL || end == NULL) return NULL;
  for (; e < end; e++)
    if (e->counters == counters) return e;
  return NULL;
}

HIDDEN void *__ballarus_tc_register(void *counters, void *tc) {
  uint64_t *shared = counters;
  tc_copy *c = tc_mine;
  if (c != NULL) {
    /* Registered already (this TU's pointer was found at its array: a
       check racing with this thread's own registration, from a signal
       handler).  */
    uint64_t *p = c->ctr + (shared - __start_ballarus_thread_ctrs);
    *(uint64_t **)tc = p;
    return p;
  }
  /* Re-entered from a signal handler while this thread is registering, or
     no copy could be mapped: the shared counters.  */
  if (tc_state != TC_IDLE) return counters;
  uint64_t n = tc_words();
  const ballarus_tc_entry *self = find_tu(shared);
  if (n == 0 || self == NULL) return counters;
  tc_state = TC_BUSY;
  pthread_once(&tc_once, tc_init);
  c = map_copy(n);
  if (c == NULL) {
    int e = errno;
    tc_state = TC_FAILED;
    if (!__atomic_exchange_n(&tc_warned, 1, __ATOMIC_RELAXED))
      tc_warn("cannot map a thread's counter copy (%s): that thread counts "
              "into the shared counters, without synchronisation",
              strerror(e));
    return counters;
  }
  c->tls_block = (char *)tc - self->tc_dtpoff;
  pthread_mutex_lock(&tc_lock);
  c->prev = NULL;
  c->next = tc_head;
  if (tc_head != NULL) tc_head->prev = c;
  tc_head = c;
  pthread_mutex_unlock(&tc_lock);
  tc_mine = c;
  point_tus(c->tls_block, c);
  /* May allocate (keys past the first 32): an instrumented malloc then
     already counts into the new copy.  */
  if (tc_key_ok) pthread_setspecific(tc_key, c);
  tc_state = TC_IDLE;
  return c->ctr + (shared - __start_ballarus_thread_ctrs);
}

/* ---------------------------------------------------------------------- */
/* ballarus_rt.c's hooks.                                                   */

void ballarus_tc_sync(int op) {
  uint64_t n = tc_words();
  if (n == 0) return;
  pthread_mutex_lock(&tc_lock);
  int fd = tc_head != NULL ? pagemap_open() : -1;
  for (tc_copy *c = tc_head; c != NULL; c = c->next)
    fold(c, n, fd, op == BALLARUS_TC_RESET ? FOLD_DISCARD : FOLD_DUMP);
  if (op == BALLARUS_TC_RESET) {
    /* Written only where non-zero: most of a large range is never
       touched and should stay uncommitted.  */
    uint64_t *shared = __start_ballarus_thread_ctrs;
    for (uint64_t i = 0; i < n; i++)
      if (__atomic_load_n(&shared[i], __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&shared[i], 0, __ATOMIC_RELAXED);
  }
  if (fd >= 0) close(fd);
  pthread_mutex_unlock(&tc_lock);
}

void ballarus_tc_range(uint64_t **lo, uint64_t **hi) {
  if (tc_words() == 0) {
    *lo = *hi = NULL;
    return;
  }
  *lo = __start_ballarus_thread_ctrs;
  *hi = __stop_ballarus_thread_ctrs;
}

void ballarus_tc_module_fini(void) {
  if (!tc_inited || tc_exiting) return;
  /* dlclose: nothing of this module runs any more.  */
  if (tc_key_ok) {
    pthread_key_delete(tc_key);
    tc_key_ok = 0;
  }
  pthread_mutex_lock(&tc_lock);
  tc_copy *c = tc_head;
  tc_head = NULL;
  while (c != NULL) {
    tc_copy *next = c->next;
    munmap(c, c->map_size);
    c = next;
  }
  pthread_mutex_unlock(&tc_lock);
}
