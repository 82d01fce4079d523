# One of the NAM index's four workloads (w: point, range, mixed95, mixed50;
# scripts/nam-scenarios.sh): throughput (top) and mean latency (bottom)
# against the clients, uniform (left) and with the calibration's
# attribute-value skew (right), for the coarse, fine and hybrid designs.
if (!exists("dir")) dir = 'results/nam'
if (!exists("w")) w = 'point'
set terminal pngcairo size 1200,900 font ",11"
set output dir.'/'.w.'.png'
set datafile separator ","
set termoption noenhanced
title(s) = s eq 'point' ? 'point queries' : s eq 'range' ? 'range queries, selectivity 0.001' : \
           s eq 'mixed95' ? '95% point queries, 5% inserts' : '50% point queries, 50% inserts'
set multiplot layout 2,2 title "NAM index, 4 memory servers: ".title(w)
set grid
set key top left
set xlabel "clients (40 a compute server)"
do for [skew in "uniform skewed"] {
  set ylabel "throughput (M ops/s)"
  set yrange [0:*]
  set title skew
  plot dir.'/'.w.'-'.skew.'-coarse.csv' using 2:($3/1e6) with linespoints lw 2 pt 7 lc rgb "#d62728" title "coarse", \
       dir.'/'.w.'-'.skew.'-fine.csv' using 2:($3/1e6) with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "fine", \
       dir.'/'.w.'-'.skew.'-hybrid.csv' using 2:($3/1e6) with linespoints lw 2 pt 5 lc rgb "#2ca02c" title "hybrid"
}
do for [skew in "uniform skewed"] {
  set ylabel "mean latency (us)"
  set yrange [0:*]
  set title skew
  plot dir.'/'.w.'-'.skew.'-coarse.csv' using 2:4 with linespoints lw 2 pt 7 lc rgb "#d62728" title "coarse", \
       dir.'/'.w.'-'.skew.'-fine.csv' using 2:4 with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "fine", \
       dir.'/'.w.'-'.skew.'-hybrid.csv' using 2:4 with linespoints lw 2 pt 5 lc rgb "#2ca02c" title "hybrid"
}
unset multiplot
