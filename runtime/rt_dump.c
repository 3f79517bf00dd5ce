/* rt_dump.c — the runtime's dump: reads every TU's counters and path
   tables, groups them by directory and hands each directory to
   rt_dump_dir.c (its lock, and per file the existing profile read,
   checked, merged and written).  Registration and the entry points:
   rt_register.c.

   Dumping.  Under the master's mutex (threads), every TU's
   counters and path tables are read.  A TU none of whose counts changed
   since the previous dump is left out, unless this process has not added
   its run to it yet: every process adds one run to every TU it linked, as
   libgcov adds one to every registered object's summary, so the first
   dump writes every TU (one that did not run as a record of zero counts
   carrying the run, which also makes a never-executed TU appear in
   reports; rt_dump_dir.c adds such a run in place, so an exit still costs
   about what it ran).  The TUs are grouped by
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
   lock, temporary files FILE.tmp.<pid>.<n> of dead writers are removed
   (when the lock file was left behind, as such a writer leaves it), then
   per file: the existing profile is opened without following a
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
   beside it, with one line.  */

#define _GNU_SOURCE

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define BALLARUS_HAVE_SINGLE_THREADED 1
#endif
#endif

#include "runtime/ballarus.h"
#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/path_table.h"
#include "runtime/profile_io.h"
#include "runtime/safe_file.h"
#include "runtime/thread_counters.h"

/* BALLARUS_PROFILE=/dev/null switches profiling off.  Only this name: a
   FIFO, a directory or a link planted at a profile's path by someone else
   gets this run's counts beside it, with one line.  */
#define OFF_SWITCH "/dev/null"

/* PROFILE with %p -> pid and %% -> % (safe_file.h).  */
static char *expand_path(const char *tmpl) {
  const long pid = (long)getpid();
  size_t len = ballarus_sf_expand_pid(tmpl, pid, NULL, 0, NULL) + 1;
  char *out = malloc(len);
  if (out != NULL) ballarus_sf_expand_pid(tmpl, pid, out, len, NULL);
  return out;
}

