#!/usr/bin/env bash
# run.sh — the ballarus benchmark suite: run-time overhead, compile-time
# overhead and counter work of ballarus against gcov and clang, on real
# programs, in one run.  bench/README.md explains every variant and column.
#
#   bash bench/run.sh [--quick] [--programs LIST] [--variants LIST] [--runs N]
#                     [--warmup N] [--out DIR] [--cache DIR] [--work DIR]
#                     [--prefix DIR] [--note TEXT] [--list]
#
# For each program (default lua,sqlite3,bzip2,threads):
#   1. sources: lua5.4, sqlite3 and bzip2 come from Debian with
#      `apt-get source --download-only` — deb-src is configured in a private
#      directory under the cache (the machine's apt configuration and state
#      are untouched) — and are kept in the cache (default
#      ~/.cache/ballarus-bench), never in the repository.  threads and quick
#      are small programs in bench/.
#   2. builds every variant (the table VARIANTS below: gcc -O2, gcov, clang,
#      ballarus in each mode / weights / update) and records its compile
#      time (CPU seconds, user+sys of the whole build);
#   3. runs the program's fixed workload once per variant (the "count run"):
#      its output must equal the plain build's byte for byte, the ballarus
#      profile must verify, edge-mode profiles must reconstruct exactly the
#      naive profile, and the counter work (static counters, dynamic
#      increments) is read from the profile — ballarus and gcov through
#      `ballarus-reconstruct stats`, clang through llvm-profdata;
#   4. times every variant interleaved with its base build (plain, variant,
#      plain, variant, ...): --warmup rounds untimed, then --runs rounds,
#      round-robin over the variants; each run's output is checked again.
#      A variant's time ratio for one round is its run time over the base
#      run just before it.
# Then bench/lib/bench.py writes OUT/results.md (also printed on stdout),
# OUT/chart.png (gnuplot) and OUT/machine.txt; the raw measurements stay in
# OUT/raw/.  Progress goes to stderr.  Any failure — a missing tool, a
# build, a program exit status, an output that differs, a profile that does
# not verify, an inexact count with atomic updates — stops the run with a
# message naming the program and the variant, exit status 1 (2 for bad
# usage).
#
# --quick (CI smoke mode, //bench:quick_test): no apt-get, no network, a few
# seconds: programs quick,threads (small), variants
# plain,gcov,naive,edge,edge-atomic,path, one run, no warm-up.
#
# Refresh the committed baseline (on a quiet machine):
#   bash bench/run.sh --out bench/results/baseline

set -euo pipefail
export LC_ALL=C

prog=bench/run.sh
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

say() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
usage_die() { printf '%s: %s (try --help)\n' "$prog" "$*" >&2; exit 2; }

