// `locus sim SCENARIO.toml`: runs a scenario on the SimGrid backend and
// prints the results table (throughput, latency percentiles), the
// utilisation of every modelled resource and the simulator's own speed;
// writes JSON and CSV when asked. `--set key=value` overrides any
// scenario key, for sweeps.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_sim_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
