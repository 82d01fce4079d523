// Nessie under the scenario runner: the shipped scenario
// (scenarios/nessie/small.toml), cut short, on SimGrid: operations complete
// without failures, every one of them by one-sided verbs (the nodes' RDMA
// engines busy, their CPUs idle after the clients' layout calls); a
// put-heavy run on a few keys, and inserts into nearly full index tables
// (migrations), with [check] linearizability on are linearizable; and the
// [index] keys' refusals name the key (unknown modes, values that do not
// fit, tables beyond memory). NessieSD and NessieHY (index.mode = server,
// hybrid) run the shipped scenario and the contended put-heavy run with
// [check] linearizability. With run.clients_on_servers (the paper's
// symmetric deployment) the clients read their own node's tables from
// memory and post fewer verbs per operation, stay linearizable, and the
// runner refuses the combinations it cannot place.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

const std::string kSmall = LOCUS_SOURCE_DIR "/scenarios/nessie/small.toml";

runner::ScenarioReport run_small(const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"run.duration_s=0.004", "run.warmup_s=0.001"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto sc = designs::load_scenario(kSmall, all);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  return std::move(*report);
}

int64_t counter(const runner::ScenarioReport& r, const std::string& name) { return r.result.stats.counter_value(name); }

}  // namespace

BOOST_AUTO_TEST_SUITE(nessie_scenarios)

BOOST_AUTO_TEST_CASE(the_shipped_scenario_runs_on_simgrid) {
  const runner::ScenarioReport r = run_small({});
  BOOST_TEST(r.result.index == "nessie");
  BOOST_TEST(r.result.stats.total_ops() > 100u);
  BOOST_TEST(r.result.stats.total_failed() == 0u);
  BOOST_TEST(counter(r, "nessie.attempts") >= static_cast<int64_t>(r.result.stats.total_ops()));
  BOOST_TEST(counter(r, "nessie.ite_reads") > 0);
  BOOST_TEST(counter(r, "nessie.staged") > 0);  // YCSB-B's updates replaced entries
  BOOST_TEST(r.result.extra.at("nessie.loaded_records") == 30000.0);
  BOOST_TEST(r.result.extra.at("nessie.slices_granted") == 36.0);
  // Client-driven: the nodes' CPUs only answered the clients' layout
  // calls; their NICs carried every operation.
  for (int i = 0; i < 3; ++i) {
    const std::string node = "server" + std::to_string(i);
    BOOST_TEST(testing::utilization_of(r, node + ".cpu") < 0.01);
    BOOST_TEST(testing::utilization_of(r, node + ".nic.rdma") > 0.1);
  }
}

// Crashed clients that come back as new processes (faults.restart_after_ms)
// each get a data-table slice of their own: they had none left before,
// so none was served.
BOOST_AUTO_TEST_CASE(restarted_clients_get_slices_of_their_own) {
  const runner::ScenarioReport r =
      run_small({"run.duration_s=0.02", "faults.crash_clients=3", "faults.restart_after_ms=2",
                 "workload.recordcount=2000", "check.linearizability=true"});
  BOOST_TEST(r.result.extra.at("faults.crashed_clients") == 3.0);
  BOOST_TEST(r.result.extra.at("faults.restarted_clients") == 3.0);
  BOOST_TEST(r.result.extra.at("nessie.slices_granted") == 39.0);
  BOOST_TEST(r.result.extra.at("check.violations") == 0.0);
}

BOOST_AUTO_TEST_CASE(contended_puts_are_linearizable_on_simgrid) {
  const runner::ScenarioReport r = run_small(
      {"workload.recordcount=40", "workload.readproportion=0.5", "workload.updateproportion=0.5",
       "workload.requestdistribution=\"zipfian\"", "index.client_data_entries=512", "check.linearizability=true"});
  BOOST_TEST(r.result.stats.total_failed() == 0u);
  BOOST_TEST(r.result.extra.at("check.violations") == 0.0);
  BOOST_TEST(counter(r, "nessie.conflicts") > 0);
  BOOST_TEST(counter(r, "nessie.restore_failures") == 0);
}

