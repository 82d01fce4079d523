// `locus serve`: see serve_command.h. A Pilaf server serves on the main
// thread: RpcServer::serve() returns once a signal handler sets the stop
// flag it polls every 10 ms. A Cell tree's servers and split workers are
// the Deployment's daemon actors, and a Catfish server's connect RPC and
// messaging workers are daemon actors too, kept running by one worker
// actor that waits for that flag.
#include "apps/locus/serve_command.h"

#include <csignal>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/status.h"

#ifdef LOCUS_HAVE_VERBS
#include "backends/verbs/verbs_runtime.h"
#include "core/harness/catfish_bench.h"
#include "core/harness/cell_bench.h"
#include "core/harness/pilaf_bench.h"
#include "core/workload/workload_spec.h"
#endif

namespace locus::cli {
namespace {

struct ServeOptions {
  std::string index = "pilaf";
  uint32_t servers = 1;  // cell: servers of the tree, all in this process
  uint32_t workers = 2;  // catfish: messaging workers, nodes 1..workers
  std::string messaging = "polling";  // catfish: how workers wait for requests
  uint32_t connections = 64;          // catfish: connection slots per worker
  std::vector<std::string> given;     // options set on the command line
  std::string config_path;
  uint32_t node = 0;
  uint64_t records = 1000;
  std::string workload = "b";
  std::vector<std::string> properties;
  uint64_t seed = 1;
  std::string ready_file;
  bool quiet = false;
};

// Set from signal handlers: a lock-free atomic store is async-signal-safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int) { g_stop.store(true, std::memory_order_release); }

#ifdef LOCUS_HAVE_VERBS
StatusOr<workload::WorkloadSpec> load_spec(const ServeOptions& o) {
  auto spec = workload::standard_workload(o.workload.empty() ? 'x' : o.workload[0]);
  if (o.workload.size() != 1 || !spec.is_ok()) return invalid_argument("--workload: expected one letter a-f");
  workload::WorkloadSpec load = *spec;
  load.recordcount = o.records;
  for (const std::string& p : o.properties) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos) return invalid_argument("--property: expected name=value, got '" + p + "'");
    LOCUS_RETURN_IF_ERROR(workload::set_property(load, p.substr(0, eq), p.substr(eq + 1)));
  }
  return load;
}

// Written after listening, so a script that waits for it can connect at once.
Status write_ready_file(const std::string& path, const std::vector<std::string>& addresses) {
  if (path.empty()) return Status();
  std::ofstream ready(path);
  for (const std::string& a : addresses) ready << a << "\n";
  if (!ready) return invalid_argument("--ready-file: cannot write " + path);
  return Status();
}

// Keeps a runtime's daemons serving until SIGINT or SIGTERM.
Status spawn_until_signal(Runtime& runtime, NodeId node) {
  return runtime.spawn(node, "until-signal", ActorKind::kWorker, [](Env& env) {
    while (!g_stop.load(std::memory_order_acquire)) env.clock->sleep_for(10 * kMillisecond);
  });
}

// A Cell tree of --servers servers, nodes 0 .. servers-1 of the cluster
// file, all in this process (the region table is built in one process;
// clients anywhere fetch it from node 0), loaded like `locus bench --index
// cell` loads its own. Meganode splits of the run go on here.
Status serve_cell(const ServeOptions& o, const verbs::ClusterConfig& cluster) {
  if (o.node != 0) return invalid_argument("--node: a Cell tree is served from node 0 (its superblock)");
  if (o.servers > cluster.servers.size()) {
    return invalid_argument("--servers: " + o.config_path + " lists only " + std::to_string(cluster.servers.size()));
  }
  harness::CellBenchConfig cfg;
  LOCUS_ASSIGN_OR_RETURN(cfg.workload, load_spec(o));
  cfg.servers = o.servers;
  cfg.seed = o.seed;
  auto runtime = verbs::make_verbs_runtime(cluster, {.seed = o.seed, .log_connections = !o.quiet});
  LOCUS_ASSIGN_OR_RETURN(auto deployment, harness::start_cell_servers(*runtime, cfg));
  LOCUS_RETURN_IF_ERROR(deployment->spawn_daemons());
  LOCUS_RETURN_IF_ERROR(spawn_until_signal(*runtime, deployment->bootstrap()));
  std::vector<std::string> addresses;
  for (uint32_t i = 0; i < o.servers; ++i) {
    LOCUS_ASSIGN_OR_RETURN(verbs::ServerAddress where, runtime->server_address(deployment->server(i).node_id()));
    addresses.push_back(where.to_string());
  }
  const cell::DeploymentStats loaded = deployment->stats();
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  fmt::print("locus serve: cell tree of {} server(s) (nodes 0-{} of {}) listening on {} via {}; {} records of "
             "workload {} loaded, {} meganodes, root level {}; SIGINT or SIGTERM stops it\n",
             o.servers, o.servers - 1, o.config_path, fmt::join(addresses, ", "),
             runtime->device_name(deployment->bootstrap()), o.records, o.workload, loaded.store.meganodes_in_use,
             loaded.root_level);
  std::fflush(stdout);
  LOCUS_RETURN_IF_ERROR(write_ready_file(o.ready_file, addresses));
  LOCUS_RETURN_IF_ERROR(runtime->run());
  const cell::DeploymentStats ds = deployment->stats();
  fmt::print("locus serve: cell stopping: {} requests served, {} rejected, {} meganode splits ({} while serving), "
             "{} split failures{}\n",
             ds.rpc_requests, ds.rpc_rejected, ds.splits, ds.splits - loaded.splits, ds.split_failures,
             ds.first_split_error.empty() ? "" : " (first: " + ds.first_split_error + ")");
  return Status();
}

