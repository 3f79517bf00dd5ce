/* ballarus_rt_internal.h — entry points of ballarus_rt.c that other files
   of the runtime use (hidden: every module keeps its own copy).  */
#ifndef BALLARUS_RT_INTERNAL_H
#define BALLARUS_RT_INTERNAL_H

#include <stddef.h>

#include "runtime/profile_io.h"

#define BALLARUS_HIDDEN __attribute__((visibility("hidden")))

/* gcov's __gcov_dump(): dumps every module of this module's master unless
   the master is in the gcov-dumped state, then enters it (no dump at exit,
   no further gcov dump) until ballarus_rt_gcov_reset().  */
BALLARUS_HIDDEN void ballarus_rt_gcov_dump(void);

/* gcov's __gcov_reset(): __ballarus_reset(), and leaves the gcov-dumped
   state.  */
BALLARUS_HIDDEN void ballarus_rt_gcov_reset(void);

/* The store (rt_store.c).  */

/* Takes the lock of the directory dfd (its lock file of this effective
   user, named into name[name_len]), polling up to `timeout` seconds.
   Returns the lock file's descriptor, or -1 with *why set (timeout: a
   holder that is stopped or very slow; or the lock file unusable).  */
BALLARUS_HIDDEN int ballarus_rt_lock_dir(int dfd, double timeout, char *name,
                                         size_t name_len, char *why,
                                         size_t len);

/* Releases it: the name goes first, so that a process that opened the
   file meanwhile sees it unlinked when it obtains the lock.  Explicitly
   unlocked: a forked child may share the descriptor.  */
BALLARUS_HIDDEN void ballarus_rt_unlock_dir(int dfd, const char *name,
                                            int fd);

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
