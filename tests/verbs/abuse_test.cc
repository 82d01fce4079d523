// The network-facing server under abuse (issue 17), on a real RDMA device
// (Soft-RoCE in CI): `locus serve` of tests/verbs/scenarios/catfish.toml as
// a child process (its connect RPC over SEND/RECV, its request rings
// written by RDMA, its tree read by RDMA; verbs.max_connections = 6 per
// endpoint), and hostile clients in this process doing what no locus
// client does:
//  1. garbage on the RPC channel: random bytes, truncated headers, lying
//     lengths, unknown types, garbage payloads of the real type: each is
//     answered with an error response and counted;
//  2. garbage over a whole Catfish request ring: that connection is
//     dropped, its client told why, and it connects again;
//  3. READs with a guessed rkey and past the tree's region, and a WRITE to
//     the read-only tree: an error completion for the hostile client, the
//     tree unchanged;
//  4. a client that sends requests and never reads its responses: the
//     server's responses to it fail (RNR) and are counted;
//  5. connections opened until the server's limit: the next one is
//     refused, the server saying why and naming the setting.
// After each, an honest client's searches by both paths give the loaded
// rectangles; at the end the server stops cleanly, and its figures and log
// say what it refused. Small counts: a READ takes ~100 us in the guest.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/verbs/verbs_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/common/random.h"
#include "core/index/catfish/connect_rpc.h"
#include "core/rpc/message.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/verbs/catfish_clients.h"
#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;
using locus::testing::FailureLog;
using locus::verbs::testing::figure;
namespace vt = locus::verbs::testing;

const bool skip_checked = [] {
  vt::exit_unless_rdma_available("abuse_verbs_test");
  return true;
}();

constexpr uint32_t kMaxConnections = 6;

// `nodes` client nodes of a fresh verbs runtime, fn(env, k) in node k's actor.
void with_hostile_nodes(const verbs::ClusterConfig& config, int nodes, const std::function<void(Env&, int)>& fn,
                        FailureLog& failures) {
  auto runtime = verbs::make_verbs_runtime(config);
  for (int k = 0; k < nodes; ++k) {
    const std::string name = "hostile" + std::to_string(k);
    auto node = runtime->add_node({name, false});
    if (!node.is_ok()) return failures.fail(name + ": " + node.status().to_string());
    Status spawned = runtime->spawn(*node, name, ActorKind::kWorker, [&fn, k](Env& env) { fn(env, k); });
    if (!spawned.is_ok()) return failures.fail(name + ": spawn: " + spawned.to_string());
  }
  if (Status ran = runtime->run(); !ran.is_ok()) failures.fail("hostile run: " + ran.to_string());
}

// An honest client after the abuse: searches by both paths, the loaded answer.
void honest_searches(const vt::ServedIndex& t, const std::string& after, FailureLog& failures) {
  vt::with_catfish_client(
      t.config, selector::SelectorKind::kServerOnly,
      [&](catfish::CatfishClient& c, Env&) { vt::check_catfish_searches(c, "after " + after, 17, 3, failures); },
      failures);
}

// A registered scratch buffer, SENDs of it, and `buffers` receive buffers
// for the answers.
struct Sender {
  Endpoint& ep;
  AlignedBuffer mem{4096};
  Region reg;

  Status open(Env& env, const std::string& name, uint32_t buffers) {
    auto r = env.transport->register_memory(mem.data(), mem.size(), kLocalOnly);
    if (!r.is_ok()) return r.status();
    reg = *r;
    return ep.add_receiver(RecvKind::kMessages, name, buffers, 16 * 1024);
  }

  Status send(NodeId server, uint32_t len) {
    WorkRequest wr;
    wr.wr_id = ep.next_wr_id();
    wr.op = Opcode::kSend;
    wr.remote.node = server;
    wr.local = {mem.data(), len, reg.lkey};
    return ep.execute(wr);
  }

  // A request of a type no handler has (answered with an error).
  Status send_unknown_type(NodeId server) {
    rpc::MessageHeader h;
    h.type = 2000;
    h.payload_bytes = 0;
    rpc::write_header(mem.data(), h);
    return send(server, rpc::kHeaderBytes);
  }
};

