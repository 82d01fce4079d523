#!/usr/bin/env bash
# Installs every build and test dependency of locus from Debian 12's
# packages. Idempotent: packages already present are skipped, and nothing
# is run when all are there. Uses sudo only when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-test-dev libboost-dev        # Boost.Test; Boost.Geometry as an oracle
  libisal-dev                           # CRC64
  libxxhash-dev                         # key hashing
  libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  librapidcheck-dev                     # property tests
  libcuckoo-dev                         # baseline for `locus bench --micro cuckoo`
  libsimgrid-dev                        # the SimGrid backend
  libeigen3-dev                         # models/queueing: sparse CTMC solver
  libabsl-dev                           # absl::btree_map, baseline for `locus bench --micro blink`
  gnuplot-nox                           # plot images of scenario runs (scripts/plot-scenario.sh)
  libibverbs-dev librdmacm-dev rdma-core ibverbs-providers  # the verbs backend (rxe provider included)
  ibverbs-utils perftest iproute2       # ibv_devinfo, ib_read_bw baseline, `rdma link`
  qemu-system-x86 busybox-static kmod   # the Soft-RoCE VM tier (ci/softroce-vm.sh)
  clang libclang-rt-14-dev              # clang: the debug preset (ASan/UBSan, libFuzzer for ci/fuzz.sh)
  zookeeper default-jre-headless        # membership and region map (docs/membership.md); tests start a real server
  libzookeeper-mt-dev                   # ZooKeeper's C client (multi-threaded), used by locus_zookeeper
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
