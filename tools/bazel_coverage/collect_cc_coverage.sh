#!/usr/bin/env bash
# collect_cc_coverage.sh — Bazel's C/C++ coverage collector, for tests built
# with the ballarus plugin instead of gcov's -fprofile-arcs.
#
# `bazel coverage` runs it after a passing test, in the execution root, as
# CC_CODE_COVERAGE_SCRIPT (see README.md, "Bazel").  The test ran under
# run_test.sh, so its processes pooled their counts into
# $COVERAGE_DIR/ballarus.profile; this script writes them as the lcov
# tracefile $COVERAGE_DIR/_cc_coverage.dat, which Bazel's lcov merger turns
# into the test's coverage.dat.  Source names are made relative to the
# execution root the objects were compiled in (as Bazel names sources).
#
# Environment: COVERAGE_DIR (set by Bazel), BALLARUS_RECONSTRUCT (the
# ballarus-reconstruct to run; default: the one on PATH).
set -euo pipefail

prog=collect_cc_coverage.sh
die() {
  printf '%s: error: %s\n' "$prog" "$1" >&2
  exit 2
}

[ -n "${COVERAGE_DIR:-}" ] || die "COVERAGE_DIR is not set (run me from bazel coverage)"
reconstruct=${BALLARUS_RECONSTRUCT:-ballarus-reconstruct}
command -v -- "$reconstruct" >/dev/null 2>&1 \
  || die "ballarus-reconstruct not found: $reconstruct (set BALLARUS_RECONSTRUCT with --test_env)"

profile=$COVERAGE_DIR/ballarus.profile
out=$COVERAGE_DIR/_cc_coverage.dat
if [ ! -f "$profile" ]; then
  # Nothing instrumented ran (or the test was not run under run_test.sh).
  echo "$prog: no $profile; no ballarus coverage for this test" >&2
  exit 0
fi

# Every file of the profile: Bazel's merger keeps the sources the
# target's coverage manifest lists and drops the rest.
"$reconstruct" lcov --all-files -o "$out.tmp" "$profile"
# Bazel compiles in the execution root (or a sandbox's copy of it) with
# PWD=/proc/self/cwd: SF:/proc/self/cwd/pkg/a.cc, or without that setting
# SF:/.../execroot/WORKSPACE/pkg/a.cc, becomes SF:pkg/a.cc.
sed -e 's#^SF:/proc/self/cwd/#SF:#' -e 's#^SF:/.*/execroot/[^/]*/#SF:#' \
  "$out.tmp" > "$out"
rm -f -- "$out.tmp"
