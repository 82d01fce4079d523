#!/usr/bin/env bash
# Fails if anything under core/ includes a verbs, RDMA or SimGrid header, or
# if core's CMake links a backend library: the core is written once against
# the transport seam and must build without any backend.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
hits=$(grep -rnE '#\s*include\s*[<"](infiniband/|rdma/|simgrid/|simgrid\.h|xbt/|smpi/)' core || true)
if [ -n "$hits" ]; then
  echo "layering: core/ includes a backend header:"
  echo "$hits"
  status=1
fi
links=$(grep -rnE '\b(ibverbs|rdmacm|simgrid|locus_loopback|locus_verbs|locus_simgrid)\b' --include=CMakeLists.txt core || true)
if [ -n "$links" ]; then
  echo "layering: core/ CMake names a backend library:"
  echo "$links"
  status=1
fi
backend_in_core=$(grep -rnE '#\s*include\s*"backends/' core || true)
if [ -n "$backend_in_core" ]; then
  echo "layering: core/ includes a backend source:"
  echo "$backend_in_core"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok (core/ is free of backend headers and libraries)"
exit $status
