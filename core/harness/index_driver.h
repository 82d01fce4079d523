// IndexDriver: what the scenario runner needs from an index: set its
// servers up (handlers, load), and open a client session that turns YCSB
// operations into the index's own calls. One implementation per index
// (pilaf_driver.cc, micro_driver.cc); the runner stays index-agnostic.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/metrics/op_stats.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/scenario/scenario.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {

class ClientSession {
 public:
  virtual ~ClientSession() = default;
  // Carries out one operation; returns its status (NOT_FOUND on a read is
  // an answer, not a failure) and the name it is measured under.
  virtual Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                         std::string_view* measured_as) = 0;
  // Adds the session's own counters (retries, ...) to `stats`.
  virtual void report(metrics::OpStats& stats) const = 0;
};

class IndexDriver {
 public:
  virtual ~IndexDriver() = default;
  // Creates server `index`'s state on its node and registers its handlers.
  virtual Status setup_server(uint32_t index, Env env, rpc::RpcServer& rpc) = 0;
  // Loads the workload's records (after every server is set up).
  virtual Status load(const workload::WorkloadSpec& spec, Random& rng) = 0;
  // Opens a session for one client actor.
  virtual StatusOr<std::unique_ptr<ClientSession>> connect(Env& env, Endpoint& endpoint, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) = 0;
  // Numbers for the results (server-side counters, store sizes).
  virtual void report(std::map<std::string, double>& extra) const = 0;
};

StatusOr<std::unique_ptr<IndexDriver>> make_pilaf_driver(const scenario::Scenario& s);
StatusOr<std::unique_ptr<IndexDriver>> make_micro_driver(const scenario::Scenario& s);

}  // namespace locus::harness
