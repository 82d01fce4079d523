// The NAM index's driver: a MemoryServer per server endpoint (the memory
// servers), a NamSession per client (the compute servers' threads).
// Coarse-grained: each server loads and serves its own tree over its
// partition of the keys. Fine-grained: the load builds the one global
// tree over every server's arena, in this process, before any client runs.
// Hybrid: each server's inner levels take the load's leaf splits as they
// would a client's, the leaves spread over every server's arena.
// index.gc_interval_ms: a daemon per memory server (coarse) or the first
// client session (fine, a compute server) runs a GC pass that often.
#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "core/check/models.h"
#include "core/design/index_driver.h"
#include "core/design/record_loader.h"
#include "core/index/nam/client.h"
#include "core/index/nam/config.h"
#include "core/index/nam/fine_client.h"
#include "core/index/nam/hybrid_client.h"
#include "core/index/nam/server.h"
#include "core/index/nam/session.h"

namespace locus::nam {
namespace {

class NamDriver final : public design::IndexDriver {
 public:
  // `count_marked`: walk the trees for nam.deleted_entries_left after the
  // run; not with injected faults, after which a lock may be left held
  // (a lost unlock, a crashed client): the walk's reads would wait for it
  // forever, and on SimGrid outside an actor (fault_campaign nam-fine
  // aborted there).
  NamDriver(const NamConfig& config, uint32_t servers, const workload::WorkloadSpec& spec, bool count_marked)
      : config_(config),
        servers_count_(servers),
        partitioner_(config.partitioning, servers, spec, config.key_skew),
        count_marked_(count_marked) {}

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    LOCUS_ASSIGN_OR_RETURN(auto server, MemoryServer::create(env, endpoint, config_));
    LOCUS_RETURN_IF_ERROR(server->attach(rpc, rpc_message_bytes()));
    if (servers_.size() <= endpoint) servers_.resize(endpoint + 1);
    servers_[endpoint] = std::move(server);
    clock_ = env.clock;
    return Status();
  }

  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    if (servers_.size() != servers_count_) return internal_error("nam load: not every memory server is set up");
    std::vector<std::unique_ptr<LocalAccess>> own;
    std::vector<std::unique_ptr<BlinkTree>> trees;
    std::vector<Arena*> arenas;
    for (auto& s : servers_) arenas.push_back(&s->arena());
    if (config_.distribution == Distribution::kFine) {
      own.push_back(std::make_unique<LocalAccess>(arenas, *clock_));
      LOCUS_RETURN_IF_ERROR(BlinkTree::create_empty(*own.back()));
      trees.push_back(std::make_unique<BlinkTree>(*own.back()));
    } else if (config_.distribution == Distribution::kHybrid) {
      own.push_back(std::make_unique<LocalAccess>(arenas, *clock_));
      for (auto& s : servers_) trees.push_back(std::make_unique<BlinkTree>(*own.back(), s.get()));
    } else {
      for (auto& s : servers_) trees.push_back(std::make_unique<BlinkTree>(s->local_access()));
    }
    LOCUS_RETURN_IF_ERROR(design::load_records(spec, rng, [&](std::string_view key, std::string_view value) -> Status {
      LOCUS_ASSIGN_OR_RETURN(uint64_t number, key_number(key));
      const uint64_t k = partitioner_.key_of(number);
      const uint32_t t = config_.distribution == Distribution::kFine ? 0 : partitioner_.server_of(k);
      ++loaded_;
      return trees[t]->insert({k, check::value_digest(value)});
    }));
    // The loaded leaf levels start with up-to-date head nodes; the
    // clients' scans rebuild them lazily after that (tree.h).
    if (config_.distribution == Distribution::kCoarse) return Status();
    for (auto& t : trees) {
      t->set_head_interval(config_.head_node_interval);
      LOCUS_RETURN_IF_ERROR(t->rebuild_head_nodes());
    }
    return Status();
  }

