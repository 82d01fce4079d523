// `locus bench`: native runs. `locus bench SCENARIO.toml` is `locus run
// --backend loopback` (or `--backend verbs --config CLUSTER.toml` against
// `locus serve`): the one run path, the same scenario keys and results.
// `--micro cuckoo|read|blink|rtree` runs a microbenchmark of one mechanism
// against a well-kept baseline instead (libcuckoo, perftest's READ rate,
// absl::btree_map, Boost.Geometry's rtree).
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
