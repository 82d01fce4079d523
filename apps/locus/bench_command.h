// `locus bench`: native benchmarks on a real backend. Pilaf under a YCSB
// workload (RDMA gets against VO gets in the same run, ratio printed), Cell
// and Catfish under a list of selectors (one run each; Catfish's YCSB
// operations become spatial searches and inserts), on loopback or, with
// `--backend verbs`, against a `locus serve` process, and micro-benchmarks
// (`--micro cuckoo`: Pilaf's local lookup against libcuckoo).
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
