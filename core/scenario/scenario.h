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
#include "core/selector/selector_config.h"
#include "core/workload/workload_spec.h"

namespace locus::scenario {

struct IndexSpec {
  std::string type = "pilaf";  // pilaf | micro | cell | catfish
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
  // cell: a B-link tree of meganodes (cell_driver.cc); max_kv_bytes above
  // bounds one extent. Defaults: 1 KB nodes, 32-byte keys, 2 MB meganodes.
  uint32_t node_bytes = 1024;
  uint32_t key_capacity_bytes = 32;
  uint64_t meganode_bytes = 2ull << 20;  // a multiple of node_bytes
  uint32_t meganodes_per_server = 32;
  uint64_t extents_bytes = 0;            // 0: sized from the records; else a power of two
  double split_fill_fraction = 0.6;      // a meganode asks to split at this share of its nodes
  double server_request_us = 3.7;        // server CPU per request (Cell testbed: 6.3 us per
  double server_node_visit_us = 0.52;    //   5-level search with messaging)
  double client_node_us = 0;             // client CPU per node examined client-side
  uint32_t cache_min_distance = 4;       // clients cache nodes this many levels above the leaves
  uint64_t node_cache_bytes = 128ull << 20;
  // catfish: one R*-tree server (catfish_driver.cc) with node_bytes nodes
  // (at most 4096) holding `rectangles` data rectangles; searches at
  // query_scale "1e-5" | "1e-2" | "power"; server_mode "polling" | "event";
  // server_result_us of server CPU per rectangle a search returns (the
  // handler "catfish.search" costs its platform.cpu figure on top);
  // client_node_us above is the client CPU per node an offloaded search reads.
  uint64_t rectangles = 200000;
  std::string query_scale = "1e-5";
  std::string server_mode = "event";
  double server_result_us = 0.02;
};

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
