// A scenario served across processes, as the verbs tier deploys every
// design: `locus serve SCENARIO` as a child process running all of the
// scenario's server endpoints on a cluster file of its own (every port 0:
// free ports), the cluster file its clients use (written with the ports
// from the ready file), and `locus run SCENARIO --backend verbs` child
// processes running the scenario's clients against it. Serve and runs get
// the same --set overrides, so both sides agree on the records and the
// design's keys; a run may add its own (a selector, a mode). Needs
// LOCUS_BINARY (the locus executable) and LOCUS_VERBS_SCENARIOS (the
// directory of tests/verbs/scenarios).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/verbs/cluster_config.h"
#include "tests/support/child_process.h"
#include "tests/verbs/run_results.h"

namespace locus::verbs::testing {

using locus::testing::ChildProcess;
using locus::testing::make_temp_dir;
using locus::testing::wait_for_file;
using locus::testing::wait_for_lines;
using locus::testing::write_file;

// A scenario file of the tier, by its name in tests/verbs/scenarios.
std::string scenario_path(const std::string& file);

struct ServedIndex {
  std::string dir;                // the test's files: cluster files, logs, results
  std::string scenario;           // the scenario file
  std::vector<std::string> sets;  // its overrides ("key=value"), for serve and runs alike
  std::unique_ptr<ChildProcess> server;
  std::string config_path;  // the clients' cluster file: entry k is server endpoint k
  ClusterConfig config;
};

// Starts `locus serve` of `scenario` with `sets` and waits (Boost.Test
// REQUIRE) until it listens on all `endpoints` of it. `serve_verbs`:
// lines added to the server's own [verbs] table ("max_connections = 4").
ServedIndex start_served_index(const std::string& name, const std::string& scenario,
                               const std::vector<std::string>& sets, size_t endpoints,
                               const std::string& serve_verbs = "");

// Starts `locus serve` of `scenario` with `sets`, expects it to refuse
// (exit 1, checked with Boost.Test) and returns its output.
std::string refused_serve(const std::string& name, const std::string& scenario, const std::vector<std::string>& sets,
                          size_t endpoints);

// Starts `locus run SCENARIO --backend verbs` against `t`, with t.sets and
// then `extra` overrides; its output goes to <dir>/<tag>.log and its
// results to <dir>/<tag>.json (run_json).
std::unique_ptr<ChildProcess> start_run(const ServedIndex& t, const std::string& tag,
                                        const std::vector<std::string>& extra);
std::string run_json(const ServedIndex& t, const std::string& tag);

// Waits up to timeout_ms for a run of start_run and checks (Boost.Test)
// that it exited 0 with results of the verbs backend in which operations
// ran and none failed. Returns the results.
RunResults finish_run(const ServedIndex& t, ChildProcess& run, const std::string& tag, int timeout_ms);

// Checks the server still runs, stops it with SIGTERM and checks it exits
// 0 having printed its stopping line; returns that line's figures
// (rpc_requests, rpc_rejected, the design's counters).
std::map<std::string, double> stop_served_index(ServedIndex& t, int timeout_ms);

// figures[name], or -1 when the line lacks it (so a check on it fails).
double figure(const std::map<std::string, double>& figures, const std::string& name);

}  // namespace locus::verbs::testing
