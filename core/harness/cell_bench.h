// The Cell benchmark driver: a Cell tree over `servers` servers and YCSB
// clients on any Runtime (loopback now, verbs and SimGrid later), one call
// per run, like the Pilaf driver. The records are loaded into the servers'
// memory before the clients start (not measured; meganode splits happen
// during the load, so the run starts from a tree already spread over the
// servers). Each client runs its share of the transaction phase with its
// own selector and OpStats; results are merged, with the selector's
// server-side share and the traversal counters as extra numbers.
//
// Reads are gets, updates and inserts are puts (a whole record), scans are
// ranges of scan-length keys, read-modify-writes a get then a put.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/index/cell/client.h"
#include "core/index/cell/deployment.h"
#include "core/metrics/run_result.h"
#include "core/selector/selector_config.h"
#include "core/transport/runtime.h"
#include "core/workload/workload_spec.h"

namespace locus::harness {

// Same as pilaf_bench.h's: makes a fresh runtime for one run.
using RuntimeFactory = std::function<std::unique_ptr<Runtime>(uint64_t seed)>;

struct CellBenchConfig {
  std::string name = "cell";
  workload::WorkloadSpec workload;
  uint32_t clients = 4;
  uint32_t servers = 1;
  // extents_bytes 0 (the default here) sizes each server's extents region
  // from the records it will hold.
  cell::ServerOptions server = default_server_options();
  cell::SplitDriverOptions split;
  cell::ClientOptions client;
  selector::SelectorConfig selector;
  uint64_t seed = 1;

  // 1 KB nodes (the paper's), 32-byte keys (YCSB's are 24), 2 MB
  // meganodes: small enough to split during a modest load.
  static cell::ServerOptions default_server_options();
};

// Checks what Cell can run, with a message naming the offending setting.
Status validate(const CellBenchConfig& config);

StatusOr<metrics::RunResult> run_cell_bench(const RuntimeFactory& make_runtime, const CellBenchConfig& config);

// run_cell_bench's two halves, usable apart for servers in another process
// (verbs: `locus serve --index cell` runs the first, `locus bench --index
// cell --backend verbs` the second), as in pilaf_bench.h.
//
// Creates the tree's config.servers server nodes on `runtime` and loads the
// workload's records into them. Serving is the caller's: spawn_daemons(),
// then runtime.run(). Destroy the Deployment before the runtime.
StatusOr<std::unique_ptr<cell::Deployment>> start_cell_servers(Runtime& runtime, const CellBenchConfig& config);
// Adds config.clients client nodes to `runtime` and runs the transaction
// phase against the tree whose layout server `bootstrap` hands out (a node
// of this runtime or, on verbs, of another process). Server-side figures
// are not in the result.
StatusOr<metrics::RunResult> run_cell_clients(Runtime& runtime, NodeId bootstrap, const CellBenchConfig& config);

}  // namespace locus::harness
