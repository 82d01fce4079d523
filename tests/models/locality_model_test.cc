// Tests for the locality model: the SimGrid issue's sanity anchors (one
// server, one core, 6.3 us RPCs; one NIC at 1.44 M READs/s with 5-READ
// traversals; their 35.5% / 64.5% combination), internal consistency
// (Little's law, per-path latencies), the NIC's partial independence, and
// the split searches (p*, the JSQ indifference point).
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "models/queueing/locality_model.h"
#include "tests/support/locality_anchor.h"

using namespace locus::models;

namespace {

// The anchors' platform: calibration.md's Cell figures.
LocalityInput anchor_input(int clients) {
  return locus::testing::cell_anchor_input(1, 1, clients);
}

LocalityPrediction predict(const LocalityInput& in, double p) {
  auto r = predict_split(in, p);
  BOOST_REQUIRE(r.is_ok());
  return *r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(locality)

BOOST_AUTO_TEST_CASE(saturation_anchors) {
  const LocalityInput in = anchor_input(1);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 1.0), 158.73e3, 0.01);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.0), 288.0e3, 0.01);
  const double p = locus::models::balanced_split(in);
  BOOST_TEST_MESSAGE("balanced split " << p << ", saturation "
                                       << saturation_throughput_ops_per_s(in, p) << " ops/s");
  BOOST_CHECK_CLOSE(p, 0.355, 0.2);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, p), 446.7e3, 0.05);
  BOOST_CHECK_EQUAL(nic_slowdown(in, p), 1.0);  // verbs at 21% beside READs at 100%: no clash
}

BOOST_AUTO_TEST_CASE(closed_loop_anchors_with_many_clients) {
  // The SimGrid validation runs closed loops with enough clients to
  // saturate; 2000 clients bring MVA within a fraction of a per cent.
  const LocalityInput in = anchor_input(2000);
  const LocalityPrediction server = predict(in, 1.0);
  const LocalityPrediction client = predict(in, 0.0);
  const LocalityPrediction split = predict(in, 0.355);
  BOOST_TEST_MESSAGE("2000 clients: server-only " << server.throughput_ops_per_s << ", client-only "
                     << client.throughput_ops_per_s << ", 35.5% split " << split.throughput_ops_per_s
                     << " ops/s");
  BOOST_CHECK_CLOSE(server.throughput_ops_per_s, 158.7e3, 0.5);
  BOOST_CHECK_CLOSE(client.throughput_ops_per_s, 288.0e3, 0.5);
  BOOST_CHECK_CLOSE(split.throughput_ops_per_s, 446.7e3, 1.0);
  BOOST_CHECK_EQUAL(server.bottleneck, "server cpu");
  BOOST_CHECK_EQUAL(client.bottleneck, "nic read");
  BOOST_CHECK_CLOSE(server.cpu_utilisation, 1.0, 0.5);
  BOOST_CHECK_CLOSE(client.nic_read_utilisation, 1.0, 0.5);
}

BOOST_AUTO_TEST_CASE(servers_scale_the_bound) {
  LocalityInput in = anchor_input(1);
  in.platform.servers = 4;
  in.platform.cores_per_server = 2;
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 1.0), 8 * 158.73e3, 0.01);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.0), 4 * 288.0e3, 0.01);
}

