/* trace_file.c — the trace file: start, fork, exit and finish
   (trace_internal.h).

   The file.  Its path may hold "%p", the process id, and "%%", a "%"
   (as BALLARUS_PROFILE's: safe_file.h ballarus_sf_expand_pid), expanded
   when tracing starts; missing directories are created (0755 less the
   umask).  It is written as a temporary file beside its name and renamed
   over it at the end, unless the name is taken by something that is not a
   regular file of this user (safe_file.h ballarus_sf_not_ours: a symbolic
   link, a directory, a FIFO, another user's file): the trace then goes
   beside it, NAME.<pid> (or NAME.<pid>.<k>), with one line.

   fork(): the child gets its own file (generation + 1): the path expanded
   again for the child's pid when it holds "%p", else PATH.<pid>; the
   other threads' state belongs to the parent and is skipped.  Full mode
   drops the forking thread's pending chunk in the child (the parent writes
   it): the child's stream starts at the fork, with a CHECKPOINT of the
   forking thread's stack.  Ring mode keeps it: the child's chunks show
   what led to the fork too.  */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/safe_file.h"
#include "runtime/trace_internal.h"

static trace_state *const g = &ballarus_trace_g;

/* Zero-initialised, so that it takes .bss rather than .data in every
   program: ballarus_trace_start sets the descriptors before anything
   reads them.  */
trace_state ballarus_trace_g;

/* One line on standard error with write(2), from a static buffer: finish
   (also run by the signal handler) says where the trace went.  */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...) {
  static char line[2 * PATH_MAX + 256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n
                                                           : sizeof line - 1);
}

/* Renames the temporary file over its name, or beside it when the name is
   taken by something not ours to replace (the file comment), with one
   line saying so.  */
static void commit_file(void) {
  static char beside[sizeof g->name + 48];
  char err[256];
  const char *why = ballarus_sf_not_ours(g->dirfd, g->name, NULL);
  if (why == NULL) {
    if (renameat(g->dirfd, g->tmp, g->dirfd, g->name) != 0)
      g->rename_errno = errno;
    return;
  }
  int fd = ballarus_sf_create_unique(g->dirfd, g->name, 0, 0600, 0, beside,
                                     sizeof beside, err, sizeof err);
  if (fd >= 0) close(fd);
  const int d = (int)g->dir_len;
  if (fd < 0 || renameat(g->dirfd, g->tmp, g->dirfd, beside) != 0)
    say("ballarus: trace %.*s%s %s, not replaced; the trace is left in "
        "%.*s%s\n", d, g->path, g->name, why, d, g->path, g->tmp);
  else
    say("ballarus: trace %.*s%s %s, not replaced; the trace is written to "
        "%.*s%s instead\n", d, g->path, g->name, why, d, g->path, beside);
}

/* A vfork child shares the parent's memory and runs no fork handler: its
   pid is not the one the file is written for.  */
int ballarus_trace_own_process(void) {
  return __atomic_load_n(&g->mode, __ATOMIC_ACQUIRE) != 0 &&
         (uint32_t)getpid() == g->header.pid;
}

/* A thread's records: its chunks (ring: the kept ones, each after its
   CHECKPOINT; full: the pending words), then, while it lives, its
   POSITION, and the FAULT when the signal being handled is its.  */
static void write_thread(trace_thread *t) {
  uint32_t pending = ballarus_trace_pending(t);
  uint64_t total;
  if (g->mode == BALLARUS_TRACE_MODE_RING) {
    ballarus_trace_write_ring(t, pending);
    total = t->total + pending;
  } else {
    if (t->posp == NULL) return;
    ballarus_trace_write_chunk(t, t->chunk + HEAD, pending);
    total = t->total;
  }
  ballarus_trace_write_position(t, total);
  if (g->faulted && g->fault.thread == t)
    ballarus_trace_write_fault(t, &g->fault, total);
}

