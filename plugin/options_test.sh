#!/usr/bin/env bash
# options_test.sh — the plugin's options, through the real gcc and the built
# plugin:
#   * -fplugin-arg-ballarus-help lists exactly the user options, and
#     tune-help exactly the tuning switches (tune-NAME);
#   * every tuning switch given its default value compiles a program to the
#     same object as no switch at all, in mode=path and mode=edge,path at
#     -O2, and a switch set otherwise does change it (so the switch reaches
#     the code it tunes);
#   * cache-key=TEXT changes nothing in the object;
#   * no mode= compiles the object mode=path compiles (the default), and
#     not the one mode=edge compiles;
#   * a tuning switch named without tune- fails the compile
#     with an error that names the tune- spelling; an unknown option names
#     itself and points to -fplugin-arg-ballarus-help; a bad value is refused.

set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

runfiles=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
plugin=$runfiles/plugin/ballarus.so
[ -f "$plugin" ] || { echo "no plugin at $plugin" >&2; exit 1; }
tmp=${TEST_TMPDIR:-$(mktemp -d)}/options
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp" || exit 1

# The user options and the tuning switches with their defaults.
user_keys='mode weights update path-table-max path-storage early-termination dump cache-key help tune-help'
tune_defaults='path-hoist=on path-returns=on path-signed=on path-register=pointer
path-loops=profile path-loop-cuts=auto path-call-cuts=auto
path-goto-targets=auto path-from-edges=auto path-derive=auto path-balance=on
path-cut-hoist=on path-precount-hoist=on path-entry-balance=on
entry-calls=on path-keep-tails=on thread-gs=on inline-sizes=on loop-barrier=on loop-registers=auto estimator=ball-larus
path-use=none'

# A program with what the switches act on: loops (one path and several per
# iteration, call-free ones), calls that may not return, a switch, a
# computed goto, returns from several blocks.
cat >prog.c <<'EOF'
#include <stdlib.h>
extern int ext(int);
static __attribute__((noinline)) int step(int x) {
  if (x < 0) exit(3);
  return x & 1 ? 3 * x + 1 : x / 2;
}
int walk(int n, int *a) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] > 7) s += ext(a[i]);
    else s += step(a[i]);
  }
  for (int i = 0; i < n; i++) a[i] += s;
  return s;
}
int pick(int k) {
  switch (k) {
    case 0: return ext(1);
    case 1: return 7;
    case 2: return ext(k) + 1;
    default: return k > 9 ? ext(k) : 0;
  }
}
int run(const unsigned char *code) {
  static void *ops[] = {&&op_inc, &&op_dec, &&op_end};
  int acc = 0;
  goto *ops[*code++];
op_inc:
  acc++;
  if (acc > 100) ext(acc);
  goto *ops[*code++];
op_dec:
  acc--;
  goto *ops[*code++];
op_end:
  return acc;
}
static __attribute__((noinline)) int sq(int x) { return x * x + 1; }
int chain(int a, int b, int c) {
  int s = 0;
  if (a) s += 3;
  if (b) s ^= 5;
  if (c) s -= sq(a);
  s += ext(s);
  if (s & 1) s++;
  if (s & 2) s *= 3;
  return s;
}
EOF

# compile OUT ARGS...: gcc -O2 with the plugin, then the object moved to
# OUT (always compiled as prog.o: the object's name is in its profile
# metadata); stderr to OUT.err.
compile() {
  local out=$1
  shift
  rm -f prog.o
  LC_ALL=C gcc -O2 -fplugin="$plugin" "$@" -c prog.c -o prog.o 2>"$out.err" || return 1
  mv prog.o "$out"
}

# The keys an option listing shows: its lines "  KEY[=VALUES]".
listed_keys() {
  sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | tr '\n' ' ' | sed 's/ $//'
}

# --- cache-key: accepted, and the object is the one without it
compile plain.o -fplugin-arg-ballarus-mode=edge,path || fail "plain compile failed: $(cat plain.o.err)"
compile keyed.o -fplugin-arg-ballarus-mode=edge,path -fplugin-arg-ballarus-cache-key=/some/dir/prog.o \
  || fail "cache-key: compile failed: $(cat keyed.o.err)"
cmp -s plain.o keyed.o || fail "cache-key changed the object"

# --- help
compile help.o -fplugin-arg-ballarus-help || fail "help: compile failed: $(cat help.o.err)"
got=$(listed_keys <help.o.err)
[ "$got" = "$user_keys" ] || fail "help lists '$got', want '$user_keys'"
grep -q 'tune-path\|tune-loop' help.o.err && fail "help lists tuning switches"
grep -q '^  update=single|thread|tls|atomic$' help.o.err \
  || fail "help does not list update=tls: $(grep -A2 '^  update' help.o.err)"

# --- update=tls: an executable's counters in static TLS (a section the
# runtime folds), -fPIC code keeps update=thread's pointer
compile tls.o -fplugin-arg-ballarus-mode=edge -fplugin-arg-ballarus-update=tls \
  || fail "update=tls: compile failed: $(cat tls.o.err)"
readelf -SW tls.o | grep -q ballarus_tls_table || fail "update=tls: no ballarus_tls_table section"
compile tls-pic.o -fPIC -fplugin-arg-ballarus-mode=edge -fplugin-arg-ballarus-update=tls \
  || fail "update=tls -fPIC: compile failed: $(cat tls-pic.o.err)"
