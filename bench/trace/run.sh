#!/usr/bin/env bash
# run.sh — what mode=trace costs, on the programs and workloads of
# bench/run.sh (bench/lib/programs.sh): witnesses per executed block against
# the naive trace, predicate tracing and one witness per Ball-Larus path
# end; bytes of trace; instructions and wall time of the flight recorder
# (BALLARUS_TRACE=ring:N), the full trace and a traced build with tracing
# not started, over plain gcc -O2 and over gcov's edge profiling.
#
#   bash bench/trace/run.sh [--quick] [--programs LIST] [--runs N] [--warmup N]
#                           [--ring N] [--pin CPU] [--no-instr] [--out DIR]
#                           [--cache DIR] [--work DIR] [--prefix DIR]
#                           [--reuse-builds] [--append] [--instr-configs LIST]
#                           [--no-count]
#
# Builds per program: plain (gcc -O2), gcov (-fprofile-arcs
# -fprofile-update=single), naive (ballarus mode=naive: a counter on every
# edge, for the executed blocks and predicate tracing's witnesses), path
# (mode=path: the executed path count), trace (mode=trace) and trace-naive
# (mode=trace-naive: a witness at every block).  Each runs the workload
# once (its outputs must equal plain's; the traced builds with
# BALLARUS_TRACE=full), then --runs rounds of interleaved pinned pairs
# (plain, config) for every timed configuration, then once more under
# valgrind --tool=cachegrind --cache-sim=no for each of them (the full
# trace last: under valgrind it is the longest; --instr-configs picks some
# of plain,gcov,ring,off,full):
#   gcov   the gcov build
#   off    the trace build, BALLARUS_TRACE unset (tracing not started)
#   ring   the trace build, BALLARUS_TRACE=ring:N
#   full   the trace build, BALLARUS_TRACE=full
# The load average is recorded before and after every round.  Raw results
# go to OUT/raw/*.tsv and the report (report.py) to OUT/results.md.
# --reuse-builds keeps a build whose executable is already in the work
# directory; --append adds to OUT/raw's files instead of starting them anew
# (several runs, e.g. one per program, into one report); --no-count skips
# the count runs and checks outputs against an earlier run's in the same
# work directory (with --reuse-builds: more instruction counts or rounds).
# --quick (//bench:trace_quick_test): the bundled quick program, one round,
# no valgrind, no network.
set -euo pipefail
export LC_ALL=C

prog=bench/trace/run.sh
trace_dir=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
here=$(cd "$trace_dir/.." && pwd)
root=$(cd "$here/.." && pwd)

say() { printf '[trace-bench] %s\n' "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

quick=0 programs=lua,sqlite3,bzip2 runs=11 warmup=1 ring=65536 pin=auto
instr=1 out='' cache='' work='' prefix='' reuse=0 append=0 instr_configs=plain,gcov,ring,off,full count=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --programs) programs=$2; shift ;;
    --runs) runs=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --ring) ring=$2; shift ;;
    --pin) pin=$2; shift ;;
    --no-instr) instr=0 ;;
    --out) out=$2; shift ;;
    --cache) cache=$2; shift ;;
    --work) work=$2; shift ;;
    --prefix) prefix=$2; shift ;;
    --reuse-builds) reuse=1 ;;
    --append) append=1 ;;
    --instr-configs) instr_configs=$2; shift ;;
    --no-count) count=0 ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) printf '%s: unknown option %s\n' "$prog" "$1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then programs=quick runs=1 warmup=0 instr=0; fi
cache=${cache:-${HOME:?is not set: pass --cache DIR}/.cache/ballarus-bench}
out=${out:-$here/results/trace-latest}
work=${work:-$cache/trace-work}
[ "$pin" != auto ] || pin=$(($(nproc) - 1))
PIN=(taskset -c "$pin")
[ "$pin" != none ] || PIN=()
mkdir -p "$out/raw" "$work"
work=$(cd "$work" && pwd) out=$(cd "$out" && pwd)
# shellcheck source=../lib/programs.sh
. "$here/lib/programs.sh"

