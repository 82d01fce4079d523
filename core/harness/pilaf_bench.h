// The Pilaf benchmark driver: a Pilaf server and YCSB clients on any
// Runtime, one call per run. The records are loaded into the server's store
// locally before the clients start (the load phase is not measured); each
// client then runs its share of the transaction phase and records latencies
// with its own OpStats, merged at the end.
//
// Its two halves are usable apart, for servers in another process (verbs:
// `locus serve` runs the first, `locus bench --backend verbs` the second):
// start_pilaf_server sets up and loads a server on one node, and
// run_pilaf_clients runs the clients against a server node, local or not.
#pragma once

#include <functional>
#include <memory>

#include "core/index/pilaf/client.h"
#include "core/index/pilaf/server.h"
#include "core/index/pilaf/store.h"
#include "core/rpc/rpc_server.h"
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

// A server and the RPC server it answers on, registered on one endpoint.
struct PilafServerSet {
  std::unique_ptr<rpc::RpcServer> rpc;
  std::unique_ptr<pilaf::PilafServer> pilaf;
};

// Creates the server on the endpoint `env` belongs to and loads the
// workload's records (insertstart .. + effective_insertcount) into it,
// drawing values from env.random. Serving is the caller's: rpc->serve().
StatusOr<PilafServerSet> start_pilaf_server(Env env, const pilaf::StoreOptions& store,
                                            const workload::WorkloadSpec& load);

// Adds config.clients client nodes to `runtime`, runs the transaction
// phase against `server` (a node of this runtime or, on verbs, of another
// process) and returns the merged result. Server-side figures are not in it.
StatusOr<metrics::RunResult> run_pilaf_clients(Runtime& runtime, NodeId server,
                                               const PilafBenchConfig& config);

// Both halves in one runtime: server node, load, clients, and the server's
// own figures (RPCs served, cuckoo kicks) in the result.
StatusOr<metrics::RunResult> run_pilaf_bench(const RuntimeFactory& make_runtime,
                                             const PilafBenchConfig& config);

}  // namespace locus::harness
