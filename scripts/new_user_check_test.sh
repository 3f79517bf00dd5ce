#!/usr/bin/env bash
# new_user_check_test.sh — //:new_user_check_test, tagged manual: installs
# this build into a temporary prefix (//:install) and runs
# `scripts/new_user_check.sh --quick` with it (expat built plain, with gcov
# and with ballarus; a few minutes).  The sources are cached in the user's
# ~/.cache/ballarus-src, fetched there the first time (network).
set -uo pipefail

rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# Bazel points HOME at the test's temporary directory: the user's own.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log" >&2
  exit 1
}
exec bash "$rf/scripts/new_user_check.sh" --quick --prefix "$tmp/prefix" \
  --work "$tmp/work" --cache "${home:-$HOME}/.cache/ballarus-src"
