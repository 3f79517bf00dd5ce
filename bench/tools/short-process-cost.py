#!/usr/bin/env python3
"""short-process-cost.py ROUNDS PROGRAM EXE... — CPU of one short process.

What a test suite's short processes pay, per build: CPU time (user + sys,
from wait4) of one tiny run of PROGRAM (lua: `-e 'local x = 1'`; sqlite3:
`select 1;` on :memory:; bzip2: `-c` of a 42-byte file), each round the
executables in a random order, pinned to CPU 1.  Two cases per executable:
"first", a fresh profile directory (the profile is created), and "merge",
the run adds into the profile an earlier run wrote (every run of a test
suite after the first).  Prints each executable's medians in milliseconds
(docs/performance.md, "Default mode").

usage: python3 bench/tools/short-process-cost.py 40 lua plain/exe gcov/exe path/exe
"""
import os, random, shutil, statistics, subprocess, sys, tempfile

ARGS = {
    'lua': (['-e', 'local x = 1'], b''),
    'sqlite3': (['-batch', '-init', '/dev/null', ':memory:'], b'select 1;\n'),
    'bzip2': (['-c', 'small.txt'], b''),
}


def one_run(prog, exe, scratch, fresh):
    if fresh:
        shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, 'small.txt'), 'w') as f:
        f.write('a short file for a short bzip2 run\n')
    env = dict(os.environ, BALLARUS_PROFILE=os.path.join(scratch, 'b.profile'),
               GCOV_PREFIX=os.path.join(scratch, 'g'))
    args, stdin = ARGS[prog]
    p = subprocess.Popen(['taskset', '-c', '1', exe] + args, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, cwd=scratch, env=env)
    p.stdin.write(stdin)
    p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit('%s exited with status %d' % (exe, status))
    return ru.ru_utime + ru.ru_stime


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ARGS:
        sys.exit(__doc__)
    rounds, prog = int(sys.argv[1]), sys.argv[2]
    exes = [os.path.abspath(e) for e in sys.argv[3:]]
    times = {(e, c): [] for e in exes for c in ('first', 'merge')}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            random.shuffle(exes)
            for i, e in enumerate(exes):
                scratch = os.path.join(tmp, 'run%d' % i)
                times[(e, 'first')].append(one_run(prog, e, scratch, True))
                times[(e, 'merge')].append(one_run(prog, e, scratch, False))
    print('executable\tfirst_ms\tmerge_ms')
    for e in sys.argv[3:]:
        e = os.path.abspath(e)
        print('%s\t%.2f\t%.2f' % (e, 1000 * statistics.median(times[(e, 'first')]),
                                  1000 * statistics.median(times[(e, 'merge')])))


if __name__ == '__main__':
    main()
