// Cell benchmark driver: see cell_bench.h.
#include "core/harness/cell_bench.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "core/harness/cell_session.h"
#include "core/harness/client_actors.h"
#include "core/memory/extent.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {
namespace {

struct ClientOutcome : ClientRun {
  cell::ClientStats cell;
  selector::SelectorStats selector;
};

// Connects one client and runs its share of the transaction phase. An
// error connecting is returned; the first failed operation's is kept in
// out.error and the client carries on.
Status run_client(Env& env, NodeId bootstrap, const CellBenchConfig& config, const ClientShare& share,
                  ClientOutcome& out) {
  Endpoint ep(env);
  rpc::RpcClientOptions ro;
  ro.max_message_bytes = config.server.max_message_bytes;  // as Deployment::client_rpc_options()
  LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcClient::create(ep, ro));
  LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(config.selector, *env.random));
  LOCUS_ASSIGN_OR_RETURN(auto client, cell::CellClient::connect(ep, *rpc, bootstrap, *sel, config.client));
  CellSession session(std::move(sel), std::move(client));
  session.count_into(out.stats);
  LOCUS_RETURN_IF_ERROR(run_client_share(env, config.workload, share, session, out));
  out.cell = session.client_stats();
  out.selector = session.selector_stats();
  if (out.cell.restarts > 0) out.stats.add_retries(out.stats.op("READ"), out.cell.restarts);
  return Status();
}

}  // namespace

cell::ServerOptions CellBenchConfig::default_server_options() {
  cell::ServerOptions o;
  o.store.geometry.node_bytes = 1024;
  o.store.geometry.key_capacity_bytes = 32;
  o.store.geometry.meganode_nodes = 2048;
  o.store.geometry.meganodes_per_server = 32;
  o.store.extents_bytes = 0;
  return o;
}

Status validate(const CellBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(config.workload.validate());
  LOCUS_RETURN_IF_ERROR(config.selector.validate());
  if (config.clients == 0) return invalid_argument("clients: must be at least 1");
  if (config.servers == 0) return invalid_argument("servers: must be at least 1");
  const uint64_t key_bytes = workload::max_key_bytes(config.workload.zeropadding);
  if (key_bytes > config.server.store.geometry.key_capacity_bytes) {
    return invalid_argument("zeropadding: keys of " + std::to_string(key_bytes) +
                            " bytes exceed the tree's key capacity of " +
                            std::to_string(config.server.store.geometry.key_capacity_bytes));
  }
  const uint64_t record_bytes = uint64_t{config.workload.fieldcount} * config.workload.fieldlength;
  if (record_bytes + key_bytes + memory::kExtentHeaderBytes > config.server.store.max_kv_bytes) {
    return invalid_argument("fieldcount * fieldlength: records of " + std::to_string(record_bytes) +
                            " bytes exceed max_kv_bytes " + std::to_string(config.server.store.max_kv_bytes));
  }
  return Status();
}

StatusOr<std::unique_ptr<cell::Deployment>> start_cell_servers(Runtime& runtime, const CellBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  cell::DeploymentOptions d;
  d.servers = config.servers;
  d.server = config.server;
  d.split = config.split;
  if (d.server.store.extents_bytes == 0) {
    // Room for every record (run-phase inserts included) on one server,
    // in buddy blocks, with slack for skew and updates in flight.
    const uint64_t block = std::bit_ceil<uint64_t>(
        memory::kExtentHeaderBytes + workload::max_key_bytes(config.workload.zeropadding) +
        uint64_t{config.workload.fieldcount} * config.workload.fieldlength);
    const uint64_t records = config.workload.recordcount + config.workload.operationcount;
    d.server.store.extents_bytes =
        std::bit_ceil(std::max<uint64_t>(block * records * 2 / config.servers, uint64_t{16} << 20));
  }
  LOCUS_ASSIGN_OR_RETURN(auto deployment, cell::Deployment::create(runtime, d));
  // Load phase, in the servers' memory.
  LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(config.workload));
  std::string key(loader.max_key_bytes(), '\0');
  std::string value(loader.max_value_bytes(), '\0');
  Random rng(config.seed ^ 0x10AD);
  const uint64_t first = config.workload.insertstart;
  const uint64_t count = config.workload.effective_insertcount();
  for (uint64_t n = first; n < first + count; ++n) {
    const size_t kl = loader.build_key(n, key.data(), key.size());
    const size_t vl = loader.build_record(rng, n, value.data(), value.size());
    LOCUS_RETURN_IF_ERROR(deployment->load(std::string_view(key.data(), kl), std::string_view(value.data(), vl)));
  }
  return deployment;
}

