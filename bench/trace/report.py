#!/usr/bin/env python3
"""report.py OUT — bench/trace/run.sh's report (markdown on stdout) from
OUT/raw/*.tsv: witnesses per executed block by mechanism, bytes of trace,
instructions and wall time over plain and over gcov's edge profiling.

Time: per round, a configuration's time over the plain run just before it;
the median over rounds with a 90 % bootstrap interval of the median (1000
resamples of the rounds, seeded).  Overhead multiple: (ring - 1) / (gcov
- 1), both medians of the same resample of rounds.
"""
import csv
import random
import statistics
import sys

CONFIGS = ["gcov", "off", "ring", "full"]
CONFIG_NAMES = {
    "gcov": "gcov -fprofile-arcs",
    "off": "mode=trace, not started",
    "ring": "mode=trace, ring",
    "full": "mode=trace, full",
}


def rows(out, name):
    with open(f"{out}/raw/{name}.tsv") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def fmt(x, digits=3):
    return f"{x:.{digits}f}"


def bootstrap(values_by_round, stat, n=1000):
    """90 % interval of stat(resample) over resamples of rounds."""
    rng = random.Random(1)
    keys = list(values_by_round)
    got = []
    for _ in range(n):
        pick = [values_by_round[rng.choice(keys)] for _ in keys]
        try:
            got.append(stat(pick))
        except ZeroDivisionError:
            continue
    got.sort()
    if not got:
        return float("nan"), float("nan")
    return got[int(0.05 * len(got))], got[int(0.95 * len(got)) - 1]


def counted(programs, words, counts):
    """The programs with count runs (a --no-count run has none)."""
    return [p for p in programs if p in counts and (p, "full") in words
            and (p, "naive") in words]


