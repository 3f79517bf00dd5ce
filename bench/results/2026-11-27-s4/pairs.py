#!/usr/bin/env python3
"""pairs.py ROUNDS BASE:VARIANT ... -- the timing behind bench/README.md,
*Counts on one of two paths, and where bzip2's time goes* (2026-11-27).

Each build is a bzip2 1.0.8 tree built in /tmp/bz/NAME (its bzip2
executable at /tmp/bz/NAME/bzip2; `make bzip2 CC=... CFLAGS="-O2
-D_FILE_OFFSET_BITS=64"`).  /tmp/bz/small.txt is the first 1,800,000 bytes
of the bench's input (`gentext 6291456`, bench/bzip2/gentext.c) and
/tmp/bz/small.bz2 its `bzip2 -9` output.  Per round every build named runs
`bzip2 -9 -c < small.txt` then `bzip2 -d -c < small.bz2`, pinned to CPU 1,
in a random order; the user+sys CPU time of each comes from wait4.  For
each BASE:VARIANT pair: the median over the rounds of VARIANT's time over
BASE's in the same round, for compression (c), decompression (d) and both,
with a 90 % bootstrap interval of that median (1000 resamples, seed 1).
"""
import os, sys, subprocess, statistics, random
rounds=int(sys.argv[1]); pairs=[p.split(':') for p in sys.argv[2:]]
def one(v, args, inp):
    with open(inp,'rb') as fi, open(os.devnull,'wb') as fo:
        p = subprocess.Popen(['taskset','-c','1','/tmp/bz/%s/bzip2'%v]+args, stdin=fi, stdout=fo)
        _, st, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime
vs=sorted(set(x for p in pairs for x in p))
T={v:[] for v in vs}
for r in range(rounds):
    order=list(vs); random.shuffle(order)
    for v in order: T[v].append((one(v,['-9','-c'],'/tmp/bz/small.txt'), one(v,['-d','-c'],'/tmp/bz/small.bz2')))
rng=random.Random(1)
def ci(rs):
    meds=sorted(statistics.median(rng.choices(rs,k=len(rs))) for _ in range(1000)); return meds[50],meds[949]
allc=[];alld=[]
for g,p in pairs:
    for name,f in (('c',lambda x:x[0]),('d',lambda x:x[1]),('c+d',lambda x:x[0]+x[1])):
        rs=[f(b)/f(a) for a,b in zip(T[g],T[p])]
        lo,hi=ci(rs); print('%s/%s %-4s median %.4f [%.4f, %.4f] faster in %d/%d'%(p,g,name,statistics.median(rs),lo,hi,sum(x<1 for x in rs),len(rs)))
        if name=='c+d': allc.append(statistics.median(rs))
print('geomean over layouts (c+d): %.4f'%statistics.geometric_mean(allc))
