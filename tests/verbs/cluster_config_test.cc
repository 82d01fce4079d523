// Cluster file parsing: every mistake is reported with the file, the line
// and the key, so a cluster that does not come up says where its file is
// wrong. Needs no RDMA device (runs in plain ctest).
#include "backends/verbs/cluster_config.h"

#include <boost/test/unit_test.hpp>

namespace {

using locus::verbs::parse_cluster_config;

// The error message for `text`, or "" if it parsed.
std::string error_of(const std::string& text) {
  auto c = parse_cluster_config(text, "cluster.toml");
  return c.is_ok() ? "" : c.status().message();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_config)

BOOST_AUTO_TEST_CASE(servers_in_order_and_tuning) {
  auto c = parse_cluster_config(R"(
[[server]]
address = "10.0.0.1"
port = 7471

[[server]]
address = "fe80::1"
port = 7472

[verbs]
rnr_retry_count = 3
min_rnr_timer = 14
max_send_wr = 64
)",
                                "cluster.toml");
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  BOOST_TEST(c->servers.size() == 2u);
  BOOST_TEST(c->servers[0].address == "10.0.0.1");
  BOOST_TEST(c->servers[1].port == 7472);
  BOOST_TEST(c->servers[1].to_string() == "[fe80::1]:7472");
  BOOST_TEST(c->verbs.rnr_retry_count == 3);
  BOOST_TEST(c->verbs.max_send_wr == 64u);
  BOOST_TEST(c->verbs.retry_count == 7);  // default kept
  // 3 retries of 1.28 ms.
  BOOST_TEST(c->verbs.rnr_retry_budget() == 3'840'000);
}

BOOST_AUTO_TEST_CASE(errors_name_file_line_and_key) {
  BOOST_TEST(error_of("[[server]]\naddress = \"a\"\nport = 70000\n") ==
             "cluster.toml:3: server[0].port: must be in [0, 65535], got 70000");
  BOOST_TEST(error_of("[[server]]\naddress = \"a\"\nport = 1\n\n[[server]]\nadress = \"b\"\n") ==
             "cluster.toml:6: server[1].adress: unknown key");
  BOOST_TEST(error_of("[[server]]\nport = 1\n") == "cluster.toml:1: server[0].address: missing (required)");
  BOOST_TEST(error_of("[[server]]\naddress = 5\nport = 1\n") == "cluster.toml:2: server[0].address: must be a string");
  BOOST_TEST(error_of("[[server]]\naddress = \"a\"\nport = 1\n[verbs]\nrnr_retry_count = 7\n") ==
             "cluster.toml:5: verbs.rnr_retry_count: must be in [0, 6], got 7");
  BOOST_TEST(error_of("[verbs]\nretry_count = 1\n").find("server: missing") != std::string::npos);
  BOOST_TEST(error_of("[[server]]\naddress = \"a\"\nport = 1\n[other]\n") == "cluster.toml:4: other: unknown key");
  // TOML syntax errors keep toml++'s description and the line.
  BOOST_TEST(error_of("[[server]]\naddress = \"a\nport = 1\n").rfind("cluster.toml:2: ", 0) == 0);
}

// Issue 17: these were accepted, and failed only when a client connected.
BOOST_AUTO_TEST_CASE(duplicate_servers_bad_addresses_and_port_zero) {
  BOOST_TEST(
      error_of("[[server]]\naddress = \"10.0.0.1\"\nport = 7471\n[[server]]\naddress = \"10.0.0.1\"\nport = 7471\n") ==
      "cluster.toml:5: server[1]: the same address and port as server[0] (10.0.0.1:7471)");
  BOOST_TEST(
      error_of("[[server]]\naddress = \"10.0.0.1\"\nport = 7471\n[[server]]\naddress = \"10.0.0.1\"\nport = 7472\n") ==
      "");
  for (const char* bad : {"10.0.0.1 ", "host name", "-host", "host-", "a..b", "10.0.0.1:7471", "[fe80::1]"}) {
    const std::string e = error_of(std::string("[[server]]\naddress = \"") + bad + "\"\nport = 1\n");
    BOOST_TEST(e.find("server[0].address: '" + std::string(bad) +
                      "' is neither an IPv4 or IPv6 address nor a host name") != std::string::npos,
               e);
  }
  for (const char* good : {"10.0.0.1", "fe80::1", "node-7.cluster.example", "localhost"}) {
    BOOST_TEST(error_of(std::string("[[server]]\naddress = \"") + good + "\"\nport = 1\n") == "", good);
  }
  // Port 0 (any free port) serves, but nobody can connect to it.
  auto c = parse_cluster_config("[[server]]\naddress = \"10.0.0.1\"\nport = 0\n", "cluster.toml");
  BOOST_REQUIRE(c.is_ok());
  const locus::Status st = locus::verbs::check_connectable(*c);
  BOOST_TEST(
      st.message().rfind("cluster.toml: server[0].port: 0 (any free port) is for the serving process only", 0) == 0,
      st.message());
}

