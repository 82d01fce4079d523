// Pilaf's driver: one Pilaf server per server node, keys
// sharded over them by key number (pilaf_shard_of: a client-side
// partitioning, as the paper's single-server design scales out), each
// client a PilafSession (session.h) holding a PilafClient per server
// on one shared endpoint, each connected (a layout RPC) when the client
// first uses a key of that server.
#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "core/check/models.h"
#include "core/common/short_mutex.h"
#include "core/design/index_driver.h"
#include "core/design/record_loader.h"
#include "core/index/pilaf/client.h"
#include "core/index/pilaf/config.h"
#include "core/index/pilaf/server.h"
#include "core/index/pilaf/session.h"
#include "core/index/pilaf/sizing.h"
#include "core/log/log_keys.h"
#include "core/memory/buddy_allocator.h"

namespace locus::pilaf {
namespace {

class PilafDriver final : public design::IndexDriver {
 public:
  PilafDriver(const scenario::Scenario& s, const PilafConfig& config) : scenario_(s), config_(config) {
    mode_ = config.mode == "vo" ? GetMode::kVerbsOnly : GetMode::kRdma;
  }

  StoreOptions store_options() const { return store_options_for(scenario_, config_); }

  // As Store::create and Store::init size them, per server: the table (an
  // entry and a slot hash per bucket), the extents and the buddy
  // allocator's bookkeeping of them; and the sharded load's plan of every
  // record.
  design::MemoryEstimate server_memory() const override {
    using design::saturating_add;
    using design::saturating_mul;
    const StoreOptions o = store_options();
    const uint64_t buckets = table_buckets(o);
    const uint64_t extents = extent_region_bytes(o);
    const uint64_t per_server =
        saturating_add(saturating_add(saturating_mul(buckets, kEntryBytes + sizeof(Hash128)), extents),
                       memory::BuddyAllocator::bookkeeping_bytes(extents, o.min_extent_block_bytes));
    return {saturating_add(
                saturating_mul(scenario_.platform.servers, per_server),
                saturating_mul(scenario_.workload.effective_insertcount(), design::sharded_load_bytes_per_record())),
            config_.initial_buckets != 0
                ? "index.initial_buckets and workload.recordcount x workload.fieldcount x workload.fieldlength"
                : "workload.recordcount x workload.fieldcount x workload.fieldlength over platform.servers"};
  }
  // One read buffer (an extent of index.max_kv_bytes behind room for a
  // few entries, client.cc) shared by the session's clients, and at worst
  // a PilafClient (its server's layout) and its slot for every server.
  design::MemoryEstimate client_memory() const override {
    const uint64_t per_server = sizeof(PilafClient) + sizeof(std::pair<uint32_t, std::unique_ptr<PilafClient>>);
    return {design::saturating_add(uint64_t{config_.max_kv_bytes} + kReadScratchBytes,
                                   design::saturating_mul(scenario_.platform.servers, per_server)),
            "index.max_kv_bytes, and platform.servers x a layout"};
  }

  LogSettings log_settings(uint32_t endpoint) const {
    LogSettings l;
    if (config_.log_dir.empty()) return l;
    l.dir = config_.log_dir + "/server" + std::to_string(endpoint);
    (void)log::parse_fsync_policy(config_.log_fsync, &l.options.fsync);  // read_keys allowed only these
    l.options.fsync_interval_ns = Nanos{config_.log_fsync_interval_ms} * kMillisecond;
    l.rewrite_percentage = config_.log_rewrite_percentage;
    l.rewrite_min_bytes = config_.log_rewrite_min_mb << 20;
    return l;
  }

  // An earlier run's log would be replayed and then overwritten by this
  // run's load (every update and delete it holds undone, and the load
  // logged again): refused unless index.log_replay asks to start from it.
  Status check_no_earlier_log(Env env, const std::string& dir) const {
    if (config_.log_replay || !log::holds_earlier_log(env.files, dir)) return Status();
    return invalid_argument("index.log_dir: " + dir + " holds an earlier run's log: a run starts from an empty "
                            "log_dir; remove it, or set index.log_replay = true to start from what it holds "
                            "(a server that recovers records is not loaded again)");
  }

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    const LogSettings log = log_settings(endpoint);
    LOCUS_RETURN_IF_ERROR(check_no_earlier_log(env, log.dir));
    LOCUS_ASSIGN_OR_RETURN(auto server, PilafServer::create(env, store_options(), log));
    LOCUS_RETURN_IF_ERROR(server->attach(rpc));
    const log::RecoveryReport& r = server->last_recovery();
    const uint64_t records = r.checkpoint_records + r.log.records;
    replayed_.push_back(records > 0);
    replayed_records_ += records;
    servers_.push_back(std::move(server));
    return Status();
  }

  // Sharded by key number, filled on every hardware thread. A server that
  // came back from its log (index.log_replay) is skipped: loading it would
  // put the load's values back over the updates and deletes it recovered.
  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    const uint32_t shards = static_cast<uint32_t>(servers_.size());
    return design::load_records_sharded(
        spec, rng, shards, [shards](uint64_t keynum) { return pilaf_shard_of(keynum, shards); },
        [this](uint32_t shard, std::string_view key, std::string_view value) {
          return replayed_[shard] ? Status() : servers_[shard]->load(key, value);
        });
  }

