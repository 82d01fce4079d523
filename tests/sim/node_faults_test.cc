// Nodes that die mid-run (faults.crash_clients, .restart_after_ms,
// .crash_servers), through the runner on SimGrid: a crashed client comes
// back as a new process that is served and whose calls enter the checked
// history; a crashed server leaves the other serving, and its clients'
// calls fail within their waits instead of in a storm.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

// Pilaf on two one-core servers, eight clients, the history checked.
constexpr const char* kTwoPilafServers = R"(
[platform]
servers = 2
cores_per_server = 1
[platform.cpu]
default_handler_us = 2.0  # any cost: the faults are what is checked (was the code's default)
[index]
type = "pilaf"
[workload]
recordcount = 500
requestdistribution = "uniform"
readproportion = 0.5
updateproportion = 0.5
[run]
seed = 3
clients = 8
duration_s = 0.05
warmup_s = 0.005
wait_timeout_ms = 2
[check]
linearizability = true
)";

double extra(const runner::ScenarioReport& r, const std::string& key) {
  auto it = r.result.extra.find(key);
  BOOST_REQUIRE_MESSAGE(it != r.result.extra.end(), "no " << key);
  return it->second;
}

BOOST_AUTO_TEST_CASE(crashed_clients_come_back_as_new_processes) {
  auto r = testing::simulate_scenario(kTwoPilafServers, "two-pilaf.toml",
                                      {"faults.crash_clients=3", "faults.restart_after_ms=1"});
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(extra(*r, "faults.crashed_clients") == 3);
  BOOST_TEST(extra(*r, "faults.restarted_clients") == 3);
  BOOST_TEST(extra(*r, "check.violations") == 0);
  // Without restarts the three stay dead.
  auto dead = testing::simulate_scenario(kTwoPilafServers, "two-pilaf.toml", {"faults.crash_clients=3"});
  BOOST_REQUIRE_MESSAGE(dead.is_ok(), dead.status().to_string());
  BOOST_TEST(extra(*dead, "faults.crashed_clients") == 3);
  BOOST_TEST(r->result.stats.total_ops() > dead->result.stats.total_ops());
}

BOOST_AUTO_TEST_CASE(a_crashed_server_leaves_the_other_serving) {
  auto r = testing::simulate_scenario(kTwoPilafServers, "two-pilaf.toml", {"faults.crash_servers=1"});
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(extra(*r, "faults.crashed_servers") == 1);
  BOOST_TEST(extra(*r, "faults.ok_after_server_crash") > 0);
  BOOST_TEST(extra(*r, "check.violations") == 0);
  const uint64_t failed = r->result.stats.total_failed();
  BOOST_TEST(failed > 0u);
  // A client's call to the dead server fails when its wait (2 ms) ends, so
  // over the 45 ms measured a client fails at most ~23 calls: a storm of
  // failures at no cost means the dead server is not being modelled.
  BOOST_TEST(failed <= 8u * 45 / 2);
  BOOST_TEST(r->result.first_failure.find("run.wait_timeout_ms") != std::string::npos, r->result.first_failure);
}

// A server machine that comes back with its memory (a host whose network
// returned) serves again: once its clients' stuck requests fail (the
// queue pairs' retries, 8 x 1 ms at ACK timeout exponent 8), their calls
// succeed, so far fewer fail than when it stays dead, and the history of
// the whole run is still linearizable.
BOOST_AUTO_TEST_CASE(a_server_back_from_an_outage_serves_again) {
  // Seed 1 crashes the server early enough to leave most of the run after
  // it (seed 3's crash comes so late that both runs end alike).
  const std::vector<std::string> base = {"faults.seed=1", "faults.crash_servers=1", "platform.nic.ack_timeout=8"};
  auto dead = testing::simulate_scenario(kTwoPilafServers, "two-pilaf.toml", base);
  BOOST_REQUIRE_MESSAGE(dead.is_ok(), dead.status().to_string());
  std::vector<std::string> sets = base;
  sets.push_back("faults.server_outage_ms=5");
  auto back = testing::simulate_scenario(kTwoPilafServers, "two-pilaf.toml", sets);
  BOOST_REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  BOOST_TEST(extra(*back, "faults.revived_servers") == 1);
  BOOST_TEST(extra(*back, "check.violations") == 0);
  BOOST_TEST(extra(*back, "faults.ok_after_server_crash") > 2 * extra(*dead, "faults.ok_after_server_crash"));
  BOOST_TEST(back->result.stats.total_failed() * 2 < dead->result.stats.total_failed());
}

}  // namespace
}  // namespace locus
