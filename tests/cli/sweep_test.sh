#!/usr/bin/env bash
# `locus sweep` end to end: a 2x2 grid on the quick-start scenario runs two
# points at a time and merges into tables led by the swept keys, one row
# per point, whose figures differ by point; --emit slurm writes a job array
# over points 0-3 and runs nothing, and an array task (--point) fills its
# point; --merge over a directory with a point's results gone names that
# point; a failing point is named with its log's tail while the others
# still run; a malformed grid and an unknown key are refused up front.
set -uo pipefail
locus=$1 root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$(dirname "$0")/expect_error.sh"
quick=$root/scenarios/quickstart.toml
short=(--set run.duration_s=0.004 --set run.warmup_s=0.001)
die() { echo "FAIL: $*"; exit 1; }

# A 2x2 grid, two at a time.
"$locus" sweep "$quick" "${short[@]}" --grid run.clients=2,8 --grid run.seed=1,2 -j 2 --out "$out/s" >"$out/log" 2>&1 ||
  { cat "$out/log"; die "the 2x2 sweep failed"; }
summary=$out/s/summary.csv
[ "$(head -1 "$summary")" = "point,run.clients,run.seed,ops_per_s,latency_us_mean,server_share" ] ||
  { cat "$summary"; die "summary.csv header"; }
[ "$(tail -n +2 "$summary" | wc -l)" -eq 4 ] || { cat "$summary"; die "summary.csv should have 4 rows"; }
[ "$(tail -n +2 "$summary" | cut -d, -f2,3 | sort -u | tr '\n' ' ')" = "2,1 2,2 8,1 8,2 " ] ||
  { cat "$summary"; die "summary.csv should hold each (clients, seed) once"; }
[ "$(tail -n +2 "$summary" | cut -d, -f4 | sort -u | wc -l)" -eq 4 ] ||
  { cat "$summary"; die "throughput should differ by point"; }
# sweep.csv: every operation row of every point, the swept keys leading.
head -1 "$out/s/sweep.csv" | grep -q "^point,run.clients,run.seed,run,backend,index," ||
  { head -1 "$out/s/sweep.csv"; die "sweep.csv header"; }
[ "$(tail -n +2 "$out/s/sweep.csv" | cut -d, -f1 | sort -u | tr '\n' ' ')" = "0 1 2 3 " ] ||
  { cat "$out/s/sweep.csv"; die "sweep.csv should hold points 0-3"; }
grep -q '"run.clients": "8"' "$out/s/sweep.json" || die "sweep.json lacks the swept values"
if command -v gnuplot >/dev/null; then [ -s "$out/s/sweep.png" ] || die "no plot"; fi

# --emit slurm: a job array over points 0-3, nothing run.
"$locus" sweep "$quick" "${short[@]}" --grid run.clients=2,8 --grid run.seed=1,2 --emit slurm --out "$out/slurm" \
  >"$out/log" 2>&1 || { cat "$out/log"; die "--emit slurm failed"; }
grep -q "^#SBATCH --array=0-3$" "$out/slurm/sweep.sbatch" || { cat "$out/slurm/sweep.sbatch"; die "no array 0-3"; }
grep -q 'sweep --point "$SLURM_ARRAY_TASK_ID"' "$out/slurm/sweep.sbatch" || die "the tasks do not run their point"
[ ! -e "$out/slurm/points/0/result.json" ] || die "--emit slurm ran a point"
# Array task 3, as Slurm would start it; then the merge names the three not run.
SLURM_ARRAY_TASK_ID=3 bash "$out/slurm/sweep.sbatch" >"$out/log" 2>&1 || { cat "$out/log"; die "task 3 failed"; }
[ -s "$out/slurm/points/3/result.json" ] || die "task 3 left no result"
"$locus" sweep --merge "$out/slurm" >"$out/log" 2>&1 && die "--merge with points missing should fail"
grep -q "3 of 4 points have no results" "$out/log" || { cat "$out/log"; die "merge: count of missing points"; }
grep -q "point 0 (run.clients=2 run.seed=1)" "$out/log" || { cat "$out/log"; die "merge: point 0 not named"; }
grep -q "point 3" "$out/log" && { cat "$out/log"; die "merge: point 3 has results"; }

# --merge over the local sweep with point 2's results gone.
rm "$out/s/points/2/result.json"
expect_error "point 2 (run.clients=8 run.seed=1): no result" sweep --merge "$out/s"
[ "$(tail -n +2 "$out/s/summary.csv" | wc -l)" -eq 4 ] || die "the merge should still write every point's row"

# A failing point (refused at run time: its clients need more than
# --max-memory, which each point gets) is named with its log's tail; the
# other point still runs.
"$locus" sweep "$quick" "${short[@]}" --grid run.clients=2,1000000 --max-memory 8e9 -j 2 --out "$out/f" \
  >"$out/log" 2>&1 && die "a sweep with a failing point should fail"
grep -q "point 1 (run.clients=1000000) failed: exit status 1; the last lines of" "$out/log" ||
  { cat "$out/log"; die "the failing point is not named"; }
grep -q "locus sim: RESOURCE_EXHAUSTED: .* more than the 7.5 GiB allowed (--max-memory)" "$out/log" ||
  { cat "$out/log"; die "no log tail of the failing point"; }
[ -s "$out/f/points/0/result.json" ] || die "point 0 should have run"
grep -q "1 of 2 points have no results" "$out/log" || { cat "$out/log"; die "the merge should name the missing point"; }

# Refused before anything runs.
expect_error "--grid 'run.clients': no '='" sweep "$quick" --grid run.clients --out "$out/e"
expect_error "--grid 'run.clients=1,,2': value 2 is empty" sweep "$quick" --grid run.clients=1,,2 --out "$out/e"
expect_error "--grid '=1,2': no key" sweep "$quick" --grid =1,2 --out "$out/e"
expect_error "key 'run.clients' is swept twice" sweep "$quick" --grid run.clients=1 --grid run.clients=2 --out "$out/e"
expect_error "--grid: give at least one" sweep "$quick" --out "$out/e"
expect_error "point 0 (run.nosuch=1): " sweep "$quick" --grid run.nosuch=1,2 --out "$out/e"
expect_error "nosuch" sweep "$quick" --grid run.clients=1,2 --set run.nosuch=1 --out "$out/e"
expect_error "--point 4: the sweep in" sweep --point 4 --out "$out/slurm"
expect_error "no sweep plan here" sweep --merge "$out/e-none"
[ ! -e "$out/e" ] || die "a refused sweep left a directory"
exit $fail
