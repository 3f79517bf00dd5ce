# programs.sh — what bench/run.sh and bench/pgo.sh share: tool checks, the
# Debian source fetching, and the benchmark programs (how to prepare, build
# and run each, and which files its run writes).  Sourced, not run; the
# sourcing script defines say, die, here, work, cache and quick first
# (bench/run.sh documents them).
# shellcheck shell=bash

# --------------------------------------------------------------- tools
need_tool() {  # need_tool COMMAND HINT
  command -v "$1" >/dev/null 2>&1 || die "missing tool: $1 — $2"
}
apt_updated=0
apt_install() {  # apt_install PACKAGE... : the machine's own apt, once updated
  [ "$quick" = 0 ] || die "--quick never runs apt-get; install $* first"
  [ "$(id -u)" = 0 ] || die "need $* installed (apt-get install -y $*), and I am not root"
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=1
  fi
  say "apt-get install -y $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 \
    || die "apt-get install -y $* failed"
}


# --------------------------------------------------------------- sources
APT_DIR=$cache/apt
apt_private() {  # apt-get with deb-src configured under $APT_DIR only
  apt-get -o "Dir::Etc::SourceList=/dev/null" \
          -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d" \
          -o "Dir::State::Lists=$APT_DIR/lists" \
          -o "Dir::Cache=$APT_DIR/cache" \
          -o "APT::Sandbox::User=root" "$@"
}
apt_private_ready=0
fetch() {  # fetch PACKAGE: leaves PACKAGE_*.orig.tar.* in $cache/src
  local pkg=$1
  mkdir -p "$cache/src"
  # Runs with different work directories share the sources: one fetches
  # and unpacks at a time (the main loop releases the lock after prepare).
  if [ -z "${SRC_LOCKED:-}" ] && command -v flock >/dev/null; then
    exec 8>"$cache/src.lock" && flock 8 && SRC_LOCKED=1
  fi
  if compgen -G "$cache/src/${pkg}_*.orig.tar.*" >/dev/null; then return 0; fi
  [ "$quick" = 0 ] || die "--quick does not download; $pkg's source is not in $cache/src (run without --quick once)"
  need_tool apt-get "fetching Debian sources needs apt"
  if [ "$apt_private_ready" = 0 ]; then
    local suite
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
    apt_private update -qq >&2 || die "apt-get update with the private deb-src configuration failed (network?)"
    apt_private_ready=1
  fi
  say "apt-get source --download-only $pkg"
  (cd "$cache/src" && apt_private source --download-only "$pkg" >&2) \
    || die "apt-get source --download-only $pkg failed"
}
# unpack PACKAGE DIRGLOB: the unpacked orig tarball (cached; fetch it
# first, outside a command substitution), path on stdout
unpack() {
  local pkg=$1 glob=$2 d tarball
  d=$(compgen -G "$cache/src/$glob" | head -n 1 || true)
  if [ -z "$d" ]; then
    # The orig tarball itself, not a component (orig-www.tar.xz).
    tarball=$(compgen -G "$cache/src/${pkg}_*.orig.tar.*" | grep -v -- '-[a-z]*\.tar' | head -n 1)
    [ -n "$tarball" ] || die "no orig tarball of $pkg in $cache/src"
    say "unpacking $(basename "$tarball")"
    tar xf "$tarball" -C "$cache/src" || die "cannot unpack $tarball"
    d=$(compgen -G "$cache/src/$glob" | head -n 1 || true)
    [ -n "$d" ] || die "unpacking $tarball gave no $glob"
  fi
  printf '%s\n' "$d"
}
# Version of a fetched source package, from its .dsc.
src_version() {
  local dsc
  dsc=$(compgen -G "$cache/src/${1}_*.dsc" | head -n 1 || true)
  [ -n "$dsc" ] && sed -n 's/^Version: //p' "$dsc" | head -n 1
}

# --------------------------------------------------------------- programs
# Each program P defines (build_P runs where errexit is off: chain with &&)
#   prepare_P            once: sources, workload inputs; sets P_SRC etc.
#   build_P DIR CC       builds into DIR with the compiler command CC (a
#                        word-split string: compiler + variant flags);
#                        leaves the executable at DIR/exe
#   run_P EXE            runs the workload in the current directory, writing
#                        stdout/stderr and any output files there; runs EXE
#                        as `exec -a P` (argv[0] alike for every build)
#   outputs_P            the files run_P writes that must equal plain's
# and may define check_P: extra checks of one run's outputs, and, so that
# its timed runs can use a random code layout (run.sh --layout random),
#   objects_P DIR        the objects DIR/exe was linked from, one per line
#   link_P CC OUT OBJ... links OBJ... (in that order) into OUT as build_P
#                        linked DIR/exe
# (a program without them keeps its one layout).
JOBS=$(nproc 2>/dev/null || echo 2)
SRC_VERSIONS=

