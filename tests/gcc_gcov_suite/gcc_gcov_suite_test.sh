#!/usr/bin/env bash
# gcc_gcov_suite_test.sh — //tests:gcc_gcov_suite_test: GCC's own gcov test
# suite (gcc.misc-tests/gcov-*.c, g++.dg/gcov/*.C from Debian's gcc-12 source
# package) run with gcov and with the built ballarus plugin in modes naive,
# edge, path and edge,path; run_suite.py (beside this script) says what is
# checked.  The sources are fetched once with apt-get into
# ~/.cache/ballarus-gcc-testsuite (or $BALLARUS_GCC_TESTSUITE_CACHE, pass it
# with --test_env), which needs the network and root the first time; the
# build and run directory is the test's own temporary directory.
set -euo pipefail
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
work=${TEST_TMPDIR:-$(mktemp -d)}/gcov-suite
exec python3 "$rf/tests/gcc_gcov_suite/run_suite.py" \
  --plugin "$rf/plugin/ballarus.so" \
  --runtime "$rf/runtime/archive/libballarus_rt.a" \
  --reconstruct "$rf/reconstruct/ballarus-reconstruct" \
  --work "$work" --jobs 2
