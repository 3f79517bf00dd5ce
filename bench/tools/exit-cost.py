#!/usr/bin/env python3
"""exit-cost.py ROUNDS SQLITE3_EXE... — what a short process pays at exit.

CPU time (user + sys, from wait4) of `sqlite3 -batch -init /dev/null
:memory:` running `select 1;`, for each executable given (e.g. plain, gcov
and ballarus builds of sqlite3), each round in a random order, pinned to
CPU 1, every run with a fresh empty BALLARUS_PROFILE / GCOV_PREFIX
directory, so each run writes one new profile.  Prints each executable's
median in milliseconds (docs/performance.md, "Runtime dump: copies and page
faults").

usage: python3 bench/tools/exit-cost.py 60 ./plain/sqlite3 ./gcov/sqlite3 ./path/sqlite3
"""
import os, random, shutil, statistics, subprocess, sys, tempfile


def one_run(exe, scratch):
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, BALLARUS_PROFILE=os.path.join(scratch, 'b.profile'),
               GCOV_PREFIX=os.path.join(scratch, 'g'))
    p = subprocess.Popen(['taskset', '-c', '1', exe, '-batch', '-init', '/dev/null', ':memory:'],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=scratch, env=env)
    p.stdin.write(b'select 1;\n')
    p.stdin.close()
    _, _, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds, exes = int(sys.argv[1]), [os.path.abspath(e) for e in sys.argv[2:]]
    times = {e: [] for e in exes}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, 'run')
        for _ in range(rounds):
            random.shuffle(exes)
            for e in exes:
                times[e].append(one_run(e, scratch))
    for e in sorted(times):
        print('%-60s median %.2f ms' % (e, 1000 * statistics.median(times[e])))


if __name__ == '__main__':
    main()
