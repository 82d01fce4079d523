#!/usr/bin/env bash
# Runs the value-size sweep of scenarios/nessie/modes.toml on the SimGrid
# backend: Nessie, NessieSD and NessieHY (index.mode client, server,
# hybrid) at values of 256 B to 128 KB (the Nessie testbed's range,
# calibration.md), GET-heavy (YCSB-B, 95% gets) and 50% gets (YCSB-A).
# One `locus sim --set ...` per point; results/nessie/values.csv (mix,
# value bytes, mode, throughput, mean latency, ratio to client mode) and
# results/nessie/values.png.
#
#   scripts/nessie-scenarios.sh [run|plot|contention|energy]...
#                                                   (default: run plot)
#
# contention: scenarios/nessie/contention.toml, the three modes at
# background_load HOGS per host: results/nessie/contention.csv and .png.
# energy: scenarios/nessie/energy.toml, Nessie and NessieSD at CLIENTS
# clients each: results/nessie/energy.csv (power per host, utilisation,
# joules per operation), energy-summary.csv (at 20% and 80% utilisation)
# and energy.png.
#
# Environment: LOCUS (binary, default build/release/apps/locus/locus),
# SIZES (default "256 4096 65536 131072"), HOGS (default "0 6 12 24 36
# 48 96"), CLIENTS (default "3 6 12 24 48 96 192": both modes saturate
# the 10 GbE NICs by 192), FRESH=1 (rerun points whose JSON exists),
# COLOCATED=1 (the value-size sweep in the paper's symmetric deployment:
# the clients on the nodes' machines, run.clients_on_servers; results
# under results/nessie/colocated).
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
OUT=results/nessie
PLACE=()
if [ "${COLOCATED:-0}" = 1 ]; then OUT=results/nessie/colocated; PLACE=(--set run.clients_on_servers=true); fi
RAW=$OUT/raw
SIZES=${SIZES:-"256 4096 65536 131072"}
HOGS=${HOGS:-"0 6 12 24 36 48 96"}
CLIENTS=${CLIENTS:-"3 6 12 24 48 96 192"}
MODES="client server hybrid"
mkdir -p "$RAW"

# One `locus sim` point: NAME SCENARIO --set ARGS...
sim_point() {
  local name=$1 scenario=$2
  shift 2
  [ "${FRESH:-0}" != 1 ] && [ -f "$RAW/$name.json" ] && return 0
  echo "$name"
  "$LOCUS" sim "$scenario" --quiet "$@" --set "output.name=$name" \
    --json "$RAW/$name.json" --csv "$RAW/$name.csv" > "$RAW/$name.log" 2>&1 ||
    { echo "nessie-scenarios: $name failed; see $RAW/$name.log" >&2; exit 1; }
}

contention() {
  [ -x "$LOCUS" ] || { echo "nessie-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }
  for hogs in $HOGS; do for mode in $MODES; do
    sim_point "hogs-$hogs-$mode" scenarios/nessie/contention.toml --set "index.mode=\"$mode\"" \
      --set "platform.background_load=$hogs"
  done; done
  python3 scripts/nessie-plots/summarize.py contention "$RAW" "$HOGS" > "$OUT/contention.csv"
  gnuplot -e "dir='$OUT'" scripts/nessie-plots/contention.gp
  echo "wrote $OUT/contention.csv $OUT/contention.png"
}

energy() {
  [ -x "$LOCUS" ] || { echo "nessie-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }
  for clients in $CLIENTS; do for mode in client server; do
    sim_point "energy-$clients-$mode" scenarios/nessie/energy.toml --set "index.mode=\"$mode\"" \
      --set "run.clients=$clients"
  done; done
  python3 scripts/nessie-plots/summarize.py energy "$RAW" "$CLIENTS" > "$OUT/energy.csv"
  python3 scripts/nessie-plots/summarize.py energy-summary "$OUT/energy.csv" > "$OUT/energy-summary.csv"
  gnuplot -e "dir='$OUT'" scripts/nessie-plots/energy.gp
  echo "wrote $OUT/energy.csv $OUT/energy-summary.csv $OUT/energy.png"
}

run_points() {
  [ -x "$LOCUS" ] || { echo "nessie-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }
  for mix in B A; do for size in $SIZES; do for mode in $MODES; do
    local reads=0.95 updates=0.05
    if [ "$mix" = A ]; then reads=0.5 updates=0.5; fi
    # Data entries per client: enough for its puts over one expiry period
    # (else client mode waits for entries to expire), within memory at
    # 64 KB and up (scenarios/nessie/modes.toml).
    local entries=256
    if [ "$size" -le 4096 ]; then entries=4096; fi
    sim_point "$mix-$size-$mode" scenarios/nessie/modes.toml --set "index.mode=\"$mode\"" \
      --set "workload.fieldlength=$size" --set "workload.readproportion=$reads" \
      --set "workload.updateproportion=$updates" --set "index.client_data_entries=$entries" "${PLACE[@]}"
  done; done; done
}

# One line per point: throughput of all operations, latency weighted by
# count, failed operations, and the ratio to client mode at that point.
summarize() {
  python3 - "$RAW" "$SIZES" > "$OUT/values.csv" <<'PY'
import json, sys
raw, sizes = sys.argv[1], sys.argv[2].split()
print("mix,value_bytes,mode,throughput_ops_per_s,mean_latency_us,failed,ratio_to_client")
for mix in ("B", "A"):
    for size in sizes:
        rows = {}
        for mode in ("client", "server", "hybrid"):
            run = json.load(open(f"{raw}/{mix}-{size}-{mode}.json"))["runs"][0]
            ops = run["ops"]
            n = sum(o["count"] for o in ops)
            mean = sum(o["count"] * o["latency_ns"]["mean"] for o in ops) / max(n, 1) / 1e3
            failed = sum(o["failed"] for o in ops)
            rows[mode] = (run["throughput_ops_per_s"], mean, failed)
        for mode, (tput, mean, failed) in rows.items():
            print(f"{mix},{size},{mode},{tput:.1f},{mean:.2f},{failed},{tput / rows['client'][0]:.3f}")
PY
  echo "wrote $OUT/values.csv"
}

plot() {
  summarize
  gnuplot -e "dir='$OUT'" scripts/nessie-plots/values.gp
  echo "wrote $OUT/values.png"
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(run plot)
for s in "${steps[@]}"; do
  case $s in
    run) run_points ;; plot) plot ;; contention) contention ;; energy) energy ;;
    *) echo "usage: $0 [run|plot|contention|energy]..." >&2; exit 2 ;;
  esac
done
