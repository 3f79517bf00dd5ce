#!/usr/bin/env bash
# pathdup_test.sh — //tests:pathdup_test, path-guided duplication
# (-fplugin-arg-ballarus-tune-path-use=FILE) with the real gcc and the installed
# plugin:
#   1. every one-directory program of tests/programs/MANIFEST, at -O2 and
#      -O3: trained with ballarus-gcc mode=edge,path, its profiles turned
#      into .gcda (`ballarus-reconstruct gcda --in-place`) and merged into
#      one path profile, then rebuilt with gcc -fprofile-use and tune-path-use=
#      that profile: the compile succeeds (no ICE) and the program prints
#      and exits exactly as the plain build does;
#   2. tests/pathdup/correlated.c, whose two branches go the same way: the
#      pass's dump must list one chain in step(), entered from one side of
#      the first branch into the join the two executed paths share (read
#      from `ballarus-reconstruct paths`, the independent oracle), the copy
#      counted exactly as the path through that side; and the output is
#      the plain build's;
#   3. a profile that cannot be read fails the compile with an error naming
#      path-use.
set -uo pipefail

failures=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}
rf=${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}/ballarus
tmp=${TEST_TMPDIR:-$(mktemp -d)}/pathdup
rm -rf "$tmp" && mkdir -p "$tmp"
"$rf/install" "$tmp/prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; echo "FAIL: install" >&2; exit 1; }
prefix=$tmp/prefix
recon=$prefix/bin/ballarus-reconstruct
plugin=$prefix/lib/ballarus/ballarus.so
programs=$rf/tests/programs

# run DIR: runs DIR/exe in DIR; DIR/out.txt gets stdout and the exit status.
run() {
  (cd "$1" && { ./exe >out.txt 2>/dev/null; echo "exit $?" >>out.txt; })
}

# build DIR CC FLAGS SOURCES...: compiles each source with -c, then links.
build() {
  local dir=$1 cc=$2 flags=$3 s objs=()
  shift 3
  for s in "$@"; do
    # shellcheck disable=SC2086
    (cd "$dir" && $cc $flags -c "$s" -o "${s%.*}.o") >>"$dir/build.log" 2>&1 || return 1
    objs+=("${s%.*}.o")
  done
  # shellcheck disable=SC2086
  (cd "$dir" && $cc $flags "${objs[@]}" -o exe) >>"$dir/build.log" 2>&1
}

