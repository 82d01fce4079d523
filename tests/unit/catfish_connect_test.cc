// Connecting Catfish clients over RPC, on loopback: the connect RPC's wire
// format (a good request and answer round-trip; every malformed field is
// refused with a message naming it), and a server of a connect node and
// two messaging workers, loaded with the rectangles of a seed (load.h), that refuses malformed and hostile connect
// requests with a clear error, drops a connection that never sends its
// first message, and meanwhile serves clients connected over RPC and
// in-process, whose searches on both paths match Boost.Geometry's R*-tree
// over the same rectangles, and whose inserts and deletes take effect.
#include <boost/test/unit_test.hpp>


#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/index/catfish/catfish_server.h"
#include "core/index/catfish/load.h"
#include "core/rpc/rpc_server.h"
#include "core/index/catfish/catfish_client.h"
#include "core/index/catfish/connect_rpc.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector_config.h"
#include "tests/support/failure_log.h"
#include "tests/support/rtree_oracle.h"

namespace locus::catfish {
namespace {

using testing::sorted_ids;

// ---- the wire format ------------------------------------------------------

ClientInfo good_client() {
  ClientInfo c;
  c.node = 5;
  c.response_ring_bytes = 4096;
  c.response_ring = RemoteRegion{5, 7, 0xABCD, 0x10000, 4096 + kControlBytes};
  return c;
}

ConnectAnswer good_answer() {
  ConnectAnswer a;
  a.connection.server = 2;
  a.connection.connection_id = 9;
  a.connection.mode = ServerMode::kEvent;
  a.connection.awaits_first_message = true;
  a.connection.request_ring_bytes = 8192;
  a.connection.request_ring = RemoteRegion{2, 3, 0x77, 0x20000, 8192 + kControlBytes};
  a.connection.heartbeat_interval_ns = 10 * kMillisecond;
  a.tree = RemoteRegion{1, 1, 0x55, 0x40000, 1 << 20};
  return a;
}

template <typename Put>
std::vector<std::byte> encode(Put put) {
  std::vector<std::byte> buf(256);
  rpc::Writer w(buf);
  put(w);
  buf.resize(w.ok() ? w.size() : 0);  // (actors call this: no Boost.Test assertion here)
  return buf;
}

std::vector<std::byte> client_bytes(const ClientInfo& c) {
  return encode([&](rpc::Writer& w) { put_client_info(c, w); });
}
std::vector<std::byte> answer_bytes(const ConnectAnswer& a) {
  return encode([&](rpc::Writer& w) { put_connect_answer(a, w); });
}

Status decode_client(const std::vector<std::byte>& bytes) {
  rpc::Reader r(bytes);
  return get_client_info(r).status();
}
Status decode_answer(const std::vector<std::byte>& bytes) {
  rpc::Reader r(bytes);
  return get_connect_answer(r).status();
}

void expect_refused(const Status& st, StatusCode code, const std::string& words) {
  BOOST_TEST(st.code() == code, st.to_string());
  BOOST_TEST(st.message().find(words) != std::string::npos, "'" << words << "' not in: " << st.to_string());
}

BOOST_AUTO_TEST_SUITE(catfish_connect)

BOOST_AUTO_TEST_CASE(request_and_answer_round_trip) {
  const std::vector<std::byte> req = client_bytes(good_client());
  rpc::Reader r(req);
  auto c = get_client_info(r);
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  BOOST_TEST(c->node == 5u);
  BOOST_TEST(c->response_ring_bytes == 4096u);
  BOOST_TEST(c->response_ring.rkey == 0xABCDu);
  BOOST_TEST(c->response_ring.base_addr == 0x10000u);

  const std::vector<std::byte> ans = answer_bytes(good_answer());
  rpc::Reader ra(ans);
  auto a = get_connect_answer(ra);
  BOOST_REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
  BOOST_TEST(a->connection.server == 2u);
  BOOST_TEST(a->connection.connection_id == 9u);
  BOOST_TEST((a->connection.mode == ServerMode::kEvent));
  BOOST_TEST(a->connection.awaits_first_message);
  BOOST_TEST(a->connection.request_ring.rkey == 0x77u);
  BOOST_TEST(a->connection.request_ring_bytes == 8192u);
  BOOST_TEST(a->connection.heartbeat_interval_ns == 10 * kMillisecond);
  BOOST_TEST(a->tree.node == 1u);
  BOOST_TEST(a->tree.length == uint64_t{1} << 20);
}

BOOST_AUTO_TEST_CASE(every_malformed_request_field_is_refused_by_name) {
  const StatusCode bad = StatusCode::kInvalidArgument;
  expect_refused(decode_client({}), bad, "truncated before its version");
  std::vector<std::byte> bytes = client_bytes(good_client());
  bytes[0] = std::byte{2};
  expect_refused(decode_client(bytes), bad, "version 2");
  bytes = client_bytes(good_client());
  bytes.pop_back();
  expect_refused(decode_client(bytes), bad, "truncated");
  bytes = client_bytes(good_client());
  bytes.push_back(std::byte{0});
  expect_refused(decode_client(bytes), bad, "trailing bytes");

  auto with = [](const std::function<void(ClientInfo&)>& change) {
    ClientInfo c = good_client();
    change(c);
    return decode_client(client_bytes(c));
  };
  expect_refused(with([](ClientInfo& c) { c.node = c.response_ring.node = kInvalidNode; }), bad, "no client node");
  expect_refused(with([](ClientInfo& c) { c.response_ring.node = 6; }), bad, "response ring on node 6");
  expect_refused(with([](ClientInfo& c) { c.response_ring_bytes = 100; }), bad, "response ring: 100 bytes");
  expect_refused(with([](ClientInfo& c) { c.response_ring_bytes = 0; }), bad, "response ring: 0 bytes");
  expect_refused(with([](ClientInfo& c) { c.response_ring_bytes = 1u << 31; }), bad, "response ring: 2147483648");
  expect_refused(with([](ClientInfo& c) { c.response_ring.length = 4096; }), bad, "response ring region: 4096 bytes");
  expect_refused(with([](ClientInfo& c) { c.response_ring.region = kInvalidRegion; }), bad, "no region id");
  expect_refused(with([](ClientInfo& c) { c.response_ring.base_addr = UINT64_MAX - 100; }), bad,
                 "wraps the address space");
}

BOOST_AUTO_TEST_CASE(every_malformed_answer_field_is_refused_by_name) {
  const StatusCode bad = StatusCode::kCorruption;
  std::vector<std::byte> bytes = answer_bytes(good_answer());
  bytes[12] = std::byte{2};  // after version, worker and connection id: the mode
  expect_refused(decode_answer(bytes), bad, "mode is neither");
  bytes = answer_bytes(good_answer());
  bytes[13] = std::byte{7};
  expect_refused(decode_answer(bytes), bad, "awaits_first_message is neither");
  bytes = answer_bytes(good_answer());
  bytes.push_back(std::byte{1});
  expect_refused(decode_answer(bytes), bad, "trailing bytes");
  bytes.resize(bytes.size() - 2);
  expect_refused(decode_answer(bytes), bad, "truncated");

  auto with = [](const std::function<void(ConnectAnswer&)>& change) {
    ConnectAnswer a = good_answer();
    change(a);
    return decode_answer(answer_bytes(a));
  };
  expect_refused(with([](ConnectAnswer& a) { a.connection.request_ring.node = 3; }), bad, "request ring on node 3");
  expect_refused(with([](ConnectAnswer& a) { a.connection.heartbeat_interval_ns = -1; }), bad, "negative heartbeat");
  expect_refused(with([](ConnectAnswer& a) { a.connection.request_ring_bytes = 12; }), bad, "request ring: 12 bytes");
  expect_refused(with([](ConnectAnswer& a) { a.connection.request_ring.length = 64; }), bad,
                 "request ring region: 64 bytes");
  expect_refused(with([](ConnectAnswer& a) { a.tree.node = kInvalidNode; }), bad, "tree region: no node");
}

// ---- a served tree ----------------------------------------------------------

constexpr uint64_t kSeed = 3;
constexpr uint64_t kRectangles = 5000;
constexpr Nanos kFirstMessageTimeout = 300 * kMillisecond;

constexpr uint32_t kMaxResponseBytes = 256 * 1024;

CatfishClientOptions client_options() {
  CatfishClientOptions o;
  o.messaging.max_response_bytes = kMaxResponseBytes;
  return o;
}

// The served tree's parts: destroyed before the runtime (they deregister
// through it), the RPC server first (it calls into the server).
struct ServerSet {
  NodeId bootstrap = kInvalidNode;  // the connect node
  std::vector<NodeId> workers;      // one endpoint per messaging worker
  std::unique_ptr<CatfishServer> server;
  std::unique_ptr<rpc::RpcServer> rpc;
};

struct ServedTree {
  std::unique_ptr<Runtime> runtime = loopback::make_loopback_runtime({});
  ServerSet set;
  testing::RtreeOracle reference;
  testing::FailureLog failures;

