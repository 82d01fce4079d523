# Nessie, NessieSD and NessieHY against value size (scripts/nessie-scenarios.sh).
if (!exists("dir")) dir = 'results/nessie'
set terminal pngcairo size 1000,450 font ",11"
set output dir.'/values.png'
set datafile separator ","
set termoption noenhanced
set multiplot layout 1,2 title "Nessie modes on SimGrid, 3 nodes of the Nessie testbed, 12 clients (scenarios/nessie/modes.toml)"
set logscale x 2
set logscale y 10
set xlabel "value bytes"
set ylabel "throughput (K ops/s, log scale)"
set grid
set key top right
do for [mix in "B A"] {
  set title (mix eq "B" ? "YCSB-B (95% gets)" : "YCSB-A (50% gets)")
  plot for [mode in "client server hybrid"] \
    "< grep '^".mix.",.*,".mode.",' ".dir."/values.csv" using 2:($4/1e3) with linespoints title mode
}
unset multiplot
