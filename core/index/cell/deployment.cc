// Deployment: see deployment.h.
#include "core/index/cell/deployment.h"

namespace locus::cell {

StatusOr<std::unique_ptr<Deployment>> Deployment::create(Runtime& runtime, const DeploymentOptions& options) {
  if (options.servers == 0 || options.servers > 1000) {
    return invalid_argument("cell deployment: servers must be in [1, 1000]");
  }
  LOCUS_RETURN_IF_ERROR(options.server.validate());
  std::unique_ptr<Deployment> d(new Deployment(runtime, options));
  LOCUS_RETURN_IF_ERROR(d->init());
  return d;
}

Deployment::Deployment(Runtime& runtime, const DeploymentOptions& options) : runtime_(runtime), options_(options) {}

Deployment::~Deployment() {
  // CellServers deregister their regions; RPC servers after them.
  servers_.clear();
  rpc_.clear();
}

rpc::RpcClientOptions Deployment::client_rpc_options() const {
  rpc::RpcClientOptions o;
  o.max_message_bytes = options_.server.max_message_bytes;
  return o;
}

Status Deployment::init() {
  layout_.geometry = options_.server.store.geometry;
  layout_.max_kv_bytes = options_.server.store.max_kv_bytes;
  direct_ = std::make_unique<DirectTree>(layout_, options_.split, options_.server.max_message_bytes);
  for (uint32_t i = 0; i < options_.servers; ++i) {
    LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime_.add_node({"cell-server" + std::to_string(i), true}));
    LOCUS_ASSIGN_OR_RETURN(NodeId worker, runtime_.add_node({"cell-split" + std::to_string(i), false}));
    worker_nodes_.push_back(worker);
    Env env = runtime_.setup_env(node);
    rpc::RpcServerOptions ro;
    ro.max_message_bytes = options_.server.max_message_bytes;
    ro.recv_buffers = options_.rpc_recv_buffers;
    ro.send_buffers = options_.rpc_send_buffers;
    LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcServer::create(env, ro));
    LOCUS_ASSIGN_OR_RETURN(auto server, CellServer::create(env, static_cast<CellRegionId>(2 * i), options_.server));
    LOCUS_RETURN_IF_ERROR(server->attach(*rpc));
    layout_.regions.push_back(server->node_region());
    layout_.regions.push_back(server->extent_region());
    direct_->add(server.get(), env);
    rpc_.push_back(std::move(rpc));
    servers_.push_back(std::move(server));
  }
  for (auto& s : servers_) s->set_layout(layout_);
  LOCUS_RETURN_IF_ERROR(servers_[0]->plant_tree());
  return resolve_splits();
}

Status Deployment::resolve_splits() {
  std::vector<CellServer*> servers;
  for (auto& s : servers_) servers.push_back(s.get());
  return CellServer::resolve_replayed_splits(servers);
}

Status Deployment::spawn_daemons() {
  for (size_t i = 0; i < servers_.size(); ++i) {
    rpc::RpcServer* rpc = rpc_[i].get();
    CellServer* server = servers_[i].get();
    SplitWorkerShared* shared = &shared_;
    const Nanos poll = options_.serve_poll_ns;
    LOCUS_RETURN_IF_ERROR(runtime_.spawn(
        server->node_id(), "cell-server" + std::to_string(i), ActorKind::kDaemon, [rpc, shared, poll](Env& env) {
          while (!env.stop_requested() || shared->in_flight.load(std::memory_order_seq_cst) > 0) {
            rpc->serve_once(poll);
          }
        }));
    const SplitDriverOptions split = options_.split;
    LOCUS_RETURN_IF_ERROR(
        runtime_.spawn(worker_nodes_[i], "cell-split" + std::to_string(i), ActorKind::kDaemon,
                       [server, split, shared](Env& env) { run_split_worker(env, *server, split, *shared); }));
  }
  return Status();
}

StatusOr<OpResponse> Deployment::direct_op(OpKind op, std::string_view key, std::string_view value) {
  return direct_->op(op, key, value);
}

Status Deployment::load(std::string_view key, std::string_view value) { return direct_->put(key, value); }

StatusOr<uint64_t> Deployment::direct_range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                            RangeSink& sink) {
  return direct_->range(start, end, limit, sink);
}

DeploymentStats Deployment::stats() const {
  DeploymentStats d;
  for (size_t i = 0; i < servers_.size(); ++i) {
    const StoreStats s = servers_[i]->store().stats();
    d.store.keys += s.keys;
    d.store.node_splits += s.node_splits;
    d.store.root_splits += s.root_splits;
    d.store.meganode_splits += s.meganode_splits;
    d.store.meganodes_built += s.meganodes_built;
    d.store.meganodes_in_use += s.meganodes_in_use;
    d.store.nodes_in_use += s.nodes_in_use;
    d.store.busy_replies += s.busy_replies;
    d.store.extent_bytes_in_use += s.extent_bytes_in_use;
    const rpc::RpcServerStats rs = rpc_[i]->stats();
    d.rpc_requests += rs.requests;
    d.rpc_rejected += rs.rejected();
  }
  const SplitDriverStats& load_splits = direct_->split_stats();
  d.splits = shared_.splits + load_splits.splits;
  d.remote_placements = shared_.remote_placements + load_splits.remote_placements;
  d.new_roots = shared_.new_roots + load_splits.new_roots;
  d.parents_abandoned = shared_.parents_abandoned + load_splits.parents_abandoned;
  d.split_failures = shared_.failures;
  d.first_split_error = shared_.first_error();
  d.root_level = servers_[0]->store().root_level();
  return d;
}

Status Deployment::check_invariants() const {
  for (const auto& s : servers_) LOCUS_RETURN_IF_ERROR(s->store().check_invariants());
  return Status();
}

}  // namespace locus::cell
