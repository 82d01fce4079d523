// Pilaf on verbs with the server and its clients in separate processes:
// `locus serve` as a child process, clients both in this process (to check
// values and error codes) and as `locus bench` child processes. Covers the
// cluster commands end to end, an out-of-bounds READ that must fail with a
// remote access error while the server keeps serving, a client killed
// mid-run that must not disturb the others, and the errors a client gets
// when its server is unreachable or dies. Small operation counts: under
// Soft-RoCE in an emulated guest a READ takes ~100 us.
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "backends/verbs/verbs_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/index/pilaf/client.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/verbs/child_process.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;
using locus::testing::FailureLog;
using locus::verbs::testing::ChildProcess;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("pilaf_processes_verbs_test");
  return true;
}();

constexpr uint64_t kRecords = 200;

// A `locus serve` child on a free port, and the cluster file clients use.
struct ServedCluster {
  std::string dir;
  std::unique_ptr<ChildProcess> server;
  std::string config_path;
  verbs::ClusterConfig config;
};

std::string cluster_toml(const std::string& address, const std::string& port) {
  return "[[server]]\naddress = \"" + address + "\"\nport = " + port + "\n\n[verbs]\nconnect_timeout_ms = 10000\n";
}

ServedCluster start_server(const std::string& name) {
  ServedCluster c;
  c.dir = verbs::testing::make_temp_dir(name);
  const std::string address = verbs::testing::local_address();
  verbs::testing::write_file(c.dir + "/serve.toml", cluster_toml(address, "0"));
  c.server = std::make_unique<ChildProcess>(
      std::vector<std::string>{LOCUS_BINARY, "serve", "--config", c.dir + "/serve.toml", "--node", "0", "--records",
                               std::to_string(kRecords), "--workload", "c", "--ready-file", c.dir + "/ready"},
      c.dir + "/serve.log");
  const std::string where = verbs::testing::wait_for_file(c.dir + "/ready", 60'000);
  BOOST_REQUIRE_MESSAGE(!where.empty(), "locus serve did not start:\n" << c.server->output());
  c.config_path = c.dir + "/cluster.toml";
  verbs::testing::write_file(c.config_path, cluster_toml(address, where.substr(where.rfind(':') + 1)));
  auto config = verbs::load_cluster_config(c.config_path);
  BOOST_REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
  c.config = *config;
  return c;
}

std::string loaded_key(uint64_t keynum) { return verbs::testing::loaded_key('c', kRecords, keynum); }

// Runs fn as one client actor of a fresh client-only runtime.
void run_client(const verbs::ClusterConfig& config, const std::function<void(Endpoint&, rpc::RpcClient&)>& fn,
                FailureLog& failures) {
  auto runtime = verbs::make_verbs_runtime(config);
  auto node = runtime->add_node({"client0", false});
  BOOST_REQUIRE_MESSAGE(node.is_ok(), node.status().to_string());
  BOOST_REQUIRE(runtime->spawn(*node, "client0", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env, 20 * kSecond);
    auto rpc = rpc::RpcClient::create(ep);
    if (!rpc.is_ok()) return failures.fail("rpc client: " + rpc.status().to_string());
    fn(ep, **rpc);
  }).is_ok());
  BOOST_REQUIRE(runtime->run().is_ok());
}

ChildProcess bench(const ServedCluster& c, const std::string& ops, const std::string& mode, const std::string& log) {
  return ChildProcess({LOCUS_BINARY, "bench", "--backend", "verbs", "--config", c.config_path, "--records",
                       std::to_string(kRecords), "--workload", "c", "--ops", ops, "--clients", "2", "--mode", mode},
                      c.dir + "/" + log);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pilaf_processes)