# --- lua: bench/lua/workload.lua on Debian's lua5.4
prepare_lua() {
  fetch lua5.4
  LUA_SRC=$(unpack lua5.4 'lua-5.4.*/')
  [ -f "$LUA_SRC/src/lua.c" ] || die "lua: $LUA_SRC has no src/lua.c"
  SRC_VERSIONS+="lua5.4 $(src_version lua5.4); "
}
build_lua() {
  local dir=$1 cc=$2
  cp -r "$LUA_SRC/." "$dir/" || return 1
  # Lua hashes some pointers (llimits.h point2uint: the C-string cache of
  # luaS_new, pointer keys in tables); the addresses differ between builds
  # whose instrumentation differs, and so would hash collisions and counts.
  # Hash every pointer to 0: the caches still compare contents, behaviour
  # is unchanged, only address-independent.  A fixed string-hash seed
  # (lstate.c mixes time and addresses into it) and sort-pivot randomizer
  # (ltablib.c reads clock() and time()) make every build execute alike.
  sed -i 's|^#define point2uint(p).*|#define point2uint(p)\t0u  /* ballarus bench: address-independent */|' \
    "$dir/src/llimits.h" &&
  grep -q 'ballarus bench' "$dir/src/llimits.h" &&
  make -C "$dir/src" -j"$JOBS" lua CC="$cc" SYSCFLAGS=-DLUA_USE_LINUX \
    SYSLIBS="-Wl,-E -ldl" \
    MYCFLAGS="-O2 '-Dluai_makeseed(L)=0x2545F491u' '-Dl_randomizePivot()=0u'" &&
  cp "$dir/src/lua" "$dir/exe"
}
# (src/Makefile: $(CC) -o lua lua.o liblua.a -lm $(SYSLIBS); every member of
# liblua.a is linked in: linit.c references each library.)
objects_lua() { echo "$1/src/lua.o" && ar t "$1/src/liblua.a" | sed "s|^|$1/src/|"; }
# shellcheck disable=SC2086
link_lua() { local cc=$1 out=$2; shift 2; $cc -o "$out" "$@" -lm -Wl,-E -ldl; }
run_lua() {
  # (lua interns argv[0]: a name of another length would change its string
  # table, and so the counts.)
  (exec -a lua "$1" "$here/lua/workload.lua") >stdout 2>stderr
}
outputs_lua() { echo stdout stderr; }

# --- sqlite3: the amalgamation and its shell, bench/sqlite3/workload.sql
prepare_sqlite3() {
  local src
  fetch sqlite3
  src=$(unpack sqlite3 'sqlite3-3.*/')
  SQLITE_AMALG=$src/bld
  if [ ! -f "$SQLITE_AMALG/sqlite3.c" ] || [ ! -f "$SQLITE_AMALG/shell.c" ]; then
    command -v tclsh >/dev/null || apt_install tcl
    say "sqlite3: building the amalgamation (configure && make sqlite3.c shell.c)"
    rm -rf "$SQLITE_AMALG" && mkdir -p "$SQLITE_AMALG"
    (cd "$SQLITE_AMALG" && ../configure --disable-tcl && make sqlite3.c shell.c) \
      >"$work/sqlite3-amalgamation.log" 2>&1 \
      || { tail -n 30 "$work/sqlite3-amalgamation.log" >&2; die "sqlite3: building the amalgamation failed"; }
  fi
  SRC_VERSIONS+="sqlite3 $(src_version sqlite3); "
}
build_sqlite3() {
  local dir=$1 cc=$2
  local flags="-O2 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I$SQLITE_AMALG"
  # The two translation units compile in parallel (sqlite3.c alone takes
  # most of the time); compile time is measured in CPU seconds anyway.
  # shellcheck disable=SC2086
  $cc $flags -c "$SQLITE_AMALG/sqlite3.c" -o "$dir/sqlite3.o" &
  local pid=$!
  # shellcheck disable=SC2086
  $cc $flags -c "$SQLITE_AMALG/shell.c" -o "$dir/shell.o" || { wait $pid; return 1; }
  wait $pid || return 1
  # shellcheck disable=SC2086
  $cc -O2 -o "$dir/exe" "$dir/sqlite3.o" "$dir/shell.o" -ldl -lm
}
objects_sqlite3() { printf '%s\n' "$1/sqlite3.o" "$1/shell.o"; }
# shellcheck disable=SC2086
link_sqlite3() { local cc=$1 out=$2; shift 2; $cc -O2 -o "$out" "$@" -ldl -lm; }
run_sqlite3() {
  (exec -a sqlite3 "$1" -batch -init /dev/null :memory:) \
    <"$here/sqlite3/workload.sql" >stdout 2>stderr
}
outputs_sqlite3() { echo stdout stderr; }

