#!/usr/bin/env bash
# Runs the Catfish sweeps of scenarios/catfish/rtree.toml on the SimGrid
# backend: fast messaging (server_only), offloading (client_only), back-off
# and JSQ, search-only and with 10% inserts, at query scales 1e-5, 1e-2 and
# power law, over client counts. `locus sweep` grids (one `locus sim --set
# ...` process per point) into results/catfish/raw/; a summary CSV per
# (mix, scale) in results/catfish/ (clients, selector, throughput, mean
# latency, p99, server-side share, server CPU) and one PNG per (mix, scale)
# with throughput and mean latency against clients.
#
#   scripts/catfish-scenarios.sh [run|plot]...     (default: run plot)
#
# Environment: LOCUS (binary, default build/release/apps/locus/locus), JOBS
# (parallel runs, default 2), CLIENTS (default "4 16 64 128 256"; FULL=1
# takes 4 8 16 32 64 128 192 256), SELECTORS (a subset), FRESH=1 (rerun
# points that have results; without it a sweep run before with the same
# settings keeps them, and one with other settings, e.g. other CLIENTS, is
# refused until FRESH=1), SET (extra key=value settings for every run, e.g.
# SET=run.duration_s=0.01 for a quick look). About 5 s of wall time per point.
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

# list WORDS...: the words joined by commas, for --grid.
list() { local IFS=,; echo "$*"; }

# The sweep of MIX for SELECTOR: backoff_t50 has one of its own (its
# settings are not one selector.type), the other selectors share one.
sweep_name() { if [ "$2" = backoff_t50 ]; then echo "$1-backoff_t50"; else echo "$1"; fi; }

# sweep MIX NAME ARGS...: one `locus sweep` of rtree.toml for MIX into
# $RAW/NAME over scales and clients (and ARGS), its output in $RAW/NAME.log.
sweep() {
  local mix=$1 name=$2
  shift 2
  local args=(--out "$RAW/$name" -j "$JOBS")
  [ "${FRESH:-0}" = 1 ] || args+=(--resume)
  if [ "$mix" = insert10 ]; then args+=(--set workload.readproportion=0.9 --set workload.insertproportion=0.1); fi
  for s in ${SET:-}; do args+=(--set "$s"); done
  local scales=()
  for scale in $SCALES; do scales+=("\"$scale\""); done
  if ! "$LOCUS" sweep scenarios/catfish/rtree.toml "${args[@]}" "$@" --grid "index.query_scale=$(list "${scales[@]}")" \
      --grid "run.clients=$(list $CLIENTS)" > "$RAW/$name.log" 2>&1; then
    echo "catfish-scenarios: sweep $name failed; see $RAW/$name.log" >&2
    return 1
  fi
}

run_sweeps() {
  [ -x "$LOCUS" ] || { echo "catfish-scenarios: no locus binary at $LOCUS (set LOCUS=...)" >&2; exit 1; }
  local plain=() failed=0
  for sel in $SELECTORS; do [ "$sel" = backoff_t50 ] || plain+=("$sel"); done
  # A failed sweep (its failed points named in its log) does not stop the others.
  for mix in $MIXES; do
    if [ ${#plain[@]} -gt 0 ]; then
      sweep "$mix" "$mix" --grid "selector.type=$(list "${plain[@]}")" || failed=1
    fi
    if [[ " $SELECTORS " == *" backoff_t50 "* ]]; then
      sweep "$mix" "$mix-backoff_t50" --set selector.type=backoff --set selector.backoff.threshold=0.5 || failed=1
    fi
  done
  return $failed
}

# point_of MIX SCALE SELECTOR CLIENTS: the directory of that point's run
# (from its sweep's summary.csv), or nothing if it has none.
point_of() {
  local mix=$1 scale=$2 sel=$3 c=$4 dir
  dir=$RAW/$(sweep_name "$mix" "$sel")
  [ -f "$dir/summary.csv" ] || return 0
  awk -F, -v s="$scale" -v sel="$sel" -v c="$c" -v d="$dir" '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    $at["index.query_scale"] == s && $at["run.clients"] == c &&
      (!("selector.type" in at) || $at["selector.type"] == sel) { print d "/points/" $1; exit }' "$dir/summary.csv"
}

# One line per run: all operations' throughput summed, latency weighted by
# count, the largest p99, the selector's server share and the mean server
# CPU (from the run's resource table in its log).
summarize() {
  local mix=$1 scale=$2 file=$OUT/$1-$2.csv
  echo "clients,selector,ops_per_s,latency_us_mean,latency_us_p99,server_share,server_cpu" > "$file"
  for sel in $SELECTORS; do for c in $CLIENTS; do
    local dir
    dir=$(point_of "$mix" "$scale" "$sel" "$c")
    [ -n "$dir" ] && [ -f "$dir/result.csv" ] || continue
    local cpu  # the run's resource table: mean server CPU in percent
    cpu=$(awk '$1 == "cpu" { printf "%.3f", $3 / 100 }' "$dir/log")
    awk -F, -v c="$c" -v sel="$sel" -v cpu="$cpu" '
      NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
      { ops += $at["ops_per_s"]; n += $at["count"]; lat += $at["count"] * $at["latency_us_mean"];
        if ($at["latency_us_p99"] > p99) p99 = $at["latency_us_p99"]; share = $at["server_share"] }
      END { printf "%s,%s,%.0f,%.2f,%.2f,%s,%s\n", c, sel, ops, n ? lat / n : 0, p99, share, cpu }' "$dir/result.csv" >> "$file"
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
