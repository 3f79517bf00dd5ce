#!/usr/bin/env bash
# gzip_check.sh — what naming every test costs: gzip's `make check` with
# every test named (BALLARUS_TEST) against the same suite unnamed.
#
#   bash bench/named/gzip_check.sh [--prefix DIR] [--cache DIR] [--work DIR]
#                                  [--pairs N] [--pin CPU|none] [--out DIR]
#
# gzip 1.12 (Debian's source, fetched as bench/run.sh fetches its programs,
# unpacked into WORK) is configured with the installed ballarus-gcc (the
# default mode, -O2) and built once; `make check` runs once untimed (it
# builds what the tests need).  Then N pairs (default 7) of `make check`,
# in alternating order: "unnamed" as is, "named" with
#
#   make check AM_TESTS_ENVIRONMENT='BALLARUS_TEST=$$f; export BALLARUS_TEST;'
#
# (automake's harness sets f to the test's name before the test's
# environment; gzip leaves AM_TESTS_ENVIRONMENT to the user).  Every run
# starts without profiles (a fresh `make check`).  Per run: user + system
# CPU of `make check` and everything it waited for (/usr/bin/time), wall
# time, the load average before it, and the total size of the .bprof files
# it left.  Every run must pass every test.  The named/unnamed CPU ratio is
# taken within each pair; the report gives its median with a 90 % bootstrap
# interval, and the profile bytes per named test.  Everything runs pinned
# to one CPU (taskset -c CPU; default the highest-numbered one).
#
# Results: OUT/results.md (also on stdout), OUT/runs.tsv, OUT/machine.txt.
set -euo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname -- "$here")
repo=$(dirname -- "$bench")

say() { printf 'gzip_check.sh: %s\n' "$*" >&2; }
die() { printf 'gzip_check.sh: error: %s\n' "$*" >&2; exit 1; }

prefix='' cache="$HOME/.cache/ballarus-bench" work='' pairs=7 pin='' out=''
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
work=${work:-$cache/work-named}
out=${out:-$bench/results/latest-named}
quick=0
# shellcheck source=../lib/programs.sh
. "$bench/lib/programs.sh"
need_tool /usr/bin/time "apt-get install time"
need_tool taskset "util-linux"
[ -n "$pin" ] || pin=$(( $(nproc) - 1 ))
run_pinned() { if [ "$pin" = none ]; then "$@"; else taskset -c "$pin" "$@"; fi; }

if [ -z "$prefix" ]; then
  prefix=$work/prefix
  say "installing ballarus into $prefix"
  (cd "$repo" && bazel run //:install -- "$prefix" >&2) || die "install failed"
fi
CC=$prefix/bin/ballarus-gcc
[ -x "$CC" ] || die "no $CC"

mkdir -p "$work" "$out"
src=$work/gzip-1.12
if [ ! -f "$src/.built" ]; then
  fetch gzip
  tarball=$(compgen -G "$cache/src/gzip_*.orig.tar.*" | head -n 1)
  rm -rf "$src"
  tar xf "$tarball" -C "$work" || die "cannot unpack $tarball"
  say "configuring and building gzip with $CC"
  (cd "$src" && ./configure -q CC="$CC" CFLAGS=-O2 >&2 && make -j"$JOBS" >&2) \
    || die "gzip build failed"
  (cd "$src" && make check >"$work/warm.log" 2>&1) || die "gzip: make check failed (see $work/warm.log)"
  touch "$src/.built"
fi

clean_profiles() { find "$src" -name '*.bprof*' -delete; }
profile_bytes() { find "$src" -name '*.bprof' -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }

# check KIND ROUND: one fresh make check; appends a line to runs.tsv
check() {
  local kind=$1 round=$2 load tf log
  clean_profiles
  load=$(cut -d' ' -f1 /proc/loadavg)
  tf=$work/time.$kind log=$work/check.$kind.log
  local env_=()
  [ "$kind" = named ] && env_=("AM_TESTS_ENVIRONMENT=BALLARUS_TEST=\$\$f; export BALLARUS_TEST;")
  (cd "$src" && run_pinned /usr/bin/time -f '%U %S %e' -o "$tf" make check "${env_[@]}" >"$log" 2>&1) \
    || die "$kind make check failed in round $round (see $log)"
  grep -q '^# FAIL: *0' "$log" || die "$kind: a test failed in round $round (see $log)"
  local tests
  tests=$(sed -n 's/^# TOTAL: *//p' "$log" | head -n 1)
  read -r u s e <"$tf"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$kind" "$u" "$s" "$e" "$load" \
    "$(profile_bytes)" "$tests" >>"$out/runs.tsv"
  say "round $round $kind: user $u s, sys $s s, wall $e s, load $load"
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc)"
  echo "pinned: $pin"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "ballarus: $(cd "$repo" && git rev-parse --short=12 HEAD)$(cd "$repo" && git diff --quiet HEAD -- runtime core || echo ' (working tree differs)')"
  echo "gcc: $(gcc -dumpfullversion)"
  echo "command: $0 --pairs $pairs --pin $pin"
} >"$out/machine.txt"
printf 'round\tkind\tuser_s\tsys_s\twall_s\tload\tprofile_bytes\ttests\n' >"$out/runs.tsv"
for ((r = 1; r <= pairs; r++)); do
  if (( r % 2 )); then check unnamed "$r"; check named "$r"
  else check named "$r"; check unnamed "$r"; fi
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
python3 "$here/report.py" gzip "$out/runs.tsv" | tee "$out/results.md"
