#!/usr/bin/env bash
# scenario_sources on the shipped scenarios (every cost must name its
# source: issue 15) and on fixtures: each unsourced figure of
# unsourced.toml named by file, line and key, each kind of source in
# sourced.toml accepted, an experiment's unsourced `set` override named.
set -uo pipefail
tool=$1 root=$2
here=$(dirname "$0")/scenario_sources
fail=0
die() { echo "FAIL: $*"; fail=1; }

out=$("$tool" "$root/scenarios") || { echo "$out"; die "a shipped scenario has a cost without a source"; }

out=$("$tool" "$here/unsourced.toml") && die "unsourced.toml passed"
for want in "unsourced.toml:4: 'platform.link.bandwidth_gbps'" "unsourced.toml:4: 'platform.link.latency_us'" \
    "unsourced.toml:5: 'platform.pcie.latency_us'" "unsourced.toml:8: 'platform.nic.read'" \
    "unsourced.toml:12: 'platform.cpu.handler_cost_us.x.get'" "unsourced.toml:16: 'index.server_request_us'" \
    "unsourced.toml:21: 'platform.disk.sync_us'" "platform.nic.recv is not given" \
    "platform.nic.write is not given and index.type 'nessie' uses it" "platform.nic.atomic is not given"; do
  grep -qF "$want" <<<"$out" || die "not named: $want (got: $out)"
done
grep -q "servers" <<<"$out" && die "a count was taken for a cost: $out"

out=$("$tool" "$here/sourced.toml") || die "sourced.toml refused: $out"

out=$("$tool" "$here/experiment.toml") && die "experiment.toml passed"
grep -qF "experiment.toml:6: [experiment] sets 'platform.link.latency_us'" <<<"$out" || die "experiment override not named: $out"
grep -qF "series" <<<"$out" && die "a sourced series override was refused: $out"

exit $fail