  ServedTree() {
    auto boot = runtime->add_node({"catfish.connect", true});
    BOOST_REQUIRE(boot.is_ok());
    set.bootstrap = *boot;
    std::vector<Env> envs;
    for (uint32_t w = 0; w < 2; ++w) {
      auto node = runtime->add_node({"catfish.worker" + std::to_string(w), true, set.bootstrap});
      BOOST_REQUIRE(node.is_ok());
      set.workers.push_back(*node);
      envs.push_back(runtime->setup_env(*node));
    }
    CatfishServerOptions options;
    options.store.geometry.node_bytes = 1024;
    options.store.geometry.node_slots =
        static_cast<uint32_t>(3 * (kRectangles + 1000) / options.store.geometry.min_fill() + 8192);
    options.messaging.connections_per_worker = 6;
    options.messaging.max_response_bytes = kMaxResponseBytes;
    options.messaging.mode = ServerMode::kEvent;
    options.messaging.segment_bytes = 1024;  // wide queries come back in several segments
    options.messaging.heartbeat_interval_ns = kMillisecond;
    options.messaging.first_message_timeout_ns = kFirstMessageTimeout;
    auto server = CatfishServer::create(envs, options);
    BOOST_REQUIRE_MESSAGE(server.is_ok(), server.status().to_string());
    set.server = std::move(*server);
    for (uint64_t id = 0; id < kRectangles; ++id) {
      const Rect r = loaded_rectangle(kSeed, id);
      BOOST_REQUIRE(set.server->load(r, id).is_ok());
      reference.insert(r, id);
    }
    auto rpc = rpc::RpcServer::create(runtime->setup_env(set.bootstrap));
    BOOST_REQUIRE(rpc.is_ok());
    set.rpc = std::move(*rpc);
    BOOST_REQUIRE(set.server->serve_connects(*set.rpc).is_ok());
    rpc::RpcServer* connects = set.rpc.get();
    BOOST_REQUIRE(runtime->spawn(set.bootstrap, "catfish.connect", ActorKind::kDaemon,
                                 [connects](Env&) { connects->serve(); }).is_ok());
    CatfishServer* srv = set.server.get();
    for (uint32_t w = 0; w < set.workers.size(); ++w) {
      BOOST_REQUIRE(runtime->spawn(set.workers[w], "catfish.worker" + std::to_string(w), ActorKind::kDaemon,
                                   [srv, w](Env& env) { srv->serve(w, env); }).is_ok());
    }
  }
  std::vector<uint64_t> expected(const Rect& q) const { return reference.ids_intersecting(q); }

