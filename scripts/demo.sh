#!/usr/bin/env bash
# demo.sh — ballarus from a fresh machine to a profile:
#
#   1. scripts/setup.sh (apt packages; nothing when already installed)
#   2. bazel build //:install, and install into PREFIX (default ./_install)
#   3. compile the bundled example (examples/calc: a tiny calculator) with
#      PREFIX/bin/ballarus-gcc in mode edge,path (edge counts and Ball–Larus
#      path counts in one build), in ./_demo
#   4. run it twice (its input, then a short second input) — each run merges
#      its counts into one profile
#   5. `verify` the profile, print the program's hottest paths, and write an
#      HTML report of it
#
# usage: bash scripts/demo.sh [PREFIX]
# BAZEL_STARTUP_OPTS (e.g. --output_base=DIR) is passed to bazel as startup
# options.  Exit status 0 when every step worked.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
repo=$PWD

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo.sh: error: %s\n' "$*" >&2; exit 1; }

prefix=${1:-_install}
case "$prefix" in /*) ;; *) prefix=$repo/$prefix ;; esac
work=$repo/_demo
read -r -a startup <<<"${BAZEL_STARTUP_OPTS:-}"
bazel=(bazel "${startup[@]+"${startup[@]}"}")
# Bazel's progress and INFO lines are not the demo's business; warnings and
# errors still show.
quiet=(--noshow_progress --ui_event_filters=-info --show_result=0)

step "setting up the machine (scripts/setup.sh)"
bash scripts/setup.sh

step "building ballarus (bazel build //:install; minutes on a fresh machine)"
"${bazel[@]}" build "${quiet[@]}" //:install

step "installing into $prefix"
"${bazel[@]}" run "${quiet[@]}" //:install -- "$prefix"

step "compiling examples/calc with ballarus-gcc"
rm -rf "$work"
mkdir -p "$work"
cp examples/calc/calc.c examples/calc/calc.h examples/calc/main.c \
   examples/calc/input.calc "$work/"
cd "$work"
set -x
"$prefix/bin/ballarus-gcc" -O2 -Wall -fplugin-arg-ballarus-mode=edge,path -c calc.c -o calc.o
"$prefix/bin/ballarus-gcc" -O2 -Wall -fplugin-arg-ballarus-mode=edge,path -c main.c -o main.o
"$prefix/bin/ballarus-gcc" -o calc main.o calc.o
{ set +x; } 2>/dev/null

export BALLARUS_PROFILE=$work/calc.profile
rm -f "$BALLARUS_PROFILE"

step "running it (BALLARUS_PROFILE=$BALLARUS_PROFILE)"
# The input contains 4 deliberate errors, so calc exits with status 1.
status=0
./calc input.calc >calc.out || status=$?
cat calc.out
[ "$status" -eq 1 ] || die "calc exited with $status, expected 1 (4 errors in its input)"
cmp -s calc.out "$repo/examples/calc/expected_stdout.txt" \
  || die "calc's output differs from examples/calc/expected_stdout.txt (without ballarus it prints that)"

step "running it again on another input; the counts merge into the same profile"
printf 'let x = 6\nprint fact(x) / fib(x)\nquit\n' >second.calc
./calc second.calc

rc=$prefix/bin/ballarus-reconstruct

step "ballarus-reconstruct verify calc.profile"
"$rc" verify "$BALLARUS_PROFILE"

step "the hottest paths of the program (ballarus-reconstruct paths --program --top 5)"
"$rc" paths --program --top 5 "$BALLARUS_PROFILE"

step "an HTML report (ballarus-reconstruct html -o report calc.profile)"
"$rc" html -o "$work/report" --title calc "$BALLARUS_PROFILE"

step "done"
cat <<EOF
Installed:     $prefix
Example build: $work (calc, calc.profile)
HTML report:   $work/report/index.html
Try:           $rc show $work/calc.profile
               $rc gcov -b $work/calc.profile
               $prefix/bin/ballarus-gcc --ballarus-help
EOF
