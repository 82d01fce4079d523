# The NAM index's coarse-grained and hybrid RPCs over SEND/RECV against
# RDMA-WRITE mailboxes (index.rpc_transport; scripts/nam-scenarios.sh
# transport), for w: point (point queries) or mixed50 (50% inserts):
# throughput (top) and mean latency (bottom) against the clients, uniform
# (left) and with the calibration's attribute-value skew (right).
if (!exists("dir")) dir = 'results/nam'
if (!exists("w")) w = 'point'
set terminal pngcairo size 1200,900 font ",11"
set output dir.'/transport-'.w.'.png'
set datafile separator ","
set termoption noenhanced
title(s) = s eq 'point' ? 'point queries' : '50% point queries, 50% inserts'
f(skew, d, t) = dir.'/transport-'.w.'-'.skew.'-'.d.'-'.t.'.csv'
set multiplot layout 2,2 title "NAM index, 4 memory servers, SEND/RECV against mailboxes: ".title(w)
set grid
set key top left
set xlabel "clients (40 a compute server)"
do for [skew in "uniform skewed"] {
  set ylabel "throughput (M ops/s)"
  set yrange [0:*]
  set title skew
  plot f(skew, 'coarse', 'send_recv') using 2:($3/1e6) with linespoints lw 2 pt 7 lc rgb "#d62728" title "coarse, SEND/RECV", \
       f(skew, 'coarse', 'mailbox') using 2:($3/1e6) with linespoints lw 2 pt 6 dt 2 lc rgb "#d62728" title "coarse, mailbox", \
       f(skew, 'hybrid', 'send_recv') using 2:($3/1e6) with linespoints lw 2 pt 5 lc rgb "#2ca02c" title "hybrid, SEND/RECV", \
       f(skew, 'hybrid', 'mailbox') using 2:($3/1e6) with linespoints lw 2 pt 4 dt 2 lc rgb "#2ca02c" title "hybrid, mailbox"
}
do for [skew in "uniform skewed"] {
  set ylabel "mean latency (us)"
  set yrange [0:*]
  set title skew
  plot f(skew, 'coarse', 'send_recv') using 2:4 with linespoints lw 2 pt 7 lc rgb "#d62728" title "coarse, SEND/RECV", \
       f(skew, 'coarse', 'mailbox') using 2:4 with linespoints lw 2 pt 6 dt 2 lc rgb "#d62728" title "coarse, mailbox", \
       f(skew, 'hybrid', 'send_recv') using 2:4 with linespoints lw 2 pt 5 lc rgb "#2ca02c" title "hybrid, SEND/RECV", \
       f(skew, 'hybrid', 'mailbox') using 2:4 with linespoints lw 2 pt 4 dt 2 lc rgb "#2ca02c" title "hybrid, mailbox"
}
unset multiplot