// Inserts into index tables nearly full (30 records and inserts over 3 x
// 16 entries) by 36 clients: puts migrate, the history is linearizable;
// inserts the tables have no room for fail (they are not counted here).
BOOST_AUTO_TEST_CASE(migrating_inserts_are_linearizable_on_simgrid) {
  std::vector<std::string> sets = {"workload.recordcount=30",        "workload.readproportion=0.5",
                                   "workload.updateproportion=0.45", "workload.insertproportion=0.05",
                                   "index.index_entries=16",         "index.client_data_entries=2048",
                                   "check.linearizability=true"};
  for (const char* seed : {"run.seed=1", "run.seed=2"}) {
    sets.push_back(seed);
    const runner::ScenarioReport r = run_small(sets);
    sets.pop_back();
    BOOST_TEST(r.result.extra.at("check.violations") == 0.0);
    BOOST_TEST(counter(r, "nessie.migrations") > 0);
    BOOST_TEST(counter(r, "nessie.restore_failures") == 0);
  }
}

// NessieSD and NessieHY: the shipped scenario's operations reach the
// nodes' server threads (all of them in NessieSD, YCSB-B's updates in
// NessieHY, whose reads stay one-sided); a contended put-heavy run is
// linearizable.
BOOST_AUTO_TEST_CASE(server_driven_and_hybrid_modes_run_on_simgrid) {
  for (const char* mode : {"server", "hybrid"}) {
    BOOST_TEST_CONTEXT(mode) {
      const runner::ScenarioReport r = run_small({std::string("index.mode=\"") + mode + "\""});
      BOOST_TEST(r.result.stats.total_ops() > 100u);
      BOOST_TEST(r.result.stats.total_failed() == 0u);
      const int64_t sent = counter(r, "nessie.server_requests");
      BOOST_TEST(r.result.extra.at("nessie.server_requests") >= static_cast<double>(sent));
      if (std::string(mode) == "server") {
        BOOST_TEST(sent >= static_cast<int64_t>(r.result.stats.total_ops()));
        BOOST_TEST(counter(r, "nessie.ite_reads") == 0);
      } else {
        BOOST_TEST(sent > 0);
        BOOST_TEST(sent < static_cast<int64_t>(r.result.stats.total_ops()) / 2);  // YCSB-B: 5% updates
        BOOST_TEST(counter(r, "nessie.ite_reads") > 0);
      }
      BOOST_TEST(r.result.extra.at("nessie.server_bad_requests") == 0.0);
      const runner::ScenarioReport c = run_small({std::string("index.mode=\"") + mode + "\"", "workload.recordcount=40",
                                                  "workload.readproportion=0.5", "workload.updateproportion=0.5",
                                                  "workload.requestdistribution=\"zipfian\"",
                                                  "index.client_data_entries=512", "check.linearizability=true"});
      BOOST_TEST(c.result.stats.total_failed() == 0u);
      BOOST_TEST(c.result.extra.at("check.violations") == 0.0);
    }
  }
}

// The same workload with the clients on the nodes' machines: a third of
// each client's ITE and DTE reads and all its DTE writes are its own
// node's, done by loads and stores, so it posts fewer verbs per operation.
BOOST_AUTO_TEST_CASE(colocated_clients_post_fewer_verbs) {
  const std::vector<std::string> mix = {"workload.readproportion=0.5", "workload.updateproportion=0.5"};
  std::vector<std::string> colocated = mix;
  colocated.push_back("run.clients_on_servers=true");
  const runner::ScenarioReport apart = run_small(mix);
  const runner::ScenarioReport beside = run_small(colocated);
  BOOST_TEST(apart.result.stats.total_failed() == 0u);
  BOOST_TEST(beside.result.stats.total_failed() == 0u);
  BOOST_TEST(counter(apart, "nessie.local_ops") == 0);
  BOOST_TEST(counter(beside, "nessie.local_ops") > 0);
  const auto per_op = [](const runner::ScenarioReport& r) {
    return static_cast<double>(counter(r, "nessie.rdma_ops")) / static_cast<double>(r.result.stats.total_ops());
  };
  BOOST_TEST_MESSAGE("verbs per operation: apart " << per_op(apart) << ", colocated " << per_op(beside));
  BOOST_TEST(per_op(beside) < 0.8 * per_op(apart));
  // Every client's slice is on its own node: still 12 a node.
  BOOST_TEST(beside.result.extra.at("nessie.slices_granted") == 36.0);
}

