#!/usr/bin/env bash
# `locus reproduce` end to end: every shipped experiment of
# scenarios/papers parses and its settings are valid (--list); a small
# suite of its own runs (two points, a claim) and writes its CSV and
# report; bad experiment files and a failing point end in errors that name
# them, and a failing point does not stop the others; --max-memory
# reaches every simulation.
set -uo pipefail
locus=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$(dirname "$0")/expect_error.sh"

"$locus" reproduce --list --papers "$root/scenarios/papers" >"$out/list" 2>&1 || { cat "$out/list"; exit 1; }
grep -q "all settings valid" "$out/list" || { cat "$out/list"; exit 1; }

mkdir -p "$out/papers/pilaf"
cat >"$out/papers/pilaf/tiny.toml" <<EOT
[experiment]
title = "tiny"
source = "this test"
scenario = "$root/scenarios/quickstart.toml"
set = ["run.duration_s=0.004", "run.warmup_s=0.001"]
x = "run.clients"
values = [2, 4]

[[series]]
name = "rdma"

[[claim]]
text = "a figure"
series = "rdma"
at = 4
value = 1000

[[series]]
name = "4 KB values"
scenario = "$root/scenarios/./quickstart.toml"
set = ["workload.fieldlength=4000"]

[[order]]
text = "small values faster"
series = "rdma"
at = 4
above = ["4 KB values"]

[[series]]
name = "again"

[[order]]
text = "same scenario, no faster"
series = "rdma"
at = 4
above = ["again"]

[[order]]
text = "small values slower"
series = "rdma"
at = 4
below = ["4 KB values"]
any = true
EOT
"$locus" reproduce --papers "$out/papers" --out "$out/r" --jobs 2 >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
[ "$(wc -l <"$out/r/pilaf/tiny.csv")" -eq 3 ] || { echo "CSV:"; cat "$out/r/pilaf/tiny.csv"; exit 1; }
grep -q "^| 4 | [0-9]" "$out/r/report.md" || { echo "no row for 4 clients:"; cat "$out/r/report.md"; exit 1; }
grep -q "^| a figure | 1000 | [0-9]* | [0-9.]* |" "$out/r/report.md" || { echo "no claim row:"; cat "$out/r/report.md"; exit 1; }
grep -q "^[01] of 1 paper figures within 10% of the simulated ones; 1 of 3 of the papers' orderings hold" "$out/r/report.md" ||
  { echo "no summary:"; cat "$out/r/report.md"; exit 1; }
# The orderings: 1000-byte values outrun 4000-byte ones at 4 clients.
grep -q "^| small values faster | run.clients = 4 | rdma [0-9]*, 4 KB values [0-9]* (ops_per_s) | holds |" "$out/r/report.md" ||
  { echo "no holding ordering:"; cat "$out/r/report.md"; exit 1; }
grep -q "^| small values slower | .* | reversed |" "$out/r/report.md" || { echo "no reversed ordering:"; cat "$out/r/report.md"; exit 1; }
grep -q "^| same scenario, no faster | .* | tie |" "$out/r/report.md" || { echo "no tie:"; cat "$out/r/report.md"; exit 1; }

# Errors: file, line and key; a claim at a value not swept; no such design.
sed 's/^title = "tiny"/titel = "tiny"/' "$out/papers/pilaf/tiny.toml" >"$out/papers/pilaf/bad.toml"
expect_error "bad.toml:2:9: experiment.titel: unknown key" reproduce --papers "$out/papers" --out "$out/r2" --list
sed 's/^at = 4/at = 8/' "$out/papers/pilaf/tiny.toml" >"$out/papers/pilaf/bad.toml"
expect_error "claim.at: '8' is not one of experiment.values" reproduce --papers "$out/papers" --list
sed 's/^above = \["4 KB values"\]/above = ["nope"]/' "$out/papers/pilaf/tiny.toml" >"$out/papers/pilaf/bad.toml"
expect_error "order.above: no series 'nope'" reproduce --papers "$out/papers" --list
sed 's/^above = \["4 KB values"\]/above = ["4 KB values"]\nbelow = ["4 KB values"]/' "$out/papers/pilaf/tiny.toml" >"$out/papers/pilaf/bad.toml"
expect_error "expected exactly one of above and below" reproduce --papers "$out/papers" --list
sed 's|/scenarios/\./quickstart.toml|/nowhere.toml|' "$out/papers/pilaf/tiny.toml" >"$out/papers/pilaf/bad.toml"
expect_error "series '4 KB values': scenario: no file" reproduce --papers "$out/papers" --list
rm "$out/papers/pilaf/bad.toml"
expect_error "no experiments for 'nessie'" reproduce nessie --papers "$out/papers"
expect_error "run.clientz" reproduce --papers "$out/papers" --set run.clientz=3
# A point that fails when it runs (no operation ends in its measured
# 0.1 us) names its log; the other still runs and the report is written.
mkdir -p "$out/papers2/pilaf"
sed -e 's/^values = \[2, 4\]/values = [2]/' -e '/^\[\[claim\]\]/,$d' "$out/papers/pilaf/tiny.toml" >"$out/papers2/pilaf/two.toml"
printf '[[series]]\nname = "starved"\nset = ["run.warmup_s=0.0039999"]\n' >>"$out/papers2/pilaf/two.toml"
expect_error "1 of 2 simulations failed" reproduce --papers "$out/papers2" --out "$out/r3"
grep -q "two-starved-2.log" <<<"$(timeout 60 "$locus" reproduce --papers "$out/papers2" --out "$out/r3" 2>&1)" ||
  { echo "FAIL: the failed point's log is not named"; fail=1; }
[ -s "$out/r3/report.md" ] || { echo "FAIL: no report after a failed point"; fail=1; }
# --max-memory holds every simulation to it: one estimated above it is
# refused by name.
expect_error "2 of 2 simulations failed" reproduce --papers "$out/papers2" --out "$out/r4" --jobs 2 --max-memory 1000
grep -q "more than .*allowed (--max-memory)" "$out/r4/pilaf/raw/two-starved-2.log" ||
  { echo "FAIL: the refusal does not name --max-memory:"; cat "$out/r4/pilaf/raw/two-starved-2.log"; fail=1; }
[ $fail -eq 0 ] || exit 1
echo "reproduce: ok"
