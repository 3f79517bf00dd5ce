#!/bin/bash
W=/work/scratch/s47/g5-work; B=/work/wt/gs47/bench
cmd() { # prog variant
  case $1 in
    lua) echo "bash -c 'cd /work/scratch/s47/wall && exec -a lua $W/lua/build/$2/exe $B/lua/workload.lua >/dev/null'";;
    sqlite3) echo "bash -c 'exec -a sqlite3 $W/sqlite3/build/$2/exe -batch -init /dev/null :memory: <$B/sqlite3/workload.sql >/dev/null'";;
    bzip2) echo "bash -c 'exec -a bzip2 $W/bzip2/build/$2/exe -9 -c </work/scratch/s47/wall/input.txt >/dev/null'";;
  esac
}
for p in bzip2 lua sqlite3; do
  for pair in "edge-thread edge" "path-thread path" "edge-thread-ptr edge"; do
    set -- $pair
    echo "== $p $1 / $2 load $(cut -d' ' -f1-3 /proc/loadavg)"
    eval farm-bench -n 11 --pin 1 --timeout 900 --vs "\"$(cmd $p $2)\"" -- $(cmd $p $1) 2>&1 | grep -E "A/B|A cpu|B cpu"
  done
done