/* Async-signal-safe: write(2), fstatat(2), renameat(2) and close(2)
   only, once (a name not ours adds openat(2) and snprintf, which does not
   allocate for the numbers and strings it is given here).  A second
   caller (another thread crashing meanwhile) waits up to a second for the
   first to be done, so that the process does not die while the file is
   half written.  */
void ballarus_trace_finish(void) {
  if (!ballarus_trace_own_process()) return;
  if (__atomic_exchange_n(&g->finished, 1, __ATOMIC_ACQ_REL)) {
    struct timespec ms = {0, 1000000};
    for (int i = 0;
         i < 1000 && !__atomic_load_n(&g->written, __ATOMIC_ACQUIRE); i++)
      nanosleep(&ms, NULL);
    return;
  }
  for (trace_thread *t = __atomic_load_n(&g->threads, __ATOMIC_ACQUIRE); t;
       t = t->next)
    if (!t->dead) write_thread(t);
  ballarus_trace_write_modules();
  commit_file();
  close(g->fd);
  g->fd = -1;
  __atomic_store_n(&g->written, 1, __ATOMIC_RELEASE);
}

void ballarus_trace_end_at_exit(void) { g->end_at_exit = 1; }

/* At exit: finishes, and says what went wrong, if anything.  */
static void trace_atexit(void) {
  int was_finished = g->finished;
  if (g->end_at_exit && !was_finished && ballarus_trace_thread_end)
    ballarus_trace_thread_end();
  ballarus_trace_finish();
  if (was_finished) return;
  if (g->write_errno)
    dprintf(2, "ballarus: trace %s: write: %s (trace incomplete)\n", g->name,
            strerror(g->write_errno));
  if (g->rename_errno)
    dprintf(2, "ballarus: trace %s: rename to %s: %s\n", g->tmp, g->name,
            strerror(g->rename_errno));
}

/* Creates the temporary file beside g->name in g->dirfd and writes the file
   header.  */
static int open_file(char *err, size_t errlen) {
  g->fd = ballarus_sf_create_unique(g->dirfd, g->name, 1, 0600, 0, g->tmp,
                                   sizeof g->tmp, err, errlen);
  if (g->fd < 0) return -1;
  fcntl(g->fd, F_SETFL, fcntl(g->fd, F_GETFL) | O_APPEND);
  g->header.pid = (uint32_t)getpid();
  if (ballarus_sf_write_all(g->fd, &g->header, sizeof g->header) != 0) {
    snprintf(err, errlen, "%s: %s", g->tmp, strerror(errno));
    return -1;
  }
  return 0;
}

/* Expands the path for this process, opens its directory (created if
   missing) and names the file in it.  */
static int open_dir(char *err, size_t errlen) {
  const char *name;
  if (ballarus_sf_expand_pid(g->tmpl, (long)getpid(), g->path, sizeof g->path,
                             &g->pids) >= sizeof g->path) {
    snprintf(err, errlen, "%s: name too long", g->tmpl);
    return -1;
  }
  g->dirfd = ballarus_sf_open_parent(g->path, BALLARUS_SF_MKDIR, 0755, &name,
                                    err, errlen);
  if (g->dirfd < 0) return -1;
  if (strlen(name) >= sizeof g->base) {
    snprintf(err, errlen, "%s: name too long", g->path);
    return -1;
  }
  strcpy(g->base, name);
  strcpy(g->name, name);
  g->dir_len = (size_t)(name - g->path);
  return 0;
}

/* The child of fork: its own file; the other threads are the parent's.
   Full mode: the forking thread's stream starts here, with a CHECKPOINT
   of its stack (the innermost activation in its call to fork).  */
