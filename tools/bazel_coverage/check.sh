#!/usr/bin/env bash
# check.sh — `bazel coverage` with ballarus, checked against Bazel's own
# gcov-based `bazel coverage` of the same targets.
#
#   bash tools/bazel_coverage/check.sh [--installed] [TARGET...]
#
# (default target: //tools/bazel_coverage/example:collatz_test).  Runs both,
# with --combined_report=lcov, and compares the two reports
# (bazel-out/_coverage/_coverage_report.dat): the same source files, the
# same lines, and on every line the same count.  Without --installed the
# plugin, runtime and ballarus-reconstruct come from `bazel run //:install`
# into a temporary prefix, named by path; with --installed from the system
# (the Debian package: -fplugin=ballarus, -lballarus_rt, and the collector
# under /usr/share/ballarus/bazel), through `--config=ballarus` of .bazelrc.
# Exit status 0 when the reports agree, 1 when they differ, 2 on error.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/../.."

prog=check.sh
die() {
  printf '%s: error: %s\n' "$prog" "$1" >&2
  exit 2
}

installed=0
if [ "${1:-}" = --installed ]; then
  installed=1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(//tools/bazel_coverage/example:collatz_test)

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
read -r -a startup <<<"${BAZEL_STARTUP_OPTS:-}"
bz() { bazel "${startup[@]+"${startup[@]}"}" "$@"; }

# The flags that make `bazel coverage` use ballarus instead of gcov.
if [ "$installed" = 1 ]; then
  ballarus_flags=(--config=ballarus)
else
  bz run //:install -- "$work/prefix" >/dev/null || die "bazel run //:install failed"
  p=$work/prefix
  ballarus_flags=(
    --features=-coverage
    "--copt=-fplugin=$p/lib/ballarus/ballarus.so"
    "--linkopt=$p/lib/ballarus/libballarus_rt.a"
    --run_under=//tools/bazel_coverage:run_test
    "--test_env=CC_CODE_COVERAGE_SCRIPT=\$TEST_SRCDIR/ballarus/tools/bazel_coverage/collect_cc_coverage.sh"
    "--test_env=BALLARUS_RECONSTRUCT=$p/bin/ballarus-reconstruct"
  )
fi

# coverage NAME FLAGS...: one `bazel coverage` run, its report kept as
# $work/NAME.dat.
coverage() {
  local name=$1
  shift
  rm -f bazel-out/_coverage/_coverage_report.dat
  bz coverage --combined_report=lcov --nocache_test_results "$@" "${targets[@]}" \
    || die "bazel coverage ($name) failed"
  [ -s bazel-out/_coverage/_coverage_report.dat ] || die "no coverage report ($name)"
  cp bazel-out/_coverage/_coverage_report.dat "$work/$name.dat"
}
coverage gcov
coverage ballarus "${ballarus_flags[@]}"

python3 - "$work/gcov.dat" "$work/ballarus.dat" <<'EOF'
import sys

def lines(path):
    """{source: {line: count}} of an lcov tracefile."""
    out, cur = {}, None
    for l in open(path):
        tag, _, v = l.strip().partition(":")
        if tag == "SF":
            cur = out.setdefault(v, {})
        elif tag == "DA" and cur is not None:
            n, c = v.split(",")[:2]
            cur[int(n)] = cur.get(int(n), 0) + int(c)
    return out

gcov, ball = lines(sys.argv[1]), lines(sys.argv[2])
bad = hit_bad = 0
for src in sorted(set(gcov) | set(ball)):
    g, b = gcov.get(src, {}), ball.get(src, {})
    for n in sorted(set(g) | set(b)):
        if g.get(n) != b.get(n):
            bad += 1
            if n not in g or n not in b or (g[n] > 0) != (b[n] > 0):
                hit_bad += 1
            if bad <= 20:
                print("%s:%d: gcov %s, ballarus %s" % (src, n, g.get(n, "-"), b.get(n, "-")))
lf = sum(len(v) for v in gcov.values())
lh = sum(1 for v in gcov.values() for c in v.values() if c > 0)
print("%d files, %d lines, %d covered (gcov); %d lines differ "
      "(%d in whether or not they are covered)" % (len(gcov), lf, lh, bad, hit_bad))
sys.exit(1 if bad or lh == 0 else 0)
EOF
