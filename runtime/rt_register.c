/* rt_register.c — the runtime linked into every instrumented module
   (libballarus_rt.a), its registration: finds the module's translation
   units and chains them into the master; the constructor, the destructor
   (exit, dlclose), the fork handler and the public entry points.  The
   dump itself: rt_dump.c and rt_dump_dir.c; the store's lock and
   placement: rt_store.c.  Public API and user-visible behaviour:
   ballarus.h.

   Plain C11 + pthreads, no libstdc++, compiled -fPIC with hidden visibility
   so it links into plain C executables and into shared libraries alike.

   Registration.  The plugin puts one ballarus_tu_desc per TU into section
   "ballarus_tus"; the linker bounds a module's descriptors with
   __start_ballarus_tus/__stop_ballarus_tus, which we declare hidden and weak
   so each module sees its own (and none if nothing is instrumented).  Each
   descriptor points at __ballarus_runtime_anchor, which is what drags this
   object out of the archive.  A constructor validates every descriptor's
   metadata header (magic, version, header size, names block, identity =
   hash of the profile path) and its path table fields, and skips bad ones
   with a warning (the blob's body is the plugin's, compiled into the
   object: its stamp is trusted, not hashed at every start-up; profiles on
   disk are verified completely); a section that is not made of
   this layout's descriptors (its size is not a multiple of theirs, or one
   of them does not point at this module's anchor: objects of an older
   plugin) is refused as a whole.  Each TU's destination is its *home*, the
   absolute profile path the plugin recorded in its names block (beside its
   object, where gcov puts the .gcda), or $BALLARUS_PROFILE for all of them
   when set (made absolute against the working directory at start-up).

   Modules and the master chain (after libgcov's __gcov_master/__gcov_root,
   libgcc/libgcov-driver.c).  Every module (the executable, each shared
   library) has its own copy of this file, with its own hidden state: a
   `ballarus_root` listing its TUs.  The one exported data symbol,
   __ballarus_master, holds a mutex and a doubly linked chain of roots.
   Every copy defines it, and shared libraries reference it through the GOT,
   so they all bind to the first definition in the global scope.  The
   compiler wrapper links executables with
     -Wl,--export-dynamic-symbol=__ballarus_master
   so that first definition is the executable's: then every module's root is
   chained into it, and __ballarus_dump()/__ballarus_reset() act on all of
   them.  Without the export the executable keeps a private master and the
   libraries share another (or each its own, if loaded RTLD_LOCAL); nothing
   is lost: every module still dumps its own TUs at exit or dlclose, only
   __ballarus_dump() called from one module no longer reaches the others.
   A master of another layout version is never joined.

   At exit, and at dlclose, each module's destructor dumps its own TUs
   (as libgcov's __gcov_exit dumps its own root), then unlinks its root.
   The executable is finalised first, and a shared library's static
   destructors run from its own finalisation (__cxa_finalize), after the
   executable's: a dump of the whole chain there would write such a
   library's files twice, once before its destructors counted and once
   after.  __ballarus_dump() and __gcov_dump() dump the whole chain.

   fork().  A pthread_atfork child handler zeroes the module's counters and
   the counts of its path tables (keeping the tables), clears its TUs'
   `counted` flags (the child is a process: it adds a run of its own to
   every TU), re-initialises the
   master's mutex (another thread may have held it), closes the
   lock file descriptor of a dump that was in progress in another thread
   and forgets that dump's read buffer (rt_dump_dir.c).  Counters are
   zeroed only where non-zero on pages the process touched (rt_pages.c):
   a child copies no page it does not count on.
   flock() locks belong to the open file description, which the child
   shares: the child only closes its copy (never unlocks it), and the
   parent always unlocks explicitly (LOCK_UN) before closing, so a child
   that outlives the dump never keeps the directory locked.  The
   descriptor is O_CLOEXEC, so exec() does not carry it either.

   Known limits.  Counter increments are plain (non-atomic) adds unless the
   TU was compiled in atomic mode, so increments racing with each other or
   with a dump may be lost, as with gcov (hashed path counts are always
   atomic).  Dumping is not async-signal-safe (counting into path tables
   takes no lock and no malloc, only mmap, so it works in signal handlers).
   A path counted before a call to fork() and undone after it returns is
   undone in the child too, whose counts started from zero: the child then
   writes -1 for that path (see ballarus.h; the instrumentation, not the
   runtime, can avoid it, e.g. by not treating fork as a path cut).
   Path tables are never unmapped, not even when a library is dlclose()d
   (path_table.c).  */

