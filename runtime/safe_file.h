/* safe_file.h — creating files safely in directories other users may write.

   Plain C, libc only; used by the runtime (profiles, beside files, lock
   files) and by ballarus-reconstruct (every file it writes).

   What it promises, whoever else can write the directories on the way:
     - The directories of a path are opened in one openat2 that follows
       no symbolic link at all (RESOLVE_NO_SYMLINKS); where that fails (a
       link on the way, a missing directory, no openat2) they are walked
       one component at a time with
       openat(O_NOFOLLOW | O_DIRECTORY), from "/" for an absolute path or
       the working directory for a relative one.  A component that is a
       symbolic link is followed only when the link belongs to this
       effective user or to root, and its target is then walked by the same
       rule (at most 40 links per path).  A link of another user is refused:
       "component mdir is a symbolic link of uid 1000, not followed".  This
       is stricter than the kernel's protected_symlinks, which only guards
       sticky world-writable directories and also follows a link that
       belongs to the directory's owner: here, whoever owns a link decides
       where our files go, so only our own links and root's are trusted.
       Missing directories, when asked for, are created with mkdirat under
       the directory fd already opened, never through a link.
     - A file is created with O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC and
       its final mode (less the umask) from the start: nobody can open it
       in a window between its creation and a later chmod.  With
       BALLARUS_SF_EXACT_MODE it is then fchmod'ed to exactly `mode`, which
       can only widen what the umask narrowed.
     - A temporary file NAME.tmp.<pid>.<serial> is renamed over NAME with
       renameat in the same directory fd: a symbolic link planted at NAME is
       replaced, never followed; readers see the old file or the new one.
     - Temporary files of writers that died (their pid no longer exists,
       kill(pid, 0) fails with ESRCH) are removed: regular files of this
       user only.
   What it cannot promise: someone who may write a directory on the way can
   still delete or rename what is in it (unless the directory is sticky),
   fill the disk, or plant names that make us choose another name.

   Every function that can fail returns -1 with a one-line message in `err`
   (errlen bytes) naming the component or file and the reason; the caller
   prefixes the path it was asked to write.  */

#ifndef BALLARUS_SAFE_FILE_H
#define BALLARUS_SAFE_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags.  */
#define BALLARUS_SF_MKDIR 1u       /* create missing directories */
#define BALLARUS_SF_EXACT_MODE 2u  /* the file gets exactly `mode` */
#define BALLARUS_SF_FSYNC 4u       /* fsync the file before the rename,
                                      and the directory after it */
#define BALLARUS_SF_EXCHANGE 8u    /* replace an existing NAME by
                                      renameat2(RENAME_EXCHANGE) then unlink
                                      (cheaper than rename on ext4) */
#define BALLARUS_SF_REMOVE_ORPHANS 16u /* remove NAME's temporary files of
                                          dead writers first */

/* Temporary files are NAME + BALLARUS_SF_TMP_INFIX + "<pid>.<serial>".  */
#define BALLARUS_SF_TMP_INFIX ".tmp."

/* Opens the directory `path` (absolute, or relative to the working
   directory) by the walk described above; with BALLARUS_SF_MKDIR, missing
   directories are created with `dir_mode` (less the umask).  Returns a
   descriptor (O_RDONLY, or O_PATH when the directory may only be searched;
   O_CLOEXEC), or -1.  */
int ballarus_sf_open_dir(const char *path, unsigned flags, unsigned dir_mode,
                         char *err, size_t errlen);

/* Opens the directory that contains `path` (as ballarus_sf_open_dir) and
   sets *name to the last component of `path` (a pointer into it).  A path
   that ends in "/", "." or ".." names no file: -1.  */
int ballarus_sf_open_parent(const char *path, unsigned flags,
                            unsigned dir_mode, const char **name, char *err,
                            size_t errlen);

/* Creates the new file `name` in `dirfd` for writing, as described above
   (never opens anything that exists).  Returns its descriptor or -1
   (errno EEXIST when the name exists).  */
int ballarus_sf_create(int dirfd, const char *name, unsigned mode,
                       unsigned flags, char *err, size_t errlen);

/* Creates a new file with a name of this process beside `name`:
   NAME.tmp.<pid>.<serial> (temp != 0) or NAME.<pid>, NAME.<pid>.<k>
   (temp == 0: the "beside" file a writer leaves when it cannot write NAME
   itself).  The chosen name goes to made[madelen].  Returns the descriptor
   or -1.  */
int ballarus_sf_create_unique(int dirfd, const char *name, int temp,
                              unsigned mode, unsigned flags, char *made,
                              size_t madelen, char *err, size_t errlen);

/* Renames `tmp` over `name` in dirfd (BALLARUS_SF_EXCHANGE: exchanged,
   then the old content unlinked; BALLARUS_SF_FSYNC: the directory fsync'd
   after).  On failure `tmp` is removed and `name` untouched.  */
int ballarus_sf_commit(int dirfd, const char *tmp, const char *name,
                       unsigned flags, char *err, size_t errlen);

/* Removes NAMES[i].tmp.<pid>.<serial> of processes that no longer exist:
   regular files of this effective user, never this process's.  `removed`
   (may be NULL) is told each name removed and its writer's pid.  Returns
   how many were removed.  */
typedef void (*ballarus_sf_removed_fn)(void *ctx, const char *name, long pid);
int ballarus_sf_remove_orphans(int dirfd, const char *const *names,
                               size_t n_names, ballarus_sf_removed_fn removed,
                               void *ctx);

/* A file being written: ballarus_sf_begin opens the directory of `path`
   safely and creates a temporary file beside its name; the caller writes
   through `fd`; ballarus_sf_finish renames it over `path` (flags as given
   to begin), ballarus_sf_abort removes it.  Both free the transaction and
   close its descriptors.  */
typedef struct ballarus_sf_tx {
  int dirfd;
  int fd;
  unsigned flags;
  char *name; /* the last component of the path */
  char *tmp;  /* the temporary file's name in dirfd */
} ballarus_sf_tx;

int ballarus_sf_begin(ballarus_sf_tx *tx, const char *path, unsigned mode,
                      unsigned flags, char *err, size_t errlen);
int ballarus_sf_finish(ballarus_sf_tx *tx, char *err, size_t errlen);
void ballarus_sf_abort(ballarus_sf_tx *tx);

/* Writes `size` bytes to `path` atomically by begin / write / finish.  */
int ballarus_sf_write_file(const char *path, const void *data, size_t size,
                           unsigned mode, unsigned flags, char *err,
                           size_t errlen);

/* Why a file of ours may not take the place of `name` in dirfd, as a
   phrase ("is a symbolic link", ...), or NULL when it may: `name` does not
   exist, or is a regular file of this effective user.  A symbolic link is
   never followed.  *mode (mode may be NULL) gets the existing file's mode,
   or -1.  fstatat only: async-signal-safe.  */
const char *ballarus_sf_not_ours(int dirfd, const char *name, int *mode);

/* A file name template expanded: "%p" becomes `pid` in decimal, "%%" one
   "%", every other character stays (so does a "%" before any other).
   Writes at most cap bytes, NUL included, to out (may be NULL with cap 0)
   and returns the expanded length, as snprintf: out holds it all when it
   is below cap.  *pids (may be NULL) gets how many "%p" there were.  No
   allocation: async-signal-safe.  */
size_t ballarus_sf_expand_pid(const char *tmpl, long pid, char *out,
                              size_t cap, unsigned *pids);

/* Writes all of data[size] to fd (EINTR retried); 0 or -1 with errno.  */
int ballarus_sf_write_all(int fd, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_SAFE_FILE_H */