  std::vector<design::DaemonSpec> server_daemons(uint32_t endpoint) override {
    if (config_.gc_interval_ms <= 0 || config_.distribution != Distribution::kCoarse) return {};
    MemoryServer* server = servers_[endpoint].get();
    const auto interval_ns = static_cast<Nanos>(config_.gc_interval_ms * 1e6);
    return {{"server" + std::to_string(endpoint) + ".gc", false, [this, server, interval_ns](Env& env) {
               Nanos next_ns = env.clock->now() + interval_ns;
               while (!env.stop_requested()) {
                 const Nanos now = env.clock->now();
                 if (now < next_ns) {
                   // Wakes at least every 10 ms to see the run's end.
                   env.clock->sleep_for(std::min<Nanos>(next_ns - now, 10 * kMillisecond));
                   continue;
                 }
                 const WorkTimer timer(env);
                 const uint64_t leaves_before = server->gc_stats().gc_leaves_read;
                 if (!server->collect_garbage().is_ok()) gc_failures_.fetch_add(1, std::memory_order_relaxed);
                 // The pass's CPU, by the bytes of the leaves it walked (a
                 // pass costs what the tree's size makes it).
                 env.cpu->charge_work(kGcWork, timer.elapsed(),
                                      (server->gc_stats().gc_leaves_read - leaves_before) * config_.page_bytes);
                 next_ns = env.clock->now() + interval_ns;
               }
             }}};
  }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    if (servers.size() != servers_count_) {
      return invalid_argument("nam: " + std::to_string(servers.size()) + " memory servers reachable, " +
                              std::to_string(servers_count_) + " configured");
    }
    std::unique_ptr<NamClient> client;
    BlinkTree* collects = nullptr;
    if (config_.distribution == Distribution::kFine) {
      LOCUS_ASSIGN_OR_RETURN(auto fine, FineClient::connect(ep, rpc, servers, config_));
      // One compute server's session collects (the first to connect).
      if (config_.gc_interval_ms > 0 && !collector_taken_.exchange(true)) collects = &fine->tree();
      client = std::move(fine);
    } else if (config_.distribution == Distribution::kHybrid) {
      LOCUS_ASSIGN_OR_RETURN(client, HybridClient::connect(ep, rpc, servers, config_, partitioner_));
    } else {
      client = std::make_unique<CoarseClient>(rpc, servers, partitioner_);
    }
    auto session = std::make_unique<NamSession>(std::move(client), &partitioner_);
    if (collects != nullptr) {
      session->collect_garbage_every(env.clock, static_cast<Nanos>(config_.gc_interval_ms * 1e6), collects);
    }
    return std::unique_ptr<design::ClientSession>(std::move(session));
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    double used = 0, splits = 0, restarts = 0;
    for (const auto& s : servers_) {
      used += static_cast<double>(s->arena().used_bytes());
      const TreeStats t = s->tree_stats();
      splits += static_cast<double>(t.splits);
      restarts += static_cast<double>(t.restarts);
    }
    extra["nam.loaded_pairs"] = static_cast<double>(loaded_);
    extra["nam.arena_used_bytes"] = used;
    extra["nam.server_splits"] = splits;
    extra["nam.server_restarts"] = restarts;
    extra["nam.gc_failures"] = static_cast<double>(gc_failures_.load());
    double passes = 0, collected = 0, merges = 0;
    for (const auto& s : servers_) {
      if (config_.distribution != Distribution::kCoarse) break;
      passes += static_cast<double>(s->gc_stats().gc_passes);
      collected += static_cast<double>(s->gc_stats().entries_collected);
      merges += static_cast<double>(s->gc_stats().merges);
    }
    extra["nam.server_gc_passes"] = passes;
    extra["nam.server_gc_entries_collected"] = collected;
    extra["nam.server_gc_merges"] = merges;
    if (auto marked = count_marked_ ? deleted_entries() : StatusOr<uint64_t>(unimplemented("")); marked.is_ok())
      extra["nam.deleted_entries_left"] = static_cast<double>(*marked);
  }

  // Entries still marked deleted in every tree after the run (hybrid: not
  // counted; its leaves hang under the memory servers' partitions).
  StatusOr<uint64_t> deleted_entries() const {
    if (clock_ == nullptr) return internal_error("nam: no memory server set up");
    uint64_t marked = 0;
    if (config_.distribution == Distribution::kCoarse) {
      for (const auto& s : servers_) {
        BlinkTree t(s->local_access());
        LOCUS_ASSIGN_OR_RETURN(uint64_t n, t.count_deleted_entries());
        marked += n;
      }
      return marked;
    }
    if (config_.distribution == Distribution::kHybrid) return unimplemented("nam: hybrid deleted entries not counted");
    std::vector<Arena*> arenas;
    for (const auto& s : servers_) arenas.push_back(&s->arena());
    LocalAccess global(arenas, *clock_);
    BlinkTree t(global);
    return t.count_deleted_entries();
  }

  design::MemoryEstimate server_memory() const override {
    return {design::saturating_mul(servers_count_, config_.region_bytes), "index.region_bytes x platform.servers"};
  }
  design::MemoryEstimate client_memory() const override {
    // Scratch pages, plus a head node's prefetch (twice: the registered
    // buffer and the tree's copy).
    return {(4 + 2 * uint64_t{config_.head_node_interval}) * config_.page_bytes,
            "index.page_bytes x (4 + 2 x index.head_node_interval)"};
  }

  Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const override {
    return design::load_records(spec, rng, [this, out](std::string_view key, std::string_view value) -> Status {
      check::Operation op;
      op.kind = check::OpKind::kInsert;
      LOCUS_ASSIGN_OR_RETURN(op.key, partitioner_.history_key(key));
      op.value = check::value_digest(value);
      op.outcome = check::Outcome::kOk;
      op.invoke_ns = -2;  // before the run's clock starts
      op.response_ns = -1;
      out->push_back(std::move(op));
      return Status();
    });
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::MultimapModel(), history, options);
  }

 private:
  NamConfig config_;
  uint32_t servers_count_;
  Partitioner partitioner_;
  std::vector<std::unique_ptr<MemoryServer>> servers_;
  Clock* clock_ = nullptr;
  uint64_t loaded_ = 0;
  std::atomic<uint64_t> gc_failures_{0};
  std::atomic<bool> collector_taken_{false};
  bool count_marked_;
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const NamConfig& config = *s.index.get<NamConfig>();
  if (s.platform.servers == 0 || s.platform.servers > RemotePtr::kMaxServers) {
    return setting_error(s, "platform.servers", "the NAM index takes 1 to 128 memory servers");
  }
  if (!config.key_skew.empty() && config.key_skew.size() != s.platform.servers) {
    return setting_error(s, "index.key_skew",
                         "has " + std::to_string(config.key_skew.size()) + " shares, one per memory server: "
                         "platform.servers is " + std::to_string(s.platform.servers));
  }
  return std::unique_ptr<design::IndexDriver>(
      new NamDriver(config, static_cast<uint32_t>(s.platform.servers), s.workload,
                    !s.faults.any()));
}

}  // namespace locus::nam
