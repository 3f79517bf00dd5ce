/* rt_dump_dir.c — one directory of a dump (rt_dump.c): its lock
   (rt_store.c), the removal of dead writers' temporary files, and per
   file the transaction: the existing profile opened without following
   a link, read only if it is a regular file of this user, validated,
   merged with this run's counts and written (or, when all it gets is this
   process's run, that run added in place); or this run's counts written
   beside it, or a damaged file set aside.  How the existing profile is
   read: rt_read_old.c.  */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/ballarus_rt_internal.h"
#include "runtime/profile_io.h"
#include "runtime/safe_file.h"

/* Subtracts what e read from the live counters: it is in a file now.
   Only the counters it read as non-zero (its list, or its map's blocks).  */
static void subtract(entry *e) {
  const uint64_t per = BALLARUS_BLOCK_COUNTERS;
  if (e->snap.nz != NULL) {
    for (uint64_t k = 0; k < e->snap.n_nz; k++) {
      const uint64_t c = e->snap.nz[k];
      __atomic_fetch_sub(&e->snap.live[c], e->snap.snap[c], __ATOMIC_RELAXED);
    }
  }
  for (uint64_t c = 0; e->snap.nz == NULL && c < e->snap.n; c++) {
    if (e->snap.map != NULL && !e->snap.map[c / per]) {
      c += per - 1 - c % per;
      continue;
    }
    if (e->snap.snap[c] != 0)
      __atomic_fetch_sub(&e->snap.live[c], e->snap.snap[c], __ATOMIC_RELAXED);
  }
  for (uint64_t k = 0; k < e->snap.n_pt; k++)
    __atomic_fetch_sub(e->snap.pt[k].live, e->snap.pt[k].count,
                       __ATOMIC_RELAXED);
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
   no counts (only runs of TUs that did not run).  */
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
  int any_changed;
  /* In the redo log: its entry, the file open for writing (-1: to be
     created) and its size, the records dumped.  */
  int in_log, fd;
  uint64_t cur_size;
  uint32_t n_records;
  /* A new file: written after the log's commit, from these (the merged
     profile, and this run's, which it may borrow from), then freed.  */
  ballarus_profile *fresh;
  int mode;
} fgroup;

/* A directory's dump: its lock file and redo log.  */
typedef struct {
  int lfd;
  ballarus_redo redo;
  int replacing; /* the lock file says temporary files are being made */
} dump_ctx;

/* Calls body for every non-zero counter v = r->counters[c] of r, reading
   only the blocks its map marks.  */
#define FOR_EACH_COUNT(r, c, v, ...)                                       \
  for (uint64_t c = 0; c < (r)->n_counters; c++) {                        \
    if (!ballarus_block_live((r)->block_map, c)) {                         \
      c += BALLARUS_BLOCK_COUNTERS - 1 - c % BALLARUS_BLOCK_COUNTERS;      \
      continue;                                                            \
    }                                                                      \
    const uint64_t v = (r)->counters[c];                                   \
    if (v != 0) __VA_ARGS__                                                \
  }

/* Named runs: a copy of mine's counts under the process's test name, one
   named record per record with a non-zero count (a TU the test did not
   execute costs nothing).  mine's records are sorted by stamp.  */
