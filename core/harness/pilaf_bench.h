// The Pilaf benchmark driver: a Pilaf server and YCSB clients on any
// Runtime (loopback now, verbs and SimGrid later), one call per run. The
// records are loaded into the server's store locally before the clients
// start (the load phase is not measured); each client then runs its share
// of the transaction phase and records latencies with its own OpStats,
// merged at the end.
#pragma once

#include <functional>
#include <memory>

#include "core/index/pilaf/client.h"
#include "core/index/pilaf/store.h"
#include "core/metrics/run_result.h"
#include "core/transport/runtime.h"
#include "core/workload/workload_spec.h"

namespace locus::harness {

struct PilafBenchConfig {
  std::string name = "pilaf";
  workload::WorkloadSpec workload;
  uint32_t clients = 4;
  pilaf::GetMode mode = pilaf::GetMode::kRdma;
  pilaf::StoreOptions store;
  uint64_t seed = 1;
};

using RuntimeFactory = std::function<std::unique_ptr<Runtime>(uint64_t seed)>;

// Checks the configuration for what Pilaf can run (no scans), with a
// message naming the offending setting.
Status validate(const PilafBenchConfig& config);

StatusOr<metrics::RunResult> run_pilaf_bench(const RuntimeFactory& make_runtime,
                                             const PilafBenchConfig& config);

}  // namespace locus::harness
