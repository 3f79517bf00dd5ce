# gnuplot script written by bench/lib/bench.py; run from the results directory
set terminal pngcairo size 900,720 noenhanced font ",10"
set datafile missing '-'
set style data histogram
set style fill solid 0.75 border -1
set boxwidth 0.9
set logscale y 2
set ytics (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
set grid ytics
set ylabel "ratio to the base build (log scale)"
set xtics rotate by 30 right scale 0
set key top left

set output 'chart-instr.png'
set title "ballarus bench: instructions executed / base build's (valgrind)"
set style histogram clustered gap 1
set yrange [0.5:2.3]
unset arrow
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "black" front
plot 'raw/chart-instr.dat' using 2:xtic(1) title 'lua', '' using 3 title 'sqlite3', '' using 4 title 'bzip2'
