// `locus run SCENARIO.toml [--backend simgrid|loopback|verbs]`: runs a
// scenario's servers and clients through the one run path
// (core/runner/scenario_run.h) and prints the results table (throughput,
// latency percentiles); on SimGrid also the utilisation of every modelled
// resource and the simulator's own speed. On verbs only the clients run
// here, against `locus serve` processes of the same scenario. `locus sim`
// is `locus run --backend simgrid`; `locus bench SCENARIO.toml` is `locus
// run --backend loopback` (bench_command.h). `--set key=value` overrides
// any scenario key, the same keys on every backend.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace locus::cli {

struct RunOptionsCli {
  std::string scenario_path;
  std::string backend = "simgrid";
  std::string config_path;  // verbs: the cluster file
  // verbs: serve the cluster file's entries in this process too (port 0:
  // any free port), so one run has servers and clients, as on the other
  // backends ([check], the fault campaign); else `locus serve` serves them.
  bool serve_here = false;
  // verbs, a cluster file naming ZooKeeper only: how long to wait for the
  // servers to be announced there.
  int zookeeper_wait_ms = 60'000;
  std::vector<std::string> sets;
  std::string json_path;
  std::string csv_path;
  bool quiet = false;
  // Refuse runs estimated to need more (bytes; 0: no check). Default: the
  // memory available now (MemAvailable of /proc/meminfo).
  double max_memory_bytes = -1;
};

// MemAvailable of /proc/meminfo in bytes, or 0 if it cannot be read.
uint64_t memory_available_bytes();

void add_run_commands(CLI::App& app, int& exit_code);
// --set, --json, --csv, --config and --quiet on `cmd`, into `o`.
void add_scenario_options(CLI::App& cmd, RunOptionsCli& o);
// Runs o.scenario_path on o.backend; `command` names the command in messages.
Status run_scenario_command(const RunOptionsCli& o, std::string_view command);

}  // namespace locus::cli
