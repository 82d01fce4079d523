// Nessie's analytic model (core/index/nessie/model.cc through the locality
// model) against the SimGrid simulation of the shipped scenarios, each cut
// to a short window: scenarios/nessie/modes.toml (YCSB-B, 256 B values) in
// Nessie's three modes (index.mode client, server, hybrid), the same at
// 4 KB values, and contention.toml (24 CPU hogs a host): throughput within
// 5% and mean latency within 10%, printed side by side (run with
// --log_level=message) with the model's derivation. NessieSD at 4 KB is a
// known miss (docs/models.md, "Nessie"): printed, not held to the bounds.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "apps/locus/model_input.h"
#include "core/designs/designs.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"
#include "tests/support/model_at_split.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

void compare(const std::string& file, std::vector<std::string> sets, bool within = true) {
  sets.push_back("run.duration_s=0.02");
  sets.push_back("run.warmup_s=0.005");
  auto sc = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/nessie/" + file, sets);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto m = testing::model_at_scenario_split(*sc);
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  const models::LocalityPrediction& model = m->prediction;

  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  const testing::OpsAndLatency sim = testing::throughput_and_mean(*report);
  BOOST_REQUIRE(sim.ops_per_s > 0);
  std::string what = file;
  for (size_t i = 0; i + 2 < sets.size(); ++i) what += " " + sets[i];
  BOOST_TEST_MESSAGE(what << ": throughput model " << model.throughput_ops_per_s << " sim " << sim.ops_per_s << " ("
                          << 100 * (model.throughput_ops_per_s / sim.ops_per_s - 1) << "%); mean latency model "
                          << model.mean_latency_us << " us sim " << sim.mean_us << " us ("
                          << 100 * (model.mean_latency_us / sim.mean_us - 1) << "%); bottleneck " << model.bottleneck);
  for (const std::string& line : m->profile.derivation) BOOST_TEST_MESSAGE("  " << line);
  if (!within) return;
  BOOST_TEST(std::abs(model.throughput_ops_per_s - sim.ops_per_s) <= 0.05 * sim.ops_per_s, what << " throughput");
  BOOST_TEST(std::abs(model.mean_latency_us - sim.mean_us) <= 0.10 * sim.mean_us, what << " mean latency");
}

}  // namespace

// contention.toml runs the CFS time-slice model, which the model refuses:
// both sides share cores fluidly here.
constexpr const char* kFluid = "platform.cpu_scheduler=\"fluid\"";

BOOST_AUTO_TEST_SUITE(nessie_model_against_simulation)

BOOST_AUTO_TEST_CASE(client_ycsb_b) { compare("modes.toml", {"index.mode=\"client\""}); }
BOOST_AUTO_TEST_CASE(server_ycsb_b) { compare("modes.toml", {"index.mode=\"server\""}); }
BOOST_AUTO_TEST_CASE(hybrid_ycsb_b) { compare("modes.toml", {"index.mode=\"hybrid\""}); }
BOOST_AUTO_TEST_CASE(client_4k_values) {
  compare("modes.toml", {"index.mode=\"client\"", "workload.fieldlength=4096"});
}
BOOST_AUTO_TEST_CASE(server_4k_values) {
  compare("modes.toml", {"index.mode=\"server\"", "workload.fieldlength=4096"}, false);
}
BOOST_AUTO_TEST_CASE(hybrid_4k_values) {
  compare("modes.toml", {"index.mode=\"hybrid\"", "workload.fieldlength=4096"});
}
BOOST_AUTO_TEST_CASE(client_contention) { compare("contention.toml", {"index.mode=\"client\"", kFluid}); }
BOOST_AUTO_TEST_CASE(server_contention) { compare("contention.toml", {"index.mode=\"server\"", kFluid}); }
BOOST_AUTO_TEST_CASE(hybrid_contention) { compare("contention.toml", {"index.mode=\"hybrid\"", kFluid}); }

// Inserts and deletes (80% gets, 10% inserts, 10% deletes) over 30,000
// records: a key deleted earlier makes a later get or delete of it a miss
// (a forward and a reverse pass, three times a hit's READs), which the
// model counts at the mean share of keys gone over the measured window,
// settled at its own throughput (docs/models.md, "Inserts and deletes").
const std::vector<std::string> kInsertsAndDeletes = {
    "workload.recordcount=30000",     "index.client_data_entries=4096",  "workload.readproportion=0.8",
    "workload.updateproportion=0",    "workload.insertproportion=0.1",   "workload.deleteproportion=0.1"};
std::vector<std::string> with_mode(const char* mode) {
  std::vector<std::string> sets = kInsertsAndDeletes;
  sets.push_back(std::string("index.mode=\"") + mode + "\"");
  return sets;
}
BOOST_AUTO_TEST_CASE(server_inserts_and_deletes) { compare("modes.toml", with_mode("server")); }
BOOST_AUTO_TEST_CASE(client_inserts_and_deletes) { compare("modes.toml", with_mode("client")); }
BOOST_AUTO_TEST_CASE(hybrid_inserts_and_deletes) { compare("modes.toml", with_mode("hybrid")); }

// Scans are outside the model: refused by name, not predicted.
BOOST_AUTO_TEST_CASE(scans_are_refused_by_name) {
  auto sc =
      designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/nessie/modes.toml", {"workload.standard=e"});
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto profile = cli::model_profile_of(*sc);
  BOOST_TEST(!profile.is_ok());
  BOOST_TEST(profile.status().message().find("workload.scanproportion") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
