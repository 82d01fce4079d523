#!/usr/bin/env bash
# Issue 17's integer findings, end to end: every one a clear error naming
# the flag or the settings, at once, never a wrapped value, a hang or an
# abort. Each case: the arguments, then text the error must contain.
set -uo pipefail
locus=$1 root=$2
plan=(plan --target-ops 1e6 --p99-us 100 "$root/scenarios/model/micro-hybrid.toml")
. "$(dirname "$0")/expect_error.sh"
expect_error "--servers: expected MIN:MAX" "${plan[@]}" --servers 1:4294967298   # wrapped to 1:2
expect_error "--servers: expected MIN:MAX" "${plan[@]}" --servers 1:2147483647   # overflowed the loop
expect_error "--servers: expected MIN:MAX" "${plan[@]}" --servers 1:99999999999  # hung
expect_error "--cores: expected MIN:MAX" "${plan[@]}" --cores 1:2147483647
expect_error "--clients: expected MIN:MAX" "${plan[@]}" --clients 1:2000000000
expect_error "configurations, more than" "${plan[@]}" --servers 1:100000 --clients 1:100000
expect_error "workload.fieldcount x workload.fieldlength" model "$root/scenarios/quickstart.toml" \
  --set workload.fieldcount=65536 --set workload.fieldlength=65536                # wrapped to 32 bytes
expect_error "workload.recordcount" sim "$root/scenarios/quickstart.toml" --set workload.recordcount=3000000 \
  --set workload.fieldlength=4096 --max-memory 1000000000                          # bad_alloc after 20-45 s
# The ranges that are legal still plan.
out=$(timeout 120 "$locus" "${plan[@]}" --servers 1:4 --cores 1:2 --clients 1:64 2>&1) || { echo "FAIL: a legal plan: $out"; fail=1; }
[ $fail = 0 ] && echo "hostile plan/model/sim input: all refused clearly"
exit $fail
