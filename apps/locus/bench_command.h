// `locus bench`: native benchmarks on a real backend. Pilaf under a YCSB
// workload (RDMA gets against VO gets in the same run, ratio printed) and
// micro-benchmarks (`--micro cuckoo`: Pilaf's local lookup against
// libcuckoo).
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
