// Catfish's driver: one CatfishServer per server machine with a messaging
// worker per core, each on an endpoint of its own on that machine
// (server_endpoints; they share its cores and NIC), the tree's region,
// which offloading clients READ, on the first. One server machine
// (platform.servers = 1). Each worker is a daemon actor on its endpoint;
// the runner starts no RPC workers there (they would take the endpoints'
// completions). Clients in this process connect to the server directly;
// clients in another (verbs: `locus run` against `locus serve`) through
// the connect RPC on an extra endpoint. The tree is loaded with index.rectangles data
// rectangles before the run; each client is a CatfishSession
// (session.h) with the scenario's selector ("static" is Catfish's
// own, the back-off selector with [selector.backoff]'s N, T and Inv; Inv
// is also the server's heartbeat period).
//
// YCSB operations become spatial ones, as catfish_session.h says: reads
// (and scans) search with a query rectangle of index.query_scale at the
// key's place, inserts and updates insert a data-sized rectangle there. So
// the workload's requestdistribution decides the spatial skew (zipfian:
// hot places; uniform: the paper's uniform placement), and
// readproportion = 0.9 / insertproportion = 0.1 gives 10% inserts. The
// paper's own skew rule is in its evaluation section, which is withheld
// from shared/papers/, so this keyed placement stands in for it.
#include <atomic>
#include <string>

#include "core/check/models.h"
#include "core/design/index_driver.h"
#include "core/index/catfish/catfish_client.h"
#include "core/index/catfish/catfish_server.h"
#include "core/index/catfish/config.h"
#include "core/index/catfish/load.h"
#include "core/messaging/messaging_server_internal.h"
#include "core/index/catfish/session.h"
#include "core/workload/spatial.h"

namespace locus::catfish {
namespace {

Nanos us_to_ns(double us) { return static_cast<Nanos>(us * 1e3 + 0.5); }

class CatfishDriver final : public design::IndexDriver {
 public:
  CatfishDriver(const scenario::Scenario& s, const CatfishConfig& x, const design::Placement& placement)
      : x_(x), seed_(s.run.seed), cores_(s.platform.cores_per_server), placement_(placement) {
    selector_ = s.selector.config;
    if (s.selector.type == "static") selector_.kind = selector::SelectorKind::kBackoff;
    server_options_.store = loaded_store_options(x);
    MessagingServerOptions& m = server_options_.messaging;
    m.mode = x.server_mode == "polling" ? ServerMode::kPolling : ServerMode::kEvent;
    m.connections_per_worker = s.run.clients / s.platform.cores_per_server + 4;
    m.max_response_bytes = kMaxResponseBytes;
    m.heartbeat_interval_ns = selector_.backoff.interval_ns;
    server_options_.result_ns = us_to_ns(x.server_result_us);
    client_options_.messaging.max_response_bytes = kMaxResponseBytes;
    client_options_.offload.max_batch = x.multi_issue ? kMaxReadsPerBatch : 1;
  }

  // A messaging worker per core, each with its own queue pairs; when the
  // servers and the clients are in different processes, the connect RPC
  // too, on an endpoint of its own (the workers take every completion of
  // theirs). Both sides must count it, or a client's servers().back() is a
  // worker.
  std::vector<design::EndpointSpec> server_endpoints() const override {
    std::vector<design::EndpointSpec> out;
    for (uint32_t w = 0; w < cores_; ++w) out.push_back({w == 0 ? "" : "." + std::to_string(w), false});
    if (!placement_.servers_here || !placement_.clients_here) out.push_back({".connect", true});
    return out;
  }

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    if (endpoint < cores_) {
      worker_envs_.push_back(env);
    } else {
      connect_rpc_ = &rpc;
    }
    return Status();
  }

  // Rectangles of the run's seed (load.h), the same on every backend.
  Status load(const workload::WorkloadSpec&, Random&) override {
    LOCUS_ASSIGN_OR_RETURN(server_, CatfishServer::create(worker_envs_, server_options_));
    for (uint64_t id = 0; id < x_.rectangles; ++id) {
      LOCUS_RETURN_IF_ERROR(server_->load(loaded_rectangle(seed_, id), id));
    }
    if (connect_rpc_ != nullptr) LOCUS_RETURN_IF_ERROR(server_->serve_connects(*connect_rpc_));
    return Status();
  }

  // [check]: the loaded rectangles as inserts before the run; a set of
  // rectangles by id as the model.
  Status loaded_history(const workload::WorkloadSpec&, Random, check::History* out) const override {
    for (uint64_t id = 0; id < x_.rectangles; ++id) {
      out->push_back(rect_operation(check::OpKind::kInsert, loaded_rectangle(seed_, id), id));
      out->back().outcome = check::Outcome::kOk;
      out->back().invoke_ns = -2;  // before the run's clock starts
      out->back().response_ns = -1;
    }
    return Status();
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::RectSetModel(), history, options);
  }

