#!/usr/bin/env bash
# quick_test.sh — //bench:quick_test, the smoke test of the benchmark
# harness: installs the build into a temporary prefix (//:install), runs
# `bench/run.sh --quick` with it (programs quick, threads and threads-loop;
# variants plain, gcov, naive, edge, edge-atomic, path; one run) and checks
# the report it prints:
#   * every variant has a time ratio for every program it runs (naive: quick
#     only — the threads programs skip it);
#   * instruction counts (when valgrind is installed): every variant has a
#     ratio to plain, gcov's and naive's above 1, edge's below naive's,
#     edge-atomic's equal to edge's up to the lock prefix (within 10 %);
#   * counter work: gcov's ratio to itself is 1.000; naive has more static
#     counters and at least as many increments as edge (edge counts a subset
#     of naive's edges on the same execution); edge-atomic counts what edge
#     counts on the single-threaded program;
#   * path mode reports path slots and path increments;
#   * edge-atomic counted every call of bench_hot under 8 threads, and every
#     counter of both threads programs equals the sequential reference run's;
#   * the edge profiles reconstructed the naive profile;
#   * the head-to-head section (each variant over gcov's run of the same
#     round), from the report on three rounds of known times.
#   * random code layouts: every variant of quick relinked for the timed
#     round with a pad (a multiple of 16 up to 4080 bytes) that moves main
#     by its size, recorded in raw/layouts.tsv and said in results.md;
#     bench.py layout repeats for a seed and key, permutes the objects and
#     varies with the round.
# Then the failure paths: a variant whose output differs (injected through
# BALLARUS_BENCH_INJECT_MISMATCH) must stop the run with exit status 1 and a
# message naming program and variant; an unknown variant is a usage error
# (exit 2).

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/bench-quick
rm -rf "$tmp"
mkdir -p "$tmp"

"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "FAIL: install" >&2; exit 1; }

run() {  # run NAME ARGS...: bench/run.sh --quick with our prefix; status in $rc
  local name=$1; shift
  rc=0
  bash "$rf/bench/run.sh" --quick --prefix "$tmp/prefix" --work "$tmp/work-$name" \
    --out "$tmp/out-$name" "$@" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr" || rc=$?
}

# --- the smoke run ---------------------------------------------------------
run main
if [ "$rc" != 0 ]; then
  echo "--- stderr of bench/run.sh (last 30 lines)" >&2
  tail -n 30 "$tmp/main.stderr" >&2
  echo "FAIL: bench/run.sh --quick exited $rc" >&2
  exit 1
fi
md=$tmp/out-main/results.md
[ -s "$md" ] || { echo "FAIL: no $md" >&2; exit 1; }
cmp -s "$md" "$tmp/main.stdout" || fail "stdout is not results.md"
for f in machine.txt raw/runs.tsv raw/builds.tsv raw/counters.tsv raw/exact.tsv; do
  [ -s "$tmp/out-main/$f" ] || fail "missing $f"
done
grep -q '^nproc: [0-9]' "$tmp/out-main/machine.txt" || fail "machine.txt has no nproc"
grep -q '^gcc: ' "$tmp/out-main/machine.txt" || fail "machine.txt has no gcc version"

# row TABLE-HEADING VARIANT: the markdown row of VARIANT after a heading.
row() {
  awk -v h="$1" -v v="$2" '
    /^#/ { on = (index($0, h) > 0) }
    on && index($0, "| " v " |") == 1 { print; exit }' "$md"
}
# trow PROGRAM VARIANT: the row of VARIANT in PROGRAM's table of "Counts
# under threads".
trow() {
  awk -v p="### $1" -v v="$2" '
    /^## / { sec = ($0 == "## Counts under threads") }
    /^### / { on = sec && $0 == p }
    on && index($0, "| " v " |") == 1 { print; exit }' "$md"
}
num() { awk -F'|' -v c="$2" '{ gsub(/ /, "", $c); print $c }' <<<"$1"; }

