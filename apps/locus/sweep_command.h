// `locus sweep SCENARIO.toml --grid KEY=V1,V2,... [--grid ...] [-j N]
// [--out DIR]`: runs every point of the grid's cartesian product as a
// `locus sim SCENARIO --set KEY=V ...` process of its own (this binary), N
// at a time, each writing its results into DIR/points/K, then merges them
// into one table with the swept keys as leading columns and draws the plot
// (sweep_merge.h). A point that fails is named with its log's tail; the
// others still run, and the sweep exits non-zero.
//
// For sweeps larger than one machine, `--emit slurm` writes the plan and
// DIR/sweep.sbatch, a Slurm job array with one point per task (`locus
// sweep --point $SLURM_ARRAY_TASK_ID --out DIR`), and runs nothing; `locus
// sweep --merge DIR` merges the points afterwards.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_sweep_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
