#!/usr/bin/env bash
# `locus model` and `locus plan` on Nessie's shipped scenarios (issue 22):
# the model prints its derivation (the tables, gets and puts in one-sided
# operations, the RPC, contention) and each mode's own split, the energy
# scenario's power at that split, a plan with --cost-watt finds rows with
# their watts, Nessie joins a plan over designs, and what the model does
# not cover is refused by name.
set -uo pipefail
locus=$1 root=$2
modes="$root/scenarios/nessie/modes.toml"
. "$(dirname "$0")/expect_error.sh"
check() {  # NAME TEXT OUTPUT
  grep -q -- "$2" <<<"$3" || { echo "FAIL: $1: no '$2' in:"; echo "$3" | tail -12; fail=1; }
}
out=$(timeout 120 "$locus" model "$modes" 2>&1) || { echo "FAIL: locus model: $out"; fail=1; }
check model "tables (decoupled): 3000 records" "$out"
check model "get: .* one-sided ops" "$out"
check model "put: .* one-sided ops" "$out"
check model "^scenario split    0.000" "$out"
out=$(timeout 120 "$locus" model "$modes" --set 'index.mode="server"' 2>&1) || { echo "FAIL: server: $out"; fail=1; }
check "model, server" "3 polling threads a node" "$out"
check "model, server" "^scenario split    1.000" "$out"
out=$(timeout 120 "$locus" model "$modes" --set 'index.mode="hybrid"' 2>&1) || { echo "FAIL: hybrid: $out"; fail=1; }
check "model, hybrid" "tables (coupled" "$out"
check "model, hybrid" "^scenario split    0.050" "$out"
# contention.toml runs CFS time slices, which the model refuses by name;
# fluid sharing it models.
out=$(timeout 120 "$locus" model "$root/scenarios/nessie/contention.toml" --set 'index.mode="server"' 2>&1) &&
  { echo "FAIL: contention under cfs was modelled: $out"; fail=1; }
check "model, contention under cfs" 'platform.cpu_scheduler: "cfs" time slices' "$out"
out=$(timeout 120 "$locus" model "$root/scenarios/nessie/contention.toml" --set 'index.mode="server"' \
  --set 'platform.cpu_scheduler="fluid"' 2>&1) || { echo "FAIL: contention: $out"; fail=1; }
check "model, contention" "background_load 24 hogs a host: a server thread runs at 0.444 of a core" "$out"
# Power (energy.toml's unit profile: a busy core is a watt): NessieSD's
# three polling threads a node keep 3 cores busy on each of 3 servers.
out=$(timeout 120 "$locus" model "$root/scenarios/nessie/energy.toml" --set 'index.mode="server"' 2>&1) ||
  { echo "FAIL: energy: $out"; fail=1; }
check "model, energy" "power at the scenario split: 3 servers x (0 W idle + 1 W x 3.00 busy cores) = 9.0 W" "$out"
out=$(timeout 120 "$locus" plan --target-ops 5e6 --p99-us 100 "$root/scenarios/nessie/energy.toml" \
  --set 'index.mode="server"' --servers 1:12 --cores 1:12 --clients 1:256 --cost-watt 1 2>&1) ||
  { echo "FAIL: locus plan: $out"; fail=1; }
check plan "configurations evaluated" "$out"
check plan "watts" "$out"
check plan "^ *[0-9]\+ \+[0-9]\+ \+[0-9]\+ .* 1.000 " "$out"
out=$(timeout 300 "$locus" plan --target-ops 3e6 --p99-us 100 "$root/scenarios/cell/four-servers.toml" \
  --servers 1:12 --cores 1:6 --clients 1:512 --selectors server_only --designs "cell,nessie=$modes" 2>&1) ||
  { echo "FAIL: locus plan --designs: $out"; fail=1; }
check "plan over designs" "\] nessie:modes with static:" "$out"
check "plan over designs" "^nessie:modes " "$out"
expect_error "workload.scanproportion" model "$modes" --set workload.standard=e
expect_error "workload.requestdistribution" model "$modes" --set workload.requestdistribution=zipfian
expect_error "run.clients_on_servers" model "$modes" --set run.clients_on_servers=true
[ $fail = 0 ] && echo "nessie model and plan: all as expected"
exit $fail
