# Paired CPU of one `select 1;` merge into a profile seeded by a broader
# sqlite3 run (broad.sql): per round, each executable in random order,
# the seeded profile copied fresh; user+sys from wait4.
import os, random, shutil, statistics, subprocess, sys
rounds = int(sys.argv[1]); sql = sys.argv[2]; exes = sys.argv[3:]
work = os.environ.get('WORK', '/tmp/broad-merge')
seeds = {}
for e in exes:
    d = os.path.join(work, 'seed-' + os.path.basename(e)); shutil.rmtree(d, True); os.makedirs(d)
    env = dict(os.environ, BALLARUS_PROFILE=os.path.join(d, 'b.profile'))
    subprocess.run([e, ':memory:'], stdin=open(sql), stdout=subprocess.DEVNULL, env=env, check=True)
    seeds[e] = os.path.join(d, 'b.profile')
res = {e: [] for e in exes}
for r in range(rounds):
    order = exes[:]; random.shuffle(order)
    for e in order:
        d = os.path.join(work, 'run'); shutil.rmtree(d, True); os.makedirs(d)
        shutil.copyfile(seeds[e], os.path.join(d, 'b.profile'))
        env = dict(os.environ, BALLARUS_PROFILE=os.path.join(d, 'b.profile'))
        p = subprocess.Popen(['taskset', '-c', '1', e, '-batch', '-init', '/dev/null', ':memory:'],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
        p.stdin.write(b'select 1;\n'); p.stdin.close()
        _, st, ru = os.wait4(p.pid, 0)
        res[e].append(((ru.ru_utime + ru.ru_stime) * 1000, ru.ru_minflt))
import math
def ci(v):  # 90 % interval of the median (order statistics)
    v = sorted(v); n = len(v); k = int(1.645 * math.sqrt(n) / 2)
    return v[max(0, n // 2 - k)], v[min(n - 1, n // 2 + k)]
base = exes[0]
for e in exes:
    cpu = [c for c, _ in res[e]]
    diff = [a[0] - b[0] for a, b in zip(res[e], res[base])]
    print('%s\t%.3f\tminus first %.3f [%.3f, %.3f]\tfaults %d' % (e, statistics.median(cpu), statistics.median(diff), *ci(diff), statistics.median(f for _, f in res[e])))
