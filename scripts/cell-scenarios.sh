#!/usr/bin/env bash
# Runs the Cell scenarios of scenarios/cell/ on the SimGrid backend as
# sweeps of `locus sim --set key=value` runs, collects one summary CSV per
# curve in results/cell/, and draws the figures (results/cell/*.png) with
# the gnuplot files in scripts/cell-plots/.
#
#   scripts/cell-scenarios.sh [one-meganode|four-servers|load-spike|mixed|plot]...
#
# No argument runs everything. Environment: LOCUS (the binary, default
# build/release/apps/locus/locus), JOBS (parallel runs, default 2),
# FULL=1 (four-servers: every core count 1..8 and fixed ratios in 10%
# steps; the default takes cores 1,2,4,6,8 and 20% steps to stay short).
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
JOBS=${JOBS:-2}
OUT=results/cell
RAW=$OUT/raw
mkdir -p "$RAW"
[ -x "$LOCUS" ] || { echo "cell-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }

# run NAME SCENARIO SET...: one simulation, its CSV in $RAW/NAME.csv.
run() {
  local name=$1 scenario=$2
  shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  if ! "$LOCUS" sim "scenarios/cell/$scenario.toml" --quiet "${sets[@]}" --set "output.name=$name" \
      --json "$RAW/$name.json" --csv "$RAW/$name.csv" > "$RAW/$name.log" 2>&1; then
    echo "cell-scenarios: $name failed; see $RAW/$name.log" >&2
    return 1
  fi
}
export -f run
export LOCUS RAW

# Runs the queued "NAME SCENARIO SET..." lines, JOBS at a time.
run_all() { xargs -P "$JOBS" -L 1 bash -c 'run "$@"' _; }

# summary RAWCSV...: one line per run: throughput summed over operations,
# latency (mean weighted by count, p50 and p90 of the first operation),
# and the selector's server-side share.
summary() {
  awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { key = FILENAME; ops[key] += $col["ops_per_s"]; n[key] += $col["count"];
      lat[key] += $col["count"] * $col["latency_us_mean"];
      if (!(key in p50)) { p50[key] = $col["latency_us_p50"]; p90[key] = $col["latency_us_p90"];
        share[key] = ("server_share" in col) ? $col["server_share"] : "" } }
    END { for (k in ops) printf "%s,%.1f,%.2f,%s,%s,%s\n", k, ops[k], n[k] ? lat[k] / n[k] : 0, p50[k], p90[k], share[k] }' "$@"
}

# curve FILE PARAM RAWCSV...: PARAM,ops_per_s,... sorted by PARAM, where
# PARAM is the number after the last '-' of each run's name.
curve() {
  local file=$1 param=$2
  shift 2
  { echo "$param,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share"
    summary "$@" | sed -E 's|^[^,]*-([0-9.]+)\.csv,|\1,|' | sort -t, -k1,1g; } > "$file"
}

one_meganode() {
  local clients="1 2 4 6 8 10 12"
  { for c in $clients; do
      for sel in server_only client_only jsq; do echo "om-$sel-$c one-meganode selector.type=$sel run.clients=$c"; done
      for f in 0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0; do
        echo "om-fixed$f-$c one-meganode selector.type=fixed_ratio selector.client_fraction=$f run.clients=$c"
      done
    done; } | run_all
  for sel in server_only client_only jsq fixed0.0 fixed0.1 fixed0.2 fixed0.3 fixed0.4 fixed0.5 fixed0.6 fixed0.7 \
             fixed0.8 fixed0.9 fixed1.0; do
    curve "$OUT/one-meganode-$sel.csv" clients "$RAW"/om-$sel-*.csv
  done
}

four_servers() {
  local cores="1 2 4 6 8" fractions="0.0 0.2 0.4 0.6 0.8 1.0"
  if [ "${FULL:-0}" = 1 ]; then cores="1 2 3 4 5 6 7 8"; fractions="0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0"; fi
  { for k in $cores; do
      for sel in server_only jsq; do echo "fs-$sel-$k four-servers selector.type=$sel platform.cores_per_server=$k"; done
      for f in $fractions; do
        echo "fs-fixed$f-$k four-servers selector.type=fixed_ratio selector.client_fraction=$f platform.cores_per_server=$k"
      done
    done; } | run_all
  curve "$OUT/four-servers-server_only.csv" cores "$RAW"/fs-server_only-*.csv
  curve "$OUT/four-servers-jsq.csv" cores "$RAW"/fs-jsq-*.csv
  # The best fixed ratio per core count; its server-side share is 1 - client_fraction.
  { echo "cores,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share,client_fraction"
    summary "$RAW"/fs-fixed*.csv | sed -E 's|^[^,]*-fixed([0-9.]+)-([0-9]+)\.csv,|\2,\1,|' |
      awk -F, '{ if (!($1 in best) || $3 > best[$1]) { best[$1] = $3; line[$1] = $1 "," $3 "," $4 "," $5 "," $6 "," 1 - $2 "," $2 } }
               END { for (k in line) print line[k] }' | sort -t, -k1,1n; } > "$OUT/four-servers-best_fixed.csv"
}

load_spike() {
  printf '%s\n' "ls-server_only load-spike selector.type=server_only output.timeseries=$RAW/ls-server_only-timeseries.csv" \
                "ls-jsq load-spike selector.type=jsq output.timeseries=$RAW/ls-jsq-timeseries.csv" | run_all
  cp "$RAW"/ls-server_only-timeseries.csv "$OUT/load-spike-server_only-timeseries.csv"
  cp "$RAW"/ls-jsq-timeseries.csv "$OUT/load-spike-jsq-timeseries.csv"
}

mixed() {
  { for sel in server_only client_only jsq; do
      echo "mx-a-$sel mixed selector.type=$sel"
      echo "mx-b-$sel mixed selector.type=$sel workload.readproportion=0.855 workload.updateproportion=0.045"
    done; } | run_all
  { echo "workload,selector,ops_per_s,latency_us_mean,latency_us_p50,latency_us_p90,server_share,meganode_splits_run"
    for w in a b; do
      for sel in server_only client_only jsq; do
        local f="$RAW/mx-$w-$sel.csv"
        local splits
        splits=$(awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "cell.meganode_splits_run") c = i; next }
                          { print $c; exit }' "$f")
        echo "$(echo "$w" | tr a-b A-B),$sel,$(summary "$f" | cut -d, -f2-),$splits"
      done
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
