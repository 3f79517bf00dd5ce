#!/usr/bin/env bash
# mode-costs.sh WORK PROGRAM VARIANT... — what each build of a bench run
# costs beside run time: sizes of the executable and objects, the profile
# the count run wrote, and the CPU seconds of reading it back
# (docs/performance.md, "Default mode").
#
# WORK is a bench/run.sh --work directory after a run (its PROGRAM/build/V
# and PROGRAM/count/V); WORK/prefix is the ballarus the run installed.
# Prints one tab-separated line per variant:
#   program variant exe_bytes text data bss objects_bytes profile_bytes
#   gcno_bytes show_cpu_s show_json_cpu_s gcov_cpu_s html_cpu_s
# profile_bytes: what a run writes, the ballarus profile (counts and
# metadata) or gcov's .gcda files; gcno_bytes: gcov's notes files, written
# at compile time (a ballarus object carries its metadata);
# the *_cpu_s columns (user+sys, best of 3) only for ballarus variants;
# html without CFG pictures (--cfg-functions 0: Graphviz's time is its own).
#
#   bash bench/tools/mode-costs.sh WORK lua plain gcov edge path edge-path
set -euo pipefail
export LC_ALL=C

work=$1 prog=$2
shift 2
rb=$work/prefix/bin/ballarus-reconstruct
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cpu CMD...: the least user+sys seconds of three runs of CMD.
cpu() {
  local best='' t
  for _ in 1 2 3; do
    /usr/bin/time -o "$tmp/time" -f '%U %S' "$@" >/dev/null 2>&1
    t=$(awk '{print $1 + $2}' "$tmp/time")
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
  done
  printf '%s' "$best"
}

# sum_sizes DIR GLOB: bytes of the files matching GLOB (not the bench's
# layout padding object).
sum_sizes() {
  find "$1" -name "$2" ! -name layout-pad.o -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}

printf 'program\tvariant\texe_bytes\ttext\tdata\tbss\tobjects_bytes\tprofile_bytes\tgcno_bytes\tshow_cpu_s\tshow_json_cpu_s\tgcov_cpu_s\thtml_cpu_s\n'
for v in "$@"; do
  b=$work/$prog/build/$v
  exe=$b/exe
  read -r text data bss _ < <(size "$exe" | tail -1)
  objs=$(sum_sizes "$b" '*.o')
  prof=$work/$prog/count/$v/ballarus.profile
  s=- j=- g=- h=- notes=0
  if [ -f "$prof" ]; then
    pbytes=$(stat -c %s "$prof")
    s=$(cpu "$rb" show "$prof")
    j=$(cpu "$rb" show --json "$prof")
    g=$(cd "$tmp" && cpu "$rb" gcov "$prof")
    h=$(cpu "$rb" html --cfg-functions 0 -o "$tmp/html" "$prof")
    rm -rf "$tmp/html" "$tmp"/*.gcov
  else
    pbytes=$(sum_sizes "$b" '*.gcda')
    notes=$(sum_sizes "$b" '*.gcno')
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$v" \
    "$(stat -c %s "$exe")" "$text" "$data" "$bss" "$objs" "$pbytes" "$notes" \
    "$s" "$j" "$g" "$h"
done
