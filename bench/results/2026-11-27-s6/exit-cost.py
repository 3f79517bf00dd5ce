#!/usr/bin/env python3
# exit-cost.py ROUNDS EXE... -- CPU time (user+sys, wait4) of `sqlite3 -batch -init /dev/null :memory:` running `select 1;`, each EXE in a random order per round, pinned to CPU 1, a fresh BALLARUS_PROFILE/GCOV_PREFIX directory per run; prints each EXE's median.  (The sixth stop's 32.9 -> 22.5 ms, 60 rounds.)
import os, subprocess, statistics, sys, random, shutil
# fixed.py ROUNDS exe... : CPU time of `select 1;` in a fresh profile dir
R=int(sys.argv[1]); exes=sys.argv[2:]; res={e:[] for e in exes}
for r in range(R):
    random.shuffle(exes)
    for e in exes:
        shutil.rmtree('/tmp/fx', ignore_errors=True); os.makedirs('/tmp/fx')
        p=subprocess.Popen(['taskset','-c','1',e,'-batch','-init','/dev/null',':memory:'],stdin=subprocess.PIPE,stdout=subprocess.DEVNULL,cwd='/tmp/fx',env=dict(os.environ,BALLARUS_PROFILE='/tmp/fx/b.profile',GCOV_PREFIX='/tmp/fx/g'))
        p.stdin.write(b'select 1;\n'); p.stdin.close()
        _,st,ru=os.wait4(p.pid,0); res[e].append(ru.ru_utime+ru.ru_stime)
for e in sorted(res): print('%-60s median %.2f ms' % (e, 1000*statistics.median(res[e])))
