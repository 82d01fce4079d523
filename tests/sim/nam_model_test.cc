// The NAM index's analytic model (core/index/nam/model.cc through the
// locality model) against the SimGrid simulation of the shipped scenarios,
// coarse-, fine-grained and hybrid (point queries; coarse and fine also
// with 5% and 50% inserts), each cut to a short window: throughput
// within 5% and mean latency within 10% (coarse and fine; hybrid misses,
// docs/models.md), each server's share within 0.02, printed side by side (run with
// --log_level=message) with each memory server's share of the bounding
// resource, model (from the rebuilt tree) and simulation (its resource
// table), and the model's derivation, Table 2 included.
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

std::string shares(const std::vector<double>& v) {
  std::string t;
  for (double x : v) t += (t.empty() ? "" : " ") + std::to_string(x).substr(0, 5);
  return t;
}

// `within`: the 5% / 10% bounds apply (hybrid: a known miss, see
// docs/models.md; its per-server shares are still checked). `more`: more
// settings. `check_shares`: each server's share within 0.02 (printed
// either way). Returns the simulated throughput.
double compare(const std::string& file, bool within, const std::vector<std::string>& more = {},
               bool check_shares = true) {
  std::vector<std::string> sets = {"run.duration_s=0.01", "run.warmup_s=0.003"};
  sets.insert(sets.end(), more.begin(), more.end());
  auto sc = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/nam/" + file, sets);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  const std::string name = file + (more.empty() ? "" : " " + more.front());
  auto m = testing::model_at_scenario_split(*sc);
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  const design::ModelProfile* profile = &m->profile;
  const models::LocalityInput* in = &m->input;
  const models::LocalityPrediction* model = &m->prediction;
  const double p = *profile->scenario_server_share;

  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const testing::OpsAndLatency sim = testing::throughput_and_mean(*report);
  BOOST_REQUIRE(sim.ops_per_s > 0);
  // Each server's share of the resource its path loads most.
  const std::string resource = p == 0 || profile->reads_per_server_op > 0 ? ".nic.rdma" : ".cpu";
  std::vector<double> sim_shares;
  double sum = 0;
  for (uint64_t i = 0; i < sc->platform.servers; ++i) {
    sim_shares.push_back(testing::utilization_of(*report, "server" + std::to_string(i) + resource));
    sum += sim_shares.back();
  }
  for (double& x : sim_shares) x = sum > 0 ? x / sum : 0;

  BOOST_TEST_MESSAGE(name << ": throughput model " << model->throughput_ops_per_s << " sim " << sim.ops_per_s << " ("
                          << 100 * (model->throughput_ops_per_s / sim.ops_per_s - 1) << "%); mean latency model "
                          << model->mean_latency_us << " us sim " << sim.mean_us << " us ("
                          << 100 * (model->mean_latency_us / sim.mean_us - 1) << "%); " << resource << " shares model "
                          << shares(resource == ".cpu" ? in->shares.work : in->shares.read) << " sim "
                          << shares(sim_shares) << "; bottleneck " << model->bottleneck);
  for (const std::string& line : profile->derivation) BOOST_TEST_MESSAGE("  " << line);
  const std::vector<double>& model_shares = resource == ".cpu" ? in->shares.work : in->shares.read;
  BOOST_REQUIRE(model_shares.size() == sim_shares.size());
  for (size_t i = 0; check_shares && i < sim_shares.size(); ++i) {
    BOOST_TEST(std::abs(model_shares[i] - sim_shares[i]) <= 0.02, name << " server " << i << "'s share");
  }
  if (within) {
    BOOST_TEST(std::abs(model->throughput_ops_per_s - sim.ops_per_s) <= 0.05 * sim.ops_per_s, name << " throughput");
    BOOST_TEST(std::abs(model->mean_latency_us - sim.mean_us) <= 0.10 * sim.mean_us, name << " mean latency");
  }
  return sim.ops_per_s;
}

// The calibration's attribute-value skew (NAM testbed: 80% / 12% / 5% / 3%
// of keys on the four memory servers, index.key_skew).
const std::string kSkew = "index.key_skew=0.8,0.12,0.05,0.03";

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_model_against_simulation)

BOOST_AUTO_TEST_CASE(coarse) { compare("coarse.toml", true); }
BOOST_AUTO_TEST_CASE(fine) { compare("fine.toml", true); }
BOOST_AUTO_TEST_CASE(hybrid) { compare("hybrid.toml", false); }

// Section 2.3: under attribute-value skew the coarse-grained index loses
// throughput to its one hot memory server (80% of its CPU work there),
// while the fine-grained one, nodes round-robin, does not notice.
BOOST_AUTO_TEST_CASE(coarse_under_skew_is_bound_by_one_server) {
  const double uniform = compare("coarse.toml", false);
  const double skewed = compare("coarse.toml", true, {kSkew});
  BOOST_TEST(skewed < 0.8 * uniform, "skewed " << skewed << " uniform " << uniform);
}
BOOST_AUTO_TEST_CASE(fine_under_skew_is_unchanged) {
  const double uniform = compare("fine.toml", true);
  const double skewed = compare("fine.toml", true, {kSkew});
  BOOST_TEST(std::abs(skewed - uniform) <= 0.02 * uniform, "skewed " << skewed << " uniform " << uniform);
}

// The paper's mixes of point queries and inserts (95/5 and 50/50):
// coarse-grained nam.insert RPCs beside the lookups' nam.range, and the
// fine-grained traversal with the leaf's lock, install and unlock.
BOOST_AUTO_TEST_CASE(coarse_with_inserts) {
  compare("coarse.toml", true, {"workload.readproportion=0.95", "workload.insertproportion=0.05"});
  compare("coarse.toml", true, {"workload.readproportion=0.5", "workload.insertproportion=0.5"});
}
// At 50% inserts the fine-grained shares are a known miss (docs/models.md:
// server 0 takes 0.44-0.47 of the READ engines' time in the simulation,
// 0.42 in the model), so only throughput and latency are checked there.
BOOST_AUTO_TEST_CASE(fine_with_inserts) {
  compare("fine.toml", true, {"workload.readproportion=0.95", "workload.insertproportion=0.05"});
  compare("fine.toml", true, {"workload.readproportion=0.5", "workload.insertproportion=0.5"}, false);
}

// Updates (and other writes than inserts) and hybrid inserts are outside
// the model: refused by name, not predicted.
BOOST_AUTO_TEST_CASE(other_writes_are_refused_by_name) {
  auto refused = [](const std::string& file, const std::vector<std::string>& sets, const std::string& key) {
    auto sc = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/nam/" + file, sets);
    BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
    auto profile = cli::model_profile_of(*sc);
    BOOST_TEST(!profile.is_ok(), file);
    BOOST_TEST(profile.status().message().find(key) != std::string::npos, profile.status().to_string());
  };
  refused("coarse.toml", {"workload.standard=a"}, "workload.readproportion");
  refused("hybrid.toml", {"workload.readproportion=0.95", "workload.insertproportion=0.05"},
          "workload.insertproportion");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
