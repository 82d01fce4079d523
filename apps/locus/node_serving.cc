// `locus serve --node K`: see node_serving.h.
#include "apps/locus/node_serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/designs/designs.h"

namespace locus::cli {

StatusOr<NodePlan> plan_node(const scenario::Scenario& s, const verbs::ClusterConfig& cluster, int64_t node,
                             const design::Placement& placement) {
  const uint32_t machines = s.platform.servers;
  if (node < 0 || node >= machines) {
    return invalid_argument(fmt::format("--node {}: {} has platform.servers = {}, so nodes 0 to {}", node, s.source,
                                        machines, machines - 1));
  }
  const design::Design* design = designs::registry().find(s.index.type);
  if (design == nullptr)
    return scenario::setting_error(s, "index.type", "'" + s.index.type + "' is not a design of this build");
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<design::IndexDriver> driver, design->make_driver(s, placement));
  if (Status st = driver->check_one_machine_per_process(); !st.is_ok()) {
    return Status(st.code(), fmt::format("--node {}: {}", node, st.message()));
  }
  const auto per_machine = static_cast<uint32_t>(driver->server_endpoints().size());
  const uint64_t needed = uint64_t{machines} * per_machine;
  if (cluster.servers.size() < needed) {
    return invalid_argument(fmt::format(
        "--node {}: {} lists {} [[server]] entries; the scenario's {} machine(s) of {} endpoint(s) each ({}) need {}, "
        "machine k's from entry k x {} on",
        node, cluster.source, cluster.servers.size(), machines, per_machine, s.index.type, needed, per_machine));
  }
  NodePlan plan;
  plan.listen_first = static_cast<uint32_t>(node) * per_machine;
  plan.listen_end = plan.listen_first + per_machine;
  for (uint32_t e = 0; e < needed; ++e) {
    if (e >= plan.listen_first && e < plan.listen_end) continue;
    if (cluster.servers[e].port == 0) {
      return invalid_argument(fmt::format(
          "--node {}: {} entry {} ({}) has port 0 (any free port), which its own process picks and this one "
          "cannot know: give every peer its port",
          node, cluster.source, e, cluster.servers[e].to_string()));
    }
    plan.peers.push_back(e);
  }
  return plan;
}

Status wait_for_peers(verbs::VerbsRuntime& runtime, const NodePlan& plan, double timeout_s,
                      const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::nanoseconds(static_cast<Nanos>(std::llround(timeout_s * 1e9)));
  for (NodeId peer : plan.peers) {
    // A slice at a time, so that a signal stops the wait.
    while (true) {
      if (stop != nullptr && stop->load(std::memory_order_acquire)) {
        return unavailable("stopped while waiting for peer node " + std::to_string(peer));
      }
      const Nanos left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
      const Status st = runtime.wait_for_server(peer, std::clamp<Nanos>(left, 0, 1000 * kMillisecond));
      if (st.is_ok()) break;
      if (left <= 1000 * kMillisecond) {
        return Status(st.code(), fmt::format("waited {:g} s (--peer-timeout-s) for peer {}", timeout_s, st.message()));
      }
    }
  }
  return Status();
}

}  // namespace locus::cli