BOOST_AUTO_TEST_CASE(colocated_contended_puts_are_linearizable_on_simgrid) {
  for (const char* mode : {"client", "server", "hybrid"}) {
    BOOST_TEST_CONTEXT("index.mode " << mode) {
      const runner::ScenarioReport r = run_small(
          {"run.clients_on_servers=true", std::string("index.mode=\"") + mode + "\"", "workload.recordcount=40",
           "workload.readproportion=0.5", "workload.updateproportion=0.5", "workload.requestdistribution=\"zipfian\"",
           "index.client_data_entries=512", "check.linearizability=true"});
      const bool coupled = std::string(mode) != "client";
      BOOST_TEST(r.result.stats.total_failed() == 0u);
      BOOST_TEST(r.result.extra.at("check.violations") == 0.0);
      BOOST_TEST((counter(r, "nessie.local_ops") > 0) == (std::string(mode) != "server"));
      BOOST_TEST(counter(r, "nessie.restore_failures") == 0);
      // NessieSD, NessieHY: a client's requests to its own node by CPU
      // stores (requests.h, attach_local), answered so.
      BOOST_TEST((counter(r, "nessie.local_requests") > 0) == coupled);
      if (coupled) {
        BOOST_TEST(r.result.extra.at("nessie.server_local_responses") ==
                   static_cast<double>(counter(r, "nessie.local_requests")));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(colocation_refuses_what_it_cannot_place) {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {"run.clients=35"}, {"faults.crash_clients=1"}, {"faults.crash_servers=1"}}) {
    std::vector<std::string> all = {"run.clients_on_servers=true", "run.duration_s=0.004", "run.warmup_s=0.001"};
    all.insert(all.end(), sets.begin(), sets.end());
    auto sc = designs::load_scenario(kSmall, all);
    BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
    auto report = testing::simulate(*sc);
    BOOST_REQUIRE(!report.is_ok());
    BOOST_TEST(report.status().message().find("run.clients_on_servers") != std::string::npos,
               report.status().to_string());
  }
}

BOOST_AUTO_TEST_CASE(index_keys_are_checked_by_name) {
  auto bad = designs::load_scenario(kSmall, {"index.mode=sideways"});
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("index.mode") != std::string::npos, bad.status().message());
  bad = designs::load_scenario(kSmall, {"index.ways=1"});
  BOOST_TEST(!bad.is_ok());
  bad = designs::load_scenario(kSmall, {"index.value_bytes=100"});
  BOOST_REQUIRE(bad.is_ok());  // parsed; the driver refuses it
  auto report = testing::simulate(*bad);
  BOOST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().message().find("index.value_bytes") != std::string::npos, report.status().message());
  bad = designs::load_scenario(kSmall, {"workload.scanproportion=0.1", "workload.readproportion=0.85"});
  BOOST_REQUIRE(bad.is_ok());
  report = testing::simulate(*bad);
  BOOST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().message().find("scan") != std::string::npos, report.status().message());
  // Too few data entries for the records' values once puts rewrite them
  // (the energy sweep's 3 clients of 256 entries over 3,000 records ran
  // out 55 ms in and failed their puts): refused before the run, in every
  // mode, naming the key and the least that holds them.
  for (const char* mode : {"index.mode=\"client\"", "index.mode=\"server\""}) {
    bad = designs::load_scenario(kSmall, {mode, "run.clients=3", "index.client_data_entries=256"});
    BOOST_REQUIRE(bad.is_ok());
    report = testing::simulate(*bad);
    BOOST_REQUIRE(!report.is_ok());
    BOOST_TEST(report.status().message().find("index.client_data_entries") != std::string::npos,
               report.status().message());
    BOOST_TEST(report.status().message().find("at least") != std::string::npos, report.status().message());
  }
}

// Tables that would not fit in memory are refused before anything is
// allocated, naming the settings that size them. (Read-only: with puts,
// the clients' data entries too few for a billion values are refused
// first, by the driver.)
BOOST_AUTO_TEST_CASE(tables_beyond_memory_are_refused_naming_them) {
  auto sc = designs::load_scenario(
      kSmall, {"workload.recordcount=1000000000", "workload.readproportion=1", "workload.updateproportion=0"});
  BOOST_REQUIRE(sc.is_ok());
  runner::RunOptions ro;
  ro.max_memory_bytes = 1ull << 30;
  auto report = runner::run_scenario(
      *sc, designs::registry(),
      [](const scenario::Scenario& s) {
        simgrid_backend::SimOptions o;
        o.seed = s.run.seed;
        return simgrid_backend::make_simgrid_runtime(s.platform, o);
      },
      ro);
  BOOST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().code() == StatusCode::kResourceExhausted, report.status().to_string());
  BOOST_TEST(report.status().message().find("workload.recordcount") != std::string::npos, report.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
