#!/usr/bin/env python3
# elapsed-vs-cpu.py -- 60 pairs of gcov's and path's layout 0 (OUT/gcov.0, OUT/path.0 from layouts.py link, here /tmp/bz/L6), bzip2 -9 then -d of the 6 MB input, in a random order per pair: the spread of path/gcov when timed as elapsed time and as CPU time (the sixth stop: standard deviation 0.085 in both).
import os, subprocess, random, statistics, time
def one(exe, args, inp):
    with open(inp,'rb') as fi, open(os.devnull,'wb') as fo:
        t0=time.perf_counter(); p=subprocess.Popen(['taskset','-c','1',exe]+args,stdin=fi,stdout=fo,cwd='/tmp/bz/scr',env=dict(os.environ,BALLARUS_PROFILE='/tmp/bz/scr/b.profile',GCOV_PREFIX='/tmp/bz/scr/g'))
        _,st,ru=os.wait4(p.pid,0); t1=time.perf_counter()
    return t1-t0, ru.ru_utime+ru.ru_stime
os.makedirs('/tmp/bz/scr',exist_ok=True)
E={'g':[], 'p':[]}; C={'g':[], 'p':[]}
for r in range(60):
    vs=['g','p']; random.shuffle(vs)
    for v in vs:
        exe='/tmp/bz/L6/%s.0/bzip2'%('gcov' if v=='g' else 'path')
        e1,c1=one(exe,['-9','-c'],'/tmp/bz/input.txt'); e2,c2=one(exe,['-d','-c'],'/tmp/bz/input.bz2')
        E[v].append(e1+e2); C[v].append(c1+c2)
for name,X in (('elapsed',E),('cpu',C)):
    rs=[p/g for p,g in zip(X['p'],X['g'])]
    q=statistics.quantiles(rs,n=4)
    print(name,'median %.4f IQR %.4f sd %.4f; gcov run rsd %.3f'%(statistics.median(rs),q[2]-q[0],statistics.stdev(rs),statistics.stdev(X['g'])/statistics.mean(X['g'])))
