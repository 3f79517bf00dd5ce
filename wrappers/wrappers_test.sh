#!/usr/bin/env bash
# wrappers_test.sh — tests of ballarus-gcc / ballarus-g++.
#
# Part 1 checks the wrapper's argument handling: a fake compiler named by
# BALLARUS_CC / BALLARUS_CXX (or found on PATH as gcc / g++) prints the argv
# it received, one argument per line, and each case compares it with the
# exact expected argv (a BALLARUS_CC of several words; the cache key added
# under ccache).  The wrapper is copied into a fake prefix whose
# lib/ballarus/ holds empty stand-ins for the plugin and runtime.
#
# Part 2 installs the real build (//:install) into a temporary prefix and
# drives the real gcc / g++ through the installed wrappers: separate compile
# and link, several sources, -fPIC -shared, a C++ program; the programs must
# print what they print without ballarus and leave a profile that
# ballarus-reconstruct verifies; an LTO archive made with ballarus-gcc-ar;
# --ballarus-help ending with the plugin's own help.

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

runfiles=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
[ -d "$runfiles" ] || { echo "no runfiles at $runfiles" >&2; exit 1; }
tmp=${TEST_TMPDIR:-$(mktemp -d)}/wt
rm -rf "$tmp"
mkdir -p "$tmp"

# ---------------------------------------------------------------------------
# Part 1: argument handling with a fake compiler.
# ---------------------------------------------------------------------------
P=$tmp/prefix
mkdir -p "$P/bin" "$P/lib/ballarus" "$tmp/fakebin" "$tmp/work"
cp "$runfiles/wrappers/ballarus-gcc" "$P/bin/ballarus-gcc"
cp "$runfiles/wrappers/ballarus-gcc" "$P/bin/ballarus-g++"
chmod 0755 "$P/bin/ballarus-gcc" "$P/bin/ballarus-g++"
: >"$P/lib/ballarus/ballarus.so"
: >"$P/lib/ballarus/libballarus_rt.a"
PLUGIN=$P/lib/ballarus/ballarus.so
RT=$P/lib/ballarus/libballarus_rt.a
EXPORT='-Wl,--export-dynamic-symbol=__ballarus_master,--export-dynamic-symbol=*ballarus_trace_*'

# The fake compiler: its name, then each argument in brackets (so empty
# arguments and spaces are visible), and exit status $FAKE_RC.
fake=$tmp/fakebin/fakecc
cat >"$fake" <<'EOF'
#!/bin/sh
printf 'cc=%s\n' "${0##*/}"
for a in "$@"; do printf '[%s]\n' "$a"; done
exit "${FAKE_RC:-0}"
EOF
chmod 0755 "$fake"
cp "$fake" "$tmp/fakebin/gcc"
cp "$fake" "$tmp/fakebin/g++"

