# Load spike: median and p90 latency per 10 ms window for server-only and
# JSQ, with the number of active clients (right axis).
if (!exists("dir")) dir = 'results/cell'
set terminal pngcairo size 1000,600 font ",11"
set output dir.'/load-spike.png'
set datafile separator ","
set termoption noenhanced
set title "Cell, one server core: 24 clients, 60 (2.5x) during the spike (time scaled down 25x)"
set xlabel "simulated time (ms)"
set ylabel "latency (us)"
set y2label "active clients"
set ytics nomirror
set y2tics
set y2range [0:80]
set yrange [0:*]
set key top left
set grid
so = dir.'/load-spike-server_only-timeseries.csv'
jq = dir.'/load-spike-jsq-timeseries.csv'
plot so using ($1*1e3):8 skip 1 with lines lw 2 lc rgb "#d62728" title "server-only p50", \
     so using ($1*1e3):9 skip 1 with lines lw 2 dt 2 lc rgb "#d62728" title "server-only p90", \
     jq using ($1*1e3):8 skip 1 with lines lw 2 lc rgb "#1f77b4" title "JSQ p50", \
     jq using ($1*1e3):9 skip 1 with lines lw 2 dt 2 lc rgb "#1f77b4" title "JSQ p90", \
     jq using ($1*1e3):3 skip 1 axes x1y2 with steps lc rgb "#777777" title "active clients"
