#!/usr/bin/env bash
# gcovr_gcov_test.sh — //tests:gcovr_gcov_test: gcovr reads the .gcov files
# `ballarus-reconstruct gcov` writes and reports what it reports from gcov's.
#
# A program of two translation units that include one header (each TU uses
# other functions of it) is built twice with the real gcc: with --coverage
# (gcovr runs gcov itself) and with the ballarus plugin and runtime (each
# object's counts in NAME.bprof beside it).  gcovr's full JSON report (every
# file's lines, branches and functions) from gcov's data is the oracle; it
# must be the same, byte for byte, from ballarus by both recipes the README
# gives:
#   1. `ballarus-reconstruct gcov -b -c -p -l` once per profile, in its
#      directory, then `gcovr -g -k` (use the .gcov files as they are);
#   2. `gcovr --gcov-executable 'ballarus-reconstruct gcov'` with an empty
#      NAME.gcno beside each NAME.bprof (gcovr looks for .gcda/.gcno files and
#      runs the executable on them; ballarus reads the profile beside).
# And `ballarus-reconstruct gcov` with gcov's own arguments (-a, -b, -c, -u,
# -H, -l, -p, -o DIR, several inputs) writes gcov's stdout and .gcov files,
# but for the Graph:/Data: lines, which name the profile; a missing -o DIR
# fails as gcov's missing data does.
set -euo pipefail
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
plugin=$rf/plugin/ballarus.so
runtime=$rf/runtime/archive/libballarus_rt.a
recon=$rf/reconstruct/ballarus-reconstruct
work=${TEST_TMPDIR:-$(mktemp -d)}/gcovr-gcov
rm -rf "$work"
mkdir -p "$work/src" "$work/gcov" "$work/ballarus"
for tool in gcc gcov gcovr; do
  command -v $tool >/dev/null || { echo "FAIL: $tool not on PATH"; exit 1; }
done
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat > "$work/src/h.h" <<'EOF'
/* Both translation units include this header; each uses other parts. */
static inline int clamp(int x, int hi)
{
  if (x > hi)
    return hi;
  return x;
}

static inline int twice(int x)
{
  return x + x;
}

static inline int sign(int x)
{
  if (x < 0)
    return -1;
  return x > 0;
}
EOF
cat > "$work/src/a.c" <<'EOF'
#include <stdio.h>
#include "h.h"
int b(int);
int main(int argc, char **argv)
{
  int s = 0;
  for (int i = 0; i < 10 + argc; i++)
    s += clamp(i, 6) + b(i - 4);
  if (argc > 5)
    puts("many");
  printf("%d\n", sign(s) + twice(s));
  return 0;
}
EOF
cat > "$work/src/b.c" <<'EOF'
#include "h.h"
int b(int i)
{
  if (i == 100)
    return 0;
  return sign(i) + clamp(i, 2);
}
EOF

# Builds in DIR (the objects' directory), compiling from ../src as a build
# directory beside the sources does, and runs the program.
build() {
  local dir=$1; shift
  (cd "$dir" &&
   gcc "$@" -c ../src/a.c -o a.o && gcc "$@" -c ../src/b.c -o b.o &&
   if [ "$1" = --coverage ]; then gcc --coverage a.o b.o -o prog
   else gcc a.o b.o "$runtime" -lpthread \
          -Wl,--export-dynamic-symbol=__ballarus_master -o prog; fi &&
   ./prog > /dev/null)
}
build "$work/gcov" --coverage
build "$work/ballarus" -fplugin="$plugin"
[ -f "$work/ballarus/a.bprof" ] && [ -f "$work/ballarus/b.bprof" ] ||
  bad "no a.bprof / b.bprof beside the objects"

(cd "$work/gcov" && gcovr -r ../src . --json-pretty -o ../gcov.json)
gcovr_lines=$(cd "$work/gcov" && gcovr -r ../src . | grep '^TOTAL')
echo "gcovr over gcov: $gcovr_lines"