static int cmp_sparse(const void *a, const void *b) {
  const ballarus_sparse_entry *x = a, *y = b;
  if (x->function != y->function) return x->function < y->function ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorts e[0, n) by (function, key), sums the counts of equal keys modulo
   2^64 and drops zero sums; returns the new count.  */
uint64_t ballarus_rt_normalise_sparse(ballarus_sparse_entry *e, uint64_t n) {
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
  if (!e->rec.counters_borrowed)
    ballarus_profile_counters_free(e->rec.counters, e->rec.n_counters,
                                   e->rec.counters_mapped);
  free(e->rec.sparse);
  free(e->rec.block_map);
  if (e->snap.snap != NULL && !e->snap.snap_live)
    ballarus_profile_counters_free(e->snap.snap, e->snap.n,
                                   e->snap.snap_mapped);
  free(e->snap.map);
  free(e->snap.nz);
  free(e->snap.pt);
  e->rec.counters = NULL;
  e->rec.sparse = NULL;
  e->rec.block_map = NULL;
  e->snap.snap = NULL;
  e->snap.map = NULL;
  e->snap.nz = NULL;
  e->snap.pt = NULL;
}

/* Appends index i to e->snap.nz; out of memory, drops the list (the
   subtraction then scans the snapshot).  */
static void note_nonzero(entry *e, uint64_t i) {
  tu_snap *s = &e->snap;
  if (s->n_nz == s->cap_nz) {
    uint64_t c = s->cap_nz == 0 ? 256 : 2 * s->cap_nz;
    uint64_t *v = c > SIZE_MAX / 8 ? NULL : realloc(s->nz, (size_t)c * 8);
    if (v == NULL) {
      free(s->nz);
      s->nz = NULL;
      s->cap_nz = s->n_nz = UINT64_MAX; /* no more notes */
      return;
    }
    s->nz = v;
    s->cap_nz = c;
  }
  s->nz[s->n_nz++] = i;
}

/* Arrays of fewer counters get no block map: a page or two.  */
#define MAP_MIN_COUNTERS (2 * BALLARUS_CHUNK_COUNTERS)

/* Whether any of the live counters c[0, n) is non-zero, reading only the
   pages the process touched.  */
static int any_counted(ballarus_rt_pagemap *pm, const uint64_t *c,
                       uint64_t n) {
  for (uint64_t lo = 0, hi; ballarus_rt_touched_run(pm, c, n, &lo, &hi);
       lo = hi)
    for (uint64_t i = lo; i < hi; i++)
      if (__atomic_load_n(&c[i], __ATOMIC_RELAXED) != 0) return 1;
  return 0;
}

/* Copies the non-zero live counters of the pages the process touched into
   the zeroed snapshot, and marks their blocks in its map; sets e->changed
   when there is one.  The rest of the snapshot stays untouched.  */
static void copy_live(entry *e, ballarus_rt_pagemap *pm) {
  const uint64_t *c = e->snap.live;
  for (uint64_t lo = 0, hi; ballarus_rt_touched_run(pm, c, e->snap.n, &lo, &hi);
       lo = hi) {
    for (uint64_t i = lo; i < hi; i++) {
      uint64_t v = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
      if (v == 0) continue;
      if (!e->snap.snap_live) e->snap.snap[i] = v;
      e->changed = 1;
      note_nonzero(e, i);
      if (e->snap.map != NULL) e->snap.map[i / BALLARUS_BLOCK_COUNTERS] = 1;
    }
  }
}

/* Whether this process has one thread: glibc's __libc_single_threaded
   (true until pthread_create first runs: no system call; a thread made
   by a raw clone() is not seen, as glibc itself does not see it), else
   /proc/self/stat's num_threads (the 18th field after the command's
   closing parenthesis); 0 when unknown.  */
static int single_threaded(void) {
#ifdef BALLARUS_HAVE_SINGLE_THREADED
  if (__libc_single_threaded) return 1;
#endif
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t r = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (r <= 0) return 0;
  buf[r] = '\0';
  const char *p = strrchr(buf, ')');
  for (int field = 2; p != NULL && field < 20; field++)
    p = strchr(p + 1, ' ');
  return p != NULL && strtol(p + 1, NULL, 10) == 1;
}

/* Whether the counters can change during this dump, found out once, when
   a large array makes a copy worth avoiding.  With every signal blocked, a
   process of one thread cannot change its counters: they are written from
   where they are counted, not from a copy (a short process's exit then
   touches no page for a snapshot); the signals stay blocked until the dump
   ends (ballarus_rt_dump_roots).  */
typedef struct {
  int stable; /* 1 stable, 0 not, -1 not known yet */
  sigset_t old;
} stability;

static int stable_state(stability *st) {
  if (st->stable >= 0) return st->stable;
  sigset_t all;
  sigfillset(&all);
  st->stable = 0;
  if (pthread_sigmask(SIG_BLOCK, &all, &st->old) != 0) return 0;
  if (single_threaded()) return st->stable = 1;
  pthread_sigmask(SIG_SETMASK, &st->old, NULL);
  return 0;
}

/* A record of n zero counters, its map all zero: nothing of it is ever
   read or written.  */
static int zero_record(ballarus_profile_record *rec, uint64_t n) {
  rec->counters = ballarus_profile_counters_alloc(n, &rec->counters_mapped);
  if (rec->counters == NULL) return -1;
  if (n >= MAP_MIN_COUNTERS) {
    rec->block_map = calloc((size_t)ballarus_block_count(n), 1);
    if (rec->block_map == NULL) return -1;
  }
  return 0;
}

/* The live counters the dump reads for d: its own, or those its module's
   thread-counter fold gave for the thread-mode range (thread_counters.h).  */
static uint64_t *tu_live(const ballarus_root *r, const ballarus_tu_desc *d) {
  if (r->tc_read != NULL && d->counters >= r->tc_lo && d->counters < r->tc_hi)
    return r->tc_read + (d->counters - r->tc_lo);
  return d->counters;
}

/* Reads the TU's counters and path tables into e->rec and e->snap, and
   sets e->rec.runs: 1 at the first dump of this process that writes the
   TU (`counted`: an earlier one did), whether its code ran or not (gcov's
   runs: every process adds one to every object it linked).  A TU none of
   whose counts is non-zero gets no snapshot: a record of zero counts
   carrying the run, or nothing once the run is counted.  Only the pages
   of counters the process touched are read (pm, rt_pages.c); the
   snapshot's blocks that hold only zeros stay untouched, marked so in its
   block map.  When nothing but this dump can change the counters
   (stable_state), the snapshot of a large array is the array itself, not
   a copy.  Returns -1 when out of memory.  */
static int snapshot_tu(entry *e, int counted, ballarus_rt_pagemap *pm,
                       stability *st) {
  const ballarus_tu_desc *d = e->root->tus[e->t];
  uint64_t *live = tu_live(e->root, d);
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
  int any = any_counted(pm, live, h.n_counters);
  if (!any && ballarus_pt_collect(d, &e->snap.pt, &e->snap.n_pt,
                                  &e->snap.cap_pt) != 0)
    return -1;
  if (!any && e->snap.n_pt == 0) {
    /* Nothing ran since the previous dump (the common case for most TUs
       of a big program): no copies.  */
    e->changed = 0;
    rec->runs = counted ? 0 : 1;
    return counted ? 0 : zero_record(rec, h.n_counters);
  }
  free(e->snap.pt);
  e->snap.pt = NULL;
  e->snap.n_pt = e->snap.cap_pt = 0;
  e->snap.live = live;
  e->snap.n = h.n_counters;
  e->snap.snap_live = h.n_counters >= MAP_MIN_COUNTERS && stable_state(st);
  e->snap.snap = e->snap.snap_live ? live
                        : ballarus_profile_counters_alloc(
                              h.n_counters, &e->snap.snap_mapped);
  if (e->snap.snap == NULL) return -1;
  const size_t nb = (size_t)ballarus_block_count(h.n_counters);
  if (h.n_counters >= MAP_MIN_COUNTERS) {
    e->snap.map = calloc(nb, 1);
    rec->block_map = malloc(nb);
    if (e->snap.map == NULL || rec->block_map == NULL) return -1;
  }
  copy_live(e, pm);
  if (e->snap.map != NULL) memcpy(rec->block_map, e->snap.map, nb);
  /* The record borrows the snapshot instead of copying it (a path-mode TU
     holds megabytes of dense counters, and on this kind of machine every
     fresh page costs a fault of ~10 us; the block map keeps its untouched
     pages untouched down to the file's holes): nothing writes into it (the
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
    rec->n_sparse = ballarus_rt_normalise_sparse(s, np);
    /* Non-zero slots were read, even if they cancel in the sum (a +1 in one
       generation, its -1 in another): subtracting them matters.  */
    e->changed = 1;
  }
  /* One run per process, however many dumps (gcov's run_counted): later
     dumps add counts, not runs.  */
  rec->runs = counted ? 0 : 1;
  return 0;
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
    ballarus_rt_warn(
        "out of memory for path tables: %lld path counts were not recorded "
        "(their paths are missing from the profile)",
        (long long)v);
  }
}

