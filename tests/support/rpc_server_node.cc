// add_rpc_server_node: see rpc_server_node.h.
#include "tests/support/rpc_server_node.h"

#include <boost/test/unit_test.hpp>

namespace locus::testing {

RpcServerNode add_rpc_server_node(Runtime& runtime, const std::string& name) {
  RpcServerNode n;
  auto id = runtime.add_node({name, true});
  BOOST_REQUIRE(id.is_ok());
  n.id = *id;
  n.env = runtime.setup_env(n.id);
  auto rpc = rpc::RpcServer::create(n.env);
  BOOST_REQUIRE_MESSAGE(rpc.is_ok(), rpc.status().to_string());
  n.rpc = std::move(rpc).value();
  rpc::RpcServer* srv = n.rpc.get();
  BOOST_REQUIRE(runtime
                    .spawn(n.id, name, ActorKind::kDaemon,
                           [srv](Env& e) {
                             while (!e.stop_requested()) srv->serve_once(5 * kMillisecond);
                           })
                    .is_ok());
  return n;
}

}  // namespace locus::testing
