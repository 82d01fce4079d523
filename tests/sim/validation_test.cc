// Validation of the SimGrid platform models against closed-form
// saturation points, on the synthetic micro index (one RPC, or a chain of
// dependent READs, per operation):
//  * one server core at 6.3 us per RPC saturates at 1 / 6.3 us = 158.7 K/s;
//  * one NIC at 1.44 M READs/s serves 5-READ traversals at 288 K/s;
//  * a fixed 35.5% / 64.5% split of the two reaches 446.7 K/s together;
//  * the same scenario and seed give identical results, whether or not
//    one-sided effects run ahead of the engine's clock (runs compared are
//    forked from one moment: testing::simulate_forked says why).
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/metrics/resource_usage.h"
#include "core/metrics/run_result.h"
#include "core/scenario/scenario.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

// testing::kMicroPlatform (tests/support/sim_scenario.h): links, PCIe and
// verb messaging far from saturation, so only the resource under test
// limits throughput.
runner::ScenarioReport simulate(const std::vector<std::string>& sets) {
  auto report = testing::simulate_scenario(testing::kMicroPlatform, "validation.toml", sets);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  BOOST_REQUIRE_EQUAL(report->result.stats.total_failed(), 0u);
  return std::move(report).value();
}

double rate_of(const runner::ScenarioReport& r, const char* op) {
  const metrics::OpSummary* s = r.result.stats.find_op(op);
  return s == nullptr ? 0.0 : r.result.throughput_ops_per_s(s->latency.count());
}

