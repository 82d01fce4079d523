// A Nessie deployment on loopback for tests (tests/unit/nessie_*_test.cc):
// nodes, their layout RPC, the server threads of NessieSD and NessieHY,
// and client actors, built by hand as the driver builds them.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/index/nessie/client.h"
#include "core/index/nessie/driver.h"
#include "core/index/nessie/loader.h"
#include "core/index/nessie/node.h"
#include "core/index/nessie/node_store.h"
#include "core/index/nessie/requests.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/support/forwarding_transport.h"
#include "tests/support/rpc_server_node.h"

namespace locus::testing {

// Counts the WRITEs (and WRITE_WITH_IMMs) an endpoint posts to any of a
// set of peers: the request and response WRITEs between a client and its
// home node's server threads, which a co-located client's shortcut
// (nessie/requests.h, attach_local) must leave at zero.
class HomeWriteCounter final : public ForwardingTransport {
 public:
  HomeWriteCounter(Transport& inner, std::mutex& mu, const std::vector<NodeId>& peers, std::atomic<uint64_t>& count)
      : ForwardingTransport(inner), mu_(mu), peers_(peers), count_(count) {}
  Status post(std::span<const WorkRequest> batch) override {
    uint64_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const WorkRequest& w : batch) {
        if ((w.op == Opcode::kWrite || w.op == Opcode::kWriteWithImm) &&
            std::find(peers_.begin(), peers_.end(), w.remote.node) != peers_.end()) {
          ++n;
        }
      }
    }
    count_ += n;
    return inner_.post(batch);
  }

 private:
  std::mutex& mu_;
  const std::vector<NodeId>& peers_;
  std::atomic<uint64_t>& count_;
};

using nessie::ClientOptions;
using nessie::ClientStats;
using nessie::NessieClient;
using nessie::NessieConfig;

// Nessie nodes on a loopback runtime, each serving its layout RPC from a
// daemon actor, and client actors handed a connected NessieClient. With
// config.mode "server" or "hybrid" each node also has its request rings
// and server thread on a node of its own, as the driver deploys them.
// With `colocated` (run.clients_on_servers), client k has node k mod
// nodes's tables as its local ones and takes the local shortcuts.
struct NessieCluster {
  std::unique_ptr<Runtime> runtime;
  std::vector<NodeId> servers;
  std::vector<std::unique_ptr<rpc::RpcServer>> rpcs;
  std::vector<std::unique_ptr<nessie::NessieNode>> nodes;
  std::vector<std::unique_ptr<HomeWriteCounter>> counters;       // the server threads' (below), outlive them
  std::vector<std::unique_ptr<nessie::RequestServer>> requests;  // coupled modes
  std::vector<std::unique_ptr<nessie::NodeStore>> stores;        // coupled modes
  std::unique_ptr<nessie::Loader> loader;
  nessie::Geometry geometry;
  testing::FailureLog failures;
  std::mutex stats_mu;
  ClientStats stats;  // every client's, summed after it finishes
  bool colocated = false;
  uint32_t next_client = 0;
  // WRITEs between each client and its home node's server threads, both
  // ways (HomeWriteCounter), with, per node, its server threads' endpoints
  // and the clients whose home it is (guarded by peers_mu: clients are
  // added while others run).
  std::atomic<uint64_t> home_writes{0};
  std::mutex peers_mu;
  std::vector<std::vector<NodeId>> request_nodes;
  std::vector<std::vector<NodeId>> home_clients;

  NessieCluster(const NessieConfig& config, uint32_t node_count, uint32_t clients, uint32_t value_bytes,
                uint64_t records = 16) {
    runtime = loopback::make_loopback_runtime({});
    request_nodes.resize(node_count);
    home_clients.resize(node_count);
    std::string bad_key;
    auto g = nessie::make_geometry(config, node_count, records, clients, value_bytes, &bad_key);
    BOOST_REQUIRE_MESSAGE(g.is_ok(), bad_key << ": " << g.status().to_string());
    geometry = *g;
    for (uint32_t i = 0; i < node_count; ++i) {
      testing::RpcServerNode server = testing::add_rpc_server_node(*runtime, "server" + std::to_string(i));
      servers.push_back(server.id);
      auto node = nessie::NessieNode::create(server.env, i, geometry);
      BOOST_REQUIRE_MESSAGE(node.is_ok(), node.status().to_string());
      BOOST_REQUIRE((*node)->attach(*server.rpc).is_ok());
      rpcs.push_back(std::move(server.rpc));
      nodes.push_back(std::move(*node));
      if (geometry.coupled != 0) add_server_thread(i, config.max_migrate_depth, std::max(1u, config.server_threads));
    }
    loader = std::make_unique<nessie::Loader>(nodes);
  }

