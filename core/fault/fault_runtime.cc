// The fault-injecting runtime: see fault_runtime.h.
#include "core/fault/fault_runtime.h"

#include <utility>

namespace locus::fault {

FaultRuntime::FaultRuntime(std::unique_ptr<Runtime> inner, const FaultOptions& options)
    : inner_(std::move(inner)), options_(options) {}

Env FaultRuntime::faulty(NodeId node, Env env) {
  if (env.transport == nullptr) return env;
  std::lock_guard<ShortMutex> lock(mu_);
  std::unique_ptr<FaultTransport>& t = transports_[node];
  if (t == nullptr) t = std::make_unique<FaultTransport>(env.transport, env.clock, options_, node, &armed_, &stats_);
  env.transport = t.get();
  return env;
}

Status FaultRuntime::spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) {
  return inner_->spawn(node, std::move(name), kind, [this, node, fn = std::move(fn)](Env& env) {
    Env wrapped = faulty(node, env);
    fn(wrapped);
  });
}

}  // namespace locus::fault
