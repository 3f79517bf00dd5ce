#!/usr/bin/env bash
# meson_test.sh — `CC=ballarus-gcc CXX=ballarus-g++ meson setup` on
# meson_project/ (cmake_project's sources):
#   * meson test passes, and leaves one profile per object (3), each
#     verifying; a second meson test adds to them (no new files);
#   * with Meson's own coverage on (-Db_coverage=true: gcc --coverage as
#     well), the tests pass, the line counts of ballarus' profiles equal
#     gcov's from the same processes, and Meson's coverage target still
#     writes its report from gcov's data.

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/build_systems/common.sh"

command -v meson >/dev/null || { echo "meson is not installed" >&2; exit 1; }
export CC=$prefix/bin/ballarus-gcc CXX=$prefix/bin/ballarus-g++
src=$tmp/src
copy_project cmake_project "$src"
cp "$here/meson_project/meson.build" "$src/"

# object_profiles DIR: the profiles of the project's objects (Meson puts
# objects in TARGET.p/; meson-private/ holds its compiler sanity checks').
object_profiles() { find "$1" -path '*.p/*' -name '*.bprof' | sort; }

cd "$src" || exit 1
if check "meson setup" meson setup build && check "meson test" meson test -C build; then
  verify_profiles "$src/build/area.p" 1
  verify_profiles "$src/build/tally.p" 1
  verify_profiles "$src/build/libshapes.a.p" 1
  object_profiles build >"$tmp/first.txt"
  "$recon" show $(cat "$tmp/first.txt") >"$tmp/show1.txt" 2>&1
  check "meson test again" meson test -C build
  object_profiles build >"$tmp/second.txt"
  cmp -s "$tmp/first.txt" "$tmp/second.txt" || fail "a second meson test changed the profile files"
  [ "$(find build -name '*.bprof' -newer "$tmp/first.txt" ! -path '*.p/*' | wc -l)" -eq 0 ] \
    || fail "meson test wrote profiles outside the objects' directories"
  "$recon" show $(cat "$tmp/second.txt") >"$tmp/show2.txt" 2>&1
  cmp -s "$tmp/show1.txt" "$tmp/show2.txt" && fail "a second meson test did not add to the profiles"
fi

if check "meson setup -Db_coverage=true" meson setup -Db_coverage=true cov &&
   check "meson test, coverage" meson test -C cov; then
  [ "$(object_profiles cov | wc -l)" -eq 3 ] || fail "coverage build: not 3 profiles"
  mapfile -t gcdas < <(find cov -name '*.gcda' | sort)
  [ "${#gcdas[@]}" -eq 3 ] || fail "coverage build: ${#gcdas[@]} .gcda files, expected 3"
  check "lcov of the coverage build" "$recon" lcov -o "$tmp/cov.info" $(object_profiles cov)
  python3 "$here/line_counts.py" lcov "$src" "$tmp/cov.info" >"$tmp/ours.txt"
  python3 "$here/line_counts.py" gcov "$src" "${gcdas[@]/#/$src/}" >"$tmp/gcov.txt"
  n=$(wc -l <"$tmp/gcov.txt")
  [ "$n" -ge 20 ] || fail "gcov lists only $n lines"
  diff -u "$tmp/gcov.txt" "$tmp/ours.txt" || fail "line counts differ from gcov's"
  echo "coverage build: $n lines, counts equal to gcov's"
  if command -v gcovr >/dev/null; then
    check "ninja coverage-text" ninja -C cov coverage-text
    grep -q "shapes.c" cov/meson-logs/coverage.txt || fail "Meson's coverage report lacks shapes.c"
  fi
fi

finish
