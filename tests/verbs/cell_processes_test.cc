// Cell on verbs with the tree and its clients in separate processes:
// `locus serve` of tests/verbs/scenarios/cell.toml as a child process
// serving a two-server tree (loaded past its first meganode split, so the
// second server holds part of it and searches cross servers), clients in
// this process checking gets, puts, deletes and ranges on the server-side
// path (RPC steps) and the client-side path (RDMA READs of versioned
// nodes), and `locus run --backend verbs` child processes of the same
// scenario running YCSB E with the server-only, client-only and JSQ
// selectors (--set selector.type=...) while the tree may split further.
// Small runs: under Soft-RoCE in an emulated guest a READ takes ~100 us.
#include <functional>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/verbs/verbs_runtime.h"
#include "core/design/index_driver.h"
#include "core/index/cell/client.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector_config.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;
using locus::testing::FailureLog;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("cell_processes_verbs_test");
  return true;
}();

// cell.toml's: 2 MB meganodes of 1 KB nodes ask for a split at ~1200
// nodes, ~12 K YCSB records; the first split places the new meganode on
// the other server. Workload E.
constexpr uint64_t kRecords = 16'000;
constexpr size_t kServers = 2;
// The servers' RPC message limit: Cell's driver sizes it for records of
// index.max_kv_bytes (16 KB by default), as the clients of `locus run` do.
const uint32_t kMaxMessageBytes = design::IndexDriver::rpc_message_bytes_for(16 * 1024);

verbs::testing::ServedIndex start_tree(const std::string& name) {
  return verbs::testing::start_served_index(name, verbs::testing::scenario_path("cell.toml"), {}, kServers);
}

std::string loaded_key(uint64_t keynum) { return verbs::testing::loaded_key('e', kRecords, keynum); }

struct CountingSink final : cell::RangeSink {
  std::vector<std::string> keys;
  bool accept(std::string_view key, std::string_view) override {
    keys.emplace_back(key);
    return true;
  }
};

// Runs fn with a Cell client of `kind` in one client actor of a fresh
// client-only runtime, bootstrapping from node 0.
void with_client(const verbs::ClusterConfig& config, selector::SelectorKind kind,
                 const std::function<void(cell::CellClient&)>& fn, FailureLog& failures) {
  auto runtime = verbs::make_verbs_runtime(config);
  auto node = runtime->add_node({"client0", false});
  BOOST_REQUIRE_MESSAGE(node.is_ok(), node.status().to_string());
  BOOST_REQUIRE(runtime->spawn(*node, "client0", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env, 20 * kSecond);
    auto rpc = rpc::RpcClient::create(ep, {.max_message_bytes = kMaxMessageBytes});
    if (!rpc.is_ok()) return failures.fail("rpc client: " + rpc.status().to_string());
    selector::SelectorConfig sc;
    sc.kind = kind;
    auto sel = selector::make_selector(sc, *env.random);
    if (!sel.is_ok()) return failures.fail("selector: " + sel.status().to_string());
    auto client = cell::CellClient::connect(ep, **rpc, 0, **sel);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    fn(**client);
  }).is_ok());
  BOOST_REQUIRE(runtime->run().is_ok());
}

// Point operations and a range on whichever path the selector picks.
void exercise(cell::CellClient& c, const std::string& tag, FailureLog& failures) {
  const std::string key = "zz-" + tag;
  if (Status s = c.put(key, "value-" + tag); !s.is_ok()) return failures.fail(tag + " put: " + s.to_string());
  auto got = c.get(key);
  if (!got.is_ok() || *got != "value-" + tag) failures.fail(tag + " get of a put key: " + got.status().to_string());
  for (uint64_t k : {uint64_t{0}, uint64_t{7}, kRecords / 2, kRecords - 1}) {
    if (auto v = c.get(loaded_key(k)); !v.is_ok()) failures.fail(tag + " get " + std::to_string(k) + ": " + v.status().to_string());
  }
  auto absent = c.contains("no-such-key");
  if (!absent.is_ok() || *absent) failures.fail(tag + " contains of an absent key: " + absent.status().to_string());
  // Crosses leaves (and, the keys being hashed, likely both servers' meganodes).
  CountingSink sink;
  auto n = c.range("user", std::nullopt, 60, sink);
  if (!n.is_ok() || *n != 60 || sink.keys.size() != 60) {
    failures.fail(tag + " range: " + n.status().to_string() + ", " + std::to_string(sink.keys.size()) + " keys");
  }
  for (size_t i = 1; i < sink.keys.size(); ++i) {
    if (!(sink.keys[i - 1] < sink.keys[i])) failures.fail(tag + " range keys out of order");
  }
  if (Status s = c.remove(key); !s.is_ok()) failures.fail(tag + " remove: " + s.to_string());
  if (c.get(key).status().code() != StatusCode::kNotFound) failures.fail(tag + " get after remove found it");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_processes)

BOOST_AUTO_TEST_CASE(gets_puts_and_ranges_on_both_paths_across_processes) {
  verbs::testing::ServedIndex t = start_tree("cell_e2e");
  FailureLog failures;
  with_client(t.config, selector::SelectorKind::kServerOnly, [&](cell::CellClient& c) {
    exercise(c, "server", failures);
    if (c.stats().server_steps == 0 || c.stats().client_steps != 0) failures.fail("server-only took RDMA steps");
  }, failures);
  with_client(t.config, selector::SelectorKind::kClientOnly, [&](cell::CellClient& c) {
    exercise(c, "client", failures);
    if (c.stats().client_steps == 0 || c.stats().node_reads == 0) failures.fail("client-only read no nodes");
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  // YCSB E from other processes under each selector, one run at a time;
  // the selector's share of server-side steps shows it was the one asked.
  for (const std::string sel : {"server_only", "client_only", "jsq"}) {
    auto b = verbs::testing::start_run(t, sel, {"selector.type=" + sel});
    const verbs::testing::RunResults r = verbs::testing::finish_run(t, *b, sel, 400'000);
    BOOST_TEST(r.index == "cell");
    BOOST_TEST(r.ops.count("SCAN") == 1u, sel << ": no ranges:\n" << b->output());
    const double share = r.extra_or("server_share", -1);
    if (sel == "server_only") BOOST_TEST(share == 1.0, sel << ":\n" << b->output());
    if (sel == "client_only") BOOST_TEST(share == 0.0, sel << ":\n" << b->output());
    if (sel == "jsq") BOOST_TEST((share >= 0.0 && share <= 1.0), sel << ":\n" << b->output());
  }

  const auto figures = verbs::testing::stop_served_index(t, 60'000);
  using verbs::testing::figure;
  // The load split the first meganode, placing the new one on the other server.
  BOOST_TEST(figure(figures, "cell.meganode_splits_load") >= 1, "the tree did not split:\n" << t.server->output());
  BOOST_TEST(figure(figures, "cell.meganodes") >= 2, t.server->output());
  BOOST_TEST(figure(figures, "cell.split_failures") == 0, t.server->output());
  BOOST_TEST(figure(figures, "rpc_requests") > 0, t.server->output());
  BOOST_TEST(figure(figures, "rpc_rejected") == 0, t.server->output());
  BOOST_TEST(figure(figures, "cell.keys") >= kRecords, t.server->output());
}

BOOST_AUTO_TEST_SUITE_END()