StatusOr<metrics::RunResult> run_cell_clients(Runtime& runtime, NodeId bootstrap, const CellBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  LOCUS_ASSIGN_OR_RETURN(auto outcomes, run_bench_clients<ClientOutcome>(
                                             runtime, config.clients, config.workload,
                                             [&](Env& env, const ClientShare& share, ClientOutcome& out) {
                                               return run_client(env, bootstrap, config, share, out);
                                             }));
  metrics::RunResult result = bench_result(runtime, config.name, "cell", config.seed);
  cell::ClientStats sum;
  selector::SelectorStats sel;
  for (const ClientOutcome& o : outcomes) {
    LOCUS_RETURN_IF_ERROR(merge_client_run(o, result));
    sum += o.cell;
    sel += o.selector;
  }
  result.extra["clients"] = config.clients;
  result.extra["servers"] = config.servers;
  result.extra["records"] = static_cast<double>(config.workload.recordcount);
  result.extra["server_share"] = sel.server_share();
  result.extra["server_steps"] = static_cast<double>(sum.server_steps);
  result.extra["client_steps"] = static_cast<double>(sum.client_steps);
  result.extra["write_rpcs"] = static_cast<double>(sum.write_rpcs);
  result.extra["node_reads"] = static_cast<double>(sum.node_reads);
  result.extra["torn_reads"] = static_cast<double>(sum.torn_reads);
  result.extra["torn_fallbacks"] = static_cast<double>(sum.torn_fallbacks);
  result.extra["node_cache_hits"] = static_cast<double>(sum.node_cache_hits);
  result.extra["path_cache_hits"] = static_cast<double>(sum.path_cache_hits);
  result.extra["extent_retries"] = static_cast<double>(sum.extent_retries);
  result.extra["restarts"] = static_cast<double>(sum.restarts);
  result.extra["busy_retries"] = static_cast<double>(sum.busy_retries);
  result.extra["explorations"] = static_cast<double>(sel.explorations);
  result.extra["history_drops"] = static_cast<double>(sel.history_drops);
  return result;
}

StatusOr<metrics::RunResult> run_cell_bench(const RuntimeFactory& make_runtime, const CellBenchConfig& config) {
  // Declared first, destroyed last: the deployment deregisters through it.
  std::unique_ptr<Runtime> runtime = make_runtime(config.seed);
  LOCUS_ASSIGN_OR_RETURN(auto deployment, start_cell_servers(*runtime, config));
  const cell::DeploymentStats loaded = deployment->stats();
  LOCUS_RETURN_IF_ERROR(deployment->spawn_daemons());
  LOCUS_ASSIGN_OR_RETURN(metrics::RunResult result, run_cell_clients(*runtime, deployment->bootstrap(), config));
  const cell::DeploymentStats ds = deployment->stats();
  result.extra["meganodes"] = static_cast<double>(ds.store.meganodes_in_use);
  result.extra["meganode_splits_load"] = static_cast<double>(loaded.splits);
  result.extra["meganode_splits_run"] = static_cast<double>(ds.splits - loaded.splits);
  result.extra["node_splits"] = static_cast<double>(ds.store.node_splits);
  result.extra["root_level"] = ds.root_level;
  result.extra["split_failures"] = static_cast<double>(ds.split_failures);
  result.extra["rpc_rejected"] = static_cast<double>(ds.rpc_rejected);
  return result;
}

}  // namespace locus::harness
