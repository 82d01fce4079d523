#!/usr/bin/env bash
# The fault campaign (issue 16): runs DESIGN's campaign scenario on BACKEND
# under several seeds and mixes of injected faults ([faults]), records every
# client call and checks the history for linearizability ([check]), and
# fails unless every run is linearizable and the runs together checked at
# least MIN_OPS operations. Each run prints the operations it checked, the
# faults it injected by kind and its violations; a failing run prints the
# seed to replay it with (exact on simgrid).
#
#   tests/campaign/fault_campaign.sh LOCUS_BINARY DESIGN BACKEND MIN_OPS SEEDS
set -euo pipefail
locus=$1 design=$2 backend=$3 min_ops=$4 seeds=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
# Each design's shipped scenario (its platform and costs), made small: few
# records so the history's partitions stay short, writes so reads have
# something to contradict, and waits short enough that a lost reply costs
# a little of the run rather than all of it.
case $design in
  pilaf) scenario=$root/scenarios/quickstart.toml
    base=(platform.servers=2 workload.recordcount=2000 workload.requestdistribution=uniform workload.readproportion=0.5
          workload.updateproportion=0.5 run.duration_s=0.1 run.wait_timeout_ms=2) ;;
  cell) scenario=$root/scenarios/cell/mixed.toml
    base=(workload.recordcount=2000 workload.operationcount=40000 run.duration_s=0.1 run.wait_timeout_ms=2) ;;
  catfish) scenario=$root/scenarios/catfish/rtree.toml
    base=(index.rectangles=500 workload.readproportion=0.8 workload.insertproportion=0.2 run.clients=16
          run.duration_s=0.07 run.warmup_s=0.001 run.wait_timeout_ms=1) ;;
  nessie) scenario=$root/scenarios/nessie/small.toml
    base=(workload.recordcount=2000 workload.readproportion=0.5 workload.updateproportion=0.5
          run.duration_s=0.1 run.wait_timeout_ms=2) ;;
  # NessieSD and NessieHY (index.mode): the same runs, shorter (their
  # calls are fewer round trips, and the checker's history is bounded).
  nessie-server|nessie-hybrid) scenario=$root/scenarios/nessie/small.toml
    base=(index.mode=\"${design#nessie-}\" workload.recordcount=2000 workload.readproportion=0.5
          workload.updateproportion=0.5 run.duration_s=0.03 run.wait_timeout_ms=2) ;;
  # The NAM index, all three distributions: updates add (key, payload)
  # pairs. Fine-grained and hybrid leaf locks of crashed clients are broken
  # after a 20 ms lease.
  # nam-mailbox and nam-hybrid-mailbox: the coarse-grained and hybrid RPCs
  # over RDMA-WRITE mailboxes (index.rpc_transport), whose clients set a
  # broken connection up again on their next call.
  nam|nam-fine|nam-hybrid|nam-mailbox|nam-hybrid-mailbox)
    distribution=${design#nam-}; distribution=${distribution%-mailbox}
    case $design in nam|nam-mailbox) distribution=coarse ;; esac
    scenario=$root/scenarios/nam/$distribution.toml
    base=(workload.recordcount=2000 workload.readproportion=0.5 workload.updateproportion=0.5 index.lease_ms=20
          run.clients=16 run.duration_s=0.05 run.wait_timeout_ms=2)
    # Two mailbox workers a memory server, not one per core (10): on
    # loopback each is a thread of this 2-core machine.
    case $design in *-mailbox) base+=(index.rpc_transport=\"mailbox\" index.mailbox_workers=2) ;; esac ;;
  *) echo "fault_campaign.sh: no campaign for design '$design'"; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The mixes: faults the transport's contract allows (held completions,
