#!/usr/bin/env bash
# `locus model` on NAM range scans (issue 19: the paper's section 2.3 model
# beside the range sweeps): the paper's Table 2 bound, H.P + s.L.P bytes a
# scan over S x BW, printed with the built trees' figures and the memory
# servers' CPU for coarse-grained scans, and said to be a bound only; what
# needs a queueing prediction (`--sim-json`, `locus plan`) refuses the
# scenario by name.
set -uo pipefail
locus=$1 root=$2
. "$(dirname "$0")/expect_error.sh"
range=$root/scenarios/nam/range.toml
# want TEXT OUTPUT: OUTPUT must hold TEXT.
want() { grep -qF -- "$1" <<<"$2" || { echo "FAIL: no '$1' in:"; echo "$2"; fail=1; }; }

# Selectivity 0.001 (200 of 200 K pairs): 4 servers at 1 KB READs of 6.67 M/s
# (6.83 GB/s), M = 1024 / 24 = 42.7, L = 4,688, H_FG = ceil(log_M L) = 3:
# fine 3 x 1024 + 0.001 x 4,688 x 1024 = 7,872 B a scan.
out=$(timeout 120 "$locus" model "$range" 2>&1) || { echo "FAIL: locus model exited $?"; echo "$out"; fail=1; }
echo "$out"
want "an analytic bound only" "$out"
want "sel = s = 200.0 pairs / D = 0.001: fine H_FG.P + s.L.P = 7872 B/query, 3.469e+06 queries/s" "$out"
want "coarse (range partitioning) H_CG.P + s.L.P = 6848 B/query" "$out"
want "1 RPC(s) of up to 254 pairs a scan" "$out"
want "no queueing prediction" "$out"
# Ten times the selectivity: ten times the leaves; hash partitioning
# traverses every server's tree, each answering 500 pairs in 2 responses.
out=$(timeout 120 "$locus" model "$range" --set workload.maxscanlength=3999 --set index.partitioning=hash 2>&1) ||
  { echo "FAIL: locus model exited $?"; echo "$out"; fail=1; }
want "sel = s = 2000.0 pairs / D = 0.01: fine H_FG.P + s.L.P = 51072 B/query" "$out"
want "coarse (hash partitioning) S.H_CG.P + s.L.P" "$out"
want "8 RPC(s) of up to 254 pairs a scan" "$out"
# Hash partitioning at 0.001: each of the 4 servers answers 50 pairs in one RPC.
out=$(timeout 120 "$locus" model "$range" --set index.partitioning=hash 2>&1) ||
  { echo "FAIL: locus model exited $?"; echo "$out"; fail=1; }
want "4 RPC(s) of up to 254 pairs a scan" "$out"
expect_error "covers point queries and inserts" model "$range" --sim-json /dev/null
expect_error "covers point queries and inserts" plan --target-ops 1e6 --p99-us 1000 "$range" --servers 1:4 --cores 1:10 \
  --clients 1:80
exit $fail
