#!/usr/bin/env bash
# new_user_check.sh — what a new user meets, checked: three real projects,
# each built three times from its Debian orig tarball (plain, gcov, and the
# installed ballarus wrappers), its own test suite run in each build, and
# ballarus' reports set against gcov + lcov's for the same run.
#
#   scripts/new_user_check.sh [--prefix DIR] [--projects "gzip expat jsoncpp"]
#                             [--quick] [--cache DIR] [--work DIR] [--jobs N]
#
#   gzip 1.12     autotools: ./configure && make && make check
#   expat 2.5.0   CMake: cmake && make && ctest
#   jsoncpp 1.9.5 CMake, C++: cmake && make && ctest
#
# The gcov build adds --coverage; the ballarus build uses CC/CXX =
# PREFIX/bin/ballarus-gcc/g++, or for CMake the toolchain file
# PREFIX/lib/cmake/Ballarus/ballarus-toolchain.cmake when installed.
# Checks, each printed PASS or FAIL with its figures:
#   * tests      every test passes, in every build;
#   * results    the test results and outputs equal the plain build's;
#   * configure  configure's results equal the plain build's (config.h, or
#                CMake's checks and generated headers);
#   * stderr     the build and the tests say on stderr what plain's say;
#   * stray      no file the plain build lacks but gcov's data (.gcno,
#                .gcda) and ballarus' profiles (.bprof);
#   * archiver   CMake found gcc-ar and gcc-ranlib for the wrappers;
#   * totals     `lcov --summary` of `ballarus-reconstruct lcov` (default
#                filters) equals that of `lcov --capture` over gcov's data
#                (files of the project tree, lcov's exclusion markers):
#                lines, functions, branches;
#   * runs       the run count of one source (gcov's `Runs:`) equals gcov's;
#   * html       (expat) `ballarus-reconstruct html` with defaults finishes
#                in under 10 s, and lists every function once (a function of two
#                different builds once per build, labelled).
# The exit status is 1 when a check fails, 2 on a usage or setup error.
#
# Sources come from the cache (default ~/.cache/ballarus-src/src), fetched
# there once with bench/lib/programs.sh's `fetch` (apt-get source with a
# private deb-src list; needs the network once).  Builds go to --work
# (default: a new directory under /tmp, kept for inspection).  Without
# --prefix, ballarus is installed from this tree (`bazel run //:install`)
# into WORK/prefix.  --quick checks expat alone (about a minute and a half
# of builds on two cores; all three take several minutes).
set -uo pipefail

prog=new_user_check
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

say() { printf '[%s] %s\n' "$prog" "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 2; }

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed -e '/^set -uo/d' -e 's/^# \{0,1\}//'
  exit "${1:-0}"
}

prefix='' projects='gzip expat jsoncpp' cache='' work='' jobs=2 quick=0
html_budget=10
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?}; shift ;;
    --projects) projects=${2:?}; shift ;;
    --cache) cache=${2:?}; shift ;;
    --work) work=${2:?}; shift ;;
    --jobs) jobs=${2:?}; shift ;;
    --quick) quick=1 ;;
    -h|--help) usage 0 ;;
    *) printf '%s: unknown argument %s\n' "$prog" "$1" >&2; usage 2 ;;
  esac
  shift
done
[ "$quick" = 1 ] && projects=expat
[ -n "$cache" ] || cache=${HOME:-/root}/.cache/ballarus-src
[ -n "$work" ] || work=$(mktemp -d /tmp/ballarus-new-user.XXXXXX)
mkdir -p "$work" "$cache" || die "cannot create $work or $cache"
work=$(cd "$work" && pwd) cache=$(cd "$cache" && pwd)

# bench/lib/programs.sh's fetch reads $cache and $quick (0: may download).
# shellcheck source=../bench/lib/programs.sh
quick_saved=$quick; quick=0
. "$repo/bench/lib/programs.sh"
quick=$quick_saved

for tool in gcc g++ make cmake ctest lcov gcov python3; do
  need_tool "$tool" "apt-get install -y gcc g++ make cmake lcov python3"
done

