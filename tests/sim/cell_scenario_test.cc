// Cell under the scenario runner on SimGrid: a small one-server tree run
// with each fixed path and with JSQ. Server-only must leave the NIC's RDMA
// engine idle and client-only the server's CPU; with one overloaded core,
// JSQ must move most steps to the client side. Growth (inserts that split
// meganodes while the split workers run) must finish without errors, and
// the time series must cover the run.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/designs/designs.h"
#include "core/metrics/run_result.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

const char* kCell = R"(
[platform]
servers = 1
cores_per_server = 1
[platform.nic]
read = [[128, 1.6e6], [1024, 1.04e6]]
send = [[128, 0.75e6], [1024, 0.6e6]]
recv = [[128, 1.5e6], [1024, 1.2e6]]
[platform.cpu]
default_handler_us = 0
client_op_us = 0.3
[index]
type = "cell"
meganode_bytes = 8388608
meganodes_per_server = 4
[workload]
recordcount = 20000
readproportion = 1.0
updateproportion = 0.0
requestdistribution = "uniform"
fieldcount = 1
fieldlength = 100
[selector]
type = "server_only"
[run]
clients = 12
duration_s = 0.02
warmup_s = 0.005
)";

runner::ScenarioReport simulate(const std::vector<std::string>& sets) {
  auto report = testing::simulate_scenario(kCell, "cell.toml", sets);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const metrics::RunResult& r = report->result;
  BOOST_TEST(r.stats.total_ops() > 1000u);
  BOOST_TEST(r.stats.total_failed() == 0u);
  BOOST_TEST(r.stats.counter_value("failed_ops") == 0);
  BOOST_TEST(r.extra.at("cell.split_failures") == 0.0);
  return std::move(report).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_scenarios)

BOOST_AUTO_TEST_CASE(server_only_leaves_rdma_idle) {
  const auto r = simulate({"selector.type=server_only"});
  BOOST_TEST(r.result.extra.at("server_share") == 1.0);
  BOOST_TEST(r.result.stats.counter_value("cell.node_reads") == 0);
  BOOST_TEST(testing::utilization_of(r, "server0.nic.rdma") < 0.01);
  BOOST_TEST(testing::utilization_of(r, "server0.cpu") > 0.9);  // 12 clients saturate one core
}

BOOST_AUTO_TEST_CASE(client_only_leaves_server_cpu_idle) {
  const auto r = simulate({"selector.type=client_only"});
  BOOST_TEST(r.result.extra.at("server_share") == 0.0);
  BOOST_TEST(r.result.stats.counter_value("cell.server_steps") == 0);
  BOOST_TEST(r.result.stats.counter_value("cell.node_reads") > 0);
  BOOST_TEST(testing::utilization_of(r, "server0.cpu") < 0.02);
  BOOST_TEST(testing::utilization_of(r, "server0.nic.rdma") > 0.5);
}

BOOST_AUTO_TEST_CASE(jsq_moves_steps_off_an_overloaded_core) {
  const auto server = simulate({"selector.type=server_only"});
  const auto r = simulate({"selector.type=jsq", "output.timeseries_ms=5"});
  const double share = r.result.extra.at("server_share");
  BOOST_TEST_MESSAGE("JSQ server-side share " << share);
  BOOST_TEST(share > 0.05);
  BOOST_TEST(share < 0.75);
  BOOST_TEST(r.result.stats.total_ops() > server.result.stats.total_ops());
  BOOST_REQUIRE_EQUAL(r.timeseries.size(), 4u);  // 20 ms in 5 ms windows
  for (const runner::TimeseriesWindow& w : r.timeseries) {
    BOOST_TEST(w.ops > 0u);
    BOOST_TEST(w.latency_us_p90 >= w.latency_us_p50);
    BOOST_TEST(w.server_share >= 0.0);
  }
}

