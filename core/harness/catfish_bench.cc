// Catfish benchmark driver: see catfish_bench.h.
#include "core/harness/catfish_bench.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/harness/client_actors.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::harness {
namespace {

using catfish::Rect;

constexpr uint32_t kMaxResponseBytes = 256 * 1024;
// Connect slots per worker beyond its share of the clients.
constexpr uint32_t kSpareConnections = 4;

Rect rect_of(const workload::SpatialBox& b) { return {b.x_min, b.y_min, b.x_max, b.y_max}; }

struct ClientOutcome {
  metrics::OpStats stats;
  catfish::CatfishClientStats catfish;
  catfish::OffloadStats offload;
  selector::SelectorStats selector;
  Nanos elapsed_ns = 0;
  Status error;
};

// One client actor: connect over RPC, then its share of the operations.
// An operation that fails is counted and the run goes on; the first such
// error is kept in out->error.
Status run_client(Env& env, NodeId bootstrap, const CatfishBenchConfig& config, uint32_t index, uint64_t ops,
                  const std::shared_ptr<workload::AcknowledgedCounter>& inserts, ClientOutcome* out) {
  Endpoint ep(env);
  LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcClient::create(ep));
  LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(config.selector, *env.random));
  LOCUS_ASSIGN_OR_RETURN(auto client, catfish::CatfishClient::connect(ep, *rpc, bootstrap, *sel, config.client));
  LOCUS_ASSIGN_OR_RETURN(auto wl, workload::Workload::create(config.workload, inserts));
  metrics::OpStats& st = out->stats;
  // Named on first use, so a run lists only the operations it did.
  constexpr metrics::OpStats::OpId kUnset = UINT32_MAX;
  enum : size_t { kSearch, kInsert, kSearchInsert };
  const char* const names[] = {"SEARCH", "INSERT", "SEARCH-INSERT"};
  metrics::OpStats::OpId ids[] = {kUnset, kUnset, kUnset};
  auto id_of = [&](size_t op) {
    if (ids[op] == kUnset) ids[op] = st.op(names[op]);
    return ids[op];
  };
  const auto hits_counter = st.counter("hits");
  const workload::SpatialGenerator generator;
  std::vector<catfish::Hit> hits;
  hits.reserve(4096);
  // Ids of inserted rectangles: above the loaded ones, 2^32 per client.
  uint64_t next_id = (uint64_t{index} + 1) << 32;
  Random& rng = *env.random;
  catfish::CatfishClient& c = *client;
  auto search = [&](uint64_t keynum) {
    Status s = c.search(rect_of(workload::place_at_key(generator.query(rng, config.query_scale), keynum)), &hits);
    st.add(hits_counter, static_cast<int64_t>(hits.size()));
    return s;
  };
  auto insert = [&](uint64_t keynum) {
    return c.insert(rect_of(workload::place_at_key(generator.data(rng), keynum)), next_id++);
  };
  const Nanos start = env.clock->now();
  for (uint64_t i = 0; i < ops; ++i) {
    using workload::OpKind;
    const workload::Op op = wl.next_operation(rng);
    const Nanos t0 = env.clock->now();
    Status s;
    size_t kind = kSearch;
    switch (op.kind) {
      case OpKind::kRead:
      case OpKind::kScan: s = search(op.keynum); break;
      case OpKind::kUpdate:
      case OpKind::kInsert:
        kind = kInsert;
        s = insert(op.keynum);
        if (op.kind == OpKind::kInsert) (void)wl.acknowledge_insert(op.keynum);
        break;
      case OpKind::kReadModifyWrite:
        kind = kSearchInsert;
        s = search(op.keynum);
        if (s.is_ok()) s = insert(op.keynum);
        break;
    }
    st.record(id_of(kind), env.clock->now() - t0, s.is_ok());
    if (!s.is_ok() && out->error.is_ok()) out->error = s;  // keep the first; carry on
  }
  out->elapsed_ns = env.clock->now() - start;
  out->catfish = c.stats();
  out->offload = c.offload_stats();
  out->selector = sel->stats();
  if (out->offload.restarts > 0) st.add_retries(id_of(kSearch), out->offload.restarts);
  return Status();
}