static int add_named(ballarus_profile *mine) {
  const uint32_t len = ballarus_rt_test_name_size;
  if (len == 0) return 0;
  mine->named = calloc(mine->n_records + 1, sizeof *mine->named);
  if (mine->named == NULL) return -1;
  for (uint32_t i = 0; i < mine->n_records; i++) {
    const ballarus_profile_record *r = &mine->records[i];
    uint64_t nz = 0;
    FOR_EACH_COUNT(r, c, v, { nz++; });
    if (nz == 0 && r->n_sparse == 0) continue;
    ballarus_named_record *n = &mine->named[mine->n_named++];
    n->name = malloc(len + 1);
    n->dense = malloc(nz == 0 ? 1 : (size_t)nz * sizeof *n->dense);
    n->sparse = malloc(r->n_sparse == 0 ? 1
                                        : (size_t)r->n_sparse * sizeof *n->sparse);
    if (n->name == NULL || n->dense == NULL || n->sparse == NULL) return -1;
    memcpy(n->name, ballarus_rt_test_name, len + 1);
    n->name_size = len;
    n->stamp = r->stamp;
    n->runs = r->runs;
    FOR_EACH_COUNT(r, c, v, {
      n->dense[n->n_dense++] = (ballarus_named_entry){c, v};
    });
    if (r->n_sparse > 0)
      memcpy(n->sparse, r->sparse, (size_t)r->n_sparse * sizeof *n->sparse);
    n->n_sparse = r->n_sparse;
  }
  return 0;
}

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
    if (e->rec.runs > 0) mine->runs = 1;
    ballarus_profile_record *last =
        mine->n_records > 0 ? &mine->records[mine->n_records - 1] : NULL;
    if (last != NULL && last->stamp == e->rec.stamp &&
        last->n_counters == e->rec.n_counters) {
      /* Never into another entry's snapshot, which it subtracts.  */
      if (ballarus_profile_record_add_counters(last, &e->rec) != 0) return -1;
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
        last->n_sparse = ballarus_rt_normalise_sparse(s, total);
      }
      if (e->rec.runs > last->runs) last->runs = e->rec.runs;
      continue;
    }
    mine->records[mine->n_records++] = e->rec;
    e->rec.counters = NULL;
    e->rec.sparse = NULL;
    e->rec.block_map = NULL;
  }
  return add_named(mine);
}

typedef struct {
  const char *path;
} replace_ctx;

static void on_replace(void *ctx, const ballarus_profile_record *old_rec,
                       const ballarus_profile_record *new_rec) {
  (void)old_rec;
  if (!ballarus_rt_verbose) return;
  ballarus_meta_names n;
  if (ballarus_meta_get_names(new_rec->metadata, new_rec->meta_size, &n) != 0)
    return;
  if (n.object[0] != '\0')
    ballarus_rt_warn(
        "%s (object %s): overwriting the profile data of an earlier build "
        "in %s",
        n.source, n.object, ((replace_ctx *)ctx)->path);
  else
    ballarus_rt_warn(
        "%s: overwriting the profile data of an earlier build in %s", n.source,
        ((replace_ctx *)ctx)->path);
}

/* A failed file: one line naming it, the reason, and what is lost.  */
static void report_failure(fgroup *g, const char *reason, int at_exit) {
  char lost[512];
  what_is_lost(g->e, g->n, lost, sizeof lost);
  if (lost[0] == '\0') return; /* no counts, only runs: kept silent */
  ballarus_rt_warn("%s: %s; %s %s", g->path, reason, lost,
                   at_exit ? "are lost" : "are kept for the next dump");
}

