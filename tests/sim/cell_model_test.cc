// Cell's analytic model (core/index/cell/model.cc) against the SimGrid
// simulation of the shipped Cell scenarios, server-only and client-only:
// throughput within 5% and mean latency within 10%, printed side by side
// (run with --log_level=message). And the JSQ selector against the model's
// policies.
//
// Two effects the model leaves out are taken out of the comparison, and
// measured in docs/models.md ("Cell"):
//  * the NIC's address-translation cache (platform.nic.atc_reach_bytes):
//    the model's READ rate is the `read` curve's, at read_region_bytes;
//    the runs set atc_reach_bytes = 0 so the simulator uses that curve too;
//  * keys spread unevenly over four servers (meganodes are placed by count,
//    not by keys): the model spreads load evenly, so on four-servers it is
//    compared with the busiest server's measured share applied, and the
//    uncorrected model must lie above the simulation.
// Warm-up: four-servers runs 60 ms before its 20 ms window, so the clients'
// path caches know every leaf meganode (the model's steady state).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "apps/locus/model_input.h"
#include "backends/simgrid/sim_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

struct Simulated {
  double ops_per_s = 0;
  double mean_us = 0;
  double server_share = 0;
  double busiest_share = 0;  // of the resource that bounds this path, over the servers
};

struct Case {
  scenario::Scenario scenario;
  Simulated sim;
  models::LocalityInput input;
};

Case run(const std::string& file, const std::string& selector, std::vector<std::string> sets) {
  sets.push_back("selector.type=" + selector);
  sets.push_back("platform.nic.atc_reach_bytes=0");
  auto sc = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/cell/" + file, sets);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  Case c{*sc, {}, {}};
  const testing::OpsAndLatency sim = testing::throughput_and_mean(*report);
  c.sim.ops_per_s = sim.ops_per_s;
  c.sim.mean_us = sim.mean_us;
  const auto share = report->result.extra.find("server_share");
  if (share != report->result.extra.end()) c.sim.server_share = share->second;
  const std::string resource = selector == "client_only" ? ".nic.rdma" : ".cpu";
  double sum = 0, most = 0;
  for (uint64_t i = 0; i < sc->platform.servers; ++i) {
    const double u = testing::utilization_of(*report, "server" + std::to_string(i) + resource);
    sum += u;
    most = std::max(most, u);
  }
  c.sim.busiest_share = sum > 0 ? most / sum : 0;
  auto in = cli::locality_input_from(*sc);
  BOOST_REQUIRE_MESSAGE(in.is_ok(), in.status().to_string());
  c.input = *in;
  return c;
}

// Model and simulation side by side; `even_spread` false scales the model's
// throughput by the measured busiest share (see the file comment).
void compare(const std::string& name, const Case& c, bool even_spread) {
  const auto share = cli::scenario_server_share(c.scenario);
  BOOST_REQUIRE(share.has_value());
  auto model = models::predict_split(c.input, *share);
  BOOST_REQUIRE_MESSAGE(model.is_ok(), model.status().to_string());
  double ops = model->throughput_ops_per_s, mean_us = model->mean_latency_us;
  if (!even_spread) {
    BOOST_TEST(ops >= c.sim.ops_per_s, name << ": an even spread bounds the simulation from above");
    ops *= (1.0 / c.input.platform.servers) / c.sim.busiest_share;
    mean_us = c.input.workload.clients / ops * 1e6 - c.input.workload.think_time_us;  // Little's law
  }
  BOOST_TEST_MESSAGE(name << ": throughput model " << model->throughput_ops_per_s
                          << (even_spread ? ""
                                          : " (busiest server's share " + std::to_string(c.sim.busiest_share) + ": " +
                                                std::to_string(ops) + ")")
                          << " simulated " << c.sim.ops_per_s << "; mean latency model " << mean_us << " us simulated "
                          << c.sim.mean_us << " us");
  BOOST_TEST(std::abs(ops - c.sim.ops_per_s) <= 0.05 * c.sim.ops_per_s, name << " throughput");
  BOOST_TEST(std::abs(mean_us - c.sim.mean_us) <= 0.10 * c.sim.mean_us, name << " mean latency");
}

const std::vector<std::string> kFourServersWarm = {"run.warmup_s=0.06", "run.duration_s=0.08"};

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_model_against_simulation)

BOOST_AUTO_TEST_CASE(one_meganode_server_only) {
  compare("one-meganode server_only", run("one-meganode.toml", "server_only", {}), true);
}
BOOST_AUTO_TEST_CASE(one_meganode_client_only) {
  compare("one-meganode client_only", run("one-meganode.toml", "client_only", {}), true);
}
BOOST_AUTO_TEST_CASE(four_servers_server_only) {
  compare("four-servers server_only", run("four-servers.toml", "server_only", kFourServersWarm), false);
}
BOOST_AUTO_TEST_CASE(four_servers_client_only) {
  compare("four-servers client_only", run("four-servers.toml", "client_only", kFourServersWarm), false);
}

// JSQ (Cell's default rule, marginal latency) against the model: it must
// beat both single paths and not exceed the balanced split's saturation;
// the model's JSQ equilibrium (the paper's rule) and optimum are printed
// beside it.
BOOST_AUTO_TEST_CASE(one_meganode_jsq) {
  const Case c = run("one-meganode.toml", "jsq", {});
  auto r = models::predict_policies(c.input);
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST_MESSAGE("one-meganode jsq: simulated share "
                     << c.sim.server_share << ", " << c.sim.ops_per_s << " ops/s; model jsq equilibrium share "
                     << r->jsq_equilibrium.server_side_share << ", " << r->jsq_equilibrium.throughput_ops_per_s
                     << " ops/s; optimal share " << r->optimal.server_side_share << ", "
                     << r->optimal.throughput_ops_per_s << " ops/s");
  BOOST_TEST(c.sim.ops_per_s > r->server_only.throughput_ops_per_s);
  BOOST_TEST(c.sim.ops_per_s > r->client_only.throughput_ops_per_s);
  BOOST_TEST(c.sim.ops_per_s <= r->saturation_throughput_ops_per_s);
}

// The model takes the NIC's address-translation cache as the simulator
// does: one-meganode's servers register 128 MiB (two 32 MiB meganodes and
// 64 MiB of extents), inside the 1 GB the `read` curve was measured over,
// so READs run faster than the curve (1.19 M/s against 1.04 M/s at 1 KB);
// with the cache model off they run at the curve's rate.
BOOST_AUTO_TEST_CASE(the_model_reads_at_the_address_translation_cache_rate) {
  auto rate = [](const std::vector<std::string>& sets) {
    auto sc = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/cell/one-meganode.toml", sets);
    BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
    auto in = cli::locality_input_from(*sc);
    BOOST_REQUIRE_MESSAGE(in.is_ok(), in.status().to_string());
    return in->platform.nic_read_rate_ops_per_s;
  };
  const double cached = rate({}), curve = rate({"platform.nic.atc_reach_bytes=0"});
  BOOST_TEST_MESSAGE("READs/s with the cache model " << cached << ", without " << curve);
  BOOST_TEST(cached > 1.15e6);
  BOOST_TEST(cached < 1.25e6);
  BOOST_TEST(curve < 1.1e6);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
