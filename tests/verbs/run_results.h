// What the verbs tier reads back from `locus` child processes: the results
// a `locus run` writes with --json (metrics::write_json_file's layout, one
// run), and the figures a `locus serve` prints on its stopping line
// (`locus serve: stopping: name=value ...`). The tests check these
// numbers rather than the human table, whose layout may change.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace locus::verbs::testing {

struct RunResults {
  std::string error;  // why the file could not be read; empty if it was
  std::string name, backend, index;
  uint64_t total_ops = 0;
  uint64_t failed = 0;                       // summed over the operations
  double throughput_ops_per_s = 0;
  std::map<std::string, uint64_t> ops;       // count per operation ("READ", "SCAN", ...)
  std::map<std::string, double> op_rates;    // ops/s per operation
  std::map<std::string, int64_t> counters;   // the sessions' counters ("failed_ops", ...)
  std::map<std::string, double> extra;       // "server_share", "clients", ...

  bool ok() const { return error.empty(); }
  // extra[name], or `otherwise` when the run did not report it.
  double extra_or(const std::string& name, double otherwise) const;
};

// Reads the first run of a results JSON file.
RunResults read_run_json(const std::string& path);

// The name=value figures of the last `locus serve: stopping:` line of a
// serve's output; empty if there is none (the server did not stop cleanly).
std::map<std::string, double> serve_stop_figures(const std::string& output);

}  // namespace locus::verbs::testing
