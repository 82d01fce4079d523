#!/usr/bin/env bash
# ci/softroce-bench.sh [BUILD_DIR]: the verbs backend's benchmark on
# Soft-RoCE, as ratios measured in one guest run (absolute rates under
# software emulation mean little; see shared/softroce-notes.md):
#   1. one client's READ rate, `locus bench --backend verbs --micro read`,
#      against perftest's `ib_read_bw` at the same size and queue depth
#      (64 and 1024 bytes); goal: ratio >= 0.9;
#   2. Pilaf gets by RDMA against Pilaf-VO gets (by RPC) on the same server:
#      `locus run --backend verbs` of the verbs tier's Pilaf scenario
#      (tests/verbs/scenarios/pilaf.toml, 2000 records of workload C, one
#      client) with --set index.mode=rdma, then vo.
# Both run against one `locus serve` of that scenario in the guest, over
# rdma_cm.
#
# BUILD_DIR defaults to build/release (configure and build it first).
# Environment: LOCUS_BENCH_DEPTH (16), LOCUS_BENCH_READS (20000),
# LOCUS_BENCH_SECONDS (10: measured seconds per Pilaf mode, after 1 s of
# warm-up), and those of ci/softroce-vm.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/release}

if [ "${LOCUS_BENCH_IN_GUEST:-}" != 1 ]; then
  [ -x "$repo/$build/apps/locus/locus" ] || { echo "softroce-bench: build $build first (no $build/apps/locus/locus)" >&2; exit 2; }
  export LOCUS_BENCH_IN_GUEST=1
  exec "$repo/ci/softroce-vm.sh" "$repo/ci/softroce-bench.sh" "$build"
fi

# --- in the guest (or natively on a host with a device) ----------------------
cd "$repo"
locus=$build/apps/locus/locus
depth=${LOCUS_BENCH_DEPTH:-16}
reads=${LOCUS_BENCH_READS:-20000}
seconds=${LOCUS_BENCH_SECONDS:-10}
scenario=tests/verbs/scenarios/pilaf.toml
records=2000
address=${LOCUS_VERBS_ADDRESS:?LOCUS_VERBS_ADDRESS names the address of the RDMA device}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

cat >"$work/serve.toml" <<EOF
[[server]]
address = "$address"
port = 0
EOF
"$locus" serve "$scenario" --config "$work/serve.toml" --set workload.recordcount=$records --quiet \
  --ready-file "$work/ready" >"$work/serve.log" 2>&1 &
for _ in $(seq 600); do [ -s "$work/ready" ] && break; sleep 0.1; done
[ -s "$work/ready" ] || { cat "$work/serve.log"; echo "softroce-bench: locus serve did not start" >&2; exit 1; }
port=$(sed 's/.*://' "$work/ready")
sed "s/^port = 0/port = $port/" "$work/serve.toml" >"$work/cluster.toml"

# perftest's READs/s: MsgRate [Mpps] of the client's result line. The
# client retries until the server (slow to start under emulation) listens.
perftest_rate() {
  local size=$1 pport=$((18515 + size)) rate=""
  timeout 300 ib_read_bw -R -p "$pport" -s "$size" -t "$depth" -n "$reads" -F >"$work/perf-server.log" 2>&1 &
  local server=$!
  for _ in $(seq 30); do
    sleep 1
    timeout 240 ib_read_bw -R -p "$pport" -s "$size" -t "$depth" -n "$reads" -F "$address" \
      >"$work/perf-client.log" 2>&1 || true
    rate=$(awk -v s="$size" '$1 == s && NF >= 5 {printf "%.0f", $5 * 1e6}' "$work/perf-client.log")
    [ -n "$rate" ] && break
  done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  echo "$rate"
}

locus_rate() {
  "$locus" bench --backend verbs --config "$work/cluster.toml" --micro read --size "$1" --depth "$depth" \
    --ops "$reads" 2>"$work/locus-read.log" | sed -n 's/.*reads_per_s=\([0-9.]*\).*/\1/p'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "Soft-RoCE benchmark: $(ibv_devices | awk 'NR > 2 {print $1}' | head -1) on $address, $(uname -r)," \
     "one connection, $depth READs in flight, $reads READs per figure"
printf '%-10s %18s %18s %10s\n' "READ size" "ib_read_bw READs/s" "locus READs/s" "ratio"
for size in 64 1024; do
  perf=$(perftest_rate "$size")
  mine=$(locus_rate "$size")
  [ -n "$perf" ] || { cat "$work/perf-client.log"; perf=0; }
  [ -n "$mine" ] || { cat "$work/locus-read.log"; mine=0; }
  printf '%-10s %18.0f %18.0f %10s\n' "$size B" "$perf" "$mine" "$(ratio "$mine" "$perf")"
done
echo "(goal: locus / ib_read_bw >= 0.9)"

echo
# gets/s of one client in `mode`: the ops/s column of the "READ" row of
# the results table (metrics::format_table: run, op, count, ops/s, ...).
pilaf_rate() {
  local mode=$1
  "$locus" run "$scenario" --backend verbs --config "$work/cluster.toml" --quiet \
    --set workload.recordcount=$records --set run.clients=1 --set run.warmup_s=1 \
    --set run.duration_s=$((seconds + 1)) --set index.mode="$mode" \
    --json "$work/pilaf-$mode.json" --csv "$work/pilaf-$mode.csv" >"$work/pilaf-$mode.log" 2>&1 ||
    { cat "$work/pilaf-$mode.log" >&2; return 1; }
  awk '$2 == "READ" {print $4; exit}' "$work/pilaf-$mode.log"
}
rdma=$(pilaf_rate rdma)
vo=$(pilaf_rate vo)
echo "Pilaf gets over Soft-RoCE, workload c, $records records, one client, $seconds s measured per mode:"
printf '%-24s %12s\n' "mode" "gets/s"
printf '%-24s %12s\n' "Pilaf (RDMA READs)" "$rdma" "Pilaf-VO (RPC)" "$vo"
echo "ratio Pilaf / Pilaf-VO: $(ratio "$rdma" "$vo")"