# --------------------------------------------------------------- variants
# One line per variant:
#   name | base | kind | options | description
# base:    the build each run is paired with for the time ratio ("-": none).
#          clang variants are paired with clang -O2, so their ratio is the
#          instrumentation's cost, not gcc-versus-clang code quality (that is
#          the clang-plain row).
# kind:    plain (gcc), cplain (clang), gcov, clang, ballarus.
# options: compiler flags; for ballarus, plugin KEY=VALUE pairs, each becoming
#          -fplugin-arg-ballarus-KEY=VALUE.  @NAIVE_PROFILE@ is the profile of
#          the naive variant's count run (so edge-profile needs naive).
VARIANTS='
plain               | -           | plain    | | gcc -O2
gcov                | plain       | gcov     | -fprofile-arcs -ftest-coverage -fprofile-update=single | gcc -O2 -fprofile-arcs (-ftest-coverage writes the .gcno stats reads)
gcov-atomic         | plain       | gcov     | -fprofile-arcs -ftest-coverage -fprofile-update=atomic | gcc -O2 -fprofile-arcs -fprofile-update=atomic
clang-plain         | plain       | cplain   | | clang-14 -O2 (its ratio: clang vs gcc code)
clang               | clang-plain | clang    | -fprofile-generate | clang-14 -O2 -fprofile-generate (ratio to clang -O2)
clang-atomic        | clang-plain | clang    | -fprofile-generate -fprofile-update=atomic -mllvm -instrprof-atomic-counter-update-all | clang-14 -fprofile-generate, atomic counters (ratio to clang -O2)
naive               | plain       | ballarus | mode=naive update=single | ballarus: a counter on every edge
naive-atomic        | plain       | ballarus | mode=naive update=atomic | ballarus naive, atomic
edge                | plain       | ballarus | mode=edge weights=heuristic update=single | ballarus edge, weights=heuristic (default)
edge-atomic         | plain       | ballarus | mode=edge weights=heuristic update=atomic | ballarus edge heuristic, atomic
edge-gcc            | plain       | ballarus | mode=edge weights=gcc update=single | ballarus edge, weights=gcc
edge-gcc-atomic     | plain       | ballarus | mode=edge weights=gcc update=atomic | ballarus edge gcc, atomic
edge-uniform        | plain       | ballarus | mode=edge weights=uniform update=single | ballarus edge, weights=uniform
edge-uniform-atomic | plain       | ballarus | mode=edge weights=uniform update=atomic | ballarus edge uniform, atomic
edge-profile        | plain       | ballarus | mode=edge weights=profile=@NAIVE_PROFILE@ update=single | ballarus edge, weights=profile= (naive run: Exact-Max)
edge-profile-atomic | plain       | ballarus | mode=edge weights=profile=@NAIVE_PROFILE@ update=atomic | ballarus edge profile, atomic
path                | plain       | ballarus | mode=path update=single | ballarus Ball-Larus path profiling
path-atomic         | plain       | ballarus | mode=path update=atomic | ballarus path, atomic
edge-path           | plain       | ballarus | mode=edge,path update=single | ballarus edge and path profiling
edge-path-atomic    | plain       | ballarus | mode=edge,path update=atomic | ballarus edge and path, atomic
'
QUICK_VARIANTS=plain,gcov,naive,edge,edge-atomic,path
ALL_PROGRAMS=lua,sqlite3,bzip2,threads,quick
DEFAULT_PROGRAMS=lua,sqlite3,bzip2,threads
QUICK_PROGRAMS=quick,threads

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
declare -a V_ORDER=()
declare -A V_BASE=() V_KIND=() V_OPTS=() V_DESC=()
while IFS='|' read -r name base kind opts desc; do
  name=$(trim "$name")
  [ -n "$name" ] || continue
  V_ORDER+=("$name")
  V_BASE[$name]=$(trim "$base")
  V_KIND[$name]=$(trim "$kind")
  V_OPTS[$name]=$(trim "$opts")
  V_DESC[$name]=$(trim "$desc")
done <<<"$VARIANTS"

# --------------------------------------------------------------- options
usage() {
  cat <<EOF
usage: bash bench/run.sh [OPTIONS]

Benchmarks ballarus against gcov and clang: run-time and compile-time
overhead and counter work, on real programs (see bench/README.md).

  --quick            CI smoke mode: bundled programs only (no apt-get, no
                     network), variants $QUICK_VARIANTS,
                     1 run, no warm-up
  --programs LIST    comma-separated, from: $ALL_PROGRAMS
                     (default $DEFAULT_PROGRAMS; --quick: $QUICK_PROGRAMS)
  --variants LIST    comma-separated names or shell patterns (edge*), or
                     "all" (default: all; --quick: $QUICK_VARIANTS);
                     plain, and what a variant needs (its base, naive for
                     edge-profile), are added
  --runs N           timed runs per variant (default 5; --quick: 1)
  --warmup N         untimed rounds before them (default 1; --quick: 0)
  --out DIR          results directory (default bench/results/latest)
  --cache DIR        downloaded sources (default ~/.cache/ballarus-bench)
  --work DIR         build and run directory, emptied first (default
                     CACHE/work; --quick: a temporary directory)
  --prefix DIR       an installed ballarus (bazel run //:install -- DIR);
                     default: build with bazel and install into WORK/prefix
  --note TEXT        a line for machine.txt (e.g. what else ran)
  --list             print the variants and exit
  -h, --help         this text

Refresh the committed baseline:  bash bench/run.sh --out bench/results/baseline
EOF
}

quick=0 programs='' variants='' runs='' warmup='' out='' cache='' work='' prefix='' note=''
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --programs|--variants|--runs|--warmup|--out|--cache|--work|--prefix|--note)
      [ $# -ge 2 ] || usage_die "$1 needs a value"
      v=$2
      case "$1" in
        --programs) programs=$v ;; --variants) variants=$v ;;
        --runs) runs=$v ;; --warmup) warmup=$v ;; --out) out=$v ;;
        --cache) cache=$v ;; --work) work=$v ;; --prefix) prefix=$v ;;
        --note) note=$v ;;
      esac
      shift ;;
    --programs=*|--variants=*|--runs=*|--warmup=*|--out=*|--cache=*|--work=*|--prefix=*|--note=*)
      set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;;
    --list)
      for v in "${V_ORDER[@]}"; do
        printf '%-20s base %-12s %s\n' "$v" "${V_BASE[$v]}" "${V_DESC[$v]}"
      done
      exit 0 ;;
    -h|--help) usage; exit 0 ;;
    *) usage_die "unknown argument: $1" ;;
  esac
  shift
