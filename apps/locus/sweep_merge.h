// `locus sweep --merge DIR` (and the end of every local sweep): reads each
// point's result.json and result.csv under DIR/points/K and writes
//   DIR/sweep.csv    every row of every point's CSV (one per operation),
//                    led by the point number and the swept keys;
//   DIR/summary.csv  one row per point: the swept keys, throughput over all
//                    operations, mean latency weighted by count, the
//                    selector's server-side share;
//   DIR/sweep.json   per point its settings, summary and `locus sim` JSON;
//   DIR/sweep.png    throughput against the last swept key, one line per
//                    setting of the others (where gnuplot is installed).
// A point without results is named (with its log's tail when log_tails:
// a local sweep has shown it already) and makes the merge an error after
// the tables of the others are written.
#pragma once

#include <string>

#include "apps/locus/sweep_plan.h"
#include "core/common/status.h"

namespace locus::cli {

Status merge_sweep(const std::string& dir, const SweepPlan& plan, bool log_tails = true);

}  // namespace locus::cli
