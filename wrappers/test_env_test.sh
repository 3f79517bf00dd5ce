#!/usr/bin/env bash
# test_env_test.sh — ballarus-test-env: the name it gives a test (its last
# argument, without a leading "$srcdir/" or "./"), the command it runs
# (the test itself, or the COMMAND before it), the test's own arguments
# and environment kept, and its exit status returned.  Each fake test
# prints BALLARUS_TEST, $0 and its arguments.

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

runfiles=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
env_w=$runfiles/wrappers/ballarus-test-env
tmp=${TEST_TMPDIR:-$(mktemp -d)}/te
rm -rf "$tmp"
mkdir -p "$tmp/build" "$tmp/src/sub"

fake='#!/bin/sh
printf "name=%s argv0=%s args=%s other=%s\n" "${BALLARUS_TEST-unset}" "$0" "$*" "${OTHER-}"
exit "${RC:-0}"'
for t in build/t1 src/sub/t2 build/t3.sh; do
  printf '%s\n' "$fake" >"$tmp/$t"
  chmod 0755 "$tmp/$t"
done

# expect WHAT WANT-OUTPUT WANT-STATUS ENV-ASSIGNMENTS... -- ARGS...: runs
# the wrapper in $tmp/build with ARGS under `env ENV-ASSIGNMENTS...`.
expect() {
  local what=$1 want=$2 want_rc=$3; shift 3
  local -a envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local got rc
  got=$(cd "$tmp/build" && env -u srcdir -u BALLARUS_TEST \
    "${envs[@]+"${envs[@]}"}" "$env_w" "$@" 2>&1)
  rc=$?
  [ "$got" = "$want" ] || fail "$what: printed '$got', expected '$want'"
  [ "$rc" = "$want_rc" ] || fail "$what: exit status $rc, expected $want_rc"
}

# automake's parallel harness: $(LOG_COMPILER) ./NAME, srcdir exported.
expect "./t1" "name=t1 argv0=./t1 args= other=" 0 srcdir=. -- ./t1
# A VPATH build: $(srcdir)/NAME, the name keeps its subdirectory.
expect "srcdir/sub/t2" "name=sub/t2 argv0=../src/sub/t2 args= other=" 0 \
  srcdir=../src -- ../src/sub/t2
# A name given already is replaced; the test's other variables are kept.
expect "replaced name" "name=t1 argv0=./t1 args= other=kept" 0 \
  BALLARUS_TEST=outer OTHER=kept -- ./t1
# SH_LOG_COMPILER='ballarus-test-env /bin/sh' with AM_LOG_FLAGS: the test
# is the last argument, the command runs it.
expect "COMMAND TEST" "name=t3.sh argv0=./t3.sh args= other=" 0 \
  srcdir=. -- /bin/sh -e ./t3.sh
# No srcdir: only "./" is dropped; a path elsewhere stays whole.
expect "no srcdir" "name=../src/sub/t2 argv0=../src/sub/t2 args= other=" 0 \
  -- ../src/sub/t2
# The test's exit status (77: skipped, 99: hard error) is the wrapper's.
expect "status 77" "name=t1 argv0=./t1 args= other=" 77 RC=77 -- ./t1
expect "status 99" "name=t1 argv0=./t1 args= other=" 99 RC=99 -- ./t1
# Without a test: usage, status 2.
expect "no test" "usage: ballarus-test-env [COMMAND...] TEST" 2 --
"$env_w" --help | grep -q 'make check LOG_COMPILER=ballarus-test-env' \
  || fail "--help does not show the make check recipe"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo PASS
