// Cell's driver: one CellServer per store (index.stores_per_server per
// machine, each its own endpoint), attached
// to the runner's RpcServer (so a server uses as many cores as the
// platform gives it: the SimGrid actors never interleave inside a point
// handler, only at its CPU charge), a split worker beside each server (a
// daemon on a node of its own), and each client a CellSession
// (session.h) with the scenario's selector. Records are loaded into
// the servers' memory before the run, meganode splits included, so the run
// starts from a spread tree.
//
// [selector] type "static" means Cell's own selector, JSQ with the
// paper's constants; any other type is used as configured.
//
// index.takeover: each machine also has spare endpoints; when the runner
// kills a machine (faults.crash_servers) the survivors' spares take over
// its stores from their logs (takeover.h).
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>

#include "core/check/models.h"
#include "core/design/index_driver.h"
#include "core/design/load_gate.h"
#include "core/design/record_loader.h"
#include "core/index/cell/client.h"
#include "core/index/cell/config.h"
#include "core/index/cell/direct_tree.h"
#include "core/index/cell/server.h"
#include "core/index/cell/session.h"
#include "core/index/cell/split_worker.h"
#include "core/index/cell/takeover.h"
#include "core/memory/buddy_allocator.h"
#include "core/memory/extent.h"
#include "core/workload/workload_spec.h"

namespace locus::cell {
namespace {

Nanos us_to_ns(double us) { return static_cast<Nanos>(us * 1e3 + 0.5); }

class CellDriver final : public design::IndexDriver {
 public:
  CellDriver(const scenario::Scenario& s, const ServerOptions& server, const ClientOptions& client,
             const SplitDriverOptions& split, const CellConfig& x)
      : server_options_(server),
        server_count_(s.platform.servers),
        stores_(x.stores_per_server),
        log_replay_(x.log_replay),
        client_options_(client),
        split_(split),
        direct_(layout_, split, server.max_message_bytes) {
    selector_ = s.selector.type == "static" ? selector::SelectorConfig{} : s.selector.config;
    layout_.geometry = server.store.geometry;
    layout_.max_kv_bytes = server.store.max_kv_bytes;
    layout_.regions.resize(2 * server_count_ * stores_);
    if (x.takeover) {
      spares_ = x.spares_per_server != 0 ? x.spares_per_server
                                         : static_cast<uint32_t>((stores_ + server_count_ - 2) / (server_count_ - 1));
      takeover_ = std::make_unique<Takeover>(static_cast<uint32_t>(server_count_), server, split, shared_);
    }
  }

  // A machine's stores, then its spares; the first is the machine's host.
  std::vector<design::EndpointSpec> server_endpoints() const override {
    std::vector<design::EndpointSpec> out;
    for (uint32_t k = 0; k < stores_; ++k) out.push_back({k == 0 ? "" : ".store" + std::to_string(k)});
    for (uint32_t k = 0; k < spares_; ++k) out.push_back({".spare" + std::to_string(k)});
    return out;
  }

  Status setup_server(uint32_t index, Env env, rpc::RpcServer& rpc) override {
    const uint32_t per_machine = stores_ + spares_;
    const uint32_t machine = index / per_machine;
    if (index % per_machine >= stores_) {
      endpoint_roles_.push_back(-1 - static_cast<int64_t>(takeover_->spare_count()));
      return CellServer::attach_to(rpc, takeover_->add_spare(machine, env));
    }
    const uint32_t store = machine * stores_ + index % per_machine;
    const auto region = static_cast<CellRegionId>(2 * store);
    LOCUS_RETURN_IF_ERROR(check_no_earlier_log(env, region));
    gates_.push_back(std::make_unique<design::LoadGate>(env));
    LOCUS_ASSIGN_OR_RETURN(auto server, CellServer::create(gates_.back()->env(), region, server_options_));
    LOCUS_RETURN_IF_ERROR(server->attach(rpc));
    layout_.regions[region] = server->node_region();
    layout_.regions[region + 1] = server->extent_region();
    direct_.add(server.get(), env);
    if (takeover_) takeover_->add_store(machine, server.get());
    endpoint_roles_.push_back(static_cast<int64_t>(servers_.size()));
    servers_.push_back(std::move(server));
    return Status();
  }

