// `locus reproduce [DESIGN...]`: runs the reproduction suite, the
// experiments of scenarios/papers/<design>/*.toml (apps/locus/experiment.h),
// on the SimGrid backend, each point a `locus sim` process of its own
// (SimGrid keeps one engine per process), --jobs at a time, and writes
// results/reproduction/: per experiment a CSV of every point (throughput,
// mean latency, server-side share) and, where gnuplot is installed, a PNG;
// report.md with a table per experiment and the paper's claims beside the
// simulated figures (their ratio, and whether it is within 10%). A point
// that fails names its log and the run goes on; the exit code is then 1.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_reproduce_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
