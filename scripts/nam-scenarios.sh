#!/usr/bin/env bash
# The NAM tree index's scenarios (shared/papers/nam-tree-index-sigmod19.txt,
# section 6): the paper's four workloads (point queries; range queries of
# selectivity 0.001; 95% point queries + 5% inserts; 50% + 50%), uniform and
# with the calibration's attribute-value skew over the memory servers
# (index.key_skew = 80/12/5/3%), for the three distributions (coarse, fine,
# hybrid) against the number of compute servers (1, 2, 4, 6 of 40 threads:
# the NAM testbed of shared/calibration.md). Each (workload, skew, compute
# servers) is one `locus sweep` over index.distribution on the SimGrid
# backend; the script collects one CSV per curve in results/nam/ and draws
# results/nam/*.png with the gnuplot files in scripts/nam-plots/.
#
#   scripts/nam-scenarios.sh [point|range|mixed95|mixed50|transport|plot]...
#
# `transport` compares the coarse-grained and hybrid RPCs over SEND/RECV
# and over RDMA-WRITE mailboxes (index.rpc_transport) for point queries
# and 50% inserts. No argument runs everything (160 simulations). Environment: LOCUS (the binary, default
# build/release/apps/locus/locus), JOBS (parallel runs, default 2), HOSTS
# (compute servers, default "1 2 4 6"), SET (extra key=value settings for
# every run, e.g. SET=run.duration_s=0.005 for a quick look).
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
JOBS=${JOBS:-2}
HOSTS=${HOSTS:-1 2 4 6}
OUT=results/nam
RAW=$OUT/raw
THREADS=40  # per compute server (calibration.md, NAM index testbed)
SKEW=0.8,0.12,0.05,0.03  # calibration.md: keys on the four memory servers
mkdir -p "$RAW"
[ -x "$LOCUS" ] || { echo "nam-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }

# sweeps NAME SCENARIO SETTINGS...: for each skew and compute-server
# count, a sweep of scenarios/nam/SCENARIO.toml over the grid in GRID (an
# array of --grid options) with SETTINGS (key=value) added, into
# $RAW/NAME-SKEW-HOSTS.
sweeps() {
  local name=$1 scenario=$2
  shift 2
  local sets=()
  for s in "$@" ${SET:-}; do sets+=(--set "$s"); done
  for skew in uniform skewed; do
    local skew_set=()
    [ "$skew" = skewed ] && skew_set=(--set "index.key_skew=$SKEW")
    for h in $HOSTS; do
      local dir=$RAW/$name-$skew-$h
      if ! "$LOCUS" sweep "scenarios/nam/$scenario.toml" -j "$JOBS" --out "$dir" \
          --set "platform.client_hosts=$h" --set "run.clients=$((h * THREADS))" "${skew_set[@]}" "${sets[@]}" \
          "${GRID[@]}" > "$dir.log" 2>&1; then
        echo "nam-scenarios: sweep $name-$skew-$h failed; see $dir.log" >&2
        return 1
      fi
    done
  done
}

# curve OUT NAME SKEW KEY=VALUE...: from the sweeps of NAME-SKEW, the rows
# whose swept keys have these values, per compute-server count: the
# clients, operations per second (all kinds), the mean latency weighted by
# count, the highest p99 of the kinds, and the busiest resource.
curve() {
  local out=$1 name=$2 skew=$3
  shift 3
  local cond=1 kv
  for kv in "$@"; do cond="$cond && \$col[\"${kv%%=*}\"] == \"${kv#*=}\""; done
  { echo "compute_servers,clients,ops_per_s,latency_us_mean,latency_us_p99_max,busiest,busiest_util"
    for h in $HOSTS; do
      awk -F, -v h="$h" -v c="$((h * THREADS))" '
        NR == 1 { for (i = 1; i <= NF; i++) { col[$i] = i; name[i] = $i }; next }
        '"$cond"' { ops += $col["ops_per_s"]; n += $col["count"];
          if (busy == "") for (i = 1; i <= NF; i++) if (name[i] ~ /^utilization\./ && $i + 0 > util) { util = $i + 0; busy = substr(name[i], 13) }
          lat += $col["count"] * $col["latency_us_mean"]; if ($col["latency_us_p99"] > p99) p99 = $col["latency_us_p99"] }
        END { if (n == 0) exit 1; printf "%s,%s,%.1f,%.2f,%s,%s,%.3f\n", h, c, ops, lat / n, p99, busy, util }' \
        "$RAW/$name-$skew-$h/sweep.csv"
    done; } > "$out"
}

# workload NAME SCENARIO SETTINGS...: the three distributions;
# $OUT/NAME-SKEW-DISTRIBUTION.csv.
workload() {
  local name=$1
  GRID=(--grid index.distribution=coarse,fine,hybrid)
  sweeps "$@"
  for skew in uniform skewed; do
    for d in coarse fine hybrid; do curve "$OUT/$name-$skew-$d.csv" "$name" "$skew" "index.distribution=$d"; done
  done
}

# transports NAME SCENARIO SETTINGS...: the coarse-grained and hybrid RPCs
# over SEND/RECV and over RDMA-WRITE mailboxes (index.rpc_transport);
# $OUT/transport-NAME-SKEW-DISTRIBUTION-TRANSPORT.csv.
transports() {
  local name=$1
  shift
  GRID=(--grid index.distribution=coarse,hybrid --grid index.rpc_transport=send_recv,mailbox)
  sweeps "transport-$name" "$@"
  for skew in uniform skewed; do
    for d in coarse hybrid; do
      for t in send_recv mailbox; do
        curve "$OUT/transport-$name-$skew-$d-$t.csv" "transport-$name" "$skew" "index.distribution=$d" \
          "index.rpc_transport=$t"
      done
    done
  done
}

plot() {
  command -v gnuplot > /dev/null || { echo "nam-scenarios: gnuplot not found; CSVs are in $OUT" >&2; return 0; }
  for w in point range mixed95 mixed50; do
    [ -f "$OUT/$w-uniform-coarse.csv" ] || continue
    gnuplot -e "dir='$OUT'; w='$w'" scripts/nam-plots/workload.gp
  done
  for w in point mixed50; do
    [ -f "$OUT/transport-$w-uniform-coarse-send_recv.csv" ] || continue
    gnuplot -e "dir='$OUT'; w='$w'" scripts/nam-plots/transport.gp
  done
  echo "nam-scenarios: figures in $OUT/*.png"
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(point range mixed95 mixed50 transport plot)
for step in "${steps[@]}"; do
  start=$(date +%s)
  case $step in
    point) workload point coarse ;;
    range) workload range range ;;
    mixed95) workload mixed95 coarse workload.readproportion=0.95 workload.insertproportion=0.05 ;;
    mixed50) workload mixed50 coarse workload.readproportion=0.5 workload.insertproportion=0.5 ;;
    transport) transports point coarse
      transports mixed50 coarse workload.readproportion=0.5 workload.insertproportion=0.5 ;;
    plot) plot ;;
    *) echo "nam-scenarios: unknown step '$step'" >&2; exit 2 ;;
  esac
  echo "nam-scenarios: $step done in $(( $(date +%s) - start )) s"
done
