#!/usr/bin/env bash
# scale.sh — ballarus-reconstruct's reports on a big profile.
#
#   bash bench/scale.sh [--functions N] [--files F] [--prefix DIR]
#                       [--work DIR] [--runs R] [--pin CPU] [--instr] [--quick]
#
# Generates a C program of N functions (default 30000, in F = 60 files;
# bench/scale/gen_program.py: ~360,000 blocks with the drivers), builds it
# with ballarus-gcc (edge mode, -O0), runs it once, then times
# `ballarus-reconstruct show --json` and `ballarus-reconstruct html` on its
# profile, R times each (default 3), and prints a markdown table: the
# profile's size, and per command the median wall time, its CPU time
# (user + sys) and the peak resident memory (GNU time's %M).  Limits
# (issue 11): show --json <= 2 s and <= 300 MB, html <= 15 s; the verdict
# is on CPU time, since wall time on a shared machine also measures the
# neighbours (both are printed).  Exit status 1 if a limit is exceeded.
#
# --pin CPU: time under `taskset -c CPU`.  --instr: also count each
# command's instructions once (valgrind --tool=cachegrind --cache-sim=no):
# deterministic where wall and CPU times on a shared machine are not.
# The load average before and after the timing is printed with the table.
#
# --prefix DIR: an installed ballarus (`bazel run //:install -- DIR`);
# default: installed from this checkout into WORK/prefix.  --quick: 1000
# functions in 4 files, 1 run, no verdict (the harness checks itself; see
# //bench:scale_quick_test).
set -euo pipefail

functions=30000
files=60
runs=3
quick=0
pin=
instr=0
prefix=
work=
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

while [ $# -gt 0 ]; do
  case "$1" in
    --functions) functions=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --instr) instr=1; shift ;;
    --quick) quick=1; functions=1000; files=4; runs=1; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/ballarus-scale.XXXXXX")
mkdir -p "$work"
work=$(cd "$work" && pwd)
command -v /usr/bin/time >/dev/null || { echo "scale.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }

if [ -z "$prefix" ]; then
  prefix=$work/prefix
  echo "scale.sh: installing ballarus into $prefix" >&2
  (cd "$here/.." && bazel ${BAZEL_STARTUP_OPTS:-} run --jobs=2 //:install -- "$prefix" >&2)
fi
recon=$prefix/bin/ballarus-reconstruct
cc=$prefix/bin/ballarus-gcc
[ -x "$recon" ] && [ -x "$cc" ] || { echo "scale.sh: $prefix: no ballarus installation" >&2; exit 2; }

echo "scale.sh: generating $functions functions in $files files" >&2
rm -rf "$work/src" "$work/build"
python3 "$here/scale/gen_program.py" "$work/src" --functions "$functions" --files "$files"
mkdir -p "$work/build"
echo "scale.sh: compiling (2 jobs)" >&2
(cd "$work/build" && ls "$work"/src/*.c | nice xargs -P2 -I{} sh -c \
  'f={}; "$0" -O0 -c "$f" -o "$(basename "$f" .c).o"' "$cc")
(cd "$work/build" && "$cc" -o prog ./*.o && rm -f ballarus.profile &&
  BALLARUS_PROFILE="$work/build/ballarus.profile" ./prog >/dev/null)
profile=$work/build/ballarus.profile

# Sizes: functions, blocks, edges.
read -r n_functions n_blocks n_edges < <("$recon" stats --json "$profile" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["total"]
print(len(d["functions"]), t["blocks"], t["edges"])')

# measure NAME CMD...: R runs; median wall, its CPU and peak RSS.
measure() {
  local name=$1; shift
  local samples=()
  for _ in $(seq "$runs"); do
    local t
    ${pin:+taskset -c "$pin"} /usr/bin/time -o "$work/time.txt" -f '%e %U %S %M' "$@" >/dev/null 2>&1
    t=$(tail -1 "$work/time.txt")
    samples+=("$t")
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p" | {
    read -r wall user sys rss
    cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
    echo "$name $wall $cpu $((rss / 1024))"
  }
}

echo "scale.sh: timing ($runs runs each${pin:+, pinned to CPU $pin})" >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
show=$(measure "show --json" "$recon" show --json "$profile")
rm -rf "$work/html"
html=$(measure "html" "$recon" html "$profile" -o "$work/html")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
json_size=$("$recon" show --json "$profile" | wc -c)

# instructions NAME CMD...: cachegrind's I refs of one run (no cache model).
instructions() {
  local out=$work/cg.$1; shift
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    --log-file="$out" "$@" >/dev/null 2>&1 || { echo "?"; return; }
  sed -n 's/.*I *refs: *//p' "$out" | tr -d ,
}
s_instr=- h_instr=-
if [ "$instr" = 1 ]; then
  command -v valgrind >/dev/null || { echo "scale.sh: --instr needs valgrind" >&2; exit 2; }
  echo "scale.sh: counting instructions (valgrind, once each)" >&2
  s_instr=$(instructions show "$recon" show --json "$profile")
  rm -rf "$work/html-cg"
  h_instr=$(instructions html "$recon" html "$profile" -o "$work/html-cg")
fi
gi() {  # instructions in units of 10^9
  case "$1" in ''|-|\?) echo "$1" ;; *) python3 -c "print(f'{$1 / 1e9:.2f} G')" ;; esac
}

read -r _ _ s_wall s_cpu s_mb <<<"$show"
read -r _ h_wall h_cpu h_mb <<<"$html"
cat <<EOF
| profile | functions | blocks | edges | profile size |
|---|---:|---:|---:|---:|
| generated, $functions functions | $n_functions | $n_blocks | $n_edges | $(($(stat -c %s "$profile") / 1024)) KiB |

| command | wall (median of $runs) | CPU (user+sys) | peak memory | instructions | limit |
|---|---:|---:|---:|---:|---|
| \`show --json\` ($((json_size / 1048576)) MiB of JSON) | ${s_wall} s | ${s_cpu} s | ${s_mb} MiB | $(gi "$s_instr") | 2 s, 300 MB |
| \`html\` ($(ls "$work/html" | wc -l) files) | ${h_wall} s | ${h_cpu} s | ${h_mb} MiB | $(gi "$h_instr") | 15 s |

Load average (1, 5, 15 min) before the timing: $load_before; after: $load_after$( [ -n "$pin" ] && echo "; pinned: taskset -c $pin").
EOF
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $("$recon" --version)" >&2
[ "$quick" = 1 ] && exit 0
python3 - "$s_cpu" "$s_mb" "$h_cpu" <<'PY'
import sys
s_cpu, s_mb, h_cpu = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
bad = []
if s_cpu > 2: bad.append(f"show --json took {s_cpu} s of CPU (limit 2 s)")
if s_mb * 1048576 > 300e6: bad.append(f"show --json used {s_mb} MiB (limit 300 MB)")
if h_cpu > 15: bad.append(f"html took {h_cpu} s of CPU (limit 15 s)")
for b in bad: print("scale.sh: over the limit: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
