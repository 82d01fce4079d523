#!/usr/bin/env bash
# The simulator's cost at cluster scale: runs Pilaf at 16, 64, 256 and
# 1024 servers with about 47 clients and 2000 uniform records a server
# (scenarios/scale/pilaf-*.toml; 16 and 64 from pilaf-64x3000.toml with
# uniform keys), each in its own process, and prints one row per size:
# simulated operations per wall second after set-up, the set-up's wall
# time (platform, records, actors, up to 1% of the simulated run), peak
# memory (/usr/bin/time's maximum resident set), and the cost growth: the
# first row's rate over this row's (1.00x means flat), taken per CPU
# second (ops/cpu-s: the same operations over this process's CPU time),
# which other processes on a shared machine do not stretch as they do
# wall time; cpu% is the process's share of a core over the whole run. docs/simulator.md,
# "Scale", has the figures and what the issue asks of them.
#
#   scripts/scale-table.sh [LOCUS_BINARY] [--set key=value]...
#
# SIZES (default "16 64 256 1024") picks the rows; OUT (default
# results/scale) keeps each run's output.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/release/apps/locus/locus
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then BIN=$1; shift; fi
[ -x "$BIN" ] || { echo "scale-table: no locus binary at $BIN (build it, or name one)" >&2; exit 2; }
OUT=${OUT:-results/scale}
SIZES=${SIZES:-16 64 256 1024}
mkdir -p "$OUT"
short=(--set workload.requestdistribution=uniform --set run.duration_s=0.02 --set run.warmup_s=0.01)

printf '%-18s %11s %10s %9s %9s %8s %5s\n' "servers x clients" "ops/wall-s" "ops/cpu-s" "set-up s" "peak MiB" "growth" "cpu%"
base_rate=""
for n in $SIZES; do
  clients=$((n * 375 / 8))  # 46.875 a server, as 3000 for 64
  file=scenarios/scale/pilaf-${n}x${clients}.toml
  args=()
  if [ ! -f "$file" ]; then
    file=scenarios/scale/pilaf-64x3000.toml
    args=(--set "platform.servers=$n" --set "run.clients=$clients" --set "workload.recordcount=$((n * 2000))")
  fi
  log=$OUT/pilaf-${n}x${clients}.log
  if ! /usr/bin/time -v "$BIN" sim "$file" --quiet "${short[@]}" "${args[@]}" "$@" \
      --json "$OUT/pilaf-${n}x${clients}.json" --csv "$OUT/pilaf-${n}x${clients}.csv" > "$log" 2>&1; then
    echo "scale-table: $n servers failed; see $log" >&2
    exit 1
  fi
  rate=$(sed -n 's/.*set-up [0-9.]* s wall; then \([0-9]*\) simulated ops per wall second.*/\1/p' "$log")
  cpu_rate=$(sed -n 's/.*simulated ops per wall second (\([0-9]*\) per CPU second).*/\1/p' "$log")
  cpu_share=$(sed -n 's/.*Percent of CPU this job got: \([0-9]*\)%.*/\1/p' "$log")
  setup=$(sed -n 's/.*set-up \([0-9.]*\) s wall;.*/\1/p' "$log")
  peak_kib=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$log")
  [ -n "$cpu_rate" ] || cpu_rate=$rate  # a binary without the CPU figure
  [ -n "$base_rate" ] || base_rate=$cpu_rate
  growth=$(awk -v b="$base_rate" -v r="$cpu_rate" 'BEGIN { printf "%.2fx", (r > 0 ? b / r : 0) }')
  printf '%-18s %11s %10s %9s %9s %8s %5s\n' "$n x $clients" "$rate" "$cpu_rate" "$setup" "$((peak_kib / 1024))" \
    "$growth" "$cpu_share"
done
