#!/usr/bin/env bash
# //:install as a package build uses it: DESTDIR=ROOT, PREFIX /usr, --gcc.
# Checks the installed files and their modes, the links into GCC's plugin
# and library directories (named by the real gcc), that --no-gcc and other
# prefixes make none, and that the staged plugin and runtime work by name
# (-fplugin=ballarus, -lballarus_rt) with the real gcc, giving count.c's
# hand-derived line counts.
set -euo pipefail

rf=${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}/ballarus
here=$rf/tests/package
. "$here/lib.sh"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install_gcc.XXXXXX")
trap 'rm -rf -- "$T"' EXIT

# mode FILE: its permission bits, octal.
mode() { stat -c %a -- "$1"; }

# --- DESTDIR + /usr: --gcc is the default --------------------------------
DESTDIR=$T/root "$rf/install" /usr >"$T/log" 2>&1 || { cat "$T/log" >&2; fail "install into DESTDIR"; }
R=$T/root/usr
for f in bin/ballarus-gcc bin/ballarus-gcc-ar bin/ballarus-reconstruct lib/ballarus/ballarus.so \
    share/ballarus/bazel/collect_cc_coverage.sh share/ballarus/bazel/run_test.sh; do
  [ "$(mode "$R/$f")" = 755 ] || fail "$f: mode $(mode "$R/$f"), want 755"
done
# One wrapper script; its other names are links to it.
for l in ballarus-g++:ballarus-gcc ballarus-gcc-ranlib:ballarus-gcc-ar ballarus-gcc-nm:ballarus-gcc-ar; do
  [ "$(readlink -- "$R/bin/${l%%:*}")" = "${l#*:}" ] || fail "bin/${l%%:*} is not a link to ${l#*:}"
done
for f in lib/cmake/Ballarus/ballarus-toolchain.cmake lib/cmake/Ballarus/BallarusConfig.cmake \
    lib/cmake/Ballarus/BallarusConfigVersion.cmake \
    lib/ballarus/libballarus_rt.a include/ballarus/ballarus.h \
    share/man/man1/ballarus-gcc.1 share/man/man1/ballarus-g++.1 share/man/man1/ballarus-reconstruct.1; do
  [ "$(mode "$R/$f")" = 644 ] || fail "$f: mode $(mode "$R/$f"), want 644"
done

plugin_dir=$(realpath -m "$(gcc -print-file-name=plugin)")
lib_dir=$(realpath -m "$(gcc -print-file-name=)")
[ "$(readlink "$T/root$plugin_dir/ballarus.so")" = /usr/lib/ballarus/ballarus.so ] \
  || fail "$plugin_dir/ballarus.so: not a link to /usr/lib/ballarus/ballarus.so"
[ "$(readlink "$T/root$lib_dir/libballarus_rt.a")" = /usr/lib/ballarus/libballarus_rt.a ] \
  || fail "$lib_dir/libballarus_rt.a: not a link to /usr/lib/ballarus/libballarus_rt.a"
# The two links into GCC's directories and the three other names of the
# wrapper scripts (ballarus-g++, ballarus-gcc-ranlib, ballarus-gcc-nm).
n=$(find "$T/root" -type l | wc -l)
[ "$n" = 5 ] || fail "$n symbolic links under DESTDIR, want 5"

# The manual pages render without warnings.
for page in ballarus-gcc ballarus-reconstruct; do
  warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$R/share/man/man1/$page.1" 2>&1) \
    || fail "$page.1 does not render"
  [ -z "$warn" ] || fail "$page.1: $warn"
done

# --- by name, with the staged files ----------------------------------------
# -iplugindir points gcc's plugin lookup at the file the link names.
cd "$T"
cp "$here/count.c" .
gcc -O1 -iplugindir="$R/lib/ballarus" -fplugin=ballarus -c count.c \
  || fail "gcc -fplugin=ballarus -c count.c"
gcc -o count count.o -L"$R/lib/ballarus" -lballarus_rt || fail "gcc ... -lballarus_rt"
./count || fail "count exited $?"
[ -f count.bprof ] || fail "no count.bprof beside count.o"
"$R/bin/ballarus-reconstruct" lcov -o count.info count.bprof || fail "lcov"
expect_counts "$here/count.c" count.info

# Without the runtime an instrumented object does not link.
if gcc -o nort count.o 2>/dev/null; then fail "count.o linked without -lballarus_rt"; fi

# --- no links: --no-gcc, or another prefix --------------------------------
DESTDIR=$T/root2 "$rf/install" --no-gcc /usr >"$T/log" 2>&1 || { cat "$T/log" >&2; fail "--no-gcc"; }
# (links outside PREFIX/bin: the wrappers' other names are links anyway)
[ -z "$(find "$T/root2" -type l ! -path "$T/root2/usr/bin/*")" ] || fail "--no-gcc made links"
DESTDIR=$T/root3 "$rf/install" /opt/ballarus >"$T/log" 2>&1 || { cat "$T/log" >&2; fail "/opt/ballarus"; }
[ -z "$(find "$T/root3" -type l ! -path "$T/root3/opt/ballarus/bin/*")" ] || fail "PREFIX /opt/ballarus made links"
[ -x "$T/root3/opt/ballarus/bin/ballarus-gcc" ] || fail "DESTDIR/PREFIX layout"

# --- usage errors: exit status 2 --------------------------------------------
set +e
"$rf/install" --bogus /usr >/dev/null 2>&1; s1=$?
"$rf/install" --gcc >/dev/null 2>&1; s2=$?
set -e
[ "$s1" = 2 ] || fail "unknown option: exit $s1, want 2"
[ "$s2" = 2 ] || fail "missing PREFIX: exit $s2, want 2"
echo PASS
