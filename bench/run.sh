#!/usr/bin/env bash
# run.sh — the ballarus benchmark suite: run-time overhead, compile-time
# overhead and counter work of ballarus against gcov and clang, on real
# programs, in one run.  bench/README.md explains every variant and column.
#
#   bash bench/run.sh [--quick | --path-breakdown | --threads-acceptance]
#                     [--programs LIST]
#                     [--variants LIST] [--runs N] [--warmup N] [--pin CPU|none]
#                     [--layout random|fixed] [--layout-seed N]
#                     [--no-instr] [--out DIR] [--cache DIR] [--work DIR]
#                     [--prefix DIR] [--note TEXT] [--list]
#
# For each program (default lua,sqlite3,bzip2,threads,threads-loop):
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
#      `ballarus-reconstruct stats`, clang through llvm-profdata; the
#      threads programs also run their threads one after another (the
#      reference counts an exact profiler must reproduce); then each
#      variant of a single-threaded program runs once under valgrind
#      (cachegrind): instructions executed, in total and per function;
#   4. times every variant interleaved with its base build (plain, variant,
#      plain, variant, ...): --warmup rounds untimed, then --runs rounds,
#      round-robin over the variants; each run's output is checked again.
#      A variant's time ratio for one round is its run time over the base
#      run just before it.  Single-threaded programs run pinned (taskset).
#      With --layout random (the default), each timed round first links
#      every variant anew from its objects in a random layout (objects
#      shuffled, 0-4080 bytes of padding ahead of them; bench.py layout),
#      so that a ratio averages over code layouts instead of measuring the
#      one the build happened to have; the layouts go to raw/layouts.tsv.
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
# --threads-acceptance (issue 13, exact counting under threads): programs
# lua,sqlite3,bzip2,threads,threads-loop, variants
# plain,gcov,gcov-atomic,clang-plain,clang,clang-atomic and ballarus edge and path
# each with update=single, atomic and thread; results.md's section
# "Exact under threads over racy" has update=thread over update=single
# (instructions and wall time, geomean over the single-threaded programs)
# and "Counts under threads" the 8-thread programs' exactness and time over
# the racy build.
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
#          -fplugin-arg-ballarus-KEY=VALUE, and compiler flags (-...) as they are.  @NAIVE_PROFILE@ is the profile of
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
edge-thread         | plain       | ballarus | mode=edge weights=heuristic update=thread | ballarus edge heuristic, per-thread counters (update=thread, the default under -pthread: through %gs in executables)
edge-tls            | plain       | ballarus | mode=edge weights=heuristic update=tls | ballarus edge heuristic, per-thread counters in static TLS (update=tls)
edge-gcc            | plain       | ballarus | mode=edge weights=gcc update=single | ballarus edge, weights=gcc
edge-wu-larus       | plain       | ballarus | mode=edge weights=heuristic tune-estimator=wu-larus update=single | ballarus edge, Wu-Larus static estimate (tune-estimator=wu-larus)
edge-gcc-atomic     | plain       | ballarus | mode=edge weights=gcc update=atomic | ballarus edge gcc, atomic
edge-uniform        | plain       | ballarus | mode=edge weights=uniform update=single | ballarus edge, weights=uniform
edge-uniform-atomic | plain       | ballarus | mode=edge weights=uniform update=atomic | ballarus edge uniform, atomic
edge-profile        | plain       | ballarus | mode=edge weights=profile=@NAIVE_PROFILE@ update=single | ballarus edge, weights=profile= (naive run: Exact-Max)
edge-profile-atomic | plain       | ballarus | mode=edge weights=profile=@NAIVE_PROFILE@ update=atomic | ballarus edge profile, atomic
path                | plain       | ballarus | mode=path update=single | ballarus Ball-Larus path profiling
path-atomic         | plain       | ballarus | mode=path update=atomic | ballarus path, atomic
path-thread         | plain       | ballarus | mode=path update=thread | ballarus path, per-thread counters (update=thread, the default under -pthread: through %gs in executables)
path-tls            | plain       | ballarus | mode=path update=tls | ballarus path, per-thread counters in static TLS (update=tls)
edge-thread-ptr     | plain       | ballarus | mode=edge weights=heuristic update=thread tune-thread-gs=off | ballarus edge heuristic, per-thread counters through the thread-local pointer (tune-thread-gs=off)
path-thread-ptr     | plain       | ballarus | mode=path update=thread tune-thread-gs=off | ballarus path, per-thread counters through the thread-local pointer (tune-thread-gs=off)
path-et-off         | plain       | ballarus | mode=path update=single early-termination=off | ballarus path, no early-termination pre-count (breakdown)
path-hash           | plain       | ballarus | mode=path update=single path-storage=hash | ballarus path, functions above path-table-max hashed instead of cut (the former storage) (breakdown)
path-no-hoist       | plain       | ballarus | mode=path update=single tune-path-hoist=off | ballarus path, path ends not hoisted onto the edges into their block (breakdown)
path-no-returns     | plain       | ballarus | mode=path update=single tune-path-returns=off | ballarus path, pre-count before calls to always-returning functions too (breakdown)
path-number         | plain       | ballarus | mode=path update=single tune-path-register=number | ballarus path, the register holds the path number, counts range-checked (breakdown)
path-loops          | plain       | ballarus | mode=path update=single tune-path-loops=on | ballarus path, one-path loops counted in locals on static estimates (breakdown)
path-dense          | plain       | ballarus | mode=path update=single path-table-max=@DENSE_MAX@ path-storage=hash | ballarus path, dense tables up to @DENSE_MAX@ paths uncut, hashed above (breakdown)
path-hashed         | plain       | ballarus | mode=path update=single path-table-max=0 | ballarus path, every function hashed (breakdown)
path-max64k         | plain       | ballarus | mode=path update=single path-table-max=65536 | ballarus path, dense tables up to 65536 paths (fewer cuts) (breakdown)
path-no-balance     | plain       | ballarus | mode=path update=single tune-path-balance=off | ballarus path, every pre-count made, none taken from the balance of a loop header (breakdown)
path-no-cut-hoist   | plain       | ballarus | mode=path update=single tune-path-cut-hoist=off | ballarus path, a cut block counts at its start, not on the edges into it (breakdown)
path-no-pc-hoist    | plain       | ballarus | mode=path update=single tune-path-precount-hoist=off | ballarus path, a pre-count where several prefixes meet is made in the call block, not on the edges into it (breakdown)
path-no-entry-bal   | plain       | ballarus | mode=path update=single tune-path-entry-balance=off | ballarus path, every pre-count on a function entry prefix made, none taken from the balance of its calls (breakdown)
path-no-barrier     | plain       | ballarus | mode=path update=single tune-loop-barrier=off | ballarus path, no compiler barrier after the counts in loops that may touch counter memory (breakdown)
path-no-call-cuts   | plain       | ballarus | mode=path update=single tune-path-call-cuts=off | ballarus path, calls several prefixes reach not cut: the register lives across them (breakdown)
path-no-loop-regs   | plain       | ballarus | mode=path update=single tune-loop-registers=off | ballarus path, counted loops count in memory, not in locals flushed on exit (breakdown)
path-no-keep-tails  | plain       | ballarus | mode=path update=single tune-path-keep-tails=off | ballarus path, GCC cross-jumps the handler tails that hoisted path ends leave alike (breakdown)
edge-no-barrier     | plain       | ballarus | mode=edge weights=heuristic update=single tune-loop-barrier=off | ballarus edge, no compiler barrier after the counts in loops that may touch counter memory (breakdown)
edge-no-loop-regs   | plain       | ballarus | mode=edge weights=heuristic update=single tune-loop-registers=off | ballarus edge, every count of a loop in memory, tight loops too (breakdown)
edge-no-entry-calls | plain       | ballarus | mode=edge weights=heuristic update=single tune-entry-calls=off | ballarus edge, every function counts its own entry, none taken from the call blocks of its callers (breakdown)
edge-no-inline-sizes | plain      | ballarus | mode=edge weights=heuristic update=single tune-inline-sizes=off | ballarus edge, the GCC inliner sizes each function with its counter updates, as for gcov (breakdown)
path-no-inline-sizes | plain      | ballarus | mode=path update=single tune-inline-sizes=off | ballarus path, the GCC inliner sizes each function with its counters and path register, as for gcov (breakdown)
path-no-fe          | plain       | ballarus | mode=path update=single tune-path-from-edges=off | ballarus path, the register in every function, none counted by its edge counters (breakdown)
path-whole          | plain       | ballarus | mode=path update=single path-storage=hash tune-path-loop-cuts=off tune-path-call-cuts=off | ballarus path, no loop entry or call cuts, large functions hashed instead of cut: the longest paths (for correlation; breakdown)
edge-path           | plain       | ballarus | mode=edge,path update=single | ballarus edge and path profiling
edge-path-atomic    | plain       | ballarus | mode=edge,path update=atomic | ballarus edge and path, atomic
edge-path-number    | plain       | ballarus | mode=edge,path update=single tune-path-register=number | ballarus edge and path, numeric path register (breakdown)
edge-path-cuts      | plain       | ballarus | mode=edge,path update=single tune-path-loop-cuts=on | ballarus edge and path, loop entry cuts as in mode=path (breakdown)
edge-path-no-derive | plain       | ballarus | mode=edge,path update=single tune-path-derive=off | ballarus edge and path, every path count made, none taken from the edge counters (breakdown)
'
# A ballarus counter-update mode is one line above per mode (edge-tls and
# path-tls are update=tls's): every variant whose update= is not single must
# count exactly under threads (the run fails otherwise), its racy sibling
# (the same options with update=single) is found by that substitution, and
# the threads programs run it (they skip only THREADS_SKIP below).
QUICK_VARIANTS=plain,gcov,naive,edge,edge-atomic,path
# Breakdown variants: selected by name, a pattern naming them (path*), or
# --path-breakdown; not by "all" (they are for one question only).
EXTRA_VARIANTS='edge-tls path-tls edge-thread-ptr path-thread-ptr path-et-off path-hash path-no-hoist path-no-returns path-number path-loops path-dense path-hashed edge-path-number path-max64k path-no-fe edge-path-no-derive edge-path-cuts path-no-balance path-no-cut-hoist path-no-pc-hoist path-no-entry-bal path-no-barrier path-no-keep-tails edge-no-barrier edge-no-loop-regs edge-no-entry-calls edge-no-inline-sizes path-no-inline-sizes path-no-call-cuts path-no-loop-regs path-whole'
BREAKDOWN_VARIANTS=plain,edge,path,path-et-off,path-hash,path-no-hoist,path-no-returns,path-number,path-loops,path-dense,path-hashed,path-max64k,path-no-fe,edge-path,edge-path-number,edge-path-no-derive,edge-path-cuts,path-no-balance,path-no-cut-hoist,path-no-pc-hoist,path-no-entry-bal,path-no-barrier,path-no-keep-tails,edge-no-barrier,edge-no-entry-calls,edge-no-inline-sizes,path-no-inline-sizes,path-no-call-cuts,path-no-loop-regs
BREAKDOWN_PROGRAMS=lua,sqlite3,bzip2
THREADS_ACCEPTANCE_VARIANTS=plain,gcov,gcov-atomic,clang-plain,clang,clang-atomic,edge,edge-atomic,edge-thread,edge-tls,path,path-atomic,path-thread,path-tls
THREADS_ACCEPTANCE_PROGRAMS=lua,sqlite3,bzip2,threads,threads-loop
# path-dense: functions with up to this many paths (2^24) get a dense table
# (the plugin takes up to 2^40; a table is 8 bytes a path, in the
# translation unit's counter array in bss).  Everything dense does not
# work: sqlite3VdbeExec has 1.7e8 paths, and at path-table-max=2e8
# sqlite3.c's counters take 2.96 GB of bss — more than the 2 GiB of
# x86-64's small code model (the link fails, "relocation truncated to
# fit"; -mcmodel=medium links it, at the price of 64-bit addressing of
# every large array, which changes the instructions measured), more than
# valgrind can load ("mmap failed in UME ... very large text, data or
# bss"; such a variant gets no instruction count, noted in the checks),
# and a 2.9 GB profile file written at every exit (dense tables are written
# whole).  At 2^24, sqlite3.c's tables take 718 MiB: it links in the small
# model and valgrind loads it; 21 functions stay hashed, sqlite3VdbeExec
# among them (path-storage=hash: the default storage would cut them down
# to 2^24 paths each instead, gigabytes of tables).
DENSE_MAX=${BALLARUS_BENCH_DENSE_MAX:-16777216}
# The threads programs run every selected variant but these (edge weights
# and edge,path say nothing new about concurrent counters).
THREADS_SKIP="naive* edge-gcc* edge-uniform* edge-profile* edge-wu-larus* edge-path* $EXTRA_VARIANTS"
ALL_PROGRAMS=lua,sqlite3,bzip2,threads,threads-loop,quick
DEFAULT_PROGRAMS=lua,sqlite3,bzip2,threads,threads-loop
QUICK_PROGRAMS=quick,threads,threads-loop

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
  V_OPTS[$name]=${V_OPTS[$name]//@DENSE_MAX@/$DENSE_MAX}
  V_DESC[$name]=$(trim "$desc")
  V_DESC[$name]=${V_DESC[$name]//@DENSE_MAX@/$DENSE_MAX}
done <<<"$VARIANTS"

# Counter-update modes.  must_be_exact VARIANT: its counts must be exact
# under threads (ballarus: any update= but single; gcov and clang: atomic).
# racy_of VARIANT: the racy (update=single) build it is compared with under
# threads — itself for a racy variant; ballarus: the variant with the same
# options but update=single (and without tune-thread-gs, which only
# update=thread reads); gcov, clang: the name without its last -word
# (gcov-atomic -> gcov); "-" when there is none.
must_be_exact() {
  case "${V_KIND[$1]}" in
    ballarus) case " ${V_OPTS[$1]} " in *" update=single "*) return 1 ;; *" update="*) return 0 ;; esac ;;
    gcov|clang) case "${V_OPTS[$1]}" in *atomic*) return 0 ;; esac ;;
  esac
  return 1
}
racy_of() {
  local v=$1 w target
  case "${V_KIND[$v]}" in
    ballarus)
      must_be_exact "$v" || { echo "$v"; return; }
      target=$(sed -E 's/(^| )update=[^ ]*/\1update=single/; s/ tune-thread-gs=[^ ]*//' <<<"${V_OPTS[$v]}")
      for w in "${V_ORDER[@]}"; do
        [ "${V_KIND[$w]}" = ballarus ] && [ "${V_OPTS[$w]}" = "$target" ] && { echo "$w"; return; }
      done ;;
    gcov|clang)
      must_be_exact "$v" || { echo "$v"; return; }
      w=${v%-*}
      [ -n "${V_KIND[$w]:-}" ] && { echo "$w"; return; } ;;
  esac
  echo -
}

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
  --path-breakdown   where path profiling's cost goes: programs
                     $BREAKDOWN_PROGRAMS, variants
                     $BREAKDOWN_VARIANTS,
                     instruction counts and per-function attribution,
                     --runs 0 unless given
  --threads-acceptance  issue 13's table (exact counts under threads):
                     programs $THREADS_ACCEPTANCE_PROGRAMS, variants
                     $THREADS_ACCEPTANCE_VARIANTS
  --runs N           timed runs per variant (default 5; --quick: 1); 0: no
                     timing (instruction counts and counter work only)
  --warmup N         untimed rounds before them (default 1; --quick: 0)
  --pin CPU|none     run the single-threaded programs' timed and count runs
                     on this CPU (taskset -c; default: the last CPU this
                     process may use); the threads programs are never pinned
  --layout random|fixed
                     random (default): each timed round links every variant
                     anew from its objects in a random code layout (link
                     order shuffled, a pad of 0-4080 bytes ahead), the same
                     for the same seed, program, variant and round; the
                     threads programs keep theirs; fixed: the build's own
  --layout-seed N    the layouts' seed (default 1)
  --no-instr         no instruction counts (valgrind --tool=cachegrind)
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

