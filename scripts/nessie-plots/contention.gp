# Nessie, NessieSD and NessieHY against CPU hogs per host (scripts/nessie-scenarios.sh contention).
if (!exists("dir")) dir = 'results/nessie'
set terminal pngcairo size 1000,450 font ",11"
set output dir.'/contention.png'
set datafile separator ","
set termoption noenhanced
set multiplot layout 1,2 title "CPU contention on SimGrid, 3 nodes of 12 cores (scenarios/nessie/contention.toml)"
set xlabel "CPU hogs per host (12 cores)"
set grid
set key top right
set title "throughput"
set ylabel "K ops/s"
plot for [mode in "client server hybrid"] \
  "< grep ',".mode.",' ".dir."/contention.csv" using 1:($3/1e3) with linespoints title mode
set title "throughput relative to no hogs"
set ylabel "ratio"
set yrange [0:*]
set key bottom left
plot for [mode in "client server hybrid"] \
  "< grep ',".mode.",' ".dir."/contention.csv" using 1:6 with linespoints title mode
unset multiplot
