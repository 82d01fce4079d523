# Four servers with 1..8 cores each: throughput of server-only, JSQ and the
# best fixed ratio (left), and the server-side share JSQ chose against the
# best fixed ratio's (right).
if (!exists("dir")) dir = 'results/cell'
set terminal pngcairo size 1200,500 font ",11"
set output dir.'/four-servers.png'
set datafile separator ","
set termoption noenhanced
set multiplot layout 1,2 title "Cell, 4 servers, lookups, 128 clients"
set xlabel "cores per server"
set ylabel "throughput (M lookups/s)"
set key top left
set grid
set xrange [0.5:8.5]
set yrange [0:*]
plot dir.'/four-servers-server_only.csv' using 1:($2/1e6) with linespoints lw 2 pt 7 lc rgb "#d62728" title "server-only", \
     dir.'/four-servers-jsq.csv' using 1:($2/1e6) with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "JSQ", \
     dir.'/four-servers-best_fixed.csv' using 1:($2/1e6) with linespoints lw 2 pt 5 dt 2 lc rgb "#2ca02c" title "best fixed ratio"
set ylabel "server-side share of steps"
set yrange [0:1.05]
set key top left
plot dir.'/four-servers-jsq.csv' using 1:6 with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "JSQ (chosen)", \
     dir.'/four-servers-best_fixed.csv' using 1:6 with linespoints lw 2 pt 5 dt 2 lc rgb "#2ca02c" title "best fixed ratio"
unset multiplot
