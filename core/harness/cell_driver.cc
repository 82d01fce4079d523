// Cell under the scenario runner: one CellServer per server node, attached
// to the runner's RpcServer (so a server uses as many cores as the
// platform gives it: the SimGrid actors never interleave inside a point
// handler, only at its CPU charge), a split worker beside each server (a
// daemon on a node of its own), and each client a CellSession
// (cell_session.h) with the scenario's selector. Records are loaded into
// the servers' memory before the run, meganode splits included, so the run
// starts from a spread tree.
//
// [selector] type "static" means Cell's own selector, JSQ with the
// paper's constants; any other type is used as configured.
#include <algorithm>
#include <bit>
#include <string>

#include "core/harness/cell_bench.h"
#include "core/harness/cell_session.h"
#include "core/harness/index_driver.h"
#include "core/harness/load_gate.h"
#include "core/index/cell/caller.h"
#include "core/index/cell/client.h"
#include "core/index/cell/server.h"
#include "core/index/cell/split_worker.h"
#include "core/memory/extent.h"

namespace locus::harness {
namespace {

constexpr int kMaxDrainDepth = 2 * cell::kMaxLevels;
constexpr uint32_t kMaxLoadAttempts = 1u << 16;

Nanos us_to_ns(double us) { return static_cast<Nanos>(us * 1e3 + 0.5); }

class CellDriver final : public IndexDriver {
 public:
  CellDriver(const scenario::Scenario& s, const CellBenchConfig& config) : config_(config) {
    selector_ = s.selector.type == "static" ? selector::SelectorConfig{} : s.selector.config;
    layout_.geometry = config.server.store.geometry;
    layout_.max_kv_bytes = config.server.store.max_kv_bytes;
    direct_ = std::make_unique<cell::DirectCaller>(config.server.max_message_bytes);
  }

  Status setup_server(uint32_t index, Env env, rpc::RpcServer& rpc) override {
    if (index == 0) setup_env_ = env;
    gates_.push_back(std::make_unique<LoadGate>(env));
    LOCUS_ASSIGN_OR_RETURN(auto server,
                           cell::CellServer::create(gates_.back()->env(), static_cast<cell::CellRegionId>(2 * index), config_.server));
    LOCUS_RETURN_IF_ERROR(server->attach(rpc));
    layout_.regions.push_back(server->node_region());
    layout_.regions.push_back(server->extent_region());
    direct_->add(server.get());
    servers_.push_back(std::move(server));
    return Status();
  }

  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    for (auto& s : servers_) s->set_layout(layout_);
    LOCUS_RETURN_IF_ERROR(servers_.front()->store().init_tree());
    LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(spec));
    std::string key(loader.max_key_bytes(), '\0');
    std::string value(loader.max_value_bytes(), '\0');
    for (uint64_t n = spec.insertstart; n < spec.insertstart + spec.effective_insertcount(); ++n) {
      const size_t kl = loader.build_key(n, key.data(), key.size());
      const size_t vl = loader.build_record(rng, n, value.data(), value.size());
      LOCUS_RETURN_IF_ERROR(put_direct(std::string_view(key.data(), kl), std::string_view(value.data(), vl)));
    }
    loaded_splits_ = load_splits_;
    for (auto& gate : gates_) gate->open();
    return Status();
  }

