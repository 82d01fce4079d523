// `locus serve`: see serve_command.h. The scenario's servers run through
// the one run path (core/runner/scenario_run.h) with the clients
// elsewhere: RPC workers, the design's daemons and one worker actor that
// waits for the stop flag a SIGINT or SIGTERM handler sets.
#include "apps/locus/serve_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "apps/locus/cli_checks.h"
#include "core/common/status.h"

#ifdef LOCUS_HAVE_VERBS
#include "apps/locus/node_serving.h"
#include "apps/locus/zookeeper_cluster.h"
#include "backends/verbs/verbs_runtime.h"
#include "core/designs/designs.h"
#include "core/metrics/run_result.h"
#include "core/runner/scenario_run.h"
#endif

namespace locus::cli {
namespace {

struct ServeOptions {
  std::string scenario_path;
  std::vector<std::string> sets;
  std::string config_path;
  std::string ready_file;
  std::string zookeeper;  // HOST:PORT/PATH, or the cluster file's [zookeeper]
  bool quiet = false;
  double max_memory_bytes = -1;  // cli_checks.h
  // --node K: this process serves server machine K only (node_serving.h).
  int64_t node = -1;
  bool with_clients = false;  // --with-clients: and runs machine K's clients
  double peer_timeout_s = 120;
  std::string json_path;  // --with-clients: the results
};

// Set from signal handlers: a lock-free atomic store is async-signal-safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int) { g_stop.store(true, std::memory_order_release); }

#ifdef LOCUS_HAVE_VERBS
// Written after listening, so a script that waits for it can connect at once.
Status write_ready_file(const std::string& path, const std::vector<std::string>& addresses) {
  if (path.empty()) return Status();
  std::ofstream ready(path);
  for (const std::string& a : addresses) ready << a << "\n";
  if (!ready) return invalid_argument("--ready-file: cannot write " + path);
  return Status();
}

Status serve(const ServeOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, designs::load_scenario(o.scenario_path, o.sets));
  LOCUS_ASSIGN_OR_RETURN(verbs::ClusterConfig cluster, verbs::load_cluster_config(o.config_path));
  if (cluster.servers.empty()) {
    return invalid_argument(o.config_path +
                            ": `locus serve` needs [[server]] entries to listen on (port 0: any free "
                            "port); [zookeeper] alone is a client's cluster file");
  }
  const std::string zookeeper = o.zookeeper.empty() ? cluster.zookeeper : o.zookeeper;
  if (!zookeeper.empty()) LOCUS_RETURN_IF_ERROR(zookeeper::parse_zookeeper_target(zookeeper).status());
  // Keeps the servers registered while serving; closed (members gone at
  // once) when serving stops.
  std::unique_ptr<zookeeper::ZooKeeperMembership> membership;
  runner::RunOptions ro;
  ro.placement = {.servers_here = true, .clients_here = o.with_clients};
  // --node K: the cluster entries of machine K listen here; the rest are peers.
  NodePlan plan;
  if (o.node >= 0) {
    if (!zookeeper.empty()) {
      return invalid_argument(
          "--node with ZooKeeper (--zookeeper or the cluster file's [zookeeper]): not supported "
          "yet; each node announces only its own entries, so list every [[server]] in the "
          "cluster file instead");
    }
    LOCUS_ASSIGN_OR_RETURN(plan, plan_node(s, cluster, o.node, ro.placement));
    ro.serve_machine = o.node;
  } else if (o.with_clients) {
    return invalid_argument("--with-clients needs --node K: the clients of machine K run beside its server");
  }
  const MemoryLimit limit = memory_limit(o.max_memory_bytes);
  ro.max_memory_bytes = limit.bytes;
  ro.max_memory_source = limit.source;
  ro.stop = &g_stop;
  ro.on_servers_ready = [&](Runtime& runtime, std::span<const NodeId> servers) -> Status {
    auto& vr = static_cast<verbs::VerbsRuntime&>(runtime);
    std::vector<std::string> addresses;
    for (NodeId n : servers) {
      LOCUS_ASSIGN_OR_RETURN(verbs::ServerAddress where, vr.server_address(n));
      addresses.push_back(where.to_string());
    }
    if (!zookeeper.empty()) {
      LOCUS_ASSIGN_OR_RETURN(membership, announce_servers(zookeeper, addresses));
      // Cell's pointers name regions: the map tells clients (and a takeover
      // tells them anew) which server holds each.
      if (s.index.type == "cell")
        LOCUS_RETURN_IF_ERROR(publish_cell_layout(*membership, cell_region_map(servers.size())));
      fmt::print("locus serve: announced {} server(s) in ZooKeeper at {}\n", servers.size(), zookeeper);
    }
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    const uint32_t first_entry = plan.listen_first;
    fmt::print(
        "locus serve: {} ({}, {} server(s)) on entries {}-{} of {}, listening on {} via {}; records loaded; "
        "SIGINT or SIGTERM stops it\n",
        s.source, s.index.type, s.platform.servers, first_entry, first_entry + servers.size() - 1, o.config_path,
        fmt::join(addresses, ", "), vr.device_name(servers.front()));
    std::fflush(stdout);
    if (o.node >= 0) {
      vr.accept_connections();  // loaded: peers may now see this node up
      LOCUS_RETURN_IF_ERROR(wait_for_peers(vr, plan, o.peer_timeout_s, &g_stop));
      fmt::print("locus serve: node {}: every peer is up{}\n", o.node, o.with_clients ? "; its clients start" : "");
      std::fflush(stdout);
    }
    return write_ready_file(o.ready_file, addresses);
  };
  auto factory = [&cluster, &o, &plan](const scenario::Scenario& sc) -> std::unique_ptr<Runtime> {
    return verbs::make_verbs_runtime(
        cluster, {.seed = sc.run.seed,
                  .log_connections = !o.quiet,
                  .listen_first = plan.listen_first,
                  .listen_end = plan.listen_end,
                  .hold_connections = o.node >= 0,
                  // Each node's clients claim ids of their own.
                  .client_id_base = o.node >= 0 ? static_cast<uint32_t>(o.node) * sc.run.clients : 0});
  };
  LOCUS_ASSIGN_OR_RETURN(runner::ScenarioReport report, runner::run_scenario(s, designs::registry(), factory, ro));
  std::string figures;
  for (const auto& [name, value] : report.result.extra) figures += fmt::format(" {}={}", name, value);
  fmt::print("locus serve: stopping:{}\n", figures);
  if (o.with_clients) {
    const std::vector<metrics::RunResult> results{report.result};
    fmt::print("{}", metrics::format_table(results));
    if (!o.json_path.empty()) LOCUS_RETURN_IF_ERROR(metrics::write_json_file(o.json_path, results));
  }
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
      "serve", "Run a scenario's servers on a verbs cluster until SIGINT/SIGTERM (clients: locus run --backend verbs)");
  cmd->add_option("scenario", opts->scenario_path, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--config", opts->config_path,
                  "The cluster file (TOML): each server entry's address and port; the scenario's server "
                  "endpoints take its first entries in order")
      ->required();
  cmd->add_option("--set", opts->sets, "Override a scenario key, e.g. --set workload.recordcount=1000 (repeatable)");
  cmd->add_option("--zookeeper", opts->zookeeper,
                  "Announce the servers in ZooKeeper (HOST:PORT[,HOST:PORT...][/PATH], default path /locus; "
                  "overrides the cluster file's [zookeeper] connect): clients then need only that address");
  cmd->add_option("--ready-file", opts->ready_file, "Write the listening addresses to FILE once serving");
  cmd->add_flag("--quiet", opts->quiet, "Do not log connects and disconnects");
  cmd->add_option("--node", opts->node,
                  "Serve only server machine K (0 to platform.servers - 1) of the scenario: one server per "
                  "machine. Its endpoints listen on the cluster file's entries from K x (endpoints per machine); "
                  "the other entries are its peers, each served by its own `locus serve --node`")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--with-clients", opts->with_clients,
                "With --node K: also run the clients run.clients_on_servers places on machine K (the symmetric "
                "deployment, Nessie's): they run for run.duration_s, then the node serves on until stopped and "
                "prints their results");
  cmd->add_option("--peer-timeout-s", opts->peer_timeout_s,
                  "With --node: how long to wait for every peer to accept connections before giving up (default 120)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--json", opts->json_path, "With --with-clients: write the clients' results as JSON to FILE");
  add_max_memory_option(*cmd, &opts->max_memory_bytes);
  cmd->callback([opts, &exit_code] {
    Status st = catch_bad_alloc("locus serve " + opts->scenario_path, [&] { return serve(*opts); });
    if (!st.is_ok()) {
      fmt::print(stderr, "locus serve: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