#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/path_table.h"
#include "runtime/profile_io.h"
#include "runtime/thread_counters.h"
#include "runtime/trace_buffer.h"

#define PUBLIC __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* The exported master.  `own_master` is a hidden alias: references to it
   bind to this module's definition even when __ballarus_master is
   interposed by another module's.  */
PUBLIC ballarus_master __ballarus_master = {
    MASTER_VERSION, sizeof(ballarus_master), PTHREAD_MUTEX_INITIALIZER, NULL,
    0};
extern ballarus_master own_master
    __attribute__((alias("__ballarus_master"), visibility("hidden")));

/* Used when the resolved master has another layout version.  */
static ballarus_master private_master = {
    MASTER_VERSION, sizeof(ballarus_master), PTHREAD_MUTEX_INITIALIZER, NULL,
    0};

/* Descriptors point here; its only job is to pull this object in.  */
HIDDEN const char __ballarus_runtime_anchor = 0;

/* The module's epoch: bumped in a forked child (whose counters restart at
   zero) and by every reset, so that instrumented code can tell, after a
   call that may fork or reset, that its activation goes on as a re-entry
   (plugin/reentry.cc).  */
HIDDEN volatile uint64_t __ballarus_epoch;

extern const ballarus_tu_desc __start_ballarus_tus[]
    __attribute__((weak, visibility("hidden")));
extern const ballarus_tu_desc __stop_ballarus_tus[]
    __attribute__((weak, visibility("hidden")));

/* This module's state.  */
static ballarus_root root;
static ballarus_trace_tus trace_tus; /* the TUs a trace file carries */
static int initialised;           /* under the master lock */
int ballarus_rt_verbose;
double ballarus_rt_lock_timeout = 10;  /* seconds, BALLARUS_LOCK_TIMEOUT */
volatile int ballarus_rt_busy_lock_fd = -1; /* a dump's lock file fd */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------- */
/* Messages: formatted into a buffer and written with one write(2), so they
   do not depend on stdio state at exit or after fork.  */

void ballarus_rt_warn(const char *fmt, ...) {
  char buf[2048];
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

/* ---------------------------------------------------------------------- */
/* Registration.                                                            */

static int desc_ok(const ballarus_tu_desc *d, uint64_t index) {
  const unsigned char *m = d->metadata;
  ballarus_meta_header h;
  if (m == NULL) {
    ballarus_rt_warn("TU descriptor %llu: no metadata; TU skipped",
                     (unsigned long long)index);
    return 0;
  }
  memcpy(&h, m, sizeof h);
  ballarus_meta_names names;
  const char *problem = NULL;
  if (memcmp(h.magic, BALLARUS_META_MAGIC, 8) != 0)
    problem = "bad metadata magic";
  else if (h.version < BALLARUS_META_VERSION_MIN ||
           h.version > BALLARUS_META_VERSION)
    problem = "unsupported metadata version (built by another ballarus?)";
  else if (h.header_size != BALLARUS_META_HEADER_SIZE ||
           h.size < BALLARUS_META_HEADER_SIZE)
    problem = "bad metadata sizes";
  else if (h.n_counters > 0 && d->counters == NULL)
    problem = "no counter array";
  else if (h.n_counters > UINT64_MAX / 16)
    problem = "counter count overflows";
  else if (d->n_path_hashes > 0 && d->path_hashes == NULL)
    problem = "no path table array";
  else if (d->n_path_hashes > UINT64_MAX / 64)
    problem = "path table count overflows";
  else if (ballarus_meta_get_names(m, h.size, &names) != 0)
    problem = "malformed names block";
  else if ((names.profile[0] != '\0' && names.profile[0] != '/') ||
           h.identity !=
               ballarus_tu_identity(names.profile, names.cwd, names.source))
    problem = "bad profile path or identity";
  if (problem != NULL) {
    ballarus_rt_warn("TU descriptor %llu: %s; TU skipped",
                     (unsigned long long)index, problem);
    return 0;
  }
  return 1;
}

/* `p` made absolute against the working directory (malloc'd), or NULL.  */
static char *absolute(const char *p) {
  if (p[0] == '/') return strdup(p);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == NULL) {
    ballarus_rt_warn(
        "cannot get the working directory (%s); profile path %s stays "
        "relative",
        strerror(errno), p);
    return strdup(p);
  }
  size_t len = strlen(cwd) + 1 + strlen(p) + 1;
  char *r = malloc(len);
  if (r != NULL) snprintf(r, len, "%s/%s", cwd, p);
  return r;
}

