// The NAM index's driver: a MemoryServer per server endpoint (the memory
// servers), a NamSession per client (the compute servers' threads).
// Coarse-grained: each server loads and serves its own tree over its
// partition of the keys. Fine-grained: the load builds the one global
// tree over every server's arena, in this process, before any client runs.
// Hybrid: each server's inner levels take the load's leaf splits as they
// would a client's, the leaves spread over every server's arena.
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
  NamDriver(const NamConfig& config, uint32_t servers, const workload::WorkloadSpec& spec)
      : config_(config), servers_count_(servers), partitioner_(config.partitioning, servers, spec) {}

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
      LOCUS_ASSIGN_OR_RETURN(uint64_t k, key_number(key));
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

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    if (servers.size() != servers_count_) {
      return invalid_argument("nam: " + std::to_string(servers.size()) + " memory servers reachable, " +
                              std::to_string(servers_count_) + " configured");
    }
    std::unique_ptr<NamClient> client;
    if (config_.distribution == Distribution::kFine) {
      LOCUS_ASSIGN_OR_RETURN(client, FineClient::connect(ep, rpc, servers, config_));
    } else if (config_.distribution == Distribution::kHybrid) {
      LOCUS_ASSIGN_OR_RETURN(client, HybridClient::connect(ep, rpc, servers, config_, partitioner_));
    } else {
      client = std::make_unique<CoarseClient>(rpc, servers, partitioner_);
    }
    return std::unique_ptr<design::ClientSession>(new NamSession(std::move(client)));
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
    return design::load_records(spec, rng, [out](std::string_view key, std::string_view value) {
      check::Operation op;
      op.kind = check::OpKind::kInsert;
      op.key.assign(key);
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
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const NamConfig& config = *s.index.get<NamConfig>();
  if (s.platform.servers == 0 || s.platform.servers > RemotePtr::kMaxServers) {
    return setting_error(s, "platform.servers", "the NAM index takes 1 to 128 memory servers");
  }
  return std::unique_ptr<design::IndexDriver>(
      new NamDriver(config, static_cast<uint32_t>(s.platform.servers), s.workload));
}

}  // namespace locus::nam
