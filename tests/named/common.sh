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

# same_line_sets NAMED ORACLE TEST...: the lines each test executed by the
# named records of the profiles under NAMED equal the lines the profiles
# under ORACLE/TEST (that test run alone, unnamed) executed, for every
# TEST; and no other test is named.
same_line_sets() {
  local named=$1 oracle=$2 t; shift 2
  local -a files=()
  mapfile -t files < <(profiles_in "$named")
  "$named_lines" tests "${files[@]}" >"$tmp/named.txt" \
    || { fail "named_lines tests $named"; return 1; }
  : >"$tmp/oracle.txt"
  for t in "$@"; do
    mapfile -t files < <(profiles_in "$oracle/$t")
    [ "${#files[@]}" -eq 0 ] && continue
    "$named_lines" sum "${files[@]}" | sed "s|^|$t\t|" >>"$tmp/oracle.txt" \
      || fail "named_lines sum $oracle/$t"
  done
  LC_ALL=C sort -o "$tmp/oracle.txt" "$tmp/oracle.txt"
  LC_ALL=C sort -o "$tmp/named.txt" "$tmp/named.txt"
  local rows tests sets
  rows=$(wc -l <"$tmp/oracle.txt")
  tests=$(cut -f1 "$tmp/oracle.txt" | uniq | wc -l)
  sets=$(awk -F'\t' '{s[$1] = s[$1] " " $2} END {for (t in s) print s[t]}' \
    "$tmp/oracle.txt" | sort -u | wc -l)
  if diff -u "$tmp/oracle.txt" "$tmp/named.txt" >"$tmp/lines.diff"; then
    echo "line sets: $tests tests executing lines, $sets distinct sets, $rows (test, line) pairs, equal to the tests run alone"
  else
    fail "line sets of the named tests differ from the tests run alone"
    head -n 40 "$tmp/lines.diff" >&2
  fi
  [ "$tests" -ge "$#" ] || fail "only $tests of $# tests executed a line"
  [ "$sets" -gt 1 ] || fail "every test executed the same lines"
}

# same_sum NAMED TODAY: the profiles under NAMED and under TODAY (the same
# suite run unnamed) are the same files, and each named one without its
# named section is byte for byte the unnamed one.
same_sum() {
  local named=$1 today=$2 p n=0
  (cd "$named" && find . -name '*.bprof' | sort) >"$tmp/named.list"
  (cd "$today" && find . -name '*.bprof' | sort) >"$tmp/today.list"
  cmp -s "$tmp/named.list" "$tmp/today.list" \
    || fail "the named run's profiles are not the unnamed run's: $(diff "$tmp/today.list" "$tmp/named.list" | head -n 5)"
  while read -r p; do
    [ -f "$named/$p" ] || continue
    check "strip $p" "$named_lines" strip "$named/$p" "$tmp/stripped.bprof" \
      || continue
    cmp -s "$tmp/stripped.bprof" "$today/$p" \
      || fail "$p: the named run's sum differs from the unnamed run's profile"
    n=$((n + 1))
  done <"$tmp/today.list"
  echo "sum: $n profiles byte for byte the unnamed run's once their named section is dropped"
}
