// Pilaf benchmark driver: see pilaf_bench.h.
#include "core/harness/pilaf_bench.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/index/pilaf/server.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {
namespace {

struct ClientOutcome {
  metrics::OpStats stats;
  pilaf::ClientStats pilaf;
  Nanos elapsed_ns = 0;
  Status error;
};

// Runs one client's share of the transaction phase.
void run_client(Env& env, NodeId server, const PilafBenchConfig& config, uint64_t ops,
                const std::shared_ptr<workload::AcknowledgedCounter>& inserts, ClientOutcome* out) {
  Endpoint ep(env);
  auto rpc = rpc::RpcClient::create(ep);
  if (!rpc.is_ok()) {
    out->error = rpc.status();
    return;
  }
  auto client = pilaf::PilafClient::connect(ep, **rpc, server, {.mode = config.mode});
  if (!client.is_ok()) {
    out->error = client.status();
    return;
  }
  auto wl = workload::Workload::create(config.workload, inserts);
  if (!wl.is_ok()) {
    out->error = wl.status();
    return;
  }
  metrics::OpStats& st = out->stats;
  using workload::OpKind;
  // Ids are registered on first use so the results list only operations that ran.
  constexpr metrics::OpStats::OpId kUnset = UINT32_MAX;
  metrics::OpStats::OpId ids[workload::kOpKindCount] = {kUnset, kUnset, kUnset, kUnset, kUnset};
  auto id_of = [&](OpKind kind) {
    auto& id = ids[static_cast<int>(kind)];
    if (id == kUnset) id = st.op(workload::op_kind_name(kind));
    return id;
  };
  const auto not_found = st.counter("read_not_found");
  std::string key(wl->max_key_bytes(), '\0');
  std::string value(wl->max_value_bytes(), '\0');
  Random& rng = *env.random;
  const Nanos start = env.clock->now();
  for (uint64_t i = 0; i < ops; ++i) {
    const workload::Op op = wl->next_operation(rng);
    const size_t klen = wl->build_key(op.keynum, key.data(), key.size());
    const std::string_view k(key.data(), klen);
    const Nanos t0 = env.clock->now();
    Status s;
    switch (op.kind) {
      case OpKind::kRead: {
        auto got = (*client)->get(k);
        s = got.status();
        if (s.code() == StatusCode::kNotFound) {
          st.add(not_found);
          s = Status();
        }
        break;
      }
      case OpKind::kUpdate:
      case OpKind::kInsert: {
        // A key-value store replaces the whole value: every update writes a full record.
        const size_t vlen = wl->build_record(rng, op.keynum, value.data(), value.size());
        s = (*client)->put(k, std::string_view(value.data(), vlen));
        if (op.kind == OpKind::kInsert) (void)wl->acknowledge_insert(op.keynum);
        break;
      }
      case OpKind::kReadModifyWrite: {
        auto got = (*client)->get(k);
        if (!got.is_ok() && got.status().code() != StatusCode::kNotFound) {
          s = got.status();
          break;
        }
        const size_t vlen = wl->build_record(rng, op.keynum, value.data(), value.size());
        s = (*client)->put(k, std::string_view(value.data(), vlen));
        break;
      }
      case OpKind::kScan: s = unimplemented("pilaf has no scans"); break;
    }
    st.record(id_of(op.kind), env.clock->now() - t0, s.is_ok());
    if (!s.is_ok() && out->error.is_ok()) out->error = s;  // keep the first; carry on
    // ... unless the server is gone: every later operation would fail too.
    if (s.code() == StatusCode::kRetryExceeded || s.code() == StatusCode::kUnavailable ||
        s.code() == StatusCode::kFlushed || s.code() == StatusCode::kTimeout) {
      break;
    }
  }
  out->elapsed_ns = env.clock->now() - start;
  out->pilaf = (*client)->stats();
  if (out->pilaf.retries() > 0) st.add_retries(id_of(OpKind::kRead), out->pilaf.retries());
}

}  // namespace

Status validate(const PilafBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(config.workload.validate());
  if (config.workload.scanproportion > 0) {
    return invalid_argument("scanproportion: pilaf is a hash table and cannot scan (workload E)");
  }
  if (config.clients == 0) return invalid_argument("clients: must be at least 1");
  const uint64_t record_bytes = uint64_t{config.workload.fieldcount} * config.workload.fieldlength;
  if (record_bytes + 64 + pilaf::kExtentHeaderBytes > config.store.max_kv_bytes) {
    return invalid_argument("fieldcount * fieldlength: records of " + std::to_string(record_bytes) +
                            " bytes exceed the store's max_kv_bytes " +
                            std::to_string(config.store.max_kv_bytes));
  }
  return Status();
}

