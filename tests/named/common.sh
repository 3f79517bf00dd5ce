# common.sh — sourced by the named-run tests: the build-system tests'
# common.sh (failure counting, ballarus installed into $prefix, $tmp), and
# moving profiles out of a build tree and comparing them.

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/build_systems/common.sh"
here=$runfiles/tests/named
named_lines=$here/named_lines

# take_profiles TREE DEST: moves every profile under TREE into DEST, at the
# same relative path, leaving TREE without profiles (DEST is made afresh).
take_profiles() {
  local p
  rm -rf "$2"
  mkdir -p "$2"
  (cd "$1" && find . -name '*.bprof' -print0) | while IFS= read -r -d '' p; do
    mkdir -p "$2/$(dirname -- "$p")"
    mv -- "$1/$p" "$2/$p"
  done
}

profiles_in() { find "$1" -name '*.bprof' | sort; }

# executed TRACEFILE [TEST]: "TEST<tab>FILE:LINE" of every line with a
# non-zero DA: count, TEST being the section's TN: name unless given.
executed() {
  awk -F'[:,]' -v t="${2:-}" '
    /^TN:/ { tn = substr($0, 4) }
    /^SF:/ { sf = substr($0, 4) }
    /^DA:/ && $3 != 0 { print (t != "" ? t : tn) "\t" sf ":" $2 }' "$1"
}

# alone_lines TEST DIR: the lines TEST executed in the profiles under DIR
# (a run of TEST alone, unnamed), as "TEST<tab>FILE:LINE", into
# $tmp/alone.lcov (lcov's lines) and $tmp/alone.core (named_lines sum: all
# of gcov's lines, which lcov's report filters).
alone_lines() {
  local t=$1 dir=$2
  local -a files=()
  : >"$tmp/alone.lcov"
  : >"$tmp/alone.core"
  mapfile -t files < <(profiles_in "$dir")
  [ "${#files[@]}" -gt 0 ] || return 0
  check "lcov $dir" "$recon" lcov -o "$tmp/t.info" "${files[@]}" \
    && executed "$tmp/t.info" "$t" | LC_ALL=C sort >"$tmp/alone.lcov"
  "$named_lines" sum "${files[@]}" | sed "s|^|$t\t|" | LC_ALL=C sort \
    >"$tmp/alone.core" || fail "named_lines sum $dir"
}

