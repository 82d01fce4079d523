// Power and CPU contention on SimGrid (backends/simgrid/sim_energy.h), on
// scenarios/nessie/modes.toml cut short: an idle host draws its idle power
// and a busy one more, a polling server thread one core whatever its load, joules per operation are the run's energy
// over its operations, CPU hogs ([platform] background_load) slow the
// server-driven NessieSD and barely move client-driven Nessie, and bad
// [platform.power] or background_load settings are refused by name.
//
// The power figures here are test inputs, not predictions (shared/
// calibration.md has none): 100 W idle, 10 W per busy core.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

const std::string kModes = LOCUS_SOURCE_DIR "/scenarios/nessie/modes.toml";
constexpr double kIdleW = 100, kBusyWPerCore = 10;
const std::string kPower = "\n[platform.power]\nidle_w = 100\nbusy_w_per_core = 10\n";

std::string modes_text() {
  std::ifstream in(kModes);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

StatusOr<scenario::Scenario> parse(const std::string& extra, const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"run.duration_s=0.006", "run.warmup_s=0.002", "workload.recordcount=600"};
  all.insert(all.end(), sets.begin(), sets.end());
  return designs::parse_scenario(modes_text() + extra, kModes, all);
}

runner::ScenarioReport run(const std::string& extra, const std::vector<std::string>& sets) {
  auto sc = parse(extra, sets);
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto report = testing::simulate(*sc);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  return std::move(*report);
}

double host_w(const runner::ScenarioReport& r, const std::string& host) {
  for (const HostPower& h : r.result.power) {
    if (h.name == host) return h.average_w;
  }
  BOOST_FAIL("no power reported for " << host);
  return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nessie_energy)

// Client mode leaves the nodes' CPUs idle (no server thread; the layout
// calls cost nothing in modes.toml): they draw idle power exactly, and the
// client hosts, whose clients work, draw more.
BOOST_AUTO_TEST_CASE(idle_hosts_draw_idle_power) {
  const runner::ScenarioReport r = run(kPower, {});
  BOOST_REQUIRE(r.result.total_ops() > 100u);
  BOOST_REQUIRE_EQUAL(r.result.power.size(), 6u);  // 3 servers, 3 client hosts
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(host_w(r, "server" + std::to_string(i)) == kIdleW, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(host_w(r, "chost" + std::to_string(i)) > kIdleW);
  }
  double sum_w = 0;
  for (const HostPower& h : r.result.power) sum_w += h.average_w;
  BOOST_TEST(r.result.extra.at("power_w") == sum_w, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_busy_run_draws_more_and_joules_per_op_are_energy_over_ops) {
  const runner::ScenarioReport r = run(kPower, {"index.mode=\"server\""});
  BOOST_REQUIRE(r.result.total_ops() > 100u);
  for (int i = 0; i < 3; ++i) {
    // Each node's polling server threads (three: the testbed's tuning for
    // 256-byte values) keep a core busy each, their handlers included
    // (they run on the core each polls with).
    BOOST_TEST(host_w(r, "server" + std::to_string(i)) == kIdleW + 3 * kBusyWPerCore,
               boost::test_tools::tolerance(1e-6));
    BOOST_TEST(host_w(r, "chost" + std::to_string(i)) > kIdleW);  // the clients' own work
  }
  const double energy_j = r.result.extra.at("energy_j");
  BOOST_TEST(energy_j == r.result.extra.at("power_w") * to_seconds(r.result.duration_ns),
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.result.extra.at("joules_per_op") == energy_j / static_cast<double>(r.result.total_ops()),
             boost::test_tools::tolerance(1e-9));
  // The JSON carries every host's figures.
  const std::string json = metrics::to_json_string({r.result});
  BOOST_TEST(json.find("\"average_w\"") != std::string::npos);
  BOOST_TEST(json.find("\"joules_per_op\"") != std::string::npos);
}

// One server thread per node (index.server_threads): one busy core.
BOOST_AUTO_TEST_CASE(each_polling_thread_holds_a_core) {
  const runner::ScenarioReport r = run(kPower, {"index.mode=\"server\"", "index.server_threads=1"});
  BOOST_REQUIRE(r.result.total_ops() > 100u);
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(host_w(r, "server" + std::to_string(i)) == kIdleW + kBusyWPerCore, boost::test_tools::tolerance(1e-6));
  }
}