  uint32_t replayed_servers() const { return static_cast<uint32_t>(std::count(replayed_.begin(), replayed_.end(), true)); }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    return std::unique_ptr<design::ClientSession>(new PilafSession(ep, rpc, server_list(servers), {.mode = mode_}));
  }

  // The server list every session of a run shares (sessions on OS threads
  // connect at once on the other backends).
  std::shared_ptr<const std::vector<NodeId>> server_list(std::span<const NodeId> servers) {
    std::lock_guard<ShortMutex> lock(server_list_mu_);
    if (server_list_ == nullptr ||
        !std::equal(servers.begin(), servers.end(), server_list_->begin(), server_list_->end())) {
      server_list_ = std::make_shared<const std::vector<NodeId>>(servers.begin(), servers.end());
    }
    return server_list_;
  }

  // A put, the largest message, is a key and a value of max_kv_bytes
  // together, each with its length, behind the RPC header.
  uint32_t rpc_message_bytes() const override { return config_.max_kv_bytes + rpc::kHeaderBytes + 64; }

  Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const override {
    if (replayed_servers() > 0) {
      return invalid_argument(
          "index.log_replay: " + std::to_string(replayed_servers()) +
          " server(s) started from their logs, whose contents the history checker does not have as the run's "
          "initial state; check a replayed run with [check] linearizability = false");
    }
    return design::loaded_puts(spec, rng, out);
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::KvModel(), history, options);
  }

  Status restart_server(uint32_t endpoint) override {
    if (endpoint >= servers_.size()) return invalid_argument("pilaf: no server endpoint " + std::to_string(endpoint));
    if (config_.log_dir.empty()) {
      return invalid_argument("pilaf: index.log_dir is not set, so a restarted server would come back empty");
    }
    LOCUS_ASSIGN_OR_RETURN(log::RecoveryReport r, servers_[endpoint]->restart());
    ++restarts_;
    recovered_records_ += r.checkpoint_records + r.log.records;
    return Status();
  }

  // Interval fsync: each logging server syncs once the interval has passed.
  std::vector<design::DaemonSpec> server_daemons(uint32_t endpoint) override {
    if (config_.log_dir.empty() || config_.log_fsync != "interval" || endpoint >= servers_.size()) return {};
    PilafServer* server = servers_[endpoint].get();
    const Nanos period_ns = Nanos{config_.log_fsync_interval_ms} * kMillisecond;
    return {{"pilaf.log_sync", false, [server, period_ns](Env& env) {
               while (!env.stop_requested()) {
                 (void)server->tick();
                 env.clock->sleep_for(std::min<Nanos>(period_ns, 10 * kMillisecond));
               }
             }}};
  }

  void report_mechanism(const metrics::OpStats& clients, std::map<std::string, double>& extra) const override {
    // Hash-entry READs per client-side get (the paper: 1.6 on average for
    // 3-way cuckoo at 75% fill); a miss reads all three once more.
    design::add_ratio(extra, "pilaf.probes_per_get", clients, "pilaf.entry_reads", "pilaf.rdma_gets");
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    double kicks = 0, keys = 0, buckets = 0;
    for (const auto& s : servers_) {
      const StoreStats st = s->store().stats();
      kicks += static_cast<double>(st.kicks);
      keys += static_cast<double>(st.keys);
      buckets += static_cast<double>(st.bucket_count);
    }
    extra["pilaf.keys"] = keys;
    extra["pilaf.cuckoo_kicks"] = kicks;
    if (buckets > 0) extra["pilaf.fill"] = keys / buckets;
    if (replayed_servers() > 0) {
      extra["pilaf.replayed_servers"] = replayed_servers();
      extra["pilaf.replayed_records"] = static_cast<double>(replayed_records_);
    }
    if (restarts_ > 0) {
      extra["pilaf.restarts"] = static_cast<double>(restarts_);
      extra["pilaf.recovered_records"] = static_cast<double>(recovered_records_);
    }
  }

 private:
  scenario::Scenario scenario_;
  PilafConfig config_;
  GetMode mode_;
  std::vector<std::unique_ptr<PilafServer>> servers_;
  ShortMutex server_list_mu_;  // a copy under it, nothing that waits
  std::shared_ptr<const std::vector<NodeId>> server_list_;
  uint64_t restarts_ = 0;
  uint64_t recovered_records_ = 0;
  std::vector<bool> replayed_;  // per server: it recovered records from index.log_dir at set-up
  uint64_t replayed_records_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const PilafConfig& config = *s.index.get<PilafConfig>();
  if (s.workload.scanproportion > 0) {
    return scenario::setting_error(s, "workload.scanproportion", "pilaf is a hash table and cannot scan");
  }
  const uint64_t record_bytes = uint64_t{s.workload.fieldcount} * s.workload.fieldlength + 64 + kExtentHeaderBytes;
  if (record_bytes > config.max_kv_bytes) {
    return scenario::setting_error(
        s, "index.max_kv_bytes",
        "records of about " + std::to_string(record_bytes) + " bytes (workload.fieldcount x fieldlength) do not fit");
  }
  return std::unique_ptr<design::IndexDriver>(new PilafDriver(s, config));
}

}  // namespace locus::pilaf