// Issue 15's selector goal where the servers' NIC send queues (the
// replies) bind: scenarios/cell/four-servers.toml at 6 cores, where the
// best fixed split sends 20% of steps client-side (docs/results.md, the
// whole sweep). JSQ reached 0.88 of it while the simulator let queued
// replies hold up READ responses (every latency rule then saw slow READs).
BOOST_AUTO_TEST_CASE(jsq_matches_the_best_split_when_replies_bind) {
  auto run = [](std::vector<std::string> sets) {
    sets.emplace_back("platform.cores_per_server=6");
    auto r = testing::simulate_file(LOCUS_SOURCE_DIR "/scenarios/cell/four-servers.toml", sets);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    BOOST_TEST(r->result.stats.total_failed() == 0u);
    return static_cast<double>(r->result.stats.total_ops());
  };
  const double best = run({"selector.type=fixed_ratio", "selector.client_fraction=0.2"});
  const double jsq = run({"selector.type=jsq"});
  BOOST_TEST_MESSAGE("JSQ " << jsq << " operations, the 0.2 split " << best);
  BOOST_TEST(jsq >= 0.98 * best);
}

// The figures a run prints so its mechanism can be set beside the paper's
// text (a 64 MB meganode of 1 KB nodes has 5 levels; clients cache only
// nodes at least four levels above the leaves): here one meganode of 4
// levels. A server-side search visits all 4 (the load's inserts, which go
// through the same handlers, counted 0-2 a request before the driver reset
// the server's counts after loading: 3.7 for 3.9 on four-servers.toml); a
// client-side search READs all 4 with nothing cached, and 2 with the cache
// taking the top two levels (the figures are the measured window's).
BOOST_AUTO_TEST_CASE(runs_print_tree_levels_reads_and_cache_hits) {
  const runner::ScenarioReport server = simulate({});
  BOOST_TEST(server.result.extra.at("cell.leaf_meganode_levels_min") == 4.0);
  BOOST_TEST(server.result.extra.at("cell.leaf_meganode_levels_max") == 4.0);
  BOOST_TEST(server.result.extra.at("cell.node_levels") == 4.0);
  BOOST_TEST(server.result.extra.at("cell.nodes_per_server_request") == 4.0);
  const runner::ScenarioReport client = simulate({"selector.type=client_only"});
  BOOST_TEST(client.result.extra.at("cell.reads_per_client_step") == 4.0);
  BOOST_TEST(client.result.extra.at("cell.node_cache_hit_rate") == 0.0);
  const runner::ScenarioReport cached = simulate({"selector.type=client_only", "index.cache_min_distance=2"});
  const double reads = cached.result.extra.at("cell.reads_per_client_step");
  const double hits = cached.result.extra.at("cell.node_cache_hit_rate");
  BOOST_TEST_MESSAGE("top two levels cached: " << reads << " READs a step, hit rate " << hits);
  // Over the measured window: each client's first steps, which READ all
  // 4 while its cache fills, fall in the warm-up (counted in, they gave
  // 2.03 READs and a 0.496 hit rate).
  BOOST_TEST(reads == 2.0);
  BOOST_TEST(hits == 0.5);
  BOOST_TEST(cached.result.extra.at("cell.path_cache_hits_per_op") > 0.99);
}

BOOST_AUTO_TEST_CASE(inserts_grow_the_tree_while_clients_run) {
  const auto r = simulate({"selector.type=jsq", "platform.servers=2", "index.meganode_bytes=262144", "index.meganodes_per_server=64",
                           "workload.readproportion=0.5", "workload.insertproportion=0.5",
                           "workload.operationcount=100000"});
  BOOST_TEST(r.result.extra.at("cell.meganode_splits_run") > 0.0);
  BOOST_TEST(r.result.extra.at("cell.keys") > 20000.0);
}

// Several worker actors of one server run range handlers concurrently
// (each yields in its CPU charge): every scan must still return its own,
// ordered entries.
BOOST_AUTO_TEST_CASE(scans_on_a_multi_core_server) {
  const auto r = simulate({"selector.type=server_only", "platform.cores_per_server=4", "workload.readproportion=0.5",
                           "workload.scanproportion=0.5", "workload.maxscanlength=50"});
  const metrics::OpSummary* scans = r.result.stats.find_op("SCAN");
  BOOST_REQUIRE(scans != nullptr);
  BOOST_TEST(scans->count() > 100u);
  BOOST_TEST(testing::utilization_of(r, "server0.cpu") > 0.3);  // more than one core's worth: handlers overlapped
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