quick=0 breakdown=0 tacc=0 instr=1 pin=auto programs='' variants='' runs='' warmup='' out='' cache='' work='' prefix='' note=''
layout=random layout_seed=1
argv_all=$*
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --path-breakdown) breakdown=1 ;;
    --threads-acceptance) tacc=1 ;;
    --no-instr) instr=0 ;;
    --programs|--variants|--runs|--warmup|--out|--cache|--work|--prefix|--note|--pin|--layout|--layout-seed)
      [ $# -ge 2 ] || usage_die "$1 needs a value"
      v=$2
      case "$1" in
        --programs) programs=$v ;; --variants) variants=$v ;;
        --runs) runs=$v ;; --warmup) warmup=$v ;; --out) out=$v ;;
        --cache) cache=$v ;; --work) work=$v ;; --prefix) prefix=$v ;;
        --note) note=$v ;; --pin) pin=$v ;;
        --layout) layout=$v ;; --layout-seed) layout_seed=$v ;;
      esac
      shift ;;
    --programs=*|--variants=*|--runs=*|--warmup=*|--out=*|--cache=*|--work=*|--prefix=*|--note=*|--pin=*|--layout=*|--layout-seed=*)
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

if [ $((quick + breakdown + tacc)) -gt 1 ]; then
  usage_die "--quick, --path-breakdown and --threads-acceptance do not go together"