# same_as_alone TEST: TEST's named lines, three ways (rows of
# $tmp/{by_test,core,sections}.txt), equal those of $tmp/alone.*; the
# differences in $tmp/lines.diff.
same_as_alone() {
  local t=$1 tn=${1//[^A-Za-z0-9_]/_}
  grep "^$t	" "$tmp/by_test.txt" | LC_ALL=C sort >"$tmp/t.by_test"
  grep "^$t	" "$tmp/core.txt" | LC_ALL=C sort >"$tmp/t.core"
  grep "^$tn	" "$tmp/sections.txt" | sed "s|^$tn	|$t	|" | LC_ALL=C sort \
    >"$tmp/t.sections"
  diff -u "$tmp/alone.lcov" "$tmp/t.by_test" >"$tmp/lines.diff" \
    && diff -u "$tmp/alone.core" "$tmp/t.core" >>"$tmp/lines.diff" \
    && diff -u "$tmp/alone.lcov" "$tmp/t.sections" >>"$tmp/lines.diff"
}

# same_line_sets NAMED ORACLE TEST...: for every TEST, the lines it executed
# by its named counts in the profiles under NAMED equal the lines the
# profiles under ORACLE/TEST (that test run alone, unnamed) executed, read
# three ways: `lcov --test TEST` and the TN: section of TEST (its name in
# lcov's letters; no two tests collide here) in the named profiles'
# tracefile, against lcov of the test's own profiles; named_lines tests
# (the core reader's named runs, core/profile_reader.h ReadNamedRun)
# against named_lines sum of them.  No other test is named.  A test whose
# lines differ from one run to the next (gzip reads pipes in chunks of
# varying size; two-files compresses random bytes) may differ from its
# first run alone: when the caller defines run_alone TEST DIR, the test is
# run alone again, up to 20 times, and its named lines must equal one run's.
same_line_sets() {
  local named=$1 oracle=$2 t k; shift 2
  local -a files=()
  : >"$tmp/by_test.txt"
  for t in "$@"; do
    "$recon" lcov --test "$t" -o "$tmp/t.info" "$named" 2>"$tmp/err" \
      && executed "$tmp/t.info" "$t" >>"$tmp/by_test.txt"
  done
  check "lcov $named" "$recon" lcov -o "$tmp/named.info" "$named"
  executed "$tmp/named.info" | grep -v "^	" >"$tmp/sections.txt"
  mapfile -t files < <(profiles_in "$named")
  "$named_lines" tests "${files[@]}" >"$tmp/core.txt" \
    || fail "named_lines tests $named"
  : >"$tmp/oracle.txt"
  for t in "$@"; do
    alone_lines "$t" "$oracle/$t"
    k=1
    while ! same_as_alone "$t" && [ "$(type -t run_alone)" = function ] \
        && [ "$k" -le 20 ]; do
      run_alone "$t" "$oracle.$k/$t"
      alone_lines "$t" "$oracle.$k/$t"
      k=$((k + 1))
    done
    if same_as_alone "$t"; then
      [ "$k" = 1 ] || echo "$t: its lines vary between runs alone; equal to run $k alone"
      cat "$tmp/alone.lcov" >>"$tmp/oracle.txt"
    else
      fail "$t: its named lines differ from its runs alone"
      head -n 40 "$tmp/lines.diff" >&2
    fi
  done
  # Named tests that are not the TESTs.
  cut -f1 "$tmp/core.txt" | sort -u >"$tmp/core.names"
  printf '%s\n' "$@" | sort -u | comm -23 "$tmp/core.names" - >"$tmp/extra.names"
  [ -s "$tmp/extra.names" ] && fail "other tests named: $(tr '\n' ' ' <"$tmp/extra.names")"
  local rows tests sets
  rows=$(wc -l <"$tmp/oracle.txt")
  tests=$(cut -f1 "$tmp/oracle.txt" | uniq | wc -l)
  sets=$(awk -F'\t' '{s[$1] = s[$1] " " $2} END {for (t in s) print s[t]}' \
    "$tmp/oracle.txt" | sort -u | wc -l)
  echo "line sets: $tests tests executing lines, $sets distinct sets, $rows (test, line) pairs, equal to the tests run alone (lcov --test, TN: sections, core reader)"
  [ "$tests" -ge "$#" ] || fail "only $tests of $# tests executed a line"
  [ "$sets" -gt 1 ] || fail "every test executed the same lines"
}

# named_is_sum DIR TEST: DIR holds the profiles of TEST run alone, named:
# every process was TEST's, so the lines TEST executed by its named counts
# (lcov --test, named_lines tests) are the lines the sum executed.  The
# oracle of a test whose lines differ from run to run.
named_is_sum() {
  local dir=$1 t=$2
  local -a files=()
  mapfile -t files < <(profiles_in "$dir")
  check "lcov $dir" "$recon" lcov --one-section -o "$tmp/sum.info" "$dir" || return
  check "lcov --test $t $dir" "$recon" lcov --test "$t" -o "$tmp/t.info" "$dir" || return
  executed "$tmp/sum.info" "$t" | sort >"$tmp/sum.txt"
  executed "$tmp/t.info" "$t" | sort >"$tmp/t.txt"
  "$named_lines" sum "${files[@]}" | sort >"$tmp/sum_core.txt"
  "$named_lines" tests "${files[@]}" | cut -f2 | sort >"$tmp/t_core.txt"
  if [ -s "$tmp/sum.txt" ] && cmp -s "$tmp/sum.txt" "$tmp/t.txt" \
      && cmp -s "$tmp/sum_core.txt" "$tmp/t_core.txt"; then
    echo "$t alone, named: its $(wc -l <"$tmp/t.txt") lines are the sum's"
  else
    fail "$t alone, named: its lines are not the sum's"
  fi
}

# runs_of PROFILE: the number of runs its header counts.
runs_of() { "$recon" show "$1" | sed -n '1s/.*: \([0-9]*\) runs,.*/\1/p'; }

# same_sum NAMED TODAY bytes|lines: the profiles under NAMED and under
# TODAY (the same suite run unnamed) are the same files, and each named one
# without its named section is
#   bytes: byte for byte the unnamed one;
#   lines: the unnamed one's runs and executed lines (for a suite whose
#          counts differ between two unnamed runs).
same_sum() {
  local named=$1 today=$2 how=$3 p same=0 n=0
  (cd "$named" && find . -name '*.bprof' | sort) >"$tmp/named.list"
  (cd "$today" && find . -name '*.bprof' | sort) >"$tmp/today.list"
  cmp -s "$tmp/named.list" "$tmp/today.list" \
    || fail "the named run's profiles are not the unnamed run's: $(diff "$tmp/today.list" "$tmp/named.list" | head -n 5)"
  while read -r p; do
    [ -f "$named/$p" ] || continue
    n=$((n + 1))
    check "strip $p" "$named_lines" strip "$named/$p" "$tmp/stripped.bprof" \
      || continue
    if cmp -s "$tmp/stripped.bprof" "$today/$p"; then
      same=$((same + 1))
    elif [ "$how" = bytes ]; then
      fail "$p: the named run's sum differs from the unnamed run's profile"
    fi
    [ "$how" = lines ] || continue
    [ "$(runs_of "$named/$p")" = "$(runs_of "$today/$p")" ] \
      || fail "$p: $(runs_of "$named/$p") runs named, $(runs_of "$today/$p") unnamed"
    "$named_lines" sum "$named/$p" >"$tmp/sum.named"
    "$named_lines" sum "$today/$p" >"$tmp/sum.today"
    cmp -s "$tmp/sum.named" "$tmp/sum.today" \
      || fail "$p: the named run's sum executed other lines than the unnamed run"
  done <"$tmp/today.list"
  if [ "$how" = bytes ]; then
    echo "sum: $same profiles byte for byte the unnamed run's once their named section is dropped"
  else
    echo "sum: $n profiles with the unnamed run's runs and executed lines; $same of them byte for byte once their named section is dropped"
  fi
}
