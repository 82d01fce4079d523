#!/usr/bin/env bash
# Issue 20, Pilaf: a write-heavy loopback run (90% updates) in which one of
# two Pilaf servers dies and comes back as a restarted process that lost its
# memory and replays its operation log (faults.restart_servers, a log in a
# temporary directory). Passes only if the server restarted, clients
# succeeded after it, and the recorded history is linearizable: no
# acknowledged put lost, none invented. Then the settings that cannot work
# are refused with errors naming them.
#
# The crash falls at a seeded point of the measured window, and a call to
# the dead server waits run.wait_timeout_ms (1 s) before it fails: with a
# 1 s window, seed 2's crash left too little of it for any call to succeed
# after the restart in an ASan build on a loaded machine (CI, 2026-11-27:
# ok_after_server_crash=0), so the window is 2 s.
set -uo pipefail
locus=$1 root=$2
quick="$root/scenarios/quickstart.toml"
. "$(dirname "$0")/expect_error.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for seed in 1 2; do
  rm -rf "$dir/log"
  out=$(timeout 300 "$locus" run "$quick" --backend loopback --set platform.servers=2 \
    --set workload.recordcount=2000 --set workload.requestdistribution=uniform --set workload.readproportion=0.1 \
    --set workload.updateproportion=0.9 --set run.duration_s=2.5 --set run.warmup_s=0.5 --set run.wait_timeout_ms=1000 \
    --set check.linearizability=true --set faults.seed=$seed --set run.seed=$seed --set faults.crash_servers=1 \
    --set faults.server_outage_ms=10 --set faults.restart_servers=true --set "index.log_dir=$dir/log" \
    --set platform.nic.ack_timeout=8 --set "output.json=$dir/r.json" --set "output.csv=$dir/r.csv" 2>&1)
  line=$(grep -E 'check\.ops=' <<<"$out" | head -1)
  echo "seed $seed: $(grep -oE '(check\.(ops|pending|violations)|faults\.(restarted_servers|failed_restarts|ok_after_server_crash)|pilaf\.recovered_records)=[0-9]+' <<<"$line" | tr '\n' ' ')"
  if ! grep -q 'check.violations=0' <<<"$line" || ! grep -q 'faults.restarted_servers=1' <<<"$line" ||
     ! grep -q 'faults.failed_restarts=0' <<<"$line" || grep -q 'faults.ok_after_server_crash=0 ' <<<"$line"; then
    echo "FAIL: seed $seed"
    echo "$out" | tail -20
    fail=1
  fi
done
expect_error "faults.restart_servers" run "$quick" --set faults.crash_servers=1 --set faults.restart_servers=true
expect_error "index.log_fsync" run "$quick" --set index.log_fsync=sometimes
exit $fail