elif [ "$tacc" = 1 ]; then
  : "${programs:=$THREADS_ACCEPTANCE_PROGRAMS}" "${variants:=$THREADS_ACCEPTANCE_VARIANTS}" "${runs:=5}" "${warmup:=1}"
elif [ "$quick" = 1 ]; then
  : "${programs:=$QUICK_PROGRAMS}" "${variants:=$QUICK_VARIANTS}" "${runs:=1}" "${warmup:=0}"
elif [ "$breakdown" = 1 ]; then
  : "${programs:=$BREAKDOWN_PROGRAMS}" "${variants:=$BREAKDOWN_VARIANTS}" "${runs:=0}" "${warmup:=0}"
else
  : "${programs:=$DEFAULT_PROGRAMS}" "${variants:=all}" "${runs:=5}" "${warmup:=1}"
fi
[[ $runs =~ ^[0-9]+$ ]] || usage_die "--runs must be a non-negative integer, got '$runs'"
case "$layout" in random|fixed) ;; *) usage_die "--layout must be random or fixed, got '$layout'" ;; esac
[[ $layout_seed =~ ^[0-9]+$ ]] || usage_die "--layout-seed must be a non-negative integer, got '$layout_seed'"
[ "$runs" != 0 ] || warmup=0
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
  all=0
  [ "$pat" = all ] && pat='*' all=1
  hit=0
  for v in "${V_ORDER[@]}"; do
    [ "$all" = 0 ] || case " $EXTRA_VARIANTS " in *" $v "*) continue ;; esac
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

