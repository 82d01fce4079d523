#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (docs/fuzzing.md).
#
#   ci/fuzz.sh TARGET|all [SECONDS]   fuzz each target for SECONDS (default 60)
#   ci/fuzz.sh --list                 the target names
#   ci/fuzz.sh --seeds                rewrite the seed corpora (binary seeds
#                                     from fuzz_make_seeds, text seeds from
#                                     scenarios/ and config/)
#
# Builds the targets in the `debug` preset's build (clang, ASan + UBSan,
# build/debug: the same build runs the test suite under ASan and UBSan)
# first. Each run starts from the checked-in seeds corpus/<target>/ and
# regression inputs regression/<target>/, keeps what it discovers in
# build/debug/work/<target>/ (so long runs resume from there; the
# checked-in corpus is not touched) and writes crashes to
# build/debug/artifacts/<target>/. LOCUS_FUZZ_RUNS=M
# also stops a target after M executions; LOCUS_FUZZ_SEED=S fixes
# libFuzzer's random seed (0, the default: a new one each run); LOCUS_FUZZ_JOBS=J
# builds with J jobs. Prints executions, time and exec/s per target; exits non-zero if
# any target crashed, leaked, timed out or ran out of memory, naming the
# input to copy into tests/fuzz/regression/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(rpc_server rpc_client pilaf_server pilaf_layout cell_server cell_replies
         catfish_ring catfish_node catfish_connect catfish_messaging mailbox_setup nessie_requests scenario
         cluster_config)
build=build/debug
fuzz_dir=tests/fuzz

configure_and_build() {
  local launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  if [ ! -f "$build/build.ninja" ]; then
    CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} cmake --preset debug "${launcher[@]}" >/dev/null
  fi
  if ! grep -q '^LOCUS_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "fuzz: $build was configured without LOCUS_FUZZ (by gcc, before the debug preset became the clang" \
         "fuzz build): remove $build and run again" >&2
    exit 2
  fi
  CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} cmake --build "$build" -j "${LOCUS_FUZZ_JOBS:-$(nproc)}" --target "$@"
}

case "${1:-}" in
  ""|-h|--help)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
  --list)
    printf '%s\n' "${targets[@]}"
    exit 0 ;;
  --seeds)
    configure_and_build fuzz_make_seeds
    "$build/tests/fuzz/fuzz_make_seeds" "$fuzz_dir/corpus"
    mkdir -p "$fuzz_dir/corpus/scenario" "$fuzz_dir/corpus/cluster_config"
    for f in $(find scenarios -name '*.toml' | sort); do
      cp "$f" "$fuzz_dir/corpus/scenario/$(echo "${f#scenarios/}" | tr / -)"
    done
    cp config/cluster-example.toml "$fuzz_dir/corpus/cluster_config/"
    exit 0 ;;
esac

selected=("$1")
if [ "$1" = all ]; then selected=("${targets[@]}"); fi
seconds=${2:-60}
for t in "${selected[@]}"; do
  if [[ ! " ${targets[*]} " == *" $t "* ]]; then
    echo "fuzz: unknown target '$t' (ci/fuzz.sh --list)" >&2
    exit 2
  fi
done
configure_and_build $(printf 'fuzz_%s ' "${selected[@]}")

status=0
summary=()
for t in "${selected[@]}"; do
  work="$build/work/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  inputs=("$fuzz_dir/corpus/$t")
  if [ -d "$fuzz_dir/regression/$t" ]; then inputs+=("$fuzz_dir/regression/$t"); fi
  log="$build/work/$t.log"
  runs=()
  if [ -n "${LOCUS_FUZZ_RUNS:-}" ]; then runs=(-runs="$LOCUS_FUZZ_RUNS"); fi
  echo "=== fuzz $t: ${seconds}s${LOCUS_FUZZ_RUNS:+ or $LOCUS_FUZZ_RUNS executions}"
  set +e
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" "${runs[@]}" -timeout=20 -rss_limit_mb=2048 -seed="${LOCUS_FUZZ_SEED:-0}" \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "${inputs[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  line=$(printf '%-18s %12s execs %8s exec/s  cov %6s  rss %5s MB' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${rss:-?}")
  if [ $rc -ne 0 ]; then
    status=1
    crash=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')
    line="$line  FAILED (exit $rc) ${crash:+input $crash}"
    echo "--- $t: last lines of $log"
    grep -vE '^#[0-9]+' "$log" | tail -40
  fi
  echo "$line"
  summary+=("$line")
done
echo "=== fuzz summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ $status -ne 0 ]; then
  echo "=== fuzz: a target failed; copy its input into tests/fuzz/regression/<target>/ and reproduce with"
  echo "    $build/tests/fuzz/fuzz_<target> <input>"
fi
exit $status
