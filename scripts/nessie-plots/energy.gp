# Nessie and NessieSD: power against utilisation (scripts/nessie-scenarios.sh energy).
if (!exists("dir")) dir = 'results/nessie'
set terminal pngcairo size 1000,450 font ",11"
set output dir.'/energy.png'
set datafile separator ","
set termoption noenhanced
set multiplot layout 1,2 title "Power on SimGrid, unit profile: 1 W per busy core (scenarios/nessie/energy.toml)"
set xlabel "utilisation (throughput / the mode's peak)"
set grid
set key top left
set title "power of all 6 hosts (= busy cores)"
set ylabel "W"
plot for [mode in "client server"] \
  "< grep '^".mode.",' ".dir."/energy.csv" using 4:7 with linespoints title mode
set title "energy per operation"
set ylabel "uJ per op"
set key top right
plot for [mode in "client server"] \
  "< grep '^".mode.",' ".dir."/energy.csv" using 4:($8*1e6) with linespoints title mode
unset multiplot