# expect NAME WRAPPER -- ARGS... == EXPECTED-ARGV...
# Runs WRAPPER ARGS... (in $tmp/work) and compares the argv the fake compiler
# received with "cc=<name>" followed by EXPECTED-ARGV.
expect_cc=fakecc
expect() {
  local name=$1 wrapper=$2; shift 3
  local -a args=() want=()
  while [ $# -gt 0 ] && [ "$1" != "==" ]; do args+=("$1"); shift; done
  shift
  want=("$@")
  local got exp
  got=$(cd "$tmp/work" && "$wrapper" "${args[@]+"${args[@]}"}" 2>&1)
  local rc=$?
  exp=$(printf 'cc=%s\n' "$expect_cc"; for a in "${want[@]+"${want[@]}"}"; do printf '[%s]\n' "$a"; done)
  if [ "$rc" -ne 0 ]; then
    fail "$name: wrapper exited $rc: $got"
  elif [ "$got" != "$exp" ]; then
    fail "$name: argv differs
--- expected
$exp
--- got
$got"
  fi
}

gcc_w=$P/bin/ballarus-gcc
gxx_w=$P/bin/ballarus-g++
export BALLARUS_CC=$fake
export BALLARUS_CXX=$fake
unset BALLARUS_WRAPPER_VERBOSE

PRE=("-fplugin=$PLUGIN" -fplugin-arg-ballarus-mode=path)

expect "compile only" "$gcc_w" -- -c a.c -o a.o == "${PRE[@]}" -c a.c -o a.o
expect "assemble only" "$gcc_w" -- -S a.c == "${PRE[@]}" -S a.c
expect "preprocess only" "$gcc_w" -- -E a.c == "${PRE[@]}" -E a.c
expect "-M" "$gcc_w" -- -M a.c == "${PRE[@]}" -M a.c
expect "-MM" "$gcc_w" -- -MM a.c == "${PRE[@]}" -MM a.c
expect "-fsyntax-only" "$gcc_w" -- -fsyntax-only a.c == "${PRE[@]}" -fsyntax-only a.c
expect "link executable" "$gcc_w" -- a.o b.o -o prog == \
  "${PRE[@]}" a.o b.o -o prog "$RT" -lpthread "$EXPORT"
expect "compile and link" "$gcc_w" -- -O2 a.c b.c -o prog -lm == \
  "${PRE[@]}" -O2 a.c b.c -o prog -lm "$RT" -lpthread "$EXPORT"
expect "-MD still links" "$gcc_w" -- -MD -MF a.d a.c -o prog == \
  "${PRE[@]}" -MD -MF a.d a.c -o prog "$RT" -lpthread "$EXPORT"
expect "shared library" "$gcc_w" -- -shared -fPIC a.c -o liba.so == \
  "${PRE[@]}" -shared -fPIC a.c -o liba.so "$RT" -lpthread
expect "relocatable link" "$gcc_w" -- -r a.o b.o -o ab.o == \
  "${PRE[@]}" -r a.o b.o -o ab.o "$RT" -lpthread
expect "quoting preserved" "$gcc_w" -- 'my file.c' '' '*' '$HOME' 'a"b' "it's" -DX='1 2' -o 'out put' == \
  "${PRE[@]}" 'my file.c' '' '*' '$HOME' 'a"b' "it's" -DX='1 2' -o 'out put' "$RT" -lpthread "$EXPORT"
expect "-x resets before archive" "$gcc_w" -- -x c prog.txt -o prog == \
  "${PRE[@]}" -x c prog.txt -o prog -x none "$RT" -lpthread "$EXPORT"
expect "joined -xc" "$gcc_w" -- -xc prog.txt == \
  "${PRE[@]}" -xc prog.txt -x none "$RT" -lpthread "$EXPORT"
expect "stdin source" "$gcc_w" -- -x c - -o prog == \
  "${PRE[@]}" -x c - -o prog -x none "$RT" -lpthread "$EXPORT"
expect "user plugin args come last" "$gcc_w" -- -fplugin-arg-ballarus-update=single -c a.c == \
  "${PRE[@]}" -fplugin-arg-ballarus-update=single -c a.c
expect "user mode overrides default" "$gcc_w" -- -fplugin-arg-ballarus-mode=naive -c a.c == \
  "${PRE[@]}" -fplugin-arg-ballarus-mode=naive -c a.c
# Values of separate-argument options are not input files.
expect "-o value is not an input" "$gcc_w" -- -c -o out.o a.c == "${PRE[@]}" -c -o out.o a.c
expect "no input: -o only" "$gcc_w" -- -o prog == "${PRE[@]}" -o prog
expect "no input: -include" "$gcc_w" -- -include x.h -I dir -D N -Xlinker --gc == \
  "${PRE[@]}" -include x.h -I dir -D N -Xlinker --gc
# Queries never link.
expect "--version" "$gcc_w" -- --version == "${PRE[@]}" --version
expect "-v" "$gcc_w" -- -v == "${PRE[@]}" -v
expect "--help" "$gcc_w" -- --help == "${PRE[@]}" --help
expect "-print-file-name" "$gcc_w" -- -print-file-name=plugin == "${PRE[@]}" -print-file-name=plugin
expect "-print-prog-name" "$gcc_w" -- -print-prog-name=ld == "${PRE[@]}" -print-prog-name=ld
expect "-dumpversion" "$gcc_w" -- -dumpversion == "${PRE[@]}" -dumpversion
expect "-dumpmachine" "$gcc_w" -- -dumpmachine == "${PRE[@]}" -dumpmachine
expect "-v with a source links" "$gcc_w" -- -v a.c == "${PRE[@]}" -v a.c "$RT" -lpthread "$EXPORT"
# Response files are read to see whether the command links.
printf -- '-c "sp ace.c"\n-o x.o\n' >"$tmp/work/compile.rsp"
printf -- 'a.o\nb.o\n' >"$tmp/work/link.rsp"
printf -- '-shared a.o\n' >"$tmp/work/shared.rsp"
expect "@rsp with -c" "$gcc_w" -- @compile.rsp == "${PRE[@]}" @compile.rsp
expect "@rsp of objects" "$gcc_w" -- @link.rsp -o prog == \
  "${PRE[@]}" @link.rsp -o prog "$RT" -lpthread "$EXPORT"
expect "@rsp with -shared" "$gcc_w" -- @shared.rsp -o l.so == "${PRE[@]}" @shared.rsp -o l.so "$RT" -lpthread
expect "@missing is an input" "$gcc_w" -- @missing.rsp == "${PRE[@]}" @missing.rsp "$RT" -lpthread "$EXPORT"

# ballarus-g++ drives BALLARUS_CXX, ballarus-gcc BALLARUS_CC.
cp "$fake" "$tmp/fakebin/othercxx"
expect_cc=othercxx
BALLARUS_CXX=$tmp/fakebin/othercxx expect "g++ uses BALLARUS_CXX" "$gxx_w" -- -c a.cc == "${PRE[@]}" -c a.cc
out=$(cd "$tmp/work" && BALLARUS_CXX=$tmp/fakebin/othercxx "$gcc_w" -c a.c | head -1)
[ "$out" = "cc=fakecc" ] || fail "ballarus-gcc ran '$out', want cc=fakecc"

# Defaults: gcc and g++ from PATH.
out=$(cd "$tmp/work" && env -u BALLARUS_CC PATH="$tmp/fakebin:$PATH" "$gcc_w" -c a.c | head -1)
[ "$out" = "cc=gcc" ] || fail "default C compiler: got '$out', want cc=gcc"
out=$(cd "$tmp/work" && env -u BALLARUS_CXX PATH="$tmp/fakebin:$PATH" "$gxx_w" -c a.cc | head -1)
[ "$out" = "cc=g++" ] || fail "default C++ compiler: got '$out', want cc=g++"

# Found through a symlink elsewhere (e.g. /usr/local/bin/cc -> PREFIX/bin/...):
# the prefix comes from the resolved location.
mkdir -p "$tmp/elsewhere"
ln -sf "$P/bin/ballarus-gcc" "$tmp/elsewhere/cc"
expect_cc=fakecc
expect "through a symlink" "$tmp/elsewhere/cc" -- -c a.c == "${PRE[@]}" -c a.c
# Found on PATH by name.
out=$(cd "$tmp/work" && PATH="$P/bin:$PATH" ballarus-gcc -c a.c | sed -n 2p)
[ "$out" = "[-fplugin=$PLUGIN]" ] || fail "through PATH: got '$out'"

# The compiler's exit status is the wrapper's.
(cd "$tmp/work" && FAKE_RC=7 "$gcc_w" -c a.c >/dev/null)
rc=$?
[ "$rc" -eq 7 ] || fail "exit status: got $rc, want 7"

# --ballarus-help prints usage, then the plugin's own help (the compiler
# run with the plugin's help option, not with the user's arguments).
out=$(cd "$tmp/work" && "$gcc_w" -c a.c --ballarus-help 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "--ballarus-help exited $rc"
case "$out" in
  usage:\ ballarus-gcc*) ;;
  *) fail "--ballarus-help: no usage line: $out" ;;
