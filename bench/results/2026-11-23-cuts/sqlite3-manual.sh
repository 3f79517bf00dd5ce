#!/bin/bash
# try.sh NAME PREFIX [extra cc args...]: build sqlite3 path mode, run under cachegrind, print VdbeExec Ir
set -e
name=$1; prefix=$2; shift 2
W=/root/.cache/ballarus-bench/work-cuts-manual
A=/root/.cache/ballarus-bench/src/sqlite3-3.40.1/bld
H=/work/wt-cuts/bench
d=$W/$name; rm -rf $d; mkdir -p $d; cd $d
cc="$W/$prefix/bin/ballarus-gcc -fplugin-arg-ballarus-mode=path -fplugin-arg-ballarus-update=single $*"
[ "$prefix" = plain ] && cc="gcc"
flags="-O2 $EXTRA_FLAGS -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I$A"
/usr/bin/time -f "%U user" nice $cc $flags -c $A/sqlite3.c -o sqlite3.o 2> build.err
nice $cc $flags -c $A/shell.c -o shell.o
$cc -O2 -o exe sqlite3.o shell.o -ldl -lm
mkdir -p run; cd run
export BALLARUS_PROFILE=$d/run/p.bprof
(exec -a sqlite3 $d/exe -batch -init /dev/null :memory:) < $H/sqlite3/workload.sql > stdout 2> stderr
rm -f p.bprof
nice valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$d/cg.out --log-file=$d/vg.log $d/exe -batch -init /dev/null :memory: < $H/sqlite3/workload.sql > stdout2 2> stderr2
cmp stdout stdout2
grep summary $d/cg.out
cg_annotate $d/cg.out 2>/dev/null | grep -E "sqlite3VdbeExec|PROGRAM TOTALS|Ir " | head -5
