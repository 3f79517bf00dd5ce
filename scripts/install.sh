#!/usr/bin/env bash
# install.sh — installs ballarus into a prefix.  Run it as
#
#   bazel run //:install -- [--gcc | --no-gcc] PREFIX
#
# which produces
#
#   PREFIX/bin/ballarus-gcc, PREFIX/bin/ballarus-g++, PREFIX/bin/ballarus-reconstruct
#   PREFIX/bin/ballarus-gcc-{ar,ranlib,nm}, PREFIX/bin/ballarus-test-env
#   PREFIX/lib/cmake/Ballarus/{ballarus-toolchain,BallarusConfig,BallarusConfigVersion}.cmake
#   PREFIX/lib/ballarus/ballarus.so, PREFIX/lib/ballarus/libballarus_rt.a
#   PREFIX/include/ballarus/ballarus.h
#   PREFIX/share/man/man1/{ballarus-gcc,ballarus-g++,ballarus-reconstruct}.1
#   PREFIX/share/ballarus/bazel/{collect_cc_coverage.sh,run_test.sh}
#
# and, with --gcc (the default when PREFIX is /usr), makes the plugin and
# the runtime known to gcc by name, so that `gcc -fplugin=ballarus ...
# -lballarus_rt` works: symbolic links
#
#   $(gcc -print-file-name=plugin)/ballarus.so -> PREFIX/lib/ballarus/ballarus.so
#   $(gcc -print-file-name=)libballarus_rt.a   -> PREFIX/lib/ballarus/libballarus_rt.a
#
# (GCC looks for -fplugin=NAME as NAME.so in its plugin directory, and
# searches its own library directory for -lNAME; $CC, default gcc, names
# the GCC.)  $DESTDIR, when set, is put in front of every path written,
# not of the links' targets: a package is staged with
# `DESTDIR=STAGE bazel run //:install -- /usr` (scripts/build_deb.sh).
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
rel_man_gcc='@MAN_GCC@'
rel_man_reconstruct='@MAN_RECONSTRUCT@'
rel_bazel_collector='@BAZEL_COLLECTOR@'
rel_bazel_run_test='@BAZEL_RUN_TEST@'
rel_ar='@AR_HELPER@'
rel_test_env='@TEST_ENV@'
rel_cmake=('@CMAKE_TOOLCHAIN@' '@CMAKE_CONFIG@' '@CMAKE_VERSION@')

die() {
  printf '%s: error: %s\n' "$prog" "$1" >&2
  exit 2
}

usage() {
  cat <<EOF
usage: bazel run //:install -- [--gcc | --no-gcc] PREFIX

Installs ballarus into PREFIX:
  PREFIX/bin/{ballarus-gcc,ballarus-g++,ballarus-reconstruct}
  PREFIX/bin/{ballarus-gcc-ar,ballarus-gcc-ranlib,ballarus-gcc-nm}
  PREFIX/bin/ballarus-test-env (names a test's profile counts: make check)
  PREFIX/lib/cmake/Ballarus/ (the CMake toolchain file and package)
  PREFIX/lib/ballarus/{ballarus.so,libballarus_rt.a}
  PREFIX/include/ballarus/ballarus.h
  PREFIX/share/man/man1/{ballarus-gcc,ballarus-g++,ballarus-reconstruct}.1
  PREFIX/share/ballarus/bazel/{collect_cc_coverage.sh,run_test.sh}
A relative PREFIX is relative to the directory bazel was run from.

  --gcc      also link the plugin into gcc's plugin directory and the
             runtime into gcc's library directory, so that
             'gcc -fplugin=ballarus ... -lballarus_rt' works
             (default when PREFIX is /usr; \$CC names the gcc)
  --no-gcc   do not (default for any other PREFIX)
\$DESTDIR, when set, is put in front of every path written.
EOF
}

# --- arguments -------------------------------------------------------------
for_gcc=
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --gcc) for_gcc=1 ;;
    --no-gcc) for_gcc=0 ;;
    --) shift; break ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *) break ;;
  esac
  shift
