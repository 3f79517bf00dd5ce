/* ballarus_rt.c — the runtime linked into every instrumented module
   (libballarus_rt.a): finds the module's translation units, and writes
   their counters into their profiles at exit, at dlclose and on
   __ballarus_dump().  Public API and user-visible behaviour: ballarus.h.

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

   Dumping (dump_roots).  Under the master's mutex (threads), every TU's
   counters and path tables are read.  A TU none of whose counts changed
   since the previous dump is left out (so a process's exit costs what it
   ran), unless its profile does not list it yet: then it goes as a *zero
   record* (runs 0), once, so that a never-executed TU still appears in
   reports (gcov writes every object's .gcda too).  The TUs are grouped by
   destination directory, then by file (the files it creates: rt_store.c).
   The directory is opened by
   safe_file.h's walk (missing directories created, mode 0755 less the
   umask; a symbolic link of another user on the way is not followed, and
   the run's counts are reported lost in one line).  Per directory,
   processes of one user are serialised by flock() on a lock file only that
   user can open, .ballarus-<uid>.lock (mode 0600, unlinked by its holder at
   the end, so nothing stays behind; a flock on the directory itself could
   be held by anyone allowed to read it), polled up to
   BALLARUS_LOCK_TIMEOUT seconds, default 10, after which this run's counts
   go beside as FILE.<pid>.  Under the
   lock, temporary files FILE.tmp.<pid>.<n> of dead writers are removed,
   then per file: the existing profile is opened without following a
   symbolic link and read only if it is a regular file owned by this
   effective user (else this run's counts go beside as FILE.<pid>: nothing
   of a file we do not own is ever copied into a file of ours); it is
   validated by the same parser ballarus-reconstruct uses, whole-file check
   included (a damaged one is renamed FILE.corrupt, untouched, and a new
   profile started); this dump is merged in (profile_merge.c's
   ballarus_profile_update: equal builds added, an earlier build of the same
   object replaced — silently, or one line with BALLARUS_VERBOSE); the result
   is written to a temporary file (safe_file.h: O_CREAT|O_EXCL|O_NOFOLLOW
   with its final mode from the start, gcov's 0666 & ~umask or the existing
   profile's mode; a file written beside gets that mode too) and exchanged with FILE
   (renameat2 RENAME_EXCHANGE, then the old content unlinked: atomic like a
   rename over it, without ext4's flush of the new file on such a rename).
   The counters read (one snapshot per TU) are lent to the record written
   and to the merged profile (counters_borrowed, profile_io.h), never
   copied again: a path-mode TU holds megabytes of dense counters, and
   every fresh page costs a page fault (sqlite3's exit went from 1630 to
   870 faults, 33 to 22 ms of CPU time).
   The counters read are subtracted from the live counters (atomic
   fetch-sub) only after their file was written (or written beside), so
   increments made during the dump are kept for the next one, and a failed
   write loses nothing until the process exits.  Hashed path tables
   (path_table.c) are dumped the same way: every non-zero slot of every
   generation is read, the TU record gets them as sparse entries
   (duplicates of a key across generations summed, sorted by (function,
   key), zero sums dropped), and exactly the values read are subtracted
   from their slots.  Counts are residues modulo 2^64 throughout: path mode
   undoes a count (-1) when a call that cut a path short returns, and if a
   dump wrote the +1 in between, the live counter is left at 2^64-1 and the
   next dump must add that -1 to the file; so live values are merged into
   the file with modular additions, never saturating ones
   (ballarus_format.h).  BALLARUS_PROFILE=/dev/null switches dumping
   off: nothing is created, written or locked.  Any other destination that
   is not a regular file of this user (a FIFO, a directory, a link planted
   by someone else) is never read nor written through: this run's counts go
   beside it, with one line.

   At exit the first module finalised that owns the master (normally the
   executable) dumps the whole chain in one pass; the other modules then
   find nothing new and skip.  A dlclose'd library's destructor dumps its
   own TUs before its counters are unmapped and unlinks its root.

   fork().  A pthread_atfork child handler zeroes the module's counters and
   the counts of its path tables (keeping the tables), re-initialises the
   master's mutex (another thread may have held it), and closes the
   lock file descriptor of a dump that was in progress in another thread.
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

#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/path_table.h"
#include "runtime/profile_io.h"
#include "runtime/safe_file.h"
#include "runtime/thread_counters.h"

#define PUBLIC __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* ---------------------------------------------------------------------- */
/* Shared structures.  Their layout is a contract between copies of the
   runtime in one process: change it only together with MASTER_VERSION.
   Version 5: roots with the per-thread counter hook (thread_counters.h).
   Version 4: the master's gcov-API state, roots with the epoch and
   runs_written.  Version 3: roots with per-TU homes and `listed` flags and the override
   path (profiles per object).  Version 2: descriptors with path tables,
   roots with path_lost, and the path table layout of path_table.c, which
   one copy's dump reads in another module's memory.  */

