// Cell benchmark driver: see cell_bench.h.
#include "core/harness/cell_bench.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "core/harness/client_actors.h"
#include "core/memory/extent.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {
namespace {

struct ClientOutcome {
  metrics::OpStats stats;
  cell::ClientStats cell;
  selector::SelectorStats selector;
  Nanos elapsed_ns = 0;
  Status error;
};

// Counts scanned records; the values are not kept.
struct CountingSink final : cell::RangeSink {
  uint64_t records = 0;
  bool accept(std::string_view, std::string_view) override {
    ++records;
    return true;
  }
};

void run_client(Env& env, NodeId bootstrap, const CellBenchConfig& config, uint64_t ops,
                const std::shared_ptr<workload::AcknowledgedCounter>& inserts, ClientOutcome* out) {
  Endpoint ep(env);
  rpc::RpcClientOptions ro;
  ro.max_message_bytes = config.server.max_message_bytes;  // as Deployment::client_rpc_options()
  auto rpc = rpc::RpcClient::create(ep, ro);
  if (!rpc.is_ok()) {
    out->error = rpc.status();
    return;
  }
  auto selector = selector::make_selector(config.selector, *env.random);
  if (!selector.is_ok()) {
    out->error = selector.status();
    return;
  }
  auto client = cell::CellClient::connect(ep, **rpc, bootstrap, **selector, config.client);
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
  constexpr metrics::OpStats::OpId kUnset = UINT32_MAX;
  metrics::OpStats::OpId ids[workload::kOpKindCount] = {kUnset, kUnset, kUnset, kUnset, kUnset};
  auto id_of = [&](OpKind kind) {
    auto& id = ids[static_cast<int>(kind)];
    if (id == kUnset) id = st.op(workload::op_kind_name(kind));
    return id;
  };
  const auto not_found = st.counter("read_not_found");
  const auto scanned = st.counter("scanned_records");
  std::string key(wl->max_key_bytes(), '\0');
  std::string value(wl->max_value_bytes(), '\0');
  CountingSink sink;
  Random& rng = *env.random;
  cell::CellClient& c = **client;
  const Nanos start = env.clock->now();
  for (uint64_t i = 0; i < ops; ++i) {
    const workload::Op op = wl->next_operation(rng);
    const size_t klen = wl->build_key(op.keynum, key.data(), key.size());
    const std::string_view k(key.data(), klen);
    const Nanos t0 = env.clock->now();
    Status s;
    switch (op.kind) {
      case OpKind::kRead: {
        s = c.get(k).status();
        if (s.code() == StatusCode::kNotFound) {
          st.add(not_found);
          s = Status();
        }
        break;
      }
      case OpKind::kUpdate:
      case OpKind::kInsert: {
        const size_t vlen = wl->build_record(rng, op.keynum, value.data(), value.size());
        s = c.put(k, std::string_view(value.data(), vlen));
        if (op.kind == OpKind::kInsert) (void)wl->acknowledge_insert(op.keynum);
        break;
      }
      case OpKind::kScan: {
        sink.records = 0;
        s = c.range(k, std::nullopt, op.scan_length, sink).status();
        st.add(scanned, static_cast<int64_t>(sink.records));
        break;
      }
      case OpKind::kReadModifyWrite: {
        auto got = c.get(k);
        if (!got.is_ok() && got.status().code() != StatusCode::kNotFound) {
          s = got.status();
          break;
        }
        const size_t vlen = wl->build_record(rng, op.keynum, value.data(), value.size());
        s = c.put(k, std::string_view(value.data(), vlen));
        break;
      }
    }
    st.record(id_of(op.kind), env.clock->now() - t0, s.is_ok());
    if (!s.is_ok() && out->error.is_ok()) out->error = s;  // keep the first; carry on
  }
  out->elapsed_ns = env.clock->now() - start;
  out->cell = c.stats();
  out->selector = (*selector)->stats();
  if (out->cell.restarts > 0) st.add_retries(id_of(OpKind::kRead), out->cell.restarts);
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
  auto inserts = workload::Workload::make_insert_counter(config.workload);
  std::vector<ClientOutcome> outcomes(config.clients);
  LOCUS_RETURN_IF_ERROR(run_client_actors(runtime, config.clients, config.workload.operationcount,
                                          [&](Env& env, uint32_t c, uint64_t ops) {
                                            run_client(env, bootstrap, config, ops, inserts, &outcomes[c]);
                                          }));

  metrics::RunResult result;
  result.name = config.name;
  result.backend = std::string(runtime.backend_name());
  result.index = "cell";
  result.seed = config.seed;
  cell::ClientStats sum;
  selector::SelectorStats sel;
  for (const ClientOutcome& o : outcomes) {
    if (!o.error.is_ok()) return o.error;
    result.stats.merge(o.stats);
    result.duration_ns = std::max(result.duration_ns, o.elapsed_ns);
    sum.server_steps += o.cell.server_steps;
    sum.client_steps += o.cell.client_steps;
    sum.write_rpcs += o.cell.write_rpcs;
    sum.node_reads += o.cell.node_reads;
    sum.torn_reads += o.cell.torn_reads;
    sum.node_cache_hits += o.cell.node_cache_hits;
    sum.path_cache_hits += o.cell.path_cache_hits;
    sum.extent_retries += o.cell.extent_retries;
    sum.restarts += o.cell.restarts;
    sum.busy_retries += o.cell.busy_retries;
    sel.server_choices += o.selector.server_choices;
    sel.client_choices += o.selector.client_choices;
    sel.explorations += o.selector.explorations;
    sel.history_drops += o.selector.history_drops;
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