if [ "$instr" = 1 ] && ! command -v valgrind >/dev/null; then
  if [ "$quick" = 1 ]; then
    instr=0
    say "valgrind not installed: no instruction counts in --quick mode"
  else
    apt_install valgrind
    need_tool valgrind "apt-get install -y valgrind"
  fi
fi
# Pinning: the single-threaded programs' runs go to one CPU (taskset), so the
# scheduler does not move them between cores mid-run.
PIN_DESC="none"
declare -a PIN_CMD=()
if [ "$pin" = auto ]; then
  if command -v taskset >/dev/null; then
    pin=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
  else
    pin=none
    say "taskset not found: runs are not pinned"
  fi
fi
if [ "$pin" != none ]; then
  [[ $pin =~ ^[0-9]+$ ]] || usage_die "--pin wants a CPU number or none, got '$pin'"
  need_tool taskset "apt-get install -y util-linux, or --pin none"
  taskset -c "$pin" true 2>/dev/null || die "cannot pin to CPU $pin (taskset -c $pin)"
  PIN_CMD=(taskset -c "$pin")
  PIN_DESC="taskset -c $pin for lua, sqlite3, bzip2 and quick (count, timed and instruction runs); threads programs unpinned"
fi

# One full run at a time per work directory.
mkdir -p "$work" "$out/raw"
if [ "$quick" = 0 ] && command -v flock >/dev/null; then
  exec 9>"$work.lock"
  flock -n 9 || die "another bench/run.sh is using $work (lock $work.lock)"
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
# The checkout measured, as it is at the start (results written into it
# later do not count).
# (BALLARUS_BENCH_COMMIT names it for a copy outside git, e.g. one made
# with git archive so that editing the checkout cannot disturb a long run:
# bash reads its script as it goes.)
if [ -n "${BALLARUS_BENCH_COMMIT:-}" ]; then
  COMMIT="$BALLARUS_BENCH_COMMIT (a copy of it)"