  // In this process, straight to the server; else through its connect RPC
  // (the last endpoint).
  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(selector_, *env.random));
    std::unique_ptr<CatfishClient> client;
    if (server_ != nullptr) {
      LOCUS_ASSIGN_OR_RETURN(client, CatfishClient::connect(ep, *server_, *sel, client_options_));
    } else {
      LOCUS_ASSIGN_OR_RETURN(client, CatfishClient::connect(ep, rpc, servers.back(), *sel, client_options_));
    }
    // Ids of inserted rectangles: above the loaded ones, 2^32 per client.
    const uint64_t first_id = (next_client_.fetch_add(1) + 1) << 32;
    return std::unique_ptr<design::ClientSession>(
        new CatfishSession(std::move(sel), std::move(client), x_.scale(), first_id, *env.random));
  }

  std::vector<design::DaemonSpec> server_daemons(uint32_t endpoint) override {
    if (endpoint >= cores_) return {};
    CatfishServer* srv = server_.get();
    return {design::DaemonSpec{"server" + std::to_string(endpoint) + ".catfish", false,
                               [srv, endpoint](Env& env) { srv->serve(endpoint, env); }}};
  }

  // As the store and the messaging server allocate them: the tree's node
  // slots (and a free-list entry each), and per messaging worker a request
  // ring for each of its connections and its response and send buffers.
  // Not counted: the outbox of a connection whose client stops consuming
  // (up to max_response_bytes, taken only then).
  design::MemoryEstimate server_memory() const override {
    using design::saturating_add;
    using design::saturating_mul;
    const StoreOptions& st = server_options_.store;
    const MessagingServerOptions& m = server_options_.messaging;
    const uint64_t tree = saturating_mul(st.geometry.node_slots, uint64_t{st.geometry.node_bytes} + sizeof(uint32_t));
    const uint64_t rings = saturating_mul(saturating_mul(cores_, m.connections_per_worker),
                                          uint64_t{m.request_ring_bytes} + kControlBytes);
    const uint64_t worker = message_bytes(m.max_response_bytes) +
                            uint64_t{kMaxSendsInFlight} * (16 + message_bytes(m.segment_bytes));
    return {saturating_add(saturating_add(tree, rings), saturating_mul(cores_, worker)),
            "index.rectangles (the tree), and run.clients (a request ring of " + std::to_string(m.request_ring_bytes) +
                " bytes each)"};
  }
  // Its response ring and reassembly buffer, its request staging and its
  // offloading READ buffer (a line and kMaxReadsPerBatch nodes).
  design::MemoryEstimate client_memory() const override {
    const MessagingClientOptions& m = client_options_.messaging;
    return {uint64_t{m.response_ring_bytes} + kControlBytes + m.max_response_bytes + message_bytes(m.max_request_bytes) +
                kLineBytes + uint64_t{kMaxReadsPerBatch} * kMaxNodeBytes,
            "run.clients"};
  }

  void report_mechanism(const metrics::OpStats& clients, std::map<std::string, double>& extra) const override {
    // Per offloaded search (fallbacks included): node READs, and the
    // rounds of READs issued together (multi-issue).
    design::add_ratio(extra, "catfish.reads_per_offloaded_search", clients, "catfish.node_reads",
                      "catfish.client_searches");
    design::add_ratio(extra, "catfish.rounds_per_offloaded_search", clients, "catfish.read_batches",
                      "catfish.client_searches");
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    const StoreStats st = server_->store_stats();
    const CatfishServerStats cs = server_->stats();
    const MessagingServerStats ms = server_->messaging().stats();
    extra["catfish.rectangles"] = static_cast<double>(st.rectangles);
    extra["catfish.height"] = st.height;
    extra["catfish.server_searches"] = static_cast<double>(cs.searches);
    extra["catfish.server_inserts"] = static_cast<double>(cs.inserts);
    extra["catfish.hits_per_server_search"] =
        cs.searches == 0 ? 0.0 : static_cast<double>(cs.hits_returned) / static_cast<double>(cs.searches);
    extra["catfish.heartbeats"] = static_cast<double>(ms.heartbeats);
    extra["catfish.dropped_connections"] = static_cast<double>(ms.dropped_connections + ms.malformed);
    if (connect_rpc_ != nullptr) {
      extra["catfish.connects"] = static_cast<double>(cs.connects);
      extra["catfish.connects_refused"] = static_cast<double>(cs.connects_refused);
    }
  }

 private:
  static constexpr uint32_t kMaxResponseBytes = 256 * 1024;  // 6,500 hits; a 1e-2 query at 2 M finds ~50

  CatfishConfig x_;
  uint64_t seed_;
  uint32_t cores_;
  design::Placement placement_;
  selector::SelectorConfig selector_;
  CatfishServerOptions server_options_;
  CatfishClientOptions client_options_;
  std::vector<Env> worker_envs_;  // one per messaging worker
  rpc::RpcServer* connect_rpc_ = nullptr;
  std::unique_ptr<CatfishServer> server_;
  std::atomic<uint64_t> next_client_{0};
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s,
                                                           const design::Placement& placement) {
  if (s.platform.servers != 1) {
    return scenario::setting_error(s, "platform.servers",
                                   "catfish runs one R-tree server (give it cores with platform.cores_per_server: "
                                   "one messaging worker each)");
  }
  return std::unique_ptr<design::IndexDriver>(new CatfishDriver(s, *s.index.get<CatfishConfig>(), placement));
}

}  // namespace locus::catfish