#define MASTER_VERSION 5u

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
  const char **homes;  /* per TU: its absolute profile path (in its
                          metadata, or `fallback`) */
  unsigned char *listed; /* per TU: its profile is known to list it */
  char *override;      /* $BALLARUS_PROFILE, absolute (may hold %p), or NULL */
  char *fallback;      /* <start-up cwd>/ballarus.profile, for TUs without a
                          home (hand-made TUs), or NULL */
  int mark;            /* scratch, under master->lock */
  uint64_t *path_lost; /* the module's count of unrecorded path counts */
  volatile uint64_t *epoch; /* the module's __ballarus_epoch */
  int runs_written;    /* a dump of this process wrote a run for it */
  /* update=thread (thread_counters.h): the module's ballarus_tc_sync, and
     its thread-mode counter range, which only that function resets.  */
  void (*tc_sync)(int op);
  uint64_t *tc_lo, *tc_hi;
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
static double lock_timeout = 10;  /* seconds, BALLARUS_LOCK_TIMEOUT */
static volatile int busy_lock_fd = -1; /* lock file fd of a dump in progress */

/* BALLARUS_PROFILE=/dev/null switches profiling off.  Only this name: a
   FIFO, a directory or a link planted at a profile's path by someone else
   gets this run's counts beside it, with one line.  */
#define OFF_SWITCH "/dev/null"
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------- */
/* Messages: formatted into a buffer and written with one write(2), so they
   do not depend on stdio state at exit or after fork.  */

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...) {
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
    warn("TU descriptor %llu: no metadata; TU skipped",
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
    warn("TU descriptor %llu: %s; TU skipped", (unsigned long long)index,
         problem);
    return 0;
  }
  return 1;
}

