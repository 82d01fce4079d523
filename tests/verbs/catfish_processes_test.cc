// Catfish on verbs with the R-tree server and its clients in separate
// processes: `locus serve` of tests/verbs/scenarios/catfish.toml as a
// child process (two event-driven messaging workers on cluster entries 0
// and 1, so requests and responses wake their receivers with
// WRITE_WITH_IMM, and the connect RPC on entry 2), clients in this process
// connecting over the connect RPC and checking searches on both paths
// (fast messaging and offloaded READs) against the rectangles the server
// loaded for its seed (catfish::loaded_rectangle, the oracle), inserts
// found by both paths, deletes; two clients of separate runtimes claiming
// the same node id at once (the server renames one, and its workers must
// write to it under that name); then `locus run --backend verbs` child
// processes of the same scenario under the server-only, client-only and
// back-off selectors (--set selector.type=...), and the server stopping
// cleanly on SIGTERM. The same with polling workers and JSQ. Small runs:
// under Soft-RoCE in an emulated guest a READ takes ~100 us.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/verbs/verbs_runtime.h"
#include "core/index/catfish/catfish_client.h"
#include "core/index/catfish/load.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector_config.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/support/rtree_oracle.h"
#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;
using catfish::Hit;
using catfish::Rect;
using locus::testing::FailureLog;
using locus::testing::sorted_ids;
using locus::catfish::loaded_rectangle;
using locus::verbs::testing::figure;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("catfish_processes_verbs_test");
  return true;
}();

// catfish.toml's: index.rectangles, run.seed, platform.cores_per_server.
constexpr uint64_t kRectangles = 3000;
constexpr uint64_t kSeed = 11;
constexpr uint32_t kWorkers = 2;
// Entries 0..kWorkers-1 are the messaging workers, then the connect RPC.
constexpr NodeId kConnectNode = kWorkers;
constexpr size_t kEndpoints = kWorkers + 1;
// The server's largest answer (Catfish's driver's: 6,500 hits); a client
// must take as much.
constexpr uint32_t kMaxResponseBytes = 256 * 1024;

verbs::testing::ServedIndex start_tree(const std::string& name, const std::string& server_mode = "event") {
  return verbs::testing::start_served_index(name, verbs::testing::scenario_path("catfish.toml"),
                                            {"index.server_mode=" + server_mode}, kEndpoints);
}

// SIGTERM, then the server's own account: a clean stop, exactly
// `connects` connect RPCs (one per client: none refused and retried, none
// rejected), no connection dropped, the loaded rectangles still there.
void stop_cleanly(verbs::testing::ServedIndex& t, int connects) {
  const auto figures = verbs::testing::stop_served_index(t, 60'000);
  const std::string out = t.server->output();
  BOOST_TEST(figure(figures, "rpc_requests") == connects, out);
  BOOST_TEST(figure(figures, "rpc_rejected") == 0, out);
  BOOST_TEST(figure(figures, "catfish.dropped_connections") == 0, out);
  BOOST_TEST(figure(figures, "catfish.rectangles") >= kRectangles, out);
  BOOST_TEST(figure(figures, "catfish.server_searches") > 0, out);
}

// The clients of the scenario in another process under selector `sel`;
// checks the selector's share of server-side searches where it is fixed.
void run_selector(const verbs::testing::ServedIndex& t, const std::string& sel) {
  auto b = verbs::testing::start_run(t, sel, {"selector.type=" + sel});
  const verbs::testing::RunResults r = verbs::testing::finish_run(t, *b, sel, 400'000);
  BOOST_TEST(r.index == "catfish");
  const double share = r.extra_or("server_share", -1);
  if (sel == "server_only") BOOST_TEST(share == 1.0, sel << ":\n" << b->output());
  if (sel == "client_only") BOOST_TEST(share == 0.0, sel << ":\n" << b->output());
  if (sel != "server_only" && sel != "client_only") BOOST_TEST((share >= 0.0 && share <= 1.0), sel << ":\n" << b->output());
}

bool intersects(const Rect& a, const Rect& b) {
  return a.x_min <= b.x_max && b.x_min <= a.x_max && a.y_min <= b.y_max && b.y_min <= a.y_max;
}

// The ids of the loaded rectangles that `q` intersects (what the server
// loaded for kSeed), sorted.
std::vector<uint64_t> loaded_ids_in(const Rect& q) {
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < kRectangles; ++id) {
    if (intersects(loaded_rectangle(kSeed, id), q)) ids.push_back(id);
  }
  return ids;
}


// A client of a fresh client-only runtime, connected over the connect RPC
// (kConnectNode), running fn in its actor.
using ClientBody = std::function<void(catfish::CatfishClient&, Env&)>;
void with_client(const verbs::ClusterConfig& config, selector::SelectorKind kind, const ClientBody& fn,
                 FailureLog& failures) {
  // Runs on test threads too: failures go to the log, not to Boost.Test.
  auto runtime = verbs::make_verbs_runtime(config);
  auto node = runtime->add_node({"client0", false});
  if (!node.is_ok()) return failures.fail("client node: " + node.status().to_string());
  Status spawned = runtime->spawn(*node, "client0", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env, 20 * kSecond);
    auto rpc = rpc::RpcClient::create(ep);
    if (!rpc.is_ok()) return failures.fail("rpc client: " + rpc.status().to_string());
    selector::SelectorConfig sc;
    sc.kind = kind;
    auto sel = selector::make_selector(sc, *env.random);
    if (!sel.is_ok()) return failures.fail("selector: " + sel.status().to_string());
    catfish::CatfishClientOptions options;
    options.messaging.max_response_bytes = kMaxResponseBytes;
    auto client = catfish::CatfishClient::connect(ep, **rpc, kConnectNode, **sel, options);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    fn(**client, env);
  });
  if (!spawned.is_ok()) return failures.fail("spawn: " + spawned.to_string());
  if (Status ran = runtime->run(); !ran.is_ok()) failures.fail("run: " + ran.to_string());
}

