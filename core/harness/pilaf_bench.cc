// Pilaf benchmark driver: see pilaf_bench.h.
#include "core/harness/pilaf_bench.h"

#include <string>
#include <vector>

#include "core/harness/client_actors.h"
#include "core/harness/pilaf_session.h"
#include "core/index/pilaf/server.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {
namespace {

struct ClientOutcome : ClientRun {
  pilaf::ClientStats pilaf;
};

// Connects one client and runs its share of the transaction phase. An
// error connecting is returned; the first failed operation's is kept in
// out.error and the client carries on, unless the server is gone.
Status run_client(Env& env, NodeId server, const PilafBenchConfig& config, const ClientShare& share,
                  ClientOutcome& out) {
  Endpoint ep(env);
  LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcClient::create(ep));
  LOCUS_ASSIGN_OR_RETURN(auto client, pilaf::PilafClient::connect(ep, *rpc, server, {.mode = config.mode}));
  std::vector<std::unique_ptr<pilaf::PilafClient>> clients;
  clients.push_back(std::move(client));
  PilafSession session(std::move(clients));
  session.count_into(out.stats);
  LOCUS_RETURN_IF_ERROR(run_client_share(env, config.workload, share, session, out, /*stop_when_server_gone=*/true));
  out.pilaf = session.client_stats();
  if (out.pilaf.retries() > 0) out.stats.add_retries(out.stats.op("READ"), out.pilaf.retries());
  return Status();
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
  LOCUS_ASSIGN_OR_RETURN(auto outcomes, run_bench_clients<ClientOutcome>(
                                             runtime, config.clients, config.workload,
                                             [&](Env& env, const ClientShare& share, ClientOutcome& out) {
                                               return run_client(env, server_node, config, share, out);
                                             }));
  metrics::RunResult result = bench_result(runtime, config.name, "pilaf", config.seed);
  pilaf::ClientStats sum;
  for (const ClientOutcome& o : outcomes) {
    LOCUS_RETURN_IF_ERROR(merge_client_run(o, result));
    sum += o.pilaf;
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
