#!/usr/bin/env bash
# A server handler the scenario does not cost fails the simulated run with
# an error naming it (there is no default handler cost: it was 2.0 us from
# no source, issue 15); with platform.cpu.default_handler_us given, or the
# handler costed, the same run passes.
set -uo pipefail
locus=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$(dirname "$0")/expect_error.sh"
short=(--quiet --set run.duration_s=0.004 --set run.warmup_s=0.001 --json "$out/r.json" --csv "$out/r.csv")
grep -v '^"pilaf.put"' "$root/scenarios/quickstart.toml" > "$out/no-put-cost.toml"
grep -q '^"pilaf.put"' "$root/scenarios/quickstart.toml" || { echo "FAIL: quickstart.toml costs no pilaf.put"; exit 1; }

expect_error 'server handler(s) "pilaf.put" have no cost' sim "$out/no-put-cost.toml" "${short[@]}"
"$locus" sim "$out/no-put-cost.toml" "${short[@]}" --set platform.cpu.default_handler_us=1.5 > "$out/log" 2>&1 ||
  { cat "$out/log"; echo "FAIL: the run with a default handler cost failed"; fail=1; }
"$locus" sim "$root/scenarios/quickstart.toml" "${short[@]}" > "$out/log" 2>&1 ||
  { cat "$out/log"; echo "FAIL: the quick-start scenario failed"; fail=1; }
exit $fail