void expect_within(double measured, double expected, double tolerance, const char* what) {
  BOOST_TEST_MESSAGE(what << ": simulated " << measured << "/s, closed form " << expected << "/s");
  BOOST_TEST(std::abs(measured - expected) <= tolerance * expected,
             what << ": " << measured << " is not within " << tolerance * 100 << "% of " << expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_validation)

BOOST_AUTO_TEST_CASE(one_core_saturates_at_one_over_service_time) {
  const auto r = simulate({"index.rpc_fraction=1.0"});
  expect_within(rate_of(r, "RPC"), 1e6 / 6.3, 0.02, "RPC on one core");
}

BOOST_AUTO_TEST_CASE(one_nic_saturates_on_read_rate) {
  const auto r = simulate({"index.rpc_fraction=0.0"});
  expect_within(rate_of(r, "TRAVERSAL"), 1.44e6 / 5, 0.02, "5-READ traversals on one NIC");
}

// The NIC's address-translation cache (NicSpec::atc_*), fitted to the
// Cell testbed's two 1 KB READ rates (shared/calibration.md: 1.44 M/s over
// a 64 MB region, 1.04 M/s over 1 GB): the simulated saturation rate
// follows the registered size, and reproduces both points.
BOOST_AUTO_TEST_CASE(read_rate_follows_the_registered_size) {
  const std::vector<std::string> atc = {
      "platform.nic.read=[[1024, 1.04e6]]", "platform.nic.read_region_bytes=1073741824",
      "platform.nic.atc_reach_bytes=67108864",
      "platform.nic.read_by_region=[[67108864, 1.44e6], [1073741824, 1.04e6]]", "index.rpc_fraction=0.0"};
  auto at = [&](uint64_t registered) {
    std::vector<std::string> sets = atc;
    sets.push_back("index.region_bytes=" + std::to_string(registered));
    return rate_of(simulate(sets), "TRAVERSAL") * 5;  // READs per second
  };
  expect_within(at(64ull << 20), 1.44e6, 0.02, "1 KB READs over 64 MB");
  expect_within(at(1ull << 30), 1.04e6, 0.02, "1 KB READs over 1 GB");
  const double mid = at(256ull << 20);  // 75% of READs miss: between the two
  BOOST_TEST(mid < 1.40e6);
  BOOST_TEST(mid > 1.08e6);
  expect_within(at(16ull << 20), 1.44e6, 0.02, "1 KB READs over 16 MB (all in the cache)");
}

// The queue-pair state cache: 96 clients, each with a queue pair to the
// server, and room for 48 on its NIC. Half the READs miss and pay 694 ns
// more (qp_miss_ns, set here to one READ's service at 1.44 M/s): the NIC
// serves 1.44 M / 1.5 READs/s. With room for all, the READ rate holds.
BOOST_AUTO_TEST_CASE(queue_pairs_beyond_the_cache_slow_the_nic) {
  const double read_ns = 1e9 / 1.44e6;
  const auto r = simulate({"index.rpc_fraction=0.0", "platform.nic.qp_cache_entries=48",
                           "platform.nic.qp_miss_ns=694.444"});
  expect_within(rate_of(r, "TRAVERSAL"), 1e9 / (read_ns * 1.5) / 5, 0.02, "5-READ traversals, half the QPs cached");
  const auto fits = simulate({"index.rpc_fraction=0.0", "platform.nic.qp_cache_entries=96",
                              "platform.nic.qp_miss_ns=694.444"});
  expect_within(rate_of(fits, "TRAVERSAL"), 1.44e6 / 5, 0.02, "5-READ traversals, every QP cached");
}

BOOST_AUTO_TEST_CASE(queue_pair_cache_needs_a_miss_cost) {
  auto s = designs::parse_scenario(testing::kMicroPlatform, "validation.toml", {"platform.nic.qp_cache_entries=2000"});
  BOOST_REQUIRE(!s.is_ok());
  BOOST_TEST(s.status().message().find("platform.nic.qp_cache_entries") != std::string::npos, s.status().message());
  BOOST_TEST(s.status().message().find("qp_miss_ns") != std::string::npos, s.status().message());
}

BOOST_AUTO_TEST_CASE(address_translation_settings_are_checked) {
  for (const auto& [set, why] :
       {std::pair{"platform.nic.atc_reach_bytes=67108864", "read_by_region"},
        {"platform.nic.read_by_region=[[67108864, 1.0e6], [1073741824, 1.5e6]]", "not be faster"},
        {"platform.nic.read_by_region=[[1024, 1.0e6], [2048, 1.5e6]]", "differ"}}) {
    std::vector<std::string> sets = {set};
    if (std::string(set).find("read_by_region") != std::string::npos) sets.push_back("platform.nic.atc_reach_bytes=67108864");
    auto s = designs::parse_scenario(testing::kMicroPlatform, "atc.toml", sets);
    BOOST_TEST(!s.is_ok(), set);
    BOOST_TEST(s.status().message().find("platform.nic.atc_reach_bytes") != std::string::npos, s.status().message());
    BOOST_TEST(s.status().message().find(why) != std::string::npos, s.status().message());
  }
}

BOOST_AUTO_TEST_CASE(fixed_split_uses_both_resources) {
  const auto r = simulate({"index.rpc_fraction=0.355", "run.clients=160"});
  expect_within(rate_of(r, "RPC") + rate_of(r, "TRAVERSAL"), 446.7e3, 0.03, "35.5% RPC / 64.5% traversal");
}

BOOST_AUTO_TEST_CASE(phases_change_the_offered_load) {
  // Saturated for the first half of the measured window, then a single
  // client: the measured rate falls between the two regimes.
  auto sc = designs::parse_scenario(std::string(testing::kMicroPlatform) + "[[phases]]\nstart_s = 0.015\nactive_clients = 1\n",
                                     "phases.toml", {"index.rpc_fraction=1.0"});
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto report = runner::run_scenario(*sc, designs::registry(), [](const scenario::Scenario& s) {
    simgrid_backend::SimOptions o;
    o.seed = s.run.seed;
    return simgrid_backend::make_simgrid_runtime(s.platform, o);
  });
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const double rate = rate_of(*report, "RPC");
  BOOST_TEST_MESSAGE("RPC rate with a lull in the second half: " << rate << "/s");
  BOOST_TEST(rate < 0.9 * 1e6 / 6.3);
  BOOST_TEST(rate > 0.5 * 1e6 / 6.3);
}

// Messages up to platform.packet_bytes cross the network packet-level
// (FCFS links), longer ones as CM02 flows: both must give the closed-form
// saturation points, and the same latency when nothing queues.
BOOST_AUTO_TEST_CASE(flows_and_packets_agree) {
  for (const char* model : {"platform.packet_bytes=0", "platform.packet_bytes=4096"}) {
    BOOST_TEST_CONTEXT(model) {
      expect_within(rate_of(simulate({model, "index.rpc_fraction=1.0"}), "RPC"), 1e6 / 6.3, 0.02, "RPC on one core");
      expect_within(rate_of(simulate({model, "index.rpc_fraction=0.0"}), "TRAVERSAL"), 1.44e6 / 5, 0.02,
                    "5-READ traversals on one NIC");
    }
  }
  const std::vector<std::string> one_client{"index.rpc_fraction=0.0", "run.clients=1"};
  auto with = [&](const char* model) {
    auto sets = one_client;
    sets.emplace_back(model);
    return simulate(sets).result.stats.find_op("TRAVERSAL")->latency.mean();
  };
  const double flow_ns = with("platform.packet_bytes=0");
  const double packet_ns = with("platform.packet_bytes=4096");
  BOOST_TEST_MESSAGE("unloaded traversal: flows " << flow_ns << " ns, packets " << packet_ns << " ns");
  BOOST_TEST(std::abs(flow_ns - packet_ns) <= 0.02 * flow_ns);
}

// A link slower than the NIC: READ responses of 1024 + 30 header bytes
// saturate the server's 2 Gbps link, under either network model.
BOOST_AUTO_TEST_CASE(a_slow_link_limits_reads) {
  const double per_read_bytes = 1024 + 30;
  const double expected = 2e9 / 8 / per_read_bytes / 5;  // traversals/s
  for (const char* model : {"platform.packet_bytes=0", "platform.packet_bytes=4096"}) {
    BOOST_TEST_CONTEXT(model) {
      const auto r = simulate({model, "index.rpc_fraction=0.0", "platform.link.bandwidth_gbps=2.0"});
      expect_within(rate_of(r, "TRAVERSAL"), expected, 0.03, "5-READ traversals on a 2 Gbps link");
    }
  }
}

// Packets and flows on one link: 1 KB READ responses leave the server as
// packets, 64 KB RPC responses as CM02 flows, both over its 8 Gbps link.
// Together they carry no more than the link's capacity, and the rates of
// both kinds are those of the same run with every message a flow (which
// SimGrid shares max-min fairly). Before the two models shared links
// (2026-11-28) each kept the link to itself: the packets went as if the
// flows were not there, and the link was reported busier than 100%.
BOOST_AUTO_TEST_CASE(packets_and_flows_share_a_link) {
  const std::vector<std::string> mixed = {"index.rpc_fraction=0.5", "index.rpc_response_bytes=65536",
                                          "platform.link.bandwidth_gbps=8.0"};
  auto with = [&](const char* model) {
    std::vector<std::string> sets = mixed;
    sets.emplace_back(model);
    return simulate(sets);
  };
  const auto flows = with("platform.packet_bytes=0");
  const auto both = with("platform.packet_bytes=4096");
  double out = -1;
  for (const ResourceUsage& u : both.result.resources) {
    if (u.name == "server0.link.out") out = u.utilization;
  }
  BOOST_TEST_MESSAGE("server0.link.out " << out);
  BOOST_TEST(out <= 1.02);
  expect_within(rate_of(both, "RPC"), rate_of(flows, "RPC"), 0.05, "64 KB RPCs beside 1 KB READs (against all flows)");
  expect_within(rate_of(both, "TRAVERSAL"), rate_of(flows, "TRAVERSAL"), 0.05, "1 KB READs beside 64 KB RPCs (against all flows)");
}

// One NIC per host: 96 clients send 2 KB RPC requests through one client
// host's NIC, whose verb-send budget for them (100 K/s here) binds before
// the server's core (158.7 K/s, as it does with a host per client).
// Until 2026-11-28 every client had a NIC of its own: the core bound both.
BOOST_AUTO_TEST_CASE(clients_on_a_host_share_its_nic) {
  auto run = [](const char* hosts) {
    return simulate({"index.rpc_fraction=1.0", "index.rpc_request_bytes=2048", hosts,
                     "platform.nic.send=[[64, 1.0e6], [2048, 1.0e5]]"});
  };
  const auto one = run("platform.client_hosts=1");
  expect_within(rate_of(one, "RPC"), 1.0e5, 0.03, "RPCs through one client host's NIC");
  double send = -1;
  for (const ResourceUsage& u : one.result.resources) {
    if (u.name == "chost0.nic.send") send = u.utilization;
  }
  BOOST_TEST(send > 0.97);
  expect_within(rate_of(run("platform.client_hosts=96"), "RPC"), 1e6 / 6.3, 0.02, "RPCs from a host per client");
}

// A reply waiting in its server's NIC send queue takes its place on the
// links when the NIC sends it. Until 2026-11-29 its packet was placed on
// the server's links at posting, at the later moment it would leave, and
// every READ response computed meanwhile queued behind it on an idle
// link: one-sided READs took on the send queue's wait (on Cell's four
// servers at 6 cores, 17 us of a READ's 22.6). Here the server's verb
// sends (100 K replies/s) bind and half the operations are RPCs; the
// 5-READ traversals must take about as long as beside replies that never
// queue (the core binds instead, at 158.7 K/s, with more READs beside it).
BOOST_AUTO_TEST_CASE(reads_do_not_wait_for_queued_replies) {
  auto traversal_us = [](const char* send) {
    const auto r = simulate({"index.rpc_fraction=0.5", send});
    const metrics::OpSummary* t = r.result.stats.find_op("TRAVERSAL");
    BOOST_REQUIRE(t != nullptr);
    return t->latency.mean() / 1e3;
  };
  const double beside_free_us = traversal_us("platform.nic.send=[[64, 1.0e8]]");
  const double beside_queued_us = traversal_us("platform.nic.send=[[64, 1.0e5]]");
  BOOST_TEST_MESSAGE("traversal " << beside_queued_us << " us beside queued replies, " << beside_free_us
                                  << " us beside replies that do not queue");
  BOOST_TEST(beside_queued_us < 1.2 * beside_free_us);
}

// RDMA and verb messaging run partly independently (the calibration's
// Pilaf testbed: RDMA keeps 80% of its peak beside verbs at 95% of
// theirs). scenarios/nic/raw.toml's hybrid mix saturates both budgets of
// every server at once: 0.80 x 2.449 M READs and 0.95 x 0.70 M verb pairs a
// second a server, on one and on four servers (scripts/raw-nic.sh prints
// the whole table, to 24 servers).
BOOST_AUTO_TEST_CASE(rdma_and_verbs_share_the_nic_as_calibrated) {
  for (const uint32_t servers : {1u, 4u}) {
    BOOST_TEST_CONTEXT(servers << " servers") {
      auto r = testing::simulate_file(LOCUS_SOURCE_DIR "/scenarios/nic/raw.toml",
                                      {"platform.servers=" + std::to_string(servers),
                                       "run.clients=" + std::to_string(96 * servers)});
      BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
      expect_within(rate_of(*r, "TRAVERSAL"), servers * 0.80 * 2.449e6, 0.03, "READs beside verbs");
      expect_within(rate_of(*r, "RPC"), servers * 0.95 * 0.70e6, 0.03, "verb pairs beside READs");
    }
  }
}

// Effects of one-sided requests run ahead of the engine's clock only when
// nothing can happen before them, so turning that off changes nothing:
// not with server CPU work in between (half the operations are RPCs), and
// not for the shipped Pilaf cluster plan, cut down, under workload A's
// puts, whose READs tear and retry, nor with its 16 servers and hundreds
// of clients woken while effects run ahead by the lookahead. Both runs do
// run events ahead, and no client did what that rule assumes it does not.
BOOST_AUTO_TEST_CASE(running_ahead_changes_nothing) {
  // Each run in a child forked from here: both start at the same engine time.
  auto json_of = [](const scenario::Scenario& sc, bool run_ahead) {
    const testing::ForkedRun r =
        testing::simulate_forked(sc, [&](simgrid_backend::SimOptions& o) { o.run_ahead = run_ahead; });
    BOOST_REQUIRE_MESSAGE(r.status.is_ok(), r.status.to_string());
    BOOST_REQUIRE(r.total_ops > 0u);
    BOOST_TEST_MESSAGE(sc.source << ": " << r.events_run_ahead << " events ran ahead");
    BOOST_TEST((r.events_run_ahead > 0) == run_ahead);
    BOOST_TEST(r.run_ahead_hazards == 0u);
    return r.json;
  };
  auto micro = designs::parse_scenario(testing::kMicroPlatform, "validation.toml",
                                        {"index.rpc_fraction=0.5", "run.clients=24", "run.duration_s=0.004",
                                         "run.warmup_s=0.001"});
  BOOST_REQUIRE_MESSAGE(micro.is_ok(), micro.status().to_string());
  BOOST_TEST(json_of(*micro, true) == json_of(*micro, false));

  auto pilaf = designs::load_scenario(
      LOCUS_SOURCE_DIR "/scenarios/scale/pilaf-16x1000.toml",
      {"platform.servers=2", "platform.cores_per_server=2", "workload.standard=a", "workload.recordcount=2000",
       "run.seed=3", "run.clients=64", "run.duration_s=0.004", "run.warmup_s=0.001"});
  BOOST_REQUIRE_MESSAGE(pilaf.is_ok(), pilaf.status().to_string());
  const std::string with = json_of(*pilaf, true);
  BOOST_TEST(with == json_of(*pilaf, false));
  // Torn READs did retry.
  BOOST_TEST(with.find("\"pilaf.retries\": ") != std::string::npos);
  BOOST_TEST(with.find("\"pilaf.retries\": 0") == std::string::npos);

  // The shipped plans of every index, cut down: a star of Pilaf servers
  // with hundreds of clients; two levels with racks of servers apart from
  // racks of clients (the lookahead rule holds) and racks mixing both (it
  // is off), under workload A's puts; Cell's clients searching four servers
  // by READs while 10% of operations update by RPC (its server hosts run
  // more actors than cores, so nothing runs ahead while they execute);
  // Catfish's back-off clients, many to a client host, with its workers
  // writing responses and heartbeats into clients' rings.
  const std::vector<std::pair<std::string, std::vector<std::string>>> plans{
      {"scale/pilaf-16x1000.toml",
       {"workload.recordcount=16000", "run.clients=400", "run.duration_s=0.003", "run.warmup_s=0.001"}},
      {"scale/pilaf-64x3000.toml",
       {"platform.servers=4", "platform.cores_per_server=2", "platform.hosts_per_rack=2", "workload.standard=a",
        "workload.recordcount=4000", "run.clients=120", "run.duration_s=0.003", "run.warmup_s=0.001"}},
      {"scale/pilaf-64x3000.toml",
       {"platform.servers=4", "platform.cores_per_server=2", "platform.hosts_per_rack=3", "workload.standard=a",
        "workload.recordcount=4000", "run.clients=120", "run.duration_s=0.003", "run.warmup_s=0.001"}},
      {"cell/four-servers.toml",
       {"selector.type=client_only", "workload.readproportion=0.9", "workload.updateproportion=0.1",
        "workload.recordcount=20000", "run.clients=64", "run.duration_s=0.003", "run.warmup_s=0.001"}},
      {"catfish/rtree.toml",
       {"index.rectangles=20000", "run.clients=96", "run.duration_s=0.002", "run.warmup_s=0.0005"}},
  };
  for (const auto& [file, sets] : plans) {
    BOOST_TEST_CONTEXT(file) {
      auto plan = designs::load_scenario(LOCUS_SOURCE_DIR "/scenarios/" + file, sets);
      BOOST_REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
      BOOST_TEST(json_of(*plan, true) == json_of(*plan, false));
    }
  }
}

// Two runs forked from the same moment, as two `locus sim` processes are
// started: the micro platform, and the shipped 16x1000 plan cut down.
BOOST_AUTO_TEST_CASE(same_seed_same_results) {
  auto micro = designs::parse_scenario(testing::kMicroPlatform, "validation.toml",
                                        {"index.rpc_fraction=0.5", "run.clients=24", "run.duration_s=0.004",
                                         "run.warmup_s=0.001"});
  auto cluster = designs::load_scenario(
      LOCUS_SOURCE_DIR "/scenarios/scale/pilaf-16x1000.toml",
      {"workload.recordcount=16000", "run.clients=200", "run.duration_s=0.003", "run.warmup_s=0.001"});
  for (auto* sc : {&micro, &cluster}) {
    BOOST_REQUIRE_MESSAGE(sc->is_ok(), sc->status().to_string());
    const testing::ForkedRun a = testing::simulate_forked(**sc), b = testing::simulate_forked(**sc);
    BOOST_REQUIRE_MESSAGE(a.status.is_ok(), a.status.to_string());
    BOOST_REQUIRE_MESSAGE(b.status.is_ok(), b.status.to_string());
    BOOST_TEST(a.json == b.json);
    BOOST_TEST(a.total_ops == b.total_ops);
    BOOST_TEST(a.total_ops > 0u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