else
  COMMIT=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain 2>/dev/null | grep -v '^?? bench/results/')" ]; then
    COMMIT+=" (working tree differs from the commit)"
  fi
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
    case "$kv" in
      weights=profile=*) continue ;;   # needs a real profile
      -*) probe_args+=("$kv") ;;
      *) probe_args+=("-fplugin-arg-ballarus-$kv") ;;
    esac
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
        case "$kv" in -*) cc+=" $kv" ;; *) cc+=" -fplugin-arg-ballarus-$kv" ;; esac
      done ;;
    *) die "variant $v: unknown kind $kind" ;;
  esac
  printf '%s\n' "$cc"
}

RAW=$out/raw
printf 'program\tvariant\twall_s\tcpu_s\n' >"$RAW/builds.tsv"
printf 'program\tvariant\tfile\ttext\trodata\teh_frame\tdata\tbss\tmetadata\tgcno\n' >"$RAW/sizes.tsv"
printf 'program\tvariant\ttool\tstatic_counters\tdynamic_increments\textra\n' >"$RAW/counters.tsv"
printf 'program\tvariant\tbase\tround\tbase_us\tvariant_us\n' >"$RAW/runs.tsv"
printf 'program\tvariant\tracy\thot_expected\thot_counted\texpected\tcounted\tfunctions_differing\n' >"$RAW/exact.tsv"
printf 'program\tvariant\tbase\tinstructions\n' >"$RAW/instr.tsv"
printf 'program\tvariant\tfunction\tinstructions\n' >"$RAW/functions.tsv"
printf 'program\tcheck\tresult\n' >"$RAW/checks.tsv"
printf 'program\tvariant\tround\tpad_bytes\tobjects\n' >"$RAW/layouts.tsv"
{
  printf 'variant\tbase\tracy\tkind\toptions\tdescription\n'
  for v in "${VARS[@]}"; do
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "${V_BASE[$v]}" "$(racy_of "$v")" "${V_KIND[$v]}" "${V_OPTS[$v]}" "${V_DESC[$v]}"
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
  local sizes
  sizes=$(python3 "$PY" sizes "$dir/exe" "$dir") || die "$p: variant $v: cannot read the executable's sizes"
  printf '%s\t%s\t%s\n' "$p" "$v" "$sizes" >>"$RAW/sizes.tsv"
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
# MODE instr: the program runs under valgrind --tool=cachegrind
# --cache-sim=no (through a symlink $SCRATCH/bin/PROG, the same path for
# every variant, so argv[0] is alike); the cachegrind output files move to
# DEST, and INSTR is the sum of their instructions executed (every process
# of the workload).  The outputs are compared with the plain build's count
# run.  Single-threaded programs run pinned (PIN_CMD).  Sets ELAPSED_US
# (wall-clock microseconds of the whole process).  MODE time runs
# exe.layout instead of exe where relink made one (--layout random).
SCRATCH=$work/scratch
run_once() {
  local p=$1 v=$2 dest=$3 mode=$4 exe=$work/$1/build/$2/exe rc=0 t0 t1 dir
  [ "$mode" != time ] || [ ! -x "$exe.layout" ] || exe=$exe.layout
  local run=$SCRATCH/run prof=$SCRATCH/prof
  rm -rf "$run" "$prof" && mkdir -p "$run" "$prof"
  local -a envs=(env -i "PATH=$PATH" "HOME=$run" LC_ALL=C
                 "BALLARUS_PROFILE=$prof/ballarus.profile"
                 "GCOV_PREFIX=$prof/gcov"
                 "LLVM_PROFILE_FILE=$prof/clang-%p.profraw")
  local -a pin=()
  ! single_threaded "$p" || pin=("${PIN_CMD[@]}")
  if [ "$mode" = instr ]; then
    mkdir -p "$SCRATCH/bin"
    ln -sfn "$exe" "$SCRATCH/bin/$p"
    printf '#!/bin/sh\nexec valgrind --tool=cachegrind --cache-sim=no --log-file=%s/valgrind.%%p.log --cachegrind-out-file=%s/cg.%%p %s "$@"\n' \
      "$prof" "$prof" "$SCRATCH/bin/$p" >"$SCRATCH/bin/vg-$p"
    chmod +x "$SCRATCH/bin/vg-$p"
    exe=$SCRATCH/bin/vg-$p
  fi
  cd "$run"
  t0=${EPOCHREALTIME/./}
  "${pin[@]}" "${envs[@]}" bash -c "$(declare -f "run_$p"); here=$here; work=$work; NTHREADS=$NTHREADS; THREADS_ITERS=$THREADS_ITERS; THREADS_MODE=$THREADS_MODE; run_$p \"\$1\"" run "$exe" || rc=$?
  t1=${EPOCHREALTIME/./}
  cd "$work"
  ELAPSED_US=$((t1 - t0))
  if [ "$rc" != 0 ] && [ "$mode" = instr ] && grep -qs 'very large text, data or bss' "$prof"/valgrind.*.log; then
    # valgrind cannot load an executable this large (path-dense on sqlite3:
    # gigabytes of bss); the variant has no instruction count.
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$prof"/valgrind.*.log "$dest/"
    INSTR=-
    return 0
  fi
  [ "$rc" = 0 ] || die "$p: variant $v exited with status $rc (in $run; stderr: $(head -c 300 "$run/stderr" 2>/dev/null))"
  dir=$run
  if [ "$mode" = instr ]; then
    rm -rf "$dest" && mkdir -p "$dest"
    local -a cgs=()
    mapfile -t cgs < <(find "$prof" -maxdepth 1 -name 'cg.*' | sort)
    [ ${#cgs[@]} -gt 0 ] || die "$p: variant $v: valgrind wrote no cachegrind output"
    mv "${cgs[@]}" "$dest/"
    # (%.0f: mawk's %d stops at 2^31 - 1.)
    INSTR=$(cat "$dest"/cg.* | awk '/^summary:/ { s += $2 } END { printf "%.0f", s }')
    [ "${INSTR:-0}" -gt 0 ] || die "$p: variant $v: no instruction count in $dest"
  fi
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

# profile_data PROG VARIANT DIR: reads the profile of the count run in DIR
# (gcov: the .gcda files beside the build's .gcno) into DIR/stats.json
# (ballarus, gcov: ballarus-reconstruct stats) or DIR/profdata.txt (clang),
# and DIR/vector.json, the counter sums per function (bench.py vector).
GCOV_DUMMY=
profile_data() {
  local p=$1 v=$2 dir=$3
  case "${V_KIND[$v]}" in
    ballarus)
      local prof=$dir/ballarus.profile
      [ -s "$prof" ] || die "$p: variant $v wrote no profile ($prof)"
      "$RECON" stats --json "$prof" >"$dir/stats.json" 2>"$dir/stats.err" \
        || die "$p: variant $v: ballarus-reconstruct stats failed: $(cat "$dir/stats.err")"
      python3 "$PY" vector ballarus "$dir/stats.json" >"$dir/vector.json" || die "$p: variant $v: cannot read stats" ;;
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
      python3 "$PY" vector gcov "$dir/stats.json" >"$dir/vector.json" || die "$p: variant $v: cannot read gcov stats" ;;
    clang)
      local -a raws=()
      mapfile -t raws < <(find "$dir" -name '*.profraw' | sort)
      [ ${#raws[@]} -gt 0 ] || die "$p: variant $v wrote no .profraw files"
      llvm-profdata-14 merge -o "$dir/merged.profdata" "${raws[@]}" 2>"$dir/merge.err" \
        || die "$p: variant $v: llvm-profdata-14 merge failed: $(cat "$dir/merge.err")"
      llvm-profdata-14 show --text --all-functions "$dir/merged.profdata" >"$dir/profdata.txt" \
        || die "$p: variant $v: llvm-profdata-14 show failed"
      python3 "$PY" vector clang "$dir/profdata.txt" >"$dir/vector.json" || die "$p: variant $v: cannot read llvm-profdata's output" ;;
  esac
}

# counters PROG VARIANT: counter work of the count run, into counters.tsv.
counters() {
  local p=$1 v=$2 dir=$work/$1/count/$2 line
  case "${V_KIND[$v]}" in
    ballarus)
      # Flow conservation holds unless racy updates lost increments (threads
      # with update=single): there a violation is expected and only noted.
      if ! "$RECON" verify "$dir/ballarus.profile" >"$dir/verify.txt" 2>&1; then
        if deterministic_counts "$p" || must_be_exact "$v"; then
          head -n 20 "$dir/verify.txt" >&2
          die "$p: variant $v: ballarus-reconstruct verify found violations"
        fi
        say "$p: $v: flow not conserved ($(grep -c . "$dir/verify.txt") lines from verify): increments lost to racy single updates"
      fi
      profile_data "$p" "$v" "$dir"
      line=$(python3 "$PY" ballarus-stats "$dir/stats.json") || die "$p: variant $v: cannot read stats" ;;
    gcov)
      profile_data "$p" "$v" "$dir"
      line=$(python3 "$PY" gcov-stats "$dir/stats.json") || die "$p: variant $v: cannot read gcov stats" ;;
    clang)
      profile_data "$p" "$v" "$dir"
      line=$(python3 "$PY" clang-stats "$dir/profdata.txt") || die "$p: variant $v: cannot read llvm-profdata's output" ;;
    *) return 0 ;;
  esac
  printf '%s\t%s\t%s\t%s\n' "$p" "$v" "${V_KIND[$v]}" "$line" >>"$RAW/counters.tsv"
}