if [ -z "$prefix" ]; then
  say "bazel run //:install -- $work/prefix"
  (cd "$root" && bazel run //:install -- "$work/prefix") >"$work/install.log" 2>&1 \
    || die "installing ballarus failed (log: $work/install.log)"
  prefix=$work/prefix
fi
BCC=$prefix/bin/ballarus-gcc
RECON=$prefix/bin/ballarus-reconstruct
[ -x "$BCC" ] && [ -x "$RECON" ] || die "not a ballarus prefix: $prefix"
gcc -O2 -o "$work/trace_words" "$trace_dir/trace_words.c" || die "cannot build trace_words"

BUILDS=(plain gcov naive path trace trace-naive)
CONFIGS=(gcov off ring full)
compiler_of() {  # compiler_of BUILD -> the CC string
  local b='-fplugin-arg-ballarus'
  case "$1" in
    plain) echo gcc ;;
    gcov) echo "gcc -fprofile-arcs -fprofile-update=single" ;;
    naive) echo "$BCC $b-mode=naive $b-update=single" ;;
    path) echo "$BCC $b-mode=path $b-update=single" ;;
    trace) echo "$BCC $b-mode=trace" ;;
    trace-naive) echo "$BCC $b-mode=trace-naive" ;;
  esac
}
build_of() { case "$1" in gcov) echo gcov ;; off|ring|full) echo trace ;; *) echo "$1" ;; esac; }
trace_env_of() {  # the BALLARUS_TRACE value of a configuration ('' = unset)
  case "$1" in ring) echo "ring:$ring" ;; full|count) echo full ;; *) echo '' ;; esac
}

build() {  # build PROG BUILD
  local p=$1 b=$2 dir=$work/$1/build/$2
  if [ "$reuse" = 1 ] && [ -x "$dir/exe" ]; then say "$p: reusing $b"; return 0; fi
  rm -rf "$dir" && mkdir -p "$dir"
  say "$p: building $b"
  ( "build_$p" "$dir" "$(compiler_of "$b")" ) >"$dir.log" 2>&1 \
    || { tail -n 30 "$dir.log" >&2; die "$p: building $b failed (log: $dir.log)"; }
}

# run_once PROG BUILD TRACE [VALGRIND_OUT]: the workload in $work/run
# (emptied), env -i with the profile, gcov and trace files in $work/prof
# (emptied), pinned; BALLARUS_TRACE=TRACE unless TRACE is empty.  The
# program runs through a bash wrapper (for every build alike) that names
# each process's trace file ballarus.trace.PID (bzip2's workload is two
# processes) and keeps argv[0]; under valgrind (cachegrind's files to
# VALGRIND_OUT) it runs as $work/bin/PROG, one path for every build.  Sets
# ELAPSED_US; fails unless the outputs equal plain's count run.
run_once() {
  local p=$1 b=$2 tr=$3 vg=${4:-} exe=$work/$1/build/$2/exe rc=0 t0 t1 f
  local run=$work/run prof=$work/prof launch="exec -a $1"
  rm -rf "$run" "$prof" && mkdir -p "$run" "$prof" "$work/bin"
  local -a envs=(env -i "PATH=$PATH" "HOME=$run" LC_ALL=C
                 "BALLARUS_PROFILE=$prof/ballarus.profile" "GCOV_PREFIX=$prof/gcov")
  [ -z "$tr" ] || envs+=("BALLARUS_TRACE=$tr")
  if [ -n "$vg" ]; then
    ln -sfn "$exe" "$work/bin/$p" && exe=$work/bin/$p
    launch="exec valgrind --tool=cachegrind --cache-sim=no --log-file=$vg/vg.%p.log --cachegrind-out-file=$vg/cg.%p"
  fi
  printf '#!/bin/bash\nexport BALLARUS_TRACE_FILE=%s/ballarus.trace.$$\n%s %s "$@"\n' \
    "$prof" "$launch" "$exe" >"$work/bin/wrap-$p"
  chmod +x "$work/bin/wrap-$p"
  cd "$run"
  t0=${EPOCHREALTIME/./}
  "${PIN[@]}" "${envs[@]}" bash -c "$(declare -f "run_$p"); here=$here; work=$work; run_$p \"\$1\"" run "$work/bin/wrap-$p" || rc=$?
  t1=${EPOCHREALTIME/./}
  cd "$work"
  ELAPSED_US=$((t1 - t0))
  [ "$rc" = 0 ] || die "$p: $b (BALLARUS_TRACE=$tr) exited with status $rc (stderr: $(head -c 300 "$run/stderr"))"
  [ "$b" = plain ] && [ -z "$vg" ] && [ ! -d "$work/$p/expected" ] && cp -r "$run" "$work/$p/expected"
  for f in $("outputs_$p"); do
    cmp -s "$run/$f" "$work/$p/expected/$f" || die "$p: $b (BALLARUS_TRACE=$tr): $f differs from plain's"
  done
  if declare -F "check_$p" >/dev/null; then (cd "$run" && "check_$p") || die "$p: $b: check failed"; fi
}

