#!/usr/bin/env bash
# compare_objects.sh — checks that two builds of the plugin instrument alike,
# byte for byte: the guard of refactorings that must not change behaviour.
#
# usage: bash scripts/compare_objects.sh BASE_PLUGIN NEW_PLUGIN
#
# Every program of tests/programs/ (MANIFEST: C and C++, the multi-file
# templates, the shared library with -fPIC, threads with -pthread) is
# compiled as tests/harness.cc compiles it (sources copied flat into a
# directory per program, `CC -OX -g CFLAGS -c SRC -o OBJ`, -O2 with
# -fno-partial-inlining as in tests/e2e_test.cc) with each plugin, in every
# configuration:
#
#   mode=naive|edge|path|edge,path x update=single|atomic
#     x weights=heuristic|gcc|uniform x (no dump | dump) x -O0|-O2
#
# plus, at -O0 and -O2 with the dump: no update=/weights= (the defaults),
# mode=naive,path, mode=path with path-table-max=0 (every function hashed)
# single and atomic, mode=edge,path with early-termination=off, and
# mode=path with path-table-max=1.
#
# Both plugins are copied in turn to the same path (GCC records -fplugin=PATH
# in the debug info) and compile the same sources in the same directory (the
# objects embed the working directory and the source name), so equal
# plugins give equal files.  Every object and every pass dump
# (SRC.NNNi.ballarus) is compared with cmp; each object must carry the
# ballarus_tus section (a plugin that instrumented nothing fails).
#
# Prints the number of objects and dumps compared; exit status 0 when all
# are identical, 1 on any difference or failed compile, 2 on bad usage.
# Environment: JOBS (configurations compiled in parallel, default 2),
# CC / CXX (default gcc / g++), KEEP=1 keeps the work directory (its path is
# printed), DUMPS=added accepts a pass dump of the new plugin that only adds
# lines to the base's (a change that makes the dump say more; objects must
# still be identical).
set -euo pipefail

usage() {
  echo "usage: bash scripts/compare_objects.sh BASE_PLUGIN NEW_PLUGIN" >&2
  exit 2
}
[ $# -eq 2 ] || usage
for p in "$1" "$2"; do
  [ -f "$p" ] || { echo "compare_objects.sh: $p: no such file" >&2; exit 2; }
done
base_plugin=$(readlink -f -- "$1")
new_plugin=$(readlink -f -- "$2")
programs=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../tests/programs" && pwd)
jobs=${JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/compare_objects.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "compare_objects.sh: work directory $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# The corpus, one line per program: NAME|CXX(0/1)|CFLAGS|SOURCES|PIC-SOURCES
# (sources relative to tests/programs, space-separated).
corpus=$work/corpus
: >"$corpus"
while read -r name rest; do
  case "$name" in '' | '#'*) continue ;; esac
  srcs="" pic="" cflags="" cxx=0
  for tok in $rest; do
    case "$tok" in
      shared=*)
        lib_srcs=${tok#shared=}
        lib_srcs=${lib_srcs#*:}
        pic="$pic ${lib_srcs//,/ }"
        ;;
      cflags=*)
        f=${tok#cflags=}
        cflags="$cflags ${f//,/ }"
        ;;
      plain=*) ;;  # link flags of the plain build only (harness.cc)
      *=*)
        echo "compare_objects.sh: MANIFEST: unknown option '$tok' of $name" >&2
        exit 1
        ;;
      *) srcs="$srcs $tok" ;;
    esac
  done
  for s in $srcs $pic; do
    case "$s" in *.cc | *.cpp | *.cxx | *.C) cxx=1 ;; esac
  done
  echo "$name|$cxx|$cflags|$srcs|$pic" >>"$corpus"
done <"$programs/MANIFEST"
[ -s "$corpus" ] || { echo "compare_objects.sh: empty MANIFEST" >&2; exit 1; }

# The configurations: one line each, OPT then plugin arguments (keys only;
# -fplugin-arg-ballarus- is prepended).
configs=$work/configs
for opt in -O0 -O2; do
  for mode in naive edge path edge,path; do
    for update in single atomic; do
      for weights in heuristic gcc uniform; do
        echo "$opt mode=$mode update=$update weights=$weights"
        echo "$opt mode=$mode update=$update weights=$weights dump"
      done
    done
  done
  echo "$opt mode=edge dump"
  echo "$opt mode=naive,path update=single dump"
  echo "$opt mode=path path-table-max=0 update=single dump"
  echo "$opt mode=path path-table-max=0 update=atomic dump"
  echo "$opt mode=edge,path early-termination=off update=single dump"
  echo "$opt mode=path path-table-max=1 weights=uniform dump"
done >"$configs"