/* `p` made absolute against the working directory (malloc'd), or NULL.  */
static char *absolute(const char *p) {
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
static void dump_chain(ballarus_master *m, int at_exit);

static void on_abort(int sig) {
  ballarus_master *m = root.master;
  if (m != NULL && pthread_mutex_trylock(&m->lock) == 0) {
    dump_chain(m, 1);
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
  const char *t = getenv("BALLARUS_LOCK_TIMEOUT");
  if (t != NULL && t[0] != '\0') {
    char *end;
    double x = strtod(t, &end);
    if (*end == '\0' && x >= 0 && x <= 86400)
      lock_timeout = x;
    else
      warn("BALLARUS_LOCK_TIMEOUT=%s is not a number of seconds (0 to 86400); "
           "using %g",
           t, lock_timeout);
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
  root.homes = calloc(n == 0 ? 1 : n, sizeof *root.homes);
  root.listed = calloc(n == 0 ? 1 : n, 1);
  if (root.tus == NULL || root.homes == NULL || root.listed == NULL) {
    warn("out of memory registering %llu TUs; this module is not profiled",
         (unsigned long long)n);
    n = 0;
  }
  const char *env = getenv("BALLARUS_PROFILE");
  if (env != NULL && env[0] != '\0') {
    root.override = absolute(env);
    if (root.override == NULL) {
      warn("out of memory; this module is not profiled");
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

  pthread_atfork(NULL, NULL, atfork_child);
  initialised = 1;
  maybe_dump_on_abort();
  if (verbose) {
    if (root.override != NULL)
      warn("registered %llu TUs; profile %s (BALLARUS_PROFILE)%s",
           (unsigned long long)root.n_tus, root.override,
           m == &own_master ? "" : " (chained into another module's master)");
    else
      warn("registered %llu TUs; profiles beside their objects%s%s%s",
           (unsigned long long)root.n_tus, root.n_tus > 0 ? ", e.g. " : "",
           root.n_tus > 0 ? root.homes[0] : "",
           m == &own_master ? "" : " (chained into another module's master)");
  }
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

typedef struct {
  ballarus_root *root;
  uint64_t t;          /* index of the TU in root */
  const char *dest;    /* its profile file, absolute */
  size_t dir_len;      /* dest[0, dir_len) is the directory */
  int changed;         /* some count changed since the previous dump */
  ballarus_profile_record rec; /* this dump's record: metadata points into
                                  the module, counters/sparse are owned */
  tu_snap snap;
} entry;

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

static void free_entry(entry *e) {
  if (!e->rec.counters_borrowed) free(e->rec.counters);
  free(e->rec.sparse);
  free(e->snap.snap);
  free(e->snap.pt);
  e->rec.counters = NULL;
  e->rec.sparse = NULL;
  e->snap.snap = NULL;
  e->snap.pt = NULL;
}

/* Reads the TU's counters and path tables into e->rec and e->snap.  A TU
   none of whose counts is non-zero gets no snapshot: nothing at all when
   its profile is known to list it (`listed`), else a zero record.
   Returns -1 when out of memory.  */
static int snapshot_tu(entry *e, int listed) {
  const ballarus_tu_desc *d = e->root->tus[e->t];
  ballarus_meta_header h;
  memcpy(&h, d->metadata, sizeof h);
  ballarus_profile_record *rec = &e->rec;
  memset(rec, 0, sizeof *rec);
  rec->stamp = h.stamp;
  rec->identity = h.identity;
  rec->metadata = (unsigned char *)d->metadata; /* never written or freed */
  rec->borrowed = 1;
  rec->meta_size = h.size;
  rec->n_counters = h.n_counters;
  int any = 0;
  for (uint64_t i = 0; i < h.n_counters && !any; i++)
    any = __atomic_load_n(&d->counters[i], __ATOMIC_RELAXED) != 0;
  if (!any && ballarus_pt_collect(d, &e->snap.pt, &e->snap.n_pt,
                                  &e->snap.cap_pt) != 0)
    return -1;
  if (!any && e->snap.n_pt == 0) {
    /* Nothing ran since the previous dump (the common case for most TUs
       of a big program): no copies.  */
    e->changed = 0;
    rec->runs = 0;
    if (listed) return 0;
    rec->counters = calloc(h.n_counters == 0 ? 1 : h.n_counters, 8);
    return rec->counters == NULL ? -1 : 0;
  }
  free(e->snap.pt);
  e->snap.pt = NULL;
  e->snap.n_pt = e->snap.cap_pt = 0;
  e->snap.live = d->counters;
  e->snap.n = h.n_counters;
  e->snap.snap = malloc(h.n_counters == 0 ? 1 : h.n_counters * 8);
  if (e->snap.snap == NULL) return -1;
  for (uint64_t i = 0; i < h.n_counters; i++) {
    uint64_t v = __atomic_load_n(&d->counters[i], __ATOMIC_RELAXED);
    e->snap.snap[i] = v;
    if (v != 0) e->changed = 1;
  }
  /* The record borrows the snapshot instead of copying it (a path-mode TU
     holds megabytes of dense counters, and on this kind of machine every
     fresh page costs a fault of ~10 us): nothing writes into it (the
     update copies before adding into a borrowed record, build_profile
     before summing), and the snapshot outlives the file written.  */
  rec->counters = e->snap.snap;
  rec->counters_borrowed = 1;
  if (ballarus_pt_collect(d, &e->snap.pt, &e->snap.n_pt, &e->snap.cap_pt) != 0)
    return -1;
  if (e->snap.n_pt > 0) {
    const uint64_t np = e->snap.n_pt;
    ballarus_sparse_entry *s =
        np > SIZE_MAX / sizeof *s ? NULL : malloc((size_t)np * sizeof *s);
    if (s == NULL) return -1;
    for (uint64_t i = 0; i < np; i++) {
      s[i].function = e->snap.pt[i].function;
      s[i].key = e->snap.pt[i].key;
      s[i].count = e->snap.pt[i].count;
    }
    rec->sparse = s;
    rec->n_sparse = normalise_sparse(s, np);
    /* Non-zero slots were read, even if they cancel in the sum (a +1 in one
       generation, its -1 in another): subtracting them matters.  */
    e->changed = 1;
  }
  /* One run per dump that counted something; under gcov's API one per
     process (gcov's run_counted): later dumps add counts, not runs.  */
  ballarus_master *m = e->root->master;
  rec->runs = (e->changed && !(m != NULL && m->gcov_api &&
                               e->root->runs_written)) ? 1 : 0;
  if (rec->runs) e->root->runs_written = 1;
  return 0;
}

/* Subtracts what e read from the live counters: it is in a file now.  */
static void subtract(entry *e) {
  for (uint64_t c = 0; c < e->snap.n; c++)
    if (e->snap.snap[c] != 0)
      __atomic_fetch_sub(&e->snap.live[c], e->snap.snap[c], __ATOMIC_RELAXED);
  for (uint64_t k = 0; k < e->snap.n_pt; k++)
    __atomic_fetch_sub(e->snap.pt[k].live, e->snap.pt[k].count,
                       __ATOMIC_RELAXED);
}

/* By directory, then file name, then stamp: each directory's and each
   file's entries are contiguous, equal stamps of a file adjacent.  */
static int cmp_entry(const void *a, const void *b) {
  const entry *x = a, *y = b;
  size_t m = x->dir_len < y->dir_len ? x->dir_len : y->dir_len;
  int c = strncmp(x->dest, y->dest, m);
  if (c == 0 && x->dir_len != y->dir_len)
    c = x->dir_len < y->dir_len ? -1 : 1;
  if (c == 0) c = strcmp(x->dest + x->dir_len, y->dest + y->dir_len);
  if (c != 0) return c;
  return x->rec.stamp < y->rec.stamp ? -1 : x->rec.stamp > y->rec.stamp;
}

/* Names for messages.  */
static const char *source_of(const entry *e) {
  ballarus_meta_names n;
  if (ballarus_meta_get_names(e->rec.metadata, e->rec.meta_size, &n) != 0)
    return "?";
  return n.source;
}

/* "the counts of a.c" / "the counts of 3 translation units (a.c, ...)":
   what a group of entries holds that a failure loses.  Empty when it holds
   no counts (only zero records).  */
static void what_is_lost(const entry *e, size_t n, char *buf, size_t len) {
  size_t k = 0;
  const entry *first = NULL;
  for (size_t i = 0; i < n; i++)
    if (e[i].changed) {
      if (first == NULL) first = &e[i];
      k++;
    }
  if (k == 0)
    buf[0] = '\0';
  else if (k == 1)
    snprintf(buf, len, "this run's counts of %s", source_of(first));
  else
    snprintf(buf, len, "this run's counts of %zu translation units (%s, ...)",
             k, source_of(first));
}

/* One file of a dump: entries [a, b) of the directory group.  */
typedef struct {
  entry *e;
  size_t n;
  const char *path; /* the file, absolute */
  const char *name; /* its last component */
  int todo;
  int any_changed;
} fgroup;

/* Folds the group's records into one profile (a TU linked into several
   modules, or twice, has one stamp: its counts are summed).  The records'
   counters and sparse entries move out of the entries; the metadata stays
   borrowed from the modules, so ballarus_profile_free frees just what this
   allocated.  */
static int build_profile(fgroup *g, ballarus_profile *mine) {
  memset(mine, 0, sizeof *mine);
  mine->records = calloc(g->n == 0 ? 1 : g->n, sizeof *mine->records);
  if (mine->records == NULL) return -1;
  for (size_t i = 0; i < g->n; i++) {
    entry *e = &g->e[i];
    if (e->changed) mine->runs = 1;
    ballarus_profile_record *last =
        mine->n_records > 0 ? &mine->records[mine->n_records - 1] : NULL;
    if (last != NULL && last->stamp == e->rec.stamp &&
        last->n_counters == e->rec.n_counters) {
      /* Never into another entry's snapshot, which it subtracts.  */
      if (ballarus_profile_record_own_counters(last) != 0) return -1;
      for (uint64_t c = 0; c < e->rec.n_counters; c++)
        last->counters[c] =
            ballarus_count_add(last->counters[c], e->rec.counters[c]);
      if (e->rec.n_sparse > 0) {
        uint64_t total = last->n_sparse + e->rec.n_sparse;
        ballarus_sparse_entry *s =
            total > SIZE_MAX / sizeof *s
                ? NULL
                : realloc(last->sparse, (size_t)total * sizeof *s);
        if (s == NULL) return -1;
        memcpy(s + last->n_sparse, e->rec.sparse,
               (size_t)e->rec.n_sparse * sizeof *s);
        last->sparse = s;
        last->n_sparse = normalise_sparse(s, total);
      }
      if (e->rec.runs > last->runs) last->runs = e->rec.runs;
      continue;
    }
    mine->records[mine->n_records++] = e->rec;
    e->rec.counters = NULL;
    e->rec.sparse = NULL;
  }
  return 0;
}

typedef struct {
  const char *path;
} replace_ctx;

static void on_replace(void *ctx, const ballarus_profile_record *old_rec,
                       const ballarus_profile_record *new_rec) {
  (void)old_rec;
  if (!verbose) return;
  ballarus_meta_names n;
  if (ballarus_meta_get_names(new_rec->metadata, new_rec->meta_size, &n) != 0)
    return;
  if (n.object[0] != '\0')
    warn("%s (object %s): overwriting the profile data of an earlier build "
         "in %s",
         n.source, n.object, ((replace_ctx *)ctx)->path);
  else
    warn("%s: overwriting the profile data of an earlier build in %s",
         n.source, ((replace_ctx *)ctx)->path);
}

/* A failed file: one line naming it, the reason, and what is lost.  */
static void report_failure(fgroup *g, const char *reason, int at_exit) {
  char lost[512];
  what_is_lost(g->e, g->n, lost, sizeof lost);
  if (lost[0] == '\0') return; /* only zero records: nothing lost */
  warn("%s: %s; %s %s", g->path, reason, lost,
       at_exit ? "are lost" : "are kept for the next dump");
}

/* After a file was written (or this run's counts beside it).  */
static void done_group(fgroup *g, int listed) {
  for (size_t i = 0; i < g->n; i++) {
    if (g->e[i].changed) subtract(&g->e[i]);
    if (listed) g->e[i].root->listed[g->e[i].t] = 1;
  }
}

/* Writes this run's counts of g beside its file; `why` says why.  */
static void dump_beside(int dfd, fgroup *g, const char *why, int at_exit) {
  ballarus_profile mine;
  char err[1024];
  char *written = NULL;
  if (build_profile(g, &mine) != 0) {
    ballarus_profile_free(&mine);
    report_failure(g, "out of memory", at_exit);
    return;
  }
  if (mine.runs == 0) {
    /* Only zero records: nothing worth a stray file.  */
    ballarus_profile_free(&mine);
    return;
  }
  if (ballarus_rt_write_beside(dfd, g->path, g->name, &mine, &written, err, sizeof err) !=
      0) {
    char reason[1536];
    snprintf(reason, sizeof reason, "%s; %s", why, err);
    report_failure(g, reason, at_exit);
  } else {
    warn("%s: %s; this run's counts written to %s instead", g->path, why,
         written);
    done_group(g, 0);
  }
  free(written);
  ballarus_profile_free(&mine);
}

/* One buffer for the existing profiles a dump reads, reused from file to
   file (fresh memory for each would cost a page fault per 4 KiB), freed at
   the end of the dump.  Under the master lock.  */
static unsigned char *read_buf;
static uint64_t read_cap;

/* Reads the regular file fd (st: its fstat) into read_buf, its header
   first (profile_io.h), and parses it, its metadata borrowed from
   read_buf.  Returns 0, -1 (damaged) or BALLARUS_PROFILE_UNREAD (a read
   error, or out of memory: not a reason to call the file damaged).  */
static int read_profile(int fd, const struct stat *st,
                        const unsigned char *const *known, size_t n_known,
                        ballarus_profile *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  unsigned char head[BALLARUS_PROFILE_HEADER_SIZE];
  uint64_t got = 0, rest = 0;
  const uint64_t n = (uint64_t)st->st_size;
  if (ballarus_profile_read_bounded(fd, head, sizeof head, &got, err,
                                    errlen) != 0)
    return BALLARUS_PROFILE_UNREAD;
  if (ballarus_profile_check_header(head, got < sizeof head ? got : n, err,
                                    errlen) != 0)
    return -1;
  if (n + 1 > read_cap) {
    unsigned char *b = n + 1 > SIZE_MAX ? NULL : realloc(read_buf, (size_t)n + 1);
    if (b == NULL) {
      snprintf(err, errlen, "out of memory reading %llu bytes",
               (unsigned long long)n);
      return BALLARUS_PROFILE_UNREAD;
    }
    read_buf = b;
    read_cap = n + 1;
  }
  memcpy(read_buf, head, sizeof head);
  if (ballarus_profile_read_bounded(fd, read_buf + sizeof head,
                                    n - sizeof head, &rest, err, errlen) != 0)
    return BALLARUS_PROFILE_UNREAD;
  /* A file that shrank while read is parsed as it is.  */
  return ballarus_profile_parse_borrowing(read_buf, sizeof head + rest, known,
                                          n_known, out, err, errlen);
}

/* Sets the damaged file g->name aside, untouched, as NAME.corrupt (or
   NAME.corrupt.<pid>.<k>), so that a new profile starts with this run's
   counts; one line says why (`problem`).  Returns 0, or -1 when it could
   not be renamed: this run's counts then went beside it.  */
static int set_aside(int dfd, fgroup *g, const char *problem, int at_exit) {
  char kept[4200];
  int e = ballarus_rt_rename_aside(dfd, g->name, kept, sizeof kept);
  if (e != 0) {
    char why[1400];
    snprintf(why, sizeof why, "damaged (%s) and cannot be renamed (%s)",
             problem, strerror(e));
    dump_beside(dfd, g, why, at_exit);
    return -1;
  }
  warn("%s: damaged (%s); kept as %.*s%s, a new profile started", g->path,
       problem, (int)(strlen(g->path) - strlen(g->name)), g->path, kept);
  return 0;
}

/* Whether function `fn` has a hashed path table in a copy of the TU
   `stamp` among g's entries.  */
static int hashed_in_group(const fgroup *g, uint64_t stamp, uint64_t fn) {
  for (size_t i = 0; i < g->n; i++) {
    const entry *e = &g->e[i];
    if (e->rec.stamp != stamp) continue;
    const ballarus_tu_desc *d = e->root->tus[e->t];
    for (uint64_t k = 0; k < d->n_path_hashes; k++)
      if (d->path_hashes[k].function == fn) return 1;
  }
  return 0;
}

/* The existing profile's records of the builds this program holds,
   checked against those builds, which the runtime trusts (their metadata
   is compiled in): the same metadata, as many counters, and sparse entries
   only of functions with a hashed path table -- what ballarus-reconstruct
   checks after decoding the metadata (core/profile_reader.cc), so that a
   record it would reject is never merged into (it would refuse every
   later merge, or carry the damage on).  Records of other builds are
   carried over as parsed.  -1 with err naming the source.  */
static int check_own_builds(const fgroup *g, const ballarus_profile *old,
                            char *err, size_t errlen) {
  for (size_t i = 0; i < g->n; i++) {
    const ballarus_profile_record *s = &g->e[i].rec;
    const ballarus_profile_record *r = NULL;
    for (uint32_t k = 0; k < old->n_records && r == NULL; k++)
      if (old->records[k].stamp == s->stamp) r = &old->records[k];
    if (r == NULL) continue;
    const char *src = source_of(&g->e[i]);
    if (r->n_counters != s->n_counters) {
      snprintf(err, errlen,
               "the record of %s holds %llu counters, its build %llu", src,
               (unsigned long long)r->n_counters,
               (unsigned long long)s->n_counters);
      return -1;
    }
    if (r->meta_size != s->meta_size ||
        (r->metadata != s->metadata &&
         memcmp(r->metadata, s->metadata, s->meta_size) != 0)) {
      snprintf(err, errlen,
               "the record of %s has the stamp of its build, other metadata",
               src);
      return -1;
    }
    for (uint64_t k = 0; k < r->n_sparse; k++) {
      if (!hashed_in_group(g, s->stamp, r->sparse[k].function)) {
        snprintf(err, errlen,
                 "the record of %s has path counts of function %llu, which "
                 "has no hashed path table",
                 src, (unsigned long long)r->sparse[k].function);
        return -1;
      }
    }
  }
  return 0;
}

/* The transaction on one file, with the directory locked.  */
static void dump_file(int dfd, fgroup *g, int at_exit) {
  ballarus_profile old;
  memset(&old, 0, sizeof old);
  int mode = -1;
  char why[1200];
  char err[1024];
  int fd = openat(dfd, g->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno != ENOENT) {
    if (errno == ELOOP)
      snprintf(why, sizeof why, "is a symbolic link, not read");
    else
      snprintf(why, sizeof why, "cannot be opened (%s)", strerror(errno));
    dump_beside(dfd, g, why, at_exit);
    return;
  }
  if (fd >= 0) {
    struct stat st;
    int problem = 0;
    if (fstat(fd, &st) != 0) {
      snprintf(why, sizeof why, "cannot stat (%s)", strerror(errno));
      problem = 1;
    } else if (!S_ISREG(st.st_mode)) {
      snprintf(why, sizeof why, "is not a regular file, not read");
      problem = 1;
    } else if (st.st_uid != geteuid()) {
      snprintf(why, sizeof why,
               "belongs to uid %u, not to this user (uid %u): not read",
               (unsigned)st.st_uid, (unsigned)geteuid());
      problem = 1;
    }
    if (problem) {
      close(fd);
      dump_beside(dfd, g, why, at_exit);
      return;
    }
    mode = (int)(st.st_mode & 07777);
    /* Our own TUs' blobs need no second hashing where the file holds them
       byte for byte.  */
    const unsigned char **known = calloc(g->n + 1, sizeof *known);
    size_t n_known = 0;
    if (known != NULL)
      for (size_t i = 0; i < g->n; i++) known[n_known++] = g->e[i].rec.metadata;
    int rc = read_profile(fd, &st, known, n_known, &old, err, sizeof err);
    free(known);
    close(fd);
    if (rc == BALLARUS_PROFILE_UNREAD) {
      /* Not known to be damaged: left alone.  */
      snprintf(why, sizeof why, "cannot be read (%s)", err);
      dump_beside(dfd, g, why, at_exit);
      return;
    }
    if (rc == 0 && check_own_builds(g, &old, err, sizeof err) != 0) {
      ballarus_profile_free(&old);
      rc = -1;
    }
    if (rc != 0) {
      if (set_aside(dfd, g, err, at_exit) != 0) return;
      memset(&old, 0, sizeof old);
    }
  }

  ballarus_profile mine;
  if (build_profile(g, &mine) != 0) {
    ballarus_profile_free(&mine);
    ballarus_profile_free(&old);
    report_failure(g, "out of memory", at_exit);
    return;
  }
  replace_ctx ctx = {g->path};
  if (ballarus_profile_update(&old, &mine, on_replace, &ctx, err,
                              sizeof err) != 0) {
    ballarus_profile_free(&old);
    snprintf(why, sizeof why, "cannot merge into it (%s)", err);
    ballarus_profile_free(&mine); /* the live counters still hold the counts */
    report_failure(g, why, at_exit);
    return;
  }
  if (ballarus_profile_write_at(dfd, g->name, &old, mode,
                                BALLARUS_WRITE_EXCHANGE |
                                    BALLARUS_WRITE_TRUSTED,
                                err, sizeof err) != 0) {
    snprintf(why, sizeof why, "cannot write (%s)", err);
    report_failure(g, why, at_exit);
  } else {
    if (verbose)
      warn("dumped %u TU records to %s", mine.n_records, g->path);
    done_group(g, 1);
  }
  ballarus_profile_free(&mine);
  ballarus_profile_free(&old);
}

typedef struct {
  const char *dir; /* the directory's path, dir_len bytes */
  size_t dir_len;
} orphan_ctx;

static void on_orphan(void *ctx, const char *name, long pid) {
  const orphan_ctx *c = ctx;
  if (verbose)
    warn("removed %.*s/%s, left by process %ld which died writing it",
         (int)c->dir_len, c->dir, name, pid);
}

/* Removes temporary files NAME.tmp.<pid>.<n> of the group's files left by
   writers that died (killed mid-dump): regular files of this user whose
   pid no longer exists.  Called with the directory locked, so no live
   ballarus runtime of this user is writing one.  */
static void remove_orphans(int dfd, fgroup *gs, size_t ng) {
  const char **names = calloc(ng + 1, sizeof *names);
  if (names == NULL) return;
  size_t n = 0;
  for (size_t i = 0; i < ng; i++)
    if (gs[i].todo) names[n++] = gs[i].name;
  orphan_ctx ctx = {gs[0].path, (size_t)(gs[0].name - gs[0].path) - 1};
  ballarus_sf_remove_orphans(dfd, names, n, on_orphan, &ctx);
  free(names);
}

/* Dumps entries e[0, n), all in one directory.  */
static void dump_dir(entry *e, size_t n, int at_exit) {
  size_t ng = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(e[i].dest, e[i - 1].dest) != 0) ng++;
  fgroup *gs = calloc(ng, sizeof *gs);
  if (gs == NULL) {
    warn("out of memory; profiles in %.*s not written", (int)e[0].dir_len,
         e[0].dest);
    return;
  }
  size_t k = 0, todo = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && strcmp(e[j].dest, e[i].dest) == 0) j++;
    fgroup *g = &gs[k++];
    g->e = &e[i];
    g->n = j - i;
    g->path = e[i].dest;
    g->name = e[i].dest + e[i].dir_len + 1;
    for (size_t x = i; x < j; x++) g->any_changed |= e[x].changed;
    struct stat st;
    if (!g->any_changed && lstat(g->path, &st) == 0) {
      /* Only zero records, and the file exists: assume it lists them.  */
      for (size_t x = i; x < j; x++) e[x].root->listed[e[x].t] = 1;
      g->todo = 0;
    } else {
      g->todo = 1;
      todo++;
    }
    i = j;
  }
  if (todo == 0) {
    free(gs);
    return;
  }

  char *dirpath = e[0].dir_len == 0 ? strdup("/")
                                    : strndup(e[0].dest, e[0].dir_len);
  char why[1024], sub[512] = "out of memory";
  /* Missing directories are created as libgcov does (mode 0755, less the
     umask), but never through a symbolic link of another user.  */
  int dfd = dirpath == NULL ? -1
                            : ballarus_sf_open_dir(dirpath, BALLARUS_SF_MKDIR,
                                                   0755, sub, sizeof sub);
  if (dfd < 0) {
    snprintf(why, sizeof why, "cannot open its directory (%s)", sub);
    for (size_t i = 0; i < ng; i++)
      if (gs[i].todo) report_failure(&gs[i], why, at_exit);
    free(dirpath);
    free(gs);
    return;
  }
  char lock_name[64];
  int lfd = ballarus_rt_lock_dir(dfd, lock_timeout, lock_name, sizeof lock_name, why, sizeof why);
  if (lfd < 0) {
    for (size_t i = 0; i < ng; i++)
      if (gs[i].todo) dump_beside(dfd, &gs[i], why, at_exit);
  } else {
    busy_lock_fd = lfd;
    remove_orphans(dfd, gs, ng);
    for (size_t i = 0; i < ng; i++)
      if (gs[i].todo) dump_file(dfd, &gs[i], at_exit);
    busy_lock_fd = -1;
    ballarus_rt_unlock_dir(dfd, lock_name, lfd);
  }
  close(dfd);
  free(dirpath);
  free(gs);
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

/* Dumps the TUs of `roots`.  Called with the master lock held.  `at_exit`:
   no later dump will come (exit, dlclose, abort), so what cannot be
   written is lost, and the messages say so.  */
static void dump_roots(ballarus_root **roots, size_t n_roots, int at_exit) {
  report_lost(roots, n_roots);
  /* Per-thread copies first: what threads counted goes into the shared
     counters read below.  */
  for (size_t r = 0; r < n_roots; r++)
    if (roots[r]->tc_sync != NULL) roots[r]->tc_sync(BALLARUS_TC_FOLD);
  uint64_t total = 0;
  for (size_t r = 0; r < n_roots; r++) total += roots[r]->n_tus;
  if (total == 0) return;
  entry *es = calloc(total, sizeof *es);
  char **expanded = calloc(n_roots, sizeof *expanded);
  size_t n = 0;
  if (es == NULL || expanded == NULL) goto oom;
  for (size_t r = 0; r < n_roots; r++) {
    ballarus_root *rt = roots[r];
    if (rt->override != NULL) {
      expanded[r] = expand_path(rt->override);
      if (expanded[r] == NULL) goto oom;
      if (strcmp(expanded[r], OFF_SWITCH) == 0)
        continue; /* off: nothing read, created or locked */
    }
    for (uint64_t t = 0; t < rt->n_tus; t++) {
      entry *e = &es[n];
      memset(e, 0, sizeof *e);
      e->root = rt;
      e->t = t;
      e->dest = expanded[r] != NULL ? expanded[r] : rt->homes[t];
      const char *slash = strrchr(e->dest, '/');
      if (slash == NULL) continue; /* a relative override without a cwd */
      e->dir_len = (size_t)(slash - e->dest);
      if (snapshot_tu(e, rt->listed[t]) != 0) {
        free_entry(e);
        goto oom;
      }
      if (!e->changed && rt->listed[t]) {
        free_entry(e);
        continue;
      }
      n++;
    }
  }
  qsort(es, n, sizeof *es, cmp_entry);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && es[j].dir_len == es[i].dir_len &&
           strncmp(es[j].dest, es[i].dest, es[i].dir_len) == 0)
      j++;
    dump_dir(&es[i], j - i, at_exit);
    i = j;
  }
  for (size_t i = 0; i < n; i++) free_entry(&es[i]);
  for (size_t r = 0; r < n_roots; r++) free(expanded[r]);
  free(expanded);
  free(es);
  free(read_buf);
  read_buf = NULL;
  read_cap = 0;
  return;

oom:
  warn("out of memory; profile not written (counts %s)",
       at_exit ? "lost" : "kept for the next dump");
  if (es != NULL)
    for (size_t i = 0; i < n; i++) free_entry(&es[i]);
  if (expanded != NULL)
    for (size_t r = 0; r < n_roots; r++) free(expanded[r]);
  free(expanded);
  free(es);
}

/* Dumps every root of the chain `m`.  Called with m->lock held.  */
static void dump_chain(ballarus_master *m, int at_exit) {
  size_t n = 0;
  for (ballarus_root *r = m->root; r != NULL; r = r->next) n++;
  ballarus_root **all = calloc(n == 0 ? 1 : n, sizeof *all);
  if (all == NULL) {
    warn("out of memory; profile not written (counts %s)",
         at_exit ? "lost" : "kept for the next dump");
    return;
  }
  n = 0;
  for (ballarus_root *r = m->root; r != NULL; r = r->next) all[n++] = r;
  dump_roots(all, n, at_exit);
  free(all);
}

PUBLIC void __ballarus_dump(void) {
  rt_init();
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  dump_chain(m, 0);
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
    dump_chain(m, 0);
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
    /* Thread-mode counters are zeroed by their module, under the lock that
       exiting threads take to fold their copies in.  */
    if (r->tc_sync != NULL) r->tc_sync(BALLARUS_TC_RESET);
    for (uint64_t t = 0; t < r->n_tus; t++) {
      const ballarus_tu_desc *d = r->tus[t];
      ballarus_meta_header h;
      memcpy(&h, d->metadata, sizeof h);
      if (d->counters < r->tc_lo || d->counters >= r->tc_hi)
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
   executable, finalised first at exit) dumps the whole chain; any other
   module dumps its own TUs, which at exit finds nothing new and skips.
   Then the root leaves the chain: after dlclose its memory is gone.  If
   the owner goes while roots of other modules are still chained (only
   possible at exit), they are detached to a master of their own: they
   have been dumped already.  */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"
__attribute__((destructor(99))) static void ballarus_rt_dtor(void) {
  if (!initialised) return;
  ballarus_master *m = root.master;
  pthread_mutex_lock(&m->lock);
  if (m->gcov_dumped) {
    /* __gcov_dump() ran and nothing reset since: gcov writes no more.  */
  } else if (m == &own_master || m == &private_master) {
    dump_chain(m, 1);
  } else {
    ballarus_root *self = &root;
    dump_roots(&self, 1, 1);
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
     in the middle of a dump: its lock file descriptor is closed, never
     unlocked (the lock belongs to the parent's dump).  */
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
