// Runs a scenario, given as TOML text, on the SimGrid backend with the
// scenario's seed: what the simulation tests share (tests/sim/).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/harness/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::testing {

// The validation platform: the synthetic micro index (one RPC, or a chain
// of dependent READs, per operation) on one server with one core.
// Links, PCIe and verb messaging far from saturation, RDMA and verbs
// independent: only the resource under test can limit throughput.
inline constexpr const char* kMicroPlatform = R"(
[platform]
servers = 1
cores_per_server = 1
link = { bandwidth_gbps = 400.0, latency_us = 0.5 }
pcie = { bandwidth_gbps = 400.0, latency_us = 0.1 }
[platform.nic]
read = [[1024, 1.44e6]]
send = [[64, 1.0e8]]
recv = [[64, 1.0e8]]
rdma_share_with_verbs = 1.0
verbs_share_with_rdma = 1.0
[platform.cpu]
handler_cost_us = { "micro.op" = 6.3, "micro.layout" = 0.0 }
client_op_us = 0.0
[index]
type = "micro"
reads_per_op = 5
read_bytes = 1024
[workload]
recordcount = 1
[run]
seed = 7
clients = 96
duration_s = 0.025
warmup_s = 0.005
)";


// Runs `sc` on SimGrid with its seed; `tweak` may change the backend's
// other options.
inline StatusOr<harness::ScenarioReport> simulate(const scenario::Scenario& sc,
                                                 const std::function<void(simgrid_backend::SimOptions&)>& tweak = {}) {
  return harness::run_scenario(sc, [&tweak](const scenario::Scenario& s) {
    simgrid_backend::SimOptions o;
    o.seed = s.run.seed;
    if (tweak) tweak(o);
    return simgrid_backend::make_simgrid_runtime(s.platform, o);
  });
}

inline StatusOr<harness::ScenarioReport> simulate_scenario(std::string_view text, const std::string& source,
                                                           const std::vector<std::string>& sets = {}) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario sc, scenario::parse_scenario(text, source, sets));
  return simulate(sc);
}

}  // namespace locus::testing
