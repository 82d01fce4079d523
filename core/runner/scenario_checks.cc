// What a scenario run derives and checks before it starts (scenario_checks.h).
#include "core/runner/scenario_checks.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace locus::runner::detail {

rpc::RpcServerOptions server_rpc_options(const scenario::Scenario& s, const design::IndexDriver& driver) {
  rpc::RpcServerOptions so;
  so.max_message_bytes = driver.rpc_message_bytes();
  // Enough receives that a burst of clients (all connecting at once, say)
  // mostly finds one posted; the rest wait out RNR retries.
  so.recv_buffers = std::clamp<uint32_t>(s.run.clients, 256, 1024);
  return so;
}

rpc::RpcClientOptions client_rpc_options(const design::IndexDriver& driver) {
  rpc::RpcClientOptions ro;
  ro.max_message_bytes = driver.rpc_message_bytes();
  return ro;
}

// RunOptions::max_memory_bytes: what the design estimates for its servers
// and each client, and what the runner allocates beside them (each server
// endpoint's RPC buffers; each client's RPC buffers and the latency
// histograms of every YCSB operation kind), against what this run may
// take, before anything is allocated.
Status check_memory(const scenario::Scenario& s, const design::IndexDriver& driver, const design::Placement& placement,
                    const RunOptions& options, uint64_t client_state_bytes) {
  using design::saturating_add;
  using design::saturating_mul;
  if (options.max_memory_bytes == 0) return Status();
  design::MemoryEstimate servers = placement.servers_here ? driver.server_memory() : design::MemoryEstimate{};
  design::MemoryEstimate client = placement.clients_here ? driver.client_memory() : design::MemoryEstimate{};
  const uint64_t clients = placement.clients_here ? s.run.clients : 0;
  uint64_t rpc_servers = 0;
  if (placement.servers_here) {
    const rpc::RpcServerOptions so = server_rpc_options(s, driver);
    const uint64_t endpoints = saturating_mul(s.platform.servers, driver.server_endpoints().size());
    rpc_servers = saturating_mul(endpoints, (uint64_t{so.recv_buffers} + so.send_buffers) * so.max_message_bytes);
  }
  const rpc::RpcClientOptions ro = client_rpc_options(driver);
  constexpr uint64_t kOpKinds = workload::kOpKindCount;
  const uint64_t client_runner = (1 + uint64_t{ro.recv_buffers}) * ro.max_message_bytes + client_state_bytes +
                                 kOpKinds * (sizeof(metrics::OpSummary) +
                                             metrics::LatencyHistogram::kBucketCount * sizeof(uint64_t));
  const uint64_t per_client = saturating_add(client.bytes, client_runner);
  const uint64_t total = saturating_add(saturating_add(servers.bytes, rpc_servers), saturating_mul(clients, per_client));
  if (total <= options.max_memory_bytes) return Status();
  auto gib = [](uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); };
  std::string why;
  if (servers.bytes > 0) why += fmt::format("servers {:.1f} GiB ({})", gib(servers.bytes), servers.driven_by);
  if (rpc_servers > 0) {
    why += fmt::format("{}RPC receive buffers {:.1f} GiB (platform.servers)", why.empty() ? "" : ", ", gib(rpc_servers));
  }
  if (clients > 0) {
    why += fmt::format("{}{} clients x {:.2f} MiB (run.clients{})", why.empty() ? "" : ", ", clients,
                       static_cast<double>(per_client) / (1024.0 * 1024),
                       client.driven_by.empty() || client.driven_by == "run.clients" ? "" : ", " + client.driven_by);
  }
  return resource_exhausted(fmt::format("this run needs about {:.1f} GiB: {}; more than the {:.1f} GiB {}: reduce "
                                        "those settings",
                                        gib(total), why, gib(options.max_memory_bytes),
                                        options.max_memory_source.empty() ? "allowed (--max-memory)"
                                                                          : options.max_memory_source));
}

// run.clients_on_servers: the combinations it cannot run.
Status check_clients_on_servers(const scenario::Scenario& s, const design::Placement& placement) {
  if (!s.run.clients_on_servers) return Status();
  if (!placement.servers_here || !placement.clients_here) {
    return scenario::setting_error(s, "run.clients_on_servers",
                                   "puts the clients on the server machines: needs the servers and the clients in "
                                   "this one run (locus sim or bench, not serve with clients elsewhere)");
  }
  if (s.run.clients % s.platform.servers != 0) {
    return scenario::setting_error(s, "run.clients_on_servers",
                                   fmt::format("needs run.clients ({}) a multiple of platform.servers ({}), the "
                                               "same number of clients on every machine",
                                               s.run.clients, s.platform.servers));
  }
  if (s.faults.crash_clients > 0 || s.faults.crash_servers > 0) {
    return scenario::setting_error(s, "run.clients_on_servers",
                                   "cannot be combined with faults.crash_clients or faults.crash_servers: a client "
                                   "shares its machine with a server, so crashing one alone is not a machine's crash");
  }
  return Status();
}

// RunOptions::serve_machine: the machine exists, and nothing of the run
// needs every machine in this process.
Status check_serve_machine(const scenario::Scenario& s, const RunOptions& options) {
  if (options.serve_machine < 0) return Status();
  if (!options.placement.servers_here) return invalid_argument("run_scenario: serve_machine without the servers here");
  if (options.serve_machine >= s.platform.servers) {
    return scenario::setting_error(
        s, "platform.servers",
        fmt::format("has {} server machine(s), 0 to {}: there is no node {}", s.platform.servers,
                    s.platform.servers - 1, options.serve_machine));
  }
  if (s.faults.crash_servers > 0) {
    return scenario::setting_error(s, "faults.crash_servers",
                                   "crashes server machines of one process; with one server per process (--node) "
                                   "stop the process instead");
  }
  if (s.check.linearizability) {
    return scenario::setting_error(s, "check.linearizability",
                                   "needs every client's history in one process; with one server per process "
                                   "(--node) each process sees only its own clients");
  }
  if (options.placement.clients_here && !s.run.clients_on_servers) {
    return scenario::setting_error(s, "run.clients_on_servers",
                                   "must be true for a node that also runs clients (--with-clients): it says "
                                   "which clients run on which machine");
  }
  return Status();
}

}  // namespace locus::runner::detail