# run_config N: compiles the corpus in configuration N with both plugins in
# $work/cN/build and compares; writes "objects dumps differences failures"
# to $work/cN/result and one line per problem to $work/cN/problems.
run_config() {
  local n=$1 dir=$work/c$1
  local line opt args a side name cxx cflags srcs pic s cc obj f log
  local objects=0 dumps=0 diffs=0 failures=0 extended=0 rel
  line=$(sed -n "${n}p" "$configs")
  opt=${line%% *}
  args=()
  for a in ${line#* }; do args+=("-fplugin-arg-ballarus-$a"); done
  local extra=()
  [ "$opt" = -O0 ] || extra=(-fno-partial-inlining)
  mkdir -p "$dir/plugin"
  : >"$dir/problems"
  for side in base new; do
    if [ $side = base ]; then cp "$base_plugin" "$dir/plugin/ballarus.so"
    else cp "$new_plugin" "$dir/plugin/ballarus.so"; fi
    rm -rf "$dir/build"
    mkdir -p "$dir/$side"
    while IFS='|' read -r name cxx cflags srcs pic; do
      local bdir=$dir/build/$name
      mkdir -p "$bdir"
      for s in $srcs $pic; do
        # As the harness: a source in a subdirectory brings the whole
        # subdirectory (its headers) along, flat.
        if [ "${s%/*}" != "$s" ]; then cp "$programs/${s%/*}"/* "$bdir/"
        else cp "$programs/$s" "$bdir/"; fi
      done
      if [ "$cxx" = 1 ]; then cc=${CXX:-g++}; else cc=${CC:-gcc}; fi
      for s in $srcs $pic; do
        local pic_flag=()
        for f in $pic; do [ "$f" = "$s" ] && pic_flag=(-fPIC); done
        s=${s##*/}
        obj=${s%.*}.o
        # shellcheck disable=SC2086  # cflags: a list of flags
        if ! (cd "$bdir" &&
              "$cc" "$opt" -g $cflags "${extra[@]+"${extra[@]}"}" \
                "-fplugin=$dir/plugin/ballarus.so" "${args[@]}" \
                "${pic_flag[@]+"${pic_flag[@]}"}" -c "$s" -o "$obj") \
              >"$dir/$side.log" 2>&1; then
          log=$(head -c 1000 "$dir/$side.log" | tr '\n' ' ')
          echo "FAILED: $side plugin: $name/$s ($line): $log" >>"$dir/problems"
          failures=$((failures + 1))
        fi
      done
      # Keep what the compiles produced: objects and dumps.
      mkdir -p "$dir/$side/$name"
      for f in "$bdir"/*; do
        case "$f" in *.o | *.ballarus) mv "$f" "$dir/$side/$name/" ;; esac
      done
    done <"$corpus"
  done
  rm -rf "$dir/build" "$dir/plugin"
  if ! diff <(cd "$dir/base" && find . -type f | sort) \
            <(cd "$dir/new" && find . -type f | sort) >"$dir/listing.diff"; then
    echo "FAILED: the plugins produced different files ($line):" \
      "$(grep '^[<>]' "$dir/listing.diff" | tr '\n' ' ')" >>"$dir/problems"
    failures=$((failures + 1))
  fi
  while read -r rel; do
    [ -f "$dir/new/$rel" ] || continue
    case "$rel" in
      *.o)
        objects=$((objects + 1))
        if ! grep -q ballarus_tus "$dir/base/$rel"; then
          echo "FAILED: ${rel#./} not instrumented ($line)" >>"$dir/problems"
          failures=$((failures + 1))
        fi
        ;;
      *) dumps=$((dumps + 1)) ;;
    esac
    if ! cmp -s "$dir/base/$rel" "$dir/new/$rel"; then
      if [ "${DUMPS:-same}" = added ] && [ "${rel%.o}" = "$rel" ] &&
         ! diff "$dir/base/$rel" "$dir/new/$rel" | grep -q '^<'; then
        extended=$((extended + 1))
      else
        diffs=$((diffs + 1))
        echo "DIFFERENT: ${rel#./} ($line)" >>"$dir/problems"
      fi
    fi
  done < <(cd "$dir/base" && find . -type f | sort)
  [ "${KEEP:-0}" = 1 ] || rm -rf "$dir/base" "$dir/new"
  echo "$objects $dumps $diffs $failures $extended" >"$dir/result"
}
export -f run_config
export work configs corpus programs base_plugin new_plugin

n_configs=$(wc -l <"$configs")
seq 1 "$n_configs" | xargs -P "$jobs" -I{} bash -c 'run_config "$@"' _ {}

objects=0 dumps=0 diffs=0 failures=0 extended=0
for n in $(seq 1 "$n_configs"); do
  if [ ! -f "$work/c$n/result" ]; then
    echo "FAILED: configuration $n ($(sed -n "${n}p" "$configs"))" \
      "did not finish" >&2
    failures=$((failures + 1))
    continue
  fi
  read -r o d x f e <"$work/c$n/result"
  objects=$((objects + o)) dumps=$((dumps + d)) extended=$((extended + e))
  diffs=$((diffs + x)) failures=$((failures + f))
  [ ! -s "$work/c$n/problems" ] || cat "$work/c$n/problems" >&2
done
echo "compare_objects: $n_configs configurations:" \
  "$objects objects and $dumps dumps compared, $diffs different," \
  "$failures failures"
[ "${DUMPS:-same}" != added ] ||
  echo "compare_objects: $extended dumps differ by added lines only (DUMPS=added)"
[ "$diffs" -eq 0 ] && [ "$failures" -eq 0 ] && [ "$objects" -gt 0 ] || exit 1
echo "compare_objects: all identical"
