/* ballarus_rt.c — the runtime linked into every instrumented module
   (libballarus_rt.a): finds the module's translation units, and writes
   their counters into the profile at exit, at dlclose and on
   __ballarus_dump().  Public API and user-visible behaviour: ballarus.h.

   Plain C11 + pthreads, no libstdc++, compiled -fPIC with hidden visibility
   so it links into plain C executables and into shared libraries alike.

   Registration.  The plugin puts one ballarus_tu_desc per TU into section
   "ballarus_tus"; the linker bounds a module's descriptors with
   __start_ballarus_tus/__stop_ballarus_tus, which we declare hidden and weak
   so each module sees its own (and none if nothing is instrumented).  Each
   descriptor points at __ballarus_runtime_anchor, which is what drags this
   object out of the archive.  A constructor validates every descriptor's
   metadata header (magic, version, header size, stamp = hash of the body)
   and its path table fields, and skips bad ones with a warning; a section
   that is not made of this layout's descriptors (its size is not a
   multiple of theirs, or one of them does not point at this module's
   anchor: objects of an older plugin) is refused as a whole.

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

   Dumping.  A dump takes the master's mutex (threads) and an exclusive lock
   on PROFILE.lock (processes: an open-file-description lock, F_OFD_SETLKW,
   which also serialises two modules of one process that do not share a
   master; flock() where OFD locks are missing), reads PROFILE if present,
   merges this dump's records in (profile_io.c), writes a temporary file and
   renames it over PROFILE.  The counters are read, and after a successful
   write the values written are subtracted from the live counters (atomic
   fetch-sub), so increments that happen during the dump are kept for the
   next one, and a failed write loses nothing.  Hashed path tables
   (path_table.c) are dumped the same way: every non-zero slot of every
   generation is read, the TU record gets them as sparse entries (duplicates
   of a key across generations summed, sorted by (function, key), zero sums
   dropped), and exactly the values read are subtracted from their slots.
   Counts are residues modulo 2^64 throughout: path mode undoes a count
   (-1) when a call that cut a path short returns, and if a dump wrote the
   +1 in between, the live counter is left at 2^64-1 and the next dump must
   add that -1 to the file; so live values are merged into the file with
   modular additions, never saturating ones (ballarus_format.h).

   At exit the first module finalised that owns the master (normally the
   executable) dumps the whole chain in one transaction; the other modules
   then find nothing new and skip.  A dlclose'd library's destructor dumps its
   own TUs before its counters are unmapped and unlinks its root.  A module is
   skipped when it was dumped before and has counted nothing since, so one
   process normally adds one run.

   fork().  A pthread_atfork child handler zeroes the module's counters and
   the counts of its path tables (keeping the tables), re-initialises the
   master's mutex (another thread may have held it), and closes the lock
   file descriptor of a dump that was in progress in another thread (an
   inherited OFD lock would otherwise stay held by the child).

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
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/path_table.h"
#include "runtime/profile_io.h"

#define PUBLIC __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* ---------------------------------------------------------------------- */
/* Shared structures.  Their layout is a contract between copies of the
   runtime in one process: change it only together with MASTER_VERSION.
   Version 2: descriptors with path tables, roots with path_lost, and the
   path table layout of path_table.c, which one copy's dump reads in another
   module's memory.  */

#define MASTER_VERSION 3u

typedef struct ballarus_root ballarus_root;

typedef struct ballarus_master {
  uint32_t version; /* MASTER_VERSION */
  uint32_t size;    /* sizeof(ballarus_master) */
  pthread_mutex_t lock;
  ballarus_root *root; /* chain of registered modules */
  int gcov_dumped;     /* __gcov_dump() ran, no __gcov_reset() since: no
                          more dumps but __ballarus_dump() (gcov_api.c) */
  int gcov_api;        /* __gcov_dump()/__gcov_reset() were called: like
                          gcov, a process then adds one run, however many
                          dumps it writes */
} ballarus_master;

