#!/usr/bin/env python3
"""layouts.py — bzip2's time over gcov's across random code layouts (the
experiment behind run.sh --layout random; bench/README.md, "Code layout,
and bzip2 over many layouts").

  layouts.py link N SEED GCOV_DIR PATH_DIR BCC OUT
      links N layouts of each build from its objects (bzip2.o and the
      members of libbz2.a, as the bzip2 Makefile builds them with -O2
      -D_FILE_OFFSET_BITS=64): the objects shuffled, a pad of 16*k bytes
      (k < 64) in .text.unlikely ahead of them; gcov's with
      `gcc -fprofile-arcs`, path's with BCC (ballarus-gcc); into
      OUT/{gv,pa}K/bzip2.
  layouts.py time PASSES N OUT SMALL_TXT SMALL_BZ2
      per pass, every layout K in a shuffled order, gvK and paK in a random
      order, each `bzip2 -9 -c < SMALL_TXT` then `bzip2 -d -c < SMALL_BZ2`
      pinned to CPU 1, user+sys from wait4; prints the median of paK/gvK
      per pair with a 90 % bootstrap interval, for compression,
      decompression and both, each layout's median time, and for each
      build whether its layouts' mean times spread more than the noise
      within a layout explains (their sd over that noise's sd/sqrt(PASSES),
      with a permutation test).

SMALL_TXT: the first 1.8 MB of the bench's bzip2 input (gentext 6291456);
SMALL_BZ2: its -9 compression.
"""
import math, os, random, statistics, subprocess, sys

OBJS = "blocksort huffman crctable randtable compress decompress bzlib bzip2".split()


def link(n, seed, gv, pa, bcc, out):
    rng = random.Random(seed)
    for k in range(n):
        for v, cc, src in (("gv", ["gcc", "-fprofile-arcs"], gv), ("pa", [bcc], pa)):
            order = OBJS[:]
            rng.shuffle(order)
            pad = 16 * rng.randrange(64)
            d = os.path.join(out, "%s%d" % (v, k))
            os.makedirs(d, exist_ok=True)
            with open(d + "/pad.s", "w") as f:
                f.write('\t.section .note.GNU-stack,"",@progbits\n'
                        '\t.section .text.unlikely,"ax",@progbits\n')
                if pad:
                    f.write("pad:\n\t.skip %d\n" % pad)
            subprocess.run(["gcc", "-c", d + "/pad.s", "-o", d + "/pad.o"], check=True)
            subprocess.run(cc + ["-O2", "-o", d + "/bzip2", d + "/pad.o"] +
                           [os.path.join(src, o + ".o") for o in order], check=True)


def one(exe, args, inp):
    with open(inp, "rb") as fi, open(os.devnull, "wb") as fo:
        p = subprocess.Popen(["taskset", "-c", "1", exe] + args, stdin=fi, stdout=fo)
        _, _, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime


def time(passes, n, out, small_txt, small_bz2):
    def run(v, k):
        exe = os.path.join(out, "%s%d" % (v, k), "bzip2")
        return one(exe, ["-9", "-c"], small_txt), one(exe, ["-d", "-c"], small_bz2)
    rows, per = [], {}
    for _ in range(passes):
        ks = list(range(n))
        random.shuffle(ks)
        for k in ks:
            vs = ["gv", "pa"]
            random.shuffle(vs)
            t = {v: run(v, k) for v in vs}
            for v in vs:
                per.setdefault((v, k), []).append(t[v])
            rows.append((t["gv"], t["pa"]))
    rng = random.Random(1)
    for name, f in (("c", lambda x: x[0]), ("d", lambda x: x[1]), ("c+d", lambda x: x[0] + x[1])):
        rs = [f(b) / f(a) for a, b in rows]
        meds = sorted(statistics.median(rng.choices(rs, k=len(rs))) for _ in range(1000))
        print("pa/gv %-4s median %.4f [%.4f, %.4f] faster %d/%d" % (
            name, statistics.median(rs), meds[50], meds[949], sum(x < 1 for x in rs), len(rs)))
    for v in ("gv", "pa"):
        print(v, "per-layout c+d medians:", " ".join(
            "%.3f" % statistics.median([x[0] + x[1] for x in per[(v, k)]]) for k in range(n)))
    # Does the layout matter beyond the noise?  The spread of the layouts'
    # mean times against what the runs' own scatter within a layout would
    # give them (its standard deviation / sqrt(passes)), and a permutation
    # test of that ratio: the same runs dealt to the layouts at random
    # (time drift across passes is shared by all layouts, so it does not
    # inflate the ratio).
    for v in ("gv", "pa"):
        runs = [[x[0] + x[1] for x in per[(v, k)]] for k in range(n)]
        def ratio(groups):
            means = [statistics.mean(g) for g in groups]
            within = statistics.mean(statistics.variance(g) for g in groups)
            return statistics.stdev(means) / math.sqrt(within / passes)
        observed = ratio(runs)
        flat = [t for g in runs for t in g]
        prng = random.Random(2)
        hits = 0
        for _ in range(2000):
            prng.shuffle(flat)
            if ratio([flat[i * passes:(i + 1) * passes] for i in range(n)]) >= observed:
                hits += 1
        print("%s: layouts' means spread %.2f times what the noise within a "
              "layout gives (sd of means %.1f %% of the mean); permutation p = %.4f" % (
                  v, observed, 100 * statistics.stdev([statistics.mean(g) for g in runs]) /
                  statistics.mean(flat), (hits + 1) / 2001))


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "link":
        link(int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
    elif len(sys.argv) == 7 and sys.argv[1] == "time":
        time(int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
    else:
        sys.exit(__doc__)
