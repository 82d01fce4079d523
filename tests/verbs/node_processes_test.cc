// One server per process on verbs (`locus serve --node K`): for each design
// that supports it, N `locus serve --node K` child processes each serve one
// server machine of a scenario from one cluster file (fixed ports: every
// process must know its peers'), and a `locus run --backend verbs` child
// runs the clients against them all, or (Nessie's symmetric shape) every
// node runs its own clients with --with-clients. The designs whose load
// spans servers (the NAM index's fine-grained and hybrid trees, Nessie's
// cuckoo walk over every node's index table) are loaded the same way in
// every process, each keeping its own machine's memory: get_misses = 0
// (every loaded record found) is the check that the processes agree.
// Also the errors: an entry that cannot be bound, and a peer that never
// comes up (a timeout naming it, exit 1, no abort). Argument errors that
// need no device are in tests/cli/serve_node_test.sh.
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;
using locus::testing::ChildProcess;
using verbs::testing::figure;
using verbs::testing::RunResults;
using verbs::testing::ServedIndex;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("node_processes_verbs_test");
  return true;
}();

// Fixed ports for a test's entries: every node must know its peers' before
// they listen. Spread by process id, fresh for every call.
std::vector<std::string> fresh_ports(size_t count) {
  static uint32_t next = 21000 + static_cast<uint32_t>(getpid() % 2000) * 16;
  std::vector<std::string> ports;
  for (size_t i = 0; i < count; ++i) ports.push_back(std::to_string(next++));
  return ports;
}

// The scenario's machines, each served by its own `locus serve --node K`.
struct Nodes {
  ServedIndex t;  // dir, scenario, sets, the cluster file (t.server unused)
  std::vector<std::unique_ptr<ChildProcess>> serves;
};

