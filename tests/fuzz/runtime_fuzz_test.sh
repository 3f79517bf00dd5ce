#!/usr/bin/env bash
# runtime_fuzz_test.sh — //tests:runtime_fuzz_test: builds
# tests/fuzz/runtime_fuzzer.c with clang-14 and libFuzzer
# (-fsanitize=fuzzer,address,undefined; every sanitizer report fatal) from
# the runtime's own sources (runtime/*.c, hidden visibility as in
# libballarus_rt.a), then fuzzes the runtime's reading, validation, merging
# and replacing of an existing profile for a bounded time
# (BALLARUS_RT_FUZZ_SECONDS, default 30) from the CLI's corpus
# (tests/fuzz/corpus/) plus a profile of the fuzzer's own TUs, which it
# writes first.  Any crash, hang (10 s), leak, sanitizer report or broken
# invariant (runtime_fuzzer.c) fails the test; the input that caused it is
# kept in the test's outputs.
set -euo pipefail
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/rtfuzz
out=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp/outputs}
seconds=${BALLARUS_RT_FUZZ_SECONDS:-30}
rm -rf "$tmp"
mkdir -p "$tmp/obj" "$tmp/corpus" "$tmp/store" "$out"
command -v clang-14 >/dev/null || { echo "runtime_fuzz_test: clang-14 not installed (scripts/setup.sh)" >&2; exit 1; }

flags=(-std=c11 -O1 -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=all -fno-omit-frame-pointer -fvisibility=hidden
       -I"$rf")
for f in "$rf"/runtime/*.c "$rf"/tests/fuzz/runtime_fuzzer.c; do
  clang-14 "${flags[@]}" -c "$f" -o "$tmp/obj/$(basename "$f").o"
done
clang-14 -fsanitize=fuzzer,address,undefined "$tmp"/obj/*.o -lpthread \
  -o "$tmp/runtime_fuzzer"

cp "$rf"/tests/fuzz/corpus/* "$tmp/corpus/"
BALLARUS_PROFILE=$tmp/corpus/own-tus.profile RUNTIME_FUZZER_SEED=1 \
  "$tmp/runtime_fuzzer" >/dev/null 2>&1 || true
[ -s "$tmp/corpus/own-tus.profile" ] \
  || { echo "FAIL: the fuzzer did not write its own profile" >&2; exit 1; }
echo "runtime_fuzz_test: fuzzing for $seconds s" >&2
cd "$tmp"
status=0
BALLARUS_PROFILE=$tmp/store/p.bprof ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=print_stacktrace=1 \
  ./runtime_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$out/" -print_final_stats=1 corpus \
  > "$tmp/fuzz.log" 2>&1 || status=$?
tail -25 "$tmp/fuzz.log"
cp "$tmp/fuzz.log" "$out/"
if [ "$status" -ne 0 ]; then
  echo "FAIL: the fuzzer found a problem (exit $status); inputs in $out" >&2
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log")
[ -n "$runs" ] && [ "$runs" -gt 100 ] \
  || { echo "FAIL: only '${runs:-no}' inputs ran" >&2; exit 1; }
echo "runtime_fuzz_test: $runs inputs, no problem"
