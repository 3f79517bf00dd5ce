#!/usr/bin/env python3
"""profile_counts.py — what bench/trace/run.sh takes from the count runs'
profiles, as one tab-separated line:

    executed_blocks predicate_witnesses path_ends

  python3 profile_counts.py RECONSTRUCT NAIVE_PROFILE PATH_PROFILE

executed_blocks: the sum of every real block's count (not ENTRY, 0, or
EXIT, 1) in the mode=naive profile (a counter on every edge).
predicate_witnesses: predicate tracing's witnesses, one at the target of
every executed edge out of a block with two or more flow successors (edges
not of kind "fake"), i.e. the sum of those edges' counts; where one of a
block's flow edges has no count (an abnormal edge: a computed goto's, a
setjmp receiver's), the block's own count instead (each execution of the
block leaves it by one of them).
path_ends: the Ball-Larus paths the run completed, the sum of every
function's path_count_total in the mode=path profile: one witness per
path end (Larus, "Whole program paths", PLDI 1999).
"""
import json
import subprocess
import sys


def load(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def naive_counts(recon, profile):
    data = load([recon, "show", "--json", profile])
    blocks = predicate = 0
    for fn in data["functions"]:
        blocks += sum(b["count"] for b in fn["blocks"] if b["id"] >= 2)
        out = {}
        for e in fn["edges"]:
            if e["kind"] != "fake":
                out.setdefault(e["src"], []).append(e["count"])
        count = {b["id"]: b["count"] for b in fn["blocks"]}
        for src, counts in out.items():
            if len(counts) < 2:
                continue
            predicate += count[src] if None in counts else sum(counts)
    return blocks, predicate


def path_ends(recon, profile):
    data = load([recon, "paths", "--json", "--top", "1", "--all-files", profile])
    return sum(fn.get("path_count_total", 0) for fn in data["functions"])


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: profile_counts.py RECONSTRUCT NAIVE_PROFILE PATH_PROFILE")
    recon, naive, path = sys.argv[1:]
    blocks, predicate = naive_counts(recon, naive)
    print(f"{blocks}\t{predicate}\t{path_ends(recon, path)}")


if __name__ == "__main__":
    main()
