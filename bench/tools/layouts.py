#!/usr/bin/env python3
"""layouts.py — bzip2's run time across random code layouts, for any set of
builds (docs/performance.md, "Code layout and wall time").

  layouts.py link N SEED OUT NAME=OBJDIR:LINKER ...
      links N layouts of each build from its objects (bzip2.o and the
      members of libbz2.a, as the bzip2 Makefile builds them with -O2
      -D_FILE_OFFSET_BITS=64): the objects shuffled, a pad of 16*k bytes
      (k < 256, as run.sh --layout random) in .text.unlikely ahead of
      them, linked by LINKER (`gcc`, `gcc -fprofile-arcs`, ballarus-gcc; a
      comma in LINKER stands for a space) into OUT/NAME.K/bzip2.
  layouts.py time PASSES OUT INPUT_TXT INPUT_BZ2 NAME ...
      per pass, every layout K in a shuffled order, the builds of layout K
      in a random order, each `bzip2 -9 -c < INPUT_TXT` then `bzip2 -d -c
      < INPUT_BZ2`, pinned to CPU 1, user+sys from wait4, each run in its
      own empty directory with BALLARUS_PROFILE and GCOV_PREFIX pointing
      into it (a fresh profile per run, as in run.sh).  The first NAME is
      the base (plain).  Prints, over all (pass, layout) rounds: each
      build's time over the base's of the same round (median, 90 %
      bootstrap interval), for compression, decompression and both; each
      build over the second NAME's (gcov's) of the same round; and each
      build's overhead (ratio - 1) as a multiple of the second NAME's,
      median of the per-round ratios of medians over bootstrap resamples
      of whole rounds.  Every run's time goes to OUT/rounds.tsv (round,
      layout, build, compress and decompress seconds).
"""
import os, random, shutil, statistics, subprocess, sys, tempfile

OBJS = "blocksort huffman crctable randtable compress decompress bzlib bzip2".split()


def link(n, seed, out, specs):
    rng = random.Random(seed)
    for k in range(n):
        for spec in specs:
            name, _, rest = spec.partition("=")
            objdir, _, linker = rest.partition(":")
            order = OBJS[:]
            rng.shuffle(order)
            pad = 16 * rng.randrange(256)
            d = os.path.join(out, "%s.%d" % (name, k))
            os.makedirs(d, exist_ok=True)
            with open(d + "/pad.s", "w") as f:
                f.write('\t.section .note.GNU-stack,"",@progbits\n'
                        '\t.section .text.unlikely,"ax",@progbits\n')
                if pad:
                    f.write("pad:\n\t.skip %d\n" % pad)
            subprocess.run(["gcc", "-c", d + "/pad.s", "-o", d + "/pad.o"], check=True)
            subprocess.run(linker.split(",") + ["-O2", "-o", d + "/bzip2", d + "/pad.o"] +
                           [os.path.join(objdir, o + ".o") for o in order], check=True)


def one(exe, args, inp, scratch):
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, BALLARUS_PROFILE=scratch + "/ballarus.profile",
               GCOV_PREFIX=scratch + "/gcov")
    with open(inp, "rb") as fi, open(os.devnull, "wb") as fo:
        p = subprocess.Popen(["taskset", "-c", "1", exe] + args, stdin=fi, stdout=fo,
                             cwd=scratch, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("layouts.py: %s %s exited with status %d" % (exe, " ".join(args), status))
    return ru.ru_utime + ru.ru_stime


def interval(xs, rng, stat=statistics.median, k=1000):
    meds = sorted(stat(rng.choices(xs, k=len(xs))) for _ in range(k))
    return meds[k // 20], meds[k - 1 - k // 20]


def time(passes, out, txt, bz2, names):
    scratch = tempfile.mkdtemp(prefix="layouts.")
    n = len([d for d in os.listdir(out) if d.startswith(names[0] + ".")])
    rounds = []   # {name: (compress s, decompress s)}
    for _ in range(passes):
        ks = list(range(n))
        random.shuffle(ks)
        for k in ks:
            vs = names[:]
            random.shuffle(vs)
            t = {}
            for v in vs:
                exe = os.path.join(out, "%s.%d" % (v, k), "bzip2")
                t[v] = (one(exe, ["-9", "-c"], txt, scratch + "/run"),
                        one(exe, ["-d", "-c"], bz2, scratch + "/run"))
            rounds.append((k, t))
    shutil.rmtree(scratch, ignore_errors=True)
    with open(os.path.join(out, "rounds.tsv"), "w") as f:
        f.write("round\tlayout\tbuild\tcompress_s\tdecompress_s\n")
        for i, (k, t) in enumerate(rounds):
            for v in names:
                f.write("%d\t%d\t%s\t%.6f\t%.6f\n" % (i, k, v, t[v][0], t[v][1]))
    rounds = [t for _, t in rounds]
    rng = random.Random(1)
    parts = (("c", lambda x: x[0]), ("d", lambda x: x[1]), ("c+d", lambda x: x[0] + x[1]))
    base, ref = names[0], names[1]
    print("%d rounds (%d passes x %d layouts); %s median c+d %.3f s" % (
        len(rounds), passes, n, base, statistics.median(sum(r[base]) for r in rounds)))
    for over in (base, ref):
        for v in names:
            if v == over:
                continue
            for part, f in parts:
                rs = [f(r[v]) / f(r[over]) for r in rounds]
                lo, hi = interval(rs, rng)
                print("%s/%s %-4s median %.4f [%.4f, %.4f] faster %d/%d" % (
                    v, over, part, statistics.median(rs), lo, hi,
                    sum(x < 1 for x in rs), len(rs)))
    # Overhead multiples: (median of v/base - 1) / (median of ref/base - 1),
    # the interval from resampling whole rounds.
    for v in names[2:]:
        for part, f in parts:
            def multiple(rs):
                ov = statistics.median(f(r[v]) / f(r[base]) for r in rs) - 1
                og = statistics.median(f(r[ref]) / f(r[base]) for r in rs) - 1
                return ov / og if og > 0 else float("inf")
            ms = sorted(multiple(rng.choices(rounds, k=len(rounds))) for _ in range(1000))
            print("%s overhead / %s overhead %-4s %.2fx [%.2f, %.2f]" % (
                v, ref, part, multiple(rounds), ms[50], ms[949]))


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "link":
        link(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
    elif len(sys.argv) >= 8 and sys.argv[1] == "time":
        time(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
    else:
        sys.exit(__doc__)
