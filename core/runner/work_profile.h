// WorkProfile and ProfilingRuntime: what `locus calibrate` measures. The
// runtime decorator gives every actor, and set-up code, a Cpu that records
// each charge_work(name, native_ns, bytes) (the native time of an RPC
// handler or a messaging handler on this machine, and the bytes it moved)
// before passing it on, so a scenario run on the loopback backend yields
// the native cost of every named piece of work the simulator charges.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/transport/runtime.h"

namespace locus::runner {

class WorkProfile {
 public:
  void add(std::string_view name, Nanos native_ns, uint64_t bytes);

  struct Row {
    std::string name;
    uint64_t calls = 0;
    uint64_t median_bytes = 0;
    double median_us = 0, p90_us = 0, mean_us = 0;
    // The mean of the calls no slower than 10x the median: what a handler
    // costs on average (work that is sometimes longer, a node split,
    // counts) without the calls the OS preempted for a time slice (on a
    // shared 2-core machine, 100x the median and more).
    double trimmed_mean_us = 0;
  };
  // One row per name, by name; names never charged with a native time
  // (the client's per-operation charge) are left out.
  std::vector<Row> rows() const;

 private:
  struct Samples {
    std::vector<Nanos> native_ns;
    std::vector<uint64_t> bytes;
  };
  mutable ShortMutex mu_;
  std::unordered_map<std::string, Samples> by_name_;
};

class ProfilingRuntime final : public Runtime {
 public:
  ProfilingRuntime(std::unique_ptr<Runtime> inner, WorkProfile* profile);

  std::string_view backend_name() const override { return inner_->backend_name(); }
  StatusOr<NodeId> add_node(const NodeOptions& options) override { return inner_->add_node(options); }
  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override;
  Status run() override { return inner_->run(); }
  void abandon() override { inner_->abandon(); }
  Env setup_env(NodeId node) override { return profiled(inner_->setup_env(node)); }
  Status crash_node(NodeId node) override { return inner_->crash_node(node); }
  std::vector<ResourceUsage> resource_usage() const override { return inner_->resource_usage(); }

 private:
  Env profiled(Env env);

  std::unique_ptr<Runtime> inner_;
  WorkProfile* profile_;
  ShortMutex mu_;  // guards cpus_ (loopback actors start on threads of their own)
  std::vector<std::unique_ptr<Cpu>> cpus_;
};

}  // namespace locus::runner