static void atfork_child(void) {
  char err[256];
  if (g->mode == 0 || g->finished) return;
  close(g->fd);
  for (trace_thread *t = g->threads; t; t = t->next)
    if (t != ballarus_trace_self) t->dead = 1;
  if (g->pids > 0) {
    close(g->dirfd);
    if (open_dir(err, sizeof err) != 0) {
      dprintf(2, "ballarus: trace %s: %s\n", g->path, err);
      g->mode = 0;
      return;
    }
  } else {
    snprintf(g->name, sizeof g->name, "%s.%ld", g->base, (long)getpid());
  }
  ballarus_trace_tus_reset();
  g->header.parent_pid = g->header.pid;
  g->header.generation++;
  g->write_errno = g->rename_errno = 0;
  if (open_file(err, sizeof err) != 0) {
    dprintf(2, "ballarus: trace %s: %s\n", g->name, err);
    g->mode = 0;
    return;
  }
  if (g->mode == BALLARUS_TRACE_MODE_FULL && ballarus_trace_self != NULL &&
      __ballarus_trace_pos2 != NULL) {
    __ballarus_trace_pos2 = ballarus_trace_self->chunk + HEAD;
    ballarus_trace_self->seq = 0;
    ballarus_trace_self->total = 0;
    ballarus_trace_write_live_checkpoint(ballarus_trace_self);
  }
}

static int parse_spec(const char *spec, char *err, size_t errlen) {
  if (strcmp(spec, "full") == 0) {
    g->mode = BALLARUS_TRACE_MODE_FULL;
    return 0;
  }
  char *end;
  unsigned long n;
  errno = 0;
  if (strncmp(spec, "ring:", 5) == 0 && spec[5] >= '0' && spec[5] <= '9' &&
      (n = strtoul(spec + 5, &end, 10), errno == 0 && *end == 0) && n >= 1 &&
      n <= RING_MAX) {
    g->mode = BALLARUS_TRACE_MODE_RING;
    g->ring_n = (uint32_t)n;
    return 0;
  }
  snprintf(err, errlen,
           "trace \"%s\": expected full or ring:N with N from 1 to %u", spec,
           RING_MAX);
  return -1;
}

/* Undoes what ballarus_trace_start did before it failed; returns -1.  */
static int start_failed(void) {
  ballarus_trace_restore_handlers();
  if (g->fd >= 0) {
    unlinkat(g->dirfd, g->tmp, 0);
    close(g->fd);
  }
  close(g->dirfd);
  g->fd = g->dirfd = -1;
  g->ring_n = 0;
  return -1;
}

int ballarus_trace_start(const char *path, const char *spec, char *err,
                         size_t errlen) {
  if (g->mode != 0) return 1;
  g->fd = g->dirfd = -1;
  if (parse_spec(spec, err, errlen) != 0) return -1;
  int mode = g->mode;
  g->mode = 0;
  if (strlen(path) >= sizeof g->tmpl) {
    snprintf(err, errlen, "trace file name too long");
    return -1;
  }
  strcpy(g->tmpl, path);
  if (open_dir(err, errlen) != 0) return start_failed();
  memcpy(g->header.magic, BALLARUS_TRACE_MAGIC, 8);
  g->header.version = BALLARUS_TRACE_VERSION;
  g->header.header_size = sizeof g->header;
  g->header.mode = (uint32_t)mode;
  g->header.ring_n = g->ring_n;
  if (open_file(err, errlen) != 0) return start_failed();
  if (pthread_key_create(&g->key, ballarus_trace_thread_exit) != 0) {
    snprintf(err, errlen, "pthread_key_create failed");
    return start_failed();
  }
  if (ballarus_trace_install_handlers(err, errlen) != 0) {
    pthread_key_delete(g->key);
    return start_failed();
  }
  pthread_atfork(NULL, NULL, atfork_child);
  atexit(trace_atexit);
  __atomic_store_n(&g->mode, mode, __ATOMIC_RELEASE);
  /* The calling thread registers at its next word; other threads running
     meanwhile when they reach the end of their scratch chunk.  */
  __ballarus_trace_pos2 = NULL;
  return 0;
}