// [platform] polling_clients: each client worker holds a core of its host
// from its start to its end, its own work included (4 clients per client
// host here); client mode leaves the nodes idle still. Clients end within
// an operation of each other, so a host's last moments may miss a core.
BOOST_AUTO_TEST_CASE(polling_clients_hold_a_core_each) {
  const runner::ScenarioReport r = run(kPower, {"platform.polling_clients=true"});
  BOOST_REQUIRE(r.result.total_ops() > 100u);
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(host_w(r, "server" + std::to_string(i)) == kIdleW, boost::test_tools::tolerance(1e-9));
    const double busy_cores = (host_w(r, "chost" + std::to_string(i)) - kIdleW) / kBusyWPerCore;
    BOOST_TEST(busy_cores == 4.0, boost::test_tools::tolerance(0.02));
  }
}

BOOST_AUTO_TEST_CASE(without_a_power_profile_no_power_is_reported) {
  const runner::ScenarioReport r = run("", {});
  BOOST_TEST(r.result.power.empty());
  BOOST_TEST(r.result.extra.count("joules_per_op") == 0u);
}

// 3 hogs per core: the server thread's handlers get a quarter of a core
// and NessieSD's throughput falls; client-driven Nessie's operations need
// no server CPU, and its clients' own work is a small part of an
// operation's time.
BOOST_AUTO_TEST_CASE(background_load_slows_server_mode_and_barely_moves_client_mode) {
  auto throughput = [](const std::string& mode, int hogs) {
    return run("", {"index.mode=\"" + mode + "\"", "platform.background_load=" + std::to_string(hogs)})
        .result.throughput_ops_per_s();
  };
  const double server_ratio = throughput("server", 36) / throughput("server", 0);
  const double client_ratio = throughput("client", 36) / throughput("client", 0);
  BOOST_TEST_MESSAGE("throughput with 36 hogs per host over none: server " << server_ratio << ", client "
                                                                           << client_ratio);
  BOOST_TEST(server_ratio < 0.8);
  BOOST_TEST(client_ratio > 0.9);
  BOOST_TEST(client_ratio > server_ratio);
}

BOOST_AUTO_TEST_CASE(bad_settings_are_refused_by_name) {
  auto error_of = [](const std::string& extra, const std::vector<std::string>& sets) {
    auto sc = parse(extra, sets);
    return sc.is_ok() ? std::string("accepted") : sc.status().to_string();
  };
  const std::string no_busy = error_of("\n[platform.power]\nidle_w = 100\n", {});
  BOOST_TEST(no_busy.find("platform.power.busy_w_per_core: missing") != std::string::npos, no_busy);
  const std::string no_idle = error_of("\n[platform.power]\nbusy_w_per_core = 10\n", {});
  BOOST_TEST(no_idle.find("platform.power.idle_w: missing") != std::string::npos, no_idle);
  const std::string negative_w = error_of("\n[platform.power]\nidle_w = -1\nbusy_w_per_core = 10\n", {});
  BOOST_TEST(negative_w.find("platform.power.idle_w") != std::string::npos, negative_w);
  const std::string unknown = error_of("\n[platform.power]\nidle_w = 1\nbusy_w_per_core = 1\nmax_w = 3\n", {});
  BOOST_TEST(unknown.find("platform.power.max_w: unknown key") != std::string::npos, unknown);
  const std::string hogs = error_of("", {"platform.background_load=-2"});
  BOOST_TEST(hogs.find("platform.background_load") != std::string::npos, hogs);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