esac
case "$out" in *"[a.c]"*) fail "--ballarus-help compiled the arguments" ;; esac
case "$out" in *"[-fplugin-arg-ballarus-help]"*) ;; *) fail "--ballarus-help did not ask the plugin: $out" ;; esac
case "$out" in *"$PLUGIN"*) ;; *) fail "--ballarus-help does not name the plugin path" ;; esac

# BALLARUS_CC is a command: its words come first.  A ccache command gets the
# cache key naming where the object's profile goes.
BALLARUS_CC="$fake -m64" expect "compiler with an option" "$gcc_w" -- -c a.c \
  == -m64 "${PRE[@]}" -c a.c
cp "$fake" "$tmp/fakebin/ccache"
expect_cc=ccache
KEY=-fplugin-arg-ballarus-cache-key
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, -o" "$gcc_w" -- -c a.c -o obj/a.o \
  == gcc "${PRE[@]}" "$KEY=$tmp/work/obj/a.o" -c a.c -o obj/a.o
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, -oFILE" "$gcc_w" -- -c a.c -oa.o \
  == gcc "${PRE[@]}" "$KEY=$tmp/work/a.o" -c a.c -oa.o
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, --output=" "$gcc_w" -- -c a.c --output=o/a.o \
  == gcc "${PRE[@]}" "$KEY=$tmp/work/o/a.o" -c a.c --output=o/a.o
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, absolute -o" "$gcc_w" -- -c a.c -o /x/a.o \
  == gcc "${PRE[@]}" "$KEY=/x/a.o" -c a.c -o /x/a.o
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, no -o" "$gcc_w" -- -c a.c \
  == gcc "${PRE[@]}" "$KEY=$tmp/work/" -c a.c
