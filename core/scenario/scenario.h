// Scenario: everything one simulated (or native) run needs, as a TOML file
// says it: [platform], [index], [workload] (YCSB CoreWorkload property
// names), [selector], [[phases]], [run] and [output]. Loading checks every
// key and value; a bad file fails with the file, line and key.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/fault/fault_options.h"
#include "core/scenario/index_config.h"
#include "core/scenario/platform.h"
#include "core/selector/selector_config.h"
#include "core/workload/workload_spec.h"

namespace locus::scenario {

// type "static" is the index's own choice (Pilaf's fixed paths; for Cell,
// its paper's JSQ); any other type is a core/selector kind (server_only,
// client_only, fixed_ratio, jsq, latency_window) configured by `config`.
struct SelectorSpec {
  std::string type = "static";
  selector::SelectorConfig config;
};

// From start_s on, the number of clients issuing requests is
// active_clients (the others pause): a spike, a ramp, a lull.
struct PhaseSpec {
  double start_s = 0;
  uint32_t active_clients = 0;
};

struct RunSpec {
  uint64_t seed = 1;
  uint32_t clients = 16;
  double duration_s = 0.05;  // simulated, warm-up included
  double warmup_s = 0.01;    // simulated, not measured
  // How long a client waits for a completion before it gives the request
  // up (a reply lost to a fault, a dead server); then the call fails.
  double wait_timeout_ms = 5000;
  // The symmetric deployment (Nessie's): client c runs on server machine
  // c mod platform.servers, sharing its cores, NIC and link on a
  // simulator, and its design may take shortcuts to that machine's
  // state. Needs the servers and clients in one run and run.clients a
  // multiple of platform.servers.
  bool clients_on_servers = false;
};

struct OutputSpec {
  std::string name;  // defaults to the file's stem
  std::string json;  // path, or empty
  std::string csv;   // path, or empty
  // Above zero: also record latency percentiles and throughput per window
  // of this many simulated milliseconds, written to `timeseries` (default
  // results/<name>-timeseries.csv).
  double timeseries_ms = 0;
  std::string timeseries;
};

// [check]: record every client operation's history and decide after the
// run whether it is linearizable against the design's sequential model.
struct CheckSpec {
  bool linearizability = false;
  double time_budget_s = 60;  // of the checker's search, wall clock (0: none)
  // A history longer than this is refused rather than checked: the search
  // keeps model states, and a model that cannot split by key (Catfish's
  // rectangles, scans over a sorted map) holds one state per step.
  uint64_t max_ops = 300000;
  // Where to write the whole history, one call a line, when it is not
  // linearizable (empty: nowhere).
  std::string history_file;
};

struct Scenario {
  std::string source;  // the file it came from
  // Where each key given was written: dotted key -> "file:line:col", or
  // "--set KEY" for an override (setting_error names it).
  std::map<std::string, std::string, std::less<>> written_at;
  PlatformSpec platform;
  IndexSpec index;
  workload::WorkloadSpec workload;
  SelectorSpec selector;
  std::vector<PhaseSpec> phases;
  RunSpec run;
  OutputSpec output;
  // [faults]: the fault-injecting transport (core/fault) over the backend,
  // armed at the end of the warm-up; faults.any() says whether it is on.
  fault::FaultOptions faults;
  CheckSpec check;
};

// An invalid-argument error about setting `key` ("workload.scanproportion")
// found after parsing (a design's or the runner's own check), in the form
// the parser's errors take: "file:line:col: key: what" where the file
// gives the key, "--set key: what" for an override, "file: key: what" for
// a default.
Status setting_error(const Scenario& s, std::string_view key, const std::string& what);

// Loads `path`, applying `overrides` ("section.key=value", TOML values;
// a bare word is taken as a string) on top of the file before checking.
// [index] is read by the design `types` names for index.type
// (core/designs/designs.h has the registry of every built-in design and
// these two functions over it).
StatusOr<Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                                 const IndexTypes& types);
// The same from text (for tests); `source` names it in messages.
StatusOr<Scenario> parse_scenario(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& overrides, const IndexTypes& types);

}  // namespace locus::scenario