# ------------------------------------------------------------ results
passed=0 failed=0
summary=''
check() {  # check PROJECT NAME pass|fail DETAIL
  local mark=PASS
  if [ "$3" = pass ]; then passed=$((passed + 1)); else mark=FAIL failed=$((failed + 1)); fi
  local line
  line=$(printf '%s  %-8s %-10s %s' "$mark" "$1" "$2" "$4")
  printf '%s\n' "$line"
  summary+="$line"$'\n'
}

# ------------------------------------------------------------ install
if [ -z "$prefix" ]; then
  prefix=$work/prefix
  say "installing ballarus from $repo into $prefix"
  (cd "$repo" && bazel run //:install -- "$prefix") >"$work/install.log" 2>&1 \
    || die "bazel run //:install failed: $work/install.log"
fi
prefix=$(cd "$prefix" && pwd) || die "no prefix $prefix"
recon=$prefix/bin/ballarus-reconstruct
if [ ! -x "$recon" ] || [ ! -x "$prefix/bin/ballarus-gcc" ]; then
  die "$prefix holds no ballarus install"
fi
toolchain=$prefix/lib/cmake/Ballarus/ballarus-toolchain.cmake
[ -f "$toolchain" ] || toolchain=''

# ------------------------------------------------------------ projects
# Per project: its Debian source package and tarball directory, how to
# build and test it, the source whose run count is compared.
package_of() { case $1 in gzip) echo gzip ;; expat) echo expat ;; jsoncpp) echo libjsoncpp ;; esac; }
runs_source_of() { case $1 in gzip) echo gzip.c ;; expat) echo xmlparse.c ;; jsoncpp) echo json_reader.cpp ;; esac; }

# The compiler settings of a build kind, as environment assignments.
kind_env() {  # kind_env KIND
  case $1 in
    plain) echo "CC=gcc CXX=g++" ;;
    gcov) echo "CC=gcc CXX=g++" ;;
    ballarus) echo "CC=$prefix/bin/ballarus-gcc CXX=$prefix/bin/ballarus-g++" ;;
  esac
}

# cmake's configure command line for a kind (run in the build directory).
cmake_args() {  # cmake_args KIND SRCDIR EXTRA...
  local kind=$1 src=$2; shift 2
  local args=("$src" "$@")
  case $kind in
    gcov) args+=(-DCMAKE_C_FLAGS=--coverage -DCMAKE_CXX_FLAGS=--coverage
                 -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage) ;;
    ballarus) [ -n "$toolchain" ] && args+=("-DCMAKE_TOOLCHAIN_FILE=$toolchain") ;;
  esac
  printf '%s\n' "${args[@]}"
}

# Builds and tests one kind of project P in $tree; logs in $tree/../logs.
# Sets nothing; each step's status goes to logs/STEP.status.
build_gzip() {  # build_gzip KIND TREE LOGS
  local kind=$1 tree=$2 logs=$3 cflags='-g -O2'
  [ "$kind" = gcov ] && cflags+=' --coverage'
  # shellcheck disable=SC2046
  (cd "$tree" && env $(kind_env "$kind") ./configure CFLAGS="$cflags") \
    >"$logs/configure.out" 2>"$logs/configure.err"
  echo $? >"$logs/configure.status"
  (cd "$tree" && nice make -j"$jobs") >"$logs/build.out" 2>"$logs/build.err"
  echo $? >"$logs/build.status"
  (cd "$tree" && nice make -j"$jobs" check) >"$logs/test.out" 2>"$logs/test.err"
  echo $? >"$logs/test.status"
}

build_cmake() {  # build_cmake KIND TREE LOGS SRCSUBDIR CMAKE-OPTION...
  local kind=$1 tree=$2 logs=$3 sub=$4; shift 4
  mkdir -p "$tree/build"
  local args
  mapfile -t args < <(cmake_args "$kind" "$tree/$sub" "$@")
  if [ "$kind" = ballarus ] && [ -n "$toolchain" ]; then
    (cd "$tree/build" && cmake "${args[@]}")
  else
    # shellcheck disable=SC2046
    (cd "$tree/build" && env $(kind_env "$kind") cmake "${args[@]}")
  fi >"$logs/configure.out" 2>"$logs/configure.err"
  echo $? >"$logs/configure.status"
  (cd "$tree/build" && nice make -j"$jobs") >"$logs/build.out" 2>"$logs/build.err"
  echo $? >"$logs/build.status"
  # One test at a time: ctest's log keeps its order.
  (cd "$tree/build" && nice ctest) >"$logs/test.out" 2>"$logs/test.err"
  echo $? >"$logs/test.status"
}

