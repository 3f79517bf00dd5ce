/* ballarus.h — the public API of the ballarus profiling runtime
   (libballarus_rt.a), for programs that want to control when their profile
   is written.  Programs that do not include it are profiled all the same:
   the runtime dumps at exit by itself.

   Where the profile goes
     $BALLARUS_PROFILE, or `ballarus.profile` if unset or empty.  A relative
     name is made absolute against the working directory at the time the
     module's runtime starts (its constructor), so a later chdir() does not
     move it.  In the name, `%p` expands to the process id at dump time (so
     forked children write separate files), `%%` to `%`.  Dumps of all
     processes into one file are serialised by a lock on `PROFILE.lock`
     beside it, and each dump merges into what the file already holds.
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

   If the existing profile is not a valid profile, or holds another build of
   one of the program's translation units, it is left untouched: the runtime
   warns ("ballarus: PROFILE: <problem>; writing this run's profile to
   PROFILE.<pid>") and writes beside it.  The runtime never aborts or exits
   the program; its problems are warnings on stderr prefixed "ballarus: ".

   Executables and shared libraries each link their own copy of the runtime;
   the copies find each other through one exported symbol so that these
   functions act on every loaded module (see ballarus_rt.c).  */

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
