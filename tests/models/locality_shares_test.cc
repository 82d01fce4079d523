// Tests for the locality model's per-server shares (locality_model.h): a
// server taking more of the work saturates first and bounds throughput by
// its own share; equal shares give exactly the even-spread model; the
// per-server network is the exact product form (against the CTMC); shares
// that do not match the servers are refused by name; and with_servers
// asks the design's shares at the planner's server count.
#include <boost/test/unit_test.hpp>
#include <string>

#include "models/queueing/closed_network.h"
#include "models/queueing/locality_model.h"
#include "tests/support/locality_anchor.h"

using namespace locus::models;

namespace {

LocalityInput four_servers(int clients) {
  return locus::testing::cell_anchor_input(4, 2, clients);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(locality_shares)

BOOST_AUTO_TEST_CASE(the_busiest_server_bounds_throughput) {
  LocalityInput in = four_servers(1);
  const double even_cpu = saturation_throughput_ops_per_s(in, 1.0);
  const double even_read = saturation_throughput_ops_per_s(in, 0.0);
  in.shares.work = {0.4, 0.2, 0.2, 0.2};
  in.shares.read = {0.1, 0.3, 0.3, 0.3};
  BOOST_REQUIRE(in.validate().is_ok());
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 1.0), even_cpu * 0.25 / 0.4, 1e-9);
  BOOST_CHECK_CLOSE(saturation_throughput_ops_per_s(in, 0.0), even_read * 0.25 / 0.3, 1e-9);
  // Many clients: MVA approaches those bounds; the busiest CPU is the one reported.
  in.workload.clients = 400;
  auto server_only = predict_split(in, 1.0);
  BOOST_REQUIRE(server_only.is_ok());
  BOOST_TEST(server_only->throughput_ops_per_s <= saturation_throughput_ops_per_s(in, 1.0) * (1 + 1e-9));
  BOOST_TEST(server_only->throughput_ops_per_s >= 0.97 * saturation_throughput_ops_per_s(in, 1.0));
  BOOST_TEST(server_only->cpu_utilisation > 0.97);
  BOOST_TEST(server_only->bottleneck == "server cpu");
}

BOOST_AUTO_TEST_CASE(equal_shares_are_the_even_spread) {
  LocalityInput even = four_servers(32);
  LocalityInput listed = even;
  listed.shares.work = {0.25, 0.25, 0.25, 0.25};
  listed.shares.read = listed.shares.work;
  BOOST_TEST(server_classes(listed).size() == 1u);
  for (double p : {0.0, 0.4, 1.0}) {
    auto a = predict_split(even, p), b = predict_split(listed, p);
    BOOST_REQUIRE(a.is_ok() && b.is_ok());
    BOOST_CHECK_CLOSE(a->throughput_ops_per_s, b->throughput_ops_per_s, 1e-9);
    BOOST_CHECK_CLOSE(a->p99_latency_us, b->p99_latency_us, 1e-9);
  }
}

BOOST_AUTO_TEST_CASE(uneven_network_matches_ctmc) {
  LocalityInput in = four_servers(6);
  in.platform.servers = 2;
  in.shares.work = {0.7, 0.3};
  in.shares.read = {0.45, 0.55};
  const ClosedNetwork net = locality_network(in, 0.5);
  BOOST_TEST(net.stations.size() == static_cast<size_t>(kServerCpu + 2 * stations_per_server_class(in)));
  auto ctmc = solve_closed_network_ctmc(net, 6);
  auto mva = solve_mva_exact(net, 6);
  BOOST_REQUIRE(ctmc.is_ok() && mva.is_ok());
  BOOST_CHECK_CLOSE(mva->throughput_per_us(6), ctmc->throughput_per_us, 1e-6);
  for (size_t k = 0; k < net.stations.size(); ++k) {
    BOOST_CHECK_CLOSE(mva->queue_length(6, static_cast<int>(k)) + 1e-12, ctmc->queue_length[k] + 1e-12, 1e-5);
  }
}

BOOST_AUTO_TEST_CASE(shares_must_match_the_servers) {
  LocalityInput in = four_servers(1);
  in.shares.work = {0.5, 0.5};
  const auto st = in.validate();
  BOOST_TEST(!st.is_ok());
  BOOST_TEST(st.message().find("platform.servers") != std::string::npos);
  in.shares.work = {0.5, 0.5, 0.5, 0.5};
  BOOST_TEST(in.validate().message().find("sum") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(with_servers_asks_the_design) {
  LocalityInput in = four_servers(1);
  in.shares.work = {0.4, 0.2, 0.2, 0.2};
  in.shares_for = [](int servers) {
    ServerShares s;
    s.work.assign(servers, 0.5 / (servers - 1));
    s.work[0] = 0.5;
    return s;
  };
  const LocalityInput three = with_servers(in, 3);
  BOOST_TEST(three.platform.servers == 3);
  BOOST_REQUIRE(three.validate().is_ok());
  BOOST_TEST(three.shares.work[0] == 0.5);
  BOOST_TEST(with_servers(in, 4).shares.work[0] == 0.4);  // the scenario's own count keeps its shares
  in.shares_for = nullptr;
  BOOST_TEST(with_servers(in, 3).shares.work.empty());  // no design placement: even
}

BOOST_AUTO_TEST_SUITE_END()