BOOST_AUTO_TEST_CASE(latencies_are_consistent) {
  for (int clients : {1, 7, 60, 400}) {
    for (double p : {0.0, 0.2, 0.6, 1.0}) {
      LocalityInput in = anchor_input(clients);
      in.platform.servers = 2;
      in.platform.cores_per_server = 2;
      in.workload.think_time_us = 15;
      in.workload.client_cpu_us_per_client_op = 2;
      const LocalityPrediction r = predict(in, p);
      BOOST_TEST_CONTEXT("clients " << clients << " p " << p) {
        // Little's law over the whole loop.
        BOOST_CHECK_CLOSE(clients, r.throughput_ops_per_s / 1e6 * (r.mean_latency_us + 15), 1e-8);
        // The mean is the mix of the two paths.
        BOOST_CHECK_CLOSE(r.mean_latency_us,
                          p * r.server_side_latency_us + (1 - p) * r.client_side_latency_us, 1e-8);
        BOOST_CHECK(r.p99_latency_us >= r.mean_latency_us * 0.999 || clients == 1);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(one_client_sees_no_queueing) {
  const LocalityInput in = anchor_input(1);
  const LocalityPrediction server = predict(in, 1.0);
  const double rpc_us = 3.0 + 6.3 + 2 / 1.5;  // RTT + CPU + two messages at the NIC
  BOOST_CHECK_CLOSE(server.mean_latency_us, rpc_us, 1e-9);
  BOOST_CHECK_CLOSE(server.p99_latency_us, rpc_us, 1e-6);
  const LocalityPrediction client = predict(in, 0.0);
  BOOST_CHECK_CLOSE(client.mean_latency_us, 5 * (3.0 + 1 / 1.44), 1e-9);
}

// Links as stations: one client sees every path's fixed time in its cycle,
// a server link faster than its READ engine (left a delay) included, and
// an RPC's response on the client host's link (link_us_per_rpc). The MVA
// had dropped the delayed server link's time (0.2 us a READ here).
BOOST_AUTO_TEST_CASE(one_client_cycle_keeps_every_link) {
  LocalityInput in = anchor_input(1);
  in.platform.link_us_per_read = 0.2;  // below the READ engine's 1 / 1.44 us
  in.platform.link_us_per_rpc = 0.5;
  in.platform.client_hosts = 1;
  const LocalityPrediction client = predict(in, 0.0);
  BOOST_CHECK_CLOSE(client.mean_latency_us, 5 * (3.0 + 1 / 1.44 + 2 * 0.2), 1e-9);
  BOOST_CHECK_CLOSE(client.mean_latency_us, client.client_side_latency_us, 1e-9);
  const LocalityPrediction server = predict(in, 1.0);
  BOOST_CHECK_CLOSE(server.mean_latency_us, 3.0 + 0.5 + 6.3 + 2 / 1.5, 1e-9);
  BOOST_CHECK_CLOSE(server.mean_latency_us, server.server_side_latency_us, 1e-9);
}

// Many clients on one host whose link each READ's response crosses: the
// client link binds, and the bottleneck column says so (it said
// "clients", the server stations all under half busy).
BOOST_AUTO_TEST_CASE(a_busy_client_link_is_the_bottleneck) {
  LocalityInput in = locus::testing::cell_anchor_input(4, 1, 64);  // 4 servers, 64 clients
  in.platform.link_us_per_read = 0.6;  // under the READ engine's 1 / 1.44 us a server
  in.platform.client_hosts = 1;        // every READ of the 4 servers on one host's link
  const LocalityPrediction client = predict(in, 0.0);
  BOOST_TEST_MESSAGE("bottleneck " << client.bottleneck << ", READ engines " << client.nic_read_utilisation);
  BOOST_CHECK_EQUAL(client.bottleneck, "client link");
  BOOST_TEST(client.nic_read_utilisation < 0.5);
}

BOOST_AUTO_TEST_CASE(nic_partial_independence) {
  // Equal READ and verb demand per operation: 1 us each at p = 0.5.
  LocalityInput in = anchor_input(1);
  in.platform.cores_per_server = 64;  // keep the CPU out of the way
  in.platform.nic_read_rate_ops_per_s = 1e6;
  in.platform.nic_verb_rate_msgs_per_s = 1e6;
  in.workload.reads_per_client_op = 2;
  in.workload.messages_per_server_op = 2;
  // calibration.md: 80% of READ peak beside 95% of verb peak.
  BOOST_CHECK_CLOSE(nic_slowdown(in, 0.5), 2 / 1.75, 1e-9);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.5), 875e3, 1e-6);
  // Fully independent engines never slow each other; a fully shared NIC
  // halves the mix's throughput.
  in.platform.nic_read_share_with_verbs = in.platform.nic_verb_share_with_reads = 1.0;
  BOOST_CHECK_EQUAL(nic_slowdown(in, 0.5), 1.0);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.5), 1e6, 1e-6);
  in.platform.nic_read_share_with_verbs = in.platform.nic_verb_share_with_reads = 0.5;
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.5), 500e3, 1e-6);
  // Pure workloads reach each engine's own peak whatever the sharing.
  BOOST_CHECK_EQUAL(nic_slowdown(in, 0.0), 1.0);
  BOOST_CHECK_EQUAL(nic_slowdown(in, 1.0), 1.0);
}

