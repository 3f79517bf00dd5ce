#!/usr/bin/env bash
# ccache_test.sh — ballarus-gcc under ccache (BALLARUS_CC="ccache gcc", and
# ccache's masquerading gcc link first on PATH), with a private cache:
#   * a second build of the same objects is all cache hits, the objects are
#     byte for byte the first build's, and the program built from the hits
#     writes a profile that verifies and shows exactly the first one's
#     counts (the profile's metadata lives in the object);
#   * the same sources built in another directory miss: each object records
#     where its profile goes, so a hit from the first directory would send
#     the second build's counts to the first's profile;
#   * a changed plugin misses: reinstalled (new mtime), grown (same mtime),
#     and, with compiler_check=content, changed in place at the same size
#     and mtime (ccache's default check, mtime and size, would hit there).

. "${TEST_SRCDIR:-$0.runfiles}/ballarus/tests/build_systems/common.sh"

command -v ccache >/dev/null || { echo "ccache is not installed" >&2; exit 1; }
export CCACHE_DIR=$tmp/ccache CCACHE_NOHASHDIR=1 CCACHE_TEMPDIR=$tmp/ccache-tmp
unset CCACHE_DISABLE CCACHE_RECACHE CCACHE_COMPILERCHECK CCACHE_PREFIX
export BALLARUS_CC="ccache gcc"
cc=$prefix/bin/ballarus-gcc
plugin=$prefix/lib/ballarus/ballarus.so

# stat NAME: a counter of ccache --print-stats.
ccstat() { ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'; }
hits() { echo $(($(ccstat direct_cache_hit) + $(ccstat preprocessed_cache_hit))); }

# build DIR: compile the two objects, link and run `area circle 3`.
build() {
  (cd "$1" && "$cc" -c shapes.c -o shapes.o && "$cc" -c area.c -o area.o \
     && "$cc" shapes.o area.o -o area && ./area circle 3 >out.txt) \
    || { fail "build in $1 failed"; return 1; }
  grep -qx "area 27" "$1/out.txt" || fail "$1: wrong output: $(cat "$1/out.txt")"
}
# expect_counts WHAT HITS MISSES: the counters moved by that much since the
# last call.
last_hits=0 last_misses=0
expect_counts() {
  local h m
  h=$(hits) m=$(ccstat cache_miss)
  [ $((h - last_hits)) -eq "$2" ] && [ $((m - last_misses)) -eq "$3" ] \
    || fail "$1: $((h - last_hits)) hits and $((m - last_misses)) misses, expected $2 and $3"
  last_hits=$h last_misses=$m
}
# shows DIR: the counts of DIR's profiles.
shows() {
  "$recon" show "$1/shapes.bprof" "$1/area.bprof" 2>&1
}

ccache --zero-stats >/dev/null
copy_project cmake_project "$tmp/a"
build "$tmp/a"
expect_counts "first build" 0 2
verify_profiles "$tmp/a" 2
shows "$tmp/a" >"$tmp/miss.txt"
mkdir "$tmp/miss" && cp "$tmp/a"/*.o "$tmp/miss/"

# --- the same build again: hits, same objects, same profile ---------------
rm -f "$tmp/a"/*.o "$tmp/a"/*.bprof "$tmp/a/area"
build "$tmp/a"
expect_counts "second build" 2 0
for o in shapes.o area.o; do
  cmp -s "$tmp/miss/$o" "$tmp/a/$o" || fail "$o from the cache differs from the compiled one"
done
verify_profiles "$tmp/a" 2
shows "$tmp/a" >"$tmp/hit.txt"
diff -u "$tmp/miss.txt" "$tmp/hit.txt" || fail "the profile of the cached build differs"
grep -q "shape_area" "$tmp/hit.txt" || fail "show names no shape_area: $(head -5 "$tmp/hit.txt")"

# --- another directory: misses, and its own profiles ----------------------
copy_project cmake_project "$tmp/b"
build "$tmp/b"
expect_counts "another directory" 0 2
verify_profiles "$tmp/b" 2
[ -e "$tmp/a/shapes.bprof" ] && [ "$(shows "$tmp/a")" = "$(cat "$tmp/hit.txt")" ] \
  || fail "the build in b/ changed a/'s profiles"

# ccache's masquerading link on PATH: the wrapper still adds the cache key.
mkdir -p "$tmp/masq"
ln -s "$(command -v ccache)" "$tmp/masq/gcc"
copy_project cmake_project "$tmp/c"
(cd "$tmp/c" && PATH="$tmp/masq:$PATH" BALLARUS_CC=gcc BALLARUS_WRAPPER_VERBOSE=1 \
   "$cc" -c shapes.c -o shapes.o 2>"$tmp/c/cmd.txt") || fail "masqueraded compile failed"
grep -q -- "-fplugin-arg-ballarus-cache-key=$tmp/c/shapes.o" "$tmp/c/cmd.txt" \
  || fail "no cache key through the masquerading link: $(cat "$tmp/c/cmd.txt")"
expect_counts "masquerading link" 0 1

# --- a changed plugin misses ----------------------------------------------
# rebuild_a WHAT HITS MISSES: the two objects of a/ again.
rebuild_a() {
  (cd "$tmp/a" && "$cc" -c shapes.c -o shapes.o && "$cc" -c area.c -o area.o) \
    || fail "$1: compile failed"
  expect_counts "$1" "$2" "$3"
}
cp -p "$plugin" "$tmp/plugin.orig"
touch -d '2001-02-03 04:05:06' "$plugin"
rebuild_a "plugin reinstalled" 0 2
rebuild_a "plugin unchanged since" 2 0
printf 'x' >>"$plugin"
touch -d '2001-02-03 04:05:06' "$plugin"
rebuild_a "plugin grown, same mtime" 0 2
printf 'y' | dd of="$plugin" bs=1 seek=$(($(wc -c <"$plugin") - 1)) conv=notrunc status=none
touch -d '2001-02-03 04:05:06' "$plugin"
rebuild_a "plugin changed in place, compiler_check=mtime" 2 0
export CCACHE_COMPILERCHECK=content
rebuild_a "compiler_check=content, first" 0 2
printf 'z' | dd of="$plugin" bs=1 seek=$(($(wc -c <"$plugin") - 1)) conv=notrunc status=none
touch -d '2001-02-03 04:05:06' "$plugin"
rebuild_a "plugin changed in place, compiler_check=content" 0 2
cp -p "$tmp/plugin.orig" "$plugin"

finish
