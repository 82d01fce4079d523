// Catfish's analytic model (core/index/catfish/model.cc through the
// locality model) against the SimGrid simulation of the same scenario: the
// shipped scenarios/catfish/rtree.toml cut to 200 K rectangles and a short
// window, fast messaging only (server_only) and offloading only
// (client_only), at query scales 1e-5 and 1e-2. Throughput within 5% and
// mean latency within 10%; both printed side by side, with the model's
// READs and round trips per search and the simulator's own counts.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "apps/locus/model_input.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"
#include "tests/support/model_at_split.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

double counter(const runner::ScenarioReport& r, const std::string& name) {
  for (const metrics::NamedCounter& c : r.result.stats.counters()) {
    if (c.name == name) return static_cast<double>(c.value);
  }
  return 0;
}

void compare(const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"index.rectangles=200000", "run.duration_s=0.01", "run.warmup_s=0.003"};
  all.insert(all.end(), sets.begin(), sets.end());
  std::string name;
  for (const std::string& s : sets) name += s + " ";
  auto sc = designs::load_scenario(LOCUS_SOURCE_DIR "/scenarios/catfish/rtree.toml", all);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());

  auto m = testing::model_at_scenario_split(*sc);
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  const design::ModelProfile* profile = &m->profile;
  const models::LocalityPrediction* model = &m->prediction;

  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const testing::OpsAndLatency sim = testing::throughput_and_mean(*report);
  BOOST_REQUIRE(sim.ops_per_s > 0);
  const double sim_ops_per_s = sim.ops_per_s;
  const double sim_mean_us = sim.mean_us;
  const double searches = counter(*report, "catfish.client_searches");
  const double node_reads = searches > 0 ? counter(*report, "catfish.node_reads") / searches : 0;
  const double batches = searches > 0 ? counter(*report, "catfish.read_batches") / searches : 0;

  BOOST_TEST_MESSAGE(name << ": throughput model " << model->throughput_ops_per_s << " simulated " << sim_ops_per_s
                          << " (" << 100 * (model->throughput_ops_per_s / sim_ops_per_s - 1)
                          << "%); mean latency model " << model->mean_latency_us << " us simulated " << sim_mean_us
                          << " us (" << 100 * (model->mean_latency_us / sim_mean_us - 1)
                          << "%); node READs a search model " << profile->reads_per_client_op - 2 << " simulated "
                          << node_reads << ", batches model " << profile->round_trips_per_client_op - 2 << " simulated "
                          << batches);
  for (const std::string& line : profile->derivation) BOOST_TEST_MESSAGE("  " << line);
  BOOST_TEST(std::abs(model->throughput_ops_per_s - sim_ops_per_s) <= 0.05 * sim_ops_per_s, name << " throughput");
  BOOST_TEST(std::abs(model->mean_latency_us - sim_mean_us) <= 0.10 * sim_mean_us, name << " mean latency");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(catfish_model_against_simulation)

BOOST_AUTO_TEST_CASE(messaging_small_queries) { compare({"selector.type=server_only", "index.query_scale=1e-5"}); }
BOOST_AUTO_TEST_CASE(messaging_large_queries) { compare({"selector.type=server_only", "index.query_scale=1e-2"}); }
BOOST_AUTO_TEST_CASE(offloading_small_queries) { compare({"selector.type=client_only", "index.query_scale=1e-5"}); }
BOOST_AUTO_TEST_CASE(offloading_large_queries) { compare({"selector.type=client_only", "index.query_scale=1e-2"}); }

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