uint32_t connections_per_worker(const CatfishBenchConfig& config) {
  const uint32_t set = config.server.messaging.connections_per_worker;
  return set != 0 ? set : (config.clients + config.workers - 1) / config.workers + kSpareConnections;
}

}  // namespace

catfish::CatfishServerOptions CatfishBenchConfig::default_server_options() {
  catfish::CatfishServerOptions o;
  o.store.geometry.node_bytes = 1024;
  o.store.geometry.node_slots = 0;
  o.messaging.connections_per_worker = 0;
  o.messaging.max_response_bytes = kMaxResponseBytes;
  return o;
}

catfish::CatfishClientOptions CatfishBenchConfig::default_client_options() {
  catfish::CatfishClientOptions o;
  o.messaging.max_response_bytes = kMaxResponseBytes;
  return o;
}

uint32_t node_slots_for(const catfish::Geometry& geometry, uint64_t rectangles) {
  const uint64_t min_fill = geometry.min_fill();
  return static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, 3 * rectangles / min_fill + 8192));
}

Status validate(const CatfishBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(config.workload.validate());
  LOCUS_RETURN_IF_ERROR(config.selector.validate());
  if (config.clients == 0) return invalid_argument("clients: must be at least 1");
  if (config.workers == 0) return invalid_argument("workers: must be at least 1");
  if (config.client.messaging.max_response_bytes < config.server.messaging.max_response_bytes) {
    return invalid_argument("client max_response_bytes " + std::to_string(config.client.messaging.max_response_bytes) +
                            " is below the server's " + std::to_string(config.server.messaging.max_response_bytes) +
                            ": large answers would fail");
  }
  return Status();
}

Rect loaded_rectangle(uint64_t seed, uint64_t id) {
  static const workload::SpatialGenerator generator;
  Random rng((seed ^ 0xCA7F15ULL) * 0x9E3779B97F4A7C15ULL + id);
  return rect_of(generator.data(rng));
}

Status CatfishServerSet::spawn_daemons(Runtime& runtime) {
  rpc::RpcServer* connects = rpc.get();
  LOCUS_RETURN_IF_ERROR(runtime.spawn(bootstrap, "catfish.connect", ActorKind::kDaemon,
                                      [connects](Env&) { connects->serve(); }));
  catfish::CatfishServer* srv = server.get();
  for (uint32_t w = 0; w < workers.size(); ++w) {
    LOCUS_RETURN_IF_ERROR(runtime.spawn(workers[w], "catfish.worker" + std::to_string(w), ActorKind::kDaemon,
                                        [srv, w](Env& env) { srv->serve(w, env); }));
  }
  return Status();
}

StatusOr<CatfishServerSet> start_catfish_servers(Runtime& runtime, const CatfishBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  CatfishServerSet set;
  LOCUS_ASSIGN_OR_RETURN(set.bootstrap, runtime.add_node({"catfish.connect", true}));
  std::vector<Env> envs;
  for (uint32_t w = 0; w < config.workers; ++w) {
    LOCUS_ASSIGN_OR_RETURN(NodeId node,
                           runtime.add_node({"catfish.worker" + std::to_string(w), true, set.bootstrap}));
    set.workers.push_back(node);
    envs.push_back(runtime.setup_env(node));
  }
  catfish::CatfishServerOptions options = config.server;
  options.messaging.connections_per_worker = connections_per_worker(config);
  if (options.store.geometry.node_slots == 0) {
    // Room for every rectangle, run-phase inserts included.
    options.store.geometry.node_slots =
        node_slots_for(options.store.geometry, config.workload.recordcount + config.workload.operationcount);
  }
  LOCUS_ASSIGN_OR_RETURN(set.server, catfish::CatfishServer::create(envs, options));
  for (uint64_t id = 0; id < config.workload.recordcount; ++id) {
    LOCUS_RETURN_IF_ERROR(set.server->load(loaded_rectangle(config.seed, id), id));
  }
  LOCUS_ASSIGN_OR_RETURN(set.rpc, rpc::RpcServer::create(runtime.setup_env(set.bootstrap)));
  LOCUS_RETURN_IF_ERROR(set.server->serve_connects(*set.rpc));
  return set;
}