build_project() {  # build_project P KIND TREE LOGS
  case $1 in
    gzip) build_gzip "$2" "$3" "$4" ;;
    expat) build_cmake "$2" "$3" "$4" expat -DEXPAT_BUILD_DOCS=OFF ;;
    jsoncpp) build_cmake "$2" "$3" "$4" . -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF ;;
  esac
}

# Unpacks P's orig tarball into $work/P/KIND/src (fresh); path on stdout.
unpack_fresh() {  # unpack_fresh P KIND
  local pkg tarball dir
  pkg=$(package_of "$1")
  tarball=$(compgen -G "$cache/src/${pkg}_*.orig.tar.*" | grep -v '\.asc$' | head -n 1)
  [ -n "$tarball" ] || die "no orig tarball of $pkg in $cache/src"
  dir=$work/$1/$2
  rm -rf "$dir"
  mkdir -p "$dir/logs" || die "cannot create $dir"
  tar xf "$tarball" -C "$dir" || die "cannot unpack $tarball"
  local top
  top=$(find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name logs | head -n 1)
  mv "$top" "$dir/src" || die "cannot rename $top"
  echo "$dir/src"
}

# ------------------------------------------------------------ normalising
# A log with the build's own directory and compiler names made neutral.
normalise() {  # normalise FILE KIND-DIR
  sed -e "s|$2/src|@TREE@|g" -e "s|$prefix/bin/ballarus-gcc|@CC@|g" \
      -e "s|$prefix/bin/ballarus-g++|@CXX@|g" -e "s|/usr/bin/cc|@CC@|g" \
      -e "s|/usr/bin/c++|@CXX@|g" -e "s|/usr/bin/gcc|@CC@|g" \
      -e "s|/usr/bin/g++|@CXX@|g" "$1"
}

# The test results of a run: "NAME RESULT" lines, sorted.
test_results() {  # test_results P LOGS
  case $1 in
    gzip) grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): ' "$2/test.out" | sort ;;
    *) sed -n -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ *(\*\*\*)?([A-Za-z]+( [A-Za-z]+)?).*/\1 \3/p' \
         "$2/test.out" | sort ;;
  esac
}

# What the tests printed, without timings and directories.
test_outputs() {  # test_outputs P KIND-DIR
  local d=$2 tree=$2/src
  case $1 in
    # The tests' own output, not their shell traces (temporary names,
    # process ids, dd's speeds and dates made neutral).
    gzip) for f in "$tree"/tests/*.log; do
            [ "$(basename "$f")" = test-suite.log ] && continue
            echo "== $(basename "$f")"
            # Two traced processes of one pipeline can interleave their
            # trace lines ("+ + echo yyy" then "gzip"): drop such a tail.
            awk 'prev ~ /^\+ \+ / && /^[A-Za-z_.\/-]+$/ { prev = $0; next }
                 { prev = $0; print }' "$f" | grep -v '^+' |
              normalise /dev/stdin "$d" |
              sed -E -e 's/(gt-[^ /.]*)\.[A-Za-z0-9]{4}/\1.@TMP@/g' \
                     -e 's/[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}/@DATE@/g' \
                     -e 's/-[0-9]{3,7}\b/-@PID@/g' -e 's/copied, .*/copied/'
          done ;;
    *) normalise "$tree/build/Testing/Temporary/LastTest.log" "$d" |
         grep -v -E '(start|end) time:|time elapsed:|^(Start|End) testing:|Test time =' ;;
  esac
}