BALLARUS_CC="$tmp/fakebin/ccache gcc" expect "ccache, query" "$gcc_w" -- --version \
  == gcc "${PRE[@]}" --version
# ccache's masquerading link: "gcc" on PATH resolving to ccache.
mkdir -p "$tmp/masq"
ln -sf "$tmp/fakebin/ccache" "$tmp/masq/gcc"
expect_cc=gcc
BALLARUS_CC= PATH="$tmp/masq:$PATH" expect "ccache by link" "$gcc_w" -- -c a.c -o b.o \
  == "${PRE[@]}" "$KEY=$tmp/work/b.o" -c a.c -o b.o
expect_cc=fakecc

# BALLARUS_WRAPPER_VERBOSE=1 echoes the command on stderr.
out=$(cd "$tmp/work" && BALLARUS_WRAPPER_VERBOSE=1 "$gcc_w" -c 'a b.c' 2>&1 >/dev/null)
[ "$out" = "ballarus-gcc: $fake -fplugin=$PLUGIN -fplugin-arg-ballarus-mode=path -c a\\ b.c" ] \
  || fail "BALLARUS_WRAPPER_VERBOSE: got '$out'"

# Missing pieces are one-line errors naming the path, exit status 2.
expect_error() { # NAME WANT-SUBSTRING WRAPPER ARGS...
  local name=$1 want=$2; shift 2
  local out rc
  out=$(cd "$tmp/work" && "$@" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, want 2 (output: $out)"
  case "$out" in *"$want"*) ;; *) fail "$name: output lacks '$want': $out" ;; esac
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "$name: not one line: $out"
  case "$out" in *cc=*) fail "$name: the compiler ran" ;; esac
}
mv "$RT" "$RT.away"
expect_error "missing runtime" "ballarus runtime not found: $RT" "$gcc_w" a.c -o prog
expect "missing runtime, compile only" "$gcc_w" -- -c a.c == "${PRE[@]}" -c a.c
mv "$RT.away" "$RT"
mv "$PLUGIN" "$PLUGIN.away"
expect_error "missing plugin" "ballarus plugin not found: $PLUGIN" "$gcc_w" -c a.c
mv "$PLUGIN.away" "$PLUGIN"
expect_error "missing compiler" "compiler not found: $tmp/nonexistent-cc" \
  env BALLARUS_CC="$tmp/nonexistent-cc" "$gcc_w" -c a.c
expect_error "missing compiler of a command" "compiler not found: $tmp/nonexistent-cc" \
  env BALLARUS_CC="$tmp/nonexistent-cc -m64" "$gcc_w" -c a.c