  // Node i's server threads (NessieSD, NessieHY), `threads` of them each
  // with an endpoint of its own and a share of the node's rings, as the
  // driver deploys them; they share the node's one store.
  void add_server_thread(uint32_t i, uint32_t max_migrate_depth, uint32_t threads = 1) {
    stores.push_back(std::make_unique<nessie::NodeStore>(*nodes.back(), max_migrate_depth));
    nessie::NodeStore* st = stores.back().get();
    std::vector<nessie::RequestServer*> mine;
    for (uint32_t t = 0; t < threads; ++t) {
      const std::string name = "server" + std::to_string(i) + ".requests" + std::to_string(t);
      auto id = runtime->add_node({name, true});
      BOOST_REQUIRE(id.is_ok());
      request_nodes[i].push_back(*id);
      const nessie::RingShare share = nessie::ring_share(geometry.rings, threads, t);
      auto req = nessie::RequestServer::create(runtime->setup_env(*id), geometry, share.first, share.count);
      BOOST_REQUIRE_MESSAGE(req.is_ok(), req.status().to_string());
      nessie::RequestServer* r = req->get();
      mine.push_back(r);
      const std::vector<NodeId>* clients = &home_clients[i];
      BOOST_REQUIRE(runtime
                        ->spawn(*id, name, ActorKind::kDaemon,
                                [this, r, st, clients](Env& e) {
                                  // Kept by the cluster: the server thread keeps using it until destroyed.
                                  auto counted =
                                      std::make_unique<HomeWriteCounter>(*e.transport, peers_mu, *clients, home_writes);
                                  Env env = e;
                                  env.transport = counted.get();
                                  {
                                    std::lock_guard<std::mutex> lock(peers_mu);
                                    counters.push_back(std::move(counted));
                                  }
                                  r->serve(env, *st);
                                })
                        .is_ok());
      requests.push_back(std::move(*req));
    }
    nodes.back()->set_requests(std::move(mine));
  }

  // The server threads' figures, summed over the nodes.
  nessie::StoreStats store_stats() const {
    nessie::StoreStats t;
    for (const auto& s : stores) {
      t.gets += s->stats().gets;
      t.puts += s->stats().puts;
      t.deletes += s->stats().deletes;
      t.migrations += s->stats().migrations;
      t.full += s->stats().full;
      t.dte_waits += s->stats().dte_waits;
      t.reused += s->stats().reused;
    }
    return t;
  }

  void load(const std::string& key, const std::string& value) {
    Status s = loader->insert(key, value);
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  }

  // `before_connect` (if given) runs in the client's actor before it
  // connects: a client that must connect only after another has ended.
  void add_client(const std::string& name, ClientOptions options, std::function<void(NessieClient&, Env&)> body,
                  std::function<void()> before_connect = {}) {
    auto node = runtime->add_node({name, false});
    BOOST_REQUIRE(node.is_ok());
    const uint32_t home = next_client++ % static_cast<uint32_t>(nodes.size());
    const bool local = colocated;
    const nessie::LocalTables tables{home, nodes[home]->ite(0), nodes[home]->dte(0), nodes[home]->requests()};
    {
      std::lock_guard<std::mutex> lock(peers_mu);
      home_clients[home].push_back(*node);
    }
    const std::vector<NodeId>* home_requests = &request_nodes[home];
    BOOST_REQUIRE(runtime
                      ->spawn(*node, name, ActorKind::kWorker,
                              [this, name, options, body, local, tables, home_requests, before_connect](Env& e) {
                                if (before_connect) before_connect();
                                HomeWriteCounter counted(*e.transport, peers_mu, *home_requests, home_writes);
                                Env env = e;
                                env.transport = &counted;
                                Endpoint ep(env);
                                auto rpc = rpc::RpcClient::create(ep);
                                if (!rpc.is_ok()) return failures.fail(name + ": " + rpc.status().to_string());
                                auto client =
                                    NessieClient::connect(ep, **rpc, servers, options, local ? &tables : nullptr);
                                if (!client.is_ok()) return failures.fail(name + ": " + client.status().to_string());
                                body(**client, env);
                                std::lock_guard<std::mutex> lock(stats_mu);
                                stats += (*client)->stats();
                              })
                      .is_ok());
  }

  void run() {
    Status s = runtime->run();
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());
  }
};

// Small tables: `entries` index entries per node, short expiry so that
// data entries are reclaimed within the test.
inline NessieConfig small_config(uint64_t entries) {
  NessieConfig c;
  c.index_entries = entries;
  c.key_bytes = 16;
  c.expiry_ms = 5;
  c.client_data_entries = 256;
  return c;
}

inline std::string key_of(uint64_t i) { return "key" + std::to_string(i); }

}  // namespace locus::testing
