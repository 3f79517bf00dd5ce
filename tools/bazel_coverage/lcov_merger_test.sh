#!/usr/bin/env bash
# lcov_merger.py on hand-made inputs: two tracefiles and a gcov JSON file of
# one test are added line by line, function by function and branch by
# branch; --filter_sources and the manifest drop sources; --reports_file
# merges per-test reports.  Expected outputs are written out by hand.
set -euo pipefail

rf=${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}/ballarus
merger=$rf/tools/bazel_coverage/lcov_merger.py
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/merger.XXXXXX")
trap 'rm -rf -- "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$T/cov/sub"
cat >"$T/cov/_cc_coverage.dat" <<'DAT'
TN:
SF:pkg/a.c
FN:3,f
FNDA:2,f
BRDA:4,0,0,1
BRDA:4,0,1,-
DA:3,2
DA:4,2
DA:6,0
end_of_record
SF:/usr/include/stdio.h
DA:1,5
end_of_record
DAT
cat >"$T/cov/sub/more.dat" <<'DAT'
SF:pkg/a.c
FN:3,f
FN:8,g
FNDA:1,f
FNDA:0,g
BRDA:4,0,0,2
BRDA:4,0,1,3
DA:3,1
DA:6,4
DA:8,0
end_of_record
SF:external/lib/x.c
DA:1,1
end_of_record
SF:pkg/unlisted.c
DA:1,1
end_of_record
DAT
python3 - "$T/cov/b.gcov.json.gz" <<'PY'
import gzip, json, sys
doc = {"files": [{"file": "pkg/b.cc",
                  "functions": [{"name": "_Z1hv", "start_line": 2, "execution_count": 7}],
                  "lines": [{"line_number": 2, "count": 7, "branches": []},
                            {"line_number": 3, "count": 0,
                             "branches": [{"count": 0}, {"count": 7}]}]}]}
with gzip.open(sys.argv[1], "wt") as f:
    json.dump(doc, f)
PY
printf '%s\n' bazel-out/k8/bin/pkg/a.pic.gcno pkg/a.c pkg/b.cc >"$T/manifest"

python3 "$merger" --coverage_dir="$T/cov" --output_file="$T/out.dat" \
  --filter_sources='/usr/include.+' --filter_sources='.*external/.+' \
  --source_file_manifest="$T/manifest"
cat >"$T/want.dat" <<'DAT'
SF:pkg/a.c
FN:3,f
FN:8,g
FNDA:3,f
FNDA:0,g
FNF:2
FNH:1
BRDA:4,0,0,3
BRDA:4,0,1,3
BRF:2
BRH:2
DA:3,3
DA:4,2
DA:6,4
DA:8,0
LF:4
LH:3
end_of_record
SF:pkg/b.cc
FN:2,_Z1hv
FNDA:7,_Z1hv
FNF:1
FNH:1
BRDA:3,0,0,0
BRDA:3,0,1,7
BRF:2
BRH:1
DA:2,7
DA:3,0
LF:2
LH:1
end_of_record
DAT
diff -u "$T/want.dat" "$T/out.dat" || fail "merged test report differs"

# Per-test reports into one (--combined_report=lcov); a missing one is skipped.
printf '%s\n' "$T/out.dat" "$T/cov/sub/more.dat" "$T/missing.dat" >"$T/reports"
python3 "$merger" --reports_file="$T/reports" --output_file="$T/all.dat"
grep -qx 'DA:6,8' "$T/all.dat" || fail "combined: pkg/a.c line 6 is not 4 + 4"
grep -qx 'SF:external/lib/x.c' "$T/all.dat" || fail "combined: reports are not filtered again"

# Exactly one of --coverage_dir and --reports_file.
if python3 "$merger" --output_file="$T/x" 2>/dev/null; then fail "no input accepted"; fi
echo PASS
