// Nessie's driver: one Nessie node, with its index table and data table,
// per server machine; each client a NessieSession whose NessieClient
// reaches every node's tables with one-sided verbs (client mode) or sends
// requests to the nodes' server threads (NessieSD, and NessieHY's puts
// and deletes), whose endpoints sit beside the tables' (requests.h).
// The paper runs client workers on every node beside its tables: with
// run.clients_on_servers the runner places each client on a node's
// machine and, the node being in this process, the client takes the local
// shortcuts to its tables (client.h), and its requests to that node
// (NessieSD, NessieHY) go by CPU stores (requests.h); else clients are endpoints of their
// own and reach every table by RDMA. Either way a client's "local" data
// table is a slice of one node's data table (node.h).
#include "core/index/nessie/driver.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/check/models.h"
#include "core/design/index_driver.h"
#include "core/design/record_loader.h"
#include "core/index/nessie/client.h"
#include "core/index/nessie/config.h"
#include "core/index/nessie/loader.h"
#include "core/index/nessie/node.h"
#include "core/index/nessie/node_store.h"
#include "core/index/nessie/requests.h"
#include "core/index/nessie/session.h"
#include "core/workload/keys.h"

namespace locus::nessie {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

class NessieDriver final : public design::IndexDriver {
 public:
  // threads: NessieSD's and NessieHY's server threads per node (0 in
  // client mode), at most one per ring.
  NessieDriver(const NessieConfig& config, const Geometry& g, uint64_t records, uint32_t threads)
      : config_(config),
        g_(g),
        options_(client_options(config, records, g.nodes)),
        threads_(std::min(threads, g.rings)) {}

  // NessieSD and NessieHY: after the endpoint that keeps the layout RPC
  // and the tables, one endpoint per server thread, which takes every
  // completion there (requests.h) and serves its share of the rings.
  std::vector<design::EndpointSpec> server_endpoints() const override {
    std::vector<design::EndpointSpec> e{design::EndpointSpec{}};
    for (uint32_t t = 0; t < threads_; ++t) {
      e.push_back(design::EndpointSpec{threads_ == 1 ? ".requests" : ".requests" + std::to_string(t), false});
    }
    return e;
  }

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    const uint32_t per_node = 1 + threads_;
    if (endpoint % per_node != 0) {
      const uint32_t thread = endpoint % per_node - 1;
      if (nodes_.size() != endpoint / per_node + 1 ||
          requests_.size() != uint64_t{endpoint / per_node} * threads_ + thread) {
        return internal_error("nessie: a node's endpoints set up out of order");
      }
      const RingShare share = ring_share(g_.rings, threads_, thread);
      LOCUS_ASSIGN_OR_RETURN(auto requests, RequestServer::create(env, g_, share.first, share.count));
      requests_.push_back(std::move(requests));
      if (thread + 1 == threads_) {
        std::vector<RequestServer*> mine;
        for (uint32_t t = 0; t < threads_; ++t) mine.push_back(requests_[requests_.size() - threads_ + t].get());
        nodes_.back()->set_requests(std::move(mine));
        stores_.push_back(std::make_unique<NodeStore>(*nodes_.back(), config_.max_migrate_depth));
      }
      return Status();
    }
    const uint32_t dti = endpoint / per_node;
    LOCUS_ASSIGN_OR_RETURN(auto node, NessieNode::create(env, dti, g_));
    LOCUS_RETURN_IF_ERROR(node->attach(rpc));
    nodes_.push_back(std::move(node));
    return Status();
  }

  std::vector<design::DaemonSpec> server_daemons(uint32_t endpoint) override {
    const uint32_t per_node = 1 + threads_;
    if (endpoint % per_node == 0) return {};
    const uint32_t node = endpoint / per_node;
    const uint32_t thread = endpoint % per_node - 1;
    const size_t k = size_t{node} * threads_ + thread;
    // The paper's server workers poll their request regions (section 5):
    // a core each, busy whether or not requests come.
    std::string name = "server" + std::to_string(node) + ".nessie";
    if (threads_ > 1) name += std::to_string(thread);
    return {design::DaemonSpec{std::move(name), false,
                               [this, node, k](Env& env) { requests_[k]->serve(env, *stores_[node]); }, true}};
  }

