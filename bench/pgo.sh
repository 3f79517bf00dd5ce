#!/usr/bin/env bash
# pgo.sh — profile-guided optimisation with ballarus against gcov's own:
# for each program, the speedup of `gcc -O2 -fprofile-use` over plain
# `gcc -O2` when the profile comes from gcov (-fprofile-arcs) and when it
# comes from ballarus (edge mode, converted by `ballarus-reconstruct gcda`),
# and whether the two -fprofile-use builds are the same code.
#
#   bash bench/pgo.sh [--quick] [--programs LIST] [--runs N] [--cpu N]
#                     [--out DIR] [--cache DIR] [--work DIR] [--prefix DIR]
#                     [--cachegrind] [--path-flags FLAGS]
#   bash bench/pgo.sh --report-only --runs N [--out DIR]   (redraw OUT/pgo.md
#                     from OUT/raw, e.g. after concatenating two runs' raw
#                     files)
#
# Per program (default lua,sqlite3,bzip2; the programs, their sources,
# builds and workloads are bench/run.sh's, bench/lib/programs.sh):
#   plain          gcc -O2
#   pgo-gcov       train: gcc -O2 -fprofile-arcs, run the workload; rebuild
#                  in the same directory with -fprofile-use
#   pgo-ballarus   train: ballarus-gcc -O2 (mode=edge), run the workload
#                  with one profile per process (BALLARUS_PROFILE=.../%p
#                  .profile), `ballarus-reconstruct gcda --in-place`;
#                  rebuild with -fprofile-use
#   pgo-ballarus-merged  the same profiles merged into one first
#                  (`ballarus-reconstruct merge`): the runs are summed, and
#                  the summary's sum_max becomes the largest merged count
#                  instead of the sum of each run's largest (gcov's); for a
#                  workload of several processes (bzip2: compress, then
#                  decompress) this is a different hot-block threshold, and
#                  the table shows what it does to the code and the time.
#   pgo-path       path-guided: train with ballarus-gcc mode=edge,path, the
#                  per-process profiles to .gcda as pgo-ballarus does (the
#                  same edge counts), and rebuild with -fprofile-use plus
#                  the plugin's tune-path-use=PROFILE (the runs merged): chains
#                  of blocks whose branches the path profile shows
#                  correlated are copied, with exact counts
#                  (docs/path-guided.md).  Its objects are compared with
#                  pgo-ballarus' (those with nothing copied are identical).
# Every -fprofile-use object of pgo-ballarus is compared with pgo-gcov's
# (cmp; the build directories differ, the objects carry no paths), and
# pgo-ballarus-merged's with pgo-ballarus'.  Then every build runs the
# workload, interleaved round by round (rotating the order), pinned to one
# CPU with taskset; each output must equal the plain build's.  The speedup
# of a variant in a round is plain's time over its own, reported as the
# median [min–max] over the rounds.
#
# --cachegrind: every build also runs the workload once under
# valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes: instructions,
# conditional and indirect branches and their simulated mispredictions,
# beside each executable's .text size (OUT/raw/pgo-cachegrind.tsv).
# --path-flags FLAGS: more plugin options for pgo-path's training build,
# e.g. whole paths (no loop-entry or call cuts, large functions hashed):
# "-fplugin-arg-ballarus-path-storage=hash
# -fplugin-arg-ballarus-tune-path-loop-cuts=off
# -fplugin-arg-ballarus-tune-path-call-cuts=off".
# Results: OUT/pgo.md (also printed), OUT/raw/pgo-runs.tsv,
# OUT/raw/pgo-objects.tsv, OUT/machine.txt.  --quick (//bench:pgo_quick_test):
# the bundled quick program, 1 round, no network.
set -euo pipefail
export LC_ALL=C

prog=bench/pgo.sh
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

say() { printf '[pgo] %s\n' "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
usage_die() { printf '%s: %s (try --help)\n' "$prog" "$*" >&2; exit 2; }

cachegrind=0 path_flags='' quick=0 programs='' runs='' cpu='' out='' cache='' work='' prefix='' report_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) sed -n '2,/^set -euo/{/^set -euo/d;p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --quick) quick=1 ;;
    --report-only) report_only=1 ;;
    --cachegrind) cachegrind=1 ;;
    --programs|--runs|--cpu|--out|--cache|--work|--prefix|--path-flags)
      [ $# -ge 2 ] || usage_die "$1 needs a value"
      case "$1" in
        --path-flags) path_flags=$2 ;;
        --programs) programs=$2 ;; --runs) runs=$2 ;; --cpu) cpu=$2 ;;
        --out) out=$2 ;; --cache) cache=$2 ;; --work) work=$2 ;;
        --prefix) prefix=$2 ;;
      esac
      shift ;;
    *) usage_die "unknown argument '$1'" ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then
  : "${programs:=quick}" "${runs:=1}"