// Hostile RPC requests of five kinds (6 of each) to the connect RPC; each
// must be answered with an error response.
void garbage_rpcs(Env& env, FailureLog& failures, std::atomic<int>* answered) {
  Endpoint ep(env, 20 * kSecond);
  Sender s{ep};
  if (Status st = s.open(env, "hostile", 2); !st.is_ok()) return failures.fail("hostile: " + st.to_string());
  Random& rng = *env.random;
  for (int i = 0; i < 30; ++i) {
    for (size_t b = 0; b + 8 <= s.mem.size(); b += 8) {
      const uint64_t x = rng.next_u64();
      std::memcpy(s.mem.data() + b, &x, 8);
    }
    uint32_t len = 8 + static_cast<uint32_t>(rng.uniform(200));
    rpc::MessageHeader h;
    switch (i % 5) {
      case 0:  // random bytes
        break;
      case 1:  // shorter than a header
        len = 1 + static_cast<uint32_t>(rng.uniform(rpc::kHeaderBytes - 1));
        break;
      case 2:  // a header whose length lies
        h.type = catfish::kConnectRpc;
        h.payload_bytes = len + 5;
        rpc::write_header(s.mem.data(), h);
        len += rpc::kHeaderBytes;
        break;
      case 3:  // a type no handler has
        h.type = static_cast<uint16_t>(1000 + rng.uniform(60000));
        h.payload_bytes = 4;
        rpc::write_header(s.mem.data(), h);
        len = rpc::kHeaderBytes + 4;
        break;
      case 4:  // the connect RPC's type, a garbage payload
        h.type = catfish::kConnectRpc;
        h.payload_bytes = len;
        rpc::write_header(s.mem.data(), h);
        len += rpc::kHeaderBytes;
        break;
    }
    if (Status st = s.send(vt::kCatfishConnectNode, len); !st.is_ok()) {
      return failures.fail("hostile SEND " + std::to_string(i) + ": " + st.to_string());
    }
    auto rc = ep.await_recv(RecvKind::kMessages);
    if (!rc.is_ok() || rc->data.size() < rpc::kHeaderBytes) {
      return failures.fail("no answer to hostile request " + std::to_string(i) + ": " + rc.status().to_string());
    }
    const rpc::MessageHeader rh = rpc::read_header(rc->data.data());
    if (rh.kind != rpc::kKindResponse || rh.status == 0) {
      failures.fail("hostile request " + std::to_string(i) + " was answered without an error");
    }
    answered->fetch_add(1);
    if (Status st = ep.release(rc->buffer); !st.is_ok()) return failures.fail("repost: " + st.to_string());
  }
  (void)env.transport->deregister_memory(s.reg);
}

