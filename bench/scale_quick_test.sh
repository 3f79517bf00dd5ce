#!/usr/bin/env bash
# scale_quick_test.sh — //bench:scale_quick_test, the smoke test of
# bench/scale.sh: with a prefix installed by //:install, `scale.sh --quick`
# (1000 generated functions) must build, run and report both commands, and
# the sizes it reports must be the generator's: 1000 functions + 4 drivers
# + main, each generated function 10 blocks (ENTRY, EXIT and 8 basic blocks
# at -O0: bench/scale/gen_program.py); with --instr, each command's
# instruction count (valgrind) is in the table too.
set -uo pipefail
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/scale-quick
rm -rf "$tmp"
mkdir -p "$tmp"
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "FAIL: install" >&2; exit 1; }
bash "$rf/bench/scale.sh" --quick --instr --prefix "$tmp/prefix" --work "$tmp/work" \
  >"$tmp/out.md" 2>"$tmp/err.txt" \
  || { cat "$tmp/err.txt" >&2; echo "FAIL: scale.sh --quick exited $?" >&2; exit 1; }
cat "$tmp/out.md"
failures=0
grep -q '^| generated, 1000 functions | 1005 |' "$tmp/out.md" \
  || { echo "FAIL: not 1005 functions" >&2; failures=$((failures + 1)); }
# Blocks: 1000 x 10, plus the drivers' (a call ends a block) and main's.
blocks=$(sed -n 's/^| generated, 1000 functions | 1005 | \([0-9]*\) |.*/\1/p' "$tmp/out.md")
[ -n "$blocks" ] && [ "$blocks" -gt 10000 ] && [ "$blocks" -lt 13000 ] \
  || { echo "FAIL: $blocks blocks" >&2; failures=$((failures + 1)); }
for cmd in 'show --json' html; do
  grep -Eq "^\| \`$cmd\`.* \| [0-9.]+ s \| [0-9.]+ s \| [0-9]+ MiB \| [0-9]+\.[0-9][0-9] G \|" "$tmp/out.md" \
    || { echo "FAIL: no timing or instruction count for $cmd" >&2; failures=$((failures + 1)); }
done
[ -f "$tmp/work/html/index.html" ] || { echo "FAIL: no HTML report" >&2; failures=$((failures + 1)); }
exit $((failures > 0))
