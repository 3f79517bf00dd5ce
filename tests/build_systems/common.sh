# common.sh — sourced by the build-system tests: failure counting, the
# runfiles, a scratch directory, and ballarus installed by //:install into
# $prefix.

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: runs COMMAND, output to $tmp/log; failing
# is a test failure that shows the log.
check() {
  local what=$1; shift
  "$@" >"$tmp/log" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$what: $* exited $rc"
    tail -n 40 "$tmp/log" >&2
    return 1
  fi
}
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
  fi
  echo PASS
}

runfiles=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
[ -d "$runfiles" ] || { echo "no runfiles at $runfiles" >&2; exit 1; }
here=$runfiles/tests/build_systems
tmp=${TEST_TMPDIR:-$(mktemp -d)}/bs
rm -rf "$tmp"
mkdir -p "$tmp"

prefix=$tmp/prefix
"$runfiles/install" "$prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "install into $prefix failed" >&2; exit 1; }
recon=$prefix/bin/ballarus-reconstruct

# copy_project NAME DEST: the project's files, copied (not the runfiles'
# symbolic links, so reports name sources under DEST).
copy_project() {
  rm -rf "$2"
  cp -rL "$here/$1" "$2"
}

# verify_profiles DIR WANT: DIR holds WANT profiles, each verifying.
verify_profiles() {
  local -a found=()
  mapfile -t found < <(find "$1" -name '*.bprof' | sort)
  [ "${#found[@]}" -eq "$2" ] \
    || fail "$1: ${#found[@]} profiles, expected $2: ${found[*]}"
  local p
  for p in "${found[@]}"; do
    check "verify $p" "$recon" verify "$p"
  done
}