// Requests whose responses it never reads: one receive buffer, never
// given back, and a SEND of a type no handler has after another.
void never_reads(Env& env, FailureLog& failures, std::atomic<int>* sends_failed) {
  Endpoint ep(env, 20 * kSecond);
  Sender s{ep};
  if (Status st = s.open(env, "deaf", 1); !st.is_ok()) return failures.fail("deaf: " + st.to_string());
  for (int i = 0; i < 6; ++i) {
    // Once the server's response failed, the connection is gone and these
    // fail too (or connect again): either is the hostile client's problem.
    if (!s.send_unknown_type(vt::kCatfishConnectNode).is_ok()) sends_failed->fetch_add(1);
  }
  // Long enough for the server's RNR retries to run out (6 x 20.48 ms).
  env.clock->sleep_for(2 * kSecond);
  (void)env.transport->deregister_memory(s.reg);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(abuse)

BOOST_AUTO_TEST_CASE(the_server_refuses_hostile_clients_and_keeps_serving) {
  vt::ServedIndex t = vt::start_catfish_tree("abuse", "event", "max_connections = " + std::to_string(kMaxConnections));
  FailureLog failures;
  honest_searches(t, "start", failures);
  BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());

  // 1. Garbage on the RPC channel.
  std::atomic<int> answered{0};
  with_hostile_nodes(
      t.config, 1, [&](Env& env, int) { garbage_rpcs(env, failures, &answered); }, failures);
  BOOST_TEST(answered.load() == 30);
  honest_searches(t, "garbage RPCs", failures);
  BOOST_TEST(failures.empty(), failures.first());

  // 2. Garbage over a whole request ring; 3. READs and a WRITE where the
  // rkey or the bounds forbid them (from another runtime, so that the
  // honest client's own connections are not the ones that break).
  catfish::ConnectionInfo ring;
  RemoteRegion tree;
  uint64_t dropped_seen = 0;
  vt::with_catfish_client(
      t.config, selector::SelectorKind::kServerOnly,
      [&](catfish::CatfishClient& c, Env& env) {
        vt::check_catfish_searches(c, "before the ring garbage", 3, 1, failures);
        ring = c.connection();
        tree = c.tree_region();
        with_hostile_nodes(
            t.config, 1,
            [&](Env& henv, int) {
              Endpoint ep(henv, 20 * kSecond);
              AlignedBuffer mem(ring.request_ring_bytes);
              auto reg = henv.transport->register_memory(mem.data(), mem.size(), kLocalOnly);
              if (!reg.is_ok()) return failures.fail("register: " + reg.status().to_string());
              for (size_t b = 0; b + 8 <= mem.size(); b += 8) {
                const uint64_t x = henv.random->next_u64();
                std::memcpy(mem.data() + b, &x, 8);
              }
              // 2: a WRITE over the honest client's ring (its rkey is not
              // secret to a client on the same host in this test).
              WorkRequest wr;
              wr.wr_id = ep.next_wr_id();
              wr.op = ring.mode == catfish::ServerMode::kEvent ? Opcode::kWriteWithImm : Opcode::kWrite;
              wr.imm = ring.connection_id;
              wr.remote = remote_at(ring.request_ring, 0);
              wr.local = {mem.data(), ring.request_ring_bytes, reg->lkey};
              if (Status st = ep.execute(wr); !st.is_ok()) failures.fail("ring garbage WRITE: " + st.to_string());
              // 3: a guessed rkey, one byte past the region, a WRITE to the
              // read-only tree: each an error completion.
              auto forbidden = [&](const char* what, Opcode op, RemoteAddr at) {
                WorkRequest w;
                w.wr_id = ep.next_wr_id();
                w.op = op;
                w.remote = at;
                w.local = {mem.data(), 64, reg->lkey};
                // The NIC's verdict (the queue pair breaks with it; the
                // next request connects again).
                if (Status st = ep.execute(w); st.code() != StatusCode::kRemoteAccessError) {
                  failures.fail(std::string(what) + ": " + st.to_string() + ", not a remote access error");
                }
              };
              RemoteAddr guessed = remote_at(tree, 0);
              guessed.rkey ^= 0x5a5a5a5au;
              forbidden("a READ with a guessed rkey", Opcode::kRead, guessed);
              forbidden("a READ past the tree's region", Opcode::kRead, remote_at(tree, tree.length));
              forbidden("a WRITE to the read-only tree", Opcode::kWrite, remote_at(tree, 0));
              (void)henv.transport->deregister_memory(*reg);
            },
            failures);
        // The server dropped the ring's connection and said so, once the
        // garbage stayed malformed for its incomplete_timeout_ns (1 s: a
        // WRITE may still be landing); the client connects again and is
        // served.
        env.clock->sleep_for(3 * kSecond);
        std::vector<catfish::Hit> hits;
        const Nanos deadline = env.clock->now() + 30 * kSecond;
        Status st;
        while (env.clock->now() < deadline) {
          st = c.search_by(selector::Path::kServer, {0.4, 0.4, 0.41, 0.41}, &hits);
          if (st.is_ok() && c.stats().reconnects > 0) break;
          env.clock->sleep_for(10 * kMillisecond);
        }
        if (!st.is_ok() || c.stats().reconnects == 0) {
          failures.fail("after its ring was written over: " + st.to_string() + ", " +
                        std::to_string(c.stats().reconnects) + " reconnects");
        }
        dropped_seen = c.stats().reconnects;
        vt::check_catfish_searches(c, "after reconnecting", 29, 2, failures);
      },
      failures);
  BOOST_TEST(dropped_seen >= 1u);
  honest_searches(t, "ring garbage and forbidden READs", failures);
  BOOST_TEST(failures.empty(), failures.first());

  // 4. A client that never reads its responses.
  std::atomic<int> sends_failed{0};
  with_hostile_nodes(
      t.config, 1, [&](Env& env, int) { never_reads(env, failures, &sends_failed); }, failures);
  honest_searches(t, "a client that never reads", failures);
  BOOST_TEST(failures.empty(), failures.first());

  // 5. Connections to the connect RPC's endpoint until the limit: every
  // node holds its connection (an answered request) until all have tried.
  constexpr int kNodes = kMaxConnections + 2;
  std::atomic<int> served{0}, refused{0}, tried{0};
  with_hostile_nodes(
      t.config, kNodes,
      [&](Env& env, int) {
        Endpoint ep(env, 20 * kSecond);
        Sender s{ep};
        if (Status st = s.open(env, "flood", 1); !st.is_ok()) return failures.fail("flood: " + st.to_string());
        if (s.send_unknown_type(vt::kCatfishConnectNode).is_ok() &&
            ep.await_recv_for(RecvKind::kMessages, 20 * kSecond).is_ok()) {
          served.fetch_add(1);
        } else {
          refused.fetch_add(1);
        }
        tried.fetch_add(1);
        const Nanos deadline = env.clock->now() + 60 * kSecond;
        while (tried.load() < kNodes && env.clock->now() < deadline) env.clock->sleep_for(10 * kMillisecond);
        (void)env.transport->deregister_memory(s.reg);
      },
      failures);
  BOOST_TEST(served.load() == static_cast<int>(kMaxConnections));
  BOOST_TEST(refused.load() == kNodes - static_cast<int>(kMaxConnections));
  honest_searches(t, "the connection flood", failures);
  BOOST_TEST(failures.empty(), failures.first());

  const auto figures = vt::stop_served_index(t, 60'000);
  const std::string out = t.server->output();
  BOOST_TEST(figure(figures, "rpc_rejected") >= 24, out);  // kinds 0-3 of (1), and (4), (5)'s unknown types
  BOOST_TEST(figure(figures, "catfish.dropped_connections") >= 1, out);
  BOOST_TEST(figure(figures, "rpc_send_failures") >= 1, out);
  BOOST_TEST(out.find("refused a connection") != std::string::npos, out);
  BOOST_TEST(out.find("verbs.max_connections") != std::string::npos, out);
  BOOST_TEST(figure(figures, "catfish.rectangles") >= vt::kCatfishRectangles, out);
}

BOOST_AUTO_TEST_SUITE_END()