# Recipe 1: .gcov files, then gcovr -g -k.
(cd "$work/ballarus" &&
 find . -name '*.bprof' -exec sh -c \
   'cd "${1%/*}" && exec "$0" gcov -b -c -p -l "${1##*/}"' "$recon" {} \; \
   > /dev/null &&
 gcovr -g -k -r ../src . --json-pretty -o ../ballarus-g.json)
cmp -s "$work/gcov.json" "$work/ballarus-g.json" ||
  bad "gcovr -g -k on ballarus' .gcov files differs from gcovr on gcov's:
$(diff "$work/gcov.json" "$work/ballarus-g.json" | head -40)"
rm -f "$work/ballarus"/*.gcov

# Recipe 2: gcovr runs ballarus-reconstruct gcov itself.
(cd "$work/ballarus" &&
 find . -name '*.bprof' -exec sh -c ': > "${1%.bprof}.gcno"' _ {} \; &&
 gcovr --gcov-executable "$recon gcov" -r ../src . --json-pretty \
   -o ../ballarus-x.json)
cmp -s "$work/gcov.json" "$work/ballarus-x.json" ||
  bad "gcovr --gcov-executable 'ballarus-reconstruct gcov' differs from gcovr on gcov:
$(diff "$work/gcov.json" "$work/ballarus-x.json" | head -40)"
rm -f "$work/ballarus"/*.gcno "$work/ballarus"/*.gcov

# gcov's own command lines, run in a third directory as gcov is run on an
# object directory (-o) with sources named as compiled.
mkdir -p "$work/run-gcov" "$work/run-ballarus"
for opts in "-a" "-a -b -u" "-a -b -c -H" "-b -l -p" "-l" "-f -m -b"; do
  for inputs in "../src/a.c" "../src/a.c ../src/b.c" "../src/b.c"; do
    rm -f "$work/run-gcov"/* "$work/run-ballarus"/*
    # shellcheck disable=SC2086
    (cd "$work/run-gcov" && gcov $opts -o ../gcov $inputs > stdout)
    # shellcheck disable=SC2086
    (cd "$work/run-ballarus" && "$recon" gcov $opts -o ../ballarus $inputs \
       > stdout)
    what="gcov $opts -o DIR $inputs"
    gl=$(cd "$work/run-gcov" && ls) bl=$(cd "$work/run-ballarus" && ls)
    [ "$gl" = "$bl" ] || bad "$what: files $gl, ballarus $bl"
    for f in $gl; do
      diff <(sed 's/^\( *-:    0:\)\(Graph\|Data\):.*/\1\2/' \
               "$work/run-gcov/$f") \
           <(sed 's/^\( *-:    0:\)\(Graph\|Data\):.*/\1\2/' \
               "$work/run-ballarus/$f") > "$work/diff" ||
        bad "$what: $f differs: $(head -20 "$work/diff")"
    done
  done
done
(cd "$work/run-ballarus" && rm -f ./* &&
 "$recon" gcov -a -o ../ballarus ../src/a.c > /dev/null &&
 grep -q -- '-block  1$' a.c.gcov) || bad "-a wrote no block lines"

# -o naming a missing directory: gcov looks for NAME.gcda there and says
# it cannot; so does ballarus for the profile, with gcov's status 1.
set +e
(cd "$work/run-ballarus" && "$recon" gcov -o ../nowhere ../src/a.c \
   > out 2> err)
st=$?
set -e
[ $st = 1 ] && grep -q '^\.\./nowhere\.bprof:cannot open profile$' \
  "$work/run-ballarus/err" && grep -q '^No executable lines$' \
  "$work/run-ballarus/out" ||
  bad "-o missing dir: status $st, stderr $(cat "$work/run-ballarus/err")"

[ $fail = 0 ] && echo "PASS: gcovr reports the same from ballarus' .gcov files"
exit $fail
