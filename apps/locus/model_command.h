// `locus model SCENARIO.toml`: the analytic locality model's predictions
// for the scenario's platform and workload, per selector policy (server
// only, client only, the scenario's own split, the optimal split p*, JSQ's
// equilibrium), beside the simulated figures of a `locus sim` JSON result.
// `locus plan --target-ops X --p99-us Y SCENARIO.toml`: the cheapest
// (servers, cores, clients) configurations that meet the targets.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_model_commands(CLI::App& app, int& exit_code);

}  // namespace locus::cli
