// FaultRuntime: a Runtime decorator that hands every actor, and set-up
// code, a FaultTransport over its node's own Transport (one per node, made
// on first use), so a whole scenario runs with faults on any backend.
// Injection starts when arm() is called (the runner arms at the end of the
// warm-up, so loading and connecting run clean) and the counts of what was
// injected are in stats().
#pragma once

#include <atomic>
#include <memory>
#include <unordered_map>

#include "core/common/short_mutex.h"
#include "core/fault/fault_transport.h"
#include "core/transport/runtime.h"

namespace locus::fault {

class FaultRuntime final : public Runtime {
 public:
  FaultRuntime(std::unique_ptr<Runtime> inner, const FaultOptions& options);

  std::string_view backend_name() const override { return inner_->backend_name(); }
  bool simulated() const override { return inner_->simulated(); }
  StatusOr<NodeId> add_node(const NodeOptions& options) override { return inner_->add_node(options); }
  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override;
  Status run() override { return inner_->run(); }
  void abandon() override { inner_->abandon(); }
  Env setup_env(NodeId node) override { return faulty(node, inner_->setup_env(node)); }
  Status crash_node(NodeId node) override { return inner_->crash_node(node); }
  Status revive_node(NodeId node) override { return inner_->revive_node(node); }
  std::vector<ResourceUsage> resource_usage() const override { return inner_->resource_usage(); }
  std::vector<HostPower> host_power() const override { return inner_->host_power(); }

  void arm() { armed_.store(true, std::memory_order_relaxed); }
  void disarm() { armed_.store(false, std::memory_order_relaxed); }
  const FaultStats& stats() const { return stats_; }
  const FaultOptions& options() const { return options_; }

 private:
  // `env` with its transport replaced by the node's FaultTransport.
  Env faulty(NodeId node, Env env);

  std::unique_ptr<Runtime> inner_;
  FaultOptions options_;
  std::atomic<bool> armed_{false};
  FaultStats stats_;
  ShortMutex mu_;  // guards transports_ (loopback actors start on threads of their own)
  std::unordered_map<NodeId, std::unique_ptr<FaultTransport>> transports_;
};

}  // namespace locus::fault
