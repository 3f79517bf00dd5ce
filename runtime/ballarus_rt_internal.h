/* ballarus_rt_internal.h — what the runtime's files share: the master and
   root structures, the dump's entries, and the functions and state one file
   uses of another (hidden: every module keeps its own copy).  */
#ifndef BALLARUS_RT_INTERNAL_H
#define BALLARUS_RT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "runtime/ballarus_format.h"
#include "runtime/path_table.h"
#include "runtime/profile_io.h"

#define BALLARUS_HIDDEN __attribute__((visibility("hidden")))

/* gcov's __gcov_dump(): dumps every module of this module's master unless
   the master is in the gcov-dumped state, then enters it (no dump at exit,
   no further gcov dump) until ballarus_rt_gcov_reset().  */
BALLARUS_HIDDEN void ballarus_rt_gcov_dump(void);

/* gcov's __gcov_reset(): __ballarus_reset(), and leaves the gcov-dumped
   state.  */
BALLARUS_HIDDEN void ballarus_rt_gcov_reset(void);

/* ---------------------------------------------------------------------- */
/* Shared structures.  Their layout is a contract between copies of the
   runtime in one process: change it only together with MASTER_VERSION.
   Version 7: roots whose tc_sync returns the array a dump reads for the
   thread-mode range (tc_read).
   Version 6: a process adds one run to every TU it linked: roots with
   per-TU `counted` flags instead of `listed` flags and runs_written, the
   master without gcov_api.
   Version 5: roots with the per-thread counter hook (thread_counters.h).
   Version 4: the master's gcov-API state, roots with the epoch and
   runs_written.  Version 3: roots with per-TU homes and `listed` flags and the override
   path (profiles per object).  Version 2: descriptors with path tables,
   roots with path_lost, and the path table layout of path_table.c, which
   one copy's dump reads in another module's memory.  */

#define MASTER_VERSION 7u

typedef struct ballarus_root ballarus_root;

typedef struct ballarus_master {
  uint32_t version; /* MASTER_VERSION */
  uint32_t size;    /* sizeof(ballarus_master) */
  pthread_mutex_t lock;
  ballarus_root *root; /* chain of registered modules */
  int gcov_dumped;     /* __gcov_dump() ran, no __gcov_reset() since: no
                          more dumps but __ballarus_dump() (gcov_api.c) */
} ballarus_master;

struct ballarus_root {
  ballarus_root *next, *prev;
  ballarus_master *master; /* the master this root is chained into */
  const ballarus_tu_desc **tus; /* validated descriptors */
  uint64_t n_tus;
  const char **homes;  /* per TU: its absolute profile path (in its
                          metadata, or `fallback`) */
  unsigned char *counted; /* per TU: this process's run is in its profile
                             (gcov's run_counted, per TU: a dump that could
                             not write it leaves it to the next one) */
  char *override;      /* $BALLARUS_PROFILE, absolute (may hold %p), or NULL */
  char *fallback;      /* <start-up cwd>/ballarus.profile, for TUs without a
                          home (hand-made TUs), or NULL */
  int mark;            /* scratch, under master->lock */
  uint64_t *path_lost; /* the module's count of unrecorded path counts */
  volatile uint64_t *epoch; /* the module's __ballarus_epoch */
  /* update=thread (thread_counters.h): the module's ballarus_tc_sync, and
     its thread-mode counter range, which only that function resets.  */
  uint64_t *(*tc_sync)(int op);
  uint64_t *tc_lo, *tc_hi;
  uint64_t *tc_read; /* what the dump reads for [tc_lo, tc_hi): the
                        range, or what the latest fold returned */
};


