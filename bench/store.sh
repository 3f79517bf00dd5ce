#!/usr/bin/env bash
# store.sh — what writing profiles costs: many processes into one profile,
# and a real C++ test suite under ctest, ballarus against gcov.
#
#   bash bench/store.sh [--prefix DIR] [--cache DIR] [--work DIR]
#                       [--procs N] [--parallel P] [--reps R] [--no-fmt]
#                       [--out FILE]
#
# (a) N processes (default 1000, P at a time, default 4) of the bundled
#     bench/store/procs.c (one translation unit, about a millisecond of
#     branchy work each) write into one profile: the default place
#     (procs.bprof beside the object), and one file pooled with
#     BALLARUS_PROFILE.  Checks that the
#     profile counts exactly N runs of every function, and reports the CPU
#     time of all N processes (user + system, children's rusage) for: the
#     plain build, gcov (-fprofile-arcs, one .gcda), ballarus with
#     BALLARUS_PROFILE=/dev/null (counting, never dumping), ballarus
#     writing.  Dump cost per process = (writing - /dev/null) / N.
# (b) fmt 9.1.0 (Debian's fmtlib source, `apt-get source --download-only`
#     with a private deb-src configuration in CACHE/apt, as bench/run.sh
#     does; Debian's patch to build against the system googletest applied)
#     is configured with CMake and built three times: plain g++, g++
#     --coverage (gcov), and the installed ballarus-gcc/ballarus-g++ (no
#     variable set: every object's profile lands beside it).  Then `ctest
#     -j1` runs R times per build (interleaved; the profiles of the previous
#     repetition removed first, so every repetition is a fresh `make
#     check`), then R times more accumulating into the profiles, and the CPU
#     time of ctest and its children is compared: the instrumented suite
#     over the plain one, ballarus beside gcov.  Every
#     build must pass every test; the ballarus profiles must all be read by
#     ballarus-reconstruct.
#
# Results (markdown) go to stdout or --out FILE (with the load average at
# start and end); progress to stderr.  On a shared machine, pin it:
# `taskset -c 1 bash bench/store.sh ...` (every figure is CPU time, so one
# CPU for all its processes changes none; the header says it was pinned).
# A CMake build with a .built marker in WORK/fmt/VARIANT is reused, e.g. a
# plain and a gcov build made earlier with the commands below.
# Sources are cached in CACHE/src (default ~/.cache/ballarus-bench), builds
# in WORK (default CACHE/work-store); nothing lands in the repository.
set -euo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname -- "$here")

say() { printf 'store.sh: %s\n' "$*" >&2; }
die() { printf 'store.sh: error: %s\n' "$*" >&2; exit 1; }

prefix='' cache='' work='' procs=1000 parallel=4 reps=3 fmt=1 out=''
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-fmt) fmt=0; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "store.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
[ -n "$cache" ] || cache=${HOME:?HOME is not set: pass --cache}/.cache/ballarus-bench
[ -n "$work" ] || work=$cache/work-store
mkdir -p "$cache/src" "$work"
cache=$(cd "$cache" && pwd) work=$(cd "$work" && pwd)

