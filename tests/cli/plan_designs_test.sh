#!/usr/bin/env bash
# `locus plan --designs --selectors` (issue 22), end to end: one workload
# planned over Cell's selectors and two other designs, each row naming its
# design and selector, static selectors at their own share, and what the
# planner cannot plan refused by name.
set -uo pipefail
locus=$1 root=$2
. "$(dirname "$0")/expect_error.sh"
plan=(plan --target-ops 3e6 --p99-us 100 "$root/scenarios/cell/four-servers.toml" --servers 1:12 --cores 1:6
      --clients 1:512)
out=$(timeout 300 "$locus" "${plan[@]}" --selectors server_only,client_only,fixed_ratio,jsq \
  --designs "cell,pilaf=$root/scenarios/pilaf/get-rdma.toml" 2>&1)
status=$?
echo "$out"
[ $status = 0 ] || { echo "FAIL: the plan exited $status"; fail=1; }
# Progress for each (design, selector) pair, the merged frontier after it.
for pair in "cell with server_only" "cell with client_only" "cell with fixed_ratio" "cell with jsq" \
  "pilaf:get-rdma with static"; do
  grep -q "\] $pair:" <<<"$out" || { echo "FAIL: no progress line for $pair"; fail=1; }
done
grep -q "configurations evaluated in .* per second" <<<"$out" || { echo "FAIL: no rate line"; fail=1; }
rows=$(awk '/^design +selector/ {on=1; next} on && NF >= 11' <<<"$out")
[ -n "$rows" ] || { echo "FAIL: an empty frontier"; fail=1; }
# Every row meets the targets; a server_only row runs p = 1 and a pilaf
# (get-rdma: client-side READs) row p = 0.
while read -r design selector servers cores clients cost p ops mean p99 rest; do
  awk -v o="$ops" -v q="$p99" 'BEGIN { exit !(o >= 3e6 && q <= 100) }' ||
    { echo "FAIL: row misses the targets: $design $selector $ops ops/s p99 $q"; fail=1; }
  case $selector in
    server_only) [ "$p" = 1.000 ] || { echo "FAIL: server_only row at p=$p"; fail=1; } ;;
    client_only) [ "$p" = 0.000 ] || { echo "FAIL: client_only row at p=$p"; fail=1; } ;;
  esac
  if [ "$design" = pilaf:get-rdma ]; then [ "$p" = 0.000 ] || { echo "FAIL: pilaf get-rdma row at p=$p"; fail=1; }; fi
done <<<"$rows"
# A design without the scenario of its own, a selector with no split
# model, a file of another design, an unknown design.
expect_error "give nam=SCENARIO.toml" "${plan[@]}" --designs nam
expect_error "--selectors backoff: the planner has no model" "${plan[@]}" --selectors backoff
expect_error "the file's index.type is 'cell'" "${plan[@]}" --designs "nam=$root/scenarios/cell/one-meganode.toml"
expect_error "--designs nosuch: no such design" "${plan[@]}" --designs "nosuch=$root/scenarios/cell/one-meganode.toml"
[ $fail = 0 ] && echo "locus plan over designs and selectors: rows and refusals as expected"
exit $fail
