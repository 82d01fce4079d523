#!/usr/bin/env bash
# Installs what is missing, checks the layering, then builds and runs the
# whole test suite under each preset: release, debug (ASan + UBSan) and
# tsan. LOCUS_PRESETS overrides the list, e.g. LOCUS_PRESETS=release.
set -euo pipefail
cd "$(dirname "$0")/.."

./ci/install-deps.sh
./ci/check-layering.sh

presets=${LOCUS_PRESETS:-"release debug tsan"}
jobs=${LOCUS_JOBS:-$(nproc)}
for preset in $presets; do
  echo "=== preset $preset: configure, build, test"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  if [ "$preset" = tsan ]; then
    # SimGrid actors are coroutines on one OS thread: ThreadSanitizer has no
    # concurrency to check there and cannot follow their stack switches.
    ctest --preset "$preset" -j 1 --label-exclude sim
  else
    ctest --preset "$preset" -j 1
  fi
done
echo "=== all presets passed: $presets"

