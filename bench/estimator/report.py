#!/usr/bin/env python3
"""report.py — the estimator benchmark's arithmetic (bench/estimator/run.sh).

  report.py row PROGRAM GROUP ESTIMATOR DUMP SHOW STATS
      one line of raw/rows.tsv: how ESTIMATOR's weights (the pass dump DUMP,
      its "edge weights" lines; for the estimator "gcc", the dump's "gcc
      probabilities") predict the two-way branches of the measured profile
      SHOW (ballarus-reconstruct show --json of a run), and the dynamic
      increments of its own run (STATS: ballarus-reconstruct stats --json).
  report.py heuristics PROGRAM DUMP SHOW
      lines of raw/heuristics.tsv: per Wu-Larus heuristic (the wu-larus
      dump's "bb N heuristics:" lines), the executions of the two-way
      branches it applied to and how many went the way it predicted.
  report.py table ROWS_TSV [HEURISTICS_TSV]
      the markdown tables (stdout).

A two-way branch is a block with one "true" and one "false" edge.  Its
executions are its two edges' measured counts; the estimator's likelier
direction is the edge with the greater weight (GCC: probability); a tie
counts half.  The hit rate is the share of all executions that went the
likelier way (Ball & Larus' and Wu & Larus' weighted measure).  The
exact-max build's weights are the measured counts themselves: its hit rate
is the ceiling of any static prediction (each branch's likelier way).
"""
import json
import math
import re
import sys

FUNCTION = re.compile(
    r"^ballarus: function (.+) \(([^()]*):(\d+)\): (\d+) blocks, "
    r"cfg checksum (\d+)$")
ESTIMATORS = ("ball-larus", "wu-larus", "gcc", "exact-max")


def fail(msg):
    sys.stderr.write("bench/estimator/report.py: error: %s\n" % msg)
    sys.exit(1)


def read_dump(path, key):
    """{(name, checksum): [values]} of the dump's `key` lines ("edge
    weights" or "gcc probabilities"); "-" reads None.  The first of equal
    functions (an inline function of several TUs) wins."""
    out = {}
    current = None
    prefix = "  %s:" % key
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = FUNCTION.match(line)
            if m:
                current = (m.group(1), int(m.group(5)))
            elif line.startswith(prefix) and current is not None:
                vals = [None if v == "-" else int(v)
                        for v in line[len(prefix):].split()]
                out.setdefault(current, vals)
    return out


