// Child processes of `locus reproduce` and `locus sweep`: each simulated
// point is a `locus sim` process of its own (SimGrid keeps one engine per
// process), started with posix_spawn, its stdout and stderr in a log file,
// at most N at a time, reaped with waitpid. Also the point summary both
// commands read back from a run's JSON, and the tail of a log for errors.
#pragma once

#include <sys/types.h>

#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace locus::cli {

// The running binary (/proc/self/exe), so children are this same build.
StatusOr<std::string> self_executable();

// One child: argv (argv[0] is the program, looked up on PATH when it has
// no '/') with stdout and stderr to `log` (none: inherited).
struct ChildRun {
  std::vector<std::string> argv;
  std::string log;
};

// Starts one child; its pid.
StatusOr<pid_t> spawn_child(const ChildRun& run);

// Runs every child, at most `jobs` at a time; done(i, status) after child
// i ends, status OK or naming how it ended (exit code or signal). A child
// that cannot be started is reported the same way, and the rest still run.
Status run_children(const std::vector<ChildRun>& runs, unsigned jobs,
                    const std::function<void(size_t, const Status&)>& done);

// Runs one child to its end (e.g. gnuplot): OK if it exits 0.
Status run_child(const ChildRun& run);

// The last `lines` lines of a file ("" if it cannot be read).
std::string file_tail(const std::string& path, size_t lines);

// What both commands report per point: throughput over all operations,
// mean latency weighted by count, and the selector's server-side share
// (NaN where a run has none).
struct PointSummary {
  double ops_per_s = NAN, latency_us_mean = NAN, server_share = NAN;
  double metric(std::string_view m) const {
    return m == "ops_per_s" ? ops_per_s : m == "latency_us_mean" ? latency_us_mean : server_share;
  }
};
// Reads a `locus sim --json` file's first run.
StatusOr<PointSummary> read_point_summary(const std::string& json_path);

}  // namespace locus::cli