static void atfork_child(void);

/* The master this module joins: the resolved __ballarus_master, unless it
   has another layout.  */
static ballarus_master *pick_master(void) {
  ballarus_master *m = &__ballarus_master;
  if (m->version != MASTER_VERSION || m->size != sizeof(ballarus_master)) {
    if (ballarus_rt_verbose)
      ballarus_rt_warn(
          "__ballarus_master of another runtime version; this module dumps "
          "on its own");
    m = &private_master;
  }
  return m;
}

/* BALLARUS_DUMP_ON_ABORT=1: abort() (SIGABRT) dumps before the process
   dies, so paths cut short by abort() reach the profile.  Opt-in: abort()
   may come from inside malloc (heap corruption detected with an arena lock
   held), where a dump could deadlock.  The master lock is only tried, never
   waited for.  Installed by the first module whose runtime finds SIGABRT at
   its default disposition; the dump covers the whole chain.  */

static void on_abort(int sig) {
  ballarus_master *m = root.master;
  if (m != NULL && pthread_mutex_trylock(&m->lock) == 0) {
    ballarus_rt_dump_chain(m, 1);
    pthread_mutex_unlock(&m->lock);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void maybe_dump_on_abort(void) {
  const char *v = getenv("BALLARUS_DUMP_ON_ABORT");
  if (v == NULL || v[0] == '\0' || strcmp(v, "0") == 0) return;
  struct sigaction old;
  if (sigaction(SIGABRT, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
      (old.sa_flags & SA_SIGINFO))
    return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_abort;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, NULL);
}

char ballarus_rt_test_name[BALLARUS_TEST_NAME_MAX + 1];
uint32_t ballarus_rt_test_name_size;

/* BALLARUS_TEST=NAME: this process's counts also go under NAME.  A name
   that is not 1 to BALLARUS_TEST_NAME_MAX printable characters is refused
   with one line, and the process counts unnamed.  */
static void read_test_name(void) {
  const char *v = getenv("BALLARUS_TEST");
  if (v == NULL || v[0] == '\0') return;
  size_t n = strnlen(v, BALLARUS_TEST_NAME_MAX + 1);
  if (!ballarus_test_name_valid(v, n)) {
    ballarus_rt_warn("BALLARUS_TEST is not 1 to %u printable characters; "
                     "this run's counts are not kept under a test name",
                     BALLARUS_TEST_NAME_MAX);
    return;
  }
  memcpy(ballarus_rt_test_name, v, n);
  ballarus_rt_test_name[n] = '\0';
  ballarus_rt_test_name_size = (uint32_t)n;
}

/* Registers this module's TUs and chains its root; idempotent.  */
static void rt_init(void) {
  pthread_mutex_lock(&init_lock);
  if (initialised) {
    pthread_mutex_unlock(&init_lock);
    return;
  }
  const char *v = getenv("BALLARUS_VERBOSE");
  ballarus_rt_verbose = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
  read_test_name();
  const char *t = getenv("BALLARUS_LOCK_TIMEOUT");
  if (t != NULL && t[0] != '\0') {
    char *end;
    double x = strtod(t, &end);
    if (*end == '\0' && x >= 0 && x <= 86400)
      ballarus_rt_lock_timeout = x;
    else
      ballarus_rt_warn(
          "BALLARUS_LOCK_TIMEOUT=%s is not a number of seconds (0 to 86400); "
          "using %g",
          t, ballarus_rt_lock_timeout);
  }

  uint64_t n = 0;
  if (__start_ballarus_tus != NULL && __stop_ballarus_tus != NULL &&
      &__stop_ballarus_tus[0] > &__start_ballarus_tus[0]) {
    /* Objects of another plugin version may lay descriptors out otherwise
       (before path tables they were three pointers): refuse a section that
       is not a whole number of ours rather than read garbage.  */
    uintptr_t bytes = (uintptr_t)__stop_ballarus_tus -
                      (uintptr_t)__start_ballarus_tus;
    if (bytes % sizeof(ballarus_tu_desc) != 0) {
      ballarus_rt_warn(
          "section %s holds %llu bytes, not a whole number of %u-byte TU "
          "descriptors (objects built by another ballarus version?); this "
          "module is not profiled",
          BALLARUS_TU_SECTION, (unsigned long long)bytes,
          (unsigned)sizeof(ballarus_tu_desc));
    } else {
      n = bytes / sizeof(ballarus_tu_desc);
      /* Every descriptor of a module points at this module's anchor.  One
         that does not means the section has another layout, and then even
         the descriptors whose anchor happens to line up hold garbage (the
         three-pointer descriptors of five TUs fill three of ours exactly,
         the first with a valid anchor), so refuse them all.  */
      for (uint64_t i = 0; i < n; i++) {
        if (__start_ballarus_tus[i].anchor != &__ballarus_runtime_anchor) {
          ballarus_rt_warn(
              "TU descriptor %llu does not point at this runtime (objects "
              "built by another ballarus version?); this module is not "
              "profiled",
              (unsigned long long)i);
          n = 0;
        }
      }
    }
  }
  root.tus = calloc(n == 0 ? 1 : n, sizeof *root.tus);
  root.homes = calloc(n == 0 ? 1 : n, sizeof *root.homes);
  root.counted = calloc(n == 0 ? 1 : n, 1);
  if (root.tus == NULL || root.homes == NULL || root.counted == NULL) {
    ballarus_rt_warn(
        "out of memory registering %llu TUs; this module is not profiled",
        (unsigned long long)n);
    n = 0;
  }
  const char *env = getenv("BALLARUS_PROFILE");
  if (env != NULL && env[0] != '\0') {
    root.override = absolute(env);
    if (root.override == NULL) {
      ballarus_rt_warn("out of memory; this module is not profiled");
      n = 0;
    }
  }
  for (uint64_t i = 0; i < n; i++) {
    const ballarus_tu_desc *d = &__start_ballarus_tus[i];
    if (!desc_ok(d, i)) continue;
    ballarus_meta_header h;
    ballarus_meta_names names;
    memcpy(&h, d->metadata, sizeof h);
    if (ballarus_meta_get_names(d->metadata, h.size, &names) != 0) continue;
    const char *home = names.profile;
    if (home[0] == '\0') {
      /* A TU without a home (hand-made): ballarus.profile in the start-up
         directory, as before profiles lived beside their objects.  */
      if (root.fallback == NULL) root.fallback = absolute("ballarus.profile");
      home = root.fallback;
      if (home == NULL) continue;
    }
    root.homes[root.n_tus] = home;
    root.tus[root.n_tus++] = d;
  }
  root.path_lost = ballarus_pt_lost();
  root.epoch = &__ballarus_epoch;
  root.tc_sync = ballarus_tc_sync;
  ballarus_tc_range(&root.tc_lo, &root.tc_hi);

  ballarus_master *m = pick_master();
  pthread_mutex_lock(&m->lock);
  root.master = m;
  root.prev = NULL;
  root.next = m->root;
  if (m->root != NULL) m->root->prev = &root;
  m->root = &root;
  pthread_mutex_unlock(&m->lock);

  trace_tus.tus = root.tus;
  trace_tus.n = root.n_tus;
  ballarus_trace_add_tus(&trace_tus);
  pthread_atfork(NULL, NULL, atfork_child);
  initialised = 1;
  maybe_dump_on_abort();
  if (ballarus_rt_verbose) {
    if (root.override != NULL)
      ballarus_rt_warn(
          "registered %llu TUs; profile %s (BALLARUS_PROFILE)%s",
          (unsigned long long)root.n_tus, root.override,
          m == &own_master ? "" : " (chained into another module's master)");
    else
      ballarus_rt_warn(
          "registered %llu TUs; profiles beside their objects%s%s%s",
          (unsigned long long)root.n_tus, root.n_tus > 0 ? ", e.g. " : "",
          root.n_tus > 0 ? root.homes[0] : "",
          m == &own_master ? "" : " (chained into another module's master)");
  }
  pthread_mutex_unlock(&init_lock);
}

PUBLIC void __ballarus_dump(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  ballarus_rt_dump_chain(m, 0);
  pthread_mutex_unlock(&m->lock);
}

static void reset_chain(ballarus_master *m);

/* Zeroes the counters c[0, n), writing only the non-zero ones of pages the
   process touched (rt_pages.c): a page never touched stays so, and a page
   of zeros shared with a fork parent is not copied.  */
static void zero_counters(uint64_t *c, uint64_t n, ballarus_rt_pagemap *pm) {
  for (uint64_t lo = 0, hi; ballarus_rt_touched_run(pm, c, n, &lo, &hi);
       lo = hi)
    for (uint64_t i = lo; i < hi; i++)
      if (__atomic_load_n(&c[i], __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
}

PUBLIC void __ballarus_reset(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  reset_chain(m);
  pthread_mutex_unlock(&m->lock);
}

HIDDEN void ballarus_rt_gcov_dump(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  if (!m->gcov_dumped) {
    ballarus_rt_dump_chain(m, 0);
    m->gcov_dumped = 1;
  }
  pthread_mutex_unlock(&m->lock);
}

HIDDEN void ballarus_rt_gcov_reset(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  reset_chain(m);
  m->gcov_dumped = 0;
  pthread_mutex_unlock(&m->lock);
}

/* Zeroes every counter of the chain and bumps the epoch.  Called with
   m->lock held.  */
static void reset_chain(ballarus_master *m) {
  ballarus_rt_pagemap pm;
  ballarus_rt_pagemap_open(&pm);
  for (ballarus_root *r = m->root; r != NULL; r = r->next) {
    /* Thread-mode counters are zeroed by their module, under the lock that
       exiting threads take to fold their copies in.  */
    if (r->tc_sync != NULL) r->tc_sync(BALLARUS_TC_RESET);
    for (uint64_t t = 0; t < r->n_tus; t++) {
      const ballarus_tu_desc *d = r->tus[t];
      ballarus_meta_header h;
      memcpy(&h, d->metadata, sizeof h);
      if (d->counters < r->tc_lo || d->counters >= r->tc_hi)
        zero_counters(d->counters, h.n_counters, &pm);
      ballarus_pt_zero(d, 0);
    }
    if (r->path_lost != NULL)
      __atomic_store_n(r->path_lost, 0, __ATOMIC_RELAXED);
    if (r->epoch != NULL) (*r->epoch)++;
  }
  ballarus_rt_pagemap_close(&pm);
}

/* ---------------------------------------------------------------------- */
/* Constructor, destructor, fork.                                           */

__attribute__((constructor)) static void ballarus_rt_ctor(void) { rt_init(); }

/* At exit or dlclose: the module dumps its own TUs (each module's
   destructor runs, after the static destructors that count in it), then
   its root leaves the chain: after dlclose its memory is gone.  If the
   owner goes while roots of other modules are still chained (only
   possible at exit), they are detached; each dumps at its own
   destructor.  */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"
__attribute__((destructor(99))) static void ballarus_rt_dtor(void) {
  if (!initialised) return;
  ballarus_trace_remove_tus(&trace_tus);
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  if (!m->gcov_dumped) {
    /* (After __gcov_dump(), and no reset since, gcov writes no more.)  */
    ballarus_root *self = &root;
    ballarus_rt_dump_roots(&self, 1, 1);
  }
  if (root.next != NULL) root.next->prev = root.prev;
  if (root.prev != NULL)
    root.prev->next = root.next;
  else
    m->root = root.next;
  root.next = root.prev = NULL;
  if (m == &own_master) {
    /* Orphans: their copies still point at m; each dumps its own TUs at
       its destructor.  Give them an empty chain.  */
    ballarus_root *r = m->root;
    while (r != NULL) {
      ballarus_root *next = r->next;
      r->next = r->prev = NULL;
      r = next;
    }
    m->root = NULL;
  }
  pthread_mutex_unlock(&m->lock);
}
#pragma GCC diagnostic pop

static void atfork_child(void) {
  /* Single-threaded here.  Another thread may have held the lock or been
     in the middle of a dump: its lock file descriptor is closed, never
     unlocked (the lock belongs to the parent's dump).  */
  pthread_mutex_init(&root.master->lock, NULL);
  pthread_mutex_init(&init_lock, NULL);
  if (ballarus_rt_busy_lock_fd >= 0) {
    close(ballarus_rt_busy_lock_fd);
    ballarus_rt_busy_lock_fd = -1;
  }
  ballarus_rt_forget_read_buf();
  ballarus_rt_pagemap pm;
  ballarus_rt_pagemap_open(&pm);
  for (uint64_t t = 0; t < root.n_tus; t++) {
    const ballarus_tu_desc *d = root.tus[t];
    ballarus_meta_header h;
    memcpy(&h, d->metadata, sizeof h);
    zero_counters(d->counters, h.n_counters, &pm);
    ballarus_pt_zero(d, 1);
    root.counted[t] = 0; /* the child is a process: one run of its own */
  }
  ballarus_rt_pagemap_close(&pm);
  *ballarus_pt_lost() = 0;
  __ballarus_epoch++;
}