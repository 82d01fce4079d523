#!/usr/bin/env bash
# Runs the Catfish sweeps of scenarios/catfish/rtree.toml on the SimGrid
# backend: fast messaging (server_only), offloading (client_only), back-off
# and JSQ, search-only and with 10% inserts, at query scales 1e-5, 1e-2 and
# power law, over client counts. One `locus sim --set ...` per point; a
# summary CSV per (mix, scale) in results/catfish/ (clients, selector,
# throughput, mean latency, p99, server-side share, server CPU) and one PNG
# per (mix, scale) with throughput and mean latency against clients.
#
#   scripts/catfish-scenarios.sh [run|plot]...     (default: run plot)
#
# Environment: LOCUS (binary, default build/release/apps/locus/locus), JOBS
# (parallel runs, default 2), CLIENTS (default "4 16 64 128 256"; FULL=1
# takes 4 8 16 32 64 128 192 256), SELECTORS (a subset), FRESH=1 (rerun
# points whose CSV exists). About 5 s of wall time per point.
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
JOBS=${JOBS:-2}
OUT=results/catfish
RAW=$OUT/raw
if [ "${FULL:-0}" = 1 ]; then CLIENTS=${CLIENTS:-"4 8 16 32 64 128 192 256"}; else CLIENTS=${CLIENTS:-"4 16 64 128 256"}; fi
# backoff_t50: the back-off selector with T = 50%, beside the testbed's
# T = 95% (backoff), to show how the threshold moves the split.
SELECTORS=${SELECTORS:-"server_only client_only backoff backoff_t50 jsq"}
SCALES="1e-5 1e-2 power"
MIXES="search insert10"
mkdir -p "$RAW"

# point MIX SCALE SELECTOR CLIENTS: one simulation into $RAW.
point() {
  local mix=$1 scale=$2 sel=$3 clients=$4
  local name="$mix-$scale-$sel-$clients"
  local mixsets=() selsets=(--set "selector.type=$sel")
  if [ "$mix" = insert10 ]; then mixsets=(--set workload.readproportion=0.9 --set workload.insertproportion=0.1); fi
  if [ "$sel" = backoff_t50 ]; then selsets=(--set selector.type=backoff --set selector.backoff.threshold=0.5); fi
  if ! "$LOCUS" sim scenarios/catfish/rtree.toml --quiet "${selsets[@]}" --set "index.query_scale=\"$scale\"" \
      --set "run.clients=$clients" "${mixsets[@]}" --set "output.name=$name" \
      --json "$RAW/$name.json" --csv "$RAW/$name.csv" > "$RAW/$name.log" 2>&1; then
    echo "catfish-scenarios: $name failed; see $RAW/$name.log" >&2
    return 1
  fi
}
export -f point
export LOCUS RAW

run_sweeps() {
  [ -x "$LOCUS" ] || { echo "catfish-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }
  # Points already run (their CSV exists) are kept; FRESH=1 runs them again.
  for mix in $MIXES; do for scale in $SCALES; do for sel in $SELECTORS; do for c in $CLIENTS; do
    [ "${FRESH:-0}" != 1 ] && [ -f "$RAW/$mix-$scale-$sel-$c.csv" ] && continue
    echo "$mix $scale $sel $c"
  done; done; done; done | xargs -r -P "$JOBS" -L 1 bash -c 'point "$@"' _
}

# One line per run: all operations' throughput summed, latency weighted by
# count, the largest p99, the selector's server share and the mean server
# CPU (from the run's resource table in its log).
summarize() {
  local mix=$1 scale=$2 file=$OUT/$1-$2.csv
  echo "clients,selector,ops_per_s,latency_us_mean,latency_us_p99,server_share,server_cpu" > "$file"
  for sel in $SELECTORS; do for c in $CLIENTS; do
    local csv=$RAW/$mix-$scale-$sel-$c.csv log=$RAW/$mix-$scale-$sel-$c.log
    [ -f "$csv" ] || continue
    local cpu  # the run's resource table: mean server CPU in percent
    cpu=$(awk '$1 == "cpu" { printf "%.3f", $3 / 100 }' "$log")
    awk -F, -v c="$c" -v sel="$sel" -v cpu="$cpu" '
      NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
      { ops += $at["ops_per_s"]; n += $at["count"]; lat += $at["count"] * $at["latency_us_mean"];
        if ($at["latency_us_p99"] > p99) p99 = $at["latency_us_p99"]; share = $at["server_share"] }
      END { printf "%s,%s,%.0f,%.2f,%.2f,%s,%s\n", c, sel, ops, n ? lat / n : 0, p99, share, cpu }' "$csv" >> "$file"
  done; done
}

plot_one() {
  local mix=$1 scale=$2 file=$OUT/$1-$2.csv
  local title="Catfish, $( [ "$mix" = search ] && echo "search only" || echo "10% inserts" ), query scale $scale"
  local plots_t="" plots_l="" sep=""
  for sel in $SELECTORS; do
    local sub=$OUT/.$mix-$scale-$sel.dat
    awk -F, -v s="$sel" 'NR > 1 && $2 == s { print $1, $3 / 1e6, $4 }' "$file" | sort -n > "$sub"
    plots_t+="$sep'$sub' using 1:2 with linespoints title '$sel'"
    plots_l+="$sep'$sub' using 1:3 with linespoints title '$sel'"
    sep=", "
  done
  gnuplot <<EOF
set terminal pngcairo size 1200,480 font "sans,11" noenhanced
set output "$OUT/$mix-$scale.png"
set multiplot layout 1,2 title "$title"
set key top left
set grid
set logscale x 2
set xlabel "clients"
set ylabel "throughput (M searches+inserts/s)"
set yrange [0:*]
plot $plots_t
set ylabel "mean latency (us)"
plot $plots_l
unset multiplot
EOF
  rm -f "$OUT"/.$mix-$scale-*.dat
}

plot_all() {
  command -v gnuplot > /dev/null || { echo "catfish-scenarios: gnuplot not found" >&2; exit 1; }
  for mix in $MIXES; do for scale in $SCALES; do
    summarize "$mix" "$scale"
    plot_one "$mix" "$scale"
  done; done
  echo "catfish-scenarios: summaries and plots in $OUT/"
}

[ $# -gt 0 ] || set -- run plot
for step in "$@"; do
  case $step in
    run) run_sweeps ;;
    plot) plot_all ;;
    *) echo "usage: $0 [run|plot]..." >&2; exit 2 ;;
  esac
done