# Run time: a ratio (a positive number) for every program (naive: quick only).
n3='\ [0-9]+\.[0-9]+\ \|\ [0-9]+\.[0-9]+\ \|\ [0-9]+\.[0-9]+\ \|'
for v in gcov edge edge-atomic path; do
  r=$(row "## Run time" "$v")
  [[ $r =~ ^\|\ $v\ \|$n3$ ]] || fail "run-time row of $v: '$r'"
done
r=$(row "## Run time" naive)
[[ $r =~ ^\|\ naive\ \|\ [0-9]+\.[0-9]+\ \|\ –\ \|\ –\ \|$ ]] || fail "run-time row of naive: '$r'"
r=$(row "## Compile time" edge)
[[ $r =~ ^\|\ edge\ \|$n3$ ]] || fail "compile-time row of edge: '$r'"
# Binary size: quick's edge build is larger than plain's and carries
# metadata; gcov's has .gcno notes and no metadata.
srow() {
  awk -v v="$1" '
    /^## / { sec = ($0 == "## Binary size") }
    /^### / { on = sec && $0 == "### quick" }
    on && index($0, "| " v " |") == 1 { print; exit }' "$md"
}
r=$(srow edge)
[[ $(num "$r" 4) =~ ^[0-9]+\.[0-9]+$ ]] && [[ $(num "$r" 7) =~ ^[0-9.]+$ ]] &&
  awk -v x="$(num "$r" 4)" 'BEGIN { exit !(x > 1) }' || fail "binary-size row of edge: '$r'"
r=$(srow gcov)
[[ $(num "$r" 7) == – ]] && [[ $(num "$r" 11) =~ ^[0-9.]+$ ]] || fail "binary-size row of gcov: '$r'"
[ "$(head -1 "$tmp/out-main/raw/sizes.tsv" | cut -f3)" = file ] || fail "raw/sizes.tsv has no header"
grep -q '^pinning: ' "$tmp/out-main/machine.txt" || fail "machine.txt has no pinning line"
grep -q '^load average (1, 5, 15 min) at the start: ' "$tmp/out-main/machine.txt" || fail "machine.txt has no load average before"

