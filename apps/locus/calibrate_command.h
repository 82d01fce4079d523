// `locus calibrate SCENARIO`: measures the native cost of every piece of
// work the simulator charges by name (each RPC and messaging handler:
// Cpu::charge_work) by running the scenario on the loopback backend under
// a profiling Cpu (core/runner/work_profile.h), at one or more value sizes
// (--sizes sets workload.fieldlength), and prints them as the scenario's
// [platform.cpu.handler_cost_us] table: one [bytes, us] point per size,
// the mean native time per call (calls over 10x the median left out) times a
// machine-speed factor, with a comment saying how, where and when it was
// measured. The factor converts this
// machine's times into the testbed's: --factor F given, or --testbed cell
// measures Cell's local B-link search rate here against the Cell
// testbed's 379 K searches/s (shared/calibration.md); without either it
// is 1 (the costs are this machine's).
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_calibrate_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
