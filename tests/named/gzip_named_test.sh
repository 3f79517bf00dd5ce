#!/usr/bin/env bash
# gzip_named_test.sh — named runs with automake: gzip 1.12 (Debian's orig
# tarball, cached in the user's ~/.cache/ballarus-src/src, where
# scripts/new_user_check.sh fetches it) configured with CC=ballarus-gcc,
# its `make check` (26 tests, automake's parallel harness) run three ways
# on the same build:
#   * each test alone, unnamed (make check TESTS=T), into profiles of its
#     own: the oracle;
#   * the whole suite unnamed: today's profiles;
#   * the whole suite with `make check LOG_COMPILER=ballarus-test-env`,
#     nothing else changed: every test named by its entry in TESTS.
# The lines each named test executed must equal the lines of that test run
# alone (of one of up to 21 runs alone for a test whose lines vary between
# runs: pipes read in chunks of varying size, two-files' random bytes; that
# one is also run alone and named, where its named lines must be the sum's).
# Every profile's sum, its named section dropped, must have today's runs
# and executed lines (the sum holds check-local's unnamed processes too);
# not today's counts byte for byte, as two unnamed runs of gzip's suite
# already differ in a few counts.  ctest_named_test checks the bytes on a
# suite that repeats exactly.  Several minutes: list-big compresses a
# 4 GiB sparse file in each of the three runs.

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/named/common.sh"

die() { echo "gzip_named_test: $*" >&2; exit 1; }
# Bazel points HOME at the test's temporary directory: the user's own.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
cache=${home:-$HOME}/.cache/ballarus-src
tarball=$(compgen -G "$cache/src/gzip_*.orig.tar.*" | grep -v '\.asc$' | head -n 1)
[ -n "$tarball" ] || die "no gzip orig tarball in $cache/src; scripts/new_user_check.sh fetches it there (apt-get source --download-only gzip)"

g=$tmp/gzip
mkdir -p "$g"
tar -xf "$tarball" -C "$g" --strip-components=1 || die "cannot unpack $tarball"
export PATH=$prefix/bin:$PATH
check "configure" sh -c "cd '$g' && ./configure CC=ballarus-gcc" || { finish; exit 1; }
check "make" make -C "$g" -j2 || { finish; exit 1; }
[ -z "$(profiles_in "$g")" ] || fail "the build itself left profiles"
# make check's check-local (top directory, after the 26 tests) compresses
# gzip.doc with the new gzip when gzip.doc.gz is missing: made now, so the
# unnamed and named suites do the same work.  check-local's processes are
# not tests: unnamed, counted in the sum only.
check "gzip.doc.gz" make -C "$g" gzip.doc.gz
take_profiles "$g" "$tmp/doc"

mapfile -t tests < <(sed -n '/^TESTS =/,/^$/{s/\\//;s/^TESTS =//;p}' "$g/tests/Makefile.am" | xargs -n1)
[ "${#tests[@]}" -eq 26 ] || fail "${#tests[@]} tests in gzip's tests/Makefile.am, expected 26"

# suite WHAT MAKE-ARGS...: make check (all 26 pass), its profiles moved to
# $tmp/WHAT.
suite() {
  local what=$1; shift
  check "make check ($what)" make -C "$g" -j2 check "$@" || return 1
  grep -q '^# PASS: *26$' "$g/tests/test-suite.log" \
    || fail "$what: not 26 tests passed: $(grep '^# ' "$g/tests/test-suite.log" | tr '\n' ' ')"
  take_profiles "$g" "$tmp/$what"
}

start=$(date +%s)
for t in "${tests[@]}"; do
  check "make check TESTS=$t" make -C "$g/tests" check TESTS="$t"
  take_profiles "$g" "$tmp/oracle/$t"
done
suite today
suite named LOG_COMPILER=ballarus-test-env
echo "make check: 26 tests alone, the suite unnamed and named in $(($(date +%s) - start)) s"

# run_alone TEST DIR: TEST alone again, unnamed, its profiles into DIR
# (same_line_sets: a test whose lines vary between runs).
run_alone() {
  check "make check TESTS=$1" make -C "$g/tests" check TESTS="$1"
  take_profiles "$g" "$2"
}
same_line_sets "$tmp/named" "$tmp/oracle" "${tests[@]}"
# two-files compresses 5000 bytes of /dev/urandom: whether deflate's match
# search finds a match differs from run to run.  Alone and named, every
# process is the test's: its named lines must be that run's sum's.
mapfile -t random_tests < <(cd "$g/tests" && grep -l /dev/urandom "${tests[@]}")
for t in "${random_tests[@]}"; do
  check "make check TESTS=$t (named)" \
    make -C "$g/tests" check TESTS="$t" LOG_COMPILER=ballarus-test-env
  take_profiles "$g" "$tmp/alone_named/$t"
  named_is_sum "$tmp/alone_named/$t" "$t"
done
same_sum "$tmp/named" "$tmp/today" lines
finish
