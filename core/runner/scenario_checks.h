// What a scenario run derives and checks before it starts, apart from the
// run itself (scenario_run.cc): the RPC options of its endpoints, whether
// it fits the memory it may take, and the placements it cannot run. Each
// refusal names the setting to change.
#pragma once

#include <cstdint>

#include "core/design/design.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::runner::detail {

rpc::RpcServerOptions server_rpc_options(const scenario::Scenario& s, const design::IndexDriver& driver);
rpc::RpcClientOptions client_rpc_options(const design::IndexDriver& driver);
// RunOptions::max_memory_bytes against the design's estimates and the
// runner's buffers (`client_state_bytes`: the runner's own state per client).
Status check_memory(const scenario::Scenario& s, const design::IndexDriver& driver, const design::Placement& placement,
                    const RunOptions& options, uint64_t client_state_bytes);
// run.clients_on_servers: the combinations it cannot run.
Status check_clients_on_servers(const scenario::Scenario& s, const design::Placement& placement);
// RunOptions::serve_machine: the machine exists, and nothing of the run
// needs every machine in this process.
Status check_serve_machine(const scenario::Scenario& s, const RunOptions& options);

}  // namespace locus::runner::detail