// Queries around loaded rectangles: both paths give the same, non-empty
// answer, which is the loaded rectangles it intersects.
void check_searches(catfish::CatfishClient& c, const std::string& tag, uint64_t first, FailureLog& failures) {
  std::vector<Hit> by_server, by_client;
  for (uint64_t k = 0; k < 8; ++k) {
    const Rect r = loaded_rectangle(kSeed, (first + k * 373) % kRectangles);
    const double pad = k % 2 == 0 ? 0.01 : 0.03;
    const Rect q{r.x_min - pad, r.y_min - pad, r.x_max + pad, r.y_max + pad};
    Status s1 = c.search_by(selector::Path::kServer, q, &by_server);
    Status s2 = c.search_by(selector::Path::kClient, q, &by_client);
    if (!s1.is_ok() || !s2.is_ok()) return failures.fail(tag + " search: " + s1.to_string() + " / " + s2.to_string());
    const std::vector<uint64_t> want = loaded_ids_in(q);
    if (by_server.empty()) return failures.fail(tag + ": a search around a loaded rectangle found nothing");
    if (sorted_ids(by_server) != sorted_ids(by_client)) return failures.fail(tag + ": the two paths differ");
    if (sorted_ids(by_server) != want) return failures.fail(tag + ": the answer is not the loaded rectangles");
  }
}