  // Serial: a record's cuckoo walk may cross every node's index table.
  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    if (nodes_.size() != g_.nodes) return internal_error("nessie load: not every node is set up");
    loader_ = std::make_unique<Loader>(nodes_);
    return design::load_records(
        spec, rng, [this](std::string_view key, std::string_view value) { return loader_->insert(key, value); });
  }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    return open(ep, rpc, servers, nullptr);
  }
  // The node of `machine` is this process's when the servers are placed
  // here (its tables in memory beside the client): the local shortcuts.
  StatusOr<std::unique_ptr<design::ClientSession>> connect_on_server(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                                     std::span<const NodeId> servers,
                                                                     uint32_t machine) override {
    if (machine >= nodes_.size()) return open(ep, rpc, servers, nullptr);
    LocalTables local{machine, nodes_[machine]->ite(0), nodes_[machine]->dte(0), nodes_[machine]->requests()};
    return open(ep, rpc, servers, &local);
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    double slices = 0;
    for (const auto& n : nodes_) slices += std::min(n->slices_granted(), g_.slices);
    extra["nessie.loaded_records"] = loader_ ? static_cast<double>(loader_->stats().records) : 0;
    extra["nessie.load_kicks"] = loader_ ? static_cast<double>(loader_->stats().kicks) : 0;
    extra["nessie.slices_granted"] = slices;
    if (g_.coupled == 0) return;
    StoreStats st;
    RequestServerStats rs;
    for (const auto& s : stores_) {
      st.migrations += s->stats().migrations;
      st.full += s->stats().full;
      st.dte_waits += s->stats().dte_waits;
    }
    for (const auto& r : requests_) {
      rs.requests += r->stats().requests;
      rs.bad_requests += r->stats().bad_requests;
      rs.dropped_rings += r->stats().dropped_rings;
      rs.stray_notifications += r->stats().stray_notifications;
      rs.resets += r->stats().resets;
      rs.local_responses += r->stats().local_responses;
    }
    extra["nessie.server_requests"] = static_cast<double>(rs.requests);
    extra["nessie.server_bad_requests"] = static_cast<double>(rs.bad_requests);
    extra["nessie.server_dropped_rings"] = static_cast<double>(rs.dropped_rings);
    extra["nessie.server_stray_notifications"] = static_cast<double>(rs.stray_notifications);
    extra["nessie.server_ring_resets"] = static_cast<double>(rs.resets);
    extra["nessie.server_local_responses"] = static_cast<double>(rs.local_responses);
    extra["nessie.server_migrations"] = static_cast<double>(st.migrations);
    extra["nessie.server_full"] = static_cast<double>(st.full);
    extra["nessie.server_dte_waits"] = static_cast<double>(st.dte_waits);
  }

  // Per node: the index table and the data table.
  design::MemoryEstimate server_memory() const override {
    using design::saturating_add;
    using design::saturating_mul;
    // Coupled modes: each client's request ring and a response's staging.
    const uint64_t rings = saturating_mul(g_.rings, uint64_t{g_.ring_bytes} * 2);
    const uint64_t per_node = saturating_add(
        saturating_add(saturating_mul(g_.index_entries, 8), saturating_mul(g_.data_entries, g_.dte_bytes())), rings);
    return {saturating_mul(g_.nodes, per_node),
            "index.load_factor (or index.index_entries), workload.recordcount, run.clients x "
            "index.client_data_entries and index.key_bytes + index.value_bytes"};
  }
  design::MemoryEstimate client_memory() const override {
    return {uint64_t{g_.dte_bytes()} + (uint64_t{config_.max_migrate_depth} + 2) * g_.meta_bytes() +
                uint64_t{g_.slice_entries} * 5 +
                uint64_t{options_.cache_entries} * (uint64_t{g_.key_bytes} + g_.value_bytes + 64) +
                uint64_t{g_.nodes} * g_.ring_bytes * g_.coupled,
            "index.key_bytes + index.value_bytes, index.client_data_entries and index.cache_fraction"};
  }

  Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const override {
    return design::loaded_puts(spec, rng, out);
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::KvModel(), history, options);
  }

 private:
  StatusOr<std::unique_ptr<design::ClientSession>> open(Endpoint& ep, rpc::RpcClient& rpc,
                                                        std::span<const NodeId> servers, const LocalTables* local) {
    // The tables' endpoints: the first of each node's, its server threads' after it.
    std::vector<NodeId> tables;
    for (size_t i = 0; i < servers.size(); i += 1 + threads_) tables.push_back(servers[i]);
    LOCUS_ASSIGN_OR_RETURN(auto client, NessieClient::connect(ep, rpc, tables, options_, local));
    return std::unique_ptr<design::ClientSession>(new NessieSession(std::move(client)));
  }

  NessieConfig config_;
  Geometry g_;
  ClientOptions options_;
  std::vector<std::unique_ptr<NessieNode>> nodes_;
  uint32_t threads_;
  std::vector<std::unique_ptr<RequestServer>> requests_;  // coupled modes: per node, threads_ each
  std::vector<std::unique_ptr<NodeStore>> stores_;        // coupled modes: per node, shared by its threads
  std::unique_ptr<Loader> loader_;
};

}  // namespace