  StatusOr<std::unique_ptr<ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                   std::span<const NodeId> servers) override {
    LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(selector_, *env.random));
    LOCUS_ASSIGN_OR_RETURN(auto client, cell::CellClient::connect(ep, rpc, servers.front(), *sel, config_.client));
    return std::unique_ptr<ClientSession>(new CellSession(std::move(sel), std::move(client)));
  }

  std::vector<DaemonSpec> server_daemons(uint32_t index) override {
    cell::CellServer* server = servers_[index].get();
    cell::SplitWorkerShared* shared = &shared_;
    const cell::SplitDriverOptions split = config_.split;
    return {{"server" + std::to_string(index) + ".split", true,
             [server, shared, split](Env& env) { cell::run_split_worker(env, *server, split, *shared); }}};
  }

  bool keep_serving() const override { return shared_.in_flight.load(std::memory_order_seq_cst) > 0; }

  void report(std::map<std::string, double>& extra) const override {
    cell::StoreStats sum;
    for (const auto& s : servers_) {
      const cell::StoreStats st = s->store().stats();
      sum.keys += st.keys;
      sum.node_splits += st.node_splits;
      sum.meganodes_in_use += st.meganodes_in_use;
      sum.busy_replies += st.busy_replies;
    }
    extra["cell.keys"] = static_cast<double>(sum.keys);
    extra["cell.meganodes"] = static_cast<double>(sum.meganodes_in_use);
    extra["cell.node_splits"] = static_cast<double>(sum.node_splits);
    extra["cell.busy_replies"] = static_cast<double>(sum.busy_replies);
    extra["cell.meganode_splits_load"] = static_cast<double>(loaded_splits_);
    extra["cell.meganode_splits_run"] = static_cast<double>(shared_.splits.load());
    extra["cell.split_failures"] = static_cast<double>(shared_.failures.load());
    extra["cell.root_level"] = servers_.front()->store().root_level();
  }

 private:
  // Set-up only: one put run to completion in place, with its splits.
  Status put_direct(std::string_view key, std::string_view value) {
    uint64_t start = cell::kNullPtr;
    for (uint32_t attempt = 0; attempt < kMaxLoadAttempts; ++attempt) {
      rpc::Writer w(direct_->payload_buffer());
      cell::OpRequest q;
      q.op = cell::OpKind::kPut;
      q.start = start;
      q.key = key;
      q.value = value;
      cell::encode_op_request(q, w);
      if (!w.ok()) return invalid_argument("cell: record exceeds one message");
      LOCUS_ASSIGN_OR_RETURN(auto body, direct_->call(layout_.server_of(start), cell::kOp, w.size()));
      rpc::Reader r(body);
      cell::OpResponse resp;
      if (!cell::decode_op_response(r, &resp)) return corruption("cell: malformed response");
      switch (resp.outcome) {
        case cell::Outcome::kDone: return drain_splits(0);
        case cell::Outcome::kRedirect: start = resp.next; break;
        case cell::Outcome::kRestart: start = cell::kNullPtr; break;
        case cell::Outcome::kBusy: LOCUS_RETURN_IF_ERROR(drain_splits(0)); break;
      }
    }
    return internal_error("cell load: no progress on a put");
  }

  // Runs every queued meganode split in place; nested through a busy parent.
  Status drain_splits(int depth) {
    if (depth > kMaxDrainDepth) return internal_error("cell load: split chain deeper than the tree");
    for (auto& server : servers_) {
      uint32_t meganode = 0;
      while (server->try_take_split(&meganode)) {
        cell::SplitDriver driver(*direct_, layout_, server->node_id(), config_.split, *setup_env_.random,
                                 *setup_env_.clock, [this, depth](Nanos d) {
                                   if (!drain_splits(depth + 1).is_ok()) setup_env_.clock->sleep_for(d);
                                 });
        LOCUS_RETURN_IF_ERROR(driver.run(meganode));
        load_splits_ += driver.stats().splits;
      }
    }
    return Status();
  }

  CellBenchConfig config_;
  selector::SelectorConfig selector_;
  cell::Layout layout_;
  std::unique_ptr<cell::DirectCaller> direct_;
  std::vector<std::unique_ptr<LoadGate>> gates_;  // outlive servers_
  std::vector<std::unique_ptr<cell::CellServer>> servers_;
  cell::SplitWorkerShared shared_;
  Env setup_env_;
  uint64_t load_splits_ = 0;
  uint64_t loaded_splits_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<IndexDriver>> make_cell_driver(const scenario::Scenario& s) {
  const scenario::IndexSpec& x = s.index;
  CellBenchConfig c;
  c.workload = s.workload;
  c.servers = s.platform.servers;
  c.clients = s.run.clients;
  cell::StoreOptions& st = c.server.store;
  st.geometry.node_bytes = x.node_bytes;
  st.geometry.key_capacity_bytes = x.key_capacity_bytes;
  st.geometry.meganode_nodes = static_cast<uint32_t>(x.meganode_bytes / x.node_bytes);
  st.geometry.meganodes_per_server = x.meganodes_per_server;
  st.max_kv_bytes = x.max_kv_bytes;
  st.split_fill_fraction = x.split_fill_fraction;
  st.extents_bytes = x.extents_bytes;
  if (st.extents_bytes == 0) {
    // Room for every record (inserts included) on one server's share, in
    // buddy blocks, with slack for skew and updates in flight.
    const uint64_t block = std::bit_ceil<uint64_t>(memory::kExtentHeaderBytes +
                                                   workload::max_key_bytes(s.workload.zeropadding) +
                                                   uint64_t{s.workload.fieldcount} * s.workload.fieldlength);
    const uint64_t records = s.workload.recordcount + s.workload.operationcount;
    st.extents_bytes = std::bit_ceil(std::max<uint64_t>(block * records * 2 / c.servers, uint64_t{16} << 20));
  }
  c.server.costs.request_ns = us_to_ns(x.server_request_us);
  c.server.costs.node_visit_ns = us_to_ns(x.server_node_visit_us);
  c.server.max_message_bytes = IndexDriver::default_rpc_message_bytes(x);
  c.client.cache_min_distance = x.cache_min_distance;
  c.client.node_cache_bytes = x.node_cache_bytes;
  c.client.cpu_node_ns = us_to_ns(x.client_node_us);
  if (Status v = validate(c); !v.is_ok()) return invalid_argument("index (cell): " + v.message());
  if (Status v = c.server.validate(); !v.is_ok()) return invalid_argument("index (cell): " + v.message());
  return std::unique_ptr<IndexDriver>(new CellDriver(s, c));
}

}  // namespace locus::harness