# configure's results: config.h, or CMake's checks and generated headers.
configure_results() {  # configure_results P KIND-DIR
  local d=$2 tree=$2/src
  case $1 in
    gzip) cat "$tree/config.h" ;;
    *) grep -E '^-- (Looking for|Performing Test|Check|Found)' "$d/logs/configure.out" |
         normalise /dev/stdin "$d"
       find "$tree/build" -maxdepth 2 -name '*config*.h' -exec cat {} + ;;
  esac
}

# Sorted, normalised stderr lines of the build and the tests.
stderr_lines() {  # stderr_lines KIND-DIR
  cat "$1/logs/configure.err" "$1/logs/build.err" "$1/logs/test.err" |
    normalise /dev/stdin "$1" | sort
}

files_of() {  # files_of KIND-DIR: every file of the tree, relative
  (cd "$1/src" && find . -type f | sort)
}

# ------------------------------------------------------------ checks
check_tests() {  # check_tests P
  local p=$1 detail='' ok=pass kind n bad
  for kind in plain gcov ballarus; do
    n=$(test_results "$p" "$work/$p/$kind/logs" | wc -l)
    bad=$(test_results "$p" "$work/$p/$kind/logs" | grep -c -v -E ' Passed$|^PASS: |^SKIP: |^XFAIL: ')
    detail+="$kind: $((n - bad))/$n passed (exit $(cat "$work/$p/$kind/logs/test.status")); "
    [ "$bad" = 0 ] && [ "$n" -gt 0 ] && [ "$(cat "$work/$p/$kind/logs/test.status")" = 0 ] || ok=fail
  done
  check "$p" tests "$ok" "${detail%; }"
}

# check_same P NAME FUNCTION: FUNCTION's text for ballarus against
# plain's (fails the check) and for gcov (said, for comparison: libgcov
# has its own noise, e.g. on configure's conftest).
check_same() {
  local p=$1 name=$2 fn=$3 ok=pass detail='' kind n
  "$fn" "$p" "$work/$p/plain" >"$work/$p/$name.plain" 2>/dev/null
  for kind in ballarus gcov; do
    "$fn" "$p" "$work/$p/$kind" >"$work/$p/$name.$kind" 2>/dev/null
    if cmp -s "$work/$p/$name.plain" "$work/$p/$name.$kind"; then
      detail+="$kind = plain; "
    else
      n=$(diff "$work/$p/$name.plain" "$work/$p/$name.$kind" | grep -c '^[<>]')
      detail+="$kind differs ($n lines: diff $work/$p/$name.plain $work/$p/$name.$kind); "
      [ "$kind" = ballarus ] && ok=fail
    fi
  done
  check "$p" "$name" "$ok" "$(wc -l <"$work/$p/$name.plain") lines; ${detail%; }"
}

results_of() { test_results "$1" "$2/logs"; }
outputs_of() { test_outputs "$1" "$2"; }
configure_of() { configure_results "$1" "$2"; }
stderr_of() { stderr_lines "$2"; }

check_stray() {  # check_stray P
  local p=$1 ok=pass detail='' kind extra missing
  files_of "$work/$p/plain" >"$work/$p/files.plain"
  for kind in gcov ballarus; do
    files_of "$work/$p/$kind" >"$work/$p/files.$kind"
    local allowed='\.bprof$'
    [ "$kind" = gcov ] && allowed='\.gcno$|\.gcda$'
    extra=$(comm -13 "$work/$p/files.plain" "$work/$p/files.$kind" | grep -v -E "$allowed")
    missing=$(comm -23 "$work/$p/files.plain" "$work/$p/files.$kind")
    detail+="$kind: $(comm -13 "$work/$p/files.plain" "$work/$p/files.$kind" | grep -c -E "$allowed") data files"
    if [ -n "$extra$missing" ]; then
      # gcov's build is shown, not judged (e.g. a CMake check failing
      # under --coverage leaves CMakeError.log).
      [ "$kind" = ballarus ] && ok=fail
      detail+=", $(printf '%s' "$extra" | grep -c .) stray ($(printf '%s' "$extra" | head -n 3 | tr '\n' ' '))"
      detail+=", $(printf '%s' "$missing" | grep -c .) missing ($(printf '%s' "$missing" | head -n 3 | tr '\n' ' '))"
    fi
    detail+='; '
  done
  check "$p" stray "$ok" "${detail%; }"
}