static void dump_roots(ballarus_root **roots, size_t n_roots, int at_exit,
                       stability *st);

/* Dumps the TUs of `roots`.  Called with the master lock held.  `at_exit`:
   no later dump will come (exit, dlclose, abort), so what cannot be
   written is lost, and the messages say so.  */
void ballarus_rt_dump_roots(ballarus_root **roots, size_t n_roots,
                            int at_exit) {
  stability st;
  st.stable = -1;
  dump_roots(roots, n_roots, at_exit, &st);
  if (st.stable == 1) pthread_sigmask(SIG_SETMASK, &st.old, NULL);
}

static void dump_roots(ballarus_root **roots, size_t n_roots, int at_exit,
                       stability *st) {
  report_lost(roots, n_roots);
  /* Per-thread copies first: what threads counted goes into the shared
     counters read below.  */
  for (size_t r = 0; r < n_roots; r++)
    if (roots[r]->tc_sync != NULL)
      roots[r]->tc_read = roots[r]->tc_sync(BALLARUS_TC_FOLD);
  uint64_t total = 0;
  for (size_t r = 0; r < n_roots; r++) total += roots[r]->n_tus;
  if (total == 0) return;
  entry *es = calloc(total, sizeof *es);
  char **expanded = calloc(n_roots, sizeof *expanded);
  size_t n = 0;
  ballarus_rt_pagemap pm;
  ballarus_rt_pagemap_open(&pm);
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
      if (snapshot_tu(e, rt->counted[t], &pm, st) != 0) {
        free_entry(e);
        goto oom;
      }
      if (!e->changed && e->rec.runs == 0) {
        free_entry(e);
        continue;
      }
      n++;
    }
  }
  ballarus_rt_pagemap_close(&pm);
  qsort(es, n, sizeof *es, cmp_entry);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && es[j].dir_len == es[i].dir_len &&
           strncmp(es[j].dest, es[i].dest, es[i].dir_len) == 0)
      j++;
    ballarus_rt_dump_dir(&es[i], j - i, at_exit);
    i = j;
  }
  for (size_t i = 0; i < n; i++) free_entry(&es[i]);
  for (size_t r = 0; r < n_roots; r++) free(expanded[r]);
  free(expanded);
  free(es);
  ballarus_rt_free_read_buf();
  return;

oom:
  ballarus_rt_warn("out of memory; profile not written (counts %s)",
                   at_exit ? "lost" : "kept for the next dump");
  ballarus_rt_pagemap_close(&pm);
  if (es != NULL)
    for (size_t i = 0; i < n; i++) free_entry(&es[i]);
  if (expanded != NULL)
    for (size_t r = 0; r < n_roots; r++) free(expanded[r]);
  free(expanded);
  free(es);
}

/* Dumps every root of the chain `m`.  Called with m->lock held.  */
void ballarus_rt_dump_chain(ballarus_master *m, int at_exit) {
  size_t n = 0;
  for (ballarus_root *r = m->root; r != NULL; r = r->next) n++;
  ballarus_root **all = calloc(n == 0 ? 1 : n, sizeof *all);
  if (all == NULL) {
    ballarus_rt_warn("out of memory; profile not written (counts %s)",
                     at_exit ? "lost" : "kept for the next dump");
    return;
  }
  n = 0;
  for (ballarus_root *r = m->root; r != NULL; r = r->next) all[n++] = r;
  ballarus_rt_dump_roots(all, n, at_exit);
  free(all);
}
