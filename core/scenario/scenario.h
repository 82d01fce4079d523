// Scenario: everything one simulated (or native) run needs, as a TOML file
// says it: [platform], [index], [workload] (YCSB CoreWorkload property
// names), [selector], [[phases]], [run] and [output]. Loading checks every
// key and value; a bad file fails with the file, line and key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/scenario/platform.h"
#include "core/workload/workload_spec.h"

namespace locus::scenario {

struct IndexSpec {
  std::string type = "pilaf";  // pilaf | micro
  // pilaf
  std::string mode = "rdma";   // rdma | vo (gets by RPC)
  uint64_t initial_buckets = 0;  // 0: twice the record count per server
  uint32_t max_kv_bytes = 16 * 1024;
  // micro: a synthetic index for calibrating the models. Each operation is
  // one RPC (handler "micro.op") with probability rpc_fraction, otherwise
  // reads_per_op dependent READs of read_bytes.
  double rpc_fraction = 1.0;
  uint32_t reads_per_op = 5;
  uint32_t read_bytes = 1024;
  uint32_t rpc_request_bytes = 64;
  uint32_t rpc_response_bytes = 64;
};

struct SelectorSpec {
  std::string type = "static";  // the index's own fixed choice
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
};

struct OutputSpec {
  std::string name;  // defaults to the file's stem
  std::string json;  // path, or empty
  std::string csv;   // path, or empty
};

struct Scenario {
  std::string source;  // the file it came from
  PlatformSpec platform;
  IndexSpec index;
  workload::WorkloadSpec workload;
  SelectorSpec selector;
  std::vector<PhaseSpec> phases;
  RunSpec run;
  OutputSpec output;
};

// Loads `path`, applying `overrides` ("section.key=value", TOML values;
// a bare word is taken as a string) on top of the file before checking.
StatusOr<Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// The same from text (for tests); `source` names it in messages.
StatusOr<Scenario> parse_scenario(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& overrides = {});

}  // namespace locus::scenario