/* One TU's contribution to a dump.  */
typedef struct {
  uint64_t *live;     /* the TU's counters */
  uint64_t *snap;     /* values read, subtracted after a successful write
                         (ballarus_profile_counters_alloc), or `live`
                         itself (snap_live) when nothing can change it
                         during the dump */
  int snap_mapped, snap_live;
  unsigned char *map; /* snap's block map: 0 where snap holds only zeros,
                         untouched; or NULL (every block read) */
  uint64_t *nz;       /* the indices of snap's non-zero counters, n_nz of
                         them; NULL (out of memory): scan snap */
  uint64_t n_nz, cap_nz;
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

/* Registration (rt_register.c).  */

/* Messages: formatted into a buffer and written with one write(2), so they
   do not depend on stdio state at exit or after fork.  */
BALLARUS_HIDDEN void ballarus_rt_warn(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* BALLARUS_VERBOSE.  */
BALLARUS_HIDDEN extern int ballarus_rt_verbose;
/* BALLARUS_TEST, read once at start: the test this process belongs to
   (named runs, ballarus_format.h); size 0 when unnamed.  */
BALLARUS_HIDDEN extern char ballarus_rt_test_name[];
BALLARUS_HIDDEN extern uint32_t ballarus_rt_test_name_size;
/* Seconds, BALLARUS_LOCK_TIMEOUT.  */
BALLARUS_HIDDEN extern double ballarus_rt_lock_timeout;
/* The lock file descriptor of a dump in progress, closed in a forked
   child.  */
BALLARUS_HIDDEN extern volatile int ballarus_rt_busy_lock_fd;

/* The dump (rt_dump.c).  */

/* Dumps the TUs of `roots`.  Called with the master lock held.  `at_exit`:
   no later dump will come (exit, dlclose, abort), so what cannot be
   written is lost, and the messages say so.  */
BALLARUS_HIDDEN void ballarus_rt_dump_roots(ballarus_root **roots,
                                            size_t n_roots, int at_exit);

/* Dumps every root of the chain `m`.  Called with m->lock held.  */
BALLARUS_HIDDEN void ballarus_rt_dump_chain(ballarus_master *m, int at_exit);

/* Sorts e[0, n) by (function, key), sums the counts of equal keys modulo
   2^64 and drops zero sums; returns the new count.  */
BALLARUS_HIDDEN uint64_t ballarus_rt_normalise_sparse(ballarus_sparse_entry *e,
                                                      uint64_t n);

/* One directory of a dump (rt_dump_dir.c).  */

/* Dumps entries e[0, n), all in one directory.  */
BALLARUS_HIDDEN void ballarus_rt_dump_dir(entry *e, size_t n, int at_exit);

/* Frees the buffer that the dump's reads of existing profiles reuse.  */
BALLARUS_HIDDEN void ballarus_rt_free_read_buf(void);

/* Forgets that buffer without unmapping it: in a fork child.  */
BALLARUS_HIDDEN void ballarus_rt_forget_read_buf(void);

/* Reads the existing profile open as fd (st: its fstat) into that buffer
   and parses it (rt_read_old.c): 0, -1 (damaged) or
   BALLARUS_PROFILE_UNREAD (a read error or no memory).  known[0, n_known):
   this dump's own metadata blobs, compared in place rather than read.  */
BALLARUS_HIDDEN int ballarus_rt_read_profile(int fd, const struct stat *st,
                                             const unsigned char *const *known,
                                             size_t n_known,
                                             ballarus_profile *out, char *err,
                                             size_t errlen);

/* The buffer's bytes, as the last ballarus_rt_read_profile left them.  */
BALLARUS_HIDDEN const unsigned char *ballarus_rt_read_buf(void);

/* Touched pages (rt_pages.c).  */

/* A reader of /proc/self/pagemap with a window of entries.  */
typedef struct {
  int fd;         /* -1: unknown, every page counts as touched; -2: not
                     opened yet (opened at the first array large enough
                     to be worth it) */
  uintptr_t first; /* page number of e[0] */
  size_t n;       /* valid entries in e */
  uint64_t e[512];
} ballarus_rt_pagemap;

BALLARUS_HIDDEN void ballarus_rt_pagemap_open(ballarus_rt_pagemap *pm);
BALLARUS_HIDDEN void ballarus_rt_pagemap_close(ballarus_rt_pagemap *pm);

/* The next run c[*lo, *hi) of the counters c[0, n) from *lo on that lie on
   pages the process touched (present or swapped out); 0 when none is left.
   The counters in between hold their initial zeros.  */
BALLARUS_HIDDEN int ballarus_rt_touched_run(ballarus_rt_pagemap *pm,
                                            const uint64_t *c, uint64_t n,
                                            uint64_t *lo, uint64_t *hi);

/* The store (rt_store.c).  */

/* Takes the lock of the directory dfd (its lock file of this effective
   user, named into name[name_len], which stays for the next dump: it holds
   the redo log), polling up to `timeout` seconds.  Returns the lock file's
   descriptor, or -1 with *why set (timeout: a holder that is stopped or
   very slow; or the lock file unusable).  *created: this call created the
   lock file.  */
BALLARUS_HIDDEN int ballarus_rt_lock_dir(int dfd, double timeout, char *name,
                                         size_t name_len, int *created,
                                         char *why, size_t len);

/* Releases it (explicitly unlocked: a forked child may share the
   descriptor); the file stays.  */
BALLARUS_HIDDEN void ballarus_rt_unlock_dir(int fd);

/* The redo log (rt_redo.c): the new bytes of a dump's profiles, built in
   memory, committed into the lock file, then written in place.  */
typedef struct {
  unsigned char *buf; /* the entries, lent ranges as pointers */
  uint64_t used, cap; /* bytes of buf */
  uint64_t size;      /* bytes of the entries as written */
  uint32_t n_entries;
  uint64_t entry_at, range_at; /* the last entry and range in buf */
  uint64_t *lent_at;           /* the lent ranges in buf */
  size_t n_lent, lent_cap;
  const void *lend_lo; /* memory whose bytes are lent, not copied */
  uint64_t lend_n;
  int failed; /* out of memory */
} ballarus_redo;

/* Starts the entry of file `name` of the directory, new_size bytes once
   written; new_file: a file this dump creates, written directly, not
   through the log (no ranges: a replay removes what its killed writer
   left of it; mode is recorded, unused).  -1 when out of memory.  */
BALLARUS_HIDDEN int ballarus_redo_begin_file(ballarus_redo *r,
                                             const char *name,
                                             uint64_t new_size, int new_file,
                                             int mode);
/* Adds to the entry: bytes [off, off + n) become p[0, n) (p NULL: zeros).
   Ranges that continue each other are joined.  */
BALLARUS_HIDDEN int ballarus_redo_add(ballarus_redo *r, uint64_t off,
                                      const void *p, uint64_t n);
/* Bytes added from p[0, n) (the dump's read buffer) are not copied but
   lent: they must stay as they are until the log is applied or owned.  */
BALLARUS_HIDDEN void ballarus_redo_lend(ballarus_redo *r, const void *p,
                                        uint64_t n);
/* Copies the lent bytes into the log (before the memory lent is reused);
   lends nothing more.  -1 when out of memory.  */
BALLARUS_HIDDEN int ballarus_redo_own(ballarus_redo *r);
/* Sets the entry's new size.  */
BALLARUS_HIDDEN void ballarus_redo_set_size(ballarus_redo *r,
                                            uint64_t new_size);
BALLARUS_HIDDEN void ballarus_redo_free(ballarus_redo *r);
/* Writes the log into the lock file lfd, committed.  */
BALLARUS_HIDDEN int ballarus_redo_commit(int lfd, const ballarus_redo *r);
/* Applies the entry at r->buf + *at (moved past it) to *fd (opened or
   created by name when -1), a file of cur_size bytes; *wrote: whether any
   byte was written.  */
BALLARUS_HIDDEN int ballarus_redo_apply(int dfd, const ballarus_redo *r,
                                        uint64_t *at, int *fd,
                                        uint64_t cur_size, const char *name,
                                        int *wrote, char *err, size_t errlen);
/* Moves *at past the entry there (a new file's, written apart).  */
BALLARUS_HIDDEN int ballarus_redo_skip(const ballarus_redo *r, uint64_t *at);
/* Marks the lock file: temporary files are being made (a profile that
   cannot be written in place is replaced).  */
BALLARUS_HIDDEN int ballarus_redo_set_replacing(int lfd);
/* Marks the log done (log_size: its entries' bytes, cut back when large).  */
BALLARUS_HIDDEN void ballarus_redo_clear(int lfd, uint64_t log_size);
/* Called with the lock just taken (created: the lock file is new): a
   committed log left by a holder killed mid-dump is replayed in dfd (dir:
   its path, for messages), a torn one dropped.  Returns 1 when temporary
   files of a dead writer may be lying about (a holder killed while
   replacing a profile, or an older runtime's lock file left behind).  */
BALLARUS_HIDDEN int ballarus_redo_recover(int dfd, const char *dir, int lfd,
                                          int created);
/* What a dump writes of a profile (rt_inplace.c).  The shape of a file:
   its records' stamps and sizes, in file order.  */
typedef struct {
  uint64_t stamp, meta_size, n_counters, n_sparse;
} ballarus_rt_shape_rec;
typedef struct {
  ballarus_rt_shape_rec *rec;
  uint32_t n;
} ballarus_rt_shape;
BALLARUS_HIDDEN int ballarus_rt_shape_of(const ballarus_profile *p,
                                         ballarus_rt_shape *s);
BALLARUS_HIDDEN void ballarus_rt_shape_free(ballarus_rt_shape *s);
/* Adds the entry of the existing file `name` to the redo log: merged (the
   file's profile, of old_size bytes as read into `old`, holes zero, after
   mine, this dump's profile, was merged into it; its counters may have
   been added into `old` in place) written over it.  With the file's
   records where they were (old_shape), only the bytes that differ:
   metadata never, the counters mine counted in, the rest compared; else
   every piece, zero runs as zeros to punch.  */
BALLARUS_HIDDEN int ballarus_rt_diff(ballarus_redo *redo, const char *name,
                                     const ballarus_profile *merged,
                                     const ballarus_profile *mine,
                                     const ballarus_rt_shape *old_shape,
                                     const unsigned char *old,
                                     uint64_t old_size, char *err,
                                     size_t errlen);
/* Test-only: SIGKILL when BALLARUS_TEST_KILL_AT is `point`.  */
BALLARUS_HIDDEN void ballarus_redo_test_kill(const char *point);

/* Writes `mine` as a new file NAME.<pid> (or NAME.<pid>.<k>) beside NAME,
   created by safe_file.h (nothing existing is opened) with NAME's mode
   when NAME is a file of ours, else gcov's 0666 & ~umask.  On success
   *out is its malloc'd absolute path (`path` is NAME's).  */
BALLARUS_HIDDEN int ballarus_rt_write_beside(int dfd, const char *path,
                                             const char *name,
                                             const ballarus_profile *mine,
                                             char **out, char *err,
                                             size_t errlen);

/* Renames the damaged file `name` of dfd, untouched, to NAME.corrupt (or
   NAME.corrupt.<pid>.<k>), the name chosen into kept[len].  Returns 0 or
   the errno of the failure.  */
BALLARUS_HIDDEN int ballarus_rt_rename_aside(int dfd, const char *name,
                                             char *kept, size_t len);

#endif /* BALLARUS_RT_INTERNAL_H */
