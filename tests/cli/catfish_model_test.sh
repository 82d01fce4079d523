#!/usr/bin/env bash
# `locus model` and `locus plan` on Catfish's shipped scenario (cut to 200 K
# rectangles so the model's tree builds in about 2 s): the model prints its
# derivation and every policy, the plan finds a configuration, and what the
# model does not cover is refused by name.
set -uo pipefail
locus=$1 root=$2
scenario="$root/scenarios/catfish/rtree.toml"
small=(--set index.rectangles=200000)
. "$(dirname "$0")/expect_error.sh"
check() {  # NAME TEXT OUTPUT
  grep -q -- "$2" <<<"$3" || { echo "FAIL: $1: no '$2' in:"; echo "$3" | tail -12; fail=1; }
}
out=$(timeout 120 "$locus" model "$scenario" "${small[@]}" 2>&1) || { echo "FAIL: locus model: $out"; fail=1; }
check model "tree: 200000 rectangles" "$out"
check model "round trips" "$out"
check model "decides at run time" "$out"
check model "^client-only" "$out"
check model "^server-only .* server cpu" "$out"
out=$(timeout 120 "$locus" model "$scenario" "${small[@]}" --set selector.type=client_only \
  --set workload.readproportion=0.9 --set workload.insertproportion=0.1 2>&1) ||
  { echo "FAIL: locus model with inserts: $out"; fail=1; }
check "model with inserts" "^scenario split    0.100" "$out"
out=$(timeout 120 "$locus" plan --target-ops 1e6 --p99-us 200 --cores 1:28 --clients 1:256 "$scenario" \
  "${small[@]}" 2>&1) || { echo "FAIL: locus plan: $out"; fail=1; }
check plan "configurations evaluated" "$out"
check plan "^ *1 .*ops/s\|^ *[0-9]\+ \+[0-9]\+ \+[0-9]\+ " "$out"
expect_error "selector.type: with inserts" model "$scenario" "${small[@]}" --set workload.readproportion=0.9 \
  --set workload.insertproportion=0.1
expect_error "workload.requestdistribution" model "$scenario" "${small[@]}" --set workload.requestdistribution=zipfian
[ $fail = 0 ] && echo "catfish model and plan: all as expected"
exit $fail
