// `locus serve --zookeeper` and a client's cluster file naming ZooKeeper
// only, without an RDMA device: the command line's announce and resolve
// steps (apps/locus/zookeeper_cluster.h) against a real ZooKeeper server.
// Servers announced are found in NodeId order, a client waiting before
// they are announced gets them once they are, Cell's region map and root
// pointer's home are published, and after a takeover a client resolves the
// dead server's regions to the survivor. The same across real `locus`
// processes on Soft-RoCE: zookeeper_processes_verbs_test.
#include "apps/locus/zookeeper_cluster.h"

#include <boost/test/unit_test.hpp>
#include <thread>

#include "core/membership/region_resolver.h"
#include "tests/support/zookeeper_server.h"

namespace locus::cli {
namespace {

testing::ZooKeeperServer& server() {
  static std::unique_ptr<testing::ZooKeeperServer> s =
      testing::ZooKeeperServer::start_or_skip("zookeeper_cluster_test");
  return *s;
}

BOOST_AUTO_TEST_CASE(addresses_parse_back) {
  auto v4 = parse_server_address("10.0.0.1:7471");
  BOOST_REQUIRE(v4.is_ok());
  BOOST_TEST(v4->to_string() == "10.0.0.1:7471");
  auto v6 = parse_server_address("[fe80::1]:7472");
  BOOST_REQUIRE(v6.is_ok());
  BOOST_TEST(v6->address == "fe80::1");
  for (const char* bad : {"10.0.0.1", ":1", "10.0.0.1:0", "10.0.0.1:x", "[fe80::1:7", "a b:1"}) {
    BOOST_TEST(!parse_server_address(bad).is_ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(a_client_finds_the_servers_announced) {
  const std::string target = server().address() + "/announce";
  verbs::ClusterConfig client;
  client.source = "client.toml";
  client.zookeeper = target;
  // The client starts first and waits for the announcement.
  Status resolved;
  std::thread waiting([&] { resolved = resolve_cluster(&client, 20'000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto serving = announce_servers(target, {"10.0.0.1:7471", "10.0.0.2:7471", "[fe80::3]:7471"});
  BOOST_REQUIRE_MESSAGE(serving.is_ok(), serving.status().to_string());
  waiting.join();
  BOOST_REQUIRE_MESSAGE(resolved.is_ok(), resolved.to_string());
  BOOST_REQUIRE_EQUAL(client.servers.size(), 3u);
  BOOST_TEST(client.servers[0].to_string() == "10.0.0.1:7471");
  BOOST_TEST(client.servers[2].to_string() == "[fe80::3]:7471");
  // A file that lists servers is left alone.
  verbs::ClusterConfig static_file = client;
  static_file.servers = {{"10.0.0.9", 1}};
  BOOST_TEST(resolve_cluster(&static_file, 1000).is_ok());
  BOOST_TEST(static_file.servers.size() == 1u);
  // Serving stops: the servers are gone, a new client says which are missing.
  serving->reset();
  verbs::ClusterConfig late = client;
  late.servers.clear();
  const Status none = resolve_cluster(&late, 300);
  BOOST_TEST(none.code() == StatusCode::kUnavailable, none.to_string());
  BOOST_TEST(none.message().find("server-0, server-1, server-2") != std::string::npos, none.to_string());
}

BOOST_AUTO_TEST_CASE(cell_layout_is_published_and_a_takeover_moves_clients) {
  const std::string target = server().address() + "/cell";
  auto serving = announce_servers(target, {"10.0.0.1:7471", "10.0.0.2:7471"});
  BOOST_REQUIRE_MESSAGE(serving.is_ok(), serving.status().to_string());
  BOOST_REQUIRE(publish_cell_layout(**serving, cell_region_map(2)).is_ok());
  BOOST_REQUIRE(publish_cell_layout(**serving, cell_region_map(2)).is_ok());  // a restarted serve rewrites it
  auto client = zookeeper::ZooKeeperMembership::connect({.target = {server().address(), "/cell"}});
  BOOST_REQUIRE(client.is_ok());
  BOOST_TEST((*client)->get(membership::kRootPointerKey)->value == "0:0");
  membership::RegionResolver resolver(**client);
  BOOST_TEST(resolver.resolve(0)->member == "server-0");  // the superblock
  BOOST_TEST(resolver.resolve(3)->address == "10.0.0.2:7471");
  // server-1 stops answering and server-0 takes its regions over.
  auto taken = membership::take_over(**serving, "server-1", {"server-0"});
  BOOST_REQUIRE(taken.is_ok());
  auto owner = resolver.resolve(3);
  if (owner.is_ok() && owner->member == "server-1") {  // the watch is not here yet: the server did not answer
    resolver.report_unreachable("server-1");
    owner = resolver.resolve(3);
  }
  BOOST_REQUIRE(owner.is_ok());
  BOOST_TEST(owner->address == "10.0.0.1:7471");
}

}  // namespace
}  // namespace locus::cli