// Inserts found by both paths, then deleted (the tree is as loaded again).
void check_writes(catfish::CatfishClient& c, const std::string& tag, double at, FailureLog& failures) {
  const Rect mine{at, at, at + 1e-4, at + 1e-4};
  const uint64_t id = uint64_t{1} << 48 | static_cast<uint64_t>(at * 1e6);
  for (uint64_t k = 0; k < 2; ++k) {
    if (Status s = c.insert(mine, id + k); !s.is_ok()) return failures.fail(tag + " insert: " + s.to_string());
  }
  std::vector<Hit> hits;
  for (selector::Path p : {selector::Path::kServer, selector::Path::kClient}) {
    if (Status s = c.search_by(p, mine, &hits); !s.is_ok()) return failures.fail(tag + " search: " + s.to_string());
    const std::vector<uint64_t> ids = sorted_ids(hits);
    if (std::count(ids.begin(), ids.end(), id) != 1 || std::count(ids.begin(), ids.end(), id + 1) != 1) {
      failures.fail(tag + ": an inserted rectangle is missing");
    }
  }
  if (Status s = c.remove(mine, id); !s.is_ok()) return failures.fail(tag + " remove: " + s.to_string());
  if (c.remove(mine, id).code() != StatusCode::kNotFound) failures.fail(tag + ": a deleted rectangle was deleted again");
  if (Status s = c.search_by(selector::Path::kClient, mine, &hits); !s.is_ok()) {
    return failures.fail(tag + " search: " + s.to_string());
  }
  const std::vector<uint64_t> ids = sorted_ids(hits);
  if (std::count(ids.begin(), ids.end(), id) != 0 || std::count(ids.begin(), ids.end(), id + 1) != 1) {
    failures.fail(tag + ": the delete did not take effect");
  }
  if (Status s = c.remove(mine, id + 1); !s.is_ok()) failures.fail(tag + " remove: " + s.to_string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(catfish_processes)

BOOST_AUTO_TEST_CASE(searches_inserts_and_deletes_on_both_paths_across_processes) {
  verbs::testing::ServedIndex t = start_tree("catfish_e2e");
  FailureLog failures;
  with_client(t.config, selector::SelectorKind::kBackoff, [&](catfish::CatfishClient& c, Env&) {
    check_searches(c, "backoff client", 1, failures);
    check_writes(c, "backoff client", 0.5, failures);
    // The selector's own choice (heartbeats arrive from the worker).
    std::vector<Hit> hits;
    const Rect r = loaded_rectangle(kSeed, 7);
    for (int i = 0; i < 4; ++i) {
      if (Status s = c.search(r, &hits); !s.is_ok() || hits.empty()) failures.fail("selected search: " + s.to_string());
    }
    if (c.stats().server_searches == 0 || c.stats().client_searches == 0) failures.fail("a path was not taken");
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  // Two clients of separate runtimes claim the same node id (each runtime
  // numbers its clients after the servers), the second while the first is
  // connected: the server renames it, and it lands on the other worker.
  std::atomic<int> phase{0};
  auto run = [&](int me, double at) {
    with_client(t.config, selector::SelectorKind::kServerOnly, [&, me, at](catfish::CatfishClient& c, Env& env) {
      const Nanos deadline = env.clock->now() + 60 * kSecond;
      while (phase.load() != me && env.clock->now() < deadline) env.clock->sleep_for(5 * kMillisecond);
      check_searches(c, "twin " + std::to_string(me), 100 + me, failures);
      check_writes(c, "twin " + std::to_string(me), at, failures);
      phase.fetch_add(1);
      while (phase.load() < 2 && env.clock->now() < deadline) env.clock->sleep_for(5 * kMillisecond);
    }, failures);
  };
  std::thread first([&] { run(0, 0.25); });
  std::thread second([&] { run(1, 0.75); });
  first.join();
  second.join();
  BOOST_TEST(phase.load() == 2);
  BOOST_TEST(failures.empty(), failures.first());
  BOOST_TEST(t.server->output().find("it claimed") != std::string::npos,
             "no client was renamed:\n" << t.server->output());

  for (const char* sel : {"server_only", "client_only", "backoff"}) run_selector(t, sel);
  // One in-process client, the two twins, two clients per run.
  stop_cleanly(t, 1 + 2 + 3 * 2);
}

// The polling server mode (workers scan their rings instead of sleeping
// until a WRITE_WITH_IMM), with the JSQ selector choosing the path.
BOOST_AUTO_TEST_CASE(polling_workers_and_the_jsq_selector_across_processes) {
  verbs::testing::ServedIndex t = start_tree("catfish_polling", "polling");
  FailureLog failures;
  with_client(t.config, selector::SelectorKind::kJsq, [&](catfish::CatfishClient& c, Env&) {
    check_searches(c, "jsq client", 5, failures);
    check_writes(c, "jsq client", 0.4, failures);
    std::vector<Hit> hits;
    const Rect r = loaded_rectangle(kSeed, 11);
    for (int i = 0; i < 20; ++i) {
      if (Status s = c.search(r, &hits); !s.is_ok() || hits.empty()) failures.fail("selected search: " + s.to_string());
    }
    if (c.stats().server_searches + c.stats().client_searches < 20) failures.fail("searches went uncounted");
  }, failures);
  BOOST_TEST(failures.empty(), failures.first());

  run_selector(t, "jsq");
  stop_cleanly(t, 1 + 2);
}

BOOST_AUTO_TEST_SUITE_END()