# ---------------------------------------------------------------------------
# Part 2: the real gcc through the installed wrappers.
# ---------------------------------------------------------------------------
unset BALLARUS_CC BALLARUS_CXX
R=$tmp/real
mkdir -p "$R/src" "$R/out"
"$runfiles/install" "$R/prefix" >"$R/install.log" 2>&1 \
  || { cat "$R/install.log" >&2; fail "install into $R/prefix failed"; }
for f in bin/ballarus-gcc bin/ballarus-g++ bin/ballarus-reconstruct \
         bin/ballarus-gcc-ar bin/ballarus-gcc-ranlib bin/ballarus-gcc-nm \
         lib/ballarus/ballarus.so lib/ballarus/libballarus_rt.a include/ballarus/ballarus.h; do
  [ -f "$R/prefix/$f" ] || fail "not installed: $f"
done
rgcc=$R/prefix/bin/ballarus-gcc
rgxx=$R/prefix/bin/ballarus-g++
[ "$(readlink "$rgxx")" = ballarus-gcc ] || fail "ballarus-g++ is not a link to ballarus-gcc"
recon=$R/prefix/bin/ballarus-reconstruct

cat >"$R/src/lib.h" <<'EOF'
int collatz_steps(long n);
int lib_parity(int n);
EOF
cat >"$R/src/steps.c" <<'EOF'
#include "lib.h"
int collatz_steps(long n) {
  int steps = 0;
  while (n != 1) {
    n = (n % 2) ? 3 * n + 1 : n / 2;
    steps++;
  }
  return steps;
}
EOF
cat >"$R/src/main.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "lib.h"
int main(int argc, char **argv) {
  long total = 0;
  int limit = argc > 1 ? atoi(argv[1]) : 30;
  for (int i = 1; i <= limit; i++) {
    total += collatz_steps(i);
    if (lib_parity(i)) total++;
  }
  printf("total %ld\n", total);
  return 0;
}
EOF
cat >"$R/src/parity.c" <<'EOF'
#include "lib.h"
int lib_parity(int n) { return n & 1; }
EOF
cat >"$R/src/hello.cc" <<'EOF'
#include <iostream>
#include <map>
#include <string>
int main() {
  std::map<std::string, int> m;
  for (const char *w : {"a", "b", "a", "c", "a"}) m[w]++;
  for (const auto &kv : m) std::cout << kv.first << '=' << kv.second << '\n';
  return 0;
}
EOF

# Reference output without ballarus.
gcc -O1 -o "$R/out/ref" "$R/src/main.c" "$R/src/steps.c" "$R/src/parity.c" \
  || fail "reference build with plain gcc failed"
want=$("$R/out/ref" 30)

run_profiled() { # NAME PROFILE CMD... : runs and checks the profile
  local name=$1 profile=$2; shift 2
  rm -f "$profile"
  local got
  got=$(cd "$R/out" && BALLARUS_PROFILE="$profile" "$@") || { fail "$name: program failed"; return; }
  [ "$got" = "$want" ] || fail "$name: output '$got', want '$want'"
  [ -s "$profile" ] || { fail "$name: no profile written at $profile"; return; }
  [ "$(head -c 8 "$profile")" = BLRSPROF ] || fail "$name: $profile does not start with BLRSPROF"
  "$recon" verify "$profile" >"$profile.verify" 2>&1 \
    || { cat "$profile.verify" >&2; fail "$name: ballarus-reconstruct verify failed"; }
  "$recon" show "$profile" >"$profile.show" 2>&1 || fail "$name: ballarus-reconstruct show failed"
  grep -q collatz_steps "$profile.show" || fail "$name: show does not mention collatz_steps"
}

# Separate compile and link, several sources, -o.
if "$rgcc" -O1 -c "$R/src/steps.c" -o "$R/out/steps.o" &&
   "$rgcc" -O1 -c "$R/src/parity.c" -o "$R/out/parity.o" &&
   "$rgcc" -O1 -c "$R/src/main.c" -o "$R/out/main.o" &&
   "$rgcc" -o "$R/out/sep" "$R/out/main.o" "$R/out/steps.o" "$R/out/parity.o"; then
  run_profiled "separate compile+link" "$R/out/sep.profile" "$R/out/sep" 30
