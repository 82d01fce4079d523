# YCSB A and B with inserts growing the tree: throughput per selector.
if (!exists("dir")) dir = 'results/cell'
set terminal pngcairo size 800,500 font ",11"
set output dir.'/mixed.png'
set datafile separator ","
set termoption noenhanced
set title "Cell, 2 servers x 2 cores, YCSB A / B, 10% of operations insert new keys (tree grows)"
set ylabel "throughput (K ops/s)"
set xlabel "selector"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set grid ytics
set key top left
plot "< grep '^A,' ".dir."/mixed.csv" using ($3/1e3):xtic(2) title "YCSB A (reads/updates/inserts 45/45/10%)", \
     "< grep '^B,' ".dir."/mixed.csv" using ($3/1e3) title "YCSB B (reads/updates/inserts 85.5/4.5/10%)"
