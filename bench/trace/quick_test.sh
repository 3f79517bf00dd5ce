#!/usr/bin/env bash
# quick_test.sh — //bench:trace_quick_test, the smoke test of
# bench/trace/run.sh: with a prefix installed by //:install, `run.sh --quick`
# (the bundled quick program, one round) must build, run and report, and
# its counts must agree with independent ones:
#  * the naive trace's block words = the executed blocks of the mode=naive
#    profile (counters, not a trace);
#  * the kEnter events of both traces = the function executions of that
#    profile, and the naive trace's words are exactly its blocks plus 4 per
#    kEnter plus 3 per kEnd;
#  * mode=trace writes fewer witnesses than the naive trace, and more than
#    none; every timed configuration has a ratio with an interval;
#  * the trace build's full trace regenerates (`ballarus-reconstruct trace`)
#    to exactly the profile's executed blocks plus ENTRY and EXIT of every
#    function execution, so the witnesses counted are a complete trace.
set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/trace-quick
rm -rf "$tmp" && mkdir -p "$tmp"
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "FAIL: install" >&2; exit 1; }
rc=0
bash "$rf/bench/trace/run.sh" --quick --prefix "$tmp/prefix" --work "$tmp/work" --cache "$tmp/cache" \
  --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
if [ "$rc" != 0 ]; then
  tail -n 30 "$tmp/stderr" >&2
  echo "FAIL: bench/trace/run.sh --quick exited $rc" >&2
  exit 1
fi
cat "$tmp/stdout"
cmp -s "$tmp/stdout" "$tmp/out/results.md" || fail "stdout is not results.md"

# field TSV PROGRAM KEY COLUMN: COLUMN of the row whose first two fields are
# PROGRAM and KEY.
field() { awk -F'\t' -v k="$3" -v c="$4" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                                           $1 == "quick" && $2 == k { print $col[c] }' "$tmp/out/raw/$1.tsv"; }
blocks=$(awk -F'\t' '$1 == "quick" { print $2 }' "$tmp/out/raw/profile_counts.tsv")
read -r fn_execs < <("$tmp/prefix/bin/ballarus-reconstruct" show --json "$tmp/work/quick/count/naive.profile" \
  | python3 -c 'import json, sys; print(sum(f["execution_count"] for f in json.load(sys.stdin)["functions"]))')
naive_w=$(field trace_words quick naive witnesses)
full_w=$(field trace_words quick full witnesses)
[ -n "$blocks" ] && [ "$blocks" -gt 1000000 ] || fail "executed blocks: '$blocks'"
[ "$naive_w" = "$blocks" ] || fail "naive trace: $naive_w block words, the profile: $blocks blocks"
for t in full naive; do
  [ "$(field trace_words quick $t enters)" = "$fn_execs" ] \
    || fail "$t trace: $(field trace_words quick $t enters) kEnters, the profile: $fn_execs function executions"
done
words=$(field trace_words quick naive words)
ends=$(field trace_words quick naive ends)
exits=$(field trace_words quick naive exit_words)
# The naive build writes EXIT's index once per return: every function
# execution of the quick program returns.
[ "$exits" = "$fn_execs" ] || fail "naive trace: $exits EXIT words, the profile: $fn_execs function executions"
[ "$words" = $((blocks + exits + 4 * fn_execs + 3 * ends)) ] || fail "naive trace: $words words"
[ "$full_w" -gt 0 ] && [ "$full_w" -lt "$naive_w" ] || fail "mode=trace: $full_w witnesses, naive $naive_w"
run=$tmp/regen
mkdir -p "$run"
(cd "$run" && env BALLARUS_PROFILE="$run/p.profile" BALLARUS_TRACE=full BALLARUS_TRACE_FILE="$run/t.trace" \
  "$tmp/work/quick/build/trace/exe" >/dev/null) || fail "the trace build exited $?"
regen=$("$tmp/prefix/bin/ballarus-reconstruct" trace "$run/t.trace" --profile "$run/p.profile" --blocks --last 1 | head -n 1)
[[ $regen == "thread 1 (tid "*"): complete, $((blocks + 2 * fn_execs)) blocks" ]] \
  || fail "regenerated: '$regen', expected $blocks blocks + 2 x $fn_execs"
n='[0-9]+\.[0-9]+ \[[0-9]+\.[0-9]+–[0-9]+\.[0-9]+\]'
grep -Eq "^\| quick \| [0-9.]+ \| $n \| $n \| $n \| $n \|" "$tmp/stdout" \
  || fail "no time row with four intervals"
exit $((failures > 0))