# exact PROG VARIANT: a threads program's exactness, into exact.tsv.  The
# expected counters are those of the seq run of the same build (the same
# threads one after another: no concurrent update, so even racy counters
# are exact); the counted ones those of the par count run.  threads also
# checks bench_hot's count against NTHREADS x ITERATIONS.  A variant that
# must be exact (must_be_exact) fails the run otherwise.
exact() {
  local p=$1 v=$2 dir=$work/$1/count/$2 seqdir=$work/$1/count-seq/$2 want=- got=- line
  if [ "$p" = threads ]; then
    want=$((NTHREADS * THREADS_ITERS))
    case "${V_KIND[$v]}" in
      ballarus)
        "$RECON" show --json --function '^bench_hot$' "$dir/ballarus.profile" >"$dir/hot.json" \
          || die "$p: variant $v: ballarus-reconstruct show failed"
        got=$(python3 "$PY" ballarus-count "$dir/hot.json" bench_hot) || die "$p: variant $v: no bench_hot in the profile" ;;
      gcov) got=$(python3 "$PY" gcov-count "$dir/stats.json" bench_hot) || die "$p: variant $v: no bench_hot in gcov's data" ;;
      clang) got=$(python3 "$PY" clang-count "$dir/profdata.txt" bench_hot) || die "$p: variant $v: no bench_hot in clang's profile" ;;
    esac
  fi
  line=$(python3 "$PY" compare-vectors "$seqdir/vector.json" "$dir/vector.json") \
    || die "$p: variant $v: cannot compare the counters with the seq run's"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$v" "$(racy_of "$v")" "$want" "$got" "$line" >>"$RAW/exact.tsv"
  local te tc nd
  read -r te tc nd <<<"$line"
  if must_be_exact "$v" && { [ "$want" != "$got" ] || [ "$nd" != 0 ]; }; then
    die "$p: variant $v must count exactly but counted $tc of $te increments ($nd functions differ from the sequential run)$([ "$want" = - ] || echo "; bench_hot: $got of $want calls")"
  fi
  say "$p: $v counted $tc of $te increments ($nd functions differ from the sequential run)$([ "$want" = - ] || echo "; bench_hot: $got of $want calls")"
}