readelf -SW tls-pic.o | grep -q ballarus_thread_ctrs || fail "update=tls -fPIC: not per-thread"
readelf -SW tls-pic.o | grep -q ballarus_tls_table && fail "update=tls -fPIC: static TLS in -fPIC code"
compile tune-help.o -fplugin-arg-ballarus-tune-help \
  || fail "tune-help: compile failed: $(cat tune-help.o.err)"
want=$(for kv in $tune_defaults; do printf 'tune-%s ' "${kv%%=*}"; done | sed 's/ $//')
got=$(listed_keys <tune-help.o.err)
[ "$got" = "$want" ] || fail "tune-help lists '$got', want '$want'"
for kv in $tune_defaults; do
  # The switch's entry, its lines joined.
  entry=$(awk -v k="  tune-${kv%%=*}=" 'index($0, k) == 1 { on = 1; next }
    /^  [a-z]/ { on = 0 } on' tune-help.o.err | tr -s ' \n' ' ')
  case "$entry" in
    *"(default ${kv#*=})"* | *"(default ${kv#*=}:"*) ;;
    *) fail "tune-help does not give tune-${kv%%=*}'s default ${kv#*=}: $entry" ;;
  esac
done

# --- every tuning switch at its default changes nothing
for mode in path edge,path; do
  compile "plain-$mode.o" -fplugin-arg-ballarus-mode=$mode \
    || { fail "mode=$mode: compile failed: $(cat "plain-$mode.o.err")"; continue; }
  args=()
  for kv in $tune_defaults; do args+=("-fplugin-arg-ballarus-tune-$kv"); done
  if compile "tuned-$mode.o" -fplugin-arg-ballarus-mode=$mode "${args[@]}"; then
    cmp -s "plain-$mode.o" "tuned-$mode.o" \
      || fail "mode=$mode: the tuning switches at their defaults change the object"
  else
    fail "mode=$mode: the defaults refused: $(cat "tuned-$mode.o.err")"
  fi
  # Each alone, too (a later option could hide an earlier one's effect).
  for kv in $tune_defaults; do
    compile one.o -fplugin-arg-ballarus-mode=$mode -fplugin-arg-ballarus-tune-$kv \
      && cmp -s "plain-$mode.o" one.o \
      || fail "mode=$mode: tune-$kv alone changes the object or fails"
  done
done

# --- the default mode is path
if compile default.o && compile path.o -fplugin-arg-ballarus-mode=path \
    && compile edge.o -fplugin-arg-ballarus-mode=edge; then
  cmp -s default.o path.o || fail "no mode= does not compile what mode=path does"
  cmp -s default.o edge.o && fail "no mode= compiles what mode=edge does"
else
  fail "default mode: compile failed: $(cat default.o.err path.o.err edge.o.err)"
fi

# --- a switch set otherwise reaches the code (those that change this
# program's object: 13 of the 18)
for mkv in path:path-hoist=off path:path-register=number path:path-loops=on \
           path:path-loop-cuts=off path:path-call-cuts=off \
           path:path-goto-targets=off path:path-from-edges=off \
           path:path-balance=off path:path-cut-hoist=off path:loop-barrier=off \
           edge,path:path-derive=off edge,path:path-call-cuts=on \
           edge,path:estimator=wu-larus; do
  mode=${mkv%%:*} kv=${mkv#*:}
  if compile other.o -fplugin-arg-ballarus-mode=$mode -fplugin-arg-ballarus-tune-$kv; then
    cmp -s "plain-$mode.o" other.o && fail "mode=$mode: tune-$kv changes nothing"
  else
    fail "tune-$kv refused: $(cat other.o.err)"
  fi
done

# --- names without tune-, unknown options, bad values
for kv in $tune_defaults; do
  name=${kv%%=*}
  if compile old.o -fplugin-arg-ballarus-mode=path "-fplugin-arg-ballarus-$kv"; then
    fail "-fplugin-arg-ballarus-$kv accepted"
  else
    grep -q "unknown option '-fplugin-arg-ballarus-$name'; the tuning switch is '-fplugin-arg-ballarus-tune-$name'" old.o.err \
      || fail "-fplugin-arg-ballarus-$kv: no hint of tune-$name: $(cat old.o.err)"
  fi
done
if compile bad.o -fplugin-arg-ballarus-bogus=1; then
  fail "-fplugin-arg-ballarus-bogus accepted"
else
  grep -q "unknown option '-fplugin-arg-ballarus-bogus'; -fplugin-arg-ballarus-help lists the options" bad.o.err \
    || fail "unknown option: $(cat bad.o.err)"
fi
for kv in tune-loop-barrier=auto tune-path-derive=yes tune-path-register=pointers \
          tune-estimator=gcc \
          mode=paths update=threads path-storage=sparse path-table-max=-1; do
  if compile bad.o "-fplugin-arg-ballarus-$kv"; then
    fail "-fplugin-arg-ballarus-$kv accepted"
  else
    grep -q -- "-fplugin-arg-ballarus-${kv%%=*}" bad.o.err \
      || fail "-fplugin-arg-ballarus-$kv: the error does not name the option: $(cat bad.o.err)"
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all option checks passed"
