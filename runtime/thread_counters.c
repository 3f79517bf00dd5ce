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

     [tc_copy header, 64 bytes][ctr: n words ...]

   mapped MAP_NORESERVE and without huge pages, so the kernel commits only
   the pages a thread touches: a thread costs the pages of the counters it
   increments, not the module's size (but a thread that runs code all over
   a large module touches most pages: docs/DESIGN.md has the measurements).
   `ctr` is written only by its thread, with plain adds (a function may
   even keep a counter in a register through a loop, as in update=single).

   Folding, exactly, without per-thread state for it.  With S the shared
   counters (the section itself, what a dump writes), C_t the live copies
   and G one more module array (below), every count made so far is
       T = S + sum_t C_t - G,
   and every operation keeps it so:
     - a thread adds 1 to its C_t: T grows by 1;
     - a fold (every dump, ballarus_tc_sync): S -= G, G = 0, then for each
       live copy, v = C_t[i] read racily (a 64-bit aligned load: some value
       the counter really had), S += v, G += v.  Afterwards S = T as of the
       reads: what a dump writes.  What a thread adds meanwhile is beyond
       its v, so neither lost nor counted twice.  The folding thread's own
       copy instead gives its counts up: S += v, C_t -= v (an atomic
       subtract, against its own signal handlers; no other thread writes
       it), which keeps T and leaves G's pages untouched (a short process's
       exit: its main thread's copy is the only one);
     - a thread exit: G -= C_t (the owner's final values), the copy goes.
       S is not touched, so a dump's snapshot of S after its fold is never
       disturbed by threads that exit meanwhile;
     - a reset: S = 0, G = sum_t C_t (read): T = 0;
     - fork, in the child: only the forking thread's copy survives, and
       G = C_mine, S = 0 (rt_register.c zeroes it): the child starts at 0.
   Counts are residues mod 2^64, so path mode's undo (-1) folds exactly,
   and G may go "negative".  G costs one array per module, committed where
   non-zero, instead of a baseline per thread, which would double a
   thread's memory after its first dump.  Only pages that hold data are
   read: /proc/self/pagemap says which pages are present or swapped out
   (mincore() cannot tell a swapped-out page from one never touched);
   without it every page is read.  Thread exits fold through a pthread key
   (one per module) whose destructor runs in the exiting thread, after C++
   thread_local destructors; instrumented code run after ours (by a later
   key destructor) registers again if it passes a registration check (a
   new copy, which the next destructor round folds, or which stays
   registered, and folded by every dump, if glibc's four rounds are used
   up), or counts into the shared counters.
   The registry of live copies and G are protected by one mutex, tc_lock,
   shared by dumps, thread exits and new copies.  Lock order: the master
   lock (rt_register.c), then tc_lock.

   fork().  The child has only the forking thread: the other threads'
   copies belong to the parent (which folds them) and are unmapped in the
   child, and G is set as above.
   tc_lock is held across fork (pthread_atfork), so the child finds the
   registry consistent.

   Module exit (tc_module_dtor).  At dlclose the module's code is going
   away, so no thread can still be running it: the copies are folded into
   the shared counters for the module's last dump, the key is deleted (no
   destructor left pointing into unmapped code) and every copy is
   unmapped; a later dlopen starts afresh (new TLS blocks, initialised
   from the library's image: every pointer at its shared array).  At
   process exit other threads may still be running instrumented code, so
   nothing is unmapped: those threads are counted up to the exit-time
   dump's fold (what they had stored by then).  An atexit handler
   registered with the module's first copy tells the two apart: exit()
   runs it before any destructor, while dlclose runs a module's atexit
   handlers (__cxa_finalize, from crtbegin's .fini_array entry) after its
   unprioritised destructors, of which tc_module_dtor is one.

   At thread exit the thread's TU pointers go back to the shared arrays:
   instrumented code that runs later in the thread (a later pthread key
   destructor) counts there, or registers again (a new copy, folded by the
   next destructor round) if it passes a registration check.

   The owner.  The first thread to register in a module (usually the main
   thread, at main's check or a constructor's) makes no copy: it counts
   into S itself, so a single-threaded process counts, and dumps, as
   update=single does (no copy's pages, no fold at exit).  Only the owner
   writes S then, and a fold must not add into S while the owner may be
   running, since its plain adds would overwrite the fold's.  So a dump
   made by another thread while the owner lives reads one more module
   array B instead of S, with T = S + sum_t C_t - G + B:
     - such a fold: B += S + sum_t v_t - G (read), G = S + sum_t v_t (the
       dumper's own copy gives its v up instead, C -= v); the dump writes
       B and subtracts what it wrote from B (rt_dump.c reads the array
       ballarus_tc_sync returns);
     - any other fold (the owner dumps, the owner exited, or the module is
       closing): S += B, B = 0 first, then as above.
   The owner's thread exit leaves its counts in S; later registrations make
   copies.  Modules with update=tls TUs or a foreign %gs base have no
   owner: every thread gets a copy.

   Static TLS (update=tls, code for executables only).  Such a TU counts
   into its own static thread-local array (section
   BALLARUS_TLS_TABLE_SECTION lists it), never into its part of `ctr`,
   which stays zero and uncommitted.  A copy's owner's arrays are part of
   its C_t: every fold (fold_copy) reads them in the owner's TLS block
   (tls_block plus the array's offset) as it reads `ctr`, the folding
   thread's move of its own copy included, and a thread exit zeroes them
   after its fold, so a later registration of the same thread starts from
   0.  Counts a thread makes there before it registers are folded once it
   does, and lost if it never does.

   %gs (update=thread's default in x86-64 code for executables,
   tune-thread-gs; thread_gs.c).
   Such TUs count `addq $1, %gs:counter(%rip)`; registration also sets
   the thread's %gs base to (ctr - __start), and a thread exit resets it
   to 0 before the fold, so the fold sees the same copy either way.  Since
   a new thread inherits its creator's base and may count into the
   creator's copy until it registers, copies of exited threads are not
   unmapped but zeroed (MADV_DONTNEED) and kept on a free list for the
   next registration.  A base the program had set already is left alone:
   the %gs code then counts into an area thread_gs.c maps, folded here
   like one more copy (tc_foreign).

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
#include "runtime/keep_regs.h"
#include "runtime/thread_counters.h"
#include "runtime/thread_gs.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* The slow path's state for this thread, and its copy (NULL until it
   registers, and again after its copy was folded at thread exit).  The
   copy's pointer is also the registration check of x86-64 code for
   executables (ballarus_format.h): not NULL, registered.  */
enum { TC_IDLE = 0, TC_BUSY = 1, TC_FAILED = 2 };
static __thread int tc_state;
typedef struct tc_copy tc_copy;
HIDDEN __thread tc_copy *__ballarus_tc_mine;

extern uint64_t __start_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern uint64_t __stop_ballarus_thread_ctrs[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tc_entry __start_ballarus_tc_table[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tc_entry __stop_ballarus_tc_table[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tls_entry __start_ballarus_tls_table[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tls_entry __stop_ballarus_tls_table[]
    __attribute__((weak, visibility("hidden")));

#define TC_HEADER 64

struct tc_copy {
  struct tc_copy *next, *prev; /* the registry, under tc_lock */
  size_t map_size;             /* the whole mapping, header included */
  uint64_t *ctr;               /* n counters, written by the owner only */
  char *tls_block;             /* the owner's TLS block of this module */
};

_Static_assert(sizeof(tc_copy) <= TC_HEADER, "tc_copy header too large");

static pthread_mutex_t tc_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_copy *tc_head;           /* live copies, under tc_lock */
static uint64_t *tc_g;             /* G (see above), n words, under tc_lock */
static size_t tc_g_size;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static int tc_inited;              /* tc_init has run */
static pthread_key_t tc_key;
static int tc_key_ok;
static volatile int tc_exiting;    /* exit() has begun (atexit handler) */
static size_t tc_page = 4096;
static int tc_warned;              /* one warning about failed copies */
/* %gs (thread_gs.h): 1 registrations set it, 2 the program's base is
   left alone and tc_foreign is where the %gs code counts, 0 no %gs code.  */
static int tc_gs;
static tc_copy tc_foreign;
static tc_copy *tc_free;           /* zeroed copies for reuse, under tc_lock */
static int tc_gs_warned;
/* The owner (see above): 0 none yet, 1 running, 2 exited, under tc_lock.  */
enum { OWNER_NONE = 0, OWNER_LIVE = 1, OWNER_GONE = 2 };
static int tc_owner;
static __thread int tc_owner_me;   /* this thread is the owner */
static tc_copy tc_owner_rec;       /* the owner's __ballarus_tc_mine */
static uint64_t *tc_b;             /* B (see above), n words, beside G */
static int tc_closing;             /* the module is being unloaded */

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

/* n rounded up to a whole number of pages.  */
static uintptr_t page_up(uintptr_t n) {
  return (n + tc_page - 1) / tc_page * tc_page;
}

/* Words in the module's thread-mode range.  */
static uint64_t tc_words(void) {
  uintptr_t lo = (uintptr_t)__start_ballarus_thread_ctrs;
  uintptr_t hi = (uintptr_t)__stop_ballarus_thread_ctrs;
  if (lo == 0 || hi <= lo) return 0;
  return (uint64_t)(hi - lo) / 8;
}

/* Points the calling thread's TU pointers at `c` (or, NULL, back at the
   shared arrays): none while its TLS block is not known (a thread that
   registered from a TU built with -flto, which has no table entry).  */
static void point_tus(char *tls_block, tc_copy *c) {
  const ballarus_tc_entry *e = __start_ballarus_tc_table;
  const ballarus_tc_entry *end = __stop_ballarus_tc_table;
  if (e == NULL || end == NULL || tls_block == NULL) return;
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

/* Calls fn(i, v) for every non-zero word v = w[i] of w[0, n) that lies in
   a page holding data (all pages when fd < 0).  */
#define FOR_EACH_WORD(w, n, fd, i, v, body)                                  \
  do {                                                                       \
    pm_cursor pc_;                                                           \
    pm_init(&pc_, (fd));                                                     \
    const uint64_t per_page_ = tc_page / 8;                                  \
    for (uint64_t i = 0; i < (n);) {                                         \
      uint64_t run_ = per_page_ - ((uintptr_t)&(w)[i] % tc_page) / 8;       \
      if (run_ > (n) - i) run_ = (n) - i;                                    \
      if (pm_in_use(&pc_, &(w)[i])) {                                        \
        for (uint64_t end_ = i + run_; i < end_; i++) {                      \
          uint64_t v = __atomic_load_n(&(w)[i], __ATOMIC_RELAXED);           \
          if (v != 0) body                                                   \
        }                                                                    \
      } else {                                                               \
        i += run_;                                                           \
      }                                                                      \
    }                                                                        \
  } while (0)

/* What a fold does with a word of a copy.  */
enum {
  TC_G_ADD,  /* G += v, and S += v when to_shared (a dump's fold) */
  TC_G_SUB,  /* G -= v (the copy's owner exits) */
  TC_MOVE    /* S += v when to_shared, C -= v: the folding thread's own
                copy gives its counts up (against its own signal handlers,
                atomically), and G's pages, which a short process would
                otherwise touch only at its exit, stay untouched */
};

/* Under tc_lock.  Word i of the range, at w in a copy, counted v.  */
static void fold_word(uint64_t *w, uint64_t i, uint64_t v, int op,
                      int to_shared) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  if (op == TC_G_SUB) {
    tc_g[i] -= v;
    return;
  }
  if (op == TC_G_ADD) tc_g[i] += v;
  if (to_shared) __atomic_fetch_add(&shared[i], v, __ATOMIC_RELAXED);
  if (op == TC_MOVE) __atomic_fetch_sub(w, v, __ATOMIC_RELAXED);
}

/* The owner's static thread-local array of an update=tls TU.  */
static uint64_t *tls_array(const tc_copy *c, const ballarus_tls_entry *e) {
  return (uint64_t *)(c->tls_block + e->tls_dtpoff);
}

/* Under tc_lock.  Applies op to every word of copy c: the mapped copy and
   the owner's static thread-local arrays (whose TUs never write their part
   of the mapped copy, so each count is in one place).  */
static void fold_copy(tc_copy *c, uint64_t n, int fd, int op, int to_shared) {
  FOR_EACH_WORD(c->ctr, n, fd, i, v,
                { fold_word(&c->ctr[i], i, v, op, to_shared); });
  const ballarus_tls_entry *e = __start_ballarus_tls_table;
  const ballarus_tls_entry *end = __stop_ballarus_tls_table;
  if (e == NULL || end == NULL || c->tls_block == NULL) return;
  for (; e < end; e++) {
    uint64_t base = (uint64_t)(e->counters - __start_ballarus_thread_ctrs);
    uint64_t *w = tls_array(c, e);
    FOR_EACH_WORD(w, e->words, fd, i, v,
                  { fold_word(&w[i], base + i, v, op, to_shared); });
  }
}

/* The exiting owner's static thread-local arrays start again from 0: a
   later registration of the thread (a later key destructor) must not
   count them twice.  */
static void clear_tls_arrays(const tc_copy *c) {
  const ballarus_tls_entry *e = __start_ballarus_tls_table;
  const ballarus_tls_entry *end = __stop_ballarus_tls_table;
  if (e == NULL || end == NULL) return;
  for (; e < end; e++) memset(tls_array(c, e), 0, e->words * 8);
}

/* Under tc_lock.  S -= G (when to_shared), G = 0.  */
static void drain_g(uint64_t n, int fd, int to_shared) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  FOR_EACH_WORD(tc_g, n, fd, i, v, {
    if (to_shared) __atomic_fetch_sub(&shared[i], v, __ATOMIC_RELAXED);
    tc_g[i] = 0;
  });
}

/* S = 0, written only where non-zero: most of a large range is never
   touched and should stay uncommitted.  */
static void zero_shared(uint64_t n) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  for (uint64_t i = 0; i < n; i++)
    if (__atomic_load_n(&shared[i], __ATOMIC_RELAXED) != 0)
      __atomic_store_n(&shared[i], 0, __ATOMIC_RELAXED);
}

/* Under tc_lock (or in a fork child).  B = 0.  */
static void zero_b(uint64_t n, int fd) {
  FOR_EACH_WORD(tc_b, n, fd, i, v, { tc_b[i] = 0; });
}

/* Under tc_lock, with no owner running.  S += B, B = 0.  */
static void drain_b(uint64_t n, int fd) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  FOR_EACH_WORD(tc_b, n, fd, i, v, {
    __atomic_fetch_add(&shared[i], v, __ATOMIC_RELAXED);
    tc_b[i] = 0;
  });
}

/* Under tc_lock, while the owner may be counting into S: every count not
   yet dumped moves into B (see "The owner"), S untouched.  */
static void fold_into_b(uint64_t n, int fd) {
  uint64_t *shared = __start_ballarus_thread_ctrs;
  FOR_EACH_WORD(tc_g, n, fd, i, v, {
    tc_b[i] -= v;
    tc_g[i] = 0;
  });
  FOR_EACH_WORD(shared, n, fd, i, v, {
    tc_b[i] += v;
    tc_g[i] += v;
  });
  for (tc_copy *c = tc_head; c != NULL; c = c->next) {
    /* B += v with G += v, or the dumper's own copy gives v up.  */
    FOR_EACH_WORD(c->ctr, n, fd, i, v, {
      tc_b[i] += v;
      if (c == __ballarus_tc_mine)
        __atomic_fetch_sub(&c->ctr[i], v, __ATOMIC_RELAXED);
      else
        tc_g[i] += v;
    });
  }
}

/* Whether a fold may write S: no owner counting into it but, perhaps, the
   folding thread itself.  Under tc_lock.  */
static int s_writable(void) {
  return tc_owner != OWNER_LIVE || tc_owner_me || tc_closing;
}

static void unlink_copy(tc_copy *c) {
  if (c->next != NULL) c->next->prev = c->prev;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    tc_head = c->next;
  c->next = c->prev = NULL;
}

/* A copy whose thread exited, zeroed, onto the free list (with %gs: a
   thread its owner created may still count into it until it registers).  */
static void free_copy(tc_copy *c) {
  size_t size = c->map_size;
  madvise(c, size, MADV_DONTNEED);
  c->map_size = size;
  c->ctr = (uint64_t *)((char *)c + TC_HEADER);
  pthread_mutex_lock(&tc_lock);
  c->next = tc_free;
  tc_free = c;
  pthread_mutex_unlock(&tc_lock);
}

/* Under tc_lock (or single-threaded): c joins the registry.  */
static void link_copy(tc_copy *c) {
  c->prev = NULL;
  c->next = tc_head;
  if (tc_head != NULL) tc_head->prev = c;
  tc_head = c;
}

/* The key destructor: the thread is exiting.  */
static void tc_thread_exit(void *p) {
  tc_copy *c = p;
  if (c == NULL) return;
  if (c == &tc_owner_rec) {
    /* Its counts stay in S, which no fold writes while it runs.  */
    pthread_mutex_lock(&tc_lock);
    tc_owner = OWNER_GONE;
    pthread_mutex_unlock(&tc_lock);
    tc_owner_me = 0;
    if (__ballarus_tc_mine == c) __ballarus_tc_mine = NULL;
    return;
  }
  if (tc_gs == 1) ballarus_gs_point(NULL);
  uint64_t n = tc_words();
  int fd = pagemap_open();
  pthread_mutex_lock(&tc_lock);
  fold_copy(c, n, fd, TC_G_SUB, 0);
  unlink_copy(c);
  clear_tls_arrays(c);
  pthread_mutex_unlock(&tc_lock);
  if (fd >= 0) close(fd);
  point_tus(c->tls_block, NULL);
  if (__ballarus_tc_mine == c) __ballarus_tc_mine = NULL;
  if (tc_gs != 0)
    free_copy(c);
  else
    munmap(c, c->map_size);
}

/* ---------------------------------------------------------------------- */
/* fork.                                                                    */

static void tc_prepare(void) { pthread_mutex_lock(&tc_lock); }
static void tc_parent(void) { pthread_mutex_unlock(&tc_lock); }

static void tc_child(void) {
  pthread_mutex_init(&tc_lock, NULL);
  tc_copy *mine = __ballarus_tc_mine;
  tc_copy *c = tc_head;
  while (c != NULL) {
    tc_copy *next = c->next;
    if (c != mine && c != &tc_foreign) munmap(c, c->map_size);
    c = next;
  }
  tc_head = NULL;
  if (mine == &tc_owner_rec) mine = NULL; /* S is this thread's */
  if (mine != NULL) link_copy(mine);
  if (tc_gs == 2) link_copy(&tc_foreign);
  if (tc_owner == OWNER_LIVE && !tc_owner_me) tc_owner = OWNER_GONE;
  /* The forking thread's base was its copy's, or (not registered) maybe
     its creator's, which is gone in the child.  */
  if (tc_gs == 1) ballarus_gs_point(mine != NULL ? mine->ctr : NULL);
  if (tc_g != NULL) {
    int fd = pagemap_open();
    zero_b(tc_words(), fd);
    drain_g(tc_words(), fd, 0);
    for (c = tc_head; c != NULL; c = c->next)
      fold_copy(c, tc_words(), fd, TC_G_ADD, 0);
    if (fd >= 0) close(fd);
  }
}

/* ---------------------------------------------------------------------- */
/* Making a copy.                                                           */

static void tc_mark_exiting(void) { tc_exiting = 1; }

static void tc_init(void) {
  long p = sysconf(_SC_PAGESIZE);
  if (p > 0) tc_page = (size_t)p;
  size_t bytes = page_up(tc_words() * 8);
  void *g = mmap(NULL, 2 * bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (g == MAP_FAILED) {
    tc_warn("cannot map the thread counters' fold area (%s): threads count "
            "into the shared counters, without synchronisation",
            strerror(errno));
    return;
  }
  madvise(g, 2 * bytes, MADV_NOHUGEPAGE);
  tc_g = g;
  tc_b = (uint64_t *)((char *)g + bytes);
  tc_g_size = 2 * bytes;
  if (pthread_key_create(&tc_key, tc_thread_exit) == 0)
    tc_key_ok = 1;
  else
    tc_warn("no pthread key left (%s): counts of threads that exit are "
            "folded at dumps only, and their counter copies are not freed",
            strerror(errno));
  pthread_atfork(tc_prepare, tc_parent, tc_child);
  atexit(tc_mark_exiting);
  uint64_t *foreign = NULL;
  tc_gs = ballarus_gs_init(&foreign);
  if (foreign != NULL) {
    tc_foreign.ctr = foreign;
    pthread_mutex_lock(&tc_lock);
    link_copy(&tc_foreign);
    pthread_mutex_unlock(&tc_lock);
  }
  tc_inited = 1;
}

/* The calling thread's %gs code counts into c: its base is set.  A base
   the kernel refuses (a copy below the counters, where map_copy found no
   room above them) leaves that code on the shared counters,
   unsynchronised, with one warning.  */
static void point_gs(tc_copy *c) {
  if (tc_gs != 1 || ballarus_gs_point(c->ctr) == 0) return;
  ballarus_gs_point(NULL);
  if (!__atomic_exchange_n(&tc_gs_warned, 1, __ATOMIC_RELAXED))
    tc_warn("cannot set the %%gs base of a thread's counter copy: that "
            "thread's %%gs code counts into the shared counters, "
            "without synchronisation");
}

/* m, a new mapping of total bytes, or one in its place above the shared
   counters if m lies below them and the module's code counts through
   %gs: the kernel takes only user addresses as a base (copy − counters).
   Mappings grow up from below an executable under the legacy layout
   (`setarch -L`, an unlimited stack size limit), so the copy asks for a
   place 1 TiB above the counters, out of the heap's way.  */
static void *above_counters(void *m, size_t total) {
  if (tc_gs != 1 || (uint64_t *)m > __start_ballarus_thread_ctrs) return m;
  uintptr_t hint =
      page_up((uintptr_t)__stop_ballarus_thread_ctrs) + ((uintptr_t)1 << 40);
  void *h = mmap((void *)hint, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (h == MAP_FAILED) return m;
  if ((uint64_t *)h < __start_ballarus_thread_ctrs) {
    munmap(h, total);
    return m;
  }
  munmap(m, total);
  return h;
}

static tc_copy *map_copy(uint64_t n) {
  size_t total = page_up(TC_HEADER + n * 8);
  void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  m = above_counters(m, total);
  /* A huge page would commit 2 MiB for one counter.  */
  madvise(m, total, MADV_NOHUGEPAGE);
  tc_copy *c = m;
  c->map_size = total;
  c->ctr = (uint64_t *)((char *)m + TC_HEADER);
  return c;
}

/* A copy for a registering thread: a free one, or a new mapping.  */
static tc_copy *take_copy(uint64_t n) {
  pthread_mutex_lock(&tc_lock);
  tc_copy *c = tc_free;
  if (c != NULL) tc_free = c->next;
  pthread_mutex_unlock(&tc_lock);
  return c != NULL ? c : map_copy(n);
}

/* Whether the registering thread becomes the module's owner (see "The
   owner"): the first to register, in a module whose every count can live
   in S (no update=tls TU, %gs code counting where registration points it).  */
static int claim_owner(void) {
  if (tc_g == NULL || tc_gs == 2 ||
      (uintptr_t)__start_ballarus_tls_table !=
          (uintptr_t)__stop_ballarus_tls_table)
    return 0;
  pthread_mutex_lock(&tc_lock);
  int mine = tc_owner == OWNER_NONE;
  if (mine) tc_owner = OWNER_LIVE;
  pthread_mutex_unlock(&tc_lock);
  if (mine) tc_owner_rec.ctr = __start_ballarus_thread_ctrs;
  return mine;
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
  tc_copy *c = __ballarus_tc_mine;
  if (c != NULL) {
    /* Registered already (this TU's pointer was found at its array: a
       check racing with this thread's own registration, from a signal
       handler).  */
    uint64_t *p = c->ctr + (shared - __start_ballarus_thread_ctrs);
    *(uint64_t **)tc = p;
    if (c->tls_block == NULL && c != &tc_owner_rec) {
      /* Registered first from a TU built with -flto: the TLS block is
         known now, for the exit's reset of the pointers.  */
      const ballarus_tc_entry *self = find_tu(shared);
      if (self != NULL) c->tls_block = (char *)tc - self->tc_dtpoff;
    }
    return p;
  }
  /* Re-entered from a signal handler while this thread is registering, or
     no copy could be mapped: the shared counters.  */
  if (tc_state != TC_IDLE) return counters;
  uint64_t n = tc_words();
  const ballarus_tc_entry *self = find_tu(shared);
  if (n == 0 || (self == NULL && !ballarus_gs_listed(shared)))
    return counters;
  tc_state = TC_BUSY;
  pthread_once(&tc_once, tc_init);
  if (claim_owner()) {
    tc_owner_me = 1;
    __ballarus_tc_mine = &tc_owner_rec;
    if (tc_key_ok) pthread_setspecific(tc_key, &tc_owner_rec);
    tc_state = TC_IDLE;
    return counters;
  }
  c = tc_g != NULL ? take_copy(n) : NULL;
  if (c == NULL) {
    int e = errno;
    tc_state = TC_FAILED;
    if (tc_gs == 1) ballarus_gs_point(NULL);
    if (!__atomic_exchange_n(&tc_warned, 1, __ATOMIC_RELAXED))
      tc_warn("cannot map a thread's counter copy (%s): that thread counts "
              "into the shared counters, without synchronisation",
              strerror(e));
    return counters;
  }
  /* A TU built with -flto has no table entry, so its module's TLS block
     stays unknown until a TU with one registers (above).  */
  c->tls_block = self != NULL ? (char *)tc - self->tc_dtpoff : NULL;
  pthread_mutex_lock(&tc_lock);
  link_copy(c);
  pthread_mutex_unlock(&tc_lock);
  __ballarus_tc_mine = c;
  point_tus(c->tls_block, c);
  point_gs(c);
  /* May allocate (keys past the first 32): an instrumented malloc then
     already counts into the new copy.  */
  if (tc_key_ok) pthread_setspecific(tc_key, c);
  tc_state = TC_IDLE;
  return c->ctr + (shared - __start_ballarus_thread_ctrs);
}

/* ---------------------------------------------------------------------- */
/* The hooks of rt_register.c and rt_dump.c.                               */

uint64_t *ballarus_tc_sync(int op) {
  uint64_t n = tc_words();
  uint64_t *shared = __start_ballarus_thread_ctrs;
  if (n == 0) return NULL;
  pthread_mutex_lock(&tc_lock);
  if (tc_g == NULL) {  /* no copy was ever made */
    pthread_mutex_unlock(&tc_lock);
    if (op == BALLARUS_TC_RESET) zero_shared(n);
    return shared;
  }
  int fd = pagemap_open();
  uint64_t *read = shared;
  if (!s_writable()) {
    /* The owner may be counting into S: a reset discards what is in S by
       G = S + sum_t C_t, a dump reads B.  */
    fold_into_b(n, fd);
    if (op == BALLARUS_TC_RESET)
      zero_b(n, fd);
    else
      read = tc_b;
  } else {
    const int reset = op == BALLARUS_TC_RESET;
    if (reset) {
      zero_shared(n);
      zero_b(n, fd);
    } else {
      drain_b(n, fd);
    }
    drain_g(n, fd, !reset);
    for (tc_copy *c = tc_head; c != NULL; c = c->next)
      fold_copy(c, n, fd, c == __ballarus_tc_mine ? TC_MOVE : TC_G_ADD,
                !reset);
  }
  if (fd >= 0) close(fd);
  pthread_mutex_unlock(&tc_lock);
  return read;
}

void ballarus_tc_range(uint64_t **lo, uint64_t **hi) {
  if (tc_words() == 0) {
    *lo = *hi = NULL;
    return;
  }
  *lo = __start_ballarus_thread_ctrs;
  *hi = __stop_ballarus_thread_ctrs;
}

/* At exit or dlclose, before the module's exit-time dump (rt_register.c's
   destructor has priority 99, so it runs after this one).  At dlclose the
   module's code is going away and no thread can be running it: the copies
   are folded into the shared counters for that dump (S = T: nothing left in
   copies or G), then unmapped, and the key is deleted.  At exit nothing is
   released: other threads may still be counting, and the dump folds.  */
__attribute__((destructor)) static void tc_module_dtor(void) {
  /* %gs code is an executable's, never unloaded.  */
  if (!tc_inited || tc_exiting || tc_gs != 0) return;
  if (tc_key_ok) {
    pthread_key_delete(tc_key);
    tc_key_ok = 0;
  }
  tc_closing = 1; /* no thread runs the module's code: S may be written */
  ballarus_tc_sync(BALLARUS_TC_FOLD);
  pthread_mutex_lock(&tc_lock);
  tc_copy *c = tc_head;
  tc_head = NULL;
  while (c != NULL) {
    tc_copy *next = c->next;
    munmap(c, c->map_size);
    c = next;
  }
  if (tc_g != NULL) munmap(tc_g, tc_g_size);
  tc_g = NULL;
  pthread_mutex_unlock(&tc_lock);
}

/* ---------------------------------------------------------------------- */
/* Registration as x86-64 code for executables reaches it: an asm call of
   __ballarus_tc_register_rs with the TU's counters and thread pointer
   pushed (plugin/thread_counters.cc), through the trampoline of
   keep_regs.h, so that a function's check keeps all its registers.  The
   caller reloads its thread pointer afterwards.  */

#if defined(__x86_64__) && defined(__LP64__)

HIDDEN keep_regs_fn ballarus_tc_register_kr;

uint64_t ballarus_tc_register_kr(uint64_t counters, uint64_t tc) {
  return (uint64_t)__ballarus_tc_register((void *)counters, (void *)tc);
}

__asm__(".text\n" KEEP_REGS_ENTRY("__ballarus_tc_register_rs",
                                  "ballarus_tc_register_kr", 2));

#endif
