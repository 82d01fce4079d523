#!/usr/bin/env bash
# Runs every shipped scenario (scenarios/**/*.toml but the paper
# experiments of scenarios/papers, which `locus reproduce` runs and this
# script names as skipped) with two locus binaries on the SimGrid backend
# and compares their JSON results byte for byte: a refactoring must change
# no simulated figure. Prints one line per
# scenario (same / DIFFERENT, with the wall time of each run, and for a
# difference the JSON fields that differ) and exits 1 if any differs or
# fails.
#
#   scripts/compare-scenarios.sh BASE_BINARY NEW_BINARY [--set key=value]...
#
# Extra --set arguments apply to every run (e.g. a shorter run.duration_s
# for a quick check). JOBS (default 2) runs scenarios in parallel; OUT
# (default results/compare) keeps both JSON files of every scenario;
# SCENARIOS (a list of files) compares those only.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,15p' "$0"; exit 2; }
BASE=$(realpath "$1"); NEW=$(realpath "$2"); shift 2
OUT=${OUT:-results/compare}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
export BASE NEW OUT
export SETS="$*"

one() {
  local file=$1 name
  name=$(echo "$file" | sed 's#^scenarios/##; s#\.toml$##; s#/#-#g')
  for side in base new; do
    local bin=$BASE; [ $side = new ] && bin=$NEW
    local t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    if ! "$bin" sim "$file" --quiet $SETS --json "$OUT/$name.$side.json" --csv "$OUT/$name.$side.csv" \
        > "$OUT/$name.$side.log" 2>&1; then
      echo "FAILED    $file ($side; see $OUT/$name.$side.log)"
      return 1
    fi
    local t1=$(date +%s.%N)
    printf -v "wall_$side" '%.1f' "$(echo "$t1 - $t0" | bc)"
  done
  if cmp -s "$OUT/$name.base.json" "$OUT/$name.new.json"; then
    echo "same      $file (${wall_base} s, ${wall_new} s)"
  else
    echo "DIFFERENT $file (${wall_base} s, ${wall_new} s): diff $OUT/$name.base.json $OUT/$name.new.json"
    command -v python3 > /dev/null && python3 - "$OUT/$name.base.json" "$OUT/$name.new.json" <<'PY'
import json, sys
def flat(o, p=""):
    if isinstance(o, dict):
        for k, v in o.items(): yield from flat(v, p + "/" + k)
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from flat(v, p + "/" + str(i))
    else: yield p, o
a, b = (dict(flat(json.load(open(f)))) for f in sys.argv[1:3])
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
for k in diff[:8]: print(f"          {k}: {a.get(k)} -> {b.get(k)}")
if len(diff) > 8: print(f"          ... {len(diff) - 8} more fields differ")
PY
    return 1
  fi
}
export -f one

if [ -n "${SCENARIOS:-}" ]; then
  printf '%s\n' $SCENARIOS | xargs -P "$JOBS" -I{} bash -c 'one {}'
  exit
fi
for f in $(find scenarios/papers -name '*.toml' | sort); do
  echo "skipped   $f (an experiment file: compare locus reproduce reports)"
done
find scenarios -path scenarios/papers -prune -o -name '*.toml' -print | sort | xargs -P "$JOBS" -I{} bash -c 'one {}'
