// The analytic locality model against the SimGrid simulation of the same
// scenario (the micro index: one RPC or a chain of dependent READs per
// operation): one core, one NIC, the hybrid split and four servers, all
// near saturation. Throughput within 5% and mean latency within 10%; both
// figures are printed.
#include <boost/test/unit_test.hpp>

#include <string>

#include "apps/locus/model_input.h"
#include "backends/simgrid/sim_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

void compare(const std::string& name, const std::vector<std::string>& sets) {
  // The validation platform, with a seed and a window of its own.
  std::vector<std::string> all = {"run.seed=11", "run.duration_s=0.012", "run.warmup_s=0.003"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto sc = designs::parse_scenario(testing::kMicroPlatform, name, all);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const testing::OpsAndLatency sim = testing::throughput_and_mean(*report);
  const double sim_ops_per_s = sim.ops_per_s;
  const double sim_mean_us = sim.mean_us;

  auto in = cli::locality_input_from(*sc);
  BOOST_REQUIRE_MESSAGE(in.is_ok(), in.status().to_string());
  auto model = models::predict_split(*in, cli::scenario_server_share(*sc).value());
  BOOST_REQUIRE_MESSAGE(model.is_ok(), model.status().to_string());
  BOOST_TEST_MESSAGE(name << ": throughput model " << model->throughput_ops_per_s << " simulated " << sim_ops_per_s
                          << "; mean latency model " << model->mean_latency_us << " us simulated " << sim_mean_us
                          << " us");
  BOOST_TEST(std::abs(model->throughput_ops_per_s - sim_ops_per_s) <= 0.05 * sim_ops_per_s, name << " throughput");
  BOOST_TEST(std::abs(model->mean_latency_us - sim_mean_us) <= 0.10 * sim_mean_us, name << " mean latency");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_against_simulation)

BOOST_AUTO_TEST_CASE(one_core) { compare("one-core", {"index.rpc_fraction=1.0"}); }
BOOST_AUTO_TEST_CASE(one_nic) { compare("one-nic", {"index.rpc_fraction=0.0"}); }
BOOST_AUTO_TEST_CASE(hybrid_split) { compare("hybrid", {"index.rpc_fraction=0.355", "run.clients=160"}); }
BOOST_AUTO_TEST_CASE(four_servers) {
  compare("four-servers", {"platform.servers=4", "platform.cores_per_server=2", "run.clients=300",
                           "index.rpc_fraction=0.5", "run.duration_s=0.006", "run.warmup_s=0.0015"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
