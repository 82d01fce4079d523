// PilafCluster: see loopback_cluster.h.
#include "tests/support/loopback_cluster.h"

#include <boost/test/unit_test.hpp>

namespace locus::testing {

std::unique_ptr<PilafCluster> PilafCluster::create(const pilaf::StoreOptions& store,
                                                   const loopback::LoopbackOptions& lo,
                                                   std::function<void()> between_requests,
                                                   const fault::FaultOptions* faults) {
  auto c = std::make_unique<PilafCluster>();
  c->runtime = loopback::make_loopback_runtime(lo);
  if (faults != nullptr) {
    auto wrapped = std::make_unique<fault::FaultRuntime>(std::move(c->runtime), *faults);
    c->faults = wrapped.get();
    c->runtime = std::move(wrapped);
  }
  auto node = c->runtime->add_node({"server0", true});
  BOOST_REQUIRE(node.is_ok());
  c->server_node = *node;
  Env env = c->runtime->setup_env(c->server_node);
  auto rpc = rpc::RpcServer::create(env);
  BOOST_REQUIRE_MESSAGE(rpc.is_ok(), rpc.status().to_string());
  c->rpc = std::move(rpc).value();
  auto server = pilaf::PilafServer::create(env, store);
  BOOST_REQUIRE_MESSAGE(server.is_ok(), server.status().to_string());
  c->pilaf = std::move(server).value();
  BOOST_REQUIRE(c->pilaf->attach(*c->rpc).is_ok());
  rpc::RpcServer* srv = c->rpc.get();
  BOOST_REQUIRE(c->runtime
                    ->spawn(c->server_node, "server0", ActorKind::kDaemon,
                            [srv, between_requests](Env& e) {
                              while (!e.stop_requested()) {
                                srv->serve_once(between_requests ? 0 : 5 * kMillisecond);
                                if (between_requests) between_requests();
                              }
                            })
                    .is_ok());
  return c;
}

void PilafCluster::add_client(const std::string& name, pilaf::ClientOptions options,
                              std::function<void(pilaf::PilafClient&, Env&)> body) {
  auto node = runtime->add_node({name, false});
  BOOST_REQUIRE(node.is_ok());
  const NodeId server = server_node;
  BOOST_REQUIRE(runtime
                    ->spawn(*node, name, ActorKind::kWorker,
                            [this, name, server, options, body](Env& env) {
                              Endpoint ep(env);
                              auto rpc = rpc::RpcClient::create(ep);
                              if (!rpc.is_ok()) return fail(name + ": " + rpc.status().to_string());
                              auto client = pilaf::PilafClient::connect(ep, **rpc, server, options);
                              if (!client.is_ok()) {
                                return fail(name + ": " + client.status().to_string());
                              }
                              body(**client, env);
                            })
                    .is_ok());
}

}  // namespace locus::testing