check_archiver() {  # check_archiver P (CMake projects)
  local cache_file=$work/$1/ballarus/src/build/CMakeCache.txt ar ranlib
  local lang=C
  grep -q '^CMAKE_C_COMPILER_AR:' "$cache_file" || lang=CXX  # a C++ project
  ar=$(sed -n "s/^CMAKE_${lang}_COMPILER_AR:[A-Z]*=//p" "$cache_file")
  ranlib=$(sed -n "s/^CMAKE_${lang}_COMPILER_RANLIB:[A-Z]*=//p" "$cache_file")
  if [[ $ar == *NOTFOUND* || -z $ar || $ranlib == *NOTFOUND* || -z $ranlib ]]; then
    check "$1" archiver fail "CMAKE_${lang}_COMPILER_AR=$ar CMAKE_${lang}_COMPILER_RANLIB=$ranlib"
  else
    check "$1" archiver pass "CMAKE_${lang}_COMPILER_AR=$ar CMAKE_${lang}_COMPILER_RANLIB=$ranlib"
  fi
}

# "lines 1234/1448 functions 80/90 branches 600/900" of a tracefile.
lcov_totals() {  # lcov_totals FILE
  lcov --summary "$1" --rc lcov_branch_coverage=1 2>&1 |
    sed -n -E 's/^ *(lines|functions|branches)\.*: [0-9.]+% \(([0-9]+) of ([0-9]+).*/\1 \2\/\3/p;
               s/^ *(lines|functions|branches)\.*: no data found/\1 0\/0/p' | tr '\n' ' '
}

check_totals() {  # check_totals P
  local p=$1
  local g=$work/$p/gcov/src b=$work/$p/ballarus/src out=$work/$p/reports
  mkdir -p "$out"
  if ! lcov -q --capture -d "$g" -o "$out/gcov-all.info" --rc lcov_branch_coverage=1 \
         >"$out/lcov.log" 2>&1 ||
     ! lcov -q --extract "$out/gcov-all.info" "$g/*" -o "$out/gcov.info" \
         --rc lcov_branch_coverage=1 >>"$out/lcov.log" 2>&1; then
    check "$p" totals fail "lcov --capture failed: $out/lcov.log"
    return
  fi
  "$recon" lcov -o "$out/ballarus.info" "$b" >"$out/ballarus-lcov.log" 2>&1 ||
    { check "$p" totals fail "ballarus-reconstruct lcov failed: $out/ballarus-lcov.log"; return; }
  local want got
  want=$(lcov_totals "$out/gcov.info") got=$(lcov_totals "$out/ballarus.info")
  compare_totals "$p" "$want" "$got" lcov
}

# "lines H/F functions H/F branches H/F" of a gcovr JSON summary.
gcovr_totals() {  # gcovr_totals FILE
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(" ".join("%s %d/%d" % (name, j[k + "_covered"], j[k + "_total"])
               for k, name in (("line", "lines"), ("function", "functions"),
                               ("branch", "branches"))))' "$1" 2>/dev/null
}

# gcovr's totals of `gcovr-json` against gcovr's own of gcov's data.
check_gcovr() {  # check_gcovr P
  local p=$1
  local g=$work/$p/gcov/src b=$work/$p/ballarus/src out=$work/$p/reports
  if ! command -v gcovr >/dev/null; then
    check "$p" gcovr fail "gcovr is not installed (apt-get install -y gcovr)"
    return
  fi
  # gcovr counts the objects that never ran (a .gcno without .gcda) as
  # uncovered; a profile has nothing of them (nor has lcov --capture):
  # hidden from gcovr, and counted.
  local unrun
  unrun=$(find "$g" -name '*.gcno' | while read -r f; do
            [ -e "${f%.gcno}.gcda" ] || { mv "$f" "$f.unrun" && echo "$f"; }
          done | wc -l)
  (cd "$g" && nice gcovr -j "$jobs" -r . --json-summary "$out/gcovr-gcov.json") \
    >"$out/gcovr.log" 2>&1
  find "$g" -name '*.gcno.unrun' | while read -r f; do mv "$f" "${f%.unrun}"; done
  "$recon" gcovr-json -o "$out/ballarus.json" "$b" >>"$out/gcovr.log" 2>&1 &&
  (cd "$b" && gcovr -r . --add-tracefile "$out/ballarus.json" \
                    --json-summary "$out/gcovr-ballarus.json") >>"$out/gcovr.log" 2>&1
  compare_totals "$p" "$(gcovr_totals "$out/gcovr-gcov.json")" \
    "$(gcovr_totals "$out/gcovr-ballarus.json")" gcovr \
    " ($unrun objects that never ran left out)"
}

