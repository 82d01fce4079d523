// VerbsRuntime: endpoints by NodeId (servers at their config index, this
// process's clients after them) and actors as OS threads, as on loopback.
#include "backends/verbs/verbs_runtime.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "backends/os/thread_actors.h"
#include "backends/verbs/shadow_transport.h"
#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {
namespace {

class VerbsRuntimeImpl final : public VerbsRuntime {
 public:
  VerbsRuntimeImpl(const ClusterConfig& config, const VerbsRuntimeOptions& options)
      : directory_(config, options.log_connections),
        listen_first_(options.listen_first),
        listen_end_(options.listen_end),
        hold_connections_(options.hold_connections),
        client_id_base_(options.client_id_base),
        actors_(options.seed) {}

  ~VerbsRuntimeImpl() override {
    actors_.join_daemons();
    // Reverse creation order: clients disconnect before their servers go.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) endpoints_[*it].reset();
  }

  std::string_view backend_name() const override { return "verbs"; }
  uint32_t server_count() const override { return directory_.server_count(); }

  StatusOr<NodeId> add_node(const NodeOptions& options) override {
    if (options.is_server) {
      for (uint32_t i = 0; i < directory_.server_count(); ++i) {
        if (local(i) != nullptr || shadow(i) != nullptr) continue;
        if (i >= listen_first_ && i < listen_end_) return add_server(i);
        if (shadows_.size() <= i) shadows_.resize(i + 1);
        shadows_[i] = std::make_unique<ShadowTransport>(directory_, i);
        return i;
      }
      return resource_exhausted("add_node(" + options.name + "): every server of " + directory_.source() +
                                " already runs in this process; list more [[server]] entries");
    }
    const NodeId id = directory_.server_count() + client_id_base_ + client_count_;
    LOCUS_RETURN_IF_ERROR(create(id, options.name.empty() ? "client" + std::to_string(client_count_) : options.name,
                                 VerbsEndpoint::Role::kClient));
    ++client_count_;
    return id;
  }

  StatusOr<NodeId> add_server(uint32_t config_index) override {
    if (config_index >= directory_.server_count()) {
      return invalid_argument("node " + std::to_string(config_index) + ": " + directory_.source() + " lists " +
                              std::to_string(directory_.server_count()) + " server(s), nodes 0 to " +
                              std::to_string(directory_.server_count() - 1));
    }
    if (local(config_index) != nullptr) {
      return invalid_argument("node " + std::to_string(config_index) + " already runs in this process");
    }
    LOCUS_RETURN_IF_ERROR(create(config_index, "server" + std::to_string(config_index), VerbsEndpoint::Role::kServer));
    if (hold_connections_) endpoints_[config_index]->set_accepting(false);
    return config_index;
  }

  StatusOr<ServerAddress> server_address(NodeId node) const override { return directory_.server(node); }

  std::string device_name(NodeId node) const override {
    const VerbsEndpoint* ep = local(node);
    return ep != nullptr ? ep->device_name() : "?";
  }

  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override {
    if (local(node) == nullptr) {
      return invalid_argument("spawn " + name + ": no local node " + std::to_string(node) +
                              (shadow(node) != nullptr ? " (another process serves it)" : ""));
    }
    actors_.spawn(local(node), std::move(name), kind, std::move(fn));
    return Status();
  }

  Status run() override { return actors_.run(); }

  Env setup_env(NodeId node) override {
    Transport* t = local(node);
    return actors_.setup_env(t != nullptr ? t : shadow(node));
  }

  void accept_connections() override {
    for (NodeId id : created_) {
      if (id < directory_.server_count()) endpoints_[id]->set_accepting(true);
    }
  }

  Status wait_for_server(NodeId node, Nanos timeout) override {
    LOCUS_ASSIGN_OR_RETURN(ServerAddress where, directory_.server(node));
    // A client endpoint of its own (an id no client of this process takes),
    // dropped with its connection once the peer answered.
    LOCUS_ASSIGN_OR_RETURN(
        auto probe, VerbsEndpoint::create(directory_, kFirstRenamedClient - 1 - node, "probe" + std::to_string(node),
                                          VerbsEndpoint::Role::kClient));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout);
    while (true) {
      Status st = probe->connect_now(node);
      if (st.is_ok()) return Status();
      if (std::chrono::steady_clock::now() >= deadline) {
        return timeout_error("node " + std::to_string(node) + " of " + directory_.source() + " (" + where.to_string() +
                             ") did not come up: " + st.message());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  Status crash_node(NodeId node) override {
    VerbsEndpoint* ep = local(node);
    if (ep == nullptr) return invalid_argument("crash_node: no local node " + std::to_string(node));
    ep->crash();
    return Status();
  }

  Status revive_node(NodeId node) override {
    VerbsEndpoint* ep = local(node);
    if (ep == nullptr) return invalid_argument("revive_node: no local node " + std::to_string(node));
    ep->revive();
    return Status();
  }

 private:
  VerbsEndpoint* local(NodeId node) const { return node < endpoints_.size() ? endpoints_[node].get() : nullptr; }
  ShadowTransport* shadow(NodeId node) const { return node < shadows_.size() ? shadows_[node].get() : nullptr; }

  Status create(NodeId id, std::string name, VerbsEndpoint::Role role) {
    LOCUS_ASSIGN_OR_RETURN(auto ep, VerbsEndpoint::create(directory_, id, std::move(name), role));
    if (endpoints_.size() <= id) endpoints_.resize(id + 1);
    endpoints_[id] = std::move(ep);
    created_.push_back(id);
    return Status();
  }

  Directory directory_;
  uint32_t listen_first_;
  uint32_t listen_end_;
  bool hold_connections_;
  uint32_t client_id_base_;
  std::vector<std::unique_ptr<ShadowTransport>> shadows_;  // by NodeId; null where not a shadow
  uint32_t client_count_ = 0;
  std::vector<std::unique_ptr<VerbsEndpoint>> endpoints_;  // by NodeId; null where not local
  std::vector<NodeId> created_;
  os::ThreadActors actors_;
};

}  // namespace

std::unique_ptr<VerbsRuntime> make_verbs_runtime(const ClusterConfig& config, const VerbsRuntimeOptions& options) {
  return std::make_unique<VerbsRuntimeImpl>(config, options);
}

}  // namespace locus::verbs
