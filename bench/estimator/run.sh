#!/usr/bin/env bash
# run.sh — the static estimators measured against real profiles: for each
# program, how often each estimator's likelier direction of a two-way
# branch is the direction the run took (weighted by executions), and how
# many counter increments the edge-mode placement it gives executes, over
# Exact-Max (weights=profile= of the same run: the fewest any spanning tree
# gives).
#
#   bash bench/estimator/run.sh [--programs LIST] [--torture N]
#                               [--torture-src DIR] [--out DIR] [--cache DIR]
#                               [--work DIR] [--prefix DIR]
#
# Programs: lua, sqlite3, bzip2 (bench/lib/programs.sh: the same sources,
# builds and workloads as bench/run.sh) and `torture`, a sample of N
# (default 50) programs of GCC's gcc.c-torture/execute suite.  Estimators
# (each a mode=edge update=single build with the pass dump on):
#   ball-larus  weights=heuristic (tune-estimator=ball-larus, the default)
#   wu-larus    weights=heuristic tune-estimator=wu-larus
#   gcc         weights=gcc: GCC's guessed frequencies
#   exact-max   weights=profile= the ball-larus run's profile
# Each build runs its workload once; its profile must verify and its
# increments are `ballarus-reconstruct stats`' total.  The measured branch
# directions are the ball-larus run's edge counts (`show --json`); each
# estimator's predictions are the edge weights its pass dump lists (GCC's:
# the branch probabilities the dump lists beside them).  report.py does the
# arithmetic; OUT/results.md is the table (also on stdout), OUT/raw/ the
# rows.  bench/README.md, "Estimators", describes the method.
set -euo pipefail
export LC_ALL=C

prog=bench/estimator/run.sh
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)  # bench/
root=$(cd "$here/.." && pwd)

say() { printf '[estimator] %s\n' "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
usage_die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 2; }

TORTURE=()
programs=lua,sqlite3,bzip2,torture torture_n=50 torture_src='' out='' cache='' work='' prefix=''
while [ $# -gt 0 ]; do
  case "$1" in
    --programs|--torture|--torture-src|--out|--cache|--work|--prefix)
      [ $# -ge 2 ] || usage_die "$1 needs a value"
      case "$1" in
        --programs) programs=$2 ;; --torture) torture_n=$2 ;;
        --torture-src) torture_src=$2 ;; --out) out=$2 ;;
        --cache) cache=$2 ;; --work) work=$2 ;; --prefix) prefix=$2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_die "unknown argument: $1" ;;
  esac
done
[[ $torture_n =~ ^[0-9]+$ ]] || usage_die "--torture takes a number"
absolute() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
cache=$(absolute "${cache:-$HOME/.cache/ballarus-bench}")
out=$(absolute "${out:-$here/results/latest-estimator}")
work=$(absolute "${work:-$cache/work-estimator}")
[ -z "$prefix" ] || prefix=$(absolute "$prefix")
quick=0
mkdir -p "$cache" "$out/raw" "$work"
# shellcheck source=../lib/programs.sh
. "$here/lib/programs.sh"
need_tool gcc "gcc 12 (scripts/setup.sh)"
need_tool python3 "python3"

if [ -z "$prefix" ]; then
  need_tool bazel "bazel (scripts/setup.sh), or pass --prefix DIR"
  say "bazel run //:install -- $work/prefix"
  rm -rf "$work/prefix"
  (cd "$root" && bazel run //:install -- "$work/prefix") >"$work/install.log" 2>&1 \
    || { tail -n 30 "$work/install.log" >&2; die "bazel run //:install failed"; }
  prefix=$work/prefix
fi
BCC=$prefix/bin/ballarus-gcc
RECON=$prefix/bin/ballarus-reconstruct
[ -x "$BCC" ] && [ -x "$RECON" ] || die "not a ballarus prefix: $prefix"
REPORT=$here/estimator/report.py

ESTIMATORS=(ball-larus wu-larus gcc exact-max)
options_of() {  # options_of ESTIMATOR PROFILE -> plugin KEY=VALUE pairs
  case "$1" in
    ball-larus) echo "weights=heuristic tune-estimator=ball-larus" ;;
    wu-larus) echo "weights=heuristic tune-estimator=wu-larus" ;;
    gcc) echo "weights=gcc" ;;
    exact-max) echo "weights=profile=$2" ;;
  esac
}
compiler_of() {  # compiler_of ESTIMATOR PROFILE
  local cc="$BCC -fplugin-arg-ballarus-mode=edge -fplugin-arg-ballarus-update=single -fplugin-arg-ballarus-dump" kv
  for kv in $(options_of "$1" "$2"); do cc+=" -fplugin-arg-ballarus-$kv"; done
  printf '%s\n' "$cc"
}

