// LoopbackPilaf: a Pilaf server on a loopback runtime, ready for client
// actors, for tests. The server runs its RPC dispatch loop as a daemon
// actor; `server_loop` lets a test interleave its own server-side work.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/fault/fault_runtime.h"
#include "core/index/pilaf/client.h"
#include "core/index/pilaf/server.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"

namespace locus::testing {


struct PilafCluster {
  std::unique_ptr<Runtime> runtime;
  fault::FaultRuntime* faults = nullptr;  // `runtime`, when create() was given fault options
  NodeId server_node = kInvalidNode;
  std::unique_ptr<rpc::RpcServer> rpc;
  std::unique_ptr<pilaf::PilafServer> pilaf;

  FailureLog failures;
  void fail(std::string what) { failures.fail(std::move(what)); }

  // Builds the runtime and server; the daemon starts at runtime->run().
  // `between_requests`, if set, runs on the server thread after each
  // serve_once (e.g. local puts racing with RDMA readers).
  // With `faults`, the runtime is a FaultRuntime over loopback, not armed.
  static std::unique_ptr<PilafCluster> create(const pilaf::StoreOptions& store,
                                              const loopback::LoopbackOptions& lo = {},
                                              std::function<void()> between_requests = {},
                                              const fault::FaultOptions* faults = nullptr);
  // Adds a client actor that is handed a connected PilafClient.
  void add_client(const std::string& name, pilaf::ClientOptions options,
                  std::function<void(pilaf::PilafClient&, Env&)> body);
};

}  // namespace locus::testing
