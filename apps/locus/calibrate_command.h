// `locus calibrate SCENARIO`: measures the native cost of every piece of
// work the simulator charges by name (each RPC and messaging handler, and
// client work such as Catfish's "catfish.client_node": Cpu::charge_work)
// by running the scenario on the loopback backend under a profiling Cpu
// (core/runner/work_profile.h), at one or more value sizes (--sizes sets
// workload.fieldlength) or values of a key (--vary), and prints them as
// the scenario's [platform.cpu.handler_cost_us] table: one [bytes, us]
// point per run (two points of a least-squares line where the bytes vary
// widely within a run), the mean native time per call (calls over 10x the
// median left out) converted to the testbed's, with a comment saying how,
// where and when it was measured. The conversion: --factor F given
// (testbed time = native x F); --testbed cell measures Cell's local
// B-link search rate here against the Cell testbed's 379 K searches/s
// (shared/calibration.md); --testbed catfish adds to every server
// handler the testbed's per-request cost beyond this machine's native
// search, from the Catfish paper's section IV-B measurements; without
// either the costs are this machine's.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_calibrate_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
