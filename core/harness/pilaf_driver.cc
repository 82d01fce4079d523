// Pilaf under the scenario runner: one Pilaf server per server node, keys
// sharded over them by key number (a client-side partitioning, as the
// paper's single-server design scales out), each client holding a
// PilafClient per server on one shared endpoint.
#include <string>

#include "core/harness/index_driver.h"
#include "core/index/pilaf/client.h"
#include "core/index/pilaf/server.h"

namespace locus::harness {
namespace {

uint32_t shard_of(uint64_t keynum, size_t servers) {
  uint64_t x = keynum * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 32;
  return static_cast<uint32_t>(x % servers);
}

class PilafSession final : public ClientSession {
 public:
  explicit PilafSession(std::vector<std::unique_ptr<pilaf::PilafClient>> clients)
      : clients_(std::move(clients)) {}

  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* as) override {
    pilaf::PilafClient& c = *clients_[shard_of(op.keynum, clients_.size())];
    using workload::OpKind;
    switch (op.kind) {
      case OpKind::kRead: {
        *as = "READ";
        Status s = c.get(key).status();
        return s.code() == StatusCode::kNotFound ? Status() : s;
      }
      case OpKind::kUpdate:
        *as = "UPDATE";
        return c.put(key, value);
      case OpKind::kInsert:
        *as = "INSERT";
        return c.put(key, value);
      case OpKind::kReadModifyWrite: {
        *as = "READ-MODIFY-WRITE";
        Status s = c.get(key).status();
        if (!s.is_ok() && s.code() != StatusCode::kNotFound) return s;
        return c.put(key, value);
      }
      case OpKind::kScan:
        *as = "SCAN";
        return unimplemented("pilaf has no scans");
    }
    return internal_error("unknown operation");
  }

  void report(metrics::OpStats& stats) const override {
    pilaf::ClientStats sum;
    for (const auto& c : clients_) {
      sum.entry_retries += c->stats().entry_retries;
      sum.extent_retries += c->stats().extent_retries;
      sum.miss_rechecks += c->stats().miss_rechecks;
      sum.entry_reads += c->stats().entry_reads;
      sum.extent_reads += c->stats().extent_reads;
    }
    stats.add(stats.counter("pilaf.retries"), static_cast<int64_t>(sum.retries()));
    stats.add(stats.counter("pilaf.rdma_reads"), static_cast<int64_t>(sum.entry_reads + sum.extent_reads));
  }

 private:
  std::vector<std::unique_ptr<pilaf::PilafClient>> clients_;
};

class PilafDriver final : public IndexDriver {
 public:
  explicit PilafDriver(const scenario::Scenario& s) : scenario_(s) {
    mode_ = s.index.mode == "vo" ? pilaf::GetMode::kVerbsOnly : pilaf::GetMode::kRdma;
  }

  Status setup_server(uint32_t, Env env, rpc::RpcServer& rpc) override {
    const uint64_t servers = scenario_.platform.servers;
    const uint64_t per_server = scenario_.workload.recordcount / servers + 1;
    pilaf::StoreOptions o;
    o.max_kv_bytes = scenario_.index.max_kv_bytes;
    o.initial_buckets = scenario_.index.initial_buckets != 0 ? scenario_.index.initial_buckets : 2 * per_server;
    const uint64_t record_bytes = uint64_t{scenario_.workload.fieldcount} * scenario_.workload.fieldlength + 64;
    o.initial_extent_bytes = std::max<uint64_t>(1 << 20, 2 * per_server * record_bytes);
    LOCUS_ASSIGN_OR_RETURN(auto server, pilaf::PilafServer::create(env, o));
    LOCUS_RETURN_IF_ERROR(server->attach(rpc));
    servers_.push_back(std::move(server));
    return Status();
  }

  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(spec));
    std::string key(loader.max_key_bytes(), '\0');
    std::string value(loader.max_value_bytes(), '\0');
    const uint64_t first = spec.insertstart;
    for (uint64_t n = first; n < first + spec.effective_insertcount(); ++n) {
      const size_t kl = loader.build_key(n, key.data(), key.size());
      const size_t vl = loader.build_record(rng, n, value.data(), value.size());
      LOCUS_RETURN_IF_ERROR(servers_[shard_of(n, servers_.size())]->store().put(
          std::string_view(key.data(), kl), std::string_view(value.data(), vl)));
    }
    return Status();
  }

  StatusOr<std::unique_ptr<ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                   std::span<const NodeId> servers) override {
    std::vector<std::unique_ptr<pilaf::PilafClient>> clients;
    for (NodeId s : servers) {
      LOCUS_ASSIGN_OR_RETURN(auto c, pilaf::PilafClient::connect(ep, rpc, s, {.mode = mode_}));
      clients.push_back(std::move(c));
    }
    return std::unique_ptr<ClientSession>(new PilafSession(std::move(clients)));
  }

  void report(std::map<std::string, double>& extra) const override {
    double kicks = 0, keys = 0;
    for (const auto& s : servers_) {
      kicks += static_cast<double>(s->store().stats().kicks);
      keys += static_cast<double>(s->store().stats().keys);
    }
    extra["pilaf.keys"] = keys;
    extra["pilaf.cuckoo_kicks"] = kicks;
  }

 private:
  scenario::Scenario scenario_;
  pilaf::GetMode mode_;
  std::vector<std::unique_ptr<pilaf::PilafServer>> servers_;
};

}  // namespace

StatusOr<std::unique_ptr<IndexDriver>> make_pilaf_driver(const scenario::Scenario& s) {
  if (s.workload.scanproportion > 0) {
    return invalid_argument("workload.scanproportion: pilaf is a hash table and cannot scan");
  }
  const uint64_t record_bytes = uint64_t{s.workload.fieldcount} * s.workload.fieldlength + 64 + pilaf::kExtentHeaderBytes;
  if (record_bytes > s.index.max_kv_bytes) {
    return invalid_argument("index.max_kv_bytes: records of about " + std::to_string(record_bytes) +
                            " bytes do not fit");
  }
  return std::unique_ptr<IndexDriver>(new PilafDriver(s));
}

}  // namespace locus::harness