# READs copied in pieces out of order), then failures (lost replies, with
# or without the request carried out; refused requests; missing receives),
# then everything at once, then clients whose hosts die mid-run and come
# back as new processes, then a server machine that dies (the others, if
# any, serve on; calls that need it fail within their waits), then one
# that comes back with its memory after 10 ms (clients connect again). A
# request to a dead node fails when its queue pair's retries run out: the
# ACK timeout exponent 8 (1 ms, 8 tries) lets clients recover within a
# short run on SimGrid and loopback (verbs keeps its cluster file's).
mixes=(
  "faults.delay=0.3 faults.split_read=0.5 faults.read_order=random"
  "faults.retry_exceeded=0.003 faults.applied=0.5 faults.remote_access_error=0.003 faults.rnr=0.003"
  "faults.delay=0.2 faults.split_read=0.3 faults.retry_exceeded=0.002 faults.remote_access_error=0.002 faults.rnr=0.002"
  "faults.crash_clients=3 faults.restart_after_ms=5 faults.delay=0.1"
  "faults.crash_servers=1 faults.crash_clients=1 faults.restart_after_ms=5"
  "faults.crash_servers=1 faults.server_outage_ms=10 faults.delay=0.1 platform.nic.ack_timeout=8"
)
# Designs that log (issue 20): the server machine comes back as restarted
# processes that lost their memory and replay their logs (a log directory
# of this run's own, emptied before each run).
if [ "$design" = pilaf ]; then
  mixes+=("faults.crash_servers=1 faults.server_outage_ms=10 faults.restart_servers=true index.log_dir=$out/log
           platform.nic.ack_timeout=8")
fi
# On verbs, in an emulated guest where each run costs ~10 s, the first two
# mixes are left out: the third injects the same kinds of fault (only its
# READ order and the share of lost replies carried out differ), the
# decorator injects them above the transport, where loopback and SimGrid
# check them in full, and verbs' own failure paths (queue pairs in error,
# reconnecting, refused connections) come with the crashes.
if [ "$backend" = verbs ]; then mixes=("${mixes[@]:2}"); fi
# Loopback runs in wall time on a shared machine: waits and runs longer.
if [ "$backend" = loopback ]; then extra=(--set run.wait_timeout_ms=1000 --set run.duration_s=1.5 --set run.warmup_s=0.5)
elif [ "$backend" = verbs ]; then
  # Servers and clients in this one process (--serve-here) on a real RDMA
  # device: Soft-RoCE in the guest (ci/softroce-vm.sh exports its address),
  # where a READ takes ~100 us, so fewer clients, longer waits, and one
  # cluster-file entry per server endpoint (Catfish: two workers and its
  # connect RPC).
  if [ -z "${LOCUS_VERBS_ADDRESS:-}" ]; then
    echo "fault_campaign.sh: no RDMA device here (LOCUS_VERBS_ADDRESS unset); run it with ci/softroce-vm.sh"
    exit 77
  fi
  # (NessieSD/NessieHY: each node's server threads, three for small.toml's
  # 256-byte values, have an endpoint each beside the tables'. NAM with
  # mailboxes: two mailbox workers beside each memory server's RPC
  # endpoint, 4 x (1 + 2).)
  case $design in pilaf) entries=2 ;; cell) entries=2 ;; catfish) entries=3 ;; nessie) entries=3 ;;
    nessie-server|nessie-hybrid) entries=12 ;; nam*-mailbox) entries=12 ;; nam*) entries=4 ;; esac
  for _ in $(seq 1 "$entries"); do
    printf '[[server]]\naddress = "%s"\nport = 0\n\n' "$LOCUS_VERBS_ADDRESS"
  done > "$out/cluster.toml"
  printf '[verbs]\nconnect_timeout_ms = 10000\n' >> "$out/cluster.toml"
  extra=(--config "$out/cluster.toml" --serve-here --set platform.cores_per_server=2 --set run.clients=4
         --set run.wait_timeout_ms=2000 --set run.duration_s=3 --set run.warmup_s=1)
else extra=(); fi

total=0
for seed in $(seq 1 "$seeds"); do
  for mix in "${mixes[@]}"; do
    sets=(--set "faults.seed=$seed" --set "run.seed=$seed" --set check.linearizability=true)
    for kv in "${base[@]}"; do sets+=(--set "$kv"); done
    for kv in $mix; do sets+=(--set "$kv"); done
    log=$out/run.log
    rm -rf "$out/log"
    if ! "$locus" run "$scenario" --backend "$backend" "${sets[@]}" "${extra[@]}" \
        --set "output.json=$out/r.json" --set "output.csv=$out/r.csv" >"$log" 2>&1; then
      echo "FAIL $design on $backend, seed $seed, faults: $mix"
      cat "$log"
      exit 1
    fi
    line=$(grep -E 'check\.ops=' "$log" | head -1)
    # Answered calls only: a call left pending (failed, effect unknown)
    # constrains the check less and is not counted.
    recorded=$(sed -E 's/.*check\.ops=([0-9]+).*/\1/' <<<"$line")
    pending=$(sed -E 's/.*check\.pending=([0-9]+).*/\1/' <<<"$line")
    ops=$((recorded - pending))
    violations=$(sed -E 's/.*check\.violations=([0-9]+).*/\1/' <<<"$line")
    # (|| true: a run that injected nothing, a slow sanitizer build's,
    # says "none" instead of ending the script silently under pipefail.)
    faults=$(grep -oE 'faults\.[a-z_]+=[0-9]+' <<<"$line" | grep -v '=0$' | tr '\n' ' ' || true)
    failed=$(grep -oE 'failed_ops=[0-9]+' <<<"$line" || echo failed_ops=0)
    printf '%s %s seed %s: %s answered ops checked (%s pending), %s, violations %s; injected: %s\n' \
      "$design" "$backend" "$seed" "$ops" "$pending" "$failed" "$violations" "${faults:-none}"
    if [ "$violations" != 0 ]; then echo "FAIL: violations"; cat "$log"; exit 1; fi
    if grep -qE 'faults\.failed_restarts=[1-9]' <<<"$line"; then echo "FAIL: a server could not restart"; cat "$log"; exit 1; fi
    total=$((total + ops))
  done
done
echo "$design on $backend: $total operations checked, no violation"
if [ "$total" -lt "$min_ops" ]; then
  echo "FAIL: fewer than $min_ops operations checked"
  exit 1
fi
