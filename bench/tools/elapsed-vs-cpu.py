#!/usr/bin/env python3
"""elapsed-vs-cpu.py PAIRS GCOV_BZIP2 PATH_BZIP2 INPUT_TXT INPUT_BZ2 — is the
scatter of a time ratio the measurement clock's or the machine's?

Runs PAIRS pairs of two bzip2 builds (e.g. layout 0 of gcov and of path
from `layouts.py link`), each `bzip2 -9 -c < INPUT_TXT` then `bzip2 -d -c <
INPUT_BZ2`, pinned to CPU 1, in a random order per pair, each with a fresh
profile directory; prints, for elapsed time and for CPU time (user + sys),
the median, interquartile range and standard deviation of the per-pair
ratio PATH/GCOV and the relative standard deviation of GCOV's own runs
(docs/performance.md, "bzip2 over layouts, whole workload": 0.085 in both).

usage: python3 bench/tools/elapsed-vs-cpu.py 60 OUT/gcov.0/bzip2 OUT/path.0/bzip2 input.txt input.bz2
"""
import os, random, shutil, statistics, subprocess, sys, tempfile, time


def one(exe, args, inp, scratch):
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, BALLARUS_PROFILE=os.path.join(scratch, 'b.profile'),
               GCOV_PREFIX=os.path.join(scratch, 'g'))
    with open(inp, 'rb') as fi, open(os.devnull, 'wb') as fo:
        t0 = time.perf_counter()
        p = subprocess.Popen(['taskset', '-c', '1', exe] + args, stdin=fi, stdout=fo,
                             cwd=scratch, env=env)
        _, _, ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter()
    return t1 - t0, ru.ru_utime + ru.ru_stime


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    pairs = int(sys.argv[1])
    exe = {'gcov': os.path.abspath(sys.argv[2]), 'path': os.path.abspath(sys.argv[3])}
    txt, bz2 = os.path.abspath(sys.argv[4]), os.path.abspath(sys.argv[5])
    elapsed = {'gcov': [], 'path': []}
    cpu = {'gcov': [], 'path': []}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, 'run')
        for _ in range(pairs):
            order = ['gcov', 'path']
            random.shuffle(order)
            for v in order:
                e1, c1 = one(exe[v], ['-9', '-c'], txt, scratch)
                e2, c2 = one(exe[v], ['-d', '-c'], bz2, scratch)
                elapsed[v].append(e1 + e2)
                cpu[v].append(c1 + c2)
    for name, x in (('elapsed', elapsed), ('cpu', cpu)):
        rs = [p / g for p, g in zip(x['path'], x['gcov'])]
        q = statistics.quantiles(rs, n=4)
        print('%s median %.4f IQR %.4f sd %.4f; gcov run rsd %.3f' % (
            name, statistics.median(rs), q[2] - q[0], statistics.stdev(rs),
            statistics.stdev(x['gcov']) / statistics.mean(x['gcov'])))


if __name__ == '__main__':
    main()