// A Catfish R-tree server: the connect RPC on node 0 and --workers
// messaging workers on nodes 1..workers of the cluster file, all in this
// process (catfish_server.h says why each worker is a node), loaded with
// --records rectangles of the spatial workload for --seed (what `locus
// bench --index catfish` loads for the same seed).
Status serve_catfish(const ServeOptions& o, const verbs::ClusterConfig& cluster) {
  if (o.node != 0) {
    return invalid_argument("--node: a Catfish server is served from node 0 (its connect node; the workers are "
                            "nodes 1 to --workers)");
  }
  if (o.workers + 1 > cluster.servers.size()) {
    return invalid_argument("--workers: " + std::to_string(o.workers) + " worker(s) and the connect node need " +
                            std::to_string(o.workers + 1) + " [[server]] entries; " + o.config_path + " lists " +
                            std::to_string(cluster.servers.size()));
  }
  harness::CatfishBenchConfig cfg;
  LOCUS_ASSIGN_OR_RETURN(cfg.workload, load_spec(o));
  cfg.workers = o.workers;
  cfg.seed = o.seed;
  cfg.server.messaging.mode = o.messaging == "event" ? catfish::ServerMode::kEvent : catfish::ServerMode::kPolling;
  cfg.server.messaging.connections_per_worker = o.connections;
  // Room for as many inserts as rectangles loaded, and at least 100 K.
  cfg.server.store.geometry.node_slots =
      harness::node_slots_for(cfg.server.store.geometry, o.records + std::max<uint64_t>(o.records, 100'000));
  auto runtime = verbs::make_verbs_runtime(cluster, {.seed = o.seed, .log_connections = !o.quiet});
  LOCUS_ASSIGN_OR_RETURN(harness::CatfishServerSet set, harness::start_catfish_servers(*runtime, cfg));
  LOCUS_RETURN_IF_ERROR(set.spawn_daemons(*runtime));
  LOCUS_RETURN_IF_ERROR(spawn_until_signal(*runtime, set.bootstrap));
  std::vector<std::string> addresses;
  std::vector<NodeId> nodes{set.bootstrap};
  nodes.insert(nodes.end(), set.workers.begin(), set.workers.end());
  for (NodeId n : nodes) {
    LOCUS_ASSIGN_OR_RETURN(verbs::ServerAddress where, runtime->server_address(n));
    addresses.push_back(where.to_string());
  }
  const catfish::StoreStats loaded = set.server->store_stats();
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  fmt::print("locus serve: catfish R-tree with connect node 0 and {} {} worker(s) (nodes 1-{} of {}) listening on "
             "{} via {}; {} rectangles loaded (seed {}), height {}; SIGINT or SIGTERM stops it\n",
             o.workers, o.messaging, o.workers, o.config_path, fmt::join(addresses, ", "),
             runtime->device_name(set.bootstrap), loaded.rectangles, o.seed, loaded.height);
  std::fflush(stdout);
  LOCUS_RETURN_IF_ERROR(write_ready_file(o.ready_file, addresses));
  LOCUS_RETURN_IF_ERROR(runtime->run());
  const catfish::CatfishServerStats cs = set.server->stats();
  const catfish::MessagingServerStats ms = set.server->messaging().stats();
  fmt::print("locus serve: catfish stopping: {} connects ({} refused), {} requests served ({} searches, {} inserts, "
             "{} deletes), {} connections dropped, {} disconnected, {} slots reused, {} rectangles\n",
             cs.connects, cs.connects_refused, ms.requests, cs.searches, cs.inserts, cs.deletes,
             ms.dropped_connections, ms.disconnected, ms.reclaimed, set.server->store_stats().rectangles);
  for (const Status& why : set.server->messaging().connection_problems()) {
    fmt::print("locus serve: {}\n", why.to_string());
  }
  return Status();
}

// Options that belong to other indexes than --index.
Status check_options(const ServeOptions& o) {
  auto given = [&](const std::string& name) { return std::find(o.given.begin(), o.given.end(), name) != o.given.end(); };
  if (o.index != "cell" && given("--servers")) {
    return invalid_argument("--servers: only for --index cell" +
                            std::string(o.index == "catfish" ? " (catfish: --workers)" : ""));
  }
  for (const char* name : {"--workers", "--messaging", "--connections"}) {
    if (o.index != "catfish" && given(name)) return invalid_argument(std::string(name) + ": only for --index catfish");
  }
  return Status();
}

Status serve(const ServeOptions& o) {
  LOCUS_RETURN_IF_ERROR(check_options(o));
  LOCUS_ASSIGN_OR_RETURN(verbs::ClusterConfig cluster, verbs::load_cluster_config(o.config_path));
  if (o.index == "cell") return serve_cell(o, cluster);
  if (o.index == "catfish") return serve_catfish(o, cluster);
  LOCUS_ASSIGN_OR_RETURN(workload::WorkloadSpec load, load_spec(o));
  pilaf::StoreOptions store;
  store.initial_buckets = std::max<uint64_t>(o.records * 2, 1024);
  store.initial_extent_bytes = std::max<uint64_t>(o.records * 2048, 1 << 20);

  auto runtime = verbs::make_verbs_runtime(cluster, {.seed = o.seed, .log_connections = !o.quiet});
  LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime->add_server(o.node));
  Env env = runtime->setup_env(node);
  env.stop = &g_stop;  // RpcServer keeps a copy: set before creating it
  LOCUS_ASSIGN_OR_RETURN(harness::PilafServerSet server, harness::start_pilaf_server(env, store, load));
  LOCUS_ASSIGN_OR_RETURN(verbs::ServerAddress where, runtime->server_address(node));

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  fmt::print("locus serve: node {} of {} listening on {} via {}; {} records of workload {} loaded; "
             "SIGINT or SIGTERM stops it\n",
             node, o.config_path, where.to_string(), runtime->device_name(node), o.records, o.workload);
  std::fflush(stdout);
  LOCUS_RETURN_IF_ERROR(write_ready_file(o.ready_file, {where.to_string()}));
  server.rpc->serve();
  const rpc::RpcServerStats st = server.rpc->stats();
  fmt::print("locus serve: node {} stopping: {} requests served, {} handler errors, {} rejected, "
             "{} responses undeliverable\n",
             node, st.requests, st.handler_errors, st.rejected(), st.send_failures);
  return Status();
}
#else
Status serve(const ServeOptions&) {
  return unimplemented("this locus was built without the verbs backend (install libibverbs-dev and librdmacm-dev)");
}
#endif

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Run a Pilaf server, a Cell tree or a Catfish R-tree of a verbs cluster until SIGINT/SIGTERM");
  cmd->add_option("--index", opts->index, "Index structure to serve")
      ->check(CLI::IsMember({"pilaf", "cell", "catfish"}))
      ->capture_default_str();
  cmd->add_option("--workers", opts->workers,
                  "catfish: messaging workers (server cores), nodes 1 to N of the file; node 0 answers connects")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--messaging", opts->messaging,
                  "catfish: workers poll their request rings, or sleep until a WRITE_WITH_IMM wakes them")
      ->check(CLI::IsMember({"polling", "event"}))
      ->capture_default_str();
  cmd->add_option("--connections", opts->connections,
                  "catfish: client connections each worker holds at once (a dropped or departed client's "
                  "slot is reused)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--servers", opts->servers,
                  "cell: servers of the tree, nodes 0 to N-1 of the file, all run by this process (--node 0)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--config", opts->config_path, "The cluster file (TOML): each server's address and port")
      ->required();
  cmd->add_option("--node", opts->node, "Which server of the file this process is (0-based)")->required();
  cmd->add_option("--records", opts->records,
                  "Records loaded before serving (YCSB recordcount; catfish: rectangles)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--workload", opts->workload, "YCSB core workload whose records are loaded")
      ->check(CLI::IsMember({"a", "b", "c", "d", "e", "f"}))
      ->capture_default_str();
  cmd->add_option("-p,--property", opts->properties, "YCSB property override for the load, name=value");
  cmd->add_option("--seed", opts->seed, "Seed of the loaded values (catfish: rectangles)")->capture_default_str();
  cmd->add_option("--ready-file", opts->ready_file, "Write the listening address to FILE once serving");
  cmd->add_flag("--quiet", opts->quiet, "Do not log connects and disconnects");
  cmd->callback([opts, cmd, &exit_code] {
    for (const CLI::Option* opt : cmd->get_options()) {
      if (opt->count() > 0) opts->given.push_back(opt->get_name());
    }
    Status st = serve(*opts);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus serve: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
