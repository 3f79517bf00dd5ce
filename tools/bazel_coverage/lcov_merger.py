#!/usr/bin/env python3
"""Offline stand-in for Bazel's coverage output generator.

Bazel 4.2.3 fetches its LcovMerger and report generator (Java) from the
network; an offline Bazel (Debian's bazel-bootstrap) has neither.  This
script does what `bazel coverage` needs of them, for C and C++:

  lcov_merger.py --coverage_dir=DIR --output_file=OUT [--filter_sources=RE]...
                 [--source_file_manifest=FILE] [--sources_to_replace_file=F]
      (one test: Bazel's collect_coverage.sh) merges every lcov tracefile
      (*.dat) and gcov JSON file (*.gcov.json.gz) under DIR into OUT,
      dropping sources that match a --filter_sources regex and, when the
      manifest lists C/C++ sources, sources it does not list.

  lcov_merger.py --reports_file=LIST --output_file=OUT
      (--combined_report=lcov) merges the tracefiles LIST names into OUT.

Counts of one source line, function or branch are added.
"""

import argparse
import gzip
import json
import os
import re
import sys

CC_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".h", ".hh",
               ".hpp", ".hxx", ".inc", ".ipp", ".tcc")


class SourceFile:
    """The counts of one source file: lines, functions, branches."""

    def __init__(self):
        self.lines = {}        # line -> count
        self.fn_line = {}      # function name -> first line
        self.fn_count = {}     # function name -> count
        self.branches = {}     # (line, block, branch) -> count or None

    def add_line(self, line, count):
        self.lines[line] = self.lines.get(line, 0) + count

    def add_function(self, name, line=None, count=None):
        if line is not None:
            self.fn_line.setdefault(name, line)
        if count is not None:
            self.fn_count[name] = self.fn_count.get(name, 0) + count

    def add_branch(self, key, count):
        old = self.branches.get(key)
        if count is None:
            self.branches.setdefault(key, None)
        else:
            self.branches[key] = (old or 0) + count


def read_tracefile(path, files):
    """Adds the records of the lcov tracefile PATH to FILES."""
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            tag, _, value = line.partition(":")
            if tag == "SF":
                current = files.setdefault(value, SourceFile())
            elif current is None:
                continue
            elif tag == "DA":
                fields = value.split(",")
                current.add_line(int(fields[0]), int(fields[1]))
            elif tag == "FN":
                num, _, name = value.partition(",")
                current.add_function(name, line=int(num))
            elif tag == "FNDA":
                num, _, name = value.partition(",")
                current.add_function(name, count=int(num))
            elif tag == "BRDA":
                ln, block, branch, taken = value.split(",")
                current.add_branch((int(ln), block, branch),
                                   None if taken == "-" else int(taken))
            elif tag == "end_of_record":
                current = None


def read_gcov_json(path, files):
    """Adds the counts of one gcov JSON file (gcov -i, GCC 9+) to FILES."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    for entry in doc.get("files", []):
        sf = files.setdefault(entry["file"], SourceFile())
        for fn in entry.get("functions", []):
            sf.add_function(fn["name"], line=fn["start_line"],
                            count=fn["execution_count"])
        for ln in entry.get("lines", []):
            sf.add_line(ln["line_number"], ln["count"])
            for i, br in enumerate(ln.get("branches", [])):
                sf.add_branch((ln["line_number"], "0", str(i)), br["count"])


def write_tracefile(files, out):
    """Writes FILES as one lcov tracefile, sources in name order."""
    for name in sorted(files):
        sf = files[name]
        out.write("SF:%s\n" % name)
        for fn in sorted(sf.fn_line, key=lambda n: (sf.fn_line[n], n)):
            out.write("FN:%d,%s\n" % (sf.fn_line[fn], fn))
        for fn in sorted(sf.fn_count):
            out.write("FNDA:%d,%s\n" % (sf.fn_count[fn], fn))
        out.write("FNF:%d\n" % len(sf.fn_line))
        out.write("FNH:%d\n" % sum(1 for c in sf.fn_count.values() if c > 0))
        for (ln, block, branch) in sorted(sf.branches,
                                          key=lambda k: (k[0], k[1], k[2])):
            taken = sf.branches[(ln, block, branch)]
            out.write("BRDA:%d,%s,%s,%s\n" %
                      (ln, block, branch, "-" if taken is None else taken))
        out.write("BRF:%d\n" % len(sf.branches))
        out.write("BRH:%d\n" % sum(1 for c in sf.branches.values() if c))
        for ln in sorted(sf.lines):
            out.write("DA:%d,%d\n" % (ln, sf.lines[ln]))
        out.write("LF:%d\n" % len(sf.lines))
        out.write("LH:%d\n" % sum(1 for c in sf.lines.values() if c > 0))
        out.write("end_of_record\n")


def manifest_sources(path):
    """The C/C++ sources a coverage manifest lists (empty: keep all)."""
    if not path:
        return set()
    with open(path, encoding="utf-8") as f:
        names = [l.strip() for l in f if l.strip()]
    return {n for n in names if n.endswith(CC_SUFFIXES)}


def collect(coverage_dir, output_file, files):
    """Reads every *.dat and *.gcov.json.gz under COVERAGE_DIR (but not
    OUTPUT_FILE, should it lie there)."""
    skip = os.path.abspath(output_file)
    for dirpath, _, names in os.walk(coverage_dir):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            if os.path.abspath(path) == skip:
                continue
            if name.endswith(".dat"):
                read_tracefile(path, files)
            elif name.endswith(".gcov.json.gz"):
                read_gcov_json(path, files)


def keep(files, filters, sources):
    """FILES without the sources FILTERS match or SOURCES does not list."""
    regexes = [re.compile(f) for f in filters]
    kept = {}
    for name, sf in files.items():
        if any(r.match(name) for r in regexes):
            continue
        if sources and name not in sources:
            continue
        kept[name] = sf
    return kept


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--coverage_dir")
    p.add_argument("--reports_file")
    p.add_argument("--output_file", required=True)
    p.add_argument("--filter_sources", action="append", default=[])
    p.add_argument("--source_file_manifest")
    p.add_argument("--sources_to_replace_file")
    args, _ = p.parse_known_args(argv)
    if bool(args.coverage_dir) == bool(args.reports_file):
        p.error("give exactly one of --coverage_dir and --reports_file")
    return args


def main(argv):
    args = parse_args(argv)
    files = {}
    if args.coverage_dir:
        collect(args.coverage_dir, args.output_file, files)
        files = keep(files, args.filter_sources,
                     manifest_sources(args.source_file_manifest))
    else:
        with open(args.reports_file, encoding="utf-8") as f:
            for report in (l.strip() for l in f):
                if report and os.path.isfile(report):
                    read_tracefile(report, files)
    tmp = args.output_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        write_tracefile(files, out)
    os.replace(tmp, args.output_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
