#!/usr/bin/env bash
# deb_check.sh — checks the Debian package scripts/build_deb.sh builds.
#
#   bash tests/package/deb_check.sh [--install [--bazel]] DEB
#
# Without options (any user): the control fields, and the files the package
# holds with their modes and links (dpkg-deb -c, dpkg-deb -x).  With
# --install (root; ballarus must not be installed yet): dpkg -i, then
# `gcc -fplugin=ballarus ... -lballarus_rt` and ballarus-gcc on count.c
# (its hand-derived line counts), the manual pages through man(1), and with
# --bazel `tools/bazel_coverage/check.sh --installed` (bazel coverage with
# the installed package against gcov's); finally dpkg -r, after which no
# file of the package is left.  Exit status 0 when every check passes.
set -euo pipefail
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh"

install=0 bazel=0
while [ $# -gt 1 ]; do
  case "$1" in
    --install) install=1 ;;
    --bazel) bazel=1 ;;
    *) fail "unknown option: $1" ;;
  esac
  shift
done
[ $# -eq 1 ] || fail "usage: deb_check.sh [--install [--bazel]] DEB"
deb=$(realpath -- "$1")
[ -f "$deb" ] || fail "no such file: $deb"

T=$(mktemp -d)
trap 'rm -rf -- "$T"' EXIT

# --- control fields -------------------------------------------------------
[ "$(dpkg-deb -f "$deb" Package)" = ballarus ] || fail "Package is not ballarus"
[ "$(dpkg-deb -f "$deb" Architecture)" = amd64 ] || fail "Architecture is not amd64"
dpkg-deb -f "$deb" Depends | grep -q 'gcc-12' || fail "Depends lacks gcc-12"
dpkg-deb -f "$deb" Depends | grep -q 'libfmt' || fail "Depends lacks the shared libraries (libfmt)"

# --- contents: dpkg-deb -c lines are "MODE OWNER SIZE DATE TIME ./PATH" ----
dpkg-deb -c "$deb" >"$T/list"
dpkg-deb -x "$deb" "$T/x"
# has MODE PATH: the package holds PATH with MODE.
has() {
  awk -v m="$1" -v p="./${2#/}" '$1 == m && $6 == p { f = 1 } END { exit !f }' "$T/list" \
    || fail "not in the package as $1: $2"
}
# links PATH TARGET: PATH is a symbolic link that resolves to TARGET.
links() {
  has lrwxrwxrwx "$1"
  [ "$(realpath -m -- "$T/x$1")" = "$T/x$2" ] || fail "$1 does not resolve to $2"
}
plugin_dir=$(realpath -m "$(gcc -print-file-name=plugin)")
lib_dir=$(realpath -m "$(gcc -print-file-name=)")
has -rwxr-xr-x /usr/bin/ballarus-gcc
links /usr/bin/ballarus-g++ /usr/bin/ballarus-gcc
has -rwxr-xr-x /usr/bin/ballarus-gcc-ar
links /usr/bin/ballarus-gcc-ranlib /usr/bin/ballarus-gcc-ar
has -rwxr-xr-x /usr/bin/ballarus-test-env
has -rw-r--r-- /usr/lib/cmake/Ballarus/BallarusConfig.cmake
has -rwxr-xr-x /usr/bin/ballarus-reconstruct
has -rw-r--r-- /usr/lib/ballarus/ballarus.so
has -rw-r--r-- /usr/lib/ballarus/libballarus_rt.a
has -rw-r--r-- /usr/include/ballarus/ballarus.h
has -rw-r--r-- /usr/share/man/man1/ballarus-gcc.1.gz
has -rw-r--r-- /usr/share/man/man1/ballarus-reconstruct.1.gz
links '/usr/share/man/man1/ballarus-g++.1.gz' /usr/share/man/man1/ballarus-gcc.1.gz
has -rwxr-xr-x /usr/share/ballarus/bazel/collect_cc_coverage.sh
has -rwxr-xr-x /usr/share/ballarus/bazel/run_test.sh
has -rw-r--r-- /usr/share/doc/ballarus/README.md.gz
has -rw-r--r-- /usr/share/doc/ballarus/changelog.gz
has -rw-r--r-- /usr/share/doc/ballarus/copyright
links "$plugin_dir/ballarus.so" /usr/lib/ballarus/ballarus.so
links "$lib_dir/libballarus_rt.a" /usr/lib/ballarus/libballarus_rt.a
owners=$(awk '$2 != "root/root" {print $NF}' "$T/list")
[ -z "$owners" ] || fail "not owned by root: $owners"

# The binaries are complete: the extracted reconstruct runs.
"$T/x/usr/bin/ballarus-reconstruct" --version >/dev/null || fail "extracted ballarus-reconstruct does not run"
echo "contents: $(grep -c . "$T/list") entries, all expected files present"

[ "$install" = 1 ] || { echo PASS; exit 0; }

# --- installed ------------------------------------------------------------
[ "$(id -u)" = 0 ] || fail "--install needs root"
if dpkg-query -W -f='${db:Status-Status}' ballarus 2>/dev/null | grep -qx installed; then
  fail "ballarus is already installed; remove it first (dpkg -r ballarus)"
fi
dpkg -i "$deb" >"$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log" >&2; fail "dpkg -i"; }
removed=0
remove() {
  [ "$removed" = 1 ] && return 0
  removed=1
  dpkg -r ballarus >"$T/dpkg-r.log" 2>&1 || { cat "$T/dpkg-r.log" >&2; fail "dpkg -r"; }
}
trap 'remove; rm -rf -- "$T"' EXIT

cd "$T"
cp "$here/count.c" .
gcc -fplugin=ballarus -c count.c || fail "gcc -fplugin=ballarus -c count.c"
gcc -o count count.o -lballarus_rt || fail "gcc count.o -lballarus_rt"
./count || fail "count exited $?"
ballarus-reconstruct lcov -o count.info count.bprof || fail "ballarus-reconstruct lcov"
expect_counts count.c count.info
echo "gcc -fplugin=ballarus ... -lballarus_rt: counts as expected"

mkdir w && cp count.c w/ && (cd w && ballarus-gcc -o count count.c && ./count) || fail "ballarus-gcc"
ballarus-reconstruct lcov -o w.info w/ || fail "lcov of ballarus-gcc's profile"
expect_counts count.c w.info
echo "ballarus-gcc: counts as expected"

for page in ballarus-gcc ballarus-g++ ballarus-reconstruct; do
  man -w "$page" >/dev/null 2>&1 || fail "man -w $page"
done

if [ "$bazel" = 1 ]; then
  bash "$here/../../tools/bazel_coverage/check.sh" --installed || fail "bazel coverage with the installed package"
fi

remove
for f in /usr/bin/ballarus-gcc /usr/lib/ballarus "$plugin_dir/ballarus.so" "$lib_dir/libballarus_rt.a"; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is left after dpkg -r"
done
echo PASS