else
  fail "separate compile+link through ballarus-gcc failed"
fi

# One command, several sources.
if "$rgcc" -O2 -o "$R/out/one" "$R/src/main.c" "$R/src/steps.c" "$R/src/parity.c"; then
  run_profiled "one command" "$R/out/one.profile" "$R/out/one" 30
else
  fail "one-command build through ballarus-gcc failed"
fi

# A -fPIC shared library (with its own runtime copy) used by an executable.
if "$rgcc" -O1 -fPIC -shared -o "$R/out/libsteps.so" "$R/src/steps.c" "$R/src/parity.c" &&
   "$rgcc" -O1 -o "$R/out/dyn" "$R/src/main.c" -L"$R/out" -lsteps -Wl,-rpath,"$R/out"; then
  run_profiled "shared library" "$R/out/dyn.profile" "$R/out/dyn" 30
  syms=$(nm -D "$R/out/dyn")
  grep -q ' __ballarus_master$' <<<"$syms" \
    || fail "executable does not export __ballarus_master"
else
  fail "-fPIC -shared build through ballarus-gcc failed"
fi

# A traced executable that loads a traced library with dlopen: the library
# binds to the executable's trace runtime (the wrapper exports it), so one
# trace file holds both, and the library's lines follow main's call.
cat >"$R/src/dl.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  int (*steps)(long) = (int (*)(long))dlsym(h, "collatz_steps");
  printf("steps %d\n", steps(6));
  return 0;
}
EOF
if "$rgcc" -O1 -g -fPIC -shared -fplugin-arg-ballarus-mode=trace \
     -o "$R/out/libtsteps.so" "$R/src/steps.c" &&
   "$rgcc" -O1 -g -fplugin-arg-ballarus-mode=trace -o "$R/out/dl" "$R/src/dl.c" -ldl; then
  # nm's whole output first: with pipefail, grep -q leaving early would
  # fail the pipeline by SIGPIPE.
  syms=$(nm -D "$R/out/dl")
  grep -q ' __ballarus_trace_pos2$' <<<"$syms" \
    || fail "traced executable does not export __ballarus_trace_pos2"
  rm -f "$R/out"/dl.trace*
  got=$(cd "$R/out" && BALLARUS_TRACE=full BALLARUS_TRACE_FILE="$R/out/dl.trace" \
        BALLARUS_PROFILE=/dev/null ./dl "$R/out/libtsteps.so")
  [ "$got" = "steps 8" ] || fail "dlopen trace: output '$got', want 'steps 8'"
  n=$(ls "$R/out" | grep -c '^dl\.trace')
  [ "$n" = 1 ] || fail "dlopen trace: $n trace files, want 1"
  # collatz_steps(6) iterates 8 times: the loop's test (steps.c:4) runs 9 times.
  "$recon" trace "$R/out/dl.trace" --function collatz_steps >"$R/out/dl.lines" 2>&1 \
    || { cat "$R/out/dl.lines" >&2; fail "dlopen trace: ballarus-reconstruct trace failed"; }
  c=$(grep -c 'steps\.c:4 ' "$R/out/dl.lines")
  [ "$c" = 9 ] || { cat "$R/out/dl.lines" >&2; fail "dlopen trace: steps.c:4 ran $c times, want 9"; }
else
  fail "traced dlopen build through ballarus-gcc failed"
fi

# C++ through ballarus-g++.
if "$rgxx" -O1 -o "$R/out/hello" "$R/src/hello.cc"; then
  out=$(cd "$R/out" && BALLARUS_PROFILE="$R/out/hello.profile" ./hello | tr '\n' ' ')
  [ "$out" = "a=3 b=1 c=1 " ] || fail "C++ program printed '$out'"
  [ -s "$R/out/hello.profile" ] || fail "C++ program wrote no profile"
  "$recon" verify "$R/out/hello.profile" >/dev/null 2>&1 || fail "verify of the C++ profile failed"