def read_counts(path):
    """{(name, checksum): [(src, dst, kind, count)]}; functions of one name
    and checksum in several TUs have their counts summed."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for fn in doc["functions"]:
        key = (fn.get("demangled") or fn["name"], int(fn["checksum"]))
        edges = [(e["src"], e["dst"], e["kind"], e["count"] or 0)
                 for e in fn["edges"]]
        old = out.get(key)
        if old is not None and len(old) == len(edges):
            edges = [(a[0], a[1], a[2], a[3] + b[3])
                     for a, b in zip(old, edges)]
        out[key] = edges
    return out


def hits(counts, weights):
    """(executions, hits, branches) over the two-way branches."""
    execs = hit = 0.0
    branches = 0
    for key, edges in counts.items():
        w = weights.get(key)
        if w is None or len(w) != len(edges):
            continue
        by_src = {}
        for i, (src, _, kind, _) in enumerate(edges):
            if kind in ("true", "false"):
                by_src.setdefault(src, []).append(i)
        for src, pair in by_src.items():
            if len(pair) != 2:
                continue
            a, b = pair
            na, nb = edges[a][3], edges[b][3]
            if na + nb == 0:
                continue
            branches += 1
            execs += na + nb
            wa = -1 if w[a] is None else w[a]
            wb = -1 if w[b] is None else w[b]
            hit += na if wa > wb else nb if wb > wa else (na + nb) / 2
    return execs, hit, branches


def row(program, group, estimator, dump, show, stats):
    counts = read_counts(show)
    key = "gcc probabilities" if estimator == "gcc" else "edge weights"
    execs, hit, branches = hits(counts, read_dump(dump, key))
    with open(stats) as f:
        inc = json.load(f)["total"]["dynamic_increments"]
    print("%s\t%s\t%s\t%d\t%d\t%.1f\t%d" %
          (program, group, estimator, branches, execs, hit, inc))


HEURISTICS = re.compile(r"^  bb (\d+) heuristics:(.*)$")


def heuristics(program, dump, show):
    counts = read_counts(show)
    seen = set()
    tally = {}  # heuristic -> [executions, hits]
    current = None
    with open(dump) as f:
        for line in f:
            m = FUNCTION.match(line.rstrip("\n"))
            if m:
                current = (m.group(1), int(m.group(5)))
                continue
            m = HEURISTICS.match(line.rstrip("\n"))
            if not m or current not in counts or (current, m.group(1)) in seen:
                continue
            seen.add((current, m.group(1)))
            src = int(m.group(1))
            out = {}
            for s_, d, kind, n in counts[current]:
                if s_ == src and kind in ("true", "false"):
                    out[d] = out.get(d, 0) + n
            if len(out) != 2:
                continue
            for item in m.group(2).split():
                name, dst = item.split("->")
                acc = tally.setdefault(name, [0, 0])
                acc[0] += sum(out.values())
                acc[1] += out.get(int(dst), 0)
    for name, (execs, hit) in sorted(tally.items()):
        print("%s\t%s\t%d\t%d" % (program, name, execs, hit))


def heuristic_table(path):
    order = ["loop-branch", "pointer", "call", "opcode", "loop-exit",
             "return", "store", "loop-header", "guard"]
    rate = dict(zip(order, (88, 60, 78, 84, 80, 72, 55, 75, 62)))
    progs, tally = [], {}
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(header, line.rstrip("\n").split("\t")))
            g = "c-torture" if r["program"].startswith("torture/") \
                else r["program"]
            if g not in progs:
                progs.append(g)
            acc = tally.setdefault((r["heuristic"], g), [0, 0])
            acc[0] += int(r["executions"])
            acc[1] += int(r["hits"])
    print("| heuristic | Wu–Larus' rate | " +
          " | ".join(progs) + " |")
    print("|---|---:|" + "---:|" * len(progs))
    for h in order:
        cells = [h, "%d %%" % rate[h]]
        for g in progs:
            execs, hit = tally.get((h, g), (0, 0))
            cells.append("%s of %s" % (fmt_rate(hit, execs),
                                       "{:,}".format(execs))
                         if execs else "–")
        print("| " + " | ".join(cells) + " |")


def fmt_rate(hit, execs):
    return "%.1f %%" % (100.0 * hit / execs) if execs else "–"


def table(path):
    rows = {}  # (group) -> {estimator: [execs, hit, inc]}, in order
    order = []
    per_program = {}  # (group, program) -> {estimator: inc}
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(header, line.rstrip("\n").split("\t")))
            g = r["group"]
            if g not in rows:
                rows[g] = {}
                order.append(g)
            acc = rows[g].setdefault(r["estimator"], [0.0, 0.0, 0, set()])
            acc[0] += float(r["executions"])
            acc[1] += float(r["hits"])
            acc[2] += int(r["increments"])
            acc[3].add(r["program"])
            per_program.setdefault((g, r["program"]), {})[r["estimator"]] = \
                int(r["increments"])
    print("| program | 2-way branch executions | hit rate: Ball–Larus | "
          "Wu–Larus | GCC | the profile's own | Exact-Max increments | "
          "Ball–Larus / Exact-Max | Wu–Larus / Exact-Max | "
          "GCC / Exact-Max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for g in order:
        e = rows[g]
        base = e.get("exact-max", [0, 0, 0, set()])[2]
        n = len(e.get("exact-max", [0, 0, 0, set()])[3])
        name = g if n <= 1 else "%s (%d programs, pooled)" % (g, n)
        execs = e["ball-larus"][0]
        cells = [name, "{:,}".format(int(execs))]
        for est in ESTIMATORS:
            cells.append(fmt_rate(e[est][1], e[est][0]))
        cells.append("{:,}".format(base))
        for est in ("ball-larus", "wu-larus", "gcc"):
            cells.append("%.3f" % (e[est][2] / base) if base else "–")
        print("| " + " | ".join(cells) + " |")
    # Groups of several programs: the geometric mean of per-program ratios
    # (each program weighs alike, not by its run length).
    for g in order:
        progs = [v for (gg, _), v in per_program.items() if gg == g]
        if len(progs) <= 1:
            continue
        cells = ["%s (geomean of %d)" % (g, len(progs))] + [""] * 6
        for est in ("ball-larus", "wu-larus", "gcc"):
            logs = [math.log(p[est] / p["exact-max"]) for p in progs
                    if p.get("exact-max") and p.get(est)]
            cells.append("%.3f" % math.exp(sum(logs) / len(logs))
                         if logs else "–")
        print("| " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) == 8 and argv[1] == "row":
        row(*argv[2:])
    elif len(argv) == 5 and argv[1] == "heuristics":
        heuristics(*argv[2:])
    elif len(argv) in (3, 4) and argv[1] == "table":
        table(argv[2])
        if len(argv) == 4:
            print()
            print("Each Wu–Larus heuristic: the executions of the two-way "
                  "branches it applied to, and the share that went the way "
                  "it predicted.")
            print()
            heuristic_table(argv[3])
    else:
        fail("usage: report.py row PROGRAM GROUP ESTIMATOR DUMP SHOW STATS "
             "| heuristics PROGRAM DUMP SHOW | table ROWS_TSV "
             "[HEURISTICS_TSV]")


if __name__ == "__main__":
    main(sys.argv)
