// The client half every benchmark driver shares: `clients` client nodes,
// each a worker actor running its share of the operations through the
// index's ClientSession and the YCSB loop (ycsb_loop.h), one
// Runtime::run() until all have returned, and the clients' results merged
// into one RunResult.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/status.h"
#include "core/harness/client_session.h"
#include "core/harness/ycsb_loop.h"
#include "core/metrics/run_result.h"
#include "core/transport/runtime.h"
#include "core/workload/workload.h"
#include "core/workload/workload_spec.h"

namespace locus::harness {

// The actor body of client `index` (0-based) with its share of the
// operations; runs on the client's own node.
using ClientActor = std::function<void(Env& env, uint32_t index, uint64_t ops)>;

// Adds client nodes "client0".."client<clients-1>" to `runtime`, splits
// total_ops evenly between them (the first total_ops % clients get one
// more), spawns `actor` on each and runs the runtime.
Status run_client_actors(Runtime& runtime, uint32_t clients, uint64_t total_ops, const ClientActor& actor);

// What one benchmark client leaves behind (a driver's own outcome adds
// its index's counters).
struct ClientRun {
  metrics::OpStats stats;
  Nanos elapsed_ns = 0;  // its share of the operations, start to end
  Status error;          // the first one it met; it carried on
};

// One benchmark client's part of the run.
struct ClientShare {
  uint32_t index = 0;  // 0-based
  uint64_t ops = 0;    // operations to run
  std::shared_ptr<workload::AcknowledgedCounter> inserts;  // the run's, shared by its clients
};

// Runs a client's share of `spec`'s operations, drawn from its own
// Workload, through `session` into `out` (stopping early, with
// stop_when_server_gone, once the server is gone: see YcsbLimits). Fails
// only if the workload cannot be built.
Status run_client_share(Env& env, const workload::WorkloadSpec& spec, const ClientShare& share,
                        ClientSession& session, ClientRun& out, bool stop_when_server_gone = false);

// run_client_actors for the transaction phase of `spec` with one Outcome
// (a ClientRun) per client: `run(env, share, outcome)` connects client
// share.index and runs its share; an error it returns (connecting, say)
// becomes the outcome's error.
template <typename Outcome, typename Run>
StatusOr<std::vector<Outcome>> run_bench_clients(Runtime& runtime, uint32_t clients,
                                                 const workload::WorkloadSpec& spec, const Run& run) {
  static_assert(std::is_base_of_v<ClientRun, Outcome>);
  std::vector<Outcome> outcomes(clients);
  auto inserts = workload::Workload::make_insert_counter(spec);
  const auto actor = [&](Env& env, uint32_t c, uint64_t ops) {
    Outcome& out = outcomes[c];
    if (Status st = run(env, ClientShare{c, ops, inserts}, out); !st.is_ok()) out.error = st;
  };
  LOCUS_RETURN_IF_ERROR(run_client_actors(runtime, clients, spec.operationcount, actor));
  return outcomes;
}

// A benchmark's result named `name`, for `index` on `runtime`'s backend,
// before the clients' runs are merged into it.
metrics::RunResult bench_result(const Runtime& runtime, const std::string& name, const std::string& index,
                                uint64_t seed);
// Merges one client's run into `result` (its duration is the longest
// client's); returns the client's error, which fails the benchmark.
Status merge_client_run(const ClientRun& run, metrics::RunResult& result);

}  // namespace locus::harness