else
  : "${programs:=lua,sqlite3,bzip2}" "${runs:=7}"
fi
case "$runs" in ''|*[!0-9]*|0) usage_die "--runs wants a positive number" ;; esac
: "${cpu:=$(( $(nproc 2>/dev/null || echo 1) - 1 ))}"
case "$cpu" in ''|*[!0-9]*) usage_die "--cpu wants a CPU number" ;; esac
absolute() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
if [ -z "$cache" ]; then
  if [ -n "${HOME:-}" ]; then cache=$HOME/.cache/ballarus-bench
  elif [ "$quick" = 1 ]; then cache=/nonexistent
  else die "HOME is not set: pass --cache DIR"; fi
fi
: "${out:=$here/results/pgo-latest}"
cache=$(absolute "$cache") out=$(absolute "$out")
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/ballarus-pgo.XXXXXX")
  [ "$quick" = 0 ] || trap 'rm -rf "$work"' EXIT
fi
work=$(absolute "$work")
[ -z "$prefix" ] || prefix=$(absolute "$prefix")
for d in "$cache" "$out" "$work" "$prefix" "$here"; do
  case "$d" in *[[:space:],]*) die "paths with spaces or commas are not supported: '$d'" ;; esac
done

# report: OUT/pgo.md (also on stdout) from OUT/raw.
report() {
  awk -F'\t' -v runs="$runs" '
    FNR == 1 { next }
    FILENAME ~ /objects/ {
      if ($2 == "gcov-vs-ballarus") { objs[$1] = $4 "/" $3; diag[$1] = $5 }
      else if ($2 == "ballarus-vs-path") pathobj[$1] = ($3 - $4) "/" $3
      else merged[$1] = ($3 - $4) "/" $3
      next
    }
    { t[$1, $2, $3] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++np] = $1 } }
    function sortn(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x } }
    function stat(p, v,   r, n, a, s, med) {
      n = 0
      for (r = 1; r <= runs; r++) if ((p, r, v) in t && (p, r, "plain") in t) a[++n] = t[p, r, "plain"] / t[p, r, v]
      if (n == 0) return "-"
      sortn(a, n)
      med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      return sprintf("%.3f [%.3f–%.3f]", med, a[1], a[n])
    }
    function secs(p, v,   r, n, a) {
      n = 0
      for (r = 1; r <= runs; r++) if ((p, r, v) in t) a[++n] = t[p, r, v]
      sortn(a, n)
      return sprintf("%.3f", ((n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) / 1e6)
    }
    END {
      print "## PGO: speedup of gcc -O2 -fprofile-use over plain gcc -O2"
      print ""
      print "Median [min–max] over " runs " interleaved round(s) of plain time / variant time, pinned to one CPU (bench/pgo.sh)."
      print ""
      print "| program | plain (s) | PGO from gcov | PGO from ballarus edge | PGO from ballarus, merged profile | path-guided PGO | objects identical, gcov vs ballarus profile | diagnostics | objects changed by merging | objects changed by tune-path-use |"
      print "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
      for (i = 1; i <= np; i++) {
        p = order[i]
        print "| " p " | " secs(p, "plain") " | " stat(p, "pgo-gcov") " | " stat(p, "pgo-ballarus") " | " stat(p, "pgo-ballarus-merged") " | " stat(p, "pgo-path") " | " objs[p] " | " diag[p] " | " merged[p] " | " (p in pathobj ? pathobj[p] : "-") " |"
      }
    }' "$out/raw/pgo-objects.tsv" "$out/raw/pgo-runs.tsv" | tee "$out/pgo.md"
  [ -s "$out/raw/pgo-cachegrind.tsv" ] || return 0
  awk -F'\t' 'NR == 1 { next }
    !($1 in seen) { seen[$1] = 1; order[++np] = $1 }
    { row[$1, $2] = $0; ir[$1, $2] = $3; mp[$1, $2] = $5; tx[$1, $2] = $6 }
    function rel(a, b) { return b > 0 ? sprintf(" (%+.2f%%)", (a - b) * 100 / b) : "" }
    END {
      print ""
      print "Cachegrind (--cache-sim=no --branch-sim=yes), one run of the workload per build; size: the executable'"'"'s .text in bytes; in parentheses the change against pgo-ballarus."
      print ""
      print "| program | build | instructions | branches | mispredicted | .text |"
      print "|---|---|---:|---:|---:|---:|"
      for (i = 1; i <= np; i++)
        for (v = 1; v <= 5; v++) {
          split("plain pgo-gcov pgo-ballarus pgo-ballarus-merged pgo-path", names, " ")
          p = order[i]; n = names[v]
          if (!((p, n) in row)) continue
          split(row[p, n], f, "\t")
          print "| " p " | " n " | " f[3] rel(f[3], ir[p, "pgo-ballarus"]) " | " f[4] " | " f[5] rel(f[5], mp[p, "pgo-ballarus"]) " | " f[6] rel(f[6], tx[p, "pgo-ballarus"]) " |"
        }
    }' "$out/raw/pgo-cachegrind.tsv" | tee -a "$out/pgo.md"
}
if [ "$report_only" = 1 ]; then report; exit 0; fi

