# One meganode on one server core: throughput against mean latency as the
# number of clients grows (1..12), per selector; fixed ratios in grey.
# Called by scripts/cell-scenarios.sh with dir = the results folder.
if (!exists("dir")) dir = 'results/cell'
set terminal pngcairo size 900,600 font ",11"
set output dir.'/one-meganode.png'
set datafile separator ","
set termoption noenhanced
set title "Cell, one meganode on one server core: lookups, 1-12 clients"
set xlabel "throughput (K lookups/s)"
set ylabel "mean latency (us)"
set key top left box opaque
set grid
fixed = "0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0"
plot for [f in fixed] dir.'/one-meganode-fixed'.f.'.csv' using ($2/1e3):3 with lines lc rgb "#bbbbbb" \
       title (f eq "0.5" ? "fixed ratio (client share 0-100%)" : ""), \
     dir.'/one-meganode-fixed0.5.csv' using ($2/1e3):3 with linespoints lc rgb "#888888" pt 1 title "fixed 50%", \
     dir.'/one-meganode-server_only.csv' using ($2/1e3):3 with linespoints lw 2 pt 7 lc rgb "#d62728" title "server-only", \
     dir.'/one-meganode-client_only.csv' using ($2/1e3):3 with linespoints lw 2 pt 5 lc rgb "#2ca02c" title "client-only", \
     dir.'/one-meganode-jsq.csv' using ($2/1e3):3 with linespoints lw 3 pt 9 lc rgb "#1f77b4" title "JSQ"