StatusOr<PilafServerSet> start_pilaf_server(Env env, const pilaf::StoreOptions& store,
                                            const workload::WorkloadSpec& load) {
  PilafServerSet set;
  LOCUS_ASSIGN_OR_RETURN(set.rpc, rpc::RpcServer::create(env));
  LOCUS_ASSIGN_OR_RETURN(set.pilaf, pilaf::PilafServer::create(env, store));
  LOCUS_RETURN_IF_ERROR(set.pilaf->attach(*set.rpc));
  // Load phase, on the server's own memory.
  LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(load));
  std::string key(loader.max_key_bytes(), '\0');
  std::string value(loader.max_value_bytes(), '\0');
  const uint64_t first = load.insertstart;
  const uint64_t count = load.effective_insertcount();
  for (uint64_t n = first; n < first + count; ++n) {
    const size_t kl = loader.build_key(n, key.data(), key.size());
    const size_t vl = loader.build_record(*env.random, n, value.data(), value.size());
    LOCUS_RETURN_IF_ERROR(
        set.pilaf->store().put(std::string_view(key.data(), kl), std::string_view(value.data(), vl)));
  }
  return set;
}

StatusOr<metrics::RunResult> run_pilaf_clients(Runtime& runtime, NodeId server_node,
                                               const PilafBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  auto inserts = workload::Workload::make_insert_counter(config.workload);
  std::vector<ClientOutcome> outcomes(config.clients);
  const uint64_t total_ops = config.workload.operationcount;
  for (uint32_t c = 0; c < config.clients; ++c) {
    const uint64_t share = total_ops / config.clients + (c < total_ops % config.clients ? 1 : 0);
    LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime.add_node({"client" + std::to_string(c), false}));
    ClientOutcome* out = &outcomes[c];
    LOCUS_RETURN_IF_ERROR(runtime.spawn(
        node, "client" + std::to_string(c), ActorKind::kWorker,
        [server_node, &config, share, inserts, out](Env& env) {
          run_client(env, server_node, config, share, inserts, out);
        }));
  }
  LOCUS_RETURN_IF_ERROR(runtime.run());

  metrics::RunResult result;
  result.name = config.name;
  result.backend = std::string(runtime.backend_name());
  result.index = "pilaf";
  result.seed = config.seed;
  pilaf::ClientStats sum;
  for (const ClientOutcome& o : outcomes) {
    if (!o.error.is_ok()) return o.error;
    result.stats.merge(o.stats);
    result.duration_ns = std::max(result.duration_ns, o.elapsed_ns);
    sum.entry_retries += o.pilaf.entry_retries;
    sum.extent_retries += o.pilaf.extent_retries;
    sum.miss_rechecks += o.pilaf.miss_rechecks;
    sum.layout_refreshes += o.pilaf.layout_refreshes;
    sum.entry_reads += o.pilaf.entry_reads;
    sum.extent_reads += o.pilaf.extent_reads;
  }
  result.extra["clients"] = config.clients;
  result.extra["records"] = static_cast<double>(config.workload.recordcount);
  result.extra["entry_retries"] = static_cast<double>(sum.entry_retries);
  result.extra["extent_retries"] = static_cast<double>(sum.extent_retries);
  result.extra["miss_rechecks"] = static_cast<double>(sum.miss_rechecks);
  result.extra["rdma_reads"] = static_cast<double>(sum.entry_reads + sum.extent_reads);
  return result;
}

StatusOr<metrics::RunResult> run_pilaf_bench(const RuntimeFactory& make_runtime,
                                             const PilafBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  std::unique_ptr<Runtime> runtime = make_runtime(config.seed);
  LOCUS_ASSIGN_OR_RETURN(NodeId server_node, runtime->add_node({"server0", true}));
  LOCUS_ASSIGN_OR_RETURN(PilafServerSet server,
                         start_pilaf_server(runtime->setup_env(server_node), config.store, config.workload));
  rpc::RpcServer* srv = server.rpc.get();
  LOCUS_RETURN_IF_ERROR(runtime->spawn(server_node, "server0", ActorKind::kDaemon,
                                       [srv](Env&) { srv->serve(); }));
  LOCUS_ASSIGN_OR_RETURN(metrics::RunResult result, run_pilaf_clients(*runtime, server_node, config));
  const rpc::RpcServerStats rs = server.rpc->stats();
  result.extra["server_rpcs"] = static_cast<double>(rs.requests);
  result.extra["rpc_rejected"] = static_cast<double>(rs.rejected());
  const pilaf::StoreStats ss = server.pilaf->store().stats();
  result.extra["cuckoo_kicks"] = static_cast<double>(ss.kicks);
  result.extra["table_grows"] = static_cast<double>(ss.table_grows);
  return result;
}

}  // namespace locus::harness
