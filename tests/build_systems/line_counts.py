#!/usr/bin/env python3
"""Line counts of the sources under ROOT, from an lcov tracefile or from
gcov itself, printed as sorted "FILE:LINE COUNT" lines so two can be
compared with diff.

  line_counts.py lcov ROOT TRACEFILE
  line_counts.py gcov ROOT GCDA...     (runs gcov --json-format --stdout on
                                        each .gcda; counts of one line in
                                        several objects are added)
"""
import json
import os
import subprocess
import sys


def from_lcov(root, path):
    counts = {}
    source = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("SF:"):
                source = os.path.realpath(line[3:])
            elif line.startswith("DA:") and source is not None:
                number, count = line[3:].split(",")[:2]
                key = (source, int(number))
                counts[key] = counts.get(key, 0) + int(count)
    return counts


def from_gcov(gcdas):
    counts = {}
    for gcda in gcdas:
        out = subprocess.run(
            ["gcov", "--json-format", "--stdout", gcda],
            cwd=os.path.dirname(gcda) or ".", check=True,
            capture_output=True, text=True).stdout
        for doc in out.splitlines():
            if not doc.strip():
                continue
            data = json.loads(doc)
            cwd = data.get("current_working_directory", "")
            for f in data["files"]:
                source = os.path.realpath(os.path.join(cwd, f["file"]))
                for ln in f["lines"]:
                    key = (source, ln["line_number"])
                    counts[key] = counts.get(key, 0) + ln["count"]
    return counts


def main(argv):
    kind, root = argv[1], os.path.realpath(argv[2])
    counts = from_lcov(root, argv[3]) if kind == "lcov" else from_gcov(argv[3:])
    for (source, number), count in sorted(counts.items()):
        if source.startswith(root + os.sep):
            print("%s:%d %d" % (os.path.relpath(source, root), number, count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
