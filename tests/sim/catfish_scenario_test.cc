// Catfish under the scenario runner on SimGrid: a small R-tree server (two
// cores, a messaging worker each, 20 K rectangles) searched by 16 clients with each
// selector. Every run must complete operations without failures; server-
// only must leave server0's RDMA engine idle, client-only the servers'
// CPUs; the back-off selector, with heartbeats every millisecond and a
// threshold the loaded server exceeds, must use both paths; JSQ must run;
// 10% inserts must land in the tree; bad [index] keys must be named.
// Regressions: an event-driven server never leaves a request waiting for
// the next heartbeat, and a saturated server reports (and is) busy, so
// the back-off at the paper's T = 95% offloads.
// The shipped scenario, whose server costs come from the Catfish paper's
// section IV-B (event-based fast messaging with the server's CPUs
// saturated), must reproduce that measurement (320 clients at 680.47 us).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <algorithm>
#include <string>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "tests/support/sim_scenario.h"
#include "core/designs/designs.h"
#include "core/design/index_driver.h"
#include "core/runner/scenario_run.h"
#include "core/metrics/run_result.h"
#include "core/scenario/scenario.h"

namespace locus {
namespace {

const char* kCatfish = R"(
[platform]
servers = 1
cores_per_server = 2
client_hosts = 2
cores_per_client_host = 8
[platform.link]
bandwidth_gbps = 100.0
latency_us = 0.6
[platform.nic]
read = [[64, 12.0e6], [1024, 8.0e6], [4096, 2.9e6]]
write = [[64, 14.0e6], [1024, 9.0e6], [4096, 2.9e6]]
[platform.cpu]
default_handler_us = 2.0
client_op_us = 0.2
[platform.cpu.handler_cost_us]
"catfish.search" = 20.0
"catfish.insert" = 30.0
[index]
type = "catfish"
rectangles = 20000
query_scale = "power"
server_mode = "event"
[workload]
recordcount = 100000
readproportion = 1.0
updateproportion = 0.0
requestdistribution = "uniform"
[selector]
type = "server_only"
[run]
clients = 16
duration_s = 0.012
warmup_s = 0.002
)";

runner::ScenarioReport run_on_simgrid(const StatusOr<scenario::Scenario>& sc, const runner::RunOptions& ro = {}) {
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto factory = [](const scenario::Scenario& s) {
    simgrid_backend::SimOptions o;
    o.seed = s.run.seed;
    return simgrid_backend::make_simgrid_runtime(s.platform, o);
  };
  auto report = runner::run_scenario(*sc, designs::registry(), factory, ro);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  return std::move(*report);
}

runner::ScenarioReport simulate(const std::vector<std::string>& sets) {
  runner::ScenarioReport report = run_on_simgrid(designs::parse_scenario(kCatfish, "catfish.toml", sets));
  const metrics::RunResult& r = report.result;
  BOOST_TEST(r.stats.total_ops() > 100u);
  BOOST_TEST(r.stats.counter_value("failed_ops") == 0);
  BOOST_TEST(r.extra.at("catfish.dropped_connections") == 0.0);
  return report;
}

int64_t counter(const runner::ScenarioReport& r, const std::string& name) {
  return r.result.stats.counter_value(name);
}

Nanos max_latency_ns(const runner::ScenarioReport& r) {
  Nanos m = 0;
  for (const auto& op : r.result.stats.ops()) m = std::max(m, op.latency.max());
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(catfish_scenarios)

// The shipped scenario with `sets` (after 200 K rectangles, which keep the
// load short: the costs are its calibrated table's, which the tree's size
// does not change; the tree is one level lower, and a 0.05 s run with 0.02
// s of warm-up, which `sets` may change).
runner::ScenarioReport simulate_shipped(const std::vector<std::string>& sets, const runner::RunOptions& ro = {}) {
  std::vector<std::string> all = {"index.rectangles=200000", "run.duration_s=0.05", "run.warmup_s=0.02"};
  all.insert(all.end(), sets.begin(), sets.end());
  runner::ScenarioReport report =
      run_on_simgrid(designs::load_scenario(LOCUS_SOURCE_DIR "/scenarios/catfish/rtree.toml", all), ro);
  BOOST_TEST(report.result.stats.counter_value("failed_ops") == 0);
  return report;
}

double mean_latency_us(const runner::ScenarioReport& r) {
  double sum = 0;
  uint64_t n = 0;
  for (const auto& op : r.result.stats.ops()) {
    sum += op.latency.mean() * static_cast<double>(op.latency.count());
    n += op.latency.count();
  }
  return n == 0 ? 0 : sum / static_cast<double>(n) / 1e3;
}

// Not a prediction: the scenario's search cost is fitted to the paper's
// 80- and 320-client points (`locus calibrate --testbed catfish`), so this
// checks that the simulator turns that per-search CPU back into the
// paper's latency (28 cores, no extra queue or missing charge on the way).
BOOST_AUTO_TEST_CASE(the_shipped_scenario_gives_back_the_fitted_fast_messaging_latency_at_320_clients) {
  const auto r = simulate_shipped({"run.clients=320", "selector.type=server_only"});
  const double mean = mean_latency_us(r);
  BOOST_TEST_MESSAGE("320 clients, event-based fast messaging: mean " << mean << " us (paper: 680.47 us)");
  BOOST_TEST(mean > 680.47 * 0.95);
  BOOST_TEST(mean < 680.47 * 1.05);
}

// An actor that only watches (the progress reporter of `locus sim`, on the
// first server's host) must not change what is simulated. It did: with
// it the server host had more actors than cores and charged executions;
// without it, CPU debt, and a worker owing a few handlers' CPU posted its
// responses at its own later time, taking NIC and link slots ahead of the
// offloaded READs posted before then, which waited milliseconds: the
// back-off selector's share was 0.94 without the observer and 0.63 with
// it (487 K and 720 K searches/s). Posts now sleep the debt off first.
// What remains is the engine's order among events due at one instant:
// any extra actor, even one that returns at once, reorders such ties,
// and the back-off selector (its share follows 10 ms heartbeats) carries
// a flipped tie on: with 0.3 us links and PCIe 0, 49,347 searches became
// 49,315 (0.06%, share 0.6586 against 0.6586), whether the observer
// woke every 1% or every 14% of the run or never. So the check is a
// tolerance three orders of magnitude below the bug's 30%.
// Also the paper's ordering on search-only load: back-off beats fast
// messaging.
BOOST_AUTO_TEST_CASE(an_observer_actor_changes_nothing_and_backoff_beats_fast_messaging) {
  const std::vector<std::string> backoff = {"run.clients=256", "selector.type=backoff", "run.duration_s=0.09"};
  const auto plain = simulate_shipped(backoff);
  runner::RunOptions watched;
  uint64_t reports = 0;
  watched.on_progress = [&reports](const runner::Progress&) { ++reports; };
  const auto observed = simulate_shipped(backoff, watched);
  BOOST_TEST(reports > 0u);
  const double ops = static_cast<double>(plain.result.total_ops());
  BOOST_TEST(std::abs(static_cast<double>(observed.result.total_ops()) - ops) <= 0.005 * ops);
  BOOST_TEST(std::abs(plain.result.extra.at("server_share") - observed.result.extra.at("server_share")) <= 0.005);
  const double fm = simulate_shipped({"run.clients=256", "selector.type=server_only", "run.duration_s=0.09"})
                        .result.throughput_ops_per_s();
  const double adaptive = plain.result.throughput_ops_per_s();
  BOOST_TEST_MESSAGE("256 clients, 1e-5: fast messaging " << fm << "/s, back-off " << adaptive << "/s, share "
                                                          << plain.result.extra.at("server_share"));
  BOOST_TEST(adaptive > 1.2 * fm);
}

BOOST_AUTO_TEST_CASE(server_only_is_fast_messaging) {
  const auto r = simulate({"selector.type=server_only"});
  BOOST_TEST(r.result.extra.at("server_share") == 1.0);
  BOOST_TEST(counter(r, "catfish.node_reads") == 0);
  BOOST_TEST(testing::utilization_of(r, "server0.nic.rdma") < 0.01);
  BOOST_TEST(testing::utilization_of(r, "server0.cpu") > 0.3);
  BOOST_TEST(r.result.extra.at("catfish.heartbeats") > 0.0);
}

BOOST_AUTO_TEST_CASE(client_only_leaves_server_cpu_idle) {
  const auto r = simulate({"selector.type=client_only", "index.server_mode=polling"});
  BOOST_TEST(r.result.extra.at("server_share") == 0.0);
  BOOST_TEST(counter(r, "catfish.server_searches") == 0);
  BOOST_TEST(counter(r, "catfish.node_reads") > counter(r, "catfish.client_searches"));
  BOOST_TEST(testing::utilization_of(r, "server0.cpu") < 0.02);
}

// Multi-issue (the paper's section IV-C) posts the READs of a search's
// pending nodes together; without it every node is its own round trip,
// and a search takes longer.
BOOST_AUTO_TEST_CASE(multi_issue_batches_reads_and_without_it_each_read_is_a_round_trip) {
  const auto multi = simulate({"selector.type=client_only", "index.query_scale=1e-2"});
  const auto single = simulate({"selector.type=client_only", "index.query_scale=1e-2", "index.multi_issue=false"});
  BOOST_TEST(counter(multi, "catfish.node_reads") > counter(multi, "catfish.read_batches"));
  BOOST_TEST(counter(single, "catfish.node_reads") == counter(single, "catfish.read_batches"));
  BOOST_TEST(counter(single, "catfish.node_reads") > 0);
  BOOST_TEST(multi.result.throughput_ops_per_s() > single.result.throughput_ops_per_s());
}

BOOST_AUTO_TEST_CASE(backoff_offloads_when_heartbeats_say_busy) {
  const auto r = simulate({"selector.type=backoff", "selector.backoff.interval_ms=1", "selector.backoff.threshold=0.5"});
  BOOST_TEST_MESSAGE("back-off: " << counter(r, "catfish.server_searches") << " server, "
                                  << counter(r, "catfish.client_searches") << " offloaded");
  BOOST_TEST(counter(r, "catfish.server_searches") > 0);
  BOOST_TEST(counter(r, "catfish.client_searches") > 0);
}

// Light load, heartbeats every millisecond: a request whose notification
// arrived while a heartbeat was being sent used to wait for the next one
// (~1 ms here). Simulated time, so deterministic.
BOOST_AUTO_TEST_CASE(event_mode_requests_never_wait_for_a_heartbeat) {
  const auto r = simulate({"selector.type=backoff", "selector.backoff.interval_ms=1", "run.clients=2",
                           "run.duration_s=0.03"});
  BOOST_TEST_MESSAGE("max latency " << max_latency_ns(r) / 1000.0 << " us");
  BOOST_TEST(r.result.extra.at("server_share") == 1.0);  // far below T
  BOOST_TEST(max_latency_ns(r) < 250 * kMicrosecond);
}

// 16 clients on two one-core servers with 20 us searches saturate them.
// A worker used to wait a round trip for each response WRITE, idle but
// not free: ~55% CPU, and heartbeats that never reached T = 95%.
BOOST_AUTO_TEST_CASE(saturated_server_is_busy_and_backoff_offloads_at_95) {
  const auto busy = simulate({"selector.type=server_only"});
  BOOST_TEST_MESSAGE("server-only: server0.cpu " << testing::utilization_of(busy, "server0.cpu"));
  BOOST_TEST(testing::utilization_of(busy, "server0.cpu") > 0.9);
  const auto r = simulate({"selector.type=backoff", "selector.backoff.interval_ms=1",
                           "selector.backoff.threshold=0.95"});
  BOOST_TEST_MESSAGE("back-off T=0.95: " << counter(r, "catfish.server_searches") << " server, "
                                         << counter(r, "catfish.client_searches") << " offloaded");
  BOOST_TEST(counter(r, "catfish.server_searches") > 0);
  BOOST_TEST(counter(r, "catfish.client_searches") > 0);
}

BOOST_AUTO_TEST_CASE(jsq_runs_and_inserts_land) {
  const auto r = simulate({"selector.type=jsq", "index.query_scale=1e-2", "workload.readproportion=0.9",
                           "workload.insertproportion=0.1"});
  BOOST_TEST(counter(r, "catfish.inserts") > 0);
  BOOST_TEST(r.result.extra.at("catfish.rectangles") > 20000.0);
  BOOST_TEST(r.result.extra.at("catfish.server_inserts") == static_cast<double>(counter(r, "catfish.inserts")));
}

BOOST_AUTO_TEST_CASE(bad_catfish_keys_name_file_line_and_key) {
  std::string text = kCatfish;
  text.replace(text.find("query_scale = \"power\""), 21, "query_scale = \"huge\"");
  auto sc = designs::parse_scenario(text, "catfish.toml");
  BOOST_REQUIRE(!sc.is_ok());
  BOOST_TEST_MESSAGE(sc.status().message());
  BOOST_TEST(sc.status().message().find("catfish.toml:") != std::string::npos);
  BOOST_TEST(sc.status().message().find("index.query_scale") != std::string::npos);
  auto bytes = designs::parse_scenario(kCatfish, "catfish.toml", {"index.node_bytes=8192"});
  BOOST_TEST(!bytes.is_ok());
  auto servers = designs::parse_scenario(kCatfish, "catfish.toml", {"platform.servers=2"});
  BOOST_REQUIRE(servers.is_ok());  // caught when the runner builds the driver
  BOOST_TEST(!designs::registry().find("catfish")->make_driver(*servers, {}).is_ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
