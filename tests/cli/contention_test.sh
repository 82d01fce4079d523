#!/usr/bin/env bash
# CPU contention and power on the command line (issue 18): `locus bench
# --cpu-hogs N` runs a scenario with N spinning threads beside it and
# refuses a count that is no count; `locus sim` refuses a negative
# background_load and a power profile missing a figure by name, and a run
# with a profile reports each host's power and joules per operation in
# its table and JSON.
set -uo pipefail
locus=$1 root=$2
quick="$root/scenarios/quickstart.toml"
nessie="$root/scenarios/nessie/modes.toml"
. "$(dirname "$0")/expect_error.sh"
expect_error "--cpu-hogs" bench "$quick" --cpu-hogs -1
expect_error "--cpu-hogs" bench "$quick" --cpu-hogs many
expect_error "--set platform.background_load" sim "$nessie" --set platform.background_load=-1
expect_error "platform.power.busy_w_per_core: missing" sim "$nessie" --set platform.power.idle_w=50
expect_error "platform.power.idle_w: missing" sim "$nessie" --set platform.power.busy_w_per_core=5

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(timeout 120 "$locus" bench "$quick" --cpu-hogs 2 --set run.duration_s=0.3 --set run.warmup_s=0.1 2>&1)
status=$?
if [ $status -ne 0 ] || ! grep -q "2 CPU hog thread(s) spinning" <<<"$out" || ! grep -q "quickstart" <<<"$out"; then
  echo "FAIL: locus bench --cpu-hogs 2 -> exit $status:"
  echo "$out" | tail -5
  fail=1
fi
out=$(timeout 300 "$locus" sim "$nessie" --set run.duration_s=0.004 --set run.warmup_s=0.001 \
  --set workload.recordcount=600 --set platform.power.idle_w=100 --set platform.power.busy_w_per_core=10 \
  --json "$tmp/p.json" 2>&1)
status=$?
if [ $status -ne 0 ] || ! grep -q "power server0=" <<<"$out" || ! grep -q "joules_per_op=" <<<"$out" ||
  ! python3 -c "import json,sys; r=json.load(open('$tmp/p.json'))['runs'][0]; \
assert len(r['power']) == 6 and r['extra']['joules_per_op'] > 0" 2>/dev/null; then
  echo "FAIL: locus sim with [platform.power] should report power per host and joules per op -> exit $status:"
  echo "$out" | tail -5
  fail=1
fi
[ $fail = 0 ] && echo "cpu hogs, background load and power: checked"
exit $fail
