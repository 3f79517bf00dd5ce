#!/usr/bin/env bash
# combine.sh — `ballarus-reconstruct combine` of many runs in bounded memory.
#
#   bash bench/named/combine.sh [--prefix DIR] [--cache DIR] [--work DIR]
#                               [--exe SQLITE3] [--runs 100,1000]
#                               [--pin CPU|none] [--out DIR]
#
# sqlite3 (bench/lib/programs.sh: Debian's amalgamation and shell) is built
# with the installed ballarus-gcc (default mode, -O2), or --exe names such a
# build.  It then runs max(RUNS) times on a small workload whose table size
# depends on the run (20 to 510 rows: the runs differ), each run into a
# profile of its own (BALLARUS_PROFILE=WORK/runs/rNNNN.bprof).  For each R
# of RUNS, `ballarus-reconstruct combine -o WORK/R.bcomb` of the first R
# profiles (each one observation) runs under /usr/bin/time -v: peak RSS,
# CPU and elapsed time.  Memory that does not grow with R is bounded.
# Results: OUT/results.md (also on stdout), OUT/combine.tsv, OUT/machine.txt.
set -euo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
bench=$(dirname -- "$here")
repo=$(dirname -- "$bench")

say() { printf 'combine.sh: %s\n' "$*" >&2; }
die() { printf 'combine.sh: error: %s\n' "$*" >&2; exit 1; }

prefix='' cache="$HOME/.cache/ballarus-bench" work='' exe='' runs=100,1000 pin='' out=''
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --exe) exe=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
work=${work:-$cache/work-combine}
out=${out:-$bench/results/latest-combine}
quick=0
# shellcheck source=../lib/programs.sh
. "$bench/lib/programs.sh"
need_tool /usr/bin/time "apt-get install time"
[ -n "$pin" ] || pin=$(( $(nproc) - 1 ))
run_pinned() { if [ "$pin" = none ]; then "$@"; else taskset -c "$pin" "$@"; fi; }

if [ -z "$prefix" ]; then
  prefix=$work/prefix
  say "installing ballarus into $prefix"
  (cd "$repo" && bazel run //:install -- "$prefix" >&2) || die "install failed"
fi
RECON=$prefix/bin/ballarus-reconstruct
mkdir -p "$work" "$out"
if [ -z "$exe" ]; then
  prepare_sqlite3
  mkdir -p "$work/sqlite3"
  build_sqlite3 "$work/sqlite3" "$prefix/bin/ballarus-gcc -O2" || die "sqlite3 build failed"
  exe=$work/sqlite3/exe
fi

max=$(tr ',' '\n' <<<"$runs" | sort -n | tail -n 1)
mkdir -p "$work/runs"
rm -f "$work"/runs/r*.bprof
say "$max runs of sqlite3, each into its own profile"
for ((i = 1; i <= max; i++)); do
  rows=$(( 20 + (i % 50) * 10 ))
  printf '%s\n' \
    "create table t(a integer, b text);" \
    "with recursive c(i) as (select 1 union all select i+1 from c where i < $rows) insert into t select i, printf('%d-%x', i*7, i) from c;" \
    "create index ta on t(b);" \
    "select count(*), sum(a) from t where b like '1%';" \
    "select a % 7, count(*) from t group by 1 order by 2 desc limit 3;" |
    BALLARUS_PROFILE=$(printf '%s/runs/r%04d.bprof' "$work" "$i") \
      "$exe" -batch -init /dev/null :memory: >/dev/null \
    || die "sqlite3 run $i failed"
done

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc)"
  echo "pinned: $pin"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "ballarus: $(cd "$repo" && git rev-parse --short=12 HEAD)"
  echo "profile of one run: $(stat -c %s "$work/runs/r0001.bprof") bytes"
} >"$out/machine.txt"
printf 'runs\tpeak_rss_kb\tuser_s\tsys_s\twall_s\tload\tbcomb_bytes\n' >"$out/combine.tsv"
for r in ${runs//,/ }; do
  files=()
  for ((i = 1; i <= r; i++)); do files+=("$(printf '%s/runs/r%04d.bprof' "$work" "$i")"); done
  load=$(cut -d' ' -f1 /proc/loadavg)
  run_pinned /usr/bin/time -v -o "$work/time.$r" "$RECON" combine -o "$work/$r.bcomb" "${files[@]}" \
    || die "combine of $r runs failed"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.$r")
  u=$(sed -n 's/.*User time (seconds): //p' "$work/time.$r")
  s=$(sed -n 's/.*System time (seconds): //p' "$work/time.$r")
  e=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.$r")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$rss" "$u" "$s" "$e" "$load" \
    "$(stat -c %s "$work/$r.bcomb")" >>"$out/combine.tsv"
  say "combine of $r runs: peak RSS $rss KB, user $u s, sys $s s, wall $e"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
{
  echo "## combine of sqlite3 runs, each run one observation"
  echo
  echo "| runs | peak RSS | CPU (user + sys) | wall | combined profile |"
  echo "|---|---|---|---|---|"
  tail -n +2 "$out/combine.tsv" | while IFS=$'\t' read -r r rss u s e load b; do
    printf '| %s | %s MB | %.1f s | %s | %s bytes |\n' "$r" "$((rss / 1024))" \
      "$(echo "$u + $s" | bc)" "$e" "$b"
  done
} | tee "$out/results.md"
