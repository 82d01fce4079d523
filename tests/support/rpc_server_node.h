// A server node for loopback (or any runtime's) tests: a node, its Env and
// an RPC server whose dispatch loop runs as a daemon actor, the set-up
// every design's test cluster starts from.
#pragma once

#include <memory>
#include <string>

#include "core/rpc/rpc_server.h"
#include "core/transport/runtime.h"

namespace locus::testing {

// A server node of `runtime` named `name`, with an RPC server whose
// dispatch loop runs as a daemon actor from runtime.run() on: attach the
// design's handlers to `rpc` before that.
struct RpcServerNode {
  NodeId id = kInvalidNode;
  Env env;
  std::unique_ptr<rpc::RpcServer> rpc;
};
RpcServerNode add_rpc_server_node(Runtime& runtime, const std::string& name);

}  // namespace locus::testing
