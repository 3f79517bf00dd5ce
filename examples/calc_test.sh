#!/usr/bin/env bash
# calc_test.sh — the bundled example, end to end.
#
# 1. The reference build (//examples:calculator, no ballarus) prints exactly
#    calc/expected_stdout.txt and calc/expected_stderr.txt and exits 1
#    (the input has 4 deliberate errors).
# 2. Installed into a temporary prefix by //:install, ballarus-gcc builds the
#    same sources (-O0, so no inlining or tail-recursion elimination changes
#    how often a function is entered); the program's behaviour is unchanged,
#    the profile verifies, and `show --json` has the counts the input implies:
#      main 1, calc_run_line 22 (the quit line is the 22nd), calc_fib 177
#      (fib(10)), fact 15 (fact(10) + fact(5)), gcd 2, call 6 (builtin calls
#      incl. the malformed "fib(2"), the value printf 8, errors++ 4.
# 3. A second run merges into the same profile: runs 2, every count doubled.
# 4. At -O2 the program still behaves the same and its profile verifies.

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
src=$rf/examples/calc
tmp=${TEST_TMPDIR:-$(mktemp -d)}/calc
rm -rf "$tmp"
mkdir -p "$tmp"

# check_run NAME EXE: runs EXE on the input, compares with the expectations.
check_run() {
  local name=$1 exe=$2 rc=0
  (cd "$tmp" && "$exe" "$src/input.calc" >"$tmp/$name.out" 2>"$tmp/$name.err") || rc=$?
  [ "$rc" -eq 1 ] || fail "$name: exit status $rc, want 1"
  cmp -s "$tmp/$name.out" "$src/expected_stdout.txt" \
    || fail "$name: stdout differs: $(diff "$src/expected_stdout.txt" "$tmp/$name.out" | head -5)"
  cmp -s "$tmp/$name.err" "$src/expected_stderr.txt" \
    || fail "$name: stderr differs: $(diff "$src/expected_stderr.txt" "$tmp/$name.err" | head -5)"
}

# 1. reference
check_run reference "$rf/examples/calculator"

# 2. profiled
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "install failed" >&2; exit 1; }
bg=$tmp/prefix/bin/ballarus-gcc
recon=$tmp/prefix/bin/ballarus-reconstruct
mkdir -p "$tmp/build"
cp "$src/calc.c" "$src/calc.h" "$src/main.c" "$tmp/build/"
if ! (cd "$tmp/build" && "$bg" -O0 -Wall -c calc.c && "$bg" -O0 -Wall -c main.c &&
      "$bg" -o calc main.o calc.o); then
  echo "FAIL: building the example with ballarus-gcc" >&2
  exit 1
fi
profile=$tmp/calc.profile
export BALLARUS_PROFILE=$profile
check_run profiled "$tmp/build/calc"
[ -s "$profile" ] || { echo "FAIL: no profile at $profile" >&2; exit 1; }
"$recon" verify "$profile" >"$tmp/verify.txt" 2>&1 \
  || fail "verify: $(head -5 "$tmp/verify.txt")"

# check_counts FACTOR: the counts above times FACTOR, and runs == FACTOR.
check_counts() {
  local factor=$1
  "$recon" show --json "$profile" >"$tmp/show.json" 2>"$tmp/show.err" \
    || { fail "show --json: $(head -3 "$tmp/show.err")"; return; }
  python3 - "$tmp/show.json" "$tmp/build/main.c" "$factor" <<'EOF' || fail "counts (x$factor) wrong"
import json, os, sys
path, main_c, factor = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(path))
bad = []
if doc.get("runs") != factor:
    bad.append("runs = %r, want %d" % (doc.get("runs"), factor))
funcs = {f["name"]: f for f in doc["functions"]}
want = {"main": 1, "calc_run_line": 22, "calc_fib": 177, "fact": 15,
        "gcd": 2, "call": 6}
for name, n in sorted(want.items()):
    f = funcs.get(name)
    if f is None:
        bad.append("function %s missing" % name)
    elif f["execution_count"] != n * factor:
        bad.append("%s: execution_count %r, want %d"
                   % (name, f["execution_count"], n * factor))
# Line counts in main.c, found by their text so edits above don't matter.
lines = open(main_c).read().split("\n")
def lineno(text):
    hits = [i + 1 for i, l in enumerate(lines) if text in l]
    assert len(hits) == 1, text
    return hits[0]
counts = {}
for f in doc["functions"]:
    for lc in f.get("line_counts", []):
        if os.path.basename(lc["file"]) == "main.c":
            counts[lc["line"]] = counts.get(lc["line"], 0) + lc["count"]
for text, n in (('printf("%ld\\n", value);', 8), ("errors++;", 4)):
    got = counts.get(lineno(text))
    if got != n * factor:
        bad.append("main.c:%d (%s): count %r, want %d"
                   % (lineno(text), text, got, n * factor))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
check_counts 1

# 3. a second run merges into the same profile
check_run profiled-again "$tmp/build/calc"
check_counts 2
"$recon" verify "$profile" >"$tmp/verify2.txt" 2>&1 \
  || fail "verify after merge: $(head -5 "$tmp/verify2.txt")"

# 4. optimised build
if (cd "$tmp/build" && "$bg" -O2 -o calc-o2 main.c calc.c); then
  export BALLARUS_PROFILE=$tmp/calc-o2.profile
  check_run profiled-O2 "$tmp/build/calc-o2"
  "$recon" verify "$BALLARUS_PROFILE" >"$tmp/verify3.txt" 2>&1 \
    || fail "verify of the -O2 profile: $(head -5 "$tmp/verify3.txt")"
else
  fail "building the example at -O2 with ballarus-gcc"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "example checks passed"
