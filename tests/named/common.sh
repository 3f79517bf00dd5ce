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

# same_line_sets NAMED ORACLE TEST...: for every TEST, the lines it executed
# by its named counts in the profiles under NAMED equal the lines the
# profiles under ORACLE/TEST (that test run alone, unnamed) executed, read
# three ways: `lcov --test TEST` and the TN: section of TEST (its name in
# lcov's letters) in the named profiles' tracefile, against lcov of the
# test's own profiles; named_lines tests (the core reader's named runs,
# core/profile_reader.h ReadNamedRun) against named_lines sum of them (all
# of gcov's lines, which lcov's report filters).  No other test is named.
# Tests listed in $random_tests (their inputs are random bytes, so no two of
# their runs need execute the same lines) must only execute some line by
# their named counts; the count of lines that differ is shown.
random_tests=()
same_line_sets() {
  local named=$1 oracle=$2 t; shift 2
  local -a files=()
  : >"$tmp/oracle.txt"
  : >"$tmp/oracle_core.txt"
  : >"$tmp/by_test.txt"
  for t in "$@"; do
    mapfile -t files < <(profiles_in "$oracle/$t")
    if [ "${#files[@]}" -gt 0 ]; then
      check "lcov $oracle/$t" "$recon" lcov -o "$tmp/t.info" "${files[@]}" \
        && executed "$tmp/t.info" "$t" >>"$tmp/oracle.txt"
      "$named_lines" sum "${files[@]}" | sed "s|^|$t\t|" >>"$tmp/oracle_core.txt" \
        || fail "named_lines sum $oracle/$t"
    fi
    if "$recon" lcov --test "$t" -o "$tmp/t.info" "$named" 2>"$tmp/err"; then
      executed "$tmp/t.info" "$t" >>"$tmp/by_test.txt"
    elif [ "${#files[@]}" -gt 0 ]; then
      fail "lcov --test $t: $(cat "$tmp/err")"
    fi
  done
  check "lcov $named" "$recon" lcov -o "$tmp/named.info" "$named"
  executed "$tmp/named.info" | grep -v "^	" >"$tmp/sections.txt"
  mapfile -t files < <(profiles_in "$named")
  "$named_lines" tests "${files[@]}" >"$tmp/core.txt" \
    || fail "named_lines tests $named"
  local f
  for t in "${random_tests[@]+"${random_tests[@]}"}"; do
    grep -q "^$t	" "$tmp/by_test.txt" || fail "$t (random input) executed no line by its named counts"
    echo "$t: random input, $(diff <(grep "^$t	" "$tmp/oracle.txt" | sort) <(grep "^$t	" "$tmp/by_test.txt" | sort) | grep -c '^[<>]') of its lines differ from its run alone; not compared"
  done
  for f in oracle oracle_core by_test core sections; do
    awk -F'\t' -v skip="${random_tests[*]+"${random_tests[*]}"}" '
      BEGIN { n = split(skip, a, " "); for (i = 1; i <= n; i++) {
                s[a[i]] = 1; t = a[i]; gsub(/[^A-Za-z0-9_]/, "_", t); s[t] = 1 } }
      !($1 in s)' "$tmp/$f.txt" | LC_ALL=C sort >"$tmp/$f.sorted"
    mv "$tmp/$f.sorted" "$tmp/$f.txt"
  done
  # lcov's TN: names: letters, digits and '_' (no two tests collide here).
  awk -F'\t' '{ gsub(/[^A-Za-z0-9_]/, "_", $1); print $1 "\t" $2 }' \
    "$tmp/oracle.txt" | LC_ALL=C sort >"$tmp/oracle_tn.txt"
  for f in by_test:oracle core:oracle_core sections:oracle_tn; do
    diff -u "$tmp/${f#*:}.txt" "$tmp/${f%:*}.txt" >"$tmp/lines.diff" && continue
    fail "lines per test by ${f%:*} differ from the tests run alone"
    head -n 40 "$tmp/lines.diff" >&2
  done
  local rows tests sets
  rows=$(wc -l <"$tmp/oracle.txt")
  tests=$(cut -f1 "$tmp/oracle.txt" | uniq | wc -l)
  sets=$(awk -F'\t' '{s[$1] = s[$1] " " $2} END {for (t in s) print s[t]}' \
    "$tmp/oracle.txt" | sort -u | wc -l)
  echo "line sets: $tests tests executing lines, $sets distinct sets, $rows (test, line) pairs, equal to the tests run alone (lcov --test, TN: sections, core reader)"
  [ "$tests" -ge $(($# - ${#random_tests[@]})) ] \
    || fail "only $tests of $# tests executed a line"
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
