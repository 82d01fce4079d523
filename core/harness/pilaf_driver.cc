// Pilaf under the scenario runner: one Pilaf server per server node, keys
// sharded over them by key number (pilaf_shard_of: a client-side
// partitioning, as the paper's single-server design scales out), each
// client a PilafSession (pilaf_session.h) holding a PilafClient per server
// on one shared endpoint, each connected (a layout RPC) when the client
// first uses a key of that server.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "core/harness/index_driver.h"
#include "core/harness/pilaf_session.h"
#include "core/index/pilaf/client.h"
#include "core/index/pilaf/server.h"

namespace locus::harness {
namespace {

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

  // The records' plans are drawn in key order from `rng` and dealt to the
  // threads by shard; each thread fills and stores its records in key
  // order, so every store holds exactly what a serial load would make.
  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(spec));
    struct Planned {
      uint64_t keynum;
      uint32_t shard;
      workload::Workload::RecordPlan plan;
    };
    const uint32_t shards = static_cast<uint32_t>(servers_.size());
    const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, shards);
    std::vector<std::vector<Planned>> parts(threads);
    const uint64_t first = spec.insertstart, count = spec.effective_insertcount();
    for (std::vector<Planned>& part : parts) part.reserve(count / threads + 1);
    for (uint64_t n = first; n < first + count; ++n) {
      const uint32_t shard = pilaf_shard_of(n, shards);
      parts[shard % threads].push_back({n, shard, loader.plan_record(rng, n, loader.max_value_bytes())});
    }
    std::vector<Status> failed(threads);
    auto load_part = [&](uint32_t part) {
      std::string key(loader.max_key_bytes(), '\0');
      std::string value(loader.max_value_bytes(), '\0');
      for (const Planned& r : parts[part]) {
        const size_t kl = loader.build_key(r.keynum, key.data(), key.size());
        workload::Workload::fill_planned(r.plan, value.data());
        Status st = servers_[r.shard]->store().put(std::string_view(key.data(), kl),
                                                   std::string_view(value.data(), r.plan.length));
        if (!st.is_ok()) {
          failed[part] = std::move(st);
          return;
        }
      }
    };
    std::vector<std::thread> helpers;
    for (uint32_t part = 1; part < threads; ++part) helpers.emplace_back(load_part, part);
    load_part(0);
    for (std::thread& t : helpers) t.join();
    for (Status& st : failed) LOCUS_RETURN_IF_ERROR(std::move(st));
    return Status();
  }

  StatusOr<std::unique_ptr<ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                   std::span<const NodeId> servers) override {
    std::vector<NodeId> nodes(servers.begin(), servers.end());
    const pilaf::GetMode mode = mode_;
    return std::unique_ptr<ClientSession>(new PilafSession(
        nodes.size(), [&ep, &rpc, nodes, mode](uint32_t shard) {
          return pilaf::PilafClient::connect(ep, rpc, nodes[shard], {.mode = mode});
        }));
  }

  // A put, the largest message, is a key and a value of max_kv_bytes
  // together, each with its length, behind the RPC header.
  uint32_t rpc_message_bytes(const scenario::IndexSpec& index) const override {
    return index.max_kv_bytes + rpc::kHeaderBytes + 64;
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