# Instructions (valgrind): deterministic ratios to plain.
if command -v valgrind >/dev/null; then
  ir() { num "$(row "## Instructions executed" "$1")" 3; }
  for v in gcov naive edge edge-atomic path; do
    [[ $(ir "$v") =~ ^[0-9]+\.[0-9]{3}$ ]] || fail "instruction row of $v: '$(row "## Instructions executed" "$v")'"
  done
  awk -v g="$(ir gcov)" -v n="$(ir naive)" -v e="$(ir edge)" -v a="$(ir edge-atomic)" \
    'BEGIN { exit !(g > 1 && n > 1 && e < n && a / e > 0.9 && a / e < 1.1) }' \
    || fail "instruction ratios: gcov $(ir gcov), naive $(ir naive), edge $(ir edge), edge-atomic $(ir edge-atomic)"
  r=$(row "## Overhead: wall time / instructions" edge)
  [[ $r =~ ^\|\ edge\ \|\ [0-9]+\.[0-9]+\ /\ [0-9]+\.[0-9]{3}\ \|$ ]] || fail "overhead row of edge: '$r'"
  [ -s "$tmp/out-main/raw/instr.tsv" ] && [ -s "$tmp/out-main/raw/functions.tsv" ] || fail "no raw/instr.tsv or raw/functions.tsv"
else
  echo "valgrind not installed: instruction counts not checked" >&2
fi

# Counter work on the single-threaded program.
g=$(row "### quick" gcov) n=$(row "### quick" naive) e=$(row "### quick" edge) ea=$(row "### quick" edge-atomic)
[ "$(num "$g" 4)" = 1.000 ] && [ "$(num "$g" 6)" = 1.000 ] || fail "gcov vs gcov is not 1.000: '$g'"
[ "$(num "$n" 3)" -gt "$(num "$e" 3)" ] 2>/dev/null || fail "naive should have more static counters than edge: '$n' / '$e'"
[ "$(num "$n" 5)" -ge "$(num "$e" 5)" ] 2>/dev/null || fail "naive should count at least edge's increments: '$n' / '$e'"
[ "$(num "$e" 5)" -gt 0 ] 2>/dev/null || fail "edge counted no increments: '$e'"
[ "$(num "$e" 3)/$(num "$e" 5)" = "$(num "$ea" 3)/$(num "$ea" 5)" ] \
  || fail "edge and edge-atomic differ on a single-threaded run: '$e' / '$ea'"

# Path mode: its counter work is the path counts (the edge columns add
# path_dense_slots + path_hashed_entries and path_increments).
pr=$(row "### quick" path)
[ "$(num "$pr" 3)" -gt 0 ] 2>/dev/null && [ "$(num "$pr" 5)" -gt 0 ] 2>/dev/null \
  && [[ $pr == *path_increments=* ]] || fail "path row without path counter work: '$pr'"

# Threads: atomic is exact, on both programs.
t=$(trow threads edge-atomic)
[ "$(num "$t" 3)" = 2000000 ] && [ "$(num "$t" 4)" = 2000000 ] && [ "$(num "$t" 8)" = 0 ] \
  && [ "$(num "$t" 9)" = yes ] && [ "$(num "$t" 5)" = "$(num "$t" 6)" ] \
  || fail "edge-atomic should count 2000000 of 2000000 calls and every counter: '$t'"
t=$(trow threads-loop edge-atomic)
[ "$(num "$t" 8)" = 0 ] && [ "$(num "$t" 9)" = yes ] && [ "$(num "$t" 5)" = "$(num "$t" 6)" ] \
  || fail "edge-atomic should count every counter of threads-loop: '$t'"
r=$(num "$t" 11)
[[ $r =~ ^[0-9]+\.[0-9]+$ ]] || fail "threads-loop: edge-atomic has no time ratio to the racy edge build: '$t'"
grep -q '^\* quick: every edge and block count equals the naive profile.s: edge edge-atomic$' "$md" \
  || fail "no check of the edge profiles against naive"

# --- head to head with gcov --------------------------------------------------
# The report again on the smoke run's measurements with three rounds of
# known times for program quick: plain 50 us before each variant run, gcov
# 100 us each round, path 90, 110 and 95 us.  Path over gcov per round:
# 0.9, 1.1, 0.95 -- median 0.950, faster in 2 of 3; overheads over plain
# (medians): path 1.9 - 1 = 0.9, gcov 2 - 1 = 1, so 0.90 times gcov's.
# The bootstrap interval is a pair of medians of resamples: two of the
# three ratios, lo <= 0.950 <= hi.  The threads programs have no rounds
# left: "–".
cp -r "$tmp/out-main" "$tmp/out-h2h"
{
  printf 'program\tvariant\tbase\tround\tbase_us\tvariant_us\n'
  for rd in 1 2 3; do
    printf 'quick\tgcov\tplain\t%d\t50\t100\n' "$rd"
  done
  printf 'quick\tpath\tplain\t1\t50\t90\nquick\tpath\tplain\t2\t50\t110\nquick\tpath\tplain\t3\t50\t95\n'
} >"$tmp/out-h2h/raw/runs.tsv"
python3 "$rf/bench/lib/bench.py" report "$tmp/out-h2h/raw" "$tmp/out-h2h" 0 >/dev/null \
  || fail "report on three known rounds failed"
h=$(md=$tmp/out-h2h/results.md row "## Head to head with gcov" path)
[[ $h =~ ^\|\ path\ \|\ 0\.950\ \[(0\.900|0\.950|1\.100),\ (0\.900|0\.950|1\.100)\],\ 2/3,\ 0\.90×\ \|(\ –\ \|)*$ ]] \
  || fail "head-to-head row of path: '$h'"
lo=${BASH_REMATCH[1]:-9} hi=${BASH_REMATCH[2]:-0}
awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= 0.95 && 0.95 <= hi) }' \
  || fail "head-to-head interval [$lo, $hi] should hold the median 0.950"
grep -q '^## Head to head with gcov' "$md" \
  && fail "one round (the smoke run) should give no head-to-head section"

