// A coarse-grained memory server's garbage-collection pass costs its CPU on
// the SimGrid backend: the daemon charges named work `nam.gc` by the bytes
// of the leaves it walked (core/index/nam/driver.cc). Until 2026-11-28 the
// pass ran for free, so a server that collected was as idle as one that did
// not; this test fails that way.
#include <boost/test/unit_test.hpp>
#include <string>

#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

constexpr const char* kScenario = R"(
[platform]
servers = 1
cores_per_server = 1
[platform.nic]
read = [[64, 1.0e8]]
write = [[64, 1.0e8]]
atomic = [[8, 1.0e8]]
send = [[64, 1.0e8]]
recv = [[64, 1.0e8]]
[platform.cpu]
default_handler_us = 0
[platform.cpu.handler_cost_us]
"client.op" = 0.1
"nam.range" = 1.0
"nam.insert" = 1.0
"nam.remove" = 1.0
[index]
type = "nam"
distribution = "coarse"
page_bytes = 256
gc_interval_ms = 1
[workload]
recordcount = 4000
readproportion = 0.5
updateproportion = 0
insertproportion = 0
deleteproportion = 0.5
fieldcount = 1
fieldlength = 4
[run]
seed = 3
clients = 2
duration_s = 0.02
warmup_s = 0.002
)";

double server_cpu(const std::string& gc_cost) {
  std::string text = kScenario;
  text.replace(text.find("\"nam.remove\""), 0, "\"nam.gc\" = " + gc_cost + "\n");
  auto r = testing::simulate_scenario(text, "nam-gc-cost.toml");
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_REQUIRE(r->result.extra.contains("nam.server_gc_passes"));
  BOOST_TEST(r->result.extra.at("nam.server_gc_passes") > 10.0);
  return testing::utilization_of(*r, "server0.cpu");
}

BOOST_AUTO_TEST_CASE(a_coarse_collection_pass_costs_the_servers_cpu) {
  // 4,000 pairs in 256-byte pages: some 400 leaves, 100 KB a pass (fewer
  // as deletes empty them). At 2 us a KB a pass costs up to 200 us, once a
  // millisecond: up to a fifth of the core.
  const double free_passes = server_cpu("0");
  const double costed = server_cpu("[[1024, 2.0], [2048, 4.0]]");
  BOOST_TEST_MESSAGE("server0.cpu: passes free " << free_passes << ", costed " << costed);
  BOOST_TEST(costed > free_passes + 0.08);
}

}  // namespace
}  // namespace locus