done
[ $# -gt 0 ] || { usage >&2; die "missing PREFIX"; }
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
    "$rel_man_gcc" "$rel_man_reconstruct" "$rel_bazel_collector" "$rel_bazel_run_test" \
    "$rel_ar" "$rel_test_env" "${rel_cmake[@]}"; do
  [ -f "$root/$rel" ] || die "missing from the build: $root/$rel"
done

# --- the prefix (and $DESTDIR) ---------------------------------------------
absolute() { # PATH: relative to where `bazel run` was started
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "${BUILD_WORKING_DIRECTORY:-$PWD}/$1" ;;
  esac
}
prefix=$(absolute "$1")
prefix=${prefix%/}   # PREFIX / becomes "": $prefix/bin is /bin
if [ -z "$for_gcc" ]; then
  if [ "$prefix" = /usr ]; then for_gcc=1; else for_gcc=0; fi
fi
destdir=
[ -z "${DESTDIR:-}" ] || destdir=$(absolute "$DESTDIR")
destdir=${destdir%/}
dest=$destdir$prefix
man1=share/man/man1
bazel_share=share/ballarus/bazel

mkdir -p -- "$dest/bin" "$dest/lib/ballarus" "$dest/include/ballarus" \
  "$dest/$man1" "$dest/$bazel_share" "$dest/lib/cmake/Ballarus" \
  || die "cannot create directories under $dest"

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
put 0755 "$root/$rel_wrapper"     "$dest/bin/ballarus-gcc"
put_link ballarus-gcc "$dest/bin/ballarus-g++"
put 0755 "$root/$rel_ar"          "$dest/bin/ballarus-gcc-ar"
put_link ballarus-gcc-ar "$dest/bin/ballarus-gcc-ranlib"
put_link ballarus-gcc-ar "$dest/bin/ballarus-gcc-nm"
put 0755 "$root/$rel_test_env"    "$dest/bin/ballarus-test-env"
for rel in "${rel_cmake[@]}"; do
  put 0644 "$root/$rel" "$dest/lib/cmake/Ballarus/${rel##*/}"
done
put 0755 "$root/$rel_reconstruct" "$dest/bin/ballarus-reconstruct"
put 0755 "$root/$rel_plugin"      "$dest/lib/ballarus/ballarus.so"
put 0644 "$root/$rel_runtime"     "$dest/lib/ballarus/libballarus_rt.a"
put 0644 "$root/$rel_header"      "$dest/include/ballarus/ballarus.h"
put 0644 "$root/$rel_man_gcc"     "$dest/$man1/ballarus-gcc.1"
put 0644 "$root/$rel_man_reconstruct" "$dest/$man1/ballarus-reconstruct.1"
put 0755 "$root/$rel_bazel_collector" "$dest/$bazel_share/collect_cc_coverage.sh"
put 0755 "$root/$rel_bazel_run_test"  "$dest/$bazel_share/run_test.sh"
# ballarus-g++(1) is ballarus-gcc(1), by a roff include.
printf '.so man1/ballarus-gcc.1\n' >"$dest/$man1/ballarus-g++.1.src.$$" \
  || die "cannot write under $dest/$man1"
put 0644 "$dest/$man1/ballarus-g++.1.src.$$" "$dest/$man1/ballarus-g++.1"
rm -f -- "$dest/$man1/ballarus-g++.1.src.$$"

# The prefix must be self-contained: nothing may point back into Bazel's
# output tree (e.g. a solib of a cc_library).
for f in "$dest/bin/ballarus-reconstruct" "$dest/lib/ballarus/ballarus.so"; do
  if missing=$(ldd -- "$f" 2>/dev/null | grep 'not found'); then
    die "$f needs libraries that are not installed: $(echo $missing)"
  fi
done

# --- gcc -fplugin=ballarus, -lballarus_rt ---------------------------------
# link TARGET LINK: $DESTDIR/LINK becomes a symbolic link to TARGET (a path
# of the installed system, without $DESTDIR), replaced atomically.
link() {
  local at=$destdir$2
  local tmp="$at.tmp.$$"
  if mkdir -p -- "$(dirname -- "$at")" && ln -sfn -- "$1" "$tmp" \
      && mv -fT -- "$tmp" "$at"; then
    return 0
  fi
  rm -f -- "$tmp"
  die "cannot create $at (install as root, or with --no-gcc)"
}

# gcc_dir QUERY: the absolute directory `$cc -print-file-name=QUERY` names.
gcc_dir() {
  local d
  d=$("$cc" -print-file-name="$1" 2>/dev/null) || d=
  case "$d" in
    /*) realpath -m -- "$d" ;;
    *) die "'$cc -print-file-name=$1' names no directory (printed '$d'); is $cc GCC with plugin support (gcc-12-plugin-dev)?" ;;
  esac
}

gcc_note=
if [ "$for_gcc" = 1 ]; then
  cc=${CC:-gcc}
  plugin_dir=$(gcc_dir plugin)
  lib_dir=$(gcc_dir "")
  link "$prefix/lib/ballarus/ballarus.so" "$plugin_dir/ballarus.so"
  link "$prefix/lib/ballarus/libballarus_rt.a" "$lib_dir/libballarus_rt.a"
  gcc_note="  or plain $cc: $cc -fplugin=ballarus ... -lballarus_rt (links in $plugin_dir and $lib_dir)"
fi

echo "ballarus installed in ${dest:-/}"
echo "  compile with: $prefix/bin/ballarus-gcc (or ballarus-g++)"
[ -z "$gcc_note" ] || echo "$gcc_note"
echo "  programs write OBJ.bprof beside each object; read them with: $prefix/bin/ballarus-reconstruct show OBJ.bprof"