std::vector<std::string> node_argv(const Nodes& n, size_t k, const std::vector<std::string>& extra) {
  std::vector<std::string> argv{LOCUS_BINARY,      "serve",         n.t.scenario,
                                "--config",        n.t.config_path, "--node",
                                std::to_string(k), "--ready-file",  n.t.dir + "/ready" + std::to_string(k)};
  for (const std::string& s : n.t.sets) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Starts `machines` nodes of `scenario` at once and waits until each says
// every peer is up (its ready file). `extra(k, dir)`: node k's own
// arguments (dir: the test's directory).
using NodeArgs = std::function<std::vector<std::string>(size_t, const std::string&)>;
Nodes start_nodes(const std::string& name, const std::string& scenario, const std::vector<std::string>& sets,
                  size_t machines, size_t per_machine, const NodeArgs& extra = {}) {
  Nodes n;
  n.t.dir = verbs::testing::make_temp_dir(name);
  n.t.scenario = scenario;
  n.t.sets = sets;
  n.t.config_path = n.t.dir + "/cluster.toml";
  verbs::testing::write_file(n.t.config_path, verbs::testing::cluster_toml(verbs::testing::local_address(),
                                                                           fresh_ports(machines * per_machine)));
  auto config = verbs::load_cluster_config(n.t.config_path);
  BOOST_REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
  n.t.config = *config;
  for (size_t k = 0; k < machines; ++k) {
    n.serves.push_back(
        std::make_unique<ChildProcess>(node_argv(n, k, extra ? extra(k, n.t.dir) : std::vector<std::string>{}),
                                       n.t.dir + "/serve" + std::to_string(k) + ".log"));
  }
  for (size_t k = 0; k < machines; ++k) {
    const auto ready =
        verbs::testing::wait_for_lines(n.t.dir + "/ready" + std::to_string(k), per_machine, 240'000, n.serves[k].get());
    BOOST_REQUIRE_MESSAGE(ready.size() == per_machine, "node " << k << " did not start (" << n.serves[k]->ending()
                                                               << "):\n"
                                                               << n.serves[k]->output());
  }
  return n;
}

// Stops every node (SIGTERM) and returns each one's stopping figures.
std::vector<std::map<std::string, double>> stop_nodes(Nodes& n) {
  std::vector<std::map<std::string, double>> figures;
  for (auto& serve : n.serves) {
    n.t.server = std::move(serve);
    figures.push_back(verbs::testing::stop_served_index(n.t, 120'000));
    serve = std::move(n.t.server);
  }
  return figures;
}

int64_t counter(const RunResults& r, const std::string& name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? -1 : it->second;
}

// `machines` nodes, `runs` `locus run`s of every client against them, one
// after another: no failure, every get found, every node asked (its RPC
// counted). A later run needs what the earlier one's clients gave back
// (Nessie's slices and rings, sized for one run's clients).
void nodes_and_run(const std::string& name, const std::string& scenario, const std::vector<std::string>& sets,
                   size_t machines, size_t per_machine, const std::string& loaded_figure, double records,
                   int runs = 1) {
  Nodes n = start_nodes(name, scenario, sets, machines, per_machine);
  for (int k = 0; k < runs; ++k) {
    const std::string tag = name + (k == 0 ? "" : "_run" + std::to_string(k + 1));
    auto run = verbs::testing::start_run(n.t, tag, {});
    const RunResults r = verbs::testing::finish_run(n.t, *run, tag, 400'000);
    BOOST_TEST(r.ops.count("READ") == 1u, tag << ": no gets:\n" << run->output());
    BOOST_TEST(counter(r, "get_misses") == 0, tag << ": loaded records not found:\n" << run->output());
    BOOST_TEST(counter(r, "release_failures") <= 0, tag << ": clients could not give back their share:\n"
                                                        << run->output());
  }
  const auto figures = stop_nodes(n);
  for (size_t k = 0; k < machines; ++k) {
    const std::string out = n.serves[k]->output();
    BOOST_TEST(figure(figures[k], "rpc_requests") > 0, name << ": node " << k << " was never asked:\n" << out);
    BOOST_TEST(figure(figures[k], "rpc_rejected") == 0, out);
    // Every process ran the whole load (its own machine's share live).
    BOOST_TEST(figure(figures[k], loaded_figure) == records, out);
  }
}

// nessie.toml in `mode`; NessieSD and NessieHY with one polling server
// thread per node (the guest has two cores).
std::vector<std::string> nessie_sets(const std::string& mode) {
  std::vector<std::string> sets = {"index.mode=\"" + mode + "\""};
  if (mode != "client") sets.push_back("index.server_threads=1");
  return sets;
}
// Endpoints per node: the tables', and NessieSD/NessieHY's server thread's.
size_t nessie_endpoints(const std::string& mode) { return mode == "client" ? 1 : 2; }

// Nessie's symmetric deployment: every node serves and runs its own
// clients (run.clients_on_servers), whose results it writes when stopped.
void nessie_symmetric(const std::string& mode) {
  const std::string name = "nessie_symmetric_" + mode;
  std::vector<std::string> sets = nessie_sets(mode);
  sets.push_back("run.clients_on_servers=true");
  constexpr size_t kNodes = 2;
  Nodes n = start_nodes(
      name, verbs::testing::scenario_path("nessie.toml"), sets, kNodes, nessie_endpoints(mode),
      [](size_t k, const std::string& dir) {
        return std::vector<std::string>{"--with-clients", "--json", dir + "/node" + std::to_string(k) + ".json"};
      });
  // Each node's clients run for run.duration_s (4 s) from when its peers
  // were up; the nodes serve on until stopped, so stop them after that.
  std::this_thread::sleep_for(std::chrono::seconds(7));
  const auto figures = stop_nodes(n);
  for (size_t k = 0; k < kNodes; ++k) {
    const std::string out = n.serves[k]->output();
    BOOST_TEST(figure(figures[k], "nessie.loaded_records") == 2000, out);
    const RunResults r = verbs::testing::read_run_json(n.t.dir + "/node" + std::to_string(k) + ".json");
    BOOST_TEST(r.ok(), r.error << "\n" << out);
    BOOST_TEST(r.total_ops > 0u, name << ": node " << k << " ran no operation:\n" << out);
    BOOST_TEST(r.failed == 0u, name << ": node " << k << ": operations failed:\n" << out);
    BOOST_TEST(counter(r, "failed_ops") <= 0, out);
    BOOST_TEST(counter(r, "get_misses") == 0, name << ": node " << k << ": loaded records not found:\n" << out);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(node_processes)

BOOST_AUTO_TEST_CASE(pilaf_one_server_per_process) {
  nodes_and_run("node_pilaf", verbs::testing::scenario_path("pilaf.toml"), {"platform.servers=2"}, 2, 1, "pilaf.keys",
                200);
}

BOOST_AUTO_TEST_CASE(nam_coarse_one_server_per_process) {
  nodes_and_run("node_nam_coarse", verbs::testing::scenario_path("nam.toml"), {"index.distribution=\"coarse\""}, 2, 1,
                "nam.loaded_pairs", 4000);
}
BOOST_AUTO_TEST_CASE(nam_fine_one_server_per_process) {
  nodes_and_run("node_nam_fine", verbs::testing::scenario_path("nam.toml"), {"index.distribution=\"fine\""}, 2, 1,
                "nam.loaded_pairs", 4000);
}
BOOST_AUTO_TEST_CASE(nam_hybrid_one_server_per_process) {
  nodes_and_run("node_nam_hybrid", verbs::testing::scenario_path("nam.toml"), {"index.distribution=\"hybrid\""}, 2, 1,
                "nam.loaded_pairs", 4000);
}

BOOST_AUTO_TEST_CASE(nessie_one_server_per_process) {
  for (const std::string mode : {"client", "server", "hybrid"}) {
    // Two runs: the nodes' slices and rings are sized for one run's clients.
    nodes_and_run("node_nessie_" + mode, verbs::testing::scenario_path("nessie.toml"), nessie_sets(mode), 2,
                  nessie_endpoints(mode), "nessie.loaded_records", 2000, 2);
  }
}

BOOST_AUTO_TEST_CASE(nessie_nodes_with_their_own_clients) {
  nessie_symmetric("client");
  nessie_symmetric("server");
}

// Entry K names an address of no interface here: node K cannot listen.
BOOST_AUTO_TEST_CASE(entry_that_cannot_be_bound) {
  const std::string dir = verbs::testing::make_temp_dir("node_unbindable");
  verbs::testing::write_file(dir + "/cluster.toml", verbs::testing::cluster_toml("192.0.2.1", fresh_ports(2)));
  ChildProcess serve({LOCUS_BINARY, "serve", verbs::testing::scenario_path("nam.toml"), "--config",
                      dir + "/cluster.toml", "--node", "1"},
                     dir + "/serve.log");
  const int end = serve.wait(120'000);
  BOOST_TEST(end == 1, serve.ending() << ":\n" << serve.output());
  BOOST_TEST(serve.output().find("cannot bind 192.0.2.1") != std::string::npos, serve.output());
}

// Node 0 of two, node 1 never started: a timeout that names node 1 and
// its address, exit 1.
BOOST_AUTO_TEST_CASE(peer_that_never_comes_up) {
  const std::string dir = verbs::testing::make_temp_dir("node_lonely");
  const std::vector<std::string> ports = fresh_ports(2);
  const std::string address = verbs::testing::local_address();
  verbs::testing::write_file(dir + "/cluster.toml", verbs::testing::cluster_toml(address, ports));
  ChildProcess serve({LOCUS_BINARY, "serve", verbs::testing::scenario_path("nam.toml"), "--config",
                      dir + "/cluster.toml", "--node", "0", "--peer-timeout-s", "3"},
                     dir + "/serve.log");
  const int end = serve.wait(180'000);
  const std::string out = serve.output();
  BOOST_TEST(end == 1, serve.ending() << ":\n" << out);
  BOOST_TEST(out.find("node 1 of") != std::string::npos, out);
  BOOST_TEST(out.find(address + ":" + ports[1]) != std::string::npos, out);
  BOOST_TEST(out.find("--peer-timeout-s") != std::string::npos, out);
}

BOOST_AUTO_TEST_SUITE_END()
