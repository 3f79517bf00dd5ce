# gnuplot script written by bench/lib/bench.py; run from the results directory
set terminal pngcairo size 900,720 noenhanced font ",10"
set output 'chart.png'
set title "ballarus bench: run time / base run time (median, min-max over 5 runs)"
set datafile missing '-'
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.75 border -1
set boxwidth 0.9
set logscale y 2
set yrange [0.5:2.3]
set ytics (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
set grid ytics
set ylabel "ratio to the base build (log scale)"
set xtics rotate by 30 right scale 0
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "black" front
plot 'raw/chart.dat' using 2:3:4:xtic(1) title 'lua', '' using 5:6:7 title 'sqlite3', '' using 8:9:10 title 'bzip2'