def witnesses_table(out, programs):
    words = {(r["program"], r["trace"]): r for r in rows(out, "trace_words")}
    counts = {r["program"]: r for r in rows(out, "profile_counts")}
    print("## Witnesses per executed block\n")
    print("| program | executed blocks | naive trace | predicate tracing | "
          "path ends | mode=trace | mode=trace / naive | event words (full) "
          "| all words, mode=trace / naive | kEnter / kLand / kEnd |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in counted(programs, words, counts):
        full, naive, c = words[(p, "full")], words[(p, "naive")], counts[p]
        blocks = int(c["executed_blocks"])
        nb = int(naive["witnesses"])
        check = "" if nb == blocks else f" (naive trace: {nb})"
        per = lambda x: fmt(int(x) / blocks)  # noqa: E731
        print(f"| {p} | {blocks}{check} | {per(nb)} | "
              f"{per(c['predicate_witnesses'])} | {per(c['path_ends'])} | "
              f"{per(full['witnesses'])} | "
              f"{fmt(int(full['witnesses']) / nb)} | {per(full['events'])} | "
              f"{fmt(int(full['words']) / int(naive['words']))} | "
              f"{full['enters']} / {full['lands']} / {full['ends']} |")
    print("\nEach column but the counts is words per executed block (the "
          "mode=naive profile's block executions).  Event words (4 per "
          "kEnter, 5 per kLand, 3 per kEnd) are the same in the naive trace "
          "and mode=trace and are not in the witness columns.\n")


def bytes_table(out, programs, full_time):
    words = {(r["program"], r["trace"]): r for r in rows(out, "trace_words")}
    counts = {r["program"]: r for r in rows(out, "profile_counts")}
    print("## Trace bytes (full)\n")
    print("| program | file bytes | words | bytes / word | bytes / executed "
          "block | naive trace bytes | MB / s of the full run |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for p in counted(programs, words, counts):
        full, naive = words[(p, "full")], words[(p, "naive")]
        b, blocks = int(full["file_bytes"]), int(counts[p]["executed_blocks"])
        rate = "-" if p not in full_time else fmt(b / full_time[p] / 1e6, 1)
        print(f"| {p} | {b} | {full['words']} | "
              f"{fmt(b / int(full['words']), 2)} | {fmt(b / blocks)} | "
              f"{naive['file_bytes']} | {rate} |")
    print("\nMB / s: the file's bytes over the median wall time of the "
          "timed full-trace runs (whole process).\n")


def instr_table(out, programs):
    data = {(r["program"], r["config"]): int(r["instructions"])
            for r in rows(out, "instr")}
    if not data:
        return
    print("## Instructions (cachegrind, no cache simulation)\n")
    print("| program | plain | " + " | ".join(CONFIG_NAMES[c] for c in CONFIGS)
          + " | ring overhead / gcov's |")
    print("|---|---:|" + "---:|" * len(CONFIGS) + "---:|")
    for p in programs:
        base = data.get((p, "plain"))
        if base is None:
            continue
        ratio = {c: data[(p, c)] / base for c in CONFIGS if (p, c) in data}
        cell = lambda c: fmt(ratio[c]) if c in ratio else "—"  # noqa: E731
        mult = "—"
        if "ring" in ratio and "gcov" in ratio:
            mult = fmt((ratio["ring"] - 1) / (ratio["gcov"] - 1), 2)
        print(f"| {p} | {base} | " + " | ".join(cell(c) for c in CONFIGS)
              + f" | {mult} |")
    print("\n—: not measured.\n")


def time_table(out, programs):
    runs = rows(out, "runs")
    if not runs:
        return {}
    print("## Wall time over plain (median [90 % interval], rounds)\n")
    print("| program | plain s | " + " | ".join(CONFIG_NAMES[c] for c in CONFIGS)
          + " | ring overhead / gcov's | load |")
    print("|---|---:|" + "---:|" * len(CONFIGS) + "---:|---|")
    full_time = {}
    for p in programs:
        by_round = {}
        loads, plain = [], []
        for r in runs:
            if r["program"] != p:
                continue
            ratio = int(r["config_us"]) / int(r["plain_us"])
            by_round.setdefault(r["round"], {})[r["config"]] = ratio
            loads += [float(r["load_before"]), float(r["load_after"])]
            plain.append(int(r["plain_us"]) / 1e6)
            if r["config"] == "full":
                full_time.setdefault(p, []).append(int(r["config_us"]) / 1e6)
        cells = []
        for c in CONFIGS:
            med = lambda rs, c=c: statistics.median(x[c] for x in rs)  # noqa: E731
            lo, hi = bootstrap(by_round, med)
            cells.append(f"{fmt(med(by_round.values()))} [{fmt(lo)}–{fmt(hi)}]")

        def mult(rs):
            return (statistics.median(x["ring"] for x in rs) - 1) / (
                statistics.median(x["gcov"] for x in rs) - 1)
        if statistics.median(x["gcov"] for x in by_round.values()) > 1:
            lo, hi = bootstrap(by_round, mult)
            multiple = (f"{fmt(mult(list(by_round.values())), 2)} "
                        f"[{fmt(lo, 2)}–{fmt(hi, 2)}]")
        else:
            multiple = "— (gcov's median not above plain)"
        print(f"| {p} | {fmt(statistics.median(plain))} | " + " | ".join(cells)
              + f" | {multiple} | {min(loads):.2f}–{max(loads):.2f} "
              f"({len(by_round)} rounds) |")
    print("\nload: the 1-minute load average before and after each round "
          "(min–max).\n")
    return {p: statistics.median(t) for p, t in full_time.items()}


def main():
    out = sys.argv[1]
    programs = list(dict.fromkeys(
        [r["program"] for r in rows(out, "profile_counts")] +
        [r["program"] for r in rows(out, "instr")]))
    print("# Tracing: witnesses, bytes, instructions and time\n")
    with open(f"{out}/machine.txt") as f:
        print("```\n" + f.read().rstrip() + "\n```\n")
    witnesses_table(out, programs)
    full_time = time_table(out, programs)
    bytes_table(out, programs, full_time)
    instr_table(out, programs)


if __name__ == "__main__":
    main()
