// IndexDriver: what the scenario runner needs from an index: set its
// servers up (handlers, load, daemon actors beside them), and open a client
// session (client_session.h) that turns YCSB operations into the index's
// own calls. One implementation per index (pilaf_driver.cc,
// micro_driver.cc, cell_driver.cc, catfish_driver.cc); the runner stays
// index-agnostic.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/harness/client_session.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/scenario/scenario.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {

// A daemon actor a server needs besides its RPC workers (Cell's split
// worker). With own_node it runs on an endpoint of its own (so its RPC
// client does not share the server's receive queue) on the server's
// machine: its CPU time, NIC and link use count against that server, as
// where the serving process runs it.
struct DaemonSpec {
  std::string name;
  bool own_node = false;
  std::function<void(Env&)> body;  // must return soon after env.stop_requested()
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
  // Daemons for server `index`, spawned after load() and the clients.
  virtual std::vector<DaemonSpec> server_daemons(uint32_t index) {
    (void)index;
    return {};
  }
  // True while the servers must go on serving after stop was requested
  // (a daemon is mid-way through work that needs them).
  virtual bool keep_serving() const { return false; }
  // False for an index whose server daemons serve its clients over their
  // own transport (Catfish's messaging workers): the runner then starts no
  // RPC worker actors, which would take the node's completions.
  virtual bool uses_rpc_workers() const { return true; }
  // Endpoints per server machine: more than one for an index whose server
  // runs a worker per core, each with its own queue pairs (Catfish). They
  // share the machine's cores and NIC; setup_server and server_daemons
  // then number endpoints, not machines.
  virtual uint32_t endpoints_per_server() const { return 1; }
  // The RPC message limit (header included) of servers and clients, so
  // each receive buffer holds the largest request or response. Every
  // server posts up to a thousand of them, which a large platform pays
  // for in memory: an index that knows its messages' size says so.
  virtual uint32_t rpc_message_bytes(const scenario::IndexSpec& index) const {
    return default_rpc_message_bytes(index);
  }

  // A limit that holds a record of max_kv_bytes with room for an index's
  // own fields, and at least a page.
  static uint32_t default_rpc_message_bytes(const scenario::IndexSpec& index) {
    return std::max<uint32_t>(4096, index.max_kv_bytes + 1024);
  }
};

StatusOr<std::unique_ptr<IndexDriver>> make_pilaf_driver(const scenario::Scenario& s);
StatusOr<std::unique_ptr<IndexDriver>> make_micro_driver(const scenario::Scenario& s);
StatusOr<std::unique_ptr<IndexDriver>> make_cell_driver(const scenario::Scenario& s);
StatusOr<std::unique_ptr<IndexDriver>> make_catfish_driver(const scenario::Scenario& s);

}  // namespace locus::harness
