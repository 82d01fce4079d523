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
#include <utility>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/transport/runtime.h"

namespace locus::runner {

class WorkProfile {
 public:
  // `on_server`: charged by an actor (or set-up code) of a server node.
  void add(std::string_view name, Nanos native_ns, uint64_t bytes, bool on_server);

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
    bool on_server = false;  // charged on a server node (else a client's work)
    // Where the bytes of one run's calls vary (an answer's hits, the nodes
    // of a READ batch): the 10th and 90th percentile of the bytes, and a
    // least-squares line through the kept calls' (bytes, us), so a cost
    // that grows with the bytes is measured rather than assumed.
    uint64_t p10_bytes = 0, p90_bytes = 0;
    double fit_intercept_us = 0, fit_us_per_byte = 0;
    bool has_fit = false;  // at least 2 distinct byte counts among the kept calls
    double fit_us_at(uint64_t bytes) const { return fit_intercept_us + fit_us_per_byte * static_cast<double>(bytes); }
    // What a cost table takes from the row: two points of the line, at
    // the 10th and 90th percentile of the bytes, where the cost grows with
    // them (a positive slope over bytes spread at least twofold, positive
    // at both ends); else one point, the trimmed mean at the median bytes
    // (a slope that is flat or negative is noise, not a cost that falls).
    std::vector<std::pair<uint64_t, double>> cost_points() const;
  };
  // One row per name, by name; names never charged with a native time
  // (the client's per-operation charge) are left out.
  std::vector<Row> rows() const;

 private:
  struct Samples {
    std::vector<Nanos> native_ns;
    std::vector<uint64_t> bytes;
    bool on_server = false;
  };
  mutable ShortMutex mu_;
  std::unordered_map<std::string, Samples> by_name_;
};

class ProfilingRuntime final : public Runtime {
 public:
  ProfilingRuntime(std::unique_ptr<Runtime> inner, WorkProfile* profile);

  std::string_view backend_name() const override { return inner_->backend_name(); }
  bool simulated() const override { return inner_->simulated(); }
  StatusOr<NodeId> add_node(const NodeOptions& options) override;
  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override;
  Status run() override { return inner_->run(); }
  void abandon() override { inner_->abandon(); }
  Env setup_env(NodeId node) override { return profiled(inner_->setup_env(node), node); }
  Status crash_node(NodeId node) override { return inner_->crash_node(node); }
  Status revive_node(NodeId node) override { return inner_->revive_node(node); }
  std::vector<ResourceUsage> resource_usage() const override { return inner_->resource_usage(); }
  std::vector<HostPower> host_power() const override { return inner_->host_power(); }

 private:
  Env profiled(Env env, NodeId node);
  bool is_server(NodeId node);

  std::unique_ptr<Runtime> inner_;
  WorkProfile* profile_;
  ShortMutex mu_;  // guards cpus_ and servers_ (loopback actors start on threads of their own)
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::vector<NodeId> servers_;
};

}  // namespace locus::runner