# --- random code layouts (--layout random, the default) ---------------------
# The smoke run relinked every variant of quick for its one timed round, in
# the layout bench.py chose; the threads programs keep their build's.
lay=$tmp/out-main/raw/layouts.tsv
for v in plain gcov naive edge edge-atomic path; do
  l=$(awk -F'\t' -v v="$v" '$1 == "quick" && $2 == v && $3 == 1' "$lay")
  pad=$(printf '%s' "$l" | cut -f4)
  [[ $pad =~ ^[0-9]+$ ]] && [ $((pad % 16)) = 0 ] && [ "$pad" -le 4080 ] \
    || fail "layouts.tsv: quick $v round 1 should have a pad, a multiple of 16 up to 4080: '$l'"
  [ "$(printf '%s' "$l" | cut -f5)" = quick.o ] || fail "layouts.tsv: quick $v should link quick.o: '$l'"
done
awk -F'\t' 'NR > 1 && $1 != "quick"' "$lay" | grep -q . && fail "the threads programs should keep their layout"
# The pad moves main (in .text.startup) by its size.
d=$tmp/work-main/quick/build/path
pad=$(awk -F'\t' '$1 == "quick" && $2 == "path" { print $4 }' "$lay")
m0=$(nm "$d/exe" 2>/dev/null | awk '$3 == "main" { print $1 }')
m1=$(nm "$d/exe.layout" 2>/dev/null | awk '$3 == "main" { print $1 }')
[ -n "$m0" ] && [ -n "$m1" ] && [ $((16#$m1 - 16#$m0)) = "$pad" ] \
  || fail "exe.layout's main should be $pad bytes after exe's: $m0 -> $m1"
grep -q '^Code layout: every timed round linked each variant of quick anew' "$md" \
  || fail "results.md should say the timed rounds ran in random layouts"
# bench.py layout: a function of seed and key; a permutation of the objects;
# the keys of 20 rounds give more than one order and more than one pad.
py=$rf/bench/lib/bench.py
a=$(python3 "$py" layout 7 bzip2/path/3 a.o b.o c.o d.o e.o)
[ "$a" = "$(python3 "$py" layout 7 bzip2/path/3 a.o b.o c.o d.o e.o)" ] || fail "bench.py layout should repeat for the same seed and key"
[ "$(printf '%s\n' "$a" | tail -n +2 | sort | paste -sd ' ')" = "a.o b.o c.o d.o e.o" ] \
  || fail "bench.py layout should print a permutation of the objects: $a"
orders=$(for r in $(seq 20); do python3 "$py" layout 7 "bzip2/path/$r" a.o b.o c.o d.o e.o | tail -n +2 | paste -sd ' '; done | sort -u | wc -l)
pads=$(for r in $(seq 20); do python3 "$py" layout 7 "bzip2/path/$r" a.o | head -n 1; done | sort -u | wc -l)
[ "$orders" -gt 1 ] && [ "$pads" -gt 1 ] || fail "bench.py layout should vary with the round: $orders orders, $pads pads"

# --- failure paths -----------------------------------------------------------
BALLARUS_BENCH_INJECT_MISMATCH=edge run mismatch --programs quick --variants plain,edge
[ "$rc" = 1 ] || fail "a differing output should exit 1, got $rc"
grep -q 'quick: variant edge: output stdout differs' "$tmp/mismatch.stderr" \
  || fail "the mismatch message should name program and variant: $(tail -n 2 "$tmp/mismatch.stderr")"

run usage --variants no-such-variant
[ "$rc" = 2 ] || fail "an unknown variant should exit 2, got $rc"
grep -q "unknown variant 'no-such-variant'" "$tmp/usage.stderr" || fail "no usage message: $(cat "$tmp/usage.stderr")"
run layout --layout sometimes
[ "$rc" = 2 ] || fail "an unknown --layout should exit 2, got $rc"
grep -q "layout must be random or fixed, got 'sometimes'" "$tmp/layout.stderr" || fail "no usage message: $(cat "$tmp/layout.stderr")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s); results: $md" >&2
  exit 1
fi
echo "PASS"
