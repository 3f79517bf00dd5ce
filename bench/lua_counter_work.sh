#!/usr/bin/env bash
# lua_counter_work.sh — counter work of every ballarus edge-weighting choice
# and of gcov on the same real program and workload (issue: optimal edge
# profiling; the full benchmark suite with timings is bench's own issue).
#
#   bash bench/lua_counter_work.sh [CACHE_DIR]
#
# Fetches Debian's lua5.4 source with `apt-get source --download-only`
# (deb-src configured in a private directory; the machine's apt config is
# untouched) into CACHE_DIR (default ~/.cache/ballarus-bench), builds lua at
# -O2 plain, with gcov (-fprofile-arcs), and with ballarus in naive mode and
# edge mode for weights=uniform|heuristic|gcc|profile=(naive run's profile),
# runs bench/lua/workload.lua with each, checks every output equals the plain
# build's and that every edge profile equals the naive one, and prints a
# markdown table of static counters and dynamic increments.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${1:-$HOME/.cache/ballarus-bench}
mkdir -p "$cache"
cd "$here"
bazel build //plugin:ballarus.so //runtime:ballarus_rt_archive \
  //reconstruct:ballarus-reconstruct >/dev/null 2>&1
bin=$(bazel info bazel-bin 2>/dev/null)
plugin=$bin/plugin/ballarus.so
rt=$bin/runtime/archive/libballarus_rt.a
recon=$bin/reconstruct/ballarus-reconstruct
workload=$here/bench/lua/workload.lua

# --- source ---------------------------------------------------------------
src=$(ls -d "$cache"/lua-5.4.*/ 2>/dev/null | head -n 1 || true)
if [ -z "$src" ]; then
  apt_dir=$cache/apt
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial"
  cat >"$apt_dir/sources.list.d/deb-src.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  opts=(-o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
        -o "Dir::State::Lists=$apt_dir/lists")
  apt-get "${opts[@]}" update -qq
  (cd "$cache" && apt-get "${opts[@]}" source --download-only lua5.4 >/dev/null)
  (cd "$cache" && tar xzf lua5.4_*.orig.tar.gz)
  src=$(ls -d "$cache"/lua-5.4.*/ | head -n 1)
fi

work=${BENCH_WORK:-$(mktemp -d)}
[ -n "${BENCH_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

build() {  # build NAME CC MYLIBS
  rm -rf "$work/$1" && cp -r "$src" "$work/$1"
  # Lua hashes some pointers (llimits.h point2uint: the C-string cache of
  # luaS_new, pointer keys in tables); the addresses of string literals
  # differ between builds whose instrumentation differs, and so would the
  # hash collisions and the counts.  Hash every pointer to 0 instead: the
  # caches still compare contents, so behaviour is unchanged, only
  # address-independent.
  sed -i 's|^#define point2uint(p).*|#define point2uint(p)\t0u  /* ballarus bench: address-independent */|' \
    "$work/$1/src/llimits.h"
  # A fixed string-hash seed (lstate.c otherwise mixes time and addresses
  # into it) and a fixed sort-pivot randomizer (ltablib.c otherwise reads
  # clock() and time()) make every build execute the same code the same
  # number of times, so profiles of different builds are comparable.
  make -s -C "$work/$1/src" -j2 linux CC="$2" MYLIBS="$3" \
    MYCFLAGS="-O2 '-Dluai_makeseed(L)=0x2545F491u' '-Dl_randomizePivot()=0u'" \
    >"$work/$1.log" 2>&1 || { cat "$work/$1.log"; exit 1; }
}
run() {  # run NAME -> stdout in $work/NAME.out, profile in $work/NAME.profile
  # Every variant runs as the same path: lua interns argv[0], and a name of
  # another length would change its string table.
  mkdir -p "$work/bin" && cp "$work/$1/src/lua" "$work/bin/lua"
  (cd "$work" && BALLARUS_PROFILE="$work/$1.profile" \
     "$work/bin/lua" "$workload" >"$work/$1.out")
  cmp -s "$work/plain.out" "$work/$1.out" ||
    { echo "$1: output differs from the plain build" >&2; exit 1; }
}
counts() {  # every edge and block count of a profile, for equality checks
  "$recon" show --json "$1" |
    python3 -c 'import json,sys
j=json.load(sys.stdin)
for f in j["functions"]:
  print(f["name"], [e["count"] for e in f["edges"]], [b["count"] for b in f["blocks"]])'
}

build plain gcc ""
mkdir -p "$work/bin" && cp "$work/plain/src/lua" "$work/bin/lua"
(cd "$work" && "$work/bin/lua" "$workload" >"$work/plain.out")
build gcov "gcc -fprofile-arcs -ftest-coverage" ""
cp "$work/gcov/src/lua" "$work/bin/lua"
(cd "$work" && "$work/bin/lua" "$workload" >"$work/gcov.out")
cmp -s "$work/plain.out" "$work/gcov.out" || { echo "gcov output differs" >&2; exit 1; }

variants=(naive edge-uniform edge-heuristic edge-gcc edge-profile)
for v in "${variants[@]}"; do
  case $v in
    naive) args="-fplugin-arg-ballarus-mode=naive" ;;
    edge-profile) args="-fplugin-arg-ballarus-mode=edge -fplugin-arg-ballarus-weights=profile=$work/naive.profile" ;;
    *) args="-fplugin-arg-ballarus-mode=edge -fplugin-arg-ballarus-weights=${v#edge-}" ;;
  esac
  build "$v" "gcc -fplugin=$plugin $args" "$rt -lpthread"
  run "$v"
  "$recon" verify "$work/$v.profile" >/dev/null
done
counts "$work/naive.profile" >"$work/naive.counts"
for v in "${variants[@]:1}"; do
  counts "$work/$v.profile" >"$work/$v.counts"
  cmp -s "$work/naive.counts" "$work/$v.counts" ||
    { echo "$v: reconstructed profile differs from naive" >&2; exit 1; }
done

gcdas=$(ls "$work"/gcov/src/*.gcda)
echo "| variant | static counters | dynamic increments | increments vs gcov |"
echo "|---|---:|---:|---:|"
# shellcheck disable=SC2086
g=$("$recon" stats --json "$work/naive.profile" --gcov $gcdas |
    python3 -c 'import json,sys; t=json.load(sys.stdin)["gcov"]["total"]; print(t["static_counters"], t["dynamic_increments"])')
read -r gs gi <<<"$g"
for v in "${variants[@]}"; do
  read -r s i < <("$recon" stats --json "$work/$v.profile" |
    python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["static_counters"], t["dynamic_increments"])')
  printf '| ballarus %s | %s | %s | %.3f |\n' "$v" "$s" "$i" "$(echo "$i / $gi" | bc -l)"
done
printf '| gcov -fprofile-arcs | %s | %s | 1.000 |\n' "$gs" "$gi"
echo
echo "workload: bench/lua/workload.lua; lua $(basename "$src"); $(gcc --version | head -n 1); all outputs equal the plain build's; every edge profile equals the naive profile"
