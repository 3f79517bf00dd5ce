#!/usr/bin/env bash
# compare_reports.sh — runs every report of two ballarus-reconstruct
# binaries on the same profiles and diffs them byte for byte: a refactoring
# of reconstruct/ must not change a single byte of output.
#
#   bash scripts/compare_reports.sh OLD_BIN NEW_BIN PROFILE...
#
# Per profile, with each binary: show, show --json, paths, paths --json,
# paths --top 0 --json, paths --function . --decode 0 (text and --json),
# paths --program --source, stats, stats --json, verify, verify --against
# the profile itself, lcov, cobertura, gcov -t (plain, -b -c, -j), gcov -b
# (run in DIR, where gcov writes) and html -o DIR (every file written, byte
# for byte), diff against
# the previous profile of the list (text and --json), and merge -o (the
# written file); stdout, stderr and the exit status must be equal (a
# subcommand that refuses a profile, e.g. paths without path data, must
# refuse it alike).  A subcommand that writes a directory writes it at the
# same place with both binaries, so names of it in its output compare
# equal.  html draws its CFG pictures with Graphviz's dot when it is on
# PATH.  Prints one line per difference (with the first lines of the diff)
# and a summary; exit status 0 when everything is equal, 1 when something
# differs, 2 on bad usage.
#
# Typical use: build the old binary from a throwaway worktree, e.g.
#   git worktree add /tmp/old c079a28 && (cd /tmp/old && bazel build
#   //reconstruct:ballarus-reconstruct) && cp /tmp/old/bazel-bin/reconstruct/
#   ballarus-reconstruct /tmp/old-reconstruct
# and profiles of the end-to-end corpus (tests/programs, built with the
# plugin in each mode and run with BALLARUS_PROFILE=FILE).
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 OLD_BIN NEW_BIN PROFILE..." >&2
  exit 2
fi
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
# Absolute names: the binaries run in the output directory.
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
old=$(absolute "$old") new=$(absolute "$new")
profiles=()
for p in "$@"; do profiles+=("$(absolute "$p")"); done
set -- "${profiles[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

commands=(
  "show"
  "show --json"
  "paths"
  "paths --json"
  "paths --top 0 --json"
  "paths --function . --decode 0"
  "paths --function . --decode 0 --json"
  "paths --program --source"
  "stats"
  "stats --json"
  "verify"
  "verify --against @PROFILE@"
  "lcov"
  "cobertura"
  "gcov -t"
  "gcov -b -c -t"
  "gcov -j -t"
  "gcov -b"
  "html -o @OUT@ --title T"
  "diff @PREVIOUS@"
  "diff @PREVIOUS@ --json --top 0"
)

# run BIN TAG PROFILE ARGS...: stdout, stderr and status into $work/TAG.*;
# what it wrote into $work/dir (@OUT@ and its working directory; made empty
# first) into $work/TAG.dir.
run() {
  local bin=$1 tag=$2 profile=$3
  shift 3
  rm -rf "$work/dir" "$work/$tag.dir"
  mkdir "$work/dir"
  (cd "$work/dir" && exec "$bin" "$@") >"$work/$tag.out" 2>"$work/$tag.err"
  echo "exit $?" >"$work/$tag.status"
  mv "$work/dir" "$work/$tag.dir"
}

compared=0 differ=0
previous=$1
for profile in "$@"; do
  if [ ! -f "$profile" ]; then
    echo "$0: $profile: no such file" >&2
    exit 2
  fi
  for c in "${commands[@]}"; do
    c2=${c//@PROFILE@/$profile}
    c2=${c2//@PREVIOUS@/$previous}
    read -r -a words <<<"${c2//@OUT@/$work/dir}"
    sub=${words[0]}
    rest=("${words[@]:1}")
    run "$old" old "$profile" "$sub" "$profile" "${rest[@]+"${rest[@]}"}"
    run "$new" new "$profile" "$sub" "$profile" "${rest[@]+"${rest[@]}"}"
    compared=$((compared + 1))
    for part in out err status dir; do
      if ! diff -r "$work/old.$part" "$work/new.$part" >/dev/null; then
        differ=$((differ + 1))
        echo "DIFFERS: $profile: $c ($part)"
        diff -r "$work/old.$part" "$work/new.$part" | head -n 10 | sed 's/^/    /'
        break
      fi
    done
  done
  # merge: the written profile, byte for byte.
  run "$old" old "$profile" merge -o "$work/old.merged" "$profile"
  run "$new" new "$profile" merge -o "$work/new.merged" "$profile"
  compared=$((compared + 1))
  same_file=1  # both wrote the same bytes, or neither wrote anything
  if [ -e "$work/old.merged" ] || [ -e "$work/new.merged" ]; then
    cmp -s "$work/old.merged" "$work/new.merged" || same_file=0
  fi
  if ! cmp -s "$work/old.status" "$work/new.status" ||
     ! cmp -s "$work/old.err" "$work/new.err" || [ "$same_file" = 0 ]; then
    differ=$((differ + 1))
    echo "DIFFERS: $profile: merge"
  fi
  rm -f "$work/old.merged" "$work/new.merged"
  previous=$profile
done

echo "compare_reports: $# profiles, $compared outputs compared, $differ differ"
[ "$differ" -eq 0 ]