# instr_all PROG VARIANT...: each variant's workload under cachegrind, JOBS
# runs at once (instruction counts do not depend on the load), into
# instr.tsv and functions.tsv (per-function instructions, bench.py
# cg-functions).  Slot k runs in $work/vgK: the same path length for all.
instr_all() {
  local p=$1; shift
  local -a vs=("$@") pids=()
  local k i n=${#vs[@]} slots=$JOBS
  [ "$slots" -ge 1 ] || slots=1
  say "$p: instruction counts of ${#vs[@]} variants (valgrind, $slots at once)"
  for ((k = 0; k < slots; k++)); do
    (
      SCRATCH=$work/vg$k
      for ((i = k; i < n; i += slots)); do
        v=${vs[$i]}
        run_once "$p" "$v" "$work/$p/instr/$v" instr
        echo "$INSTR" >"$work/$p/instr/$v/instr"
        say "$p: $v: $INSTR instructions"
      done
    ) &
    pids+=($!)
  done
  local rc=0
  for k in "${pids[@]}"; do wait "$k" || rc=1; done
  [ "$rc" = 0 ] || die "$p: an instruction-count run failed (messages above)"
  for v in "${vs[@]}"; do
    printf '%s\t%s\t%s\t%s\n' "$p" "$v" "${V_BASE[$v]}" "$(cat "$work/$p/instr/$v/instr")" >>"$RAW/instr.tsv"
    if [ "$(cat "$work/$p/instr/$v/instr")" = - ]; then
      printf '%s\tno instruction count\t%s: valgrind cannot load the executable (%s)\n' "$p" "$v" \
        "$(grep -h 'mmap' "$work/$p/instr/$v"/valgrind.*.log | head -n 1)" >>"$RAW/checks.tsv"
      continue
    fi
    python3 "$PY" cg-functions "$work/$p/instr/$v"/cg.* | sed "s/^/$p\t$v\t/" >>"$RAW/functions.tsv" \
      || die "$p: variant $v: cannot read cachegrind's output"
  done
}

# Edge-mode profiles reconstruct exactly the naive profile (every edge and
# block of every function), when every build executes alike.
check_against_naive() {
  local p=$1 v checked=
  [ -n "${SELECTED[naive]:-}" ] || return 0
  deterministic_counts "$p" || return 0
  "$RECON" show --json "$work/$p/count/naive/ballarus.profile" >"$work/$p/count/naive/show.json" \
    || die "$p: naive: ballarus-reconstruct show failed"
  for v in "${PVARS[@]}"; do
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

# relink PROG VARIANT ROUND: links the variant's objects (objects_P) in
# round ROUND's random layout (bench.py layout: the seed, program, variant
# and round decide it) into exe.layout beside exe, with a pad object of
# that many bytes ahead of them, in .text.unlikely: the linker script puts
# that input section first of all code, so the pad moves every function,
# main (.text.startup) and the cold parts (.text.unlikely) included;
# records the layout in raw/layouts.tsv.  Every run of exe.layout is
# checked like any other.
relink() {
  local p=$1 v=$2 r=$3 dir=$work/$1/build/$2 cc pad
  local -a objs=() lay=()
  cc=$(compiler_of "$p" "$v")
  mapfile -t objs < <("objects_$p" "$dir")
  [ ${#objs[@]} -gt 0 ] || die "$p: variant $v: no objects to relink in $dir"
  mapfile -t lay < <(python3 "$PY" layout "$layout_seed" "$p/$v/$r" "${objs[@]}")
  pad=${lay[0]}
  printf '\t.section .note.GNU-stack,"",@progbits\n\t.section .text.unlikely,"ax",@progbits\n%s\n' \
    "$([ "$pad" = 0 ] || printf '__ballarus_bench_pad:\n\t.skip %d\n' "$pad")" >"$dir/layout-pad.s"
  { gcc -c "$dir/layout-pad.s" -o "$dir/layout-pad.o" &&
      ( "link_$p" "$cc" "$dir/exe.layout" "$dir/layout-pad.o" "${lay[@]:1}" ); } >"$dir.relink.log" 2>&1 || {
    tail -n 20 "$dir.relink.log" >&2
    die "$p: variant $v: relinking for round $r's layout failed (log: $dir.relink.log)"
  }
  printf '%s\t%s\t%d\t%s\t%s\n' "$p" "$v" "$r" "$pad" "$(for o in "${lay[@]:1}"; do printf '%s\n' "${o##*/}"; done | paste -sd " ")" >>"$RAW/layouts.tsv"
}

# --------------------------------------------------------------- main loop
# program_variants PROG: the selected variants PROG runs (threads programs
# skip THREADS_SKIP), into PVARS.
program_variants() {
  local v pat skip
  PVARS=()
  for v in "${VARS[@]}"; do
    skip=0
    if is_threads "$1"; then
      for pat in $THREADS_SKIP; do
        # shellcheck disable=SC2053
        [[ $v == $pat ]] && skip=1
      done
    fi
    [ "$skip" = 1 ] || PVARS+=("$v")
  done
}
start=$(date +%s)
for p in "${PROGS[@]}"; do
  say "$p: preparing"
  mkdir -p "$work/$p/build" "$work/$p/count" "$work/$p/count-seq" "$work/$p/instr"
  "prepare_$p"
  [ -z "${SRC_LOCKED:-}" ] || { exec 8>&-; SRC_LOCKED=; }
  program_variants "$p"
  for v in "${PVARS[@]}"; do
    build "$p" "$v"
    if is_threads "$p" && [ "$v" != plain ]; then
      # The reference: the same threads one after another.
      THREADS_MODE=0
      run_once "$p" "$v" "$work/$p/count-seq/$v" count
      profile_data "$p" "$v" "$work/$p/count-seq/$v"
      THREADS_MODE=1
    fi
    run_once "$p" "$v" "$work/$p/count/$v" count
    say "$p: $v: output equals plain's ($(awk -v u="$ELAPSED_US" 'BEGIN{printf "%.2f", u/1e6}') s)"
    counters "$p" "$v"
    if is_threads "$p" && [ "$v" != plain ] && [ "${V_KIND[$v]}" != cplain ]; then
      exact "$p" "$v"
    fi
  done
  check_against_naive "$p"
  if [ "$instr" = 1 ] && single_threaded "$p"; then
    instr_all "$p" "${PVARS[@]}"
  fi
  printf '%s\toutputs equal the plain build'"'"'s\tevery run (count run, %s%d warm-up, %d timed) of %d variants\n' \
    "$p" "$( [ "$instr" = 1 ] && single_threaded "$p" && echo "instruction-count run, ")$( is_threads "$p" && echo "sequential reference run, ")" \
    "$warmup" "$runs" "${#PVARS[@]}" >>"$RAW/checks.tsv"

  # Timing: round-robin over the variants, each paired with its base.
  relinks=0 linked_round=
  [ "$layout" != random ] || ! declare -F "objects_$p" >/dev/null || relinks=1
  total_rounds=$((warmup + runs))
  for ((r = 1; r <= total_rounds; r++)); do
    if [ "$r" -le "$warmup" ]; then say "$p: warm-up round $r/$warmup"
    else say "$p: timed round $((r - warmup))/$runs"; fi
    # Warm-up rounds run round 1's layouts, linked once.
    lr=$((r > warmup ? r - warmup : 1))
    if [ "$relinks" = 1 ] && [ "$lr" != "${linked_round:-}" ]; then
      for v in "${PVARS[@]}"; do relink "$p" "$v" "$lr"; done
      linked_round=$lr
    fi
    for v in "${PVARS[@]}"; do
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
  echo "load average (1, 5, 15 min) at the start: $LOAD_BEFORE"
  echo "load average (1, 5, 15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  gov=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || true)
  echo "cpu frequency governor: ${gov:-not readable (no cpufreq in /sys: a VM?)}"
  echo "pinning: $PIN_DESC"
  if [ "$instr" = 1 ]; then
    echo "instructions: $(valgrind --version) --tool=cachegrind --cache-sim=no, $JOBS runs at once"
  else
    echo "instructions: not counted"
  fi
  echo "gcc: $(gcc --version | head -n 1)"
  if command -v clang-14 >/dev/null; then echo "clang: $(clang-14 --version | head -n 1)"; fi
  echo "ballarus: $COMMIT"
  SRC_VERSIONS=${SRC_VERSIONS%; }
  echo "sources: ${SRC_VERSIONS:-none downloaded}"
  echo "command: bash bench/run.sh $argv_all"
  echo "as: bash bench/run.sh$([ "$quick" = 1 ] && echo ' --quick') --programs $(IFS=,; echo "${PROGS[*]}") --variants $(IFS=,; echo "${VARS[*]}") --runs $runs --warmup $warmup --pin $pin --layout $layout --layout-seed $layout_seed$([ "$instr" = 1 ] || echo ' --no-instr')"
  echo "workloads: lua bench/lua/workload.lua; sqlite3 bench/sqlite3/workload.sql; bzip2 -9 then -d of $BZIP2_BYTES bytes from bench/bzip2/gentext.c; threads $NTHREADS threads x $THREADS_ITERS calls of bench_hot; threads-loop $NTHREADS threads x $THREADS_ITERS iterations of shared_loop"
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