# --- bzip2: compress and decompress a generated text (bzip2/gentext.c)
BZIP2_BYTES=${BALLARUS_BENCH_BZIP2_BYTES:-6291456}
prepare_bzip2() {
  fetch bzip2
  BZIP2_SRC=$(unpack bzip2 'bzip2-1.0.*/')
  [ -f "$BZIP2_SRC/bzip2.c" ] || die "bzip2: $BZIP2_SRC has no bzip2.c"
  mkdir -p "$work/bzip2"
  gcc -O2 -o "$work/bzip2/gentext" "$here/bzip2/gentext.c" || die "bzip2: cannot build gentext"
  "$work/bzip2/gentext" "$BZIP2_BYTES" >"$work/bzip2/input.txt" || die "bzip2: gentext failed"
  SRC_VERSIONS+="bzip2 $(src_version bzip2); "
}
build_bzip2() {
  local dir=$1 cc=$2
  cp -r "$BZIP2_SRC/." "$dir/" &&
  make -C "$dir" -j"$JOBS" bzip2 CC="$cc" CFLAGS="-O2 -D_FILE_OFFSET_BITS=64" &&
  cp "$dir/bzip2" "$dir/exe"
}
# (Makefile: $(CC) $(CFLAGS) -o bzip2 bzip2.o -L. -lbz2; every member of
# libbz2.a is linked in.)
objects_bzip2() { echo "$1/bzip2.o" && ar t "$1/libbz2.a" | sed "s|^|$1/|"; }
# shellcheck disable=SC2086
link_bzip2() { local cc=$1 out=$2; shift 2; $cc -O2 -D_FILE_OFFSET_BITS=64 -o "$out" "$@"; }
run_bzip2() {
  (exec -a bzip2 "$1" -9 -c) <"$work/bzip2/input.txt" >out.bz2 2>stderr &&
    (exec -a bzip2 "$1" -d -c) <out.bz2 >out.txt 2>>stderr
}
outputs_bzip2() { echo out.bz2 out.txt stderr; }
check_bzip2() {  # the round trip gives the input back
  cmp -s out.txt "$work/bzip2/input.txt" || { echo "decompressed text differs from the input"; return 1; }
}

# --- threads, threads-loop: NTHREADS threads over shared instrumented code
# (threads/threads.c).  threads: each thread calls the one-block bench_hot()
# THREADS_ITERS times; threads-loop: each runs THREADS_ITERS iterations of a
# loop with a branch in one shared function.  THREADS_MODE is 1 (par: threads at once) for every
# measured run; 0 (seq (the same threads one after another) for the reference
# run whose counters an exact profiler must reproduce.
NTHREADS=${BALLARUS_BENCH_THREADS:-8}
THREADS_ITERS=5000000
[ "$quick" = 0 ] || THREADS_ITERS=250000
THREADS_ITERS=${BALLARUS_BENCH_THREADS_ITERATIONS:-$THREADS_ITERS}
THREADS_MODE=1
is_threads() { case "$1" in threads|threads-loop) return 0 ;; esac; return 1; }
prepare_threads() { :; }
build_threads() {
  # shellcheck disable=SC2086
  $2 -O2 -pthread -o "$1/exe" "$here/threads/threads.c"
}
run_threads() { (exec -a threads "$1" call "$NTHREADS" "$THREADS_ITERS" "$THREADS_MODE") >stdout 2>stderr; }
outputs_threads() { echo stdout stderr; }
prepare_threads-loop() { :; }
build_threads-loop() { build_threads "$@"; }
run_threads-loop() { (exec -a threads "$1" loop "$NTHREADS" "$THREADS_ITERS" "$THREADS_MODE") >stdout 2>stderr; }
outputs_threads-loop() { echo stdout stderr; }

# --- quick: the tiny bundled program of --quick (quick/quick.c)
prepare_quick() { :; }
build_quick() {
  # shellcheck disable=SC2086
  $2 -O2 -c "$here/quick/quick.c" -o "$1/quick.o" && link_quick "$2" "$1/exe" "$1/quick.o"
}
objects_quick() { echo "$1/quick.o"; }
# shellcheck disable=SC2086
link_quick() { local cc=$1 out=$2; shift 2; $cc -O2 -o "$out" "$@"; }
run_quick() { (exec -a quick "$1") >stdout 2>stderr; }
outputs_quick() { echo stdout stderr; }

# Programs whose every build executes identically, so edge-mode profiles
# must reconstruct exactly the naive profile (threads with single updates
# lose increments at random, so not threads).
deterministic_counts() { ! is_threads "$1"; }
# Programs whose runs are pinned (single-threaded) and counted with valgrind.
single_threaded() { ! is_threads "$1"; }

