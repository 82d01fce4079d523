#!/usr/bin/env bash
# Fails if anything under core/ includes a verbs, RDMA or SimGrid header, or
# if core's CMake links a backend library: the core is written once against
# the transport seam and must build without any backend. Also fails when a
# core module includes a module above it (the graph of core/CMakeLists.txt:
# a design includes no other design and not the runner; the runner knows
# no design), and when core/ code, which SimGrid actors run, uses a std::
# mutex instead of Env::sync or the no-wait locks of core/common/short_mutex.h.
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

# What each module may include besides itself (core/CMakeLists.txt).
declare -A allowed=(
  [common]=""
  [check]="common"
  [metrics]="common"
  [transport]="common metrics"
  [fault]="common metrics transport"
  [log]="common metrics transport"
  [memory]="common"
  [membership]="common"
  [rpc]="common metrics transport"
  [selector]="common metrics transport"
  [messaging]="common metrics transport rpc selector"
  [workload]="common"
  [scenario]="common metrics transport fault selector workload"
  [design]="common check metrics transport fault memory rpc messaging selector workload scenario"
  [designs]="common check metrics transport fault memory rpc messaging selector workload scenario design index"
  [runner]="common check metrics transport fault memory rpc messaging selector workload scenario design"
)
lower="common check metrics transport fault log memory membership rpc messaging selector workload scenario design"
for dir in core/*/ core/index/*/; do
  dir=${dir%/}
  case $dir in
    core/index) continue ;;
    core/index/*) module=$dir; may="$lower $dir" ;;
    *) module=${dir#core/}; may="${allowed[$module]-__unknown__} $module" ;;
  esac
  if [ "$may" = "__unknown__ $module" ]; then
    echo "layering: $dir is not a module of ci/check-layering.sh's table (add it there and to core/CMakeLists.txt)"
    status=1
    continue
  fi
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    target=$(echo "$hit" | sed -E 's#.*include "core/##; s#".*##')
    case $target in
      index/*/*) target_module="core/index/$(echo "$target" | cut -d/ -f2)" ;;
      *) target_module=$(echo "$target" | cut -d/ -f1) ;;
    esac
    ok=0
    for m in $may; do
      if [ "$m" = "$target_module" ] || [ "$m" = index -a "${target_module#core/index/}" != "$target_module" ]; then ok=1; fi
    done
    if [ $ok = 0 ]; then
      echo "layering: $dir may not include core/$target: $hit"
      status=1
    fi
  done < <(grep -rnE '#\s*include\s*"core/' "$dir" --include=*.h --include=*.cc --include=*.in || true)
done

mutexes=$(grep -rnE 'std::(mutex|shared_mutex|recursive_mutex|timed_mutex|condition_variable)\b|#\s*include\s*<(mutex|shared_mutex|condition_variable)>' core \
  | grep -v '^core/common/short_mutex.h:' || true)
if [ -n "$mutexes" ]; then
  echo "layering: core/ code runs in SimGrid actors: use Env::sync, or ShortMutex for a section that never waits:"
  echo "$mutexes"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok (core/ is free of backend headers, libraries and std:: mutexes; modules include only the modules below them)"
exit $status