# Found figures (lines, functions, branches instrumented) must be equal;
# hit figures too, but for expat within 0.1% of the found figure: its tests
# are not repeatable (two runs of the same gcov build differ in a few
# lines' hits, xmlparse.c's hash-table probing among them).
compare_totals() {  # compare_totals P "lines H/F ..." "lines H/F ..." TOOL [NOTE]
  local p=$1 tool=$4 note=${5:-} found=pass hits=pass i wh wf gh gf slack
  local -a w g
  read -r -a w <<<"$2"
  read -r -a g <<<"$3"
  if [ "${#w[@]}" != 6 ] || [ "${#g[@]}" != 6 ]; then found=fail hits=fail; fi
  for i in 1 3 5; do
    [ "$found" = pass ] || break
    wh=${w[$i]%/*} wf=${w[$i]#*/} gh=${g[$i]%/*} gf=${g[$i]#*/}
    [ "$wf" = "$gf" ] || found=fail
    slack=0
    [ "$p" = expat ] && slack=$((wf / 1000))
    [ $((wh > gh ? wh - gh : gh - wh)) -le "$slack" ] || hits=fail
  done
  check "$p" "$tool-found" "$found" "$tool: ${2:-?} | ballarus: ${3:-?}$note"
  check "$p" "$tool-hits" "$hits" "$tool: ${2:-?} | ballarus: ${3:-?}$([ "$p" = expat ] && echo " (expat: within 0.1%)")"
}

