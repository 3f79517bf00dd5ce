#!/usr/bin/env python3
"""short-process-cost.py ROUNDS PROGRAM EXE... — CPU of one short process.

What a test suite's short processes pay, per build: CPU time (user + sys,
from wait4) and minor page faults of one tiny run of PROGRAM (lua: `-e
'local x = 1'`; sqlite3: `select 1;` on :memory:; bzip2: `-c` of a 42-byte
file), each round the executables in a random order, pinned to CPU 1.  Two
cases per executable: "first", a fresh profile directory (the profile is
created), and "merge", the run adds into the profile an earlier run wrote
(every run of a test suite after the first).

PROGRAM `ctest`: each EXE is a CMake build directory, and one run is its
whole test suite, `ctest -j1` (CPU of ctest and every process it waited
for); "first" removes the build's *.bprof and *.gcda files before the run,
"merge" keeps those of the previous one.

PROGRAM `jsoncpp`: each EXE is a CMake build directory of jsoncpp, and one
run is one process of its test suite, `bin/jsontestrunner_exe` on a
one-array JSON file, its profiles written where the suite's go (beside
the objects, no BALLARUS_PROFILE); "first" and "merge" as for `ctest`.

Prints, per executable and case, the median in milliseconds with a 90 %
interval of the median (order statistics), the median of the per-round
differences to the FIRST executable given (paired: each round runs them
all, so load that drifts between rounds cancels) with its interval, and
the median page faults (docs/performance.md, "Default mode" and "Runtime
dump: copies and page faults").

usage: python3 bench/tools/short-process-cost.py 40 sqlite3 gcov/exe plain/exe edge/exe path/exe
       python3 bench/tools/short-process-cost.py 7 ctest build-gcov build-plain build-path
       python3 bench/tools/short-process-cost.py 60 jsoncpp build-gcov build-plain build-edge
"""
import math, os, random, shutil, statistics, subprocess, sys, tempfile

ARGS = {
    'lua': (['-e', 'local x = 1'], b''),
    'sqlite3': (['-batch', '-init', '/dev/null', ':memory:'], b'select 1;\n'),
    'bzip2': (['-c', 'small.txt'], b''),
}


def run_pinned(cmd, stdin, cwd, env):
    p = subprocess.Popen(['taskset', '-c', '1'] + cmd, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=cwd, env=env)
    p.stdin.write(stdin)
    p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit('%s exited with status %d' % (' '.join(cmd), status))
    return ru.ru_utime + ru.ru_stime, ru.ru_minflt


def one_run(prog, exe, scratch, fresh):
    if fresh:
        shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, 'small.txt'), 'w') as f:
        f.write('a short file for a short bzip2 run\n')
    env = dict(os.environ, BALLARUS_PROFILE=os.path.join(scratch, 'b.profile'),
               GCOV_PREFIX=os.path.join(scratch, 'g'))
    args, stdin = ARGS[prog]
    return run_pinned([exe] + args, stdin, scratch, env)


def remove_profiles(build):
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith('.bprof') or f.endswith('.gcda'):
                os.unlink(os.path.join(root, f))


def one_suite(build, fresh):
    if fresh:
        remove_profiles(build)
    env = dict(os.environ)
    env.pop('BALLARUS_PROFILE', None)
    return run_pinned(['ctest', '-j1', '-Q'], b'', build, env)


def one_jsoncpp(build, scratch, fresh):
    if fresh:
        remove_profiles(build)
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, 'a.json'), 'w') as f:
        f.write('[ 1, 2, 3 ]\n')
    env = dict(os.environ)
    env.pop('BALLARUS_PROFILE', None)
    return run_pinned([os.path.join(build, 'bin', 'jsontestrunner_exe'),
                       'a.json'], b'', scratch, env)


def median_interval(xs, level=0.90):
    """The median and a distribution-free interval for it: order
    statistics k and n+1-k with P(B(n, 1/2) < k) <= (1 - level) / 2."""
    s = sorted(xs)
    n = len(s)
    k, acc = 0, 0.0
    while k < n:
        p = math.comb(n, k) / 2 ** n
        if acc + p > (1 - level) / 2:
            break
        acc += p
        k += 1
    k = max(k, 1)
    return statistics.median(s), s[k - 1], s[n - k]


def fmt(xs, scale=1000):
    m, lo, hi = median_interval(xs)
    return '%.2f [%.2f, %.2f]' % (m * scale, lo * scale, hi * scale)


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in list(ARGS) + ['ctest',
                                                             'jsoncpp']:
        sys.exit(__doc__)
    rounds, prog = int(sys.argv[1]), sys.argv[2]
    exes = [os.path.abspath(e) for e in sys.argv[3:]]
    ref = exes[0]
    cases = ('first', 'merge')
    cpu = {(e, c): [] for e in exes for c in cases}
    faults = {(e, c): [] for e in exes for c in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            order = exes[:]
            random.shuffle(order)
            for i, e in enumerate(order):
                for c in cases:
                    if prog == 'ctest':
                        t, f = one_suite(e, c == 'first')
                    elif prog == 'jsoncpp':
                        t, f = one_jsoncpp(e, os.path.join(tmp, 'js'),
                                           c == 'first')
                    else:
                        t, f = one_run(prog, e, os.path.join(tmp, 'run%d' % i),
                                       c == 'first')
                    cpu[(e, c)].append(t)
                    faults[(e, c)].append(f)
    print('%s\tcase\tcpu_ms [90%%]\tminus the first [90%%]\tfaults' %
          ('build' if prog in ('ctest', 'jsoncpp') else 'executable'))
    for e in exes:
        for c in cases:
            diff = [a - b for a, b in zip(cpu[(e, c)], cpu[(ref, c)])]
            print('%s\t%s\t%s\t%s\t%d' % (e, c, fmt(cpu[(e, c)]), fmt(diff),
                                          statistics.median(faults[(e, c)])))


if __name__ == '__main__':
    main()