# check NAME OPT CFLAGS SOURCES...: steps 1 and 2's builds of one program;
# leaves the path-use build in $tmp/NAME$OPT/use.
check() {
  local name=$1 opt=$2 cflags=$3 d=$tmp/$1$2 cc=gcc bcc=$prefix/bin/ballarus-gcc s
  shift 3
  case " $* " in *.cc\ *) cc=g++ bcc=$prefix/bin/ballarus-g++ ;; esac
  for v in plain train use; do
    mkdir -p "$d/$v"
    for s in "$@"; do cp "$programs/$s" "$d/$v/" 2>/dev/null || cp "$s" "$d/$v/"; done
  done
  local srcs=()
  for s in "$@"; do srcs+=("$(basename "$s")"); done
  build "$d/plain" "$cc" "$opt $cflags" "${srcs[@]}" || { fail "$name $opt: plain build"; return; }
  run "$d/plain"
  build "$d/train" "$bcc -fplugin-arg-ballarus-mode=edge,path" "$opt $cflags" "${srcs[@]}" \
    || { fail "$name $opt: training build"; return; }
  mkdir -p "$d/prof"
  (cd "$d/train" && BALLARUS_PROFILE=$d/prof/%p.profile ./exe >/dev/null 2>&1)
  "$recon" merge -o "$d/path.profile" "$d"/prof/*.profile >/dev/null 2>&1 \
    || { fail "$name $opt: merge"; return; }
  # The .gcda go beside the training objects; the use build is made there.
  "$recon" gcda --in-place "$d/path.profile" >/dev/null 2>&1 \
    || { fail "$name $opt: gcda"; return; }
  cp "$d"/train/*.gcda "$d/use/"
  build "$d/use" "$cc -fprofile-use -fplugin=$plugin -fplugin-arg-ballarus-tune-path-use=$d/path.profile -fplugin-arg-ballarus-dump" \
    "$opt $cflags" "${srcs[@]}" || { fail "$name $opt: path-use build (see $d/use/build.log)"; tail -n 5 "$d/use/build.log" >&2; return; }
  grep -q 'internal compiler error' "$d/use/build.log" && fail "$name $opt: ICE"
  ls "$d"/use/*.ballarus-pathdup >/dev/null 2>&1 || fail "$name $opt: the pass wrote no dump"
  run "$d/use"
  cmp -s "$d/plain/out.txt" "$d/use/out.txt" || fail "$name $opt: output differs from the plain build's"
}

# 1. The corpus.
chains=0
while read -r name first rest; do
  case "$name" in ''|\#*) continue ;; esac
  case "$first $rest" in */*|*shared=*|*plain=*) continue ;; esac
  cflags='' srcs=("$first")
  for w in $rest; do
    case "$w" in cflags=*) cflags=${w#cflags=}; cflags=${cflags//,/ } ;; *) srcs+=("$w") ;; esac
  done
  for opt in -O2 -O3; do
    check "$name" "$opt" "$cflags" "${srcs[@]}"
    n=$(cat "$tmp/$name$opt"/use/*pathdup 2>/dev/null | grep -c '^  chain entered by')
    chains=$((chains + n))
  done
done <"$programs/MANIFEST"
echo "corpus: $chains chains copied"

# 2. The correlated pair.
check correlated -O2 "" "$rf/tests/pathdup/correlated.c"
d=$tmp/correlated-O2
"$recon" paths "$d/path.profile" >"$d/paths.txt" 2>&1 || fail "paths report"
# step's two executed paths: "path N: ENTRY b1 b2 J b4 b5 EXIT".
mapfile -t step_paths < <(awk '/^step /{f=1; next} /^[a-z]/{f=0} f && / path [0-9]+: ENTRY/' "$d/paths.txt")
[ "${#step_paths[@]}" = 2 ] || fail "step: expected 2 executed paths, got ${#step_paths[@]}"
join=$(printf '%s\n' "${step_paths[@]}" | awk '{ for (i = 1; i <= NF; i++) if ($i == "ENTRY") { print $(i + 3); exit } }')
dump=$(cat "$d"/use/*pathdup 2>/dev/null)
line=$(printf '%s\n' "$dump" | awk '/^ballarus-pathdup: function step:/{f=1; next} /^ballarus-pathdup:/{f=0} f && /chain entered by/')
[ "$(printf '%s\n' "$line" | grep -c 'chain entered by')" = 1 ] || fail "step: expected one chain, dump: $dump"
ok=0
for pl in "${step_paths[@]}"; do
  read -r count _ _ _ _ b2 j _ <<<"$(echo "$pl" | sed 's/ path [0-9]*: / /')"
  if [[ $line == *"entered by bb $b2 -> bb $join ("* ]] && [[ $line == *"bb $join as bb "*"(count $count)"* ]]; then ok=1; fi
  [ "$j" = "$join" ] || fail "step: the paths do not share block $join: $pl"
done
[ "$ok" = 1 ] || fail "step: chain '$line' is not the join $join entered from a branch side with its path's count (paths: ${step_paths[*]})"

# 3. A profile that cannot be read fails the compile, naming the option.
echo 'int main(void) { return 0; }' >"$tmp/empty.c"
if gcc -O2 -fplugin="$plugin" -fplugin-arg-ballarus-tune-path-use="$tmp/no-such.profile" \
    -c "$tmp/empty.c" -o "$tmp/empty.o" 2>"$tmp/bad.err"; then
  fail "path-use with a missing profile compiled"
fi
grep -q 'tune-path-use' "$tmp/bad.err" || fail "no path-use error: $(cat "$tmp/bad.err")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo PASS
