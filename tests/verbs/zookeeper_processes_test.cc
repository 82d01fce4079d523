// `locus serve --zookeeper` and `locus run --backend verbs` as real
// processes on an RDMA device (Soft-RoCE in ci/softroce-vm.sh, whose guest
// runs the host's tree and so Debian's ZooKeeper and Java): the servers
// announce their rdma_cm addresses in a real ZooKeeper server, a client
// whose cluster file names only ZooKeeper finds them and runs YCSB against
// Cell, the region map is there, and when serving stops the servers vanish
// from ZooKeeper at once.
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include "backends/zookeeper/zookeeper_membership.h"
#include "core/membership/region_map.h"
#include "tests/support/child_process.h"
#include "tests/support/zookeeper_server.h"
#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("zookeeper_processes_verbs_test");
  return true;
}();

constexpr size_t kServers = 2;

BOOST_AUTO_TEST_CASE(clients_find_cell_servers_in_zookeeper) {
  auto zk = locus::testing::ZooKeeperServer::start_or_skip("zookeeper_processes_verbs_test");
  const std::string target = zk->address() + "/verbs";
  verbs::testing::ServedIndex t;
  t.dir = verbs::testing::make_temp_dir("zookeeper-processes");
  t.scenario = verbs::testing::scenario_path("cell.toml");
  const std::string address = verbs::testing::local_address();
  verbs::testing::write_file(t.dir + "/serve.toml",
                             verbs::testing::cluster_toml(address, std::vector<std::string>(kServers, "0")));
  t.server = std::make_unique<verbs::testing::ChildProcess>(
      std::vector<std::string>{LOCUS_BINARY, "serve", t.scenario, "--config", t.dir + "/serve.toml", "--zookeeper",
                               target, "--ready-file", t.dir + "/ready"},
      t.dir + "/serve.log");
  const std::vector<std::string> where =
      verbs::testing::wait_for_lines(t.dir + "/ready", kServers, 240'000, t.server.get());
  BOOST_REQUIRE_MESSAGE(where.size() == kServers, "locus serve did not start (" << t.server->ending() << "):\n"
                                                                                << t.server->output());
  // The client's cluster file: ZooKeeper only.
  t.config_path = t.dir + "/client.toml";
  verbs::testing::write_file(t.config_path, "[zookeeper]\nconnect = \"" + target + "\"\n");
  auto run = verbs::testing::start_run(t, "zk", {});
  verbs::testing::finish_run(t, *run, "zk", 400'000);

  auto observer = zookeeper::ZooKeeperMembership::connect({.target = {zk->address(), "/verbs"}});
  BOOST_REQUIRE_MESSAGE(observer.is_ok(), observer.status().to_string());
  auto members = (*observer)->members();
  BOOST_REQUIRE(members.is_ok());
  BOOST_REQUIRE_EQUAL(members->size(), kServers);
  for (size_t k = 0; k < kServers; ++k) BOOST_TEST((*members)[k].address == where[k]);
  auto map = membership::read_region_map(**observer);
  BOOST_REQUIRE(map.is_ok());
  BOOST_TEST(map->regions.size() == 2 * kServers);
  BOOST_TEST(map->regions.at(3) == "server-1");

  verbs::testing::stop_served_index(t, 60'000);
  auto after = (*observer)->members();
  BOOST_REQUIRE(after.is_ok());
  BOOST_TEST(after->empty(), "serving stopped but servers are still announced");
}

}  // namespace
