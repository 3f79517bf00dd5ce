#!/usr/bin/env bash
# ctest_named_test.sh — named runs with CTest: ctest_project/ (six tests:
# one of two processes, one with an ENVIRONMENT of its own, one in a
# subdirectory) built with the installed toolchain file, its tests named by
# ballarus_name_tests():
#   * oracle: the same build, tests unnamed (NAME_TESTS=OFF), each test run
#     alone into profiles of its own, and the whole suite run unnamed;
#   * the tests named (reconfigured with NAME_TESTS=ON, objects unchanged):
#     every test's ENVIRONMENT holds BALLARUS_TEST=<its name> after its own
#     entries; `ctest -j2` passes; the lines each named test executed equal
#     the lines of that test run alone, and each profile's sum is byte for
#     byte the unnamed suite's profile;
#   * ballarus_name_tests(DIRECTORY extra) from the top directory: it names
#     extra/'s test with CMake 3.28, and stops with advice before.

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/named/common.sh"

src=$tmp/src b=$tmp/b
copy_project ctest_project "$src"
tests=(upper reverse vowels from_env two_processes extra_digits)

configure() {  # configure NAME_TESTS
  check "configure NAME_TESTS=$1" cmake -S "$src" -B "$b" -DNAME_TESTS="$1" \
    -DCMAKE_TOOLCHAIN_FILE="$prefix/lib/cmake/Ballarus/ballarus-toolchain.cmake" \
    && check "build" cmake --build "$b"
}
objects() { find "$b" -name '*.o' | sort | xargs sha256sum; }

configure OFF || { finish; exit 1; }
objects >"$tmp/objects.before"
for t in "${tests[@]}"; do
  check "ctest -R $t" ctest --test-dir "$b" -R "^$t\$" --output-on-failure
  take_profiles "$b" "$tmp/oracle/$t"
done
check "ctest unnamed" ctest --test-dir "$b" -j2 --output-on-failure
take_profiles "$b" "$tmp/today"

configure ON || { finish; exit 1; }
objects | cmp -s - "$tmp/objects.before" || fail "naming the tests rebuilt objects"
ctest --test-dir "$b" --show-only=json-v1 >"$tmp/tests.json"
python3 - "$tmp/tests.json" "${tests[@]}" <<'PY' || fail "ENVIRONMENT of the named tests"
import json, sys
doc = json.load(open(sys.argv[1]))
env = {}
for t in doc["tests"]:
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env[t["name"]] = p["value"]
want = {t: ["BALLARUS_TEST=" + t] for t in sys.argv[2:]}
want["from_env"] = ["WORDTOOL_MODE=digits", "BALLARUS_TEST=from_env"]
if env != want:
    sys.exit("ENVIRONMENT %r, expected %r" % (env, want))
PY
check "ctest named" ctest --test-dir "$b" -j2 --output-on-failure
take_profiles "$b" "$tmp/named"
for p in $(profiles_in "$tmp/named"); do
  check "verify $p" "$recon" verify "$p"
done

# ballarus_name_tests(DIRECTORY extra) from the top directory: CMake 3.28
# names extra/'s test so; an older CMake stops with the advice to call it
# in that directory.
cmake_version=$(cmake --version | sed -n '1s/.* //p')
if cmake -S "$src" -B "$tmp/top" -DNAME_EXTRA_FROM_TOP=ON \
    -DCMAKE_TOOLCHAIN_FILE="$prefix/lib/cmake/Ballarus/ballarus-toolchain.cmake" \
    >"$tmp/top.log" 2>&1; then
  printf '3.28\n%s\n' "$cmake_version" | sort -V -C \
    || fail "DIRECTORY extra was accepted by CMake $cmake_version"
  ctest --test-dir "$tmp/top" --show-only=json-v1 >"$tmp/top.json"
  grep -q 'BALLARUS_TEST=extra_digits' "$tmp/top.json" \
    || fail "DIRECTORY extra did not name extra_digits"
else
  # (CMake wraps the message's lines.)
  tr -s ' \n' ' ' <"$tmp/top.log" \
    | grep -q "which needs CMake 3.28; call ballarus_name_tests() in that directory" \
    || fail "DIRECTORY extra failed without the CMake 3.28 advice: $(tail -n 5 "$tmp/top.log")"
fi

same_line_sets "$tmp/named" "$tmp/oracle" "${tests[@]}"
same_sum "$tmp/named" "$tmp/today" bytes
finish