ClientOptions client_options(const NessieConfig& c, uint64_t records, uint32_t nodes) {
  ClientOptions o;
  const double entries =
      std::ceil(c.cache_fraction * static_cast<double>(records) / static_cast<double>(std::max<uint32_t>(nodes, 1)));
  o.cache_entries = static_cast<uint32_t>(std::min(entries, static_cast<double>(UINT32_MAX)));
  o.max_migrate_depth = c.max_migrate_depth;
  o.max_attempts = c.max_attempts;
  o.backoff_base_ns = static_cast<Nanos>(c.backoff_base_us * 1e3);
  o.backoff_max_ns = static_cast<Nanos>(c.backoff_max_us * 1e3);
  o.multiple_reads = c.multiple_reads;
  o.mode = c.mode == "server" ? Mode::kServer : c.mode == "hybrid" ? Mode::kHybrid : Mode::kClient;
  return o;
}

StatusOr<Geometry> make_geometry(const NessieConfig& c, uint32_t nodes, uint64_t records, uint32_t clients,
                                 uint32_t value_bytes, std::string* bad_key) {
  if (nodes == 0) {
    *bad_key = "platform.servers";
    return invalid_argument("nessie needs at least one node");
  }
  // A bound far beyond any machine's memory (2^48 ITEs are 2 PiB), so that
  // global entry numbers (hash_key) cannot overflow.
  constexpr uint64_t kMaxGlobalEntries = uint64_t{1} << 48;
  const double wanted = c.index_entries != 0 ? static_cast<double>(c.index_entries)
                                             : std::ceil(static_cast<double>(records) / c.load_factor / nodes);
  if (wanted * nodes > static_cast<double>(kMaxGlobalEntries)) {
    *bad_key = c.index_entries != 0 ? "index.index_entries" : "index.load_factor";
    return invalid_argument("the index tables would hold more than 2^48 entries in all");
  }
  Geometry g;
  g.nodes = nodes;
  g.ways = c.ways;
  g.filter_bits = c.filter_bits;
  g.index_entries = std::max<uint64_t>(1, static_cast<uint64_t>(wanted));
  g.load_entries = ceil_div(records, nodes);
  g.slices = static_cast<uint32_t>(ceil_div(clients, nodes));
  g.slice_entries = c.client_data_entries;
  if (c.mode != "client") {
    // Coupled tables: a record's DTE is on its key's owner, so a node
    // loads a binomial share of the records: its mean plus six standard
    // deviations (and a few entries) holds it but with odds far below
    // one in a million.
    const double mean = static_cast<double>(records) / nodes;
    g.load_entries = static_cast<uint64_t>(std::ceil(mean + 6 * std::sqrt(mean) + 16));
    g.coupled = 1;
    g.rings = clients;
    // Every client may put to any node (its keys' owners): each node keeps
    // index.client_data_entries for every client, not for its share.
    g.slices = clients;
    g.ring_bytes = ring_bytes_for(c.key_bytes, value_bytes);
  }
  g.data_entries = g.slice_first(g.slices);
  g.dti_bits = bits_for(nodes);
  g.dte_bits = std::max<uint32_t>(1, bits_for(g.data_entries));
  g.key_bytes = c.key_bytes;
  g.value_bytes = value_bytes;
  g.expiry_ns = static_cast<uint64_t>(c.expiry_ms * 1e6);
  g.clock_skew_ns = static_cast<uint64_t>(c.clock_skew_us * 1e3);
  if (g.dte_bits + g.dti_bits + g.filter_bits > kIteFieldBits) {
    *bad_key = "index.filter_bits";
    return invalid_argument(std::to_string(g.filter_bits) + " filter bits, " + std::to_string(g.dti_bits) +
                            " node bits and " + std::to_string(g.dte_bits) +
                            " data-entry bits do not fit the 62 bits of an index entry");
  }
  if (g.expiry_ns <= g.clock_skew_ns) {
    *bad_key = "index.clock_skew_us";
    return invalid_argument("must be below index.expiry_ms");
  }
  if (!geometry_ok(g)) {
    *bad_key = "index";
    return invalid_argument("the tables' sizes are inconsistent");
  }
  return g;
}

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const NessieConfig& config = *s.index.get<NessieConfig>();
  if (s.workload.scanproportion > 0) {
    return scenario::setting_error(s, "workload.scanproportion", "nessie is a hash table and cannot scan");
  }
  const uint64_t record_bytes = uint64_t{s.workload.fieldcount} * s.workload.fieldlength;
  const uint32_t value_bytes = config.value_bytes != 0 ? config.value_bytes : static_cast<uint32_t>(record_bytes);
  if (record_bytes > value_bytes) {
    return scenario::setting_error(
        s, "index.value_bytes",
        "records of " + std::to_string(record_bytes) + " bytes (workload.fieldcount x fieldlength) do not fit");
  }
  if (workload::max_key_bytes(s.workload.zeropadding) > config.key_bytes) {
    return scenario::setting_error(s, "index.key_bytes", "the workload's keys are longer");
  }
  std::string bad_key;
  // Every client process takes a data-table slice of its own, a restarted
  // one too (faults.restart_after_ms): the dead process's entries may
  // still be named by index entries, so its slice is never handed on.
  const uint32_t processes = s.run.clients + (s.faults.restart_after_ns > 0 ? s.faults.crash_clients : 0);
  auto g = make_geometry(config, s.platform.servers, s.workload.recordcount, processes, value_bytes, &bad_key);
  if (!g.is_ok()) return scenario::setting_error(s, bad_key, g.status().message());
  // A put takes a data entry of the putting client's slice (of the key's
  // owner's, in the server-driven modes), and its value stays there until
  // another put replaces it (section 4.2.5): once a run has rewritten the
  // keys, the slices hold every record's current value between them. With
  // fewer entries than records the puts run out of entries partway through
  // a run and fail after index.max_attempts (the energy sweep's 3 clients
  // of 256 entries each over 3,000 records did, 55 ms in).
  const auto& wl = s.workload;
  if (wl.updateproportion + wl.insertproportion + wl.readmodifywriteproportion > 0) {
    const uint64_t holders = uint64_t{processes} * (g->coupled ? s.platform.servers : 1);
    if (holders * config.client_data_entries < wl.recordcount) {
      return scenario::setting_error(
          s, "index.client_data_entries",
          std::to_string(config.client_data_entries) + " entries a slice x " + std::to_string(holders) +
              " slices cannot hold the values of workload.recordcount (" + std::to_string(wl.recordcount) +
              ") records once puts have rewritten them (a value stays in the entry of the client that put it): "
              "at least " + std::to_string((wl.recordcount + holders - 1) / holders) +
              ", plus what a client puts within index.expiry_ms");
    }
  }
  // The testbed's tuning (config.h) unless the scenario says.
  uint32_t threads = 0;
  if (config.mode != "client")
    threads = config.server_threads != 0 ? config.server_threads : value_bytes < 1024 ? 3 : 2;
  return std::unique_ptr<design::IndexDriver>(new NessieDriver(config, *g, s.workload.recordcount, threads));
}

}  // namespace locus::nessie