  // An earlier run's log would be replayed before this run's load, its
  // keys mixed into this run's: refused unless index.log_replay asks for it.
  Status check_no_earlier_log(Env env, CellRegionId region) const {
    if (server_options_.log_dir.empty() || log_replay_) return Status();
    const std::string dir = server_options_.log_dir + "/region" + std::to_string(region);
    if (!log::holds_earlier_log(env.files, dir)) return Status();
    return invalid_argument("index.log_dir: " + dir + " holds an earlier run's log of store " +
                            std::to_string(region / 2) +
                            ": a run starts from an empty log_dir; remove it, or set index.log_replay = true "
                            "to start from what it holds (then not loaded again)");
  }

  Status server_machine_crashed(Env& env, uint32_t machine) override {
    return takeover_ ? takeover_->machine_died(env, machine) : Status();
  }

  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    for (auto& s : servers_) s->set_layout(layout_);
    if (takeover_) LOCUS_RETURN_IF_ERROR(takeover_->set_layout(layout_));
    // Stores that came back from their logs (index.log_replay) hold the
    // tree with every update and delete made before: loading again would
    // put the load's values back over them.
    for (const auto& s : servers_) replayed_records_ += s->recovery().checkpoint_records + s->recovery().log.records;
    if (replayed_records_ > 0) {
      // Ends what a crash left of a split, as a Deployment started on the
      // logs does (deployment.cc).
      std::vector<CellServer*> servers;
      for (auto& s : servers_) servers.push_back(s.get());
      LOCUS_RETURN_IF_ERROR(CellServer::resolve_replayed_splits(servers));
      for (auto& gate : gates_) gate->open();
      return Status();
    }
    LOCUS_RETURN_IF_ERROR(servers_.front()->plant_tree());
    uint64_t loaded = 0;
    Status st = design::load_records(spec, rng, [&](std::string_view key, std::string_view value) {
      ++loaded;
      return direct_.put(key, value);
    });
    // Out of meganodes (or extent room) while loading: name the settings,
    // not just the store's state (issue 17).
    if (st.code() == StatusCode::kResourceExhausted) {
      const Geometry& g = layout_.geometry;
      return resource_exhausted(
          st.message() + " after " + std::to_string(loaded - 1) + " of the " +
          std::to_string(spec.effective_insertcount()) +
          " records (workload.recordcount): index.meganodes_per_server (" + std::to_string(g.meganodes_per_server) +
          ") x platform.servers (" + std::to_string(server_count_) + ") meganodes of index.meganode_bytes (" +
          std::to_string(uint64_t{g.meganode_nodes} * g.node_bytes) +
          "), with extents of index.extents_bytes, do not hold them: raise those or load fewer records");
    }
    LOCUS_RETURN_IF_ERROR(st);
    loaded_splits_ = direct_.split_stats().splits;
    for (auto& s : servers_) s->reset_charged();
    for (auto& gate : gates_) gate->open();
    return Status();
  }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(selector_, *env.random));
    LOCUS_ASSIGN_OR_RETURN(auto client, CellClient::connect(ep, rpc, servers.front(), *sel, client_options_));
    return std::unique_ptr<design::ClientSession>(new CellSession(std::move(sel), std::move(client)));
  }

  // Clients learn every region's RDMA keys from server 0 (one layout), which
  // in a process of its own would hand out its shadows' keys.
  Status check_one_machine_per_process() const override {
    return unimplemented(
        "cell: its clients learn every server's regions (their RDMA keys) from server 0, so one `locus serve` "
        "must serve all of its servers (drop --node)");
  }

  std::vector<design::DaemonSpec> server_daemons(uint32_t index) override {
    const int64_t role = endpoint_roles_[index];
    if (role < 0) {  // a spare: recovers what a takeover gives it, then splits it
      Takeover* t = takeover_.get();
      const auto spare = static_cast<uint32_t>(-1 - role);
      return {
          {"spare" + std::to_string(spare) + ".recovery", true, [t, spare](Env& env) { t->run_spare(env, spare); }}};
    }
    CellServer* server = servers_[static_cast<size_t>(role)].get();
    SplitWorkerShared* shared = &shared_;
    const SplitDriverOptions split = split_;
    std::vector<design::DaemonSpec> out{{"server" + std::to_string(index) + ".split", true,
                                         [server, shared, split](Env& env) {
                                           run_split_worker(env, *server, split, *shared);
                                         }}};
    // log_fsync = interval: an idle store's last records synced within the
    // interval (as Pilaf's pilaf.log_sync). A store recovered by a takeover
    // is synced by its next batch only.
    const log::LogOptions& lo = server_options_.log;
    if (!server_options_.log_dir.empty() && lo.fsync == log::FsyncPolicy::kInterval) {
      const Nanos period_ns = lo.fsync_interval_ns;
      out.push_back({"server" + std::to_string(index) + ".log_sync", false, [server, period_ns](Env& env) {
                       while (!env.stop_requested()) {
                         (void)server->tick();
                         env.clock->sleep_for(std::min<Nanos>(period_ns, 10 * kMillisecond));
                       }
                     }});
    }
    return out;
  }

  bool keep_serving() const override { return shared_.in_flight.load(std::memory_order_seq_cst) > 0; }

  uint32_t rpc_message_bytes() const override { return server_options_.max_message_bytes; }

  // As Store::init sizes them: every server's node region and extents (and
  // the buddy allocator's bookkeeping of them).
  design::MemoryEstimate server_memory() const override {
    using design::saturating_add;
    using design::saturating_mul;
    const StoreOptions& st = server_options_.store;
    const uint64_t per_server =
        saturating_add(saturating_add(st.geometry.region_bytes(), st.extents_bytes),
                       memory::BuddyAllocator::bookkeeping_bytes(st.extents_bytes, st.min_extent_block_bytes));
    // Spares hold nothing until a takeover, then a store each.
    return {saturating_mul(saturating_mul(server_count_, stores_ + spares_), per_server),
            "index.meganodes_per_server x index.meganode_bytes and the extents (index.extents_bytes, or "
            "workload.recordcount + workload.operationcount records) per store, index.stores_per_server "
            "(and index.spares_per_server) per server, over platform.servers"};
  }
  // A client's node cache grows as it fills, up to node_cache_bytes (at most
  // the tree, make_driver), with NodeCache::kBytesPerSlot beside each
  // node; its path cache keeps two keys per entry; its read buffers hold a
  // trail of nodes and a batch of extents (client.cc).
  design::MemoryEstimate client_memory() const override {
    using design::saturating_add;
    using design::saturating_mul;
    const Geometry& g = server_options_.store.geometry;
    const uint64_t cache_bytes = client_options_.node_cache_bytes;
    const uint64_t cache =
        saturating_add(cache_bytes, saturating_mul(cache_bytes / g.node_bytes, NodeCache::kBytesPerSlot));
    const uint64_t path_cache = uint64_t{client_options_.path_cache_entries} * 2 * g.key_capacity_bytes;
    const uint64_t buffers = kSuperblockBytes + uint64_t{g.node_bytes} + server_options_.store.max_kv_bytes;
    return {saturating_add(cache, path_cache + buffers), "index.node_cache_bytes"};
  }

  Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const override {
    if (replayed_records_ > 0) {
      return invalid_argument(
          "index.log_replay: the stores started from their logs, whose contents the history checker does not have "
          "as the run's initial state; check a replayed run with [check] linearizability = false");
    }
    return design::loaded_puts(spec, rng, out);
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::SortedMapModel(), history, options);
  }

  void report_mechanism(const metrics::OpStats& clients, std::map<std::string, double>& extra) const override {
    // Over the whole run, warm-up included (the counters are the sessions').
    design::add_ratio(extra, "cell.reads_per_client_step", clients, "cell.node_reads", "cell.client_steps");
    design::add_ratio(extra, "cell.path_cache_hits_per_op", clients, "cell.path_cache_hits", "cell.ops");
    const int64_t hits = clients.counter_value("cell.node_cache_hits");
    const int64_t lookups = hits + clients.counter_value("cell.node_reads");
    if (lookups > 0) extra["cell.node_cache_hit_rate"] = static_cast<double>(hits) / static_cast<double>(lookups);
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    StoreStats sum;
    uint64_t refused = 0;
    std::vector<CellServer*> serving;
    if (takeover_) {
      serving = takeover_->serving();  // a dead machine's stores count once, where they were recovered
    } else {
      for (const auto& s : servers_) serving.push_back(s.get());
    }
    uint64_t requests = 0, nodes = 0;
    for (CellServer* s : serving) {
      refused += s->refused_internal();
      requests += s->requests_charged();
      nodes += s->nodes_charged();
      const StoreStats st = s->store().stats();
      sum.keys += st.keys;
      sum.node_splits += st.node_splits;
      sum.meganodes_in_use += st.meganodes_in_use;
      sum.busy_replies += st.busy_replies;
      for (uint32_t l = 0; l < kMaxLevels; ++l) {
        if (st.min_height[l] != 0 && (sum.min_height[l] == 0 || st.min_height[l] < sum.min_height[l])) {
          sum.min_height[l] = st.min_height[l];
        }
        sum.max_height[l] = std::max(sum.max_height[l], st.max_height[l]);
      }
    }
    // The tree's shape, to set beside the paper's (a 64 MB meganode of 1 KB
    // nodes has 5 levels; clients cache the levels above the bottom four):
    // node levels in the leaf meganodes, and on the longest path from the
    // root (the tallest meganode of each meganode level).
    extra["cell.leaf_meganode_levels_min"] = sum.min_height[0];
    extra["cell.leaf_meganode_levels_max"] = sum.max_height[0];
    uint32_t path = 0;
    for (uint8_t h : sum.max_height) path += h;
    extra["cell.node_levels"] = path;
    if (requests > 0) {
      extra["cell.nodes_per_server_request"] = static_cast<double>(nodes) / static_cast<double>(requests);
    }
    extra["cell.keys"] = static_cast<double>(sum.keys);
    extra["cell.refused_internal"] = static_cast<double>(refused);
    extra["cell.meganodes"] = static_cast<double>(sum.meganodes_in_use);
    extra["cell.node_splits"] = static_cast<double>(sum.node_splits);
    extra["cell.busy_replies"] = static_cast<double>(sum.busy_replies);
    extra["cell.meganode_splits_load"] = static_cast<double>(loaded_splits_);
    if (replayed_records_ > 0) extra["cell.replayed_records"] = static_cast<double>(replayed_records_);
    extra["cell.meganode_splits_run"] = static_cast<double>(shared_.splits.load());
    extra["cell.split_failures"] = static_cast<double>(shared_.failures.load());
    extra["cell.root_level"] = servers_.front()->store().root_level();
    if (takeover_) {
      const TakeoverStats t = takeover_->stats();
      extra["cell.takeover.machines_died"] = t.machines_died;
      extra["cell.takeover.stores_recovered"] = t.stores_recovered;
      extra["cell.takeover.stores_unplaced"] = t.stores_unplaced;
      extra["cell.takeover.records_replayed"] = static_cast<double>(t.records_replayed);
      extra["cell.takeover.orphans_abandoned"] = static_cast<double>(t.orphans_abandoned);
      extra["cell.takeover.longest_ms"] = static_cast<double>(t.longest_recovery_ns) / 1e6;
      if (!t.first_error.empty()) fmt::print(stderr, "cell takeover: {}\n", t.first_error);
    }
  }

 private:
  ServerOptions server_options_;
  uint64_t server_count_;
  uint32_t stores_;  // per machine
  bool log_replay_;
  uint32_t spares_ = 0;  // per machine (index.takeover)
  ClientOptions client_options_;
  SplitDriverOptions split_;
  selector::SelectorConfig selector_;
  Layout layout_;
  DirectTree direct_;                                     // the load, in place
  std::vector<std::unique_ptr<design::LoadGate>> gates_;  // outlive servers_
  std::vector<std::unique_ptr<CellServer>> servers_;
  SplitWorkerShared shared_;
  std::unique_ptr<Takeover> takeover_;   // index.takeover
  std::vector<int64_t> endpoint_roles_;  // per endpoint: index into servers_, or -1 - spare
  uint64_t loaded_splits_ = 0;
  uint64_t replayed_records_ = 0;  // recovered by the stores at set-up (index.log_replay): no load then
};