BOOST_AUTO_TEST_CASE(gets_and_puts_across_processes) {
  ServedCluster c = start_server("pilaf_e2e");
  FailureLog failures;
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    for (pilaf::GetMode mode : {pilaf::GetMode::kRdma, pilaf::GetMode::kVerbsOnly}) {
      auto client = pilaf::PilafClient::connect(ep, rpc, 0, {.mode = mode});
      if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
      if (Status s = (*client)->put("locus-key", "value-1"); !s.is_ok()) return failures.fail("put: " + s.to_string());
      auto got = (*client)->get("locus-key");
      if (!got.is_ok() || *got != "value-1") failures.fail("get of a put key: " + got.status().to_string());
      if (!(*client)->get(loaded_key(7)).is_ok()) failures.fail("get of a loaded key failed");
      auto absent = (*client)->contains("no-such-key");
      if (!absent.is_ok() || *absent) failures.fail("contains of an absent key: " + absent.status().to_string());
    }
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  // Enough puts to grow the server's table: it registers new memory and
  // deregisters the old, so a client holding the old layout gets a remote
  // access error (its connection breaks), reconnects and re-fetches it.
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    auto client = pilaf::PilafClient::connect(ep, rpc, 0);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    for (int i = 0; i < 1000; ++i) {
      if (Status s = (*client)->put("grow-" + std::to_string(i), "v" + std::to_string(i)); !s.is_ok()) {
        return failures.fail("put " + std::to_string(i) + ": " + s.to_string());
      }
    }
    auto got = (*client)->get("grow-5");
    if (!got.is_ok() || *got != "v5") failures.fail("get after the table grew: " + got.status().to_string());
    if ((*client)->stats().layout_refreshes < 2) failures.fail("the table did not grow (no layout refresh)");
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  ChildProcess b = bench(c, "200", "both", "bench.log");
  const int bench_end = b.wait(180'000);  // before the message reads ending()
  BOOST_TEST(bench_end == 0, "locus bench: " << b.ending() << ":\n" << b.output());
  BOOST_TEST(b.output().find("gets/s RDMA over VO") != std::string::npos, b.output());
  BOOST_TEST(c.server->running(), "the server exited:\n" << c.server->output());
  c.server->kill(SIGTERM);
  const int server_end = c.server->wait(30'000);  // before the message reads ending()
  BOOST_TEST(server_end == 0, "locus serve: " << c.server->ending() << ":\n" << c.server->output());
  BOOST_TEST(c.server->output().find("requests served") != std::string::npos, c.server->output());
}

BOOST_AUTO_TEST_CASE(out_of_bounds_read_fails_and_server_survives) {
  ServedCluster c = start_server("pilaf_oob");
  FailureLog failures;
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    auto client = pilaf::PilafClient::connect(ep, rpc, 0);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    AlignedBuffer buf(64);
    auto local = ep.transport().register_memory(buf.data(), buf.size(), kLocalOnly);
    if (!local.is_ok()) return failures.fail("register: " + local.status().to_string());
    const RemoteRegion table = (*client)->layout().table;
    WorkRequest wr;
    wr.wr_id = ep.next_wr_id();
    wr.op = Opcode::kRead;
    wr.remote = remote_at(table, table.length - 4);  // 8 bytes across the end
    wr.local = {buf.data(), 8, local->lkey};
    const Status s = ep.execute(wr);
    if (s.code() != StatusCode::kRemoteAccessError) failures.fail("out-of-bounds READ: " + s.to_string());
    if (s.message().find("READ") == std::string::npos || s.message().find("node 0") == std::string::npos) {
      failures.fail("the error does not name the operation and peer: " + s.to_string());
    }
    // The connection broke with the error; the next request reconnects.
    auto got = (*client)->get(loaded_key(3));
    if (!got.is_ok()) failures.fail("get after the failed READ: " + got.status().to_string());
    (void)ep.transport().deregister_memory(*local);
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());
  BOOST_TEST(c.server->running(), "the server exited:\n" << c.server->output());
  ChildProcess b = bench(c, "100", "rdma", "bench.log");
  const int bench_end = b.wait(120'000);  // before the message reads ending()
  BOOST_TEST(bench_end == 0, "locus bench after the bad READ: " << b.ending() << ":\n" << b.output());
}

BOOST_AUTO_TEST_CASE(killed_client_does_not_disturb_others) {
  ServedCluster c = start_server("pilaf_kill");
  ChildProcess victim = bench(c, "100000000", "both", "victim.log");
  // Let it connect and get going, then kill it mid-run.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (c.server->output().find("accepted") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  BOOST_REQUIRE_MESSAGE(victim.running(), "the victim ended early:\n" << victim.output());
  victim.kill(SIGKILL);
  BOOST_TEST(victim.wait(10'000) == 128 + SIGKILL);

  ChildProcess survivor = bench(c, "100", "both", "survivor.log");
  const int survivor_end = survivor.wait(180'000);  // before the message reads ending()
  BOOST_TEST(survivor_end == 0, "locus bench after a client was killed: " << survivor.ending() << ":\n" << survivor.output());
  FailureLog failures;
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    auto client = pilaf::PilafClient::connect(ep, rpc, 0);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    for (uint64_t k = 0; k < 20; ++k) {
      if (!(*client)->get(loaded_key(k)).is_ok()) return failures.fail("get " + std::to_string(k));
    }
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());
  BOOST_TEST(c.server->running(), "the server exited:\n" << c.server->output());
  BOOST_TEST(c.server->output().find("disconnected") != std::string::npos, c.server->output());
}

BOOST_AUTO_TEST_CASE(unreachable_or_dead_server_is_a_clear_error) {
  ServedCluster c = start_server("pilaf_dead");
  FailureLog failures;
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    auto client = pilaf::PilafClient::connect(ep, rpc, 0);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    if (!(*client)->get(loaded_key(1)).is_ok()) return failures.fail("get before the server died");
    c.server->kill(SIGKILL);
    c.server->wait(10'000);
    const auto t0 = std::chrono::steady_clock::now();
    auto got = (*client)->get(loaded_key(2));
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (got.is_ok()) failures.fail("get from a dead server succeeded");
    if (seconds > 30) failures.fail("the error took " + std::to_string(seconds) + " s");
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  // Nothing listens there any more: connecting fails at once, with a status.
  FailureLog unreachable;
  run_client(c.config, [&](Endpoint& ep, rpc::RpcClient& rpc) {
    auto client = pilaf::PilafClient::connect(ep, rpc, 0);
    if (client.is_ok()) return unreachable.fail("connected to a server that is gone");
    if (client.status().code() != StatusCode::kRetryExceeded) unreachable.fail(client.status().to_string());
  }, unreachable);
  BOOST_TEST(unreachable.empty(), unreachable.first());
}

BOOST_AUTO_TEST_SUITE_END()
