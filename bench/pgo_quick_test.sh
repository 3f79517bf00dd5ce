#!/usr/bin/env bash
# pgo_quick_test.sh — //bench:pgo_quick_test, the smoke test of bench/pgo.sh:
# installs the build into a temporary prefix (//:install), runs
# `bench/pgo.sh --quick` (the bundled quick program, one round) and checks
# its report: a speedup for each variant (pgo-path too), the -fprofile-use
# builds from
# gcov's and from ballarus' profile identical (1/1, diagnostics the same),
# and the raw files; then that an unknown program is a usage error (exit 2).
set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/pgo-quick
rm -rf "$tmp" && mkdir -p "$tmp"
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "FAIL: install" >&2; exit 1; }

rc=0
bash "$rf/bench/pgo.sh" --quick --prefix "$tmp/prefix" --work "$tmp/work" \
  --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
if [ "$rc" != 0 ]; then
  tail -n 30 "$tmp/stderr" >&2
  echo "FAIL: bench/pgo.sh --quick exited $rc" >&2
  exit 1
fi
md=$tmp/out/pgo.md
[ -s "$md" ] || { echo "FAIL: no $md" >&2; exit 1; }
cmp -s "$md" "$tmp/stdout" || fail "stdout is not pgo.md"
for f in machine.txt raw/pgo-runs.tsv raw/pgo-objects.tsv; do
  [ -s "$tmp/out/$f" ] || fail "missing $f"
done
row=$(grep '^| quick |' "$md")
n='[0-9]+\.[0-9]+ \[[0-9]+\.[0-9]+–[0-9]+\.[0-9]+\]'
[[ $row =~ ^\|\ quick\ \|\ [0-9]+\.[0-9]+\ \|\ $n\ \|\ $n\ \|\ $n\ \|\ $n\ \|\ 1/1\ \|\ same\ \|\ [01]/1\ \|\ [01]/1\ \|$ ]] \
  || fail "quick row: '$row'"
[ "$(grep -c $'^quick\t' "$tmp/out/raw/pgo-runs.tsv")" = 5 ] || fail "expected 5 timed runs"

rc=0
bash "$rf/bench/pgo.sh" --quick --programs no-such --prefix "$tmp/prefix" \
  --work "$tmp/work2" --out "$tmp/out2" >/dev/null 2>"$tmp/usage.stderr" || rc=$?
[ "$rc" = 2 ] || fail "an unknown program should exit 2, got $rc"
grep -q "unknown program 'no-such'" "$tmp/usage.stderr" || fail "no usage message: $(cat "$tmp/usage.stderr")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s); results: $md" >&2
  exit 1
fi
echo "PASS"