// What Cell can run, with a message naming the offending setting.
Status check_workload(const scenario::Scenario& s, const StoreOptions& store) {
  const workload::WorkloadSpec& w = s.workload;
  const uint64_t key_bytes = workload::max_key_bytes(w.zeropadding);
  if (key_bytes > store.geometry.key_capacity_bytes) {
    return scenario::setting_error(s, "workload.zeropadding",
                                   "keys of " + std::to_string(key_bytes) + " bytes exceed index.key_capacity_bytes " +
                                       std::to_string(store.geometry.key_capacity_bytes) + " (cell)");
  }
  const uint64_t record_bytes = uint64_t{w.fieldcount} * w.fieldlength;
  if (record_bytes + key_bytes + memory::kExtentHeaderBytes > store.max_kv_bytes) {
    return scenario::setting_error(s, "workload.fieldlength",
                                   "records of " + std::to_string(record_bytes) +
                                       " bytes (workload.fieldcount x fieldlength) exceed index.max_kv_bytes " +
                                       std::to_string(store.max_kv_bytes) + " (cell)");
  }
  return Status();
}

}  // namespace

uint64_t extents_region_bytes(const scenario::Scenario& s) {
  const CellConfig& x = *s.index.get<CellConfig>();
  if (x.extents_bytes != 0) return x.extents_bytes;
  // Room for every record (inserts included) on one server's share, in
  // buddy blocks, with slack for skew and updates in flight.
  // Saturating: absurd counts make an absurd size, which the memory
  // estimate then refuses, never a small wrapped one.
  using design::saturating_add;
  using design::saturating_mul;
  const uint64_t block =
      design::saturating_bit_ceil(memory::kExtentHeaderBytes + workload::max_key_bytes(s.workload.zeropadding) +
                                  uint64_t{s.workload.fieldcount} * s.workload.fieldlength);
  const uint64_t records = saturating_add(s.workload.recordcount, s.workload.operationcount);
  return design::saturating_bit_ceil(std::max<uint64_t>(
      saturating_mul(saturating_mul(block, records), 2) / (uint64_t{s.platform.servers} * x.stores_per_server),
      uint64_t{16} << 20));
}

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const CellConfig& x = *s.index.get<CellConfig>();
  ServerOptions server;
  StoreOptions& st = server.store;
  st.geometry.node_bytes = x.node_bytes;
  st.geometry.key_capacity_bytes = x.key_capacity_bytes;
  st.geometry.meganode_nodes = static_cast<uint32_t>(x.meganode_bytes / x.node_bytes);
  st.geometry.meganodes_per_server = x.meganodes_per_server;
  st.max_kv_bytes = x.max_kv_bytes;
  st.split_fill_fraction = x.split_fill_fraction;
  st.extents_bytes = extents_region_bytes(s);
  // A fresh key per deployment: it decides nothing simulated, so runs stay
  // reproducible; clients never receive it (server.h, protocol.h).
  server.tree_key = (uint64_t{std::random_device()()} << 32) | std::random_device()();
  server.costs.request_ns = us_to_ns(x.server_request_us);
  server.costs.node_visit_ns = us_to_ns(x.server_node_visit_us);
  server.log_dir = x.log.log_dir;
  server.log = x.log.options();
  server.checkpoint_min_bytes = x.log_rewrite_min_mb << 20;
  server.checkpoint_percentage = x.log_rewrite_percentage;
  server.max_message_bytes = design::IndexDriver::rpc_message_bytes_for(x.max_kv_bytes);
  ClientOptions client;
  client.cache_min_distance = x.cache_min_distance;
  // A cache cannot use more room than the whole tree's nodes: reserving
  // index.node_cache_bytes beyond that (1 TiB, say) only exhausted memory
  // (issue 17).
  const uint64_t tree_bytes = design::saturating_mul(
      design::saturating_mul(uint64_t{s.platform.servers} * x.stores_per_server, x.meganodes_per_server),
      x.meganode_bytes);
  client.node_cache_bytes = std::min<uint64_t>(x.node_cache_bytes, tree_bytes);
  client.cpu_node_ns = us_to_ns(x.client_node_us);
  LOCUS_RETURN_IF_ERROR(check_workload(s, st));
  // Every record is an entry of a leaf, so no more fit than every node of
  // every meganode full of entries: refused here, before the extents are
  // sized for them (10 M records on one 512 KB meganode per server made 4 GB
  // of extents and took 12 s to fail loading, 60 s and more under a sanitizer).
  const uint64_t most_records = design::saturating_mul(
      design::saturating_mul(uint64_t{s.platform.servers} * x.stores_per_server, x.meganodes_per_server),
      uint64_t{st.geometry.meganode_nodes} * st.geometry.max_capacity());
  if (s.workload.effective_insertcount() > most_records) {
    return resource_exhausted(
        "cell: the " + std::to_string(s.workload.effective_insertcount()) +
        " records (workload.recordcount) cannot fit: index.meganodes_per_server (" +
        std::to_string(x.meganodes_per_server) + ") x platform.servers (" + std::to_string(s.platform.servers) +
        ") x index.stores_per_server (" + std::to_string(x.stores_per_server) + ") meganodes of index.meganode_bytes (" +
        std::to_string(x.meganode_bytes) + ") hold at most " + std::to_string(most_records) + " (" +
        std::to_string(st.geometry.max_capacity()) + " a node of index.node_bytes, were every node a full leaf): raise "
        "those or load fewer records");
  }
  if (x.takeover && s.platform.servers < 2) {
    return scenario::setting_error(s, "index.takeover", "needs platform.servers >= 2: survivors take over a dead one");
  }
  if (Status v = server.validate(); !v.is_ok()) return invalid_argument("index (cell): " + v.message());
  return std::unique_ptr<design::IndexDriver>(new CellDriver(s, server, client, SplitDriverOptions{}, x));
}

}  // namespace locus::cell
