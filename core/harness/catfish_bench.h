// The Catfish benchmark driver: one R-tree server (a connect node and
// `workers` messaging workers, each an endpoint of its own) and YCSB
// clients on any Runtime, one call per run, like the Cell driver. The
// server is loaded with workload.recordcount data rectangles of the
// paper's spatial workload before the clients start (not measured). Each
// client connects over the connect RPC (connect_rpc.h), so the same code
// runs against a server in this process (loopback) or in a `locus serve
// --index catfish` process (verbs), and runs its share of the transaction
// phase with its own selector; results are merged, with the selector's
// server-side share and the offloading counters as extra numbers.
//
// YCSB operations become spatial ones as in the scenario driver, through
// the same CatfishSession (catfish_session.h): a key number is a place
// (workload::place_at_key); reads and scans are searches with a query
// rectangle of `query_scale` there, inserts and updates insert a data
// rectangle there (a new id each), read-modify-writes do both.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/index/catfish/catfish_client.h"
#include "core/index/catfish/catfish_server.h"
#include "core/metrics/run_result.h"
#include "core/rpc/rpc_server.h"
#include "core/selector/selector_config.h"
#include "core/transport/runtime.h"
#include "core/workload/spatial.h"
#include "core/workload/workload_spec.h"

namespace locus::harness {

// Same as pilaf_bench.h's: makes a fresh runtime for one run.
using RuntimeFactory = std::function<std::unique_ptr<Runtime>(uint64_t seed)>;

struct CatfishBenchConfig {
  std::string name = "catfish";
  workload::WorkloadSpec workload;  // recordcount: rectangles loaded
  workload::QueryScale query_scale = workload::QueryScale::kSmall;
  uint32_t clients = 4;
  uint32_t workers = 2;  // messaging workers (the paper's server cores)
  // store.geometry.node_slots 0 (the default here) sizes the tree's region
  // from the rectangles it will hold; messaging.connections_per_worker 0
  // gives each worker room for its share of `clients` and a few more.
  catfish::CatfishServerOptions server = default_server_options();
  catfish::CatfishClientOptions client = default_client_options();
  selector::SelectorConfig selector;
  uint64_t seed = 1;

  // 1 KB nodes; answers of up to 256 KB (6,500 hits: a 1e-2 query over
  // 2 M rectangles finds ~50); heartbeats every 10 ms (the back-off
  // selector's default Inv; a server in another process cannot know the
  // clients' selector).
  static catfish::CatfishServerOptions default_server_options();
  static catfish::CatfishClientOptions default_client_options();
};

// Node slots for a tree of up to `rectangles` rectangles of `geometry`'s
// nodes: each at the minimum fill three times over, plus room for growth.
uint32_t node_slots_for(const catfish::Geometry& geometry, uint64_t rectangles);

// Checks what Catfish can run, with a message naming the offending setting.
Status validate(const CatfishBenchConfig& config);

// The rectangle with id `id` (0 .. recordcount-1) that start_catfish_servers
// loads for `seed`: tests rebuild the server's data from it.
catfish::Rect loaded_rectangle(uint64_t seed, uint64_t id);

// A running Catfish server: its nodes, the tree and the connect RPC server.
// Destroy it before its Runtime (it deregisters memory through it).
struct CatfishServerSet {
  NodeId bootstrap = kInvalidNode;  // the connect node clients call
  std::vector<NodeId> workers;      // one endpoint per messaging worker
  std::unique_ptr<catfish::CatfishServer> server;
  std::unique_ptr<rpc::RpcServer> rpc;  // declared last: destroyed first, it calls into `server`

  // The connect RPC server and the workers as daemon actors; call before
  // each Runtime::run().
  Status spawn_daemons(Runtime& runtime);
};

// run_catfish_bench's two halves, usable apart for a server in another
// process (verbs: `locus serve --index catfish` runs the first, `locus
// bench --index catfish --backend verbs` the second), as in cell_bench.h.
//
// Adds the connect node, then config.workers worker nodes (on verbs:
// nodes 0 and 1..workers of the cluster file) and loads the rectangles.
StatusOr<CatfishServerSet> start_catfish_servers(Runtime& runtime, const CatfishBenchConfig& config);
// Adds config.clients client nodes to `runtime` and runs the transaction
// phase against the server whose connect node is `bootstrap` (a node of
// this runtime or, on verbs, of another process). Server-side figures are
// not in the result.
StatusOr<metrics::RunResult> run_catfish_clients(Runtime& runtime, NodeId bootstrap,
                                                 const CatfishBenchConfig& config);

// Both halves in one runtime, with the server's own figures in the result.
StatusOr<metrics::RunResult> run_catfish_bench(const RuntimeFactory& make_runtime, const CatfishBenchConfig& config);

}  // namespace locus::harness
