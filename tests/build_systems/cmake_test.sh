#!/usr/bin/env bash
# cmake_test.sh — a CMake project (cmake_project/: a static library, a C and
# a C++ program, three CTest tests) built with the installed toolchain file
# and package:
#   * at -O0: ctest passes, one profile per object, each verifies, and the
#     package's report targets write an HTML report and an lcov tracefile
#     whose line counts equal gcov's for the same tests (gcc --coverage,
#     gcov --json-format);
#   * with INTERPROCEDURAL_OPTIMIZATION (-O3 -flto): CMake archives with
#     ballarus-gcc-ar / ballarus-gcc-ranlib, and the LTO build passes,
#     profiles and verifies, with gcov's line counts for its own LTO build;
#   * without the toolchain file (CMAKE_C_COMPILER=ballarus-gcc), CMake
#     finds the archiver helpers beside the compiler itself.

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/build_systems/common.sh"

src=$tmp/src
copy_project cmake_project "$src"
toolchain=$prefix/lib/cmake/Ballarus/ballarus-toolchain.cmake

# configure_build_test DIR CMAKE-ARGS...: configure, build, run ctest.
configure_build_test() {
  local dir=$1; shift
  check "configure $dir" cmake -S "$src" -B "$dir" "$@" || return 1
  check "build $dir" cmake --build "$dir" || return 1
  check "ctest $dir" ctest --test-dir "$dir" --output-on-failure
}

# same_counts WHAT TRACEFILE GCOV-BUILD-DIR: the tracefile's line counts of
# the project's sources equal gcov's from the .gcda files in the directory.
same_counts() {
  local -a gcdas=()
  mapfile -t gcdas < <(find "$3" -name '*.gcda' | sort)
  [ "${#gcdas[@]}" -eq 3 ] || fail "$1: ${#gcdas[@]} .gcda files, expected 3"
  python3 "$here/line_counts.py" lcov "$src" "$2" >"$tmp/ours.txt"
  python3 "$here/line_counts.py" gcov "$src" "${gcdas[@]}" >"$tmp/gcov.txt"
  local n
  n=$(wc -l <"$tmp/gcov.txt")
  [ "$n" -ge 20 ] || fail "$1: gcov lists only $n lines"
  diff -u "$tmp/gcov.txt" "$tmp/ours.txt" >"$tmp/diff.txt" \
    || { fail "$1: line counts differ from gcov's"; cat "$tmp/diff.txt" >&2; }
  echo "$1: $n lines, counts equal to gcov's"
}

# --- -O0 with the toolchain file, against gcov ---------------------------
if configure_build_test "$tmp/b" -DCMAKE_TOOLCHAIN_FILE="$toolchain"; then
  verify_profiles "$tmp/b" 3
  check "report target" cmake --build "$tmp/b" --target coverage-report
  [ -s "$tmp/b/coverage-report.info" ] || fail "no coverage-report.info"
  check "html report target" cmake --build "$tmp/b" --target coverage-html
  grep -q "shapes.c" "$tmp/b/coverage-html/index.html" \
    || fail "the html report target's index names no shapes.c"
  configure_build_test "$tmp/g" -DDEMO_WITH_BALLARUS=OFF \
    -DCMAKE_C_FLAGS=--coverage -DCMAKE_CXX_FLAGS=--coverage \
    && same_counts "-O0" "$tmp/b/coverage-report.info" "$tmp/g"
fi

# --- INTERPROCEDURAL_OPTIMIZATION ---------------------------------------
ipo=(-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON -DCMAKE_BUILD_TYPE=Release)
if configure_build_test "$tmp/lto" -DCMAKE_TOOLCHAIN_FILE="$toolchain" "${ipo[@]}"; then
  grep -q "^CMAKE_C_COMPILER_AR:FILEPATH=$prefix/bin/ballarus-gcc-ar$" \
    "$tmp/lto/CMakeCache.txt" || fail "LTO build: CMAKE_C_COMPILER_AR is not ballarus-gcc-ar"
  grep -q -- '-flto' "$tmp/lto/CMakeFiles/shapes.dir/flags.make" \
    || fail "LTO build: shapes is not compiled with -flto"
  verify_profiles "$tmp/lto" 3
  check "LTO report target" cmake --build "$tmp/lto" --target coverage-report
  configure_build_test "$tmp/glto" -DDEMO_WITH_BALLARUS=OFF "${ipo[@]}" \
    -DCMAKE_C_FLAGS=--coverage -DCMAKE_CXX_FLAGS=--coverage \
    && same_counts "LTO -O3" "$tmp/lto/coverage-report.info" "$tmp/glto"
fi

# --- the helpers found beside the compiler, without the toolchain file ----
if check "configure by compiler name" cmake -S "$src" -B "$tmp/named" \
    -DCMAKE_C_COMPILER="$prefix/bin/ballarus-gcc" \
    -DCMAKE_CXX_COMPILER="$prefix/bin/ballarus-g++" \
    -DCMAKE_PREFIX_PATH="$prefix" "${ipo[@]}"; then
  for v in C_COMPILER_AR:ar CXX_COMPILER_AR:ar C_COMPILER_RANLIB:ranlib; do
    grep -q "^CMAKE_${v%:*}:FILEPATH=$prefix/bin/ballarus-gcc-${v#*:}\$" \
      "$tmp/named/CMakeCache.txt" \
      || fail "CMAKE_${v%:*} is not ballarus-gcc-${v#*:}: $(grep "^CMAKE_${v%:*}:" "$tmp/named/CMakeCache.txt")"
  done
fi

finish