done

if [ "$quick" = 1 ]; then
  : "${programs:=$QUICK_PROGRAMS}" "${variants:=$QUICK_VARIANTS}" "${runs:=1}" "${warmup:=0}"
else
  : "${programs:=$DEFAULT_PROGRAMS}" "${variants:=all}" "${runs:=5}" "${warmup:=1}"
fi
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage_die "--runs must be a positive integer, got '$runs'"
[[ $warmup =~ ^[0-9]+$ ]] || usage_die "--warmup must be a non-negative integer, got '$warmup'"
if [ -z "$cache" ]; then
  if [ -n "${HOME:-}" ]; then cache=$HOME/.cache/ballarus-bench
  elif [ "$quick" = 1 ]; then cache=/nonexistent   # --quick never uses it
  else die "HOME is not set: pass --cache DIR"; fi
fi
: "${out:=$here/results/latest}"
absolute() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
cache=$(absolute "$cache") out=$(absolute "$out")
[ -z "$prefix" ] || prefix=$(absolute "$prefix")
if [ -z "$work" ]; then
  if [ "$quick" = 1 ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/ballarus-bench.XXXXXX")
    trap 'rm -rf "$work"' EXIT
  else
    work=$cache/work
  fi
fi
work=$(absolute "$work")
for d in "$cache" "$out" "$work" "$prefix" "$here"; do
  case "$d" in *[[:space:],]*) die "paths with spaces or commas are not supported: '$d'" ;; esac
done

# Programs: validate.
declare -a PROGS=()
IFS=, read -r -a req_progs <<<"$programs"
for p in "${req_progs[@]}"; do
  case ",$ALL_PROGRAMS," in *",$p,"*) PROGS+=("$p") ;;
    *) usage_die "unknown program '$p' (known: $ALL_PROGRAMS)" ;; esac
