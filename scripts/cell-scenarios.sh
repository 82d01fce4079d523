#!/usr/bin/env bash
# Runs the Cell scenarios of scenarios/cell/ on the SimGrid backend as
# `locus sweep` grids (one `locus sim --set key=value` process per point),
# collects one summary CSV per curve in results/cell/ from the sweeps'
# merged tables, and draws the figures (results/cell/*.png) with the
# gnuplot files in scripts/cell-plots/.
#
#   scripts/cell-scenarios.sh [one-meganode|four-servers|load-spike|mixed|plot]...
#
# No argument runs everything. Environment: LOCUS (the binary, default
# build/release/apps/locus/locus), JOBS (parallel runs, default 2),
# FULL=1 (four-servers: every core count 1..8 and fixed ratios in 10%
# steps; the default takes cores 1,2,4,6,8 and 20% steps to stay short),
# SET (extra key=value settings for every run, e.g. SET=run.duration_s=0.02
# for a quick look).
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
JOBS=${JOBS:-2}
OUT=results/cell
RAW=$OUT/raw
mkdir -p "$RAW"
[ -x "$LOCUS" ] || { echo "cell-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }

# sweep NAME SCENARIO ARGS...: one `locus sweep` of scenarios/cell/SCENARIO
# into $RAW/NAME (its points, sweep.csv, summary.csv), its output in $RAW/NAME.log.
sweep() {
  local name=$1 scenario=$2
  shift 2
  local extra=()
  for s in ${SET:-}; do extra+=(--set "$s"); done
  if ! "$LOCUS" sweep "scenarios/cell/$scenario.toml" -j "$JOBS" --out "$RAW/$name" "$@" "${extra[@]}" \
      > "$RAW/$name.log" 2>&1; then
    echo "cell-scenarios: sweep $name failed; see $RAW/$name.log" >&2
    return 1
  fi
}

# summary NAME COLUMN...: one line per point of the sweep NAME: the point's
# COLUMNs (swept keys or any column of its first row), throughput summed
# over operations, latency (mean weighted by count, p50 and p90 of the first
# operation), and the selector's server-side share.
summary() {
  local name=$1
  shift
  awk -F, -v lead="$*" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; nl = split(lead, k, " "); next }
    { p = $col["point"]
      if (!(p in p50)) { order[++n] = p; head[p] = ""; for (j = 1; j <= nl; j++) head[p] = head[p] $col[k[j]] ","
        p50[p] = $col["latency_us_p50"]; p90[p] = $col["latency_us_p90"];
        share[p] = ("server_share" in col) ? $col["server_share"] : "" }
      ops[p] += $col["ops_per_s"]; cnt[p] += $col["count"]; lat[p] += $col["count"] * $col["latency_us_mean"] }
    END { for (i = 1; i <= n; i++) { p = order[i]
      printf "%s%.1f,%.2f,%s,%s,%s\n", head[p], ops[p], cnt[p] ? lat[p] / cnt[p] : 0, p50[p], p90[p], share[p] } }' \
    "$RAW/$name/sweep.csv"
}

# curve FILE PARAM KEY NAME SELECT VALUE: PARAM,ops_per_s,... sorted by
# PARAM (the swept KEY) over the points of sweep NAME whose SELECT is VALUE.
curve() {
  local file=$1 param=$2 key=$3 name=$4 select=$5 value=$6
  { echo "$param,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share"
    summary "$name" "$select" "$key" | awk -F, -v v="$value" '$1 == v' | cut -d, -f2- | sort -t, -k1,1g; } > "$file"
}

one_meganode() {
  local clients=1,2,4,6,8,10,12 fractions=0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0
  sweep om one-meganode --grid selector.type=server_only,client_only,jsq --grid "run.clients=$clients"
  sweep om-fixed one-meganode --set selector.type=fixed_ratio --grid "selector.client_fraction=$fractions" \
    --grid "run.clients=$clients"
  for sel in server_only client_only jsq; do
    curve "$OUT/one-meganode-$sel.csv" clients run.clients om selector.type "$sel"
  done
  for f in ${fractions//,/ }; do
    curve "$OUT/one-meganode-fixed$f.csv" clients run.clients om-fixed selector.client_fraction "$f"
  done
}

four_servers() {
  local cores=1,2,4,6,8 fractions=0.0,0.2,0.4,0.6,0.8,1.0
  if [ "${FULL:-0}" = 1 ]; then cores=1,2,3,4,5,6,7,8; fractions=0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0; fi
  sweep fs four-servers --grid selector.type=server_only,jsq --grid "platform.cores_per_server=$cores"
  sweep fs-fixed four-servers --set selector.type=fixed_ratio --grid "selector.client_fraction=$fractions" \
    --grid "platform.cores_per_server=$cores"
  for sel in server_only jsq; do
    curve "$OUT/four-servers-$sel.csv" cores platform.cores_per_server fs selector.type "$sel"
  done
  # The best fixed ratio per core count; its server-side share is 1 - client_fraction.
  { echo "cores,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share,client_fraction"
    summary fs-fixed platform.cores_per_server selector.client_fraction |
      awk -F, '{ if (!($1 in best) || $3 > best[$1]) { best[$1] = $3; line[$1] = $1 "," $3 "," $4 "," $5 "," $6 "," 1 - $2 "," $2 } }
               END { for (k in line) print line[k] }' | sort -t, -k1,1n; } > "$OUT/four-servers-best_fixed.csv"
}

load_spike() {
  # The scenario writes a time series, which the sweep keeps in each point's directory.
  sweep ls load-spike --grid selector.type=server_only,jsq
  cp "$RAW"/ls/points/0/timeseries.csv "$OUT/load-spike-server_only-timeseries.csv"
  cp "$RAW"/ls/points/1/timeseries.csv "$OUT/load-spike-jsq-timeseries.csv"
}

mixed() {
  sweep mx-a mixed --grid selector.type=server_only,client_only,jsq
  sweep mx-b mixed --set workload.readproportion=0.855 --set workload.updateproportion=0.045 \
    --grid selector.type=server_only,client_only,jsq
  { echo "workload,selector,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share,meganode_splits_run"
    for w in a b; do
      summary "mx-$w" selector.type cell.meganode_splits_run |
        awk -F, -v w="$(echo "$w" | tr a-b A-B)" '{ print w "," $1 "," $3 "," $4 "," $5 "," $6 "," $7 "," $2 }'
    done; } > "$OUT/mixed.csv"
}

plot() {
  command -v gnuplot > /dev/null || { echo "cell-scenarios: gnuplot not found; CSVs are in $OUT" >&2; return 0; }
  for gp in scripts/cell-plots/*.gp; do
    gnuplot -e "dir='$OUT'" "$gp"
  done
  echo "cell-scenarios: figures in $OUT/*.png"
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(one-meganode four-servers load-spike mixed plot)
for step in "${steps[@]}"; do
  start=$(date +%s)
  case $step in
    one-meganode) one_meganode ;;
    four-servers) four_servers ;;
    load-spike) load_spike ;;
    mixed) mixed ;;
    plot) plot ;;
    *) echo "cell-scenarios: unknown step '$step'" >&2; exit 2 ;;
  esac
  echo "cell-scenarios: $step done in $(( $(date +%s) - start )) s"
done
