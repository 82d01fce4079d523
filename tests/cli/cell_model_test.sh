#!/usr/bin/env bash
# `locus model` and `locus plan` on a Cell scenario (issue 22): the model
# prints its derivation and every policy's row, the planner finds
# configurations meeting the target, and a workload the model does not
# cover (writes) is refused by name. Fails on a build whose Cell design
# brings no model ("brings no analytic model").
set -uo pipefail
locus=$1 root=$2
scenario="$root/scenarios/cell/four-servers.toml"
. "$(dirname "$0")/expect_error.sh"  # sets fail=0
check() {  # description, output, pattern (extended regex) it must contain
  if ! grep -Eq -- "$3" <<<"$2"; then echo "FAIL: $1: no line matching '$3' in:"; echo "$2"; fail=1; fi
}
out=$(timeout 60 "$locus" model "$scenario" 2>&1) || { echo "FAIL: locus model: $out"; fail=1; }
check "model derivation" "$out" "meganodes: 26\.[0-9] leaf meganodes .*, 4 local levels each"
check "model derivation" "$out" "client side: .* 4\.00 node READs of 1024 B \+ 1 extent READ"
check "model derivation" "$out" "server side: .* = 5\.780 us"
for policy in "server-only" "client-only" "optimal p\*" "jsq equilibrium"; do
  check "model row" "$out" "^$policy +[01]\.[0-9]{3} +[0-9]+ "
done
out=$(timeout 60 "$locus" model "$scenario" --set selector.type=server_only 2>&1) || { echo "FAIL: $out"; fail=1; }
check "fixed selector" "$out" "^scenario split +1\.000 "

out=$(timeout 120 "$locus" plan --target-ops 2000000 --p99-us 100 "$scenario" 2>&1) || { echo "FAIL: locus plan: $out"; fail=1; }
check "plan header" "$out" "^ servers +cores +clients +cost +p +ops/s +mean us +p99 us +bottleneck"
# The cheapest row meets the target.
row=$(grep -A1 "^ servers" <<<"$out" | tail -1)
read -r servers cores clients cost p ops mean p99 _ <<<"$row"
if ! awk -v o="$ops" -v q="$p99" 'BEGIN { exit !(o >= 2000000 && q <= 100) }'; then
  echo "FAIL: plan's first row misses the target: $row"; fail=1
fi

expect_error "workload.readproportion: the cell model covers lookups only" model "$scenario" \
  --set workload.readproportion=0.5 --set workload.updateproportion=0.5
[ $fail = 0 ] && echo "locus model and plan on a Cell scenario: rows and derivation present"
exit $fail
