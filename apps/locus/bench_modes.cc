// `locus bench --index NAME --mode ...`: see bench_modes.h.
#include "apps/locus/bench_modes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "backends/loopback/loopback_runtime.h"
#include "core/designs/designs.h"
#include "core/metrics/run_result.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::cli {
namespace {

// The built-in scenario: small enough for a laptop or CI runner, the
// workload YCSB-B; timing only, so no costs (loopback measures).
std::string builtin_scenario(const std::string& index) {
  return fmt::format(R"([platform]
servers = 2
[index]
type = "{}"
[workload]
standard = "b"
requestdistribution = "uniform"
recordcount = 10000
fieldcount = 1
fieldlength = 256
[run]
seed = 1
clients = 4
duration_s = 2.0
warmup_s = 0.5
)",
                     index);
}

}  // namespace

Status run_modes_bench(const ModesBenchConfig& c) {
  if (c.modes.empty()) return invalid_argument("--mode: name the modes to compare (e.g. --mode client,server,hybrid)");
  std::vector<std::string> modes = c.modes;
  const std::string baseline = c.baseline.empty() ? modes.front() : c.baseline;
  if (std::find(modes.begin(), modes.end(), baseline) == modes.end()) modes.insert(modes.begin(), baseline);
  const std::string text = builtin_scenario(c.index);
  runner::ScenarioRuntimeFactory factory([](const scenario::Scenario& sc) {
    loopback::LoopbackOptions lo;
    lo.seed = sc.run.seed;
    lo.retry_exceeded_after = sc.platform.nic.retry_exceeded_after();
    return loopback::make_loopback_runtime(lo);
  });
  std::map<std::string, double> rate;
  std::vector<metrics::RunResult> results;
  for (const std::string& mode : modes) {
    std::vector<std::string> sets = c.sets;
    sets.push_back("index.mode=\"" + mode + "\"");
    auto s = c.scenario_path.empty() ? designs::parse_scenario(text, "built-in " + c.index + " bench", sets)
                                     : designs::load_scenario(c.scenario_path, sets);
    if (!s.is_ok()) return s.status();
    if (s->index.type != c.index) {
      return invalid_argument("--index " + c.index + ": " + c.scenario_path + " is a " + s->index.type + " scenario");
    }
    s->output.name = c.index + "-" + mode;
    fmt::print("locus bench: {} index.mode={} on loopback ({} servers, {} clients, {:g} s measured)\n", c.index, mode,
               s->platform.servers, s->run.clients, s->run.duration_s - s->run.warmup_s);
    std::fflush(stdout);
    runner::RunOptions ro;
    ro.max_memory_bytes = static_cast<uint64_t>(c.max_memory_bytes);
    auto report = runner::run_scenario(*s, designs::registry(), factory, ro);
    if (!report.is_ok()) return report.status();
    if (report->result.stats.total_failed() > 0) {
      return internal_error(
          fmt::format("index.mode={}: {} operations failed", mode, report->result.stats.total_failed()));
    }
    rate[mode] = report->result.throughput_ops_per_s();
    results.push_back(report->result);
  }
  fmt::print("\n{}", metrics::format_table(results));
  fmt::print("\n{:<12} {:>14} {:>14}\n", "index.mode", "ops/s", fmt::format("x {}", baseline));
  for (const std::string& mode : modes) {
    const double ratio = rate[baseline] > 0 ? rate[mode] / rate[baseline] : 0;
    fmt::print("{:<12} {:>14.0f} {:>14.2f}\n", mode, rate[mode], ratio);
  }
  // One line per mode for scripts.
  for (const std::string& mode : modes) {
    fmt::print("result: index={} mode={} ops_per_s={:.1f} ratio_to_{}={:.3f}\n", c.index, mode, rate[mode], baseline,
               rate[baseline] > 0 ? rate[mode] / rate[baseline] : 0);
  }
  return Status();
}

}  // namespace locus::cli