# shellcheck source=bench/lib/programs.sh
. "$here/lib/programs.sh"
for t in gcc make cmp taskset awk sed; do need_tool "$t" "install it (scripts/setup.sh)"; done
IFS=, read -r -a PROGS <<<"$programs"
for p in "${PROGS[@]}"; do
  declare -F "build_$p" >/dev/null || usage_die "unknown program '$p' (known: lua,sqlite3,bzip2,threads,quick)"
done
mkdir -p "$work" "$out/raw"

if [ -z "$prefix" ]; then
  command -v bazel >/dev/null || die "missing tool: bazel, or pass --prefix DIR"
  say "bazel run //:install -- $work/prefix"
  (cd "$root" && bazel ${BAZEL_STARTUP_OPTS:-} run //:install -- "$work/prefix") \
    >"$work/install.log" 2>&1 || { tail -n 20 "$work/install.log" >&2; die "installing ballarus failed"; }
  prefix=$work/prefix
fi
BCC="$prefix/bin/ballarus-gcc -fplugin-arg-ballarus-mode=edge"
BCC_PATH="$prefix/bin/ballarus-gcc -fplugin-arg-ballarus-mode=edge,path $path_flags"
PLUGIN=$prefix/lib/ballarus/ballarus.so
[ -f "$PLUGIN" ] || die "not a ballarus prefix (no lib/ballarus/ballarus.so): $prefix"
[ "$cachegrind" = 0 ] || need_tool valgrind "install it (apt-get install valgrind)"
RECON=$prefix/bin/ballarus-reconstruct
[ -x "$prefix/bin/ballarus-gcc" ] && [ -x "$RECON" ] || die "not a ballarus prefix: $prefix"

VARIANTS=(plain pgo-gcov pgo-ballarus pgo-ballarus-merged pgo-path)
printf 'program\tround\tvariant\tmicroseconds\n' >"$out/raw/pgo-runs.tsv"
printf 'program\tcompared\tobjects\tidentical\tdiagnostics\n' >"$out/raw/pgo-objects.tsv"
rm -f "$out/raw/pgo-cachegrind.tsv"
[ "$cachegrind" = 0 ] || printf 'program\tvariant\tinstructions\tbranches\tmispredicted\ttext_bytes\n' >"$out/raw/pgo-cachegrind.tsv"

# run_workload PROG EXE DIR [VAR=VALUE...]: one run of the workload in DIR
# (emptied first), pinned to $cpu, with a clean environment; sets
# ELAPSED_US.
run_workload() {
  local p=$1 exe=$2 dir=$3 t0 t1 rc=0
  shift 3
  rm -rf "$dir" && mkdir -p "$dir"
  cd "$dir"
  t0=${EPOCHREALTIME/./}
  env -i "PATH=$PATH" "HOME=$dir" LC_ALL=C "$@" taskset -c "$cpu" \
    bash -c "$(declare -f "run_$p"); here=$here; work=$work; THREADS_ITERS=$THREADS_ITERS; run_$p \"\$1\"" run "$exe" || rc=$?
  t1=${EPOCHREALTIME/./}
  cd "$work"
  ELAPSED_US=$((t1 - t0))
  [ "$rc" = 0 ] || die "$p: $exe exited with status $rc in $dir"
}
same_outputs() {  # same_outputs PROG DIR: DIR's outputs equal plain's
  local f
  for f in $("outputs_$1"); do
    cmp -s "$P/out-plain/$f" "$2/$f" || die "$1: $2/$f differs from the plain build's output"
  done
}
clean_objects() { find "$1" \( -name '*.o' -o -name '*.a' \) -delete; rm -f "$1/exe"; }
# The -fprofile-use build's objects; a program compiled and linked in one
# command (quick, threads) keeps none: its executable then.
objects() {
  local o
  o=$(cd "$1" && find . -name '*.o' | sort)
  if [ -n "$o" ]; then printf '%s\n' "$o"; else echo ./exe; fi
}
build_logged() {  # build_logged PROG DIR CC LOG
  mkdir -p "$2"
  ( "build_$1" "$2" "$3" ) >"$4" 2>&1 || { tail -n 30 "$4" >&2; die "$1: build with '$3' failed (log $4)"; }
}
diagnostics() { grep -E 'warning|error' "$1" | sed "s|$2||g" || true; }

# path_guided PROG: the pgo-path build in $P/path (see the header).
path_guided() {
  local p=$1 o n=0 same=0
  say "$p: ballarus edge,path training build and run"
  build_logged "$p" "$P/path" "$BCC_PATH" "$P/path-train.log"
  mkdir -p "$P/path-prof"
  run_workload "$p" "$P/path/exe" "$P/train-path" \
    "BALLARUS_PROFILE=$P/path-prof/%p.profile"
  same_outputs "$p" "$P/train-path"
  "$RECON" gcda --in-place "$P"/path-prof/*.profile >"$P/path-gcda.log" 2>&1 \
    || { cat "$P/path-gcda.log" >&2; die "$p: ballarus-reconstruct gcda (edge,path) failed"; }
  "$RECON" merge -o "$P/path.profile" "$P"/path-prof/*.profile
  clean_objects "$P/path"
  say "$p: path-guided -fprofile-use build"
  build_logged "$p" "$P/path" \
    "gcc -fprofile-use -fplugin=$PLUGIN -fplugin-arg-ballarus-tune-path-use=$P/path.profile" \
    "$P/path-use.log"
  for o in $(objects "$P/ballarus"); do
    n=$((n + 1))
    cmp -s "$P/ballarus/$o" "$P/path/$o" && same=$((same + 1))
  done
  printf '%s\tballarus-vs-path\t%s\t%s\t-\n' "$p" "$n" "$same" >>"$out/raw/pgo-objects.tsv"
}

# cachegrind_counts PROG VARIANT EXE: one run under cachegrind's branch
# simulation (every process of the workload summed), and EXE's .text size.
cachegrind_counts() {
  local p=$1 v=$2 exe=$3 wrap=$P/cg-$2 logs=$P/cg-logs-$2 text
  rm -rf "$logs" && mkdir -p "$logs"
  printf '#!/bin/sh\nexec valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=/dev/null --log-file=%s/%%p.log %s "$@"\n' \
    "$logs" "$exe" >"$wrap"
  chmod +x "$wrap"
  run_workload "$p" "$wrap" "$P/cg-run"
  same_outputs "$p" "$P/cg-run"
  text=$(size -A "$exe" | awk '$1 == ".text" { print $2 }')
  cat "$logs"/*.log | awk -v p="$p" -v v="$v" -v text="$text" '
    { gsub(/,/, "") }
    / I *refs:/ { ir += $NF }
    / Branches:/ { br += $3 }
    / Mispredicts:/ { mp += $3 }
    END { printf "%s\t%s\t%.0f\t%.0f\t%.0f\t%s\n", p, v, ir, br, mp, text }' \
    >>"$out/raw/pgo-cachegrind.tsv"
}

for p in "${PROGS[@]}"; do
  "prepare_$p"
  P=$work/pgo-$p  # ($work/$p holds prepare_$p's inputs)
  rm -rf "$P" && mkdir -p "$P"
  say "$p: plain build"
  build_logged "$p" "$P/plain" gcc "$P/plain.log"
  run_workload "$p" "$P/plain/exe" "$P/out-plain"

  say "$p: gcov training build and run"
  build_logged "$p" "$P/gcov" "gcc -fprofile-arcs" "$P/gcov-train.log"
  run_workload "$p" "$P/gcov/exe" "$P/train-gcov"
  same_outputs "$p" "$P/train-gcov"
  clean_objects "$P/gcov"
  say "$p: gcov -fprofile-use build"
  build_logged "$p" "$P/gcov" "gcc -fprofile-use" "$P/gcov-use.log"

  say "$p: ballarus training build and run"
  build_logged "$p" "$P/ballarus" "$BCC" "$P/ballarus-train.log"
  mkdir -p "$P/prof"
  run_workload "$p" "$P/ballarus/exe" "$P/train-ballarus" \
    "BALLARUS_PROFILE=$P/prof/%p.profile"
  same_outputs "$p" "$P/train-ballarus"
  "$RECON" gcda --in-place "$P"/prof/*.profile >"$P/gcda.log" 2>&1 \
    || { cat "$P/gcda.log" >&2; die "$p: ballarus-reconstruct gcda failed"; }
  clean_objects "$P/ballarus"
  say "$p: ballarus -fprofile-use build"
  build_logged "$p" "$P/ballarus" "gcc -fprofile-use" "$P/ballarus-use.log"

  n=0 same=0
  for o in $(objects "$P/gcov"); do
    n=$((n + 1))
    if cmp -s "$P/gcov/$o" "$P/ballarus/$o"; then same=$((same + 1)); else say "$p: $o differs (gcov vs ballarus profile)"; fi
  done
  if [ "$(diagnostics "$P/gcov-use.log" "$P/gcov")" = "$(diagnostics "$P/ballarus-use.log" "$P/ballarus")" ]; then diag=same; else diag=differ; fi
  printf '%s\tgcov-vs-ballarus\t%s\t%s\t%s\n' "$p" "$n" "$same" "$diag" >>"$out/raw/pgo-objects.tsv"

  # The merged profile: same counts, one summary.  `gcda -o DIR` names the
  # .gcda after the ballarus directory's objects, so the build happens
  # there (its -fprofile-use build set aside meanwhile), reading
  # -fprofile-use=DIR.
  say "$p: ballarus merged-profile -fprofile-use build"
  "$RECON" merge -o "$P/merged.profile" "$P"/prof/*.profile
  "$RECON" gcda -o "$P/merged-gcda" "$P/merged.profile" >"$P/gcda-merged.log" 2>&1 \
    || { cat "$P/gcda-merged.log" >&2; die "$p: ballarus-reconstruct gcda (merged) failed"; }
  rm -rf "$P/merged" "$P/ballarus.keep"
  cp -r "$P/ballarus" "$P/ballarus.keep"
  clean_objects "$P/ballarus"
  build_logged "$p" "$P/ballarus" "gcc -fprofile-use=$P/merged-gcda" "$P/merged-use.log"
  mv "$P/ballarus" "$P/merged" && mv "$P/ballarus.keep" "$P/ballarus"
  n=0 same=0
  for o in $(objects "$P/ballarus"); do
    n=$((n + 1))
    cmp -s "$P/ballarus/$o" "$P/merged/$o" && same=$((same + 1))
  done
  printf '%s\tballarus-vs-merged\t%s\t%s\t-\n' "$p" "$n" "$same" >>"$out/raw/pgo-objects.tsv"

  path_guided "$p"

  exe_of() {
    case "$1" in
      plain) echo "$P/plain/exe" ;; pgo-gcov) echo "$P/gcov/exe" ;;
      pgo-ballarus) echo "$P/ballarus/exe" ;; pgo-ballarus-merged) echo "$P/merged/exe" ;;
      pgo-path) echo "$P/path/exe" ;;
    esac
  }
  say "$p: $runs timed round(s) on CPU $cpu"
  for ((r = 1; r <= runs; r++)); do
    k=$(( (r - 1) % ${#VARIANTS[@]} ))
    for ((i = 0; i < ${#VARIANTS[@]}; i++)); do
      v=${VARIANTS[$(( (i + k) % ${#VARIANTS[@]} ))]}
      run_workload "$p" "$(exe_of "$v")" "$P/run"
      same_outputs "$p" "$P/run"
      printf '%s\t%s\t%s\t%s\n' "$p" "$r" "$v" "$ELAPSED_US" >>"$out/raw/pgo-runs.tsv"
    done
  done
  if [ "$cachegrind" = 1 ]; then
    for v in "${VARIANTS[@]}"; do cachegrind_counts "$p" "$v" "$(exe_of "$v")"; done
  fi
done

{
  echo "gcc: $(gcc --version | head -n 1)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) online; runs pinned to CPU $cpu"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rounds: $runs; programs: $programs; sources: ${SRC_VERSIONS:-bundled}"
  echo "pgo-path training flags: mode=edge,path ${path_flags:-(defaults)}"
} >"$out/machine.txt"

report

# Any pair of -fprofile-use builds that differ is a failure of the run.
awk -F'\t' 'NR > 1 && $2 == "gcov-vs-ballarus" && ($3 != $4 || $5 != "same") { bad = 1; print "'"$prog"': " $1 ": " $4 "/" $3 " objects identical, diagnostics " $5 > "/dev/stderr" } END { exit bad }' \
  "$out/raw/pgo-objects.tsv" || die "the -fprofile-use builds from gcov's and ballarus' profiles differ"