StatusOr<metrics::RunResult> run_catfish_clients(Runtime& runtime, NodeId bootstrap,
                                                 const CatfishBenchConfig& config) {
  LOCUS_RETURN_IF_ERROR(validate(config));
  auto inserts = workload::Workload::make_insert_counter(config.workload);
  std::vector<ClientOutcome> outcomes(config.clients);
  LOCUS_RETURN_IF_ERROR(run_client_actors(
      runtime, config.clients, config.workload.operationcount, [&](Env& env, uint32_t c, uint64_t ops) {
        ClientOutcome& out = outcomes[c];
        Status st = run_client(env, bootstrap, config, c, ops, inserts, &out);
        if (!st.is_ok()) out.error = st;
      }));

  metrics::RunResult result;
  result.name = config.name;
  result.backend = std::string(runtime.backend_name());
  result.index = "catfish";
  result.seed = config.seed;
  catfish::CatfishClientStats sum;
  catfish::OffloadStats offload;
  selector::SelectorStats sel;
  for (const ClientOutcome& o : outcomes) {
    if (!o.error.is_ok()) return o.error;
    result.stats.merge(o.stats);
    result.duration_ns = std::max(result.duration_ns, o.elapsed_ns);
    sum.server_searches += o.catfish.server_searches;
    sum.client_searches += o.catfish.client_searches;
    sum.inserts += o.catfish.inserts;
    sum.hits += o.catfish.hits;
    offload.node_reads += o.offload.node_reads;
    offload.batches += o.offload.batches;
    offload.torn_reads += o.offload.torn_reads;
    offload.restarts += o.offload.restarts;
    sel.server_choices += o.selector.server_choices;
    sel.client_choices += o.selector.client_choices;
  }
  const uint64_t searches = sum.server_searches + sum.client_searches;
  result.extra["clients"] = config.clients;
  result.extra["rectangles"] = static_cast<double>(config.workload.recordcount);
  result.extra["server_share"] = sel.server_share();
  result.extra["server_searches"] = static_cast<double>(sum.server_searches);
  result.extra["client_searches"] = static_cast<double>(sum.client_searches);
  result.extra["inserts"] = static_cast<double>(sum.inserts);
  result.extra["hits_per_search"] = searches == 0 ? 0.0 : static_cast<double>(sum.hits) / static_cast<double>(searches);
  result.extra["node_reads"] = static_cast<double>(offload.node_reads);
  result.extra["read_batches"] = static_cast<double>(offload.batches);
  result.extra["torn_reads"] = static_cast<double>(offload.torn_reads);
  result.extra["restarts"] = static_cast<double>(offload.restarts);
  return result;
}

StatusOr<metrics::RunResult> run_catfish_bench(const RuntimeFactory& make_runtime, const CatfishBenchConfig& config) {
  // Declared first, destroyed last: the server deregisters through it.
  std::unique_ptr<Runtime> runtime = make_runtime(config.seed);
  LOCUS_ASSIGN_OR_RETURN(CatfishServerSet set, start_catfish_servers(*runtime, config));
  LOCUS_RETURN_IF_ERROR(set.spawn_daemons(*runtime));
  LOCUS_ASSIGN_OR_RETURN(metrics::RunResult result, run_catfish_clients(*runtime, set.bootstrap, config));
  const catfish::StoreStats store = set.server->store_stats();
  const catfish::CatfishServerStats cs = set.server->stats();
  const catfish::MessagingServerStats ms = set.server->messaging().stats();
  result.extra["workers"] = config.workers;
  result.extra["tree_height"] = store.height;
  result.extra["server_hits_per_search"] =
      cs.searches == 0 ? 0.0 : static_cast<double>(cs.hits_returned) / static_cast<double>(cs.searches);
  result.extra["heartbeats"] = static_cast<double>(ms.heartbeats);
  result.extra["connects"] = static_cast<double>(cs.connects);
  // Misbehaving connections; clients that leave before the servers stop
  // are counted as disconnected instead.
  result.extra["dropped_connections"] = static_cast<double>(ms.dropped_connections);
  return result;
}

}  // namespace locus::harness