struct ballarus_root {
  ballarus_root *next, *prev;
  ballarus_master *master; /* the master this root is chained into */
  const ballarus_tu_desc **tus; /* validated descriptors */
  uint64_t n_tus;
  char *path;  /* absolute profile path template (may contain %p) */
  int dumped;  /* has been written at least once by this process */
  int mark;    /* scratch, under master->lock */
  uint64_t *path_lost; /* the module's count of unrecorded path counts */
  volatile uint64_t *epoch; /* the module's __ballarus_epoch */
};

/* The exported master.  `own_master` is a hidden alias: references to it
   bind to this module's definition even when __ballarus_master is
   interposed by another module's.  */
PUBLIC ballarus_master __ballarus_master = {
    MASTER_VERSION, sizeof(ballarus_master), PTHREAD_MUTEX_INITIALIZER, NULL,
    0, 0};
extern ballarus_master own_master
    __attribute__((alias("__ballarus_master"), visibility("hidden")));

/* Used when the resolved master has another layout version.  */
static ballarus_master private_master = {
    MASTER_VERSION, sizeof(ballarus_master), PTHREAD_MUTEX_INITIALIZER, NULL,
    0, 0};

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
static int initialised;           /* under the master lock */
static int verbose;
static int busy_lock_fd = -1;     /* lock fd of a dump in progress */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------- */
/* Messages: formatted into a buffer and written with one write(2), so they
   do not depend on stdio state at exit or after fork.  */

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...) {
  char buf[1024];
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
    warn("TU descriptor %llu: no metadata; TU skipped",
         (unsigned long long)index);
    return 0;
  }
  memcpy(&h, m, sizeof h);
  const char *problem = NULL;
  if (memcmp(h.magic, BALLARUS_META_MAGIC, 8) != 0)
    problem = "bad metadata magic";
  else if (h.version != BALLARUS_META_VERSION)
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
  else if (ballarus_hash64(m + h.header_size, h.size - h.header_size) !=
           h.stamp)
    problem = "metadata stamp does not match its body";
  if (problem != NULL) {
    warn("TU descriptor %llu: %s; TU skipped", (unsigned long long)index,
         problem);
    return 0;
  }
  return 1;
}

