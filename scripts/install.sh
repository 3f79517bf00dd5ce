#!/usr/bin/env bash
# install.sh — installs ballarus into a prefix.  Run it as
#
#   bazel run //:install -- PREFIX
#
# which produces
#
#   PREFIX/bin/ballarus-gcc, PREFIX/bin/ballarus-g++, PREFIX/bin/ballarus-reconstruct
#   PREFIX/bin/ballarus-gcc-{ar,ranlib,nm}
#   PREFIX/lib/cmake/Ballarus/{ballarus-toolchain,BallarusConfig,BallarusConfigVersion}.cmake
#   PREFIX/lib/ballarus/ballarus.so, PREFIX/lib/ballarus/libballarus_rt.a
#   PREFIX/include/ballarus/ballarus.h
#
# The top-level BUILD turns this file into the `install` sh_binary: a genrule
# replaces the @...@ placeholders below by the runfiles paths of the built
# files, so nothing here guesses where Bazel put them.  The script finds its
# runfiles tree under `bazel run` ($0.runfiles), inside a test's runfiles
# (RUNFILES_DIR / TEST_SRCDIR, or beside the script itself), so the
# end-to-end tests can install into a temporary prefix.
#
# A relative PREFIX is relative to the directory `bazel run` was started
# from (BUILD_WORKING_DIRECTORY), else to the current directory.

set -euo pipefail

prog=install
workspace=ballarus

# Runfiles-relative paths of what gets installed (filled in by //:install_sh).
rel_plugin='@PLUGIN@'
rel_runtime='@RUNTIME@'
rel_reconstruct='@RECONSTRUCT@'
rel_header='@HEADER@'
rel_wrapper='@WRAPPER@'
rel_ar='@AR_HELPER@'
rel_cmake=('@CMAKE_TOOLCHAIN@' '@CMAKE_CONFIG@' '@CMAKE_VERSION@')

die() {
  printf '%s: error: %s\n' "$prog" "$1" >&2
  exit 2
}

usage() {
  cat <<EOF
usage: bazel run //:install -- PREFIX

Installs ballarus into PREFIX:
  PREFIX/bin/{ballarus-gcc,ballarus-g++,ballarus-reconstruct}
  PREFIX/bin/{ballarus-gcc-ar,ballarus-gcc-ranlib,ballarus-gcc-nm}
  PREFIX/lib/cmake/Ballarus/ (the CMake toolchain file and package)
  PREFIX/lib/ballarus/{ballarus.so,libballarus_rt.a}
  PREFIX/include/ballarus/ballarus.h
A relative PREFIX is relative to the directory bazel was run from.
EOF
}

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") usage >&2; die "missing PREFIX" ;;
  -*) usage >&2; die "unknown option: $1" ;;
esac
[ $# -eq 1 ] || { usage >&2; die "expected exactly one PREFIX, got $#"; }

# --- find the runfiles root that holds our files ---------------------------
root=
for cand in \
    "${RUNFILES_DIR:+$RUNFILES_DIR/$workspace}" \
    "$0.runfiles/$workspace" \
    "${TEST_SRCDIR:+$TEST_SRCDIR/$workspace}" \
    "$(dirname -- "$0")"; do
  if [ -n "$cand" ] && [ -e "$cand/$rel_plugin" ] && [ -e "$cand/$rel_wrapper" ]; then
    root=$cand
    break
  fi
done
[ -n "$root" ] || die "cannot find the built files (looked for $rel_plugin under \$RUNFILES_DIR, $0.runfiles, \$TEST_SRCDIR and $(dirname -- "$0")); run me with 'bazel run //:install -- PREFIX'"

for rel in "$rel_plugin" "$rel_runtime" "$rel_reconstruct" "$rel_header" "$rel_wrapper" \
    "$rel_ar" "${rel_cmake[@]}"; do
  [ -f "$root/$rel" ] || die "missing from the build: $root/$rel"
done

# --- the prefix ----------------------------------------------------------
prefix=$1
case "$prefix" in
  /*) ;;
  *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac

mkdir -p -- "$prefix/bin" "$prefix/lib/ballarus" "$prefix/include/ballarus" \
  "$prefix/lib/cmake/Ballarus" \
  || die "cannot create directories under $prefix"

# Each file is written beside its destination and renamed over it, so a
# program or compiler still using the old plugin keeps its mapping, and an
# interrupted install leaves no half-written file.  (Not install(1): this
# script is itself called "install", and a test's PATH may find it first.)
put() { # MODE SRC DEST
  local tmp="$3.tmp.$$"
  if cp -- "$2" "$tmp" && chmod "$1" -- "$tmp" && mv -f -- "$tmp" "$3"; then
    return 0
  fi
  rm -f -- "$tmp"
  die "cannot install $3"
}
# One wrapper script; the names it is invoked by select the compiler or tool.
put_link() { # TARGET DEST: DEST becomes a symbolic link to TARGET (same directory)
  local tmp="$2.tmp.$$"
  if ln -s -- "$1" "$tmp" && mv -f -T -- "$tmp" "$2"; then
    return 0
  fi
  rm -f -- "$tmp"
  die "cannot install $2"
}
put 0755 "$root/$rel_wrapper"     "$prefix/bin/ballarus-gcc"
put_link ballarus-gcc "$prefix/bin/ballarus-g++"
put 0755 "$root/$rel_ar"          "$prefix/bin/ballarus-gcc-ar"
put_link ballarus-gcc-ar "$prefix/bin/ballarus-gcc-ranlib"
put_link ballarus-gcc-ar "$prefix/bin/ballarus-gcc-nm"
for rel in "${rel_cmake[@]}"; do
  put 0644 "$root/$rel" "$prefix/lib/cmake/Ballarus/${rel##*/}"
done
put 0755 "$root/$rel_reconstruct" "$prefix/bin/ballarus-reconstruct"
put 0755 "$root/$rel_plugin"      "$prefix/lib/ballarus/ballarus.so"
put 0644 "$root/$rel_runtime"     "$prefix/lib/ballarus/libballarus_rt.a"
put 0644 "$root/$rel_header"      "$prefix/include/ballarus/ballarus.h"

# The prefix must be self-contained: nothing may point back into Bazel's
# output tree (e.g. a solib of a cc_library).
for f in "$prefix/bin/ballarus-reconstruct" "$prefix/lib/ballarus/ballarus.so"; do
  if missing=$(ldd -- "$f" 2>/dev/null | grep 'not found'); then
    die "$f needs libraries that are not installed: $(echo $missing)"
  fi
done

echo "ballarus installed in $prefix"
echo "  compile with: $prefix/bin/ballarus-gcc (or ballarus-g++)"
echo "  programs write OBJ.bprof beside each object; read them with: $prefix/bin/ballarus-reconstruct show OBJ.bprof"