// [zookeeper] lets a client's file leave [[server]] out; the address is
// checked where it is written.
BOOST_AUTO_TEST_CASE(zookeeper_instead_of_servers) {
  auto c = parse_cluster_config("[zookeeper]\nconnect = \"10.0.0.5:2181/locus\"\n", "cluster.toml");
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  BOOST_TEST(c->zookeeper == "10.0.0.5:2181/locus");
  BOOST_TEST(c->servers.empty());
  const std::string bad = error_of("[zookeeper]\nconnect = \"10.0.0.5/locus\"\n");
  BOOST_TEST(bad.find("cluster.toml:2: zookeeper.connect:") != std::string::npos, bad);
  BOOST_TEST(bad.find("has no :PORT") != std::string::npos, bad);
  BOOST_TEST(error_of("[zookeeper]\nconnekt = \"z:1\"\n").find("zookeeper.connekt: unknown key") != std::string::npos);
  BOOST_TEST(error_of("").find("or name ZooKeeper in [zookeeper] connect") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(missing_file) {
  auto c = locus::verbs::load_cluster_config("/nonexistent/cluster.toml");
  BOOST_TEST(!c.is_ok());
  BOOST_TEST(c.status().message() == "/nonexistent/cluster.toml: cannot open the cluster file");
}

// config/cluster-example.toml shows every [verbs] key at its default: it
// loads, and each value is what VerbsTuning starts with.
BOOST_AUTO_TEST_CASE(the_example_file_shows_the_defaults) {
  auto c = locus::verbs::load_cluster_config(LOCUS_SOURCE_DIR "/config/cluster-example.toml");
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  const locus::verbs::VerbsTuning d;
  const locus::verbs::VerbsTuning& e = c->verbs;
  BOOST_TEST(e.ack_timeout == d.ack_timeout);
  BOOST_TEST(e.retry_count == d.retry_count);
  BOOST_TEST(e.rnr_retry_count == d.rnr_retry_count);
  BOOST_TEST(e.min_rnr_timer == d.min_rnr_timer);
  BOOST_TEST(e.max_rd_atomic == d.max_rd_atomic);
  BOOST_TEST(e.connect_timeout_ms == d.connect_timeout_ms);
  BOOST_TEST(e.reconnect_holddown_ms == d.reconnect_holddown_ms);
  BOOST_TEST(e.max_send_wr == d.max_send_wr);
  BOOST_TEST(e.max_recv_wr == d.max_recv_wr);
  BOOST_TEST(e.max_message_bytes == d.max_message_bytes);
  BOOST_TEST(e.poll_spin_us == d.poll_spin_us);
  BOOST_TEST(e.max_connections == d.max_connections);
}

BOOST_AUTO_TEST_CASE(max_connections_is_read_and_bounded) {
  auto c = parse_cluster_config("[[server]]\naddress = \"10.0.0.1\"\nport = 1\n[verbs]\nmax_connections = 6\n",
                                "cluster.toml");
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  BOOST_TEST(c->verbs.max_connections == 6u);
  const std::string e = error_of("[[server]]\naddress = \"10.0.0.1\"\nport = 1\n[verbs]\nmax_connections = 0\n");
  BOOST_TEST(e.find("cluster.toml:5") != std::string::npos, e);
  BOOST_TEST(e.find("verbs.max_connections") != std::string::npos, e);
}

BOOST_AUTO_TEST_SUITE_END()