/* After a file was written (or this run's counts beside it).  */
static void done_group(fgroup *g) {
  for (size_t i = 0; i < g->n; i++) {
    if (g->e[i].changed) subtract(&g->e[i]);
    if (g->e[i].rec.runs > 0) g->e[i].root->counted[g->e[i].t] = 1;
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
  if (!g->any_changed) {
    /* No counts, only the run: not worth a stray file.  */
    ballarus_profile_free(&mine);
    return;
  }
  if (ballarus_rt_write_beside(dfd, g->path, g->name, &mine, &written, err, sizeof err) !=
      0) {
    char reason[1536];
    snprintf(reason, sizeof reason, "%s; %s", why, err);
    report_failure(g, reason, at_exit);
  } else {
    ballarus_rt_warn("%s: %s; this run's counts written to %s instead", g->path,
                     why, written);
    done_group(g);
  }
  free(written);
  ballarus_profile_free(&mine);
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
  ballarus_rt_warn("%s: damaged (%s); kept as %.*s%s, a new profile started",
                   g->path, problem, (int)(strlen(g->path) - strlen(g->name)),
                   g->path, kept);
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

/* Adds this process's run to `old`, read from the file open as `fd`, in
   place, when that is all the group brings (no counts) and the file is one
   record of the group's build with no other name (a hard link would see
   the change): the cheap case of every object a process linked but did
   not run.  Returns 0 when done; -1 leaves the file to the rewrite.  */
static int add_run_in_place(int fd, const struct stat *st, fgroup *g,
                            ballarus_profile *old) {
  if (g->any_changed || old->n_records != 1 || st->st_nlink != 1) return -1;
  ballarus_profile_record *r = &old->records[0];
  for (size_t i = 0; i < g->n; i++)
    if (g->e[i].rec.stamp != r->stamp) return -1;
  const uint64_t runs = r->runs, file_runs = old->runs;
  r->runs = ballarus_sat_add(r->runs, 1);
  old->runs = r->runs;
  char err[256];
  if (ballarus_profile_write_runs_in_place(fd, old, err, sizeof err) == 0)
    return 0;
  r->runs = runs;
  old->runs = file_runs;
  return -1;
}

/* Opens the existing profile g->name: for writing (in place), or for
   reading when this user may not write it (it is then replaced).  -1 with
   errno when it cannot be opened.  */
static int open_profile(int dfd, const fgroup *g, int *writable) {
  const int flags = O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  int fd = openat(dfd, g->name, O_RDWR | flags);
  *writable = fd >= 0;
  if (fd < 0 && (errno == EACCES || errno == EROFS || errno == ETXTBSY ||
                  errno == EISDIR))
    fd = openat(dfd, g->name, O_RDONLY | flags);
  return fd;
}

/* Why the open file fd may not be read, into why; 0 when it may.  */
static int unusable(int fd, struct stat *st, char *why, size_t len) {
  if (fstat(fd, st) != 0)
    snprintf(why, len, "cannot stat (%s)", strerror(errno));
  else if (!S_ISREG(st->st_mode))
    snprintf(why, len, "is not a regular file, not read");
  else if (st->st_uid != geteuid())
    snprintf(why, len,
             "belongs to uid %u, not to this user (uid %u): not read",
             (unsigned)st->st_uid, (unsigned)geteuid());
  else
    return 0;
  return -1;
}

/* Reads and checks the existing profile open as fd into *old.  Returns 0,
   2 when it was damaged and set aside (*old empty: a new file starts),
   1 when the run was added in place and g is done, or -1 when g was
   handled otherwise (beside, or a failure reported).  */
static int read_existing(int dfd, fgroup *g, int fd, const struct stat *st,
                         int writable, ballarus_profile *old, int at_exit) {
  char why[1200], err[1024];
  /* Our own TUs' blobs need no second hashing where the file holds them
     byte for byte.  */
  const unsigned char **known = calloc(g->n + 1, sizeof *known);
  size_t n_known = 0;
  if (known != NULL)
    for (size_t i = 0; i < g->n; i++) known[n_known++] = g->e[i].rec.metadata;
  int rc = ballarus_rt_read_profile(fd, st, known, n_known, old, err,
                                    sizeof err);
  free(known);
  if (rc == 0 && check_own_builds(g, old, err, sizeof err) != 0) {
    ballarus_profile_free(old);
    rc = -1;
  }
  if (rc == 0 && writable && add_run_in_place(fd, st, g, old) == 0) {
    if (ballarus_rt_verbose) ballarus_rt_warn("added a run to %s", g->path);
    done_group(g);
    ballarus_profile_free(old);
    return 1;
  }
  if (rc == BALLARUS_PROFILE_UNREAD) {
    /* Not known to be damaged: left alone.  */
    snprintf(why, sizeof why, "cannot be read (%s)", err);
    dump_beside(dfd, g, why, at_exit);
    return -1;
  }
  if (rc != 0) {
    if (set_aside(dfd, g, err, at_exit) != 0) return -1;
    memset(old, 0, sizeof *old);
    return 2;
  }
  return 0;
}

/* Replaces the file this user may read but not write by the merged
   profile: a temporary file renamed over it, the lock file marked first
   (a writer killed meanwhile leaves the temporary file).  */
static void replace_file(int dfd, dump_ctx *d, fgroup *g,
                         const ballarus_profile *merged, int mode,
                         int at_exit) {
  char why[1200], err[1024];
  if (!d->replacing) d->replacing = ballarus_redo_set_replacing(d->lfd) == 0;
  if (ballarus_profile_write_at(dfd, g->name, merged, mode,
                                BALLARUS_WRITE_EXCHANGE |
                                    BALLARUS_WRITE_TRUSTED,
                                err, sizeof err) != 0) {
    snprintf(why, sizeof why, "cannot write (%s)", err);
    report_failure(g, why, at_exit);
  } else {
    if (ballarus_rt_verbose)
      ballarus_rt_warn("dumped %u TU records to %s", g->n_records, g->path);
    done_group(g);
  }
}

/* A new file: its entry in the redo log names it (a writer killed after
   the log's commit leaves the file to be removed), and the merged profile
   and this run's (which it may borrow from) are kept for finish_dump,
   which writes the file directly: its bytes need not be logged, there
   were no earlier counts to lose.  */
static void keep_new(dump_ctx *d, fgroup *g, ballarus_profile *merged,
                     ballarus_profile *mine, int mode, int at_exit) {
  g->fresh = calloc(2, sizeof *g->fresh);
  if (g->fresh == NULL ||
      ballarus_redo_begin_file(&d->redo, g->name, 0, 1, mode) != 0) {
    free(g->fresh);
    g->fresh = NULL;
    report_failure(g, "out of memory", at_exit);
    return;
  }
  g->fresh[0] = *merged;
  g->fresh[1] = *mine;
  memset(merged, 0, sizeof *merged);
  memset(mine, 0, sizeof *mine);
  g->mode = mode;
  g->in_log = 1;
}

/* The first half of the transaction on one file, with the directory
   locked: the existing profile read and checked, this run's counts merged
   into it, and what changed added to the redo log (written by
   finish_dump); or the group handled otherwise.  */
static void dump_file(int dfd, dump_ctx *d, fgroup *g, int at_exit) {
  ballarus_profile old;
  memset(&old, 0, sizeof old);
  int mode = -1, writable = 0;
  char why[1200];
  char err[1024];
  struct stat st;
  /* The read buffer is about to be reused: the log's bytes lent from it
     are copied first (out of memory, the log is marked failed and never
     written).  */
  (void)ballarus_redo_own(&d->redo);
  int fd = open_profile(dfd, g, &writable);
  if (fd < 0 && errno != ENOENT) {
    if (errno == ELOOP)
      snprintf(why, sizeof why, "is a symbolic link, not read");
    else
      snprintf(why, sizeof why, "cannot be opened (%s)", strerror(errno));
    dump_beside(dfd, g, why, at_exit);
    return;
  }
  if (fd >= 0) {
    if (unusable(fd, &st, why, sizeof why) != 0) {
      close(fd);
      dump_beside(dfd, g, why, at_exit);
      return;
    }
    mode = (int)(st.st_mode & 07777);
    /* A file with another name is replaced, not written in place: the
       other name keeps its bytes.  */
    if (st.st_nlink != 1) writable = 0;
    const int rc = read_existing(dfd, g, fd, &st, writable, &old, at_exit);
    if (rc != 0 || !writable) {
      close(fd); /* done, damaged and set aside, or to be replaced */
      fd = -1;
    }
    if (rc == 2)
      writable = 1; /* a new file, of the damaged one's mode */
    else if (rc != 0)
      return;
  }
  ballarus_rt_shape shape = {NULL, 0};
  ballarus_profile mine;
  int failed = fd >= 0 && ballarus_rt_shape_of(&old, &shape) != 0;
  if (failed || build_profile(g, &mine) != 0) {
    if (!failed) ballarus_profile_free(&mine);
    ballarus_profile_free(&old);
    ballarus_rt_shape_free(&shape);
    if (fd >= 0) close(fd);
    report_failure(g, "out of memory", at_exit);
    return;
  }
  g->n_records = mine.n_records;
  replace_ctx ctx = {g->path};
  if (ballarus_profile_update(&old, &mine, on_replace, &ctx, err,
                              sizeof err) != 0) {
    snprintf(why, sizeof why, "cannot merge into it (%s)", err);
    report_failure(g, why, at_exit); /* the live counters keep the counts */
  } else if (!writable && mode >= 0) {
    replace_file(dfd, d, g, &old, mode, at_exit);
  } else if (fd < 0) {
    keep_new(d, g, &old, &mine, mode, at_exit);
  } else if (ballarus_rt_diff(&d->redo, g->name, &old, &mine, &shape,
                              ballarus_rt_read_buf(), (uint64_t)st.st_size, err,
                              sizeof err) != 0) {
    snprintf(why, sizeof why, "cannot write (%s)", err);
    report_failure(g, why, at_exit);
  } else {
    g->in_log = 1;
    g->fd = fd;
    g->cur_size = (uint64_t)st.st_size;
    fd = -1;
  }
  if (fd >= 0) close(fd);
  ballarus_rt_shape_free(&shape);
  ballarus_profile_free(&mine);
  ballarus_profile_free(&old);
}

/* The second half: the redo log committed into the lock file, each
   group's entry written in place, the log cleared.  A file of which part
   was written when the rest failed is left to the next holder, which
   replays the log.  */
static void finish_dump(int dfd, dump_ctx *d, fgroup *gs, size_t ng,
                        int at_exit) {
  char why[1400], err[1024];
  int keep_log = 0, committed = 0;
  if (d->redo.n_entries > 0) {
    if (d->redo.failed)
      snprintf(why, sizeof why, "out of memory");
    else if (ballarus_redo_commit(d->lfd, &d->redo) != 0)
      snprintf(why, sizeof why, "cannot write its directory's lock file (%s)",
               strerror(errno));
    else
      committed = 1;
  }
  if (committed) ballarus_redo_test_kill("committed");
  uint64_t at = 0;
  for (size_t i = 0; i < ng; i++) {
    fgroup *g = &gs[i];
    if (!g->in_log) continue;
    int wrote = 0;
    if (!committed) {
      report_failure(g, why, at_exit);
    } else if (g->fresh != NULL
                   ? ballarus_redo_skip(&d->redo, &at) == 0 &&
                         ballarus_profile_write_new(
                             dfd, g->name, &g->fresh[0], g->mode,
                             BALLARUS_WRITE_TRUSTED, &wrote, err,
                             sizeof err) == 0
                   : ballarus_redo_apply(dfd, &d->redo, &at, &g->fd,
                                         g->cur_size, g->name, &wrote, err,
                                         sizeof err) == 0) {
      if (ballarus_rt_verbose)
        ballarus_rt_warn("dumped %u TU records to %s", g->n_records, g->path);
      done_group(g);
    } else if (!wrote || g->fresh != NULL) {
      if (wrote) unlinkat(dfd, g->name, 0); /* a new file, incomplete */
      snprintf(why, sizeof why, "cannot write (%s)", err);
      report_failure(g, why, at_exit);
    } else {
      ballarus_rt_warn("%s: cannot write (%s); the next dump completes it",
                       g->path, err);
      keep_log = 1;
      done_group(g);
    }
    if (g->fd >= 0) close(g->fd);
    g->fd = -1;
    if (g->fresh != NULL) {
      ballarus_profile_free(&g->fresh[0]);
      ballarus_profile_free(&g->fresh[1]);
      free(g->fresh);
      g->fresh = NULL;
    }
  }
  if (committed) ballarus_redo_test_kill("applied");
  if ((committed && !keep_log) || (!committed && d->replacing))
    ballarus_redo_clear(d->lfd, d->redo.size);
}

typedef struct {
  const char *dir; /* the directory's path, dir_len bytes */
  size_t dir_len;
} orphan_ctx;

static void on_orphan(void *ctx, const char *name, long pid) {
  const orphan_ctx *c = ctx;
  if (ballarus_rt_verbose)
    ballarus_rt_warn(
        "removed %.*s/%s, left by process %ld which died writing it",
        (int)c->dir_len, c->dir, name, pid);
}

/* Removes temporary files NAME.tmp.<pid>.<n> of the group's files left by
   writers that died (killed mid-dump): regular files of this user whose
   pid no longer exists.  Called with the directory locked, so no live
   ballarus runtime of this user is writing one, when the lock file was
   left behind by such a writer.  */
static void remove_orphans(int dfd, fgroup *gs, size_t ng) {
  const char **names = calloc(ng + 1, sizeof *names);
  if (names == NULL) return;
  size_t n = 0;
  for (size_t i = 0; i < ng; i++)
    names[n++] = gs[i].name;
  orphan_ctx ctx = {gs[0].path, (size_t)(gs[0].name - gs[0].path) - 1};
  ballarus_sf_remove_orphans(dfd, names, n, on_orphan, &ctx);
  free(names);
}

/* Dumps entries e[0, n), all in one directory.  */
void ballarus_rt_dump_dir(entry *e, size_t n, int at_exit) {
  size_t ng = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(e[i].dest, e[i - 1].dest) != 0) ng++;
  fgroup *gs = calloc(ng, sizeof *gs);
  if (gs == NULL) {
    ballarus_rt_warn("out of memory; profiles in %.*s not written",
                     (int)e[0].dir_len, e[0].dest);
    return;
  }
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && strcmp(e[j].dest, e[i].dest) == 0) j++;
    fgroup *g = &gs[k++];
    g->e = &e[i];
    g->n = j - i;
    g->path = e[i].dest;
    g->name = e[i].dest + e[i].dir_len + 1;
    for (size_t x = i; x < j; x++) g->any_changed |= e[x].changed;
    i = j;
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
      report_failure(&gs[i], why, at_exit);
    free(dirpath);
    free(gs);
    return;
  }
  char lock_name[64];
  int created = 0;
  int lfd = ballarus_rt_lock_dir(dfd, ballarus_rt_lock_timeout, lock_name,
                                 sizeof lock_name, &created, why, sizeof why);
  if (lfd < 0) {
    for (size_t i = 0; i < ng; i++)
      dump_beside(dfd, &gs[i], why, at_exit);
  } else {
    ballarus_rt_busy_lock_fd = lfd;
    /* Temporary files are only ever made under the lock, with the lock
       file marked (or by an older runtime, which left its lock file when
       killed): without that mark there is nothing to look for.  */
    if (ballarus_redo_recover(dfd, dirpath, lfd, created))
      remove_orphans(dfd, gs, ng);
    dump_ctx d;
    memset(&d, 0, sizeof d);
    d.lfd = lfd;
    for (size_t i = 0; i < ng; i++) {
      gs[i].fd = -1;
      dump_file(dfd, &d, &gs[i], at_exit);
    }
    finish_dump(dfd, &d, gs, ng, at_exit);
    ballarus_redo_free(&d.redo);
    ballarus_rt_busy_lock_fd = -1;
    ballarus_rt_unlock_dir(lfd);
  }
  close(dfd);
  free(dirpath);
  free(gs);
}
