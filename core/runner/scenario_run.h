// The scenario runner, the one run path of every command: builds a
// scenario's servers and clients on any Runtime through the design's
// IndexDriver (core/design) and runs them for the scenario's duration
// (simulated on SimGrid, wall time elsewhere). Clients
// run closed-loop YCSB operations; only operations that start after the
// warm-up are measured; [[phases]] change how many clients are active.
// With output.timeseries_ms the runner also keeps, per window of simulated
// time, the latency percentiles and throughput of the operations that
// finished in it (warm-up included, so a plot shows the whole run).
// `locus sim` and `locus run` call it with every server and client in this
// process; on verbs, `locus serve` runs the servers' side of a scenario and
// `locus run --backend verbs` the clients' side against them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <atomic>
#include <span>

#include "core/design/design.h"
#include "core/metrics/run_result.h"
#include "core/runner/scenario_timeseries.h"
#include "core/scenario/scenario.h"
#include "core/transport/runtime.h"

namespace locus::runner {

struct Progress {
  double sim_fraction = 0;  // of the scenario's duration
  uint64_t ops = 0;         // operations finished so far, warm-up included
};

struct ScenarioReport {
  metrics::RunResult result;  // result.resources: how busy each modelled resource was
  uint64_t total_ops = 0;  // warm-up included
  std::vector<TimeseriesWindow> timeseries;  // empty unless output.timeseries_ms > 0
};

using ScenarioRuntimeFactory = std::function<std::unique_ptr<Runtime>(const scenario::Scenario&)>;

struct RunOptions {
  // Which side of the scenario runs here. With the clients elsewhere, the
  // run lasts until *stop turns true (a signal handler sets it). With the
  // servers elsewhere, server endpoint k is NodeId k of the runtime (the
  // verbs backend's cluster-file entries, which `locus serve` takes in
  // endpoint order).
  design::Placement placement;
  // `locus serve --node K`: of the server machines only machine K serves
  // here. Every machine's endpoints are still set up and loaded, in order
  // (the runtime makes the others' nodes shadows that hold memory and
  // reach nothing), so that a load spanning servers lays out memory as it
  // does in every other process; the others get no RPC workers and no
  // daemons. With the clients here too, only the clients that
  // run.clients_on_servers places on machine K run. -1: all serve here.
  int64_t serve_machine = -1;
  const std::atomic<bool>* stop = nullptr;
  // Called once the servers are set up and loaded, before the run's clock
  // starts, with the endpoints' nodes in order of the machines served here
  // (`locus serve` prints where they listen, waits for its peers and
  // writes its ready file).
  std::function<Status(Runtime&, std::span<const NodeId>)> on_servers_ready;
  std::function<void(const Progress&)> on_progress;
  // Refuse, before allocating, a run the designs estimate needs more than
  // this (0: no limit). The command line passes the memory available.
  uint64_t max_memory_bytes = 0;
  // Where the limit came from, for the refusal: "available (MemAvailable
  // of /proc/meminfo)"; empty: --max-memory.
  std::string max_memory_source;
};

StatusOr<ScenarioReport> run_scenario(const scenario::Scenario& s, const design::Registry& designs,
                                      const ScenarioRuntimeFactory& make_runtime, const RunOptions& options = {});

}  // namespace locus::runner