# count_runs PROG: one run per build; the trace words, profile counts.
count_runs() {
  local p=$1 b
  rm -rf "$work/$p/expected" "$work/$p/count" && mkdir -p "$work/$p/count"
  for b in "${BUILDS[@]}"; do
    case "$b" in trace*) run_once "$p" "$b" full ;; *) run_once "$p" "$b" '' ;; esac
    printf '%s\t%s\t%s\n' "$p" "$b" "$ELAPSED_US" >>"$RAW/count_runs.tsv"
    case "$b" in
      naive|path) mv "$work/prof/ballarus.profile" "$work/$p/count/$b.profile" ;;
      trace) words "$p" full "" ;;
      trace-naive) words "$p" naive --naive ;;
    esac
  done
  local counts
  counts=$(python3 "$trace_dir/profile_counts.py" "$RECON" \
    "$work/$p/count/naive.profile" "$work/$p/count/path.profile") || die "$p: cannot read the profiles"
  printf '%s\t%s\n' "$p" "$counts" >>"$RAW/profile_counts.tsv"
}
words() {  # words PROG NAME [--naive]: the trace file's words by kind
  local line
  line=$("$work/trace_words" ${3:+"$3"} "$work/prof"/ballarus.trace.*) || die "$1: cannot read the $2 trace"
  printf '%s\t%s\t%s\n' "$1" "$2" "$line" >>"$RAW/trace_words.tsv"
}

# instr PROG: instructions of plain and every configuration (cachegrind).
instr_runs() {
  local p=$1 c b vg
  local -a configs
  IFS=, read -r -a configs <<<"$instr_configs"
  for c in "${configs[@]}"; do
    b=$(build_of "$c")
    vg=$work/$p/vg/$c && rm -rf "$vg" && mkdir -p "$vg"
    say "$p: instructions of $c"
    run_once "$p" "$b" "$(trace_env_of "$c")" "$vg"
    printf '%s\t%s\t%s\n' "$p" "$c" "$(cat "$vg"/cg.* | awk '/^summary:/ { s += $2 } END { printf "%.0f", s }')" >>"$RAW/instr.tsv"
  done
}

# timed PROG: --warmup untimed and --runs timed rounds; a round runs plain
# and then each configuration, for every configuration in turn.
timed_runs() {
  local p=$1 r c base_us load0
  for ((r = 1 - warmup; r <= runs; r++)); do
    load0=$(cut -d' ' -f1 /proc/loadavg)
    for c in "${CONFIGS[@]}"; do
      run_once "$p" plain ''
      base_us=$ELAPSED_US
      run_once "$p" "$(build_of "$c")" "$(trace_env_of "$c")"
      [ "$r" -lt 1 ] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$c" "$r" "$base_us" "$ELAPSED_US" \
        "$load0" "$(cut -d' ' -f1 /proc/loadavg)" >>"$RAW/runs.tsv"
    done
    say "$p: round $r done"
  done
}

RAW=$out/raw
header() {  # header FILE COLUMNS...: FILE started anew, unless --append keeps it
  [ "$append" = 1 ] && [ -s "$RAW/$1" ] && return 0
  (IFS=$'\t'; echo "${*:2}") >"$RAW/$1"
}
header count_runs.tsv program build elapsed_us
header trace_words.tsv program trace records threads words witnesses exit_words events enters lands ends payload_bytes file_bytes
header profile_counts.tsv program executed_blocks predicate_witnesses path_ends
header instr.tsv program config instructions
header runs.tsv program config round plain_us config_us load_before load_after
[ "$append" = 1 ] || : >"$out/machine.txt"
{
  echo "run: $(date -u '+%Y-%m-%d %H:%M UTC'), programs $programs"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "pinned: ${PIN[*]:-none}; ring: $ring words; rounds: $runs after $warmup warm-up"
  echo "gcc: $(gcc -dumpfullversion); valgrind: $(valgrind --version 2>/dev/null || echo none)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$out/machine.txt"

IFS=, read -r -a PROGS <<<"$programs"
for p in "${PROGS[@]}"; do
  "prepare_$p"
  for b in "${BUILDS[@]}"; do build "$p" "$b"; done
  if [ "$count" = 1 ]; then count_runs "$p"; else
    [ -d "$work/$p/expected" ] || die "$p: --no-count needs an earlier run's outputs in $work/$p/expected"
  fi
  [ "$runs" = 0 ] || timed_runs "$p"
  [ "$instr" = 0 ] || instr_runs "$p"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
python3 "$trace_dir/report.py" "$out" | tee "$out/results.md"
