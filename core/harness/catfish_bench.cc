// Catfish benchmark driver: see catfish_bench.h.
#include "core/harness/catfish_bench.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/harness/catfish_session.h"
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

struct ClientOutcome : ClientRun {
  catfish::CatfishClientStats catfish;
  catfish::OffloadStats offload;
  selector::SelectorStats selector;
};

// Connects client share.index over RPC and runs its share of the operations.
// An error connecting is returned; the first failed operation's is kept in
// out.error and the client carries on.
Status run_client(Env& env, NodeId bootstrap, const CatfishBenchConfig& config, const ClientShare& share,
                  ClientOutcome& out) {
  Endpoint ep(env);
  LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcClient::create(ep));
  LOCUS_ASSIGN_OR_RETURN(auto sel, selector::make_selector(config.selector, *env.random));
  LOCUS_ASSIGN_OR_RETURN(auto client, catfish::CatfishClient::connect(ep, *rpc, bootstrap, *sel, config.client));
  // Ids of inserted rectangles: above the loaded ones, 2^32 per client.
  const uint64_t first_id = (uint64_t{share.index} + 1) << 32;
  CatfishSession session(std::move(sel), std::move(client), config.query_scale, first_id, *env.random);
  session.count_into(out.stats);
  LOCUS_RETURN_IF_ERROR(run_client_share(env, config.workload, share, session, out));
  out.catfish = session.client_stats();
  out.offload = session.offload_stats();
  out.selector = session.selector_stats();
  if (out.offload.restarts > 0) out.stats.add_retries(out.stats.op("SEARCH"), out.offload.restarts);
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
  LOCUS_ASSIGN_OR_RETURN(auto outcomes, run_bench_clients<ClientOutcome>(
                                             runtime, config.clients, config.workload,
                                             [&](Env& env, const ClientShare& share, ClientOutcome& out) {
                                               return run_client(env, bootstrap, config, share, out);
                                             }));
  metrics::RunResult result = bench_result(runtime, config.name, "catfish", config.seed);
  catfish::CatfishClientStats sum;
  catfish::OffloadStats offload;
  selector::SelectorStats sel;
  for (const ClientOutcome& o : outcomes) {
    LOCUS_RETURN_IF_ERROR(merge_client_run(o, result));
    sum += o.catfish;
    offload += o.offload;
    sel += o.selector;
  }
  const uint64_t searches = sum.server_searches + sum.client_searches;
  result.extra["clients"] = config.clients;
  result.extra["rectangles"] = static_cast<double>(config.workload.recordcount);
  result.extra["server_share"] = sel.server_share();
  result.extra["server_searches"] = static_cast<double>(sum.server_searches);
  result.extra["client_searches"] = static_cast<double>(sum.client_searches);
  result.extra["fallbacks"] = static_cast<double>(sum.fallbacks);
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
