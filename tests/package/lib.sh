# Shared by the package tests: fail, and the hand-derived counts of count.c.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_counts SRC TRACEFILE: TRACEFILE (lcov) holds the counts of one run
# of SRC (count.c): the test runs 10 times, the addition 4 times.
expect_counts() {
  local src=$1 info=$2 if_line add_line
  grep -q '^SF:.*count\.c$' "$info" || fail "no count.c in $info"
  if_line=$(grep -n 'i % 3 == 0' "$src" | cut -d: -f1)
  add_line=$(grep -n '/\* ADD \*/' "$src" | cut -d: -f1)
  grep -qx "DA:$if_line,10" "$info" || fail "line $if_line of count.c: want count 10; $(grep '^DA' "$info" | tr '\n' ' ')"
  grep -qx "DA:$add_line,4" "$info" || fail "line $add_line of count.c: want count 4; $(grep '^DA' "$info" | tr '\n' ' ')"
}
