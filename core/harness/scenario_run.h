// The scenario runner: builds a scenario's servers and clients on any
// Runtime and runs them for the scenario's (simulated) duration. Clients
// run closed-loop YCSB operations; only operations that start after the
// warm-up are measured; [[phases]] change how many clients are active.
// With output.timeseries_ms the runner also keeps, per window of simulated
// time, the latency percentiles and throughput of the operations that
// finished in it (warm-up included, so a plot shows the whole run).
// `locus sim` calls this on the SimGrid backend.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/harness/scenario_timeseries.h"
#include "core/metrics/run_result.h"
#include "core/scenario/scenario.h"
#include "core/transport/runtime.h"

namespace locus::harness {

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

StatusOr<ScenarioReport> run_scenario(const scenario::Scenario& s, const ScenarioRuntimeFactory& make_runtime,
                                      const std::function<void(const Progress&)>& on_progress = {});

}  // namespace locus::harness
