#!/usr/bin/env bash
# fuzz_test.sh — //tests:fuzz_test: builds tests/fuzz/profile_fuzzer.cc
# with clang-14 and libFuzzer (-fsanitize=fuzzer,address,undefined; every
# sanitizer report fatal) from the sources of core/, runtime/profile_*.c,
# runtime/trace_read.c and reconstruct/ (all but main.cc), then fuzzes for
# a bounded time (BALLARUS_FUZZ_SECONDS, default 60) from the committed corpus
# (tests/fuzz/corpus/: naive, edge,path and hashed-path profiles, COMDAT
# copies, shared libraries, setjmp and fork re-entries, an empty and a
# truncated file; v3-* with compressed metadata as written now, v2-* the
# same profiles with version 2 metadata as older builds wrote them
# (meta_v3_to_v2.py), named-tests a profile with named runs (profile
# version 3), combined-per-test.bcomb a combined profile (`combine`), the
# rest profiles of version 1, which the reader refuses at its version
# field).  Every input is also read as a combined profile.  Any crash, hang (10 s), leak or sanitizer report fails
# the test; the input that caused it is kept in the test's outputs
# (bazel-testlogs/tests/fuzz_test/test.outputs/).
set -euo pipefail
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/fuzz
out=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp/outputs}
seconds=${BALLARUS_FUZZ_SECONDS:-60}
rm -rf "$tmp"
mkdir -p "$tmp/obj" "$tmp/corpus" "$out"
command -v clang++-14 >/dev/null || { echo "fuzz_test: clang++-14 not installed (scripts/setup.sh)" >&2; exit 1; }

flags=(-O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer -I"$rf")
sources=()
for f in "$rf"/core/*.cc "$rf"/reconstruct/*.cc "$rf"/runtime/profile_*.c "$rf"/runtime/safe_file.c \
         "$rf"/runtime/trace_read.c \
         "$rf"/tests/fuzz/profile_fuzzer.cc; do
  case "$f" in
    *_test.cc|*/test_*|*/main.cc) continue ;;
  esac
  sources+=("$f")
done
echo "fuzz_test: compiling ${#sources[@]} files with clang-14" >&2
printf '%s\n' "${sources[@]}" | xargs -P2 -I{} sh -c '
  f={}; o="$0/$(basename "$f").o"
  case "$f" in
    *.c) exec clang-14 -std=c11 '"${flags[*]}"' -c "$f" -o "$o" ;;
    *) exec clang++-14 -std=c++17 '"${flags[*]}"' -c "$f" -o "$o" ;;
  esac' "$tmp/obj"
clang++-14 -fsanitize=fuzzer,address,undefined "$tmp"/obj/*.o \
  -lfmt -lgmpxx -lgmp -lz -ldw -lelf -o "$tmp/profile_fuzzer"

cp "$rf"/tests/fuzz/corpus/* "$tmp/corpus/"
echo "fuzz_test: fuzzing for $seconds s" >&2
cd "$tmp"
status=0
TMPDIR=$tmp ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ./profile_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
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
echo "fuzz_test: $runs inputs, no problem"