BOOST_AUTO_TEST_CASE(optimal_split_beats_every_fixed_split) {
  for (int clients : {1, 4, 16, 64, 1000}) {
    const LocalityInput in = anchor_input(clients);
    auto p_star = optimal_split(in);
    BOOST_REQUIRE(p_star.is_ok());
    const double best = predict(in, *p_star).throughput_ops_per_s;
    for (int i = 0; i <= 40; ++i) {
      BOOST_CHECK_LE(predict(in, i / 40.0).throughput_ops_per_s, best * (1 + 1e-9));
    }
    BOOST_TEST_MESSAGE("clients " << clients << ": p* = " << *p_star << ", " << best << " ops/s");
  }
  // One client: the RPC's single round trip beats five READ round trips.
  BOOST_CHECK_CLOSE(*optimal_split(anchor_input(1)), 1.0, 1e-6);
  // Many clients: p* approaches the balanced split of the saturation bound.
  BOOST_CHECK_CLOSE(*optimal_split(anchor_input(2000)), locus::models::balanced_split(anchor_input(1)), 2.0);
}

BOOST_AUTO_TEST_CASE(jsq_indifference_point) {
  // Light load: Cell's rule compares queueing only, so it goes client-side.
  auto light = jsq_equilibrium_split(anchor_input(1));
  BOOST_REQUIRE(light.is_ok());
  BOOST_CHECK_EQUAL(*light, 0.0);
  // Heavy load: indifference sits near the balanced split, where both
  // sides queue equally.
  const LocalityInput heavy_in = anchor_input(2000);
  auto heavy = jsq_equilibrium_split(heavy_in);
  BOOST_REQUIRE(heavy.is_ok());
  const double balanced = locus::models::balanced_split(heavy_in);
  BOOST_TEST_MESSAGE("JSQ indifference at 2000 clients: p = " << *heavy << " (balanced " << balanced
                     << ")");
  BOOST_CHECK_SMALL(*heavy - balanced, 0.02);
  const LocalityPrediction at_jsq = predict(heavy_in, *heavy);
  BOOST_CHECK_CLOSE(at_jsq.throughput_ops_per_s, 446.7e3, 1.5);
}

BOOST_AUTO_TEST_CASE(policy_report) {
  auto report = predict_policies(anchor_input(300));
  BOOST_REQUIRE(report.is_ok());
  BOOST_CHECK_EQUAL(report->server_only.server_side_share, 1.0);
  BOOST_CHECK_EQUAL(report->client_only.server_side_share, 0.0);
  BOOST_CHECK_GE(report->optimal.throughput_ops_per_s, report->server_only.throughput_ops_per_s);
  BOOST_CHECK_GE(report->optimal.throughput_ops_per_s, report->client_only.throughput_ops_per_s);
  BOOST_CHECK_GE(report->optimal.throughput_ops_per_s * (1 + 1e-9),
                 report->jsq_equilibrium.throughput_ops_per_s);
  BOOST_CHECK_CLOSE(report->saturation_throughput_ops_per_s, 446.7e3, 0.05);
}

BOOST_AUTO_TEST_CASE(rejects_bad_input) {
  LocalityInput in = anchor_input(10);
  in.platform.cores_per_server = 0;
  BOOST_CHECK(!predict_split(in, 0.5).is_ok());
  in = anchor_input(10);
  in.platform.nic_read_share_with_verbs = 0.3;  // 0.3 + 0.95 >= 1 is fine ...
  BOOST_CHECK(predict_split(in, 0.5).is_ok());
  in.platform.nic_verb_share_with_reads = 0.5;  // ... 0.3 + 0.5 < 1 is not
  BOOST_CHECK(!predict_split(in, 0.5).is_ok());
  BOOST_CHECK(!predict_split(anchor_input(10), 1.5).is_ok());
  in = anchor_input(10);
  in.workload.network_rtt_us = -1;
  BOOST_CHECK(!predict_split(in, 0.5).is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
