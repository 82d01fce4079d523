#!/usr/bin/env bash
# `locus calibrate` end to end: measures Pilaf's handlers at two value sizes
# on loopback and writes a [platform.cpu.handler_cost_us] table that a
# scenario accepts: a put curve with a point per size, costs increasing
# with the size, and the simulator runs with the table in place.
set -euo pipefail
locus=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$locus" calibrate "$root/scenarios/pilaf/put.toml" --set index.mode=vo --set workload.readproportion=0.5 \
  --set workload.updateproportion=0.5 --set run.clients=4 --sizes 16 4096 --duration 0.3 --out "$out/costs.toml" \
  >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
grep -q '^\[platform.cpu.handler_cost_us\]' "$out/costs.toml" || { echo "no table"; cat "$out/costs.toml"; exit 1; }
# The source comment under the header, beside the keys (scenario_sources).
sed -n '/^\[platform.cpu.handler_cost_us\]/{n;p;q}' "$out/costs.toml" | grep -q '^# Measured with `locus calibrate' ||
  { echo "no source comment under the table's header"; cat "$out/costs.toml"; exit 1; }
put=$(grep '^"pilaf.put" = \[\[' "$out/costs.toml") || { echo "no put curve"; cat "$out/costs.toml"; exit 1; }
# Two points, the larger size the costlier.
read -r small large < <(sed -E 's/.*\[\[[0-9]+, ([0-9.]+)\], \[[0-9]+, ([0-9.]+)\]\].*/\1 \2/' <<<"$put")
awk -v a="$small" -v b="$large" 'BEGIN { exit !(b > a && a > 0) }' || { echo "put costs not increasing: $put"; exit 1; }
# The table drops into a scenario.
{ grep -v '^handler_cost_us' "$root/scenarios/pilaf/put.toml" | sed '/^\[platform.cpu.handler_cost_us\]/,/^$/d'; } >"$out/s.toml"
cat "$out/costs.toml" >>"$out/s.toml"
# (20 ms: once, in an ASan build on a loaded machine, no operation
# finished in 4 ms; the table is printed with a failure.)
"$locus" sim "$out/s.toml" --set run.duration_s=0.02 --set run.warmup_s=0.005 --set "output.json=$out/r.json" \
  --set "output.csv=$out/r.csv" >"$out/sim.log" 2>&1 || { cat "$out/sim.log" "$out/costs.toml"; exit 1; }
# --testbed pilaf: the clients' CRC64 checks (RDMA gets) are costed from
# the Pilaf paper's figure, not from this machine's isa-l.
"$locus" calibrate "$root/scenarios/pilaf/get-rdma.toml" --set run.clients=2 --duration 0.2 --testbed pilaf \
  --out "$out/crc.toml" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
grep -q '^"pilaf.client_crc" = \[\[1, 0.005714\], \[65536, 374.491\]\]  # the Pilaf paper' "$out/crc.toml" ||
  { echo "no testbed CRC line"; cat "$out/crc.toml"; exit 1; }
echo "calibrate: ok ($put)"
