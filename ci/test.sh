#!/usr/bin/env bash
# Installs what is missing, checks the layering, then builds and runs the
# whole test suite under each preset: release, debug (ASan + UBSan) and
# tsan. LOCUS_PRESETS overrides the list, e.g. LOCUS_PRESETS=release.
# Then, once, the verbs tier (ctest label "verbs") on the release build
# where an RDMA device exists: Soft-RoCE in a qemu guest (ci/softroce-vm.sh).
# LOCUS_VERBS_TIER=0 leaves it out.
# Then a bounded fuzz step: every libFuzzer target of tests/fuzz for
# LOCUS_FUZZ_SECONDS each (default 20: 13 targets, 4.5 minutes), built
# already by the debug preset (clang, ASan + UBSan: one build serves the
# suite under ASan and UBSan and the fuzzer), with a fixed seed (LOCUS_FUZZ_SEED, default 1)
# so a red step can be replayed; it fails on any crash (docs/fuzzing.md).
# LOCUS_FUZZ_STEP=0 leaves it out; ci/fuzz.sh runs targets for longer.
#
# The sanitizer presets build and run only the tests their instrumentation
# has something to find in (CMakePresets.json: LOCUS_SKIP_LABELS and the
# test presets' label filters): ASan + UBSan (clang) everything but the verbs tier;
# ThreadSanitizer leaves out SimGrid's coroutines, the models' arithmetic
# and the single-threaded fuzz replays. Every preset compiles with -g1:
# line tables only, so backtraces and sanitizer reports keep their
# file:line, for 30-38% less compile time than -g under -fsanitize=thread
# (nam_test.cc 13.0 -> 8.0 s, nessie/driver.cc 5.2 -> 3.6 s) and 7-29% at
# -O2 (apps/locus/main.cc 13.7 -> 9.9 s, pilaf/driver.cc 5.5 -> 5.1 s;
# 2026-11-27). Each step prints how long it took,
# and the steps so far are listed again at the end or on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

steps=()
step_start=$SECONDS
# step NAME: ends the step running since the last one, naming it.
step() {
  steps+=("$(printf '%-34s %5d s' "$1" $((SECONDS - step_start)))")
  echo "=== $1: $((SECONDS - step_start)) s"
  step_start=$SECONDS
}
print_steps() {
  local status=$?
  echo "=== time per step (total $SECONDS s, exit $status):"
  printf '  %s\n' "${steps[@]}"
}
trap print_steps EXIT

./ci/install-deps.sh
./ci/check-layering.sh
step "install-deps, layering"

presets=${LOCUS_PRESETS:-"release debug tsan"}
jobs=${LOCUS_JOBS:-$(nproc)}
for preset in $presets; do
  echo "=== preset $preset: configure, build, test"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  step "$preset: build"
  if [ "$preset" = tsan ]; then
    # (SimGrid actors are coroutines on one OS thread: ThreadSanitizer has
    # no concurrency to check there and cannot follow their stack switches.)
    ctest --preset "$preset" -j 1
  else
    # Two at a time on CI's two cores: the release suite took 530 s at -j 1
    # and 280-306 s at -j 2 (2026-11-27), and the whole run was at 75 of its
    # 90 minutes. ThreadSanitizer's tests stay serial: at -j 2 they were no
    # faster (15 of 64 done after 7 min, against 6.5 min at -j 1;
    # 2026-11-28), since they run threads of their own on both cores.
    ctest --preset "$preset" -j "$jobs"
  fi
  step "$preset: tests"
done
echo "=== all presets passed: $presets"

if [ "${LOCUS_FUZZ_STEP:-1}" != 0 ]; then
  echo "=== fuzz: every target for ${LOCUS_FUZZ_SECONDS:-20}s (ci/fuzz.sh)"
  LOCUS_FUZZ_SEED=${LOCUS_FUZZ_SEED:-1} ./ci/fuzz.sh all "${LOCUS_FUZZ_SECONDS:-20}"
  step "fuzz: build and run"
fi

if [[ " $presets " == *" release "* && "${LOCUS_VERBS_TIER:-1}" != 0 ]]; then
  # 1500 s: the tier took 633 s on an idle machine and 1168 s with the
  # machine loaded (2026-11-27); the guest is emulated (TCG).
  echo "=== verbs tier: Soft-RoCE (serial, bounded by LOCUS_VM_TIMEOUT)"
  set +e
  LOCUS_VM_TIMEOUT=${LOCUS_VM_TIMEOUT:-1500} ./ci/softroce-vm.sh \
    ctest --test-dir build/release -L verbs -j 1 --output-on-failure
  status=$?
  set -e
  step "verbs tier"
  if [ $status -eq 77 ]; then
    echo "=== verbs tier skipped: no RDMA device here and no VM could be started"
  elif [ $status -ne 0 ]; then
    echo "=== verbs tier failed ($status)"
    exit $status
  else
    echo "=== verbs tier passed"
  fi
fi
