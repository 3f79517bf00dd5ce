#!/usr/bin/env python3
"""report.py — the markdown report of bench/named's measurements.

  report.py gzip RUNS.TSV     gzip_check.sh's pairs: named over unnamed CPU
  report.py scale RUNS.TSV    scale.py's processes: dump cost and size vs N
"""
import csv
import random
import statistics
import sys


def bootstrap_median(xs, level=0.90, resamples=1000, seed=1):
    """The median of xs and a bootstrap interval of it (resampled rounds)."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs)))
                  for _ in range(resamples))
    lo = meds[int((1 - level) / 2 * resamples)]
    hi = meds[int((1 + level) / 2 * resamples) - 1]
    return statistics.median(xs), lo, hi


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def gzip_report(path):
    runs = rows(path)
    by = {}
    for r in runs:
        by.setdefault(r["round"], {})[r["kind"]] = r
    cpu = lambda r: float(r["user_s"]) + float(r["sys_s"])
    pairs = [p for p in by.values() if "named" in p and "unnamed" in p]
    ratios = [cpu(p["named"]) / cpu(p["unnamed"]) for p in pairs]
    walls = [float(p["named"]["wall_s"]) / float(p["unnamed"]["wall_s"])
             for p in pairs]
    med, lo, hi = bootstrap_median(ratios)
    wmed, wlo, whi = bootstrap_median(walls)
    tests = int(pairs[0]["named"]["tests"])
    size_u = statistics.median(int(p["unnamed"]["profile_bytes"]) for p in pairs)
    size_n = statistics.median(int(p["named"]["profile_bytes"]) for p in pairs)
    loads = [float(r["load"]) for r in runs]
    verdict = ("met" if hi <= 1.1 else "missed" if lo > 1.1
               else "met within the noise")
    print("## gzip `make check`, every test named, over unnamed\n")
    print(f"{len(pairs)} interleaved pairs, {tests} tests each; load average "
          f"before a run {min(loads):.2f}–{max(loads):.2f}.\n")
    print("| | median | 90 % interval | min–max |")
    print("|---|---|---|---|")
    print(f"| CPU (user + sys) named / unnamed | {med:.3f} | {lo:.3f}–{hi:.3f} "
          f"| {min(ratios):.3f}–{max(ratios):.3f} |")
    print(f"| wall named / unnamed | {wmed:.3f} | {wlo:.3f}–{whi:.3f} "
          f"| {min(walls):.3f}–{max(walls):.3f} |")
    cu = statistics.median(cpu(p["unnamed"]) for p in pairs)
    cn = statistics.median(cpu(p["named"]) for p in pairs)
    print(f"\nCPU seconds (median): unnamed {cu:.2f}, named {cn:.2f}. "
          f"Target ≤ 1.1×: {verdict}.\n")
    print(f"Profiles (all .bprof files): unnamed {size_u:,.0f} bytes, named "
          f"{size_n:,.0f} bytes: {(size_n - size_u) / tests:,.0f} bytes per "
          "named test.")


def scale_report(path):
    runs = rows(path)
    print("## N named processes of one program into one profile\n")
    print("| N | kind | CPU ms per process (last 10 %) | dump ms per process "
          "(last 10 %, over /dev/null) | file bytes | bytes per name |")
    print("|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['n']} | {r['kind']} | {float(r['cpu_ms_tail']):.2f} | "
              f"{float(r['dump_ms_tail']):.2f} | {int(r['bytes']):,} | "
              f"{r['bytes_per_name']} |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gzip", "scale"):
        sys.exit(__doc__)
    (gzip_report if sys.argv[1] == "gzip" else scale_report)(sys.argv[2])