done
[ ${#PROGS[@]} -gt 0 ] || usage_die "no programs selected"

# Variants: expand names and patterns.
declare -A SELECTED=()
IFS=, read -r -a req_vars <<<"$variants"
for pat in "${req_vars[@]}"; do
  [ "$pat" = all ] && pat='*'
  hit=0
  for v in "${V_ORDER[@]}"; do
    # shellcheck disable=SC2053
    if [[ $v == $pat ]]; then
      SELECTED[$v]=1 hit=1
    fi
  done
  [ "$hit" = 1 ] || usage_die "unknown variant '$pat' (bash bench/run.sh --list)"
done
added=
need() {  # need VARIANT WHY
  if [ -z "${SELECTED[$1]:-}" ]; then
    SELECTED[$1]=1
    added+=" $1 ($2)"
  fi
}
need plain "every output is compared with it"
for v in "${V_ORDER[@]}"; do
  [ -n "${SELECTED[$v]:-}" ] || continue
  b=${V_BASE[$v]}
  [ "$b" = - ] || need "$b" "base of $v"
  case "${V_OPTS[$v]}" in *@NAIVE_PROFILE@*) need naive "weights profile of $v" ;; esac
done
[ -z "$added" ] || say "added variants:$added"

# --------------------------------------------------------------- tools
# need_tool, apt_install, the sources and the programs: shared with
# bench/pgo.sh.
# shellcheck source=bench/lib/programs.sh
. "$here/lib/programs.sh"

has_kind() {  # has_kind KIND: is a selected variant of that kind?
  local v
  for v in "${!SELECTED[@]}"; do [ "${V_KIND[$v]}" = "$1" ] && return 0; done
  return 1
}

for t in gcc make python3 cmp awk sed tar; do need_tool "$t" "install it (scripts/setup.sh)"; done
if has_kind clang || has_kind cplain; then
  if ! command -v clang-14 >/dev/null || ! command -v llvm-profdata-14 >/dev/null; then
    apt_install clang-14 llvm-14
  fi
  need_tool clang-14 "apt-get install -y clang-14"
  need_tool llvm-profdata-14 "apt-get install -y llvm-14"
fi
have_gnuplot=1
if ! command -v gnuplot >/dev/null; then
  if [ "$quick" = 1 ]; then
    have_gnuplot=0
    say "gnuplot not installed: no chart in --quick mode"
  else
    apt_install gnuplot-nox
    need_tool gnuplot "apt-get install -y gnuplot-nox"
  fi
fi

# One full run at a time per cache (the work directory is shared).
mkdir -p "$work" "$out/raw"
if [ "$quick" = 0 ] && command -v flock >/dev/null; then
  mkdir -p "$cache"
  exec 9>"$cache/lock"
  flock -n 9 || die "another bench/run.sh is using $cache (lock $cache/lock)"
fi
# The work directory is emptied: only one this script made (it holds the
# marker), or an empty one.
if [ -n "$(ls -A "$work")" ] && [ ! -f "$work/.ballarus-bench-work" ]; then
  die "--work $work is not empty and was not made by bench/run.sh; not emptying it"
fi
find "$work" -mindepth 1 -maxdepth 1 ! -name prefix -exec rm -rf {} +
touch "$work/.ballarus-bench-work"
rm -f "$out"/raw/*.tsv "$out"/results.md "$out"/chart.png "$out"/machine.txt

# ballarus itself: an installed prefix, or build and install one.
if [ -z "$prefix" ]; then
  command -v bazel >/dev/null || die "missing tool: bazel (bash scripts/setup.sh), or pass --prefix DIR"
  say "bazel run //:install -- $work/prefix"
  rm -rf "$work/prefix"
  (cd "$root" && bazel ${BAZEL_STARTUP_OPTS:-} run //:install -- "$work/prefix") \
    >"$work/install.log" 2>&1 || { tail -n 30 "$work/install.log" >&2; die "building/installing ballarus failed (log: $work/install.log)"; }
  prefix=$work/prefix
fi
BCC=$prefix/bin/ballarus-gcc
RECON=$prefix/bin/ballarus-reconstruct
[ -x "$BCC" ] && [ -x "$RECON" ] && [ -f "$prefix/lib/ballarus/ballarus.so" ] \
  || die "not a ballarus prefix: $prefix (needs bin/ballarus-gcc, bin/ballarus-reconstruct, lib/ballarus/ballarus.so)"
PY=$here/lib/bench.py

# Every selected ballarus variant's options must be accepted by the plugin:
# try them on an empty file first, so a rejected option fails in seconds,
# naming the variant, rather than after the downloads.
mkdir -p "$work/probe"
echo 'int main(void) { return 0; }' >"$work/probe/probe.c"
for v in "${V_ORDER[@]}"; do
  [ -n "${SELECTED[$v]:-}" ] && [ "${V_KIND[$v]}" = ballarus ] || continue
  probe_args=()
  for kv in ${V_OPTS[$v]//@NAIVE_PROFILE@/$work/probe/none.profile}; do
    case "$kv" in weights=profile=*) continue ;; esac   # needs a real profile
    probe_args+=("-fplugin-arg-ballarus-$kv")
  done
  if ! "$BCC" "${probe_args[@]}" -c "$work/probe/probe.c" -o "$work/probe/probe.o" 2>"$work/probe/$v.err"; then
    cat "$work/probe/$v.err" >&2
    die "the ballarus plugin rejects variant $v (${V_OPTS[$v]})"
  fi
done

declare -a VARS=()
for v in "${V_ORDER[@]}"; do [ -n "${SELECTED[$v]:-}" ] && VARS+=("$v"); done
say "programs: ${PROGS[*]}"
say "variants: ${VARS[*]}"
say "runs: $runs timed + $warmup warm-up round(s); work: $work; results: $out"

# --------------------------------------------------------------- builds
compiler_of() {  # compiler_of PROG VARIANT -> the CC string
  local p=$1 v=$2 kind=${V_KIND[$2]} opts=${V_OPTS[$2]} cc kv
  case "$kind" in
    plain) cc=gcc ;;
    cplain) cc=clang-14 ;;
    gcov) cc="gcc $opts" ;;
    clang) cc="clang-14 $opts" ;;
    ballarus)
      cc=$BCC
      for kv in ${opts//@NAIVE_PROFILE@/$work/$p/count/naive/ballarus.profile}; do
        cc+=" -fplugin-arg-ballarus-$kv"
      done ;;
    *) die "variant $v: unknown kind $kind" ;;
  esac
  printf '%s\n' "$cc"
}

RAW=$out/raw
printf 'program\tvariant\twall_s\tcpu_s\n' >"$RAW/builds.tsv"
printf 'program\tvariant\ttool\tstatic_counters\tdynamic_increments\textra\n' >"$RAW/counters.tsv"
printf 'program\tvariant\tbase\tround\tbase_us\tvariant_us\n' >"$RAW/runs.tsv"
printf 'program\tvariant\texpected\tcounted\n' >"$RAW/exact.tsv"
printf 'program\tcheck\tresult\n' >"$RAW/checks.tsv"
{
  printf 'variant\tbase\tkind\toptions\tdescription\n'
  for v in "${VARS[@]}"; do
    printf '%s\t%s\t%s\t%s\t%s\n' "$v" "${V_BASE[$v]}" "${V_KIND[$v]}" "${V_OPTS[$v]}" "${V_DESC[$v]}"
  done
} >"$RAW/variants.tsv"

build() {  # build PROG VARIANT
  local p=$1 v=$2 dir=$work/$1/build/$2 cc tf
  cc=$(compiler_of "$p" "$v")
  rm -rf "$dir" && mkdir -p "$dir"
  say "$p: building $v"
  tf=$work/$p/build/$v.time
  local TIMEFORMAT='%R %U %S'
  # (The inner braces keep time's report out of the build's redirections.)
  { time { ( "build_$p" "$dir" "$cc" ) >"$dir.log" 2>&1; } ; } 2>"$tf" || {
    tail -n 40 "$dir.log" >&2
    die "$p: building variant $v failed (CC=$cc; log: $dir.log)"
  }
  [ -x "$dir/exe" ] || die "$p: building variant $v left no executable"
  read -r wall user sys <"$tf"
  printf '%s\t%s\t%s\t%s\n' "$p" "$v" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.3f", u+s}')" >>"$RAW/builds.tsv"
}

# --------------------------------------------------------------- runs
# run_once PROG VARIANT DEST MODE: runs the workload of PROG built as
# VARIANT.  Every run — count or timed, any variant — runs in the same
# directory ($SCRATCH/run, emptied first) under the same argv[0] (run_P uses
# exec -a) and the same environment (env -i; every profiler's output
# variable set, pointing into $SCRATCH/prof, emptied first), so a program
# that looks at its own name, path or environment behaves alike in every
# build, and each run writes one fresh profile (nothing merged into data of
# earlier runs).  MODE count: the run directory then moves to DEST with the
# ballarus profile and clang's .profraw files; gcov's .gcda files move back
# beside their .gcno in the build directory.  MODE time: DEST is ignored.
# The outputs are compared with the plain build's count run.
# Sets ELAPSED_US (wall-clock microseconds of the whole process).
SCRATCH=$work/scratch
run_once() {
  local p=$1 v=$2 dest=$3 mode=$4 exe=$work/$1/build/$2/exe rc=0 t0 t1 dir
  local run=$SCRATCH/run prof=$SCRATCH/prof
  rm -rf "$run" "$prof" && mkdir -p "$run" "$prof"
  local -a envs=(env -i "PATH=$PATH" "HOME=$run" LC_ALL=C
                 "BALLARUS_PROFILE=$prof/ballarus.profile"
                 "GCOV_PREFIX=$prof/gcov"
                 "LLVM_PROFILE_FILE=$prof/clang-%p.profraw")
  cd "$run"
  t0=${EPOCHREALTIME/./}
  "${envs[@]}" bash -c "$(declare -f "run_$p"); here=$here; work=$work; THREADS_ITERS=$THREADS_ITERS; run_$p \"\$1\"" run "$exe" || rc=$?
  t1=${EPOCHREALTIME/./}
  cd "$work"
  ELAPSED_US=$((t1 - t0))
  [ "$rc" = 0 ] || die "$p: variant $v exited with status $rc (in $run; stderr: $(head -c 300 "$run/stderr" 2>/dev/null))"
  dir=$run
  if [ "$mode" = count ]; then
    rm -rf "$dest" && mv "$run" "$dest" && dir=$dest
    local f
    [ ! -f "$prof/ballarus.profile" ] || mv "$prof/ballarus.profile" "$dest/"
    for f in "$prof"/clang-*.profraw; do [ ! -f "$f" ] || mv "$f" "$dest/"; done
    if [ -d "$prof/gcov" ]; then
      find "$work/$p/build/$v" -name '*.gcda' -delete
      while IFS= read -r f; do
        mv "$f" "${f#"$prof/gcov"}" || die "$p: variant $v: cannot move $f beside its .gcno"
      done < <(find "$prof/gcov" -name '*.gcda')
    fi
  fi
  if [ -n "${BALLARUS_BENCH_INJECT_MISMATCH:-}" ] && [ "$v" = "$BALLARUS_BENCH_INJECT_MISMATCH" ]; then
    echo "injected difference (BALLARUS_BENCH_INJECT_MISMATCH)" >>"$dir/stdout"   # test hook
  fi
  local f ref=$work/$p/count/plain
  for f in $("outputs_$p"); do
    [ -f "$dir/$f" ] || die "$p: variant $v wrote no $f"
    if [ "$dir" != "$ref" ]; then
      cmp -s "$ref/$f" "$dir/$f" \
        || die "$p: variant $v: output $f differs from the plain build's ($dir/$f vs $ref/$f)"
    fi
  done
  if declare -F "check_$p" >/dev/null; then
    local msg
    msg=$(cd "$dir" && "check_$p" 2>&1) || die "$p: variant $v: $msg"
  fi
}

# exact PROG VARIANT COUNTED: the threads program's count of bench_hot,
# into exact.tsv; an atomic variant must have counted every call.
is_atomic() { case "${V_OPTS[$1]}" in *atomic*) return 0 ;; esac; return 1; }
exact() {
  local want=$((4 * THREADS_ITERS))
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$want" "$3" >>"$RAW/exact.tsv"
  if is_atomic "$2" && [ "$3" != "$want" ]; then
    die "$1: variant $2 updates counters atomically but counted $3 calls of bench_hot, not $want"
  fi
  say "$1: $2 counted $3 of $want calls of bench_hot"
}

# counters PROG VARIANT: counter work of the count run, into counters.tsv;
# for threads also the count of bench_hot, into exact.tsv.
GCOV_DUMMY=
counters() {
  local p=$1 v=$2 dir=$work/$1/count/$2 line
  case "${V_KIND[$v]}" in
    ballarus)
      local prof=$dir/ballarus.profile
      [ -s "$prof" ] || die "$p: variant $v wrote no profile ($prof)"
      # Flow conservation holds unless racy updates lost increments (threads
      # with update=single): there a violation is expected and only noted.
      if ! "$RECON" verify "$prof" >"$dir/verify.txt" 2>&1; then
        if deterministic_counts "$p" || is_atomic "$v"; then
          head -n 20 "$dir/verify.txt" >&2
          die "$p: variant $v: ballarus-reconstruct verify found violations"
        fi
        say "$p: $v: flow not conserved ($(grep -c . "$dir/verify.txt") lines from verify): increments lost to racy single updates"
      fi
      "$RECON" stats --json "$prof" >"$dir/stats.json" 2>"$dir/stats.err" \
        || die "$p: variant $v: ballarus-reconstruct stats failed: $(cat "$dir/stats.err")"
      line=$(python3 "$PY" ballarus-stats "$dir/stats.json") || die "$p: variant $v: cannot read stats"
      printf '%s\t%s\tballarus\t%s\n' "$p" "$v" "$line" >>"$RAW/counters.tsv"
      if [ "$p" = threads ]; then
        "$RECON" show --json --function '^bench_hot$' "$prof" >"$dir/hot.json" \
          || die "$p: variant $v: ballarus-reconstruct show failed"
        line=$(python3 "$PY" ballarus-count "$dir/hot.json" bench_hot) || die "$p: variant $v: no bench_hot in the profile"
        exact "$p" "$v" "$line"
      fi ;;
    gcov)
      local -a gcdas=()
      mapfile -t gcdas < <(find "$work/$p/build/$v" -name '*.gcda' | sort)
      [ ${#gcdas[@]} -gt 0 ] || die "$p: variant $v wrote no .gcda files"
      if [ -z "$GCOV_DUMMY" ]; then
        # stats reads gcov's files beside a ballarus profile; any will do.
        mkdir -p "$work/dummy"
        (cd "$work/dummy" && "$BCC" -o empty "$work/probe/probe.c" &&
          BALLARUS_PROFILE=$work/dummy/empty.profile ./empty) \
          || die "cannot build the empty ballarus program for stats --gcov"
        GCOV_DUMMY=$work/dummy/empty.profile
      fi
      "$RECON" stats --json "$GCOV_DUMMY" --gcov "${gcdas[@]}" >"$dir/stats.json" 2>"$dir/stats.err" \
        || die "$p: variant $v: ballarus-reconstruct stats --gcov failed: $(cat "$dir/stats.err")"
      line=$(python3 "$PY" gcov-stats "$dir/stats.json") || die "$p: variant $v: cannot read gcov stats"
      printf '%s\t%s\tgcov\t%s\n' "$p" "$v" "$line" >>"$RAW/counters.tsv"
      if [ "$p" = threads ]; then
        line=$(python3 "$PY" gcov-count "$dir/stats.json" bench_hot) || die "$p: variant $v: no bench_hot in gcov's data"
        exact "$p" "$v" "$line"
      fi ;;
    clang)
      local -a raws=()
      mapfile -t raws < <(find "$dir" -name '*.profraw' | sort)
      [ ${#raws[@]} -gt 0 ] || die "$p: variant $v wrote no .profraw files"
      llvm-profdata-14 merge -o "$dir/merged.profdata" "${raws[@]}" 2>"$dir/merge.err" \
        || die "$p: variant $v: llvm-profdata-14 merge failed: $(cat "$dir/merge.err")"
      llvm-profdata-14 show --text --all-functions "$dir/merged.profdata" >"$dir/profdata.txt" \
        || die "$p: variant $v: llvm-profdata-14 show failed"
      line=$(python3 "$PY" clang-stats "$dir/profdata.txt") || die "$p: variant $v: cannot read llvm-profdata's output"
      printf '%s\t%s\tclang\t%s\n' "$p" "$v" "$line" >>"$RAW/counters.tsv"
      if [ "$p" = threads ]; then
        line=$(python3 "$PY" clang-count "$dir/profdata.txt" bench_hot) || die "$p: variant $v: no bench_hot in clang's profile"
        exact "$p" "$v" "$line"
      fi ;;
  esac
}

# Edge-mode profiles reconstruct exactly the naive profile (every edge and
# block of every function), when every build executes alike.
check_against_naive() {
  local p=$1 v checked=
  [ -n "${SELECTED[naive]:-}" ] || return 0
  deterministic_counts "$p" || return 0
  "$RECON" show --json "$work/$p/count/naive/ballarus.profile" >"$work/$p/count/naive/show.json" \
    || die "$p: naive: ballarus-reconstruct show failed"
  for v in "${VARS[@]}"; do
    [ "${V_KIND[$v]}" = ballarus ] && [ "$v" != naive ] || continue
    case " ${V_OPTS[$v]} " in *" mode=naive "*|*" mode=edge "*|*" mode=edge,"*) ;; *) continue ;; esac
    "$RECON" show --json "$work/$p/count/$v/ballarus.profile" >"$work/$p/count/$v/show.json" \
      || die "$p: $v: ballarus-reconstruct show failed"
    python3 "$PY" same-counts "$work/$p/count/naive/show.json" "$work/$p/count/$v/show.json" \
      >"$work/$p/count/$v/same.txt" 2>&1 \
      || die "$p: variant $v: reconstructed counts differ from the naive profile's: $(head -n 3 "$work/$p/count/$v/same.txt")"
    checked+=${checked:+ }$v
  done
  [ -z "$checked" ] || printf '%s\tevery edge and block count equals the naive profile'"'"'s\t%s\n' \
    "$p" "$checked" >>"$RAW/checks.tsv"
}

# --------------------------------------------------------------- main loop
start=$(date +%s)
for p in "${PROGS[@]}"; do
  say "$p: preparing"
  mkdir -p "$work/$p/build" "$work/$p/count"
  "prepare_$p"
  for v in "${VARS[@]}"; do
    build "$p" "$v"
    run_once "$p" "$v" "$work/$p/count/$v" count
    say "$p: $v: output equals plain's ($(awk -v u="$ELAPSED_US" 'BEGIN{printf "%.2f", u/1e6}') s)"
    counters "$p" "$v"
  done
  check_against_naive "$p"
  printf '%s\toutputs equal the plain build'"'"'s\tevery run (count run, %d warm-up, %d timed) of %d variants\n' \
    "$p" "$warmup" "$runs" "${#VARS[@]}" >>"$RAW/checks.tsv"

  # Timing: round-robin over the variants, each paired with its base.
  total_rounds=$((warmup + runs))
  for ((r = 1; r <= total_rounds; r++)); do
    if [ "$r" -le "$warmup" ]; then say "$p: warm-up round $r/$warmup"
    else say "$p: timed round $((r - warmup))/$runs"; fi
    for v in "${VARS[@]}"; do
      b=${V_BASE[$v]}
      [ "$b" != - ] || continue
      run_once "$p" "$b" "$SCRATCH/run" time; tb=$ELAPSED_US
      run_once "$p" "$v" "$SCRATCH/run" time; tv=$ELAPSED_US
      [ "$r" -le "$warmup" ] || printf '%s\t%s\t%s\t%d\t%s\t%s\n' "$p" "$v" "$b" "$((r - warmup))" "$tb" "$tv" >>"$RAW/runs.tsv"
    done
  done
done

# --------------------------------------------------------------- report
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm)"
  echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "nproc: $(nproc)"
  echo "memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "gcc: $(gcc --version | head -n 1)"
  if command -v clang-14 >/dev/null; then echo "clang: $(clang-14 --version | head -n 1)"; fi
  commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain 2>/dev/null | grep -v '^?? bench/results/')" ]; then
    commit+=" (working tree differs from the commit)"
  fi
  echo "ballarus: $commit"
  SRC_VERSIONS=${SRC_VERSIONS%; }
  echo "sources: ${SRC_VERSIONS:-none downloaded}"
  echo "command: bash bench/run.sh$([ "$quick" = 1 ] && echo ' --quick') --programs $(IFS=,; echo "${PROGS[*]}") --variants $(IFS=,; echo "${VARS[*]}") --runs $runs --warmup $warmup"
  echo "workloads: lua bench/lua/workload.lua; sqlite3 bench/sqlite3/workload.sql; bzip2 -9 then -d of $BZIP2_BYTES bytes from bench/bzip2/gentext.c; threads 4 x $THREADS_ITERS calls"
  [ -z "$note" ] || echo "note: $note"
  echo "elapsed: $(( $(date +%s) - start )) s"
} >"$out/machine.txt"

python3 "$PY" report "$RAW" "$out" "$have_gnuplot" || die "writing the report failed"
[ -f "$RAW/chart.gp" ] || have_gnuplot=0   # nothing to plot
if [ "$have_gnuplot" = 1 ]; then
  (cd "$out" && gnuplot raw/chart.gp) >"$work/gnuplot.log" 2>&1 \
    || { cat "$work/gnuplot.log" >&2; die "gnuplot failed"; }
fi
say "done in $(( $(date +%s) - start )) s: $out/results.md$([ "$have_gnuplot" = 1 ] && echo ", $out/chart.png")"
cat "$out/results.md"