# --- torture: a sample of gcc.c-torture/execute, one file per program
prepare_torture() {
  if [ -z "$torture_src" ]; then
    torture_src=$cache/src/gcc-torture-execute
    if [ ! -f "$torture_src/.complete" ]; then
      fetch gcc-12
      local orig
      orig=$(compgen -G "$cache/src/gcc-12_*.orig.tar.*" | head -n 1)
      say "extracting gcc.c-torture/execute from $(basename "$orig")"
      rm -rf "$torture_src.tmp" && mkdir -p "$torture_src.tmp"
      # Debian's orig tarball holds the dfsg tarball of the GCC sources.
      tar xzf "$orig" -O --wildcards '*/gcc-*-dfsg.tar.xz' | xz -dc |
        tar x -C "$torture_src.tmp" --wildcards --strip-components=5 \
          '*/gcc/testsuite/gcc.c-torture/execute/*.c' \
        || die "cannot extract gcc.c-torture/execute from $orig"
      rm -rf "$torture_src" && mv "$torture_src.tmp" "$torture_src"
      touch "$torture_src/.complete"
    fi
  fi
  [ -d "$torture_src" ] || die "no torture directory $torture_src"
  # Candidates: self-contained programs (no dg- directives, includes or
  # asm), in name order; every k-th of them, so the sample spreads over
  # the suite; those that build and exit 0 with plain gcc -O2, up to N.
  local -a all=() picked=()
  mapfile -t all < <(cd "$torture_src" && grep -L -e 'dg-' -e '#include' -e 'asm' -- *.c | sort)
  local step=$(( ${#all[@]} / (torture_n + torture_n / 2 + 1) )) i f
  [ "$step" -ge 1 ] || step=1
  mkdir -p "$work/torture/plain"
  for ((i = 0; i < ${#all[@]} && ${#picked[@]} < torture_n; i += step)); do
    f=${all[$i]}
    if gcc -O2 -w -o "$work/torture/plain/exe" "$torture_src/$f" -lm >/dev/null 2>&1 &&
       timeout 10 "$work/torture/plain/exe" >/dev/null 2>&1; then
      picked+=("${f%.c}")
    fi
  done
  TORTURE=("${picked[@]}")
  say "torture: ${#TORTURE[@]} programs from $torture_src"
}
build_torture_one() {  # DIR CC NAME
  # shellcheck disable=SC2086
  $2 -O2 -w -c "$torture_src/$3.c" -o "$1/$3.o" && $2 -O2 -o "$1/exe" "$1/$3.o" -lm
}
run_torture_one() { (exec -a torture "$1") >stdout 2>stderr; }

# measure PROGRAM GROUP BUILD_FN RUN_FN: builds and runs every estimator,
# appends the rows.
measure() {
  local p=$1 group=$2 build_fn=$3 run_fn=$4 est dir profile=''
  for est in "${ESTIMATORS[@]}"; do
    dir=$work/$p/$est
    rm -rf "$dir" && mkdir -p "$dir/build" "$dir/run"
    [ "$est" != exact-max ] || profile=$work/$p/ball-larus/ballarus.profile
    say "$p: $est"
    "$build_fn" "$dir/build" "$(compiler_of "$est" "$profile")" >"$dir/build.log" 2>&1 \
      || { tail -n 20 "$dir/build.log" >&2; die "$p: building with $est failed (log: $dir/build.log)"; }
    (cd "$dir/run" && env -i "PATH=$PATH" "HOME=$dir/run" LC_ALL=C \
        "BALLARUS_PROFILE=$dir/ballarus.profile" \
        bash -c "$(declare -f "$run_fn"); here=$here; work=$work; $run_fn \"\$1\"" run "$dir/build/exe") \
      || die "$p: the $est build's run failed (in $dir/run)"
    "$RECON" verify "$dir/ballarus.profile" >"$dir/verify.txt" 2>&1 \
      || die "$p: $est: the profile does not verify ($dir/verify.txt)"
    "$RECON" stats --json "$dir/ballarus.profile" >"$dir/stats.json"
    find "$dir/build" -name '*.ballarus' -print0 | sort -z | xargs -0 cat >"$dir/dump.txt"
    [ -s "$dir/dump.txt" ] || die "$p: $est: the build left no pass dump"
  done
  "$RECON" show --json "$work/$p/ball-larus/ballarus.profile" >"$work/$p/show.json"
  for est in "${ESTIMATORS[@]}"; do
    dir=$work/$p/$est
    python3 "$REPORT" row "$p" "$group" "$est" "$dir/dump.txt" "$work/$p/show.json" \
      "$dir/stats.json" >>"$out/raw/rows.tsv" || die "$p: $est: report.py row failed"
  done
  python3 "$REPORT" heuristics "$p" "$work/$p/wu-larus/dump.txt" "$work/$p/show.json" \
    >>"$out/raw/heuristics.tsv" || die "$p: report.py heuristics failed"
}

printf 'program\tgroup\testimator\tbranches\texecutions\thits\tincrements\n' >"$out/raw/rows.tsv"
printf 'program\theuristic\texecutions\thits\n' >"$out/raw/heuristics.tsv"
IFS=, read -r -a PROGS <<<"$programs"
for p in "${PROGS[@]}"; do
  case "$p" in
    lua|sqlite3|bzip2|torture) "prepare_$p" ;;
    *) usage_die "unknown program $p (lua, sqlite3, bzip2, torture)" ;;
  esac
done
# (fetch locks the source cache; released once all are prepared.)
[ -z "${SRC_LOCKED:-}" ] || { exec 8>&-; SRC_LOCKED=; }
for p in "${PROGS[@]}"; do
  case "$p" in
    lua|sqlite3|bzip2) measure "$p" "$p" "build_$p" "run_$p" ;;
    torture)
      for t in "${TORTURE[@]}"; do
        eval "build_t_$t() { build_torture_one \"\$1\" \"\$2\" '$t'; }"
        measure "torture/$t" c-torture "build_t_$t" run_torture_one
      done ;;
  esac
done
{
  echo "# Static estimators against measured profiles"
  echo
  echo "gcc $(gcc -dumpversion), $(date -u +%Y-%m-%d); sources: ${SRC_VERSIONS:-}torture: ${#TORTURE[@]} programs"
  echo
  python3 "$REPORT" table "$out/raw/rows.tsv" "$out/raw/heuristics.tsv"
} >"$out/results.md"
printf '%s\n' "${TORTURE[@]}" >"$out/raw/torture-programs.txt"
cat "$out/results.md"
