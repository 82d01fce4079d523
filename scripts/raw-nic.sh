#!/usr/bin/env bash
# The raw-NIC check of RDMA and verb messaging's partial independence
# (issue 15; scenarios/nic/raw.toml): for 1, 4, 8 and 24 servers, the
# RDMA-only, verbs-only and hybrid rates, and the hybrid total against
# what the calibration's shares give from the other two
# (rdma_share_with_verbs x RDMA-only + verbs_share_with_rdma x verbs-only,
# 0.80 and 0.95 on the Pilaf testbed). 96 clients a server.
#
#   scripts/raw-nic.sh            (LOCUS: the binary, default build/release/apps/locus/locus;
#                                  SERVERS: default "1 4 8 24"; OUT: default results/raw-nic)
set -euo pipefail
cd "$(dirname "$0")/.."
LOCUS=${LOCUS:-build/release/apps/locus/locus}
SERVERS=${SERVERS:-1 4 8 24}
OUT=${OUT:-results/raw-nic}
SCENARIO=scenarios/nic/raw.toml
mkdir -p "$OUT"

# rate FILE OP: the op's ops_per_s from a `locus sim --csv` file (0 if absent).
rate() { awk -F, -v op="$2" 'NR > 1 && $6 == op { r = $11 } END { print r + 0 }' "$1"; }

printf '%7s %14s %14s %14s %14s %14s %8s\n' servers rdma_only verbs_only hybrid_reads hybrid_rpcs hybrid_total vs_shares
for n in $SERVERS; do
  for mode in rdma verbs hybrid; do
    case $mode in rdma) f=0 ;; verbs) f=1 ;; hybrid) f=0.2534 ;; esac
    "$LOCUS" sim "$SCENARIO" --quiet --set "platform.servers=$n" --set "run.clients=$((96 * n))" \
      --set "index.rpc_fraction=$f" --json "$OUT/$n-$mode.json" --csv "$OUT/$n-$mode.csv" > "$OUT/$n-$mode.log" 2>&1 ||
      { echo "raw-nic: $n servers, $mode failed; see $OUT/$n-$mode.log" >&2; exit 1; }
  done
  r=$(rate "$OUT/$n-rdma.csv" TRAVERSAL)
  v=$(rate "$OUT/$n-verbs.csv" RPC)
  hr=$(rate "$OUT/$n-hybrid.csv" TRAVERSAL)
  hv=$(rate "$OUT/$n-hybrid.csv" RPC)
  awk -v n="$n" -v r="$r" -v v="$v" -v hr="$hr" -v hv="$hv" 'BEGIN {
    t = hr + hv; s = 0.80 * r + 0.95 * v
    printf "%7d %14.0f %14.0f %14.0f %14.0f %14.0f %8.3f\n", n, r, v, hr, hv, t, (s > 0 ? t / s : 0) }'
done