else
  fail "C++ build through ballarus-g++ failed"
fi

# Plugin options through the wrapper: a tuning switch is passed on and
# accepted; its name without tune- fails, naming the tune- spelling.
"$rgcc" -O1 -fplugin-arg-ballarus-mode=path -fplugin-arg-ballarus-tune-path-hoist=off \
  -c "$R/src/steps.c" -o "$R/out/tuned.o" || fail "a tune- switch through the wrapper failed"
out=$(LC_ALL=C "$rgcc" -O1 -fplugin-arg-ballarus-path-hoist=off -c "$R/src/steps.c" \
  -o "$R/out/old.o" 2>&1) && fail "path-hoist=off (without tune-) was accepted"
case "$out" in
  *"'-fplugin-arg-ballarus-tune-path-hoist'"*) ;;
  *) fail "the error for path-hoist=off does not name tune-path-hoist: $out" ;;
esac

# Compile-only commands link nothing and leave no executable behind.
"$rgcc" -fsyntax-only "$R/src/main.c" || fail "-fsyntax-only through the wrapper failed"
"$rgcc" -E "$R/src/parity.c" -o "$R/out/parity.i" || fail "-E through the wrapper failed"
grep -q lib_parity "$R/out/parity.i" || fail "-E output lacks the function"
"$rgcc" --version >/dev/null || fail "--version through the wrapper failed"
[ "$("$rgcc" -dumpversion)" = "$(gcc -dumpversion)" ] || fail "-dumpversion differs from gcc's"

# --ballarus-help: the plugin's own help follows the wrapper's; ballarus-g++
# says the same with its own names.
help_c=$("$rgcc" --ballarus-help 2>&1) || fail "--ballarus-help exited $?"
help_cxx=$("$rgxx" --ballarus-help 2>&1) || fail "ballarus-g++ --ballarus-help exited $?"
plugin_help=$(gcc -fplugin="$R/prefix/lib/ballarus/ballarus.so" -fplugin-arg-ballarus-help \
  -x c -c /dev/null -o /dev/null 2>&1)
case "$help_c" in *"$plugin_help") ;; *) fail "--ballarus-help does not end with the plugin's help" ;; esac
case "$plugin_help" in
  *"mode=edge|naive|path|edge,path"*"update=single|thread|tls|atomic"*"-pthread"*"-flto"*) ;;
  *) fail "the plugin's help lacks the modes or the update defaults: $plugin_help" ;;
esac
[ "$(printf '%s' "$help_cxx" | sed 's/g++/gcc/g; s/BALLARUS_CXX/BALLARUS_CC/g')" = "$help_c" ] \
  || fail "ballarus-g++ --ballarus-help differs from ballarus-gcc's beyond the names"

# LTO objects archived with ballarus-gcc-ar (ar with GCC's LTO plugin) keep
# a symbol index, and the program links, runs and profiles.
if "$rgcc" -O2 -flto -c "$R/src/steps.c" -o "$R/out/steps.lto.o" &&
   "$rgcc" -O2 -flto -c "$R/src/parity.c" -o "$R/out/parity.lto.o" &&
   "$R/prefix/bin/ballarus-gcc-ar" rc "$R/out/libsteps.a" "$R/out/steps.lto.o" "$R/out/parity.lto.o" &&
   "$R/prefix/bin/ballarus-gcc-ranlib" "$R/out/libsteps.a" &&
   "$rgcc" -O2 -flto -o "$R/out/lto" "$R/src/main.c" "$R/out/libsteps.a"; then
  syms=$("$R/prefix/bin/ballarus-gcc-nm" "$R/out/libsteps.a")
  grep -q ' T collatz_steps$' <<<"$syms" \
    || fail "ballarus-gcc-nm does not list collatz_steps in the LTO archive"
  run_profiled "LTO archive" "$R/out/lto.profile" "$R/out/lto" 30
else
  fail "LTO build with ballarus-gcc-ar failed"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all wrapper checks passed"