static char *absolute_path_template(void) {
  const char *p = getenv("BALLARUS_PROFILE");
  if (p == NULL || p[0] == '\0') p = "ballarus.profile";
  if (p[0] == '/') return strdup(p);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == NULL) {
    warn("cannot get the working directory (%s); profile path %s stays "
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
    if (verbose)
      warn("__ballarus_master of another runtime version; this module dumps "
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
static void dump_chain(ballarus_master *m);

static void on_abort(int sig) {
  ballarus_master *m = root.master;
  if (m != NULL && pthread_mutex_trylock(&m->lock) == 0) {
    dump_chain(m);
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

/* Registers this module's TUs and chains its root; idempotent.  */
static void rt_init(void) {
  pthread_mutex_lock(&init_lock);
  if (initialised) {
    pthread_mutex_unlock(&init_lock);
    return;
  }
  const char *v = getenv("BALLARUS_VERBOSE");
  verbose = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;

  uint64_t n = 0;
  if (__start_ballarus_tus != NULL && __stop_ballarus_tus != NULL &&
      &__stop_ballarus_tus[0] > &__start_ballarus_tus[0]) {
    /* Objects of another plugin version may lay descriptors out otherwise
       (before path tables they were three pointers): refuse a section that
       is not a whole number of ours rather than read garbage.  */
    uintptr_t bytes = (uintptr_t)__stop_ballarus_tus -
                      (uintptr_t)__start_ballarus_tus;
    if (bytes % sizeof(ballarus_tu_desc) != 0) {
      warn("section %s holds %llu bytes, not a whole number of %u-byte TU "
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
          warn("TU descriptor %llu does not point at this runtime (objects "
               "built by another ballarus version?); this module is not "
               "profiled",
               (unsigned long long)i);
          n = 0;
        }
      }
    }
  }
  root.tus = calloc(n == 0 ? 1 : n, sizeof *root.tus);
  if (root.tus == NULL) {
    warn("out of memory registering %llu TUs; this module is not profiled",
         (unsigned long long)n);
    n = 0;
  }
  for (uint64_t i = 0; i < n; i++)
    if (desc_ok(&__start_ballarus_tus[i], i))
      root.tus[root.n_tus++] = &__start_ballarus_tus[i];
  root.path = absolute_path_template();
  if (root.path == NULL) warn("out of memory; this module is not profiled");
  root.path_lost = ballarus_pt_lost();
  root.epoch = &__ballarus_epoch;

  ballarus_master *m = pick_master();
  pthread_mutex_lock(&m->lock);
  root.master = m;
  root.prev = NULL;
  root.next = m->root;
  if (m->root != NULL) m->root->prev = &root;
  m->root = &root;
  pthread_mutex_unlock(&m->lock);

  pthread_atfork(NULL, NULL, atfork_child);
  initialised = 1;
  maybe_dump_on_abort();
  if (verbose)
    warn("registered %llu TUs; profile %s%s", (unsigned long long)root.n_tus,
         root.path ? root.path : "(none)",
         m == &own_master ? "" : " (chained into another module's master)");
  pthread_mutex_unlock(&init_lock);
}

/* ---------------------------------------------------------------------- */
/* Dumping.                                                                 */

/* PROFILE with %p -> pid and %% -> %.  */
static char *expand_path(const char *tmpl) {
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  size_t len = 1;
  for (const char *p = tmpl; *p; p++) len += (p[0] == '%' && p[1] == 'p') ? 32 : 1;
  char *out = malloc(len);
  if (out == NULL) return NULL;
  char *o = out;
  for (const char *p = tmpl; *p; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      o += sprintf(o, "%s", pid);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      *o++ = '%';
      p++;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  return out;
}

/* One TU's contribution to a dump.  */
typedef struct {
  uint64_t *live;     /* the TU's counters */
  uint64_t *snap;     /* values read, subtracted after a successful write */
  uint64_t n;
  ballarus_pt_entry *pt; /* path table counts read, subtracted likewise */
  uint64_t n_pt, cap_pt;
} tu_snap;

static int cmp_sparse(const void *a, const void *b) {
  const ballarus_sparse_entry *x = a, *y = b;
  if (x->function != y->function) return x->function < y->function ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorts e[0, n) by (function, key), sums the counts of equal keys modulo
   2^64 and drops zero sums; returns the new count.  */
static uint64_t normalise_sparse(ballarus_sparse_entry *e, uint64_t n) {
  if (n == 0) return 0;
  qsort(e, (size_t)n, sizeof *e, cmp_sparse);
  uint64_t w = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (w > 0 && e[w - 1].function == e[i].function &&
        e[w - 1].key == e[i].key)
      e[w - 1].count = ballarus_count_add(e[w - 1].count, e[i].count);
    else
      e[w++] = e[i];
  }
  uint64_t z = 0;
  for (uint64_t i = 0; i < w; i++)
    if (e[i].count != 0) e[z++] = e[i];
  return z;
}

static int cmp_record(const void *a, const void *b) {
  uint64_t x = ((const ballarus_profile_record *)a)->stamp;
  uint64_t y = ((const ballarus_profile_record *)b)->stamp;
  return x < y ? -1 : x > y;
}

/* Reads the counters of `roots` into a fresh profile (one run) and the
   snapshots.  Returns -1 when out of memory, else 0; *fresh tells whether
   there is anything to write.  */
static int snapshot(ballarus_root **roots, size_t n_roots,
                    ballarus_profile *prof, tu_snap **snaps_out,
                    uint64_t *n_snaps_out, int *fresh) {
  uint64_t n = 0;
  *fresh = 0;
  int any_run = 0;
  for (size_t r = 0; r < n_roots; r++) {
    n += roots[r]->n_tus;
    if (!roots[r]->dumped) *fresh = 1;
  }
  memset(prof, 0, sizeof *prof);
  if (n > UINT32_MAX) return -1;
  tu_snap *snaps = calloc(n == 0 ? 1 : n, sizeof *snaps);
  prof->records = calloc(n == 0 ? 1 : n, sizeof *prof->records);
  if (snaps == NULL || prof->records == NULL) goto oom;
  uint64_t k = 0;
  for (size_t r = 0; r < n_roots; r++) {
    /* One run per dump; under gcov's API one per process (gcov's
       run_counted): later dumps of a root add counts, not runs.  */
    const int run = !(roots[r]->master != NULL &&
                      roots[r]->master->gcov_api && roots[r]->dumped);
    any_run |= run;
    for (uint64_t t = 0; t < roots[r]->n_tus; t++, k++) {
      const ballarus_tu_desc *d = roots[r]->tus[t];
      ballarus_meta_header h;
      memcpy(&h, d->metadata, sizeof h);
      ballarus_profile_record *rec = &prof->records[prof->n_records++];
      rec->stamp = h.stamp;
      rec->identity = h.identity;
      rec->runs = (uint64_t)run;
      rec->meta_size = h.size;
      rec->n_counters = h.n_counters;
      rec->metadata = malloc(h.size);
      rec->counters = malloc(h.n_counters == 0 ? 1 : h.n_counters * 8);
      rec->sparse = malloc(1);
      snaps[k].live = d->counters;
      snaps[k].n = h.n_counters;
      snaps[k].snap = malloc(h.n_counters == 0 ? 1 : h.n_counters * 8);
      if (rec->metadata == NULL || rec->counters == NULL ||
          rec->sparse == NULL || snaps[k].snap == NULL)
        goto oom;
      memcpy(rec->metadata, d->metadata, h.size);
      for (uint64_t i = 0; i < h.n_counters; i++) {
        uint64_t v = __atomic_load_n(&d->counters[i], __ATOMIC_RELAXED);
        snaps[k].snap[i] = v;
        rec->counters[i] = v;
        if (v != 0) *fresh = 1;
      }
      if (ballarus_pt_collect(d, &snaps[k].pt, &snaps[k].n_pt,
                              &snaps[k].cap_pt) != 0)
        goto oom;
      if (snaps[k].n_pt > 0) {
        const uint64_t np = snaps[k].n_pt;
        ballarus_sparse_entry *e =
            np > SIZE_MAX / sizeof *e ? NULL : malloc((size_t)np * sizeof *e);
        if (e == NULL) goto oom;
        for (uint64_t i = 0; i < np; i++) {
          e[i].function = snaps[k].pt[i].function;
          e[i].key = snaps[k].pt[i].key;
          e[i].count = snaps[k].pt[i].count;
        }
        free(rec->sparse);
        rec->sparse = e;
        rec->n_sparse = normalise_sparse(e, np);
        /* Non-zero slots were read, even if they cancel in the sum (a +1 in
           one generation, its -1 in another): subtracting them matters.  */
        *fresh = 1;
      }
    }
  }
  /* Sort by stamp and fold a TU linked twice into one module (same build
     twice: same stamp) into one record.  */
  qsort(prof->records, prof->n_records, sizeof *prof->records, cmp_record);
  uint32_t w = 0;
  for (uint32_t i = 0; i < prof->n_records; i++) {
    ballarus_profile_record *cur = &prof->records[i];
    if (w > 0 && prof->records[w - 1].stamp == cur->stamp &&
        prof->records[w - 1].n_counters == cur->n_counters) {
      ballarus_profile_record *keep = &prof->records[w - 1];
      for (uint64_t c = 0; c < cur->n_counters; c++)
        keep->counters[c] = ballarus_count_add(keep->counters[c],
                                               cur->counters[c]);
      if (cur->n_sparse > 0) {
        uint64_t total = keep->n_sparse + cur->n_sparse;
        ballarus_sparse_entry *e =
            total > SIZE_MAX / sizeof *e
                ? NULL
                : realloc(keep->sparse, (size_t)total * sizeof *e);
        if (e == NULL) {
          /* Keep prof consistent for ballarus_profile_free: records
             [w, n_records) not yet moved are freed here.  */
          for (uint32_t j = i; j < prof->n_records; j++) {
            free(prof->records[j].metadata);
            free(prof->records[j].counters);
            free(prof->records[j].sparse);
          }
          prof->n_records = w;
          goto oom;
        }
        memcpy(e + keep->n_sparse, cur->sparse,
               (size_t)cur->n_sparse * sizeof *e);
        keep->sparse = e;
        keep->n_sparse = normalise_sparse(e, total);
      }
      free(cur->metadata);
      free(cur->counters);
      free(cur->sparse);
      continue;
    }
    prof->records[w++] = *cur;
  }
  prof->n_records = w;
  prof->runs = (uint64_t)any_run;
  *snaps_out = snaps;
  *n_snaps_out = n;
  return 0;

oom:
  ballarus_profile_free(prof);
  if (snaps != NULL)
    for (uint64_t i = 0; i < n; i++) {
      free(snaps[i].snap);
      free(snaps[i].pt);
    }
  free(snaps);
  return -1;
}

static void free_snaps(tu_snap *snaps, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    free(snaps[i].snap);
    free(snaps[i].pt);
  }
  free(snaps);
}

/* Reports path counts that found no table memory since the last dump.  They
   are not in the profile, whatever happens to this dump, so they are
   reported (and subtracted) once, here.  */
static void report_lost(ballarus_root **roots, size_t n_roots) {
  for (size_t r = 0; r < n_roots; r++) {
    uint64_t *lost = roots[r]->path_lost;
    if (lost == NULL) continue;
    uint64_t v = __atomic_load_n(lost, __ATOMIC_RELAXED);
    if (v == 0) continue;
    __atomic_fetch_sub(lost, v, __ATOMIC_RELAXED);
    warn("out of memory for path tables: %lld path counts were not recorded "
         "(their paths are missing from the profile)",
         (long long)v);
  }
}

/* Takes the inter-process lock on PATH.lock; returns the fd or -1.  */
static int lock_profile(const char *path) {
  size_t len = strlen(path) + 6;
  char *lp = malloc(len);
  if (lp == NULL) return -1;
  snprintf(lp, len, "%s.lock", path);
  int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    warn("%s: cannot open lock file (%s); dumping without it", lp,
         strerror(errno));
    free(lp);
    return -1;
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  int rc;
  do {
    rc = fcntl(fd, F_OFD_SETLKW, &fl);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno == EINVAL) {
    do {
      rc = flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
  }
  if (rc != 0) {
    warn("%s: cannot lock (%s); dumping without it", lp, strerror(errno));
    close(fd);
    fd = -1;
  }
  free(lp);
  return fd;
}

static int file_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 || errno != ENOENT;
}

/* Merges `mine` into the profile at `path` (or creates it).  Returns 0 on
   success; else -1 with the problem in err.  `*existing_bad` is set when
   the problem is with the existing file (so writing beside it is right).  */
static int merge_into(const char *path, const ballarus_profile *mine,
                      int *existing_bad, char *err, size_t errlen) {
  *existing_bad = 0;
  if (!file_exists(path))
    return ballarus_profile_write_file(path, mine, err, errlen);
  ballarus_profile old;
  char sub[512];
  if (ballarus_profile_read_file(path, &old, sub, sizeof sub) != 0) {
    *existing_bad = 1;
    snprintf(err, errlen, "%s", sub);
    return -1;
  }
  if (ballarus_profile_merge(&old, mine, sub, sizeof sub) != 0) {
    *existing_bad = 1;
    snprintf(err, errlen, "%s", sub);
    ballarus_profile_free(&old);
    return -1;
  }
  int rc = ballarus_profile_write_file(path, &old, err, errlen);
  ballarus_profile_free(&old);
  return rc;
}

/* Dumps `roots` (all with the same path template) in one transaction.
   Called with the master lock held.  */
static void dump_group(ballarus_root **roots, size_t n_roots) {
  ballarus_profile mine;
  tu_snap *snaps = NULL;
  uint64_t n_snaps = 0;
  int fresh = 0;
  report_lost(roots, n_roots);
  if (snapshot(roots, n_roots, &mine, &snaps, &n_snaps, &fresh) != 0) {
    warn("out of memory; profile not written (counts kept)");
    return;
  }
  if (!fresh) {
    ballarus_profile_free(&mine);
    free_snaps(snaps, n_snaps);
    return;
  }
  char *path = expand_path(roots[0]->path);
  if (path == NULL) {
    warn("out of memory; profile not written (counts kept)");
    ballarus_profile_free(&mine);
    free_snaps(snaps, n_snaps);
    return;
  }

  int fd = lock_profile(path);
  busy_lock_fd = fd;
  char err[1024];
  int bad = 0;
  const char *written = path;
  char *beside = NULL;
  int rc = merge_into(path, &mine, &bad, err, sizeof err);
  if (rc != 0 && bad) {
    /* Never mix with, nor destroy, a file we cannot merge into: write
       beside it, PROFILE.<pid>, or PROFILE.<pid>.<k> if that is taken by a
       file we cannot merge into either.  */
    char problem[1024];
    snprintf(problem, sizeof problem, "%s", err);
    size_t len = strlen(path) + 64;
    beside = malloc(len);
    if (beside == NULL) {
      warn("%s: %s; out of memory, profile not written", path, problem);
    } else {
      for (int k = 0; k < 100; k++) {
        if (k == 0)
          snprintf(beside, len, "%s.%ld", path, (long)getpid());
        else
          snprintf(beside, len, "%s.%ld.%d", path, (long)getpid(), k);
        if (k == 0)
          warn("%s: %s; writing this run's profile to %s", path, problem,
               beside);
        rc = merge_into(beside, &mine, &bad, err, sizeof err);
        if (rc == 0 || !bad) break;
        warn("%s: %s; trying another name", beside, err);
      }
      written = beside;
    }
  }
  if (rc == 0) {
    /* Subtract what was written; increments made meanwhile survive.  */
    for (uint64_t i = 0; i < n_snaps; i++) {
      for (uint64_t c = 0; c < snaps[i].n; c++)
        if (snaps[i].snap[c] != 0)
          __atomic_fetch_sub(&snaps[i].live[c], snaps[i].snap[c],
                             __ATOMIC_RELAXED);
      for (uint64_t e = 0; e < snaps[i].n_pt; e++)
        __atomic_fetch_sub(snaps[i].pt[e].live, snaps[i].pt[e].count,
                           __ATOMIC_RELAXED);
    }
    for (size_t r = 0; r < n_roots; r++) roots[r]->dumped = 1;
    if (verbose)
      warn("dumped %u TU records to %s", mine.n_records, written);
  } else if (beside == NULL || !bad) {
    warn("%s: cannot write profile: %s (counts kept for a later dump)",
         written, err);
  }
  busy_lock_fd = -1;
  if (fd >= 0) close(fd); /* releases the lock */
  free(beside);
  free(path);
  ballarus_profile_free(&mine);
  free_snaps(snaps, n_snaps);
}

/* Dumps every root of the chain `m`, one transaction per profile path.
   Called with m->lock held.  */
static void dump_chain(ballarus_master *m) {
  size_t n = 0;
  for (ballarus_root *r = m->root; r != NULL; r = r->next) {
    r->mark = 0;
    n++;
  }
  ballarus_root **group = calloc(n == 0 ? 1 : n, sizeof *group);
  if (group == NULL) {
    warn("out of memory; profile not written (counts kept)");
    return;
  }
  for (ballarus_root *r = m->root; r != NULL; r = r->next) {
    if (r->mark || r->path == NULL) continue;
    size_t g = 0;
    for (ballarus_root *s = r; s != NULL; s = s->next) {
      if (!s->mark && s->path != NULL && strcmp(s->path, r->path) == 0) {
        s->mark = 1;
        group[g++] = s;
      }
    }
    dump_group(group, g);
  }
  free(group);
}

PUBLIC void __ballarus_dump(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  dump_chain(m);
  pthread_mutex_unlock(&m->lock);
}

static void reset_chain(ballarus_master *m);

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
  m->gcov_api = 1;
  if (!m->gcov_dumped) {
    dump_chain(m);
    m->gcov_dumped = 1;
  }
  pthread_mutex_unlock(&m->lock);
}

HIDDEN void ballarus_rt_gcov_reset(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  reset_chain(m);
  m->gcov_api = 1;
  m->gcov_dumped = 0;
  pthread_mutex_unlock(&m->lock);
}

/* Zeroes every counter of the chain and bumps the epoch.  Called with
   m->lock held.  */
static void reset_chain(ballarus_master *m) {
  for (ballarus_root *r = m->root; r != NULL; r = r->next) {
    for (uint64_t t = 0; t < r->n_tus; t++) {
      const ballarus_tu_desc *d = r->tus[t];
      ballarus_meta_header h;
      memcpy(&h, d->metadata, sizeof h);
      for (uint64_t i = 0; i < h.n_counters; i++)
        __atomic_store_n(&d->counters[i], 0, __ATOMIC_RELAXED);
      ballarus_pt_zero(d, 0);
    }
    if (r->path_lost != NULL)
      __atomic_store_n(r->path_lost, 0, __ATOMIC_RELAXED);
    if (r->epoch != NULL) (*r->epoch)++;
  }
}

/* ---------------------------------------------------------------------- */
/* Constructor, destructor, fork.                                           */

__attribute__((constructor)) static void ballarus_rt_ctor(void) { rt_init(); }

/* At exit or dlclose.  The module owning the master (normally the
   executable, finalised first at exit) dumps the whole chain in one
   transaction; any other module dumps its own TUs, which at exit finds
   nothing new and skips.  Then the root leaves the chain: after dlclose
   its memory is gone.  If the owner goes while roots of other modules are
   still chained (only possible at exit), they are detached to a master of
   their own: they have been dumped already.  */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"
__attribute__((destructor(99))) static void ballarus_rt_dtor(void) {
  if (!initialised) return;
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  if (m->gcov_dumped) {
    /* __gcov_dump() ran and nothing reset since: gcov writes no more.  */
  } else if (m == &own_master || m == &private_master) {
    dump_chain(m);
  } else if (root.path != NULL) {
    ballarus_root *self = &root;
    root.mark = 1;
    dump_group(&self, 1);
  }
  if (root.next != NULL) root.next->prev = root.prev;
  if (root.prev != NULL)
    root.prev->next = root.next;
  else
    m->root = root.next;
  root.next = root.prev = NULL;
  if (m == &own_master) {
    /* Orphans: their copies still point at m, which may vanish with this
       module; they were dumped above.  Give them an empty chain.  */
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
     in the middle of a dump.  */
  pthread_mutex_init(&root.master->lock, NULL);
  pthread_mutex_init(&init_lock, NULL);
  if (busy_lock_fd >= 0) {
    close(busy_lock_fd);
    busy_lock_fd = -1;
  }
  for (uint64_t t = 0; t < root.n_tus; t++) {
    const ballarus_tu_desc *d = root.tus[t];
    ballarus_meta_header h;
    memcpy(&h, d->metadata, sizeof h);
    memset(d->counters, 0, h.n_counters * 8);
    ballarus_pt_zero(d, 1);
  }
  *ballarus_pt_lost() = 0;
  __ballarus_epoch++;
}