# gcov's Runs: of one object's data against ballarus' of the same object.
check_runs() {  # check_runs P
  local p=$1 src gcda bprof want got
  src=$(runs_source_of "$p")
  gcda=$(find "$work/$p/gcov/src" \( -name "$src.gcda" -o -name "${src%.*}.gcda" \
           -o -name "*-${src%.*}.gcda" \) | sort | head -n 1)
  bprof=$work/$p/ballarus/src/${gcda#"$work/$p/gcov/src/"}
  bprof=${bprof%.gcda}.bprof
  want=$(cd "$(dirname "$gcda")" && gcov -t "$(basename "$gcda")" 2>/dev/null |
         sed -n 's/^ *-: *0:Runs://p' | head -n 1)
  got=$("$recon" gcov -t "$bprof" 2>/dev/null | sed -n 's/^ *-: *0:Runs://p' | head -n 1)
  if [ -n "$want" ] && [ "$want" = "$got" ]; then
    check "$p" runs pass "${gcda#"$work/$p/gcov/src/"}: Runs:$got"
  else
    check "$p" runs fail "${gcda#"$work/$p/gcov/src/"}: gcov Runs:${want:-?}, ballarus Runs:${got:-?}"
  fi
}

# html with defaults: time, and each function listed once on functions.html.
check_html() {  # check_html P
  local p=$1
  local out=$work/$p/reports/html start end ms rows dups fnf
  rm -rf "$out"
  start=$(date +%s%N)
  # Stopped at six times the budget, so that the check ends in bounded time.
  timeout $((html_budget * 6)) "$recon" html -o "$out" "$work/$p/ballarus/src" \
    >"$work/$p/reports/html.log" 2>&1
  local status=$?
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  if [ "$status" = 0 ] && [ "$ms" -lt $((html_budget * 1000)) ]; then
    check "$p" html-time pass "$((ms / 1000)).$(printf '%03d' $((ms % 1000))) s (budget ${html_budget} s)"
  else
    check "$p" html-time fail "$((ms / 1000)).$(printf '%03d' $((ms % 1000))) s, exit $status$([ "$status" = 124 ] && echo " (stopped)") (budget ${html_budget} s; log $work/$p/reports/html.log)"
  fi
  # A stopped run wrote no pages: the function list of a report without
  # CFG pictures stands in for it.
  local from=''
  if [ "$status" = 124 ]; then
    from=" (report with --cfg-functions 0: the default one was stopped)"
    rm -rf "$out"
    "$recon" html --cfg-functions 0 -o "$out" "$work/$p/ballarus/src" \
      >>"$work/$p/reports/html.log" 2>&1
  fi
  # One row per function: its name cell and its file:line cell.
  python3 - "$out/functions.html" "$work/$p/reports/ballarus.info" <<'PY' >"$work/$p/reports/html-functions.txt"
import collections, html, re, sys
try:
    page = open(sys.argv[1], encoding="utf-8", errors="replace").read()
except OSError:
    print("no functions.html"); sys.exit(0)
rows = re.findall(r"<tr><td class=\"l\">(.*?)</td><td class=\"l\">(.*?)</td>", page)
key = lambda cell: html.unescape(re.sub(r"<[^>]*>", "", cell)).strip()
seen = collections.Counter((key(a), key(b)) for a, b in rows)
fnf = 0
for line in open(sys.argv[2]):
    if line.startswith("FNF:"):
        fnf += int(line[4:])
dups = sum(n - 1 for n in seen.values() if n > 1)
# A function of two different builds (a source compiled as C and as C++)
# is listed once per build, each row labelled "[build K of N: ...]"; lcov
# counts it once.
label = re.compile(r"\s*\[build \d+ of \d+:.*?\]")
functions = len({(label.sub("", a), b) for a, b in seen})
print(len(rows), dups, fnf, functions)
for (name, where), n in seen.most_common(3):
    if n > 1:
        print("  %dx %s (%s)" % (n, name, where))
PY
  read -r rows dups fnf functions <"$work/$p/reports/html-functions.txt"
  if [ "$rows" = "no" ]; then
    check "$p" html-once fail "no functions.html in $out"
  elif [ "$dups" = 0 ] && [ "$functions" = "$fnf" ]; then
    check "$p" html-once pass "$functions functions listed, each once (lcov FNF $fnf); $((rows - functions)) of them once more for another build, labelled$from"
  else
    check "$p" html-once fail "$rows functions listed, $dups repeated, lcov FNF $fnf$from: $(sed -n 2,4p "$work/$p/reports/html-functions.txt" | tr '\n' ';')"
  fi
}

# ------------------------------------------------------------ main
run_project() {  # run_project P
  local p=$1 kind tree start
  fetch "$(package_of "$p")"
  for kind in plain gcov ballarus; do
    tree=$(unpack_fresh "$p" "$kind")
    start=$(date +%s)
    say "$p: $kind build and tests in $tree"
    build_project "$p" "$kind" "$tree" "$work/$p/$kind/logs"
    say "$p: $kind done in $(( $(date +%s) - start )) s (configure $(cat "$work/$p/$kind/logs/configure.status"), build $(cat "$work/$p/$kind/logs/build.status"), tests $(cat "$work/$p/$kind/logs/test.status"))"
  done
  check_tests "$p"
  check_same "$p" results results_of
  check_same "$p" outputs outputs_of
  check_same "$p" configure configure_of
  check_same "$p" stderr stderr_of
  check_stray "$p"
  [ "$p" = gzip ] || check_archiver "$p"
  check_totals "$p"
  check_gcovr "$p"
  check_runs "$p"
  [ "$p" = expat ] && check_html "$p"
}

say "work: $work; prefix: $prefix; CMake: ${toolchain:+toolchain file }${toolchain:-CC/CXX wrappers}"
for p in $projects; do
  case $p in gzip|expat|jsoncpp) run_project "$p" ;; *) die "unknown project $p" ;; esac
done
printf '\n%d passed, %d failed (work: %s)\n%s' "$passed" "$failed" "$work" "$summary"
[ "$failed" = 0 ]
