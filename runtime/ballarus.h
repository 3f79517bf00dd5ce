/* ballarus.h — the public API of the ballarus profiling runtime
   (libballarus_rt.a), for programs that want to control when their profile
   is written.  Programs that do not include it are profiled all the same:
   the runtime dumps at exit by itself.

   Where the profile goes
     Each translation unit (TU) has a home fixed when it was compiled, in
     its metadata: OBJ.bprof, the absolute, lexically normalised path gcov
     would give the object's .gcda with the suffix .bprof (`gcc -c src/a.c
     -o obj/a.o` run in /w: /w/obj/a.bprof; `gcc -o prog a.c b.c`:
     /w/prog-a.bprof and /w/prog-b.bprof; -fprofile-dir= respected).  The
     working directory at run time plays no part, so test suites that run
     programs in temporary directories lose nothing.  A file may hold the
     records of several TUs.
     $BALLARUS_PROFILE, when set and not empty, pools every TU of the
     process into that one file instead: a relative name is made absolute
     against the working directory at start-up; `%p` expands to the process
     id at dump time (so forked children write separate files), `%%` to
     `%`.  BALLARUS_PROFILE=/dev/null turns the dump off: it creates,
     writes and locks nothing.  Any other destination that is not a
     regular file of this user (a FIFO, a directory, a link) is not
     written through: this run's counts go beside it as FILE.<pid>.  (A hand-made TU without a home goes to ballarus.profile in
     the start-up directory.)

   How processes add to it
     The directory is opened without following a symbolic link of another
     user on the way (safe_file.h); missing directories are created (mode
     0755).  Dumps of one user into one directory are serialised by flock()
     on DIR/.ballarus-<uid>.lock (mode 0600, so no other user can hold it;
     removed by its holder at the end of its dump), waited for at most $BALLARUS_LOCK_TIMEOUT seconds
     (default 10; a stopped holder), after which this run's counts are
     written beside the profile as FILE.<pid>.  Per file: the existing
     profile is read only if it is a regular file owned by this effective
     user, opened without following a symbolic link (else this run's counts
     go to FILE.<pid>); it is validated as ballarus-reconstruct validates
     it, whole-file checksum included (a damaged one is kept as
     FILE.corrupt and a new profile begun); this dump is added to the
     records of the same build, replaces the record of an earlier build of
     the same object (the object was rebuilt: silently, one line with
     BALLARUS_VERBOSE=1), and the result replaces FILE atomically (a
     temporary FILE.tmp.<pid>.<n>, O_CREAT|O_EXCL|O_NOFOLLOW, created
     with mode 0666 & ~umask like gcov's or the old file's, renamed over
     it).
     Temporary files of writers that died are removed.  Runs mean gcov's:
     every process adds one run to every TU its program linked, whether
     its code ran or not, once however many dumps it writes (a TU that did
     not run gets it in place, without rewriting its file); after that, a
     TU none of whose counts changed since the previous dump is not
     written.  A replaced build's runs go with its counts.
     BALLARUS_VERBOSE=1 logs every dump on stderr.

   When counts are written
     - At exit, and when a shared library is dlclose()d (its own counts).
     - When the program calls __ballarus_dump().
     Each dump adds the counts accumulated since the previous dump and then
     subtracts what it wrote from the live counters, so counts are never
     lost or counted twice however dumps and exit interleave.
     exec*() and _exit() (and death by signal) do not run the exit-time
     dump: call __ballarus_dump() before them.  With BALLARUS_DUMP_ON_ABORT=1
     in the environment, abort() (SIGABRT, if the program installed no
     handler of its own) dumps first; it is opt-in because abort() called
     from inside a broken malloc could make that dump hang.
     After fork() the child's counters start from zero: the parent's counts
     up to the fork are written by the parent, the child writes only what it
     counts itself.

   Threads
     Code compiled with update=thread (the default under -pthread) counts
     into a per-thread copy of its module's counters; a dump, a reset, and
     the exit of a thread add the copies in (or discard them) exactly, also
     while their threads keep counting.  A dump therefore includes what
     every live thread had stored when the dump read its copy; threads
     still running at exit are counted that far.  See thread_counters.c.

   Counts are added modulo 2^64
     Path profiling counts a path that a call cuts short before the call and
     takes the count back (-1) when the call returns normally, so that a
     call which never returns (exit, longjmp, an exception) leaves its
     truncated path counted.  A dump between the two (this function called
     inside the callee, or from another thread) writes the +1 and leaves the
     live counter at -1 once the call returns; the next dump then adds -1 to
     the file.  So every dump adds its counts to the file modulo 2^64, never
     saturating, and the file is exact once both dumps are in.  (A file may
     transiently hold a count of 2^64-1, "-1", if the -1 reaches it before
     the +1, e.g. in a profile written beside another one.)

   In every normal case the runtime prints nothing.  A real problem prints
   one line "ballarus: FILE: <problem>; <what happened to the counts>",
   naming files (source, object, profile), never internal ids.  The runtime
   never aborts or exits the program.

   Executables and shared libraries each link their own copy of the runtime;
   the copies find each other through one exported symbol so that these
   functions act on every loaded module (see rt_register.c).  */

#ifndef BALLARUS_H
#define BALLARUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes (merges) the counts of every instrumented module loaded in the
   process into the profile now, and subtracts them from the live counters.
   Thread-safe.  Not async-signal-safe.  */
void __ballarus_dump(void);

/* Zeroes the live counters of every instrumented module, discarding counts
   not yet dumped.  Thread-safe.  */
void __ballarus_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_H */
