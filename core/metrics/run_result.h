// RunResult: everything a finished run reports, and the writers that turn
// results into a human table, JSON, CSV and YCSB's text summary. The JSON
// library stays out of this header; callers get strings or files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/metrics/resource_usage.h"
#include "core/metrics/op_stats.h"

namespace locus::metrics {

struct RunResult {
  std::string name;     // the run (scenario and phase)
  std::string backend;  // loopback, verbs, simgrid
  std::string index;    // pilaf, cell, nessie, ...
  uint64_t seed = 0;
  Nanos duration_ns = 0;
  OpStats stats;  // merged over all clients
  // Numbers that are not per-operation: "retries", "ratio", "clients", ...
  std::map<std::string, double> extra;
  // Simulated runs: every resource of the platform model, in platform order.
  std::vector<ResourceUsage> resources;
  // Simulated runs with a power profile: each host's average power and its
  // energy over the run; the totals and joules per operation are extra
  // numbers ("power_w", "energy_j", "joules_per_op": power_totals).
  std::vector<HostPower> power;
  // Why operations failed: the first failure of the first client that had
  // one (empty when none did), so a count of failures comes with a cause.
  std::string first_failure;

  uint64_t total_ops() const { return stats.total_ops(); }
  // Operations per second over duration_ns; 0 when the duration is 0.
  double throughput_ops_per_s() const { return throughput_ops_per_s(total_ops()); }
  double throughput_ops_per_s(uint64_t ops) const {
    return duration_ns > 0 ? static_cast<double>(ops) / to_seconds(duration_ns) : 0.0;
  }
};

// Sets r.power and the extra numbers "power_w" (the hosts' average power
// summed), "energy_j" (that power over the measured duration_ns) and
// "joules_per_op" (energy_j over the measured operations): the measured
// window's energy at the run's average power.
void set_power(RunResult& r, std::vector<HostPower> power);

// Aligned text, one row per (run, operation): run, op, count, ops/s, then
// mean, p50, p90, p99, p99.9 and max latency in microseconds. Runs with
// failures, retries, counters or extra numbers get a line listing them.
std::string format_table(const std::vector<RunResult>& results);

// {"runs": [{"name", "backend", "index", "seed", "duration_ns",
//   "total_ops", "throughput_ops_per_s",
//   "ops": [{"op", "count", "ok", "failed", "retries", "throughput_ops_per_s",
//            "latency_ns": {"mean", "min", "max", "p50", "p90", "p95", "p99", "p999"}}],
//   "counters": {name: value}, "extra": {name: value},
//   "resources": [{"name", "kind", "utilization"}] (simulated runs only),
//   "power": [{"name", "average_w", "energy_j"}] (with a power profile only)}]}
std::string to_json_string(const std::vector<RunResult>& results, int indent = 2);
Status write_json_file(const std::string& path, const std::vector<RunResult>& results);

// One row per (run, operation) under a header; latencies in microseconds.
// Every extra number, counter and resource of any run is a column (extra
// names as they are, counters as "counter.<name>", resources' utilization
// as "utilization.<name>"), empty where a run lacks it.
std::string format_csv(const std::vector<RunResult>& results);
Status write_csv_file(const std::string& path, const std::vector<RunResult>& results);

// YCSB's text exporter output for one run: [OVERALL] RunTime(ms) and
// Throughput(ops/sec), then per operation (name upper-cased) Operations,
// AverageLatency(us), Min/MaxLatency(us), 50th/95th/99th/99.9
// PercentileLatency(us) and Return=OK (Return=ERROR when some failed).
// Numbers are formatted as YCSB's Java code prints them, so YCSB parsers
// and plotting scripts read it unchanged.
std::string to_ycsb_summary(const RunResult& result);

}  // namespace locus::metrics