  void spawn(const std::string& name, std::function<void(Env&, Endpoint&)> body) {
    auto node = runtime->add_node({name, false});
    BOOST_REQUIRE(node.is_ok());
    BOOST_REQUIRE(runtime->spawn(*node, name, ActorKind::kWorker, [body, this, name](Env& env) {
      Endpoint ep(env, 10 * kSecond);
      body(env, ep);
    }).is_ok());
  }
};

// Wide queries around loaded rectangles (so none is empty), checked on
// both paths against the reference.
void check_searches(CatfishClient& c, const ServedTree& t, Random& rng, const std::string& who,
                    testing::FailureLog& failures) {
  std::vector<Hit> server_hits, client_hits;
  for (int i = 0; i < 40; ++i) {
    const Rect r = loaded_rectangle(kSeed, rng.uniform(kRectangles));
    const double pad = i % 2 == 0 ? 0.01 : 0.06;  // the wider ones take several response segments
    const Rect q{r.x_min - pad, r.y_min - pad, r.x_max + pad, r.y_max + pad};
    const std::vector<uint64_t> want = t.expected(q);
    Status s1 = c.search_by(selector::Path::kServer, q, &server_hits);
    Status s2 = c.search_by(selector::Path::kClient, q, &client_hits);
    if (!s1.is_ok() || !s2.is_ok()) {
      return failures.fail(who + ": search: " + s1.to_string() + " / " + s2.to_string());
    }
    if (want.empty()) return failures.fail(who + ": a query around a loaded rectangle found nothing");
    if (sorted_ids(server_hits) != want) return failures.fail(who + ": server-side search differs from rstar");
    if (sorted_ids(client_hits) != want) return failures.fail(who + ": offloaded search differs from rstar");
  }
}

// A raw connect request from `rpc`, answered or refused.
StatusOr<std::vector<std::byte>> raw_connect(rpc::RpcClient& rpc, NodeId bootstrap, std::span<const std::byte> body) {
  LOCUS_ASSIGN_OR_RETURN(auto answer, rpc.call(bootstrap, kConnectRpc, body));
  return std::vector<std::byte>(answer.begin(), answer.end());
}

BOOST_AUTO_TEST_CASE(hostile_connects_are_refused_while_rpc_and_in_process_clients_are_served) {
  ServedTree t;
  const NodeId bootstrap = t.set.bootstrap;
  CatfishServer& server = *t.set.server;
  std::atomic<uint32_t> silent_connection{UINT32_MAX};

  t.spawn("hostile", [&](Env&, Endpoint& ep) {
    auto rpc = rpc::RpcClient::create(ep);
    if (!rpc.is_ok()) return t.failures.fail("hostile rpc: " + rpc.status().to_string());
    auto refused = [&](std::span<const std::byte> body, const std::string& words) {
      auto got = raw_connect(**rpc, bootstrap, body);
      if (got.is_ok()) return t.failures.fail("a connect request that should fail (" + words + ") was answered");
      if (got.status().code() != StatusCode::kInvalidArgument ||
          got.status().message().find(words) == std::string::npos) {
        t.failures.fail("refusal without '" + words + "': " + got.status().to_string());
      }
    };
    const std::byte garbage[] = {std::byte{0xde}, std::byte{0xad}, std::byte{0xbe}, std::byte{0xef},
                                 std::byte{1},    std::byte{2},    std::byte{3}};
    refused(garbage, "catfish connect request: version");
    refused({}, "truncated before its version");
    // Well-formed, but a response ring too small for the server's 1 KB segments.
    auto messaging = MessagingClient::create(ep, {.response_ring_bytes = 512});
    if (!messaging.is_ok()) return t.failures.fail("hostile messaging: " + messaging.status().to_string());
    refused(client_bytes((*messaging)->client_info()), "cannot hold a 1024-byte segment");
    // A ring region that claims to be another node's.
    ClientInfo other = (*messaging)->client_info();
    other.response_ring.node = other.node + 1;
    refused(client_bytes(other), "response ring on node");
    // Accepted, but never says hello: the worker writes nothing to it and
    // frees it from serving after first_message_timeout_ns.
    auto silent = MessagingClient::create(ep, {});
    if (!silent.is_ok()) return t.failures.fail("silent messaging: " + silent.status().to_string());
    auto answer = raw_connect(**rpc, bootstrap, client_bytes((*silent)->client_info()));
    if (!answer.is_ok()) return t.failures.fail("a good connect request was refused: " + answer.status().to_string());
    rpc::Reader r(*answer);
    auto decoded = get_connect_answer(r);
    if (!decoded.is_ok()) return t.failures.fail("connect answer: " + decoded.status().to_string());
    if (!decoded->connection.awaits_first_message) t.failures.fail("an RPC connection must await its hello");
    silent_connection.store(decoded->connection.connection_id);
  });

  auto client_body = [&](const std::string& who, bool over_rpc) {
    return [&, who, over_rpc](Env& env, Endpoint& ep) {
      // After the silent connection was dropped: the server served on.
      const Nanos deadline = env.clock->now() + 20 * kSecond;
      while (server.messaging().stats().dropped_connections == 0 && env.clock->now() < deadline) {
        env.clock->sleep_for(5 * kMillisecond);
      }
      selector::SelectorConfig sc;
      sc.kind = selector::SelectorKind::kBackoff;
      auto sel = selector::make_selector(sc, *env.random);
      if (!sel.is_ok()) return t.failures.fail(who + ": " + sel.status().to_string());
      auto rpc = rpc::RpcClient::create(ep);
      if (!rpc.is_ok()) return t.failures.fail(who + ": " + rpc.status().to_string());
      const CatfishClientOptions options = client_options();
      auto c = over_rpc ? CatfishClient::connect(ep, **rpc, bootstrap, **sel, options)
                        : CatfishClient::connect(ep, server, **sel, options);
      if (!c.is_ok()) return t.failures.fail(who + ": connect: " + c.status().to_string());
      check_searches(**c, t, *env.random, who, t.failures);
      // Inserts and a delete through this client, seen by both paths.
      const uint64_t id = over_rpc ? 1ull << 40 : 2ull << 40;
      const Rect mine = over_rpc ? Rect{0.25, 0.25, 0.2501, 0.2501} : Rect{0.75, 0.75, 0.7501, 0.7501};
      if (Status s = (*c)->insert(mine, id); !s.is_ok()) return t.failures.fail(who + ": insert: " + s.to_string());
      if (Status s = (*c)->insert(mine, id + 1); !s.is_ok()) return t.failures.fail(who + ": insert: " + s.to_string());
      std::vector<Hit> hits;
      for (selector::Path p : {selector::Path::kServer, selector::Path::kClient}) {
        if (Status s = (*c)->search_by(p, mine, &hits); !s.is_ok()) return t.failures.fail(who + ": " + s.to_string());
        const std::vector<uint64_t> ids = sorted_ids(hits);
        if (std::count(ids.begin(), ids.end(), id) != 1 || std::count(ids.begin(), ids.end(), id + 1) != 1) {
          t.failures.fail(who + ": inserted rectangles not found");
        }
      }
      if (Status s = (*c)->remove(mine, id); !s.is_ok()) return t.failures.fail(who + ": remove: " + s.to_string());
      if ((*c)->remove(mine, id).code() != StatusCode::kNotFound) t.failures.fail(who + ": removed twice");
      for (selector::Path p : {selector::Path::kServer, selector::Path::kClient}) {
        if (Status s = (*c)->search_by(p, mine, &hits); !s.is_ok()) return t.failures.fail(who + ": " + s.to_string());
        const std::vector<uint64_t> ids = sorted_ids(hits);
        if (std::count(ids.begin(), ids.end(), id) != 0 || std::count(ids.begin(), ids.end(), id + 1) != 1) {
          t.failures.fail(who + ": a delete did not take effect");
        }
      }
      // The selector's own choice, with heartbeats arriving.
      if (Status s = (*c)->search(mine, &hits); !s.is_ok()) t.failures.fail(who + ": selected search: " + s.to_string());
    };
  };
  t.spawn("rpc_client", client_body("rpc client", true));
  t.spawn("in_process_client", client_body("in-process client", false));
  BOOST_REQUIRE(t.runtime->run().is_ok());
  BOOST_TEST(t.failures.empty(), t.failures.first());

  const CatfishServerStats cs = server.stats();
  BOOST_TEST(cs.connects_refused == 4u);
  BOOST_TEST(cs.connects == 2u);  // the silent one and the RPC client
  BOOST_TEST(cs.inserts == 4u);
  BOOST_TEST(cs.deletes == 2u);
  const MessagingServerStats ms = server.messaging().stats();
  BOOST_TEST(ms.dropped_connections == 1u);
  BOOST_TEST(ms.malformed == 0u);
  const uint32_t silent = silent_connection.load();
  BOOST_REQUIRE(silent != UINT32_MAX);
  const Status why = server.messaging().connection_status(silent);
  BOOST_TEST(why.message().find("no first message arrived within 300 ms") != std::string::npos, why.to_string());
  BOOST_TEST(server.check_invariants().is_ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus::catfish