if [ -z "$prefix" ]; then
  prefix=$work/prefix
  say "installing ballarus into $prefix"
  (cd "$repo" && bazel run --jobs=2 //:install -- "$prefix") >"$work/install.log" 2>&1 \
    || { tail -n 20 "$work/install.log" >&2; die "bazel run //:install failed"; }
fi
prefix=$(cd "$prefix" && pwd)
BGCC=$prefix/bin/ballarus-gcc BGXX=$prefix/bin/ballarus-g++
RECON=$prefix/bin/ballarus-reconstruct
for t in "$BGCC" "$BGXX" "$RECON"; do [ -x "$t" ] || die "no $t"; done

# cpu.py: runs commands, P at a time, and prints the summed user+system CPU
# seconds of every process they started (RUSAGE_CHILDREN) and the wall time.
PY=$work/cpu.py
cat >"$PY" <<'EOF'
import os, resource, subprocess, sys, time
# usage: cpu.py P N CMD...   (runs CMD N times, P at a time; CMD may use {i})
#        cpu.py 1 1 CMD...   (one command)
p, n, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
running, started, failed = [], 0, 0
while started < n or running:
    while started < n and len(running) < p:
        running.append(subprocess.Popen([a.replace("{i}", str(started)) for a in cmd],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        started += 1
    proc = running.pop(0)
    _, err = proc.communicate()
    if proc.returncode != 0 or err:
        failed += 1
        sys.stderr.write("cpu.py: %s exited %d: %s\n" % (cmd[0], proc.returncode, err.decode()[:300]))
wall = time.monotonic() - t0
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print("%.3f %.3f %d" % (cpu, wall, failed))
EOF

median() { python3 -c 'import statistics,sys; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }

results=$work/results.md
# " (of N, pinned by taskset)" when this shell may not use every CPU.
pinned() {
  local all; all=$(nproc --all)
  [ "$(nproc)" = "$all" ] || echo " (of $all, pinned by taskset)"
}
{
  echo "# bench/store.sh results"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(uname -srm), $(nproc) CPUs$(pinned), $(gcc --version | head -n 1), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
} >"$results"

# ------------------------------------------------------------------ (a)
say "(a) $procs processes of procs.c into one profile, $parallel at a time"
A=$work/procs
rm -rf "$A" && mkdir -p "$A"/{plain,gcov,ballarus,pool,off}
for v in plain gcov ballarus pool off; do
  case $v in
    plain) cc="gcc -O2" ;;
    gcov) cc="gcc -O2 -fprofile-arcs" ;;
    *) cc="$BGCC -O2" ;;
  esac
  (cd "$A/$v" && $cc -c "$here/store/procs.c" -o procs.o && $cc -o procs procs.o) \
    || die "(a) building $v failed"
done
expected=$("$A/plain/procs")
declare -A ACPU AWALL
for v in plain gcov off ballarus pool; do
  env_=(env -u BALLARUS_PROFILE)
  case $v in
    off) env_=(env BALLARUS_PROFILE=/dev/null) ;;
    pool) env_=(env BALLARUS_PROFILE="$A/pool/pool.profile") ;;
  esac
  [ "$("${env_[@]}" "$A/$v/procs")" = "$expected" ] || die "(a) $v: output differs from plain"
  rm -f "$A/$v"/*.gcda "$A/$v"/*.bprof "$A/$v"/*.profile
  read -r c w f < <("${env_[@]}" python3 "$PY" "$parallel" "$procs" "$A/$v/procs")
  [ "$f" = 0 ] || die "(a) $v: $f processes failed"
  ACPU[$v]=$c AWALL[$v]=$w
  say "  $v: cpu ${c}s wall ${w}s"
done
# Exact counts: every function of procs.c ran in all N processes.
check_runs() {
  local prof=$1
  "$RECON" show --json "$prof" >"$A/show.json" || die "(a) $prof does not load"
  python3 - "$A/show.json" "$procs" <<'EOF' || die "(a) $1: counts not exact"
import json, sys
doc, n = json.load(open(sys.argv[1])), int(sys.argv[2])
counts = {f["name"]: f["execution_count"] for f in doc["functions"]}
assert doc["runs"] == n, ("runs", doc["runs"])
assert counts["main"] == n, ("main", counts["main"])
EOF
}
check_runs "$A/ballarus/procs.bprof"
check_runs "$A/pool/pool.profile"
# The same counts as one process with all the work: every count is N times
# a single run's.
python3 - "$A" "$procs" "$RECON" <<'EOF' || die "(a) counts are not N times one run's"
import json, subprocess, sys, os, shutil
a, n, recon = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def counts(p):
    doc = json.loads(subprocess.check_output([recon, "show", "--json", p]))
    return {(f["name"], e["src"], e["dst"]): e["count"] for f in doc["functions"] for e in f["edges"]}
many = counts(os.path.join(a, "pool", "pool.profile"))
single = os.path.join(a, "single.profile")
if os.path.exists(single): os.remove(single)
subprocess.check_call([os.path.join(a, "ballarus", "procs")], stdout=subprocess.DEVNULL,
                      env=dict(os.environ, BALLARUS_PROFILE=single))
one = counts(single)
bad = [k for k in one if one[k] is not None and many[k] != n * one[k]]
assert not bad, bad[:5]
print("checked %d edge counts" % len(one), file=sys.stderr)
EOF
per_dump=$(python3 -c "print('%.3f' % ((${ACPU[ballarus]} - ${ACPU[off]}) * 1000 / $procs))")
per_pool=$(python3 -c "print('%.3f' % ((${ACPU[pool]} - ${ACPU[off]}) * 1000 / $procs))")
per_gcov=$(python3 -c "print('%.3f' % ((${ACPU[gcov]} - ${ACPU[plain]}) * 1000 / $procs))")
{
  echo "## (a) $procs processes into one profile ($parallel at a time)"
  echo
  echo "bench/store/procs.c (one TU), one \`procs\` per process; CPU = user + system of all processes."
  echo
  echo "| build | CPU s | wall s | profile |"
  echo "|---|---:|---:|---|"
  echo "| plain gcc -O2 | ${ACPU[plain]} | ${AWALL[plain]} | — |"
  echo "| gcov -fprofile-arcs | ${ACPU[gcov]} | ${AWALL[gcov]} | procs.gcda |"
  echo "| ballarus, BALLARUS_PROFILE=/dev/null (counts, never dumps) | ${ACPU[off]} | ${AWALL[off]} | none |"
  echo "| ballarus, default (procs.bprof beside procs.o) | ${ACPU[ballarus]} | ${AWALL[ballarus]} | $(stat -c %s "$A/ballarus/procs.bprof") bytes |"
  echo "| ballarus, BALLARUS_PROFILE=pool.profile | ${ACPU[pool]} | ${AWALL[pool]} | $(stat -c %s "$A/pool/pool.profile") bytes |"
  echo
  echo "Counts exact: runs = main's count = $procs in both profiles, every edge count $procs times one run's."
  echo "Dump cost per process: ballarus ${per_dump} ms (pooled ${per_pool} ms); gcov's whole instrumentation + dump over plain: ${per_gcov} ms."
  echo
} >>"$results"

# ------------------------------------------------------------------ (b)
if [ "$fmt" = 1 ]; then
  APT_DIR=$cache/apt
  apt_private() {
    apt-get -o "Dir::Etc::SourceList=/dev/null" \
            -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d" \
            -o "Dir::State::Lists=$APT_DIR/lists" \
            -o "Dir::Cache=$APT_DIR/cache" \
            -o "APT::Sandbox::User=root" "$@"
  }
  if ! compgen -G "$cache/src/fmtlib_*.orig.tar.*" >/dev/null; then
    command -v apt-get >/dev/null || die "fetching fmt's source needs apt"
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
    cat >"$APT_DIR/sources.list.d/deb-src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    say "apt-get update (private deb-src configuration in $APT_DIR)"
    apt_private update -qq >&2 || die "apt-get update failed (network?)"
    say "apt-get source --download-only fmtlib"
    (cd "$cache/src" && apt_private source --download-only fmtlib >&2) || die "apt-get source fmtlib failed"
  fi
  [ -d /usr/src/googletest ] || die "fmt's tests build against /usr/src/googletest: apt-get install googletest"
  command -v cmake >/dev/null && command -v ctest >/dev/null || die "needs cmake (apt-get install cmake)"
  gen=(-G "Unix Makefiles"); command -v ninja >/dev/null && gen=(-G Ninja)
  FSRC=$work/fmt-src
  if [ ! -f "$FSRC/.patched" ]; then
    rm -rf "$FSRC" && mkdir -p "$FSRC"
    tar xf "$(compgen -G "$cache/src/fmtlib_*.orig.tar.*" | head -n 1)" -C "$FSRC" --strip-components=1
    tar xf "$(compgen -G "$cache/src/fmtlib_*.debian.tar.*" | head -n 1)" -C "$FSRC"
    (cd "$FSRC" && while read -r p; do
       case "$p" in ''|'#'*) continue ;; esac
       patch -p1 -s <"debian/patches/$p" || exit 1
     done <debian/patches/series) || die "applying Debian's patches to fmt failed"
    touch "$FSRC/.patched"
  fi
  fver=$(sed -n 's/^Version: //p' "$(compgen -G "$cache/src/fmtlib_*.dsc" | head -n 1)")
  B=$work/fmt
  declare -A BCPU
  for v in plain gcov ballarus; do
    d=$B/$v
    if [ ! -f "$d/.built" ]; then
      rm -rf "$d" && mkdir -p "$d"
      case $v in
        plain) cfg=(-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++) ;;
        gcov) cfg=(-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
                   -DCMAKE_C_FLAGS=--coverage -DCMAKE_CXX_FLAGS=--coverage
                   -DCMAKE_EXE_LINKER_FLAGS=--coverage) ;;
        ballarus) cfg=(-DCMAKE_C_COMPILER="$BGCC" -DCMAKE_CXX_COMPILER="$BGXX") ;;
      esac
      say "(b) building fmt $fver: $v"
      read -r c w f < <(python3 "$PY" 1 1 sh -c "cmake -S '$FSRC' -B '$d' ${gen[*]} -DCMAKE_BUILD_TYPE=Release -DFMT_TEST=ON -DFMT_DOC=OFF ${cfg[*]} >'$d.cmake.log' 2>&1 && cmake --build '$d' -j2 >'$d.build.log' 2>&1")
      [ "$f" = 0 ] || { tail -n 30 "$d.build.log" "$d.cmake.log" >&2 2>/dev/null; die "(b) building fmt ($v) failed"; }
      BCPU[$v]=$c
      touch "$d/.built"
    fi
  done
  ntests=$(cd "$B/plain" && ctest -N | sed -n 's/^Total Tests: //p')
  declare -A CT CA
  # Fresh: every repetition starts without profiles (a first `make check`).
  for r in $(seq "$reps"); do
    for v in plain gcov ballarus; do
      d=$B/$v
      find "$d" \( -name '*.gcda' -o -name '*.bprof' -o -name '*.bprof.*' \) -delete
      read -r c w f < <(cd "$d" && env -u BALLARUS_PROFILE python3 "$PY" 1 1 ctest -j1 --output-on-failure -Q)
      [ "$f" = 0 ] || die "(b) ctest failed for $v"
      CT[$v]+=" $c"
      say "  rep $r $v (fresh): ctest cpu ${c}s (wall ${w}s)"
    done
  done
  # Accumulating: the profiles of the previous runs are there (every later
  # `make check`: each process merges into existing files).
  for r in $(seq "$reps"); do
    for v in plain gcov ballarus; do
      d=$B/$v
      read -r c w f < <(cd "$d" && env -u BALLARUS_PROFILE python3 "$PY" 1 1 ctest -j1 --output-on-failure -Q)
      [ "$f" = 0 ] || die "(b) ctest failed for $v"
      CA[$v]+=" $c"
      say "  rep $r $v (accumulating): ctest cpu ${c}s (wall ${w}s)"
    done
  done
  nprof=$(find "$B/ballarus" -name '*.bprof' | wc -l)
  psize=$(find "$B/ballarus" -name '*.bprof' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
  strays=$(find "$B/ballarus" \( -name '*.bprof.*' -o -name 'ballarus.profile*' \) | wc -l)
  [ "$strays" = 0 ] || die "(b) stray profile files in the ballarus build"
  bad=0
  while read -r p; do "$RECON" verify "$p" >/dev/null 2>&1 || { say "does not verify: $p"; bad=$((bad + 1)); }; done \
    < <(find "$B/ballarus" -name '*.bprof')
  [ "$bad" = 0 ] || die "(b) $bad ballarus profiles do not verify"
  ngcda=$(find "$B/gcov" -name '*.gcda' | wc -l)
  mp=$(median ${CT[plain]}) mg=$(median ${CT[gcov]}) mb=$(median ${CT[ballarus]})
  ap=$(median ${CA[plain]}) ag=$(median ${CA[gcov]}) ab=$(median ${CA[ballarus]})
  {
    echo "## (b) fmt $fver test suite under ctest"
    echo
    echo "CMake, Release (-O3), \`ctest -j1\`, $ntests tests, each build passing all; CPU of ctest and every test process, median of $reps interleaved repetitions: *fresh* with the profiles removed before each (a first \`make check\`), then *accumulating* into the profiles of the runs before (every later one)."
    echo
    echo "| build | fresh: ctest CPU s (runs) | over plain | accumulating: CPU s (runs) | over plain |"
    echo "|---|---|---:|---|---:|"
    echo "| plain g++ | $mp (${CT[plain]# }) | 1.00 | $ap (${CA[plain]# }) | 1.00 |"
    echo "| gcov (--coverage) | $mg (${CT[gcov]# }) | $(ratio "$mg" "$mp") | $ag (${CA[gcov]# }) | $(ratio "$ag" "$ap") |"
    echo "| ballarus-g++ (edge) | $mb (${CT[ballarus]# }) | $(ratio "$mb" "$mp") | $ab (${CA[ballarus]# }) | $(ratio "$ab" "$ap") |"
    echo
    echo "ballarus: $nprof profiles beside their objects ($psize bytes), every one verifies, no stray file; gcov: $ngcda .gcda files."
    [ -z "${BCPU[plain]:-}" ] || echo "Build CPU (this run): plain ${BCPU[plain]} s, gcov ${BCPU[gcov]:-?} s, ballarus ${BCPU[ballarus]:-?} s."
    echo
  } >>"$results"
fi

echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$results"
if [ -n "$out" ]; then cp "$results" "$out"; say "results in $out"; else cat "$results"; fi
