// RPC: request/response over SEND/RECV, and a server that survives hostile
// input: random bytes, truncated headers, lying lengths, unknown types,
// oversized messages and a client that dies mid-conversation. Every bad
// request is answered with an error and counted; the server keeps serving.
// And an RpcClient sharing its endpoint's receive queue with another
// receiver (issue 16, defect 10): each gets only its own completions, and a
// receive completion with a forged wr_id is dropped, never indexed.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "backends/loopback/loopback_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"

namespace locus {
namespace {

constexpr uint16_t kEcho = 1;
constexpr uint16_t kFail = 2;

struct EchoServer {
  std::unique_ptr<Runtime> runtime;
  NodeId server = kInvalidNode;
  std::unique_ptr<rpc::RpcServer> rpc;
  testing::FailureLog failures;
  void fail(std::string s) { failures.fail(std::move(s)); }

  explicit EchoServer(rpc::RpcServerOptions options = {}) {
    loopback::LoopbackOptions lo;
    lo.no_recv_policy = loopback::NoRecvPolicy::kFail;
    runtime = loopback::make_loopback_runtime(lo);
    server = *runtime->add_node({"server", true});
    rpc = std::move(rpc::RpcServer::create(runtime->setup_env(server), options)).value();
    BOOST_REQUIRE(rpc->handle(kEcho, "echo", [](const rpc::RequestContext&, rpc::Reader& r,
                                                rpc::Writer& w) {
                    std::string_view s;
                    if (!r.blob(&s) || !r.at_end()) return invalid_argument("echo: malformed");
                    w.blob(s);
                    return Status();
                  }).is_ok());
    BOOST_REQUIRE(rpc->handle(kFail, "fail", [](const rpc::RequestContext&, rpc::Reader&,
                                                rpc::Writer&) {
                    return not_found("nothing here");
                  }).is_ok());
    rpc::RpcServer* srv = rpc.get();
    BOOST_REQUIRE(runtime->spawn(server, "server", ActorKind::kDaemon, [srv](Env&) { srv->serve(); }).is_ok());
  }
};

std::string echo_call(rpc::RpcClient& c, NodeId server, std::string_view text, Status* st) {
  rpc::Writer w(c.payload_buffer());
  w.blob(text);
  auto r = c.call(server, kEcho, w.size());
  *st = r.status();
  if (!r.is_ok()) return {};
  rpc::Reader rd(*r);
  std::string_view s;
  if (!rd.blob(&s)) *st = corruption("bad echo response");
  return std::string(s);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rpc)

BOOST_AUTO_TEST_CASE(calls_and_error_responses) {
  EchoServer es;
  NodeId cn = *es.runtime->add_node({"client", false});
  const NodeId server = es.server;
  BOOST_REQUIRE(es.runtime->spawn(cn, "client", ActorKind::kWorker, [&, server](Env& env) {
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    for (int i = 0; i < 1000; ++i) {
      Status st;
      const std::string text = "hello " + std::to_string(i) + std::string(static_cast<size_t>(i % 300), 'x');
      if (echo_call(**c, server, text, &st) != text || !st.is_ok()) return es.fail("echo " + std::to_string(i));
    }
    auto r = (*c)->call(server, kFail, 0);
    if (r.status().code() != StatusCode::kNotFound || r.status().message() != "nothing here") {
      return es.fail("error response lost its status: " + r.status().to_string());
    }
    auto big = std::string(20000, 'z');
    auto too_big = (*c)->call(server, kEcho, std::as_bytes(std::span(big.data(), big.size())));
    if (too_big.status().code() != StatusCode::kInvalidArgument) return es.fail("oversized call not refused");
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  BOOST_TEST(es.rpc->stats().requests == 1001u);
  BOOST_TEST(es.rpc->stats().handler_errors == 1u);
  BOOST_TEST(es.rpc->stats().rejected() == 0u);
}

BOOST_AUTO_TEST_CASE(hostile_requests_are_answered_and_counted) {
  EchoServer es;
  NodeId hostile = *es.runtime->add_node({"hostile", false});
  NodeId honest = *es.runtime->add_node({"honest", false});
  const NodeId server = es.server;
  const uint32_t max_msg = rpc::RpcServerOptions{}.max_message_bytes;
  std::atomic<uint64_t> sent{0}, error_replies{0};
  BOOST_REQUIRE(es.runtime->spawn(hostile, "hostile", ActorKind::kWorker, [&, server](Env& env) {
    Endpoint ep(env);
    Transport& t = ep.transport();
    AlignedBuffer mem(2 * max_msg);
    auto reg = t.register_memory(mem.data(), mem.size(), kLocalOnly);
    if (!reg.is_ok()) return es.fail(reg.status().to_string());
    std::byte* out = mem.data();
    if (!ep.add_receiver(RecvKind::kMessages, "hostile", 1, 64 * 1024).is_ok()) return es.fail("add_receiver");
    Random& rng = *env.random;
    for (int i = 0; i < 3000; ++i) {
      uint32_t len = static_cast<uint32_t>(rng.uniform(200));
      for (uint32_t b = 0; b < 2 * max_msg; b += 8) {
        const uint64_t x = rng.next_u64();
        std::memcpy(out + b, &x, 8);
      }
      rpc::MessageHeader h;
      switch (i % 6) {
        case 0: break;                         // random bytes
        case 1: len = static_cast<uint32_t>(rng.uniform(rpc::kHeaderBytes)); break;  // truncated
        case 2:                                // valid header, lying length
          h.type = kEcho; h.payload_bytes = len + 5; len += rpc::kHeaderBytes;
          rpc::write_header(out, h); break;
        case 3:                                // unknown type
          h.type = static_cast<uint16_t>(100 + rng.uniform(60000)); h.payload_bytes = 4; len = rpc::kHeaderBytes + 4;
          rpc::write_header(out, h); break;
        case 4:                                // right type, garbage payload
          h.type = kEcho; h.payload_bytes = len; len += rpc::kHeaderBytes;
          rpc::write_header(out, h); break;
        case 5: len = max_msg + 1 + static_cast<uint32_t>(rng.uniform(max_msg - 1)); break;  // oversized
      }
      WorkRequest wr;
      wr.wr_id = ep.next_wr_id();
      wr.op = Opcode::kSend;
      wr.remote.node = server;
      wr.local = {out, len, reg->lkey};
      if (!t.post(std::span<const WorkRequest>(&wr, 1)).is_ok()) return es.fail("post");
      auto c = ep.await(wr.wr_id, server);
      if (!c.is_ok()) return es.fail("send completion: " + c.status().to_string());
      ++sent;
      // Every hostile request gets an answer (an error response).
      auto rc = ep.await_recv(RecvKind::kMessages);
      if (!rc.is_ok() || rc->data.size() < rpc::kHeaderBytes) {
        return es.fail("no answer to hostile request " + std::to_string(i));
      }
      const rpc::MessageHeader rh = rpc::read_header(rc->data.data());
      if (rh.kind == rpc::kKindResponse && rh.status != 0) ++error_replies;
      if (!ep.release(rc->buffer).is_ok()) return es.fail("repost");
    }
    (void)t.deregister_memory(*reg);
  }).is_ok());
  // An honest client keeps being served while the hostile one is at it.
  std::atomic<uint64_t> honest_ok{0};
  BOOST_REQUIRE(es.runtime->spawn(honest, "honest", ActorKind::kWorker, [&, server](Env& env) {
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    for (int i = 0; i < 2000; ++i) {
      Status st;
      if (echo_call(**c, server, "ping", &st) != "ping") return es.fail("honest call: " + st.to_string());
      ++honest_ok;
    }
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  const rpc::RpcServerStats s = es.rpc->stats();
  BOOST_TEST(sent.load() == 3000u);
  BOOST_TEST(error_replies.load() == 3000u);
  BOOST_TEST(honest_ok.load() == 2000u);
  BOOST_TEST(s.truncated >= 1000u);  // cases 1 and 2 (some random ones too)
  BOOST_TEST(s.oversized == 500u);
  BOOST_TEST(s.unknown_type >= 500u);
  BOOST_TEST(s.handler_errors >= 500u);  // garbage payloads of a real type
  BOOST_TEST(s.rejected() + s.handler_errors >= 3000u);
}

BOOST_AUTO_TEST_CASE(dead_client_does_not_stop_the_server) {
  EchoServer es;
  NodeId doomed = *es.runtime->add_node({"doomed", false});
  NodeId survivor = *es.runtime->add_node({"survivor", false});
  const NodeId server = es.server;
  Runtime* rt = es.runtime.get();
  BOOST_REQUIRE(es.runtime->spawn(doomed, "doomed", ActorKind::kWorker, [&, server, rt, doomed](Env& env) {
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    Status st;
    echo_call(**c, server, "first", &st);
    if (!st.is_ok()) return es.fail("doomed first call: " + st.to_string());
    (void)rt->crash_node(doomed);  // dies; the server's next reply to it fails
    echo_call(**c, server, "after death", &st);
    if (st.is_ok()) es.fail("a crashed client's call succeeded");
  }).is_ok());
  BOOST_REQUIRE(es.runtime->spawn(survivor, "survivor", ActorKind::kWorker, [&, server](Env& env) {
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    for (int i = 0; i < 500; ++i) {
      Status st;
      if (echo_call(**c, server, "alive", &st) != "alive") return es.fail("survivor: " + st.to_string());
    }
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  BOOST_TEST(es.rpc->stats().requests >= 501u);
}

// A client that dies while the server is handling its request: the reply
// to it fails in the transport, is counted as a send failure, and the
// server goes on serving the others.
BOOST_AUTO_TEST_CASE(reply_to_a_client_that_died_mid_request_fails_and_is_counted) {
  constexpr uint16_t kHold = 3;
  EchoServer es;
  std::atomic<bool> entered{false}, release{false};
  BOOST_REQUIRE(es.rpc->handle(kHold, "hold", [&](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
                  entered = true;
                  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                  while (!release && std::chrono::steady_clock::now() < give_up) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  }
                  w.blob("held");
                  return Status();
                }).is_ok());
  NodeId doomed = *es.runtime->add_node({"doomed", false});
  NodeId survivor = *es.runtime->add_node({"survivor", false});
  const NodeId server = es.server;
  Runtime* rt = es.runtime.get();
  BOOST_REQUIRE(es.runtime->spawn(doomed, "doomed", ActorKind::kWorker, [&, server](Env& env) {
    Endpoint ep(env, 2 * kSecond);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    if (c.value()->call(server, kHold, 0).is_ok()) es.fail("a call whose client died succeeded");
  }).is_ok());
  BOOST_REQUIRE(es.runtime->spawn(survivor, "survivor", ActorKind::kWorker, [&, server, rt, doomed](Env& env) {
    while (!entered) env.clock->sleep_for(kMillisecond);
    (void)rt->crash_node(doomed);  // while its request is in the handler
    release = true;
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    for (int i = 0; i < 200; ++i) {
      Status st;
      if (echo_call(**c, server, "alive", &st) != "alive") return es.fail("survivor: " + st.to_string());
    }
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  const rpc::RpcServerStats s = es.rpc->stats();
  BOOST_TEST(s.send_failures == 1u);
  BOOST_TEST(s.requests == 201u);
}

// An RpcClient and a receiver of WRITE_WITH_IMM notifications share one
// endpoint, so one receive queue: the notifier's WRITEs and the server's
// responses take whichever receive is oldest. Calls and notifications
// interleave, and each consumer must get exactly its own, in order.
BOOST_AUTO_TEST_CASE(an_rpc_client_and_a_notification_receiver_share_an_endpoint) {
  EchoServer es;
  const NodeId server = es.server;
  const NodeId client = *es.runtime->add_node({"client", false});
  const NodeId notifier = *es.runtime->add_node({"notifier", false});
  constexpr uint32_t kRounds = 300;
  constexpr uint32_t kNotesAhead = 4;  // fewer than the receiver's buffers: the notifier never meets RNR
  std::atomic<bool> ready{false};
  std::atomic<uint32_t> taken{0};
  std::atomic<bool> client_done{false};
  RemoteRegion landing;  // published before `ready`
  uint64_t stray = 0, unclaimed = 0;
  BOOST_REQUIRE(es.runtime->spawn(client, "client", ActorKind::kWorker, [&](Env& env) {
    struct Done {
      std::atomic<bool>& done;
      ~Done() { done.store(true); }
    } done{client_done};  // on every way out, or the notifier waits forever
    Endpoint ep(env);
    auto c = rpc::RpcClient::create(ep);
    if (!c.is_ok()) return es.fail(c.status().to_string());
    if (Status st = ep.add_receiver(RecvKind::kImmediates, "notes", 2 * kNotesAhead, 0); !st.is_ok()) {
      return es.fail(st.to_string());
    }
    AlignedBuffer mem(64);
    auto reg = env.transport->register_memory(mem.data(), 64, kRemoteWrite);
    if (!reg.is_ok()) return es.fail(reg.status().to_string());
    landing = reg->remote();
    ready.store(true);
    for (uint32_t r = 0; r < kRounds; ++r) {
      Status st;
      const std::string text = "call " + std::to_string(r);
      if (echo_call(**c, server, text, &st) != text || !st.is_ok()) {
        return es.fail("round " + std::to_string(r) + ": " + st.to_string());
      }
      auto note = ep.await_recv(RecvKind::kImmediates);
      if (!note.is_ok()) return es.fail("round " + std::to_string(r) + ": " + note.status().to_string());
      if (!note->completion.has_imm || note->completion.imm != r + 1 || note->completion.peer != notifier) {
        return es.fail("round " + std::to_string(r) + ": notification " + std::to_string(note->completion.imm) +
                       " from node " + std::to_string(note->completion.peer));
      }
      if (Status rel = ep.release(note->buffer); !rel.is_ok()) return es.fail(rel.to_string());
      taken.store(r + 1);
    }
    if (c.value()->stats().stale_responses != 0) es.fail("the RPC client saw something not its own");
    stray = ep.recv_stats().stray;
    unclaimed = ep.recv_stats().unclaimed;
    (void)env.transport->deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(es.runtime->spawn(notifier, "notifier", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env);
    AlignedBuffer mem(64);
    auto reg = env.transport->register_memory(mem.data(), 64, kLocalOnly);
    if (!reg.is_ok()) return es.fail(reg.status().to_string());
    while (!ready.load() && !client_done.load()) env.clock->sleep_for(kMillisecond);
    for (uint32_t i = 1; i <= kRounds && !client_done.load(); ++i) {
      while (i > taken.load() + kNotesAhead && !client_done.load()) env.clock->sleep_for(10 * kMicrosecond);
      WorkRequest wr;
      wr.wr_id = ep.next_wr_id();
      wr.op = Opcode::kWriteWithImm;
      wr.imm = i;
      wr.remote = remote_at(landing, 0);
      wr.local = {mem.data(), 8, reg->lkey};
      if (Status st = ep.execute(wr); !st.is_ok()) return es.fail("notification " + std::to_string(i) + ": " + st.to_string());
    }
    (void)env.transport->deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  BOOST_TEST(taken.load() == kRounds);
  BOOST_TEST(stray == 0u);
  BOOST_TEST(unclaimed == 0u);
}

// Receives posted around the endpoint with wr_ids it never issued (one
// naming the RpcClient's buffer pool with an index far beyond it, one
// with no pool at all) are taken by two raw SENDs. Their completions are
// dropped and counted; the RpcClient never sees them (before, it indexed
// its buffers with the wr_id), and its calls go on being answered.
BOOST_AUTO_TEST_CASE(a_receive_completion_with_a_forged_wr_id_is_dropped) {
  EchoServer es;
  const NodeId server = es.server;
  const NodeId client = *es.runtime->add_node({"client", false});
  const NodeId sender = *es.runtime->add_node({"sender", false});
  std::atomic<int> step{0};
  EndpointRecvStats stats;
  std::string error;
  BOOST_REQUIRE(es.runtime->spawn(client, "client", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env);
    AlignedBuffer mem(128);
    auto reg = env.transport->register_memory(mem.data(), 128, kLocalOnly);
    if (!reg.is_ok()) return es.fail(reg.status().to_string());
    const RecvRequest forged[] = {{(1ULL << 63) | (1ULL << 32) | 999, {mem.data(), 64, reg->lkey}},
                                  {42, {mem.data() + 64, 64, reg->lkey}}};
    if (Status st = env.transport->post_recv(forged); !st.is_ok()) return es.fail(st.to_string());
    auto c = rpc::RpcClient::create(ep);  // its pool is pool 0: the first forged wr_id points into it
    if (!c.is_ok()) return es.fail(c.status().to_string());
    step.store(1);
    while (step.load() != 2) env.clock->sleep_for(kMillisecond);  // both SENDs took the forged receives
    for (int i = 0; i < 20; ++i) {
      Status st;
      const std::string text = "after the forgeries " + std::to_string(i);
      if (echo_call(**c, server, text, &st) != text || !st.is_ok()) return es.fail("call " + std::to_string(i) + ": " + st.to_string());
    }
    stats = ep.recv_stats();
    error = ep.last_receive_error().to_string();
    (void)env.transport->deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(es.runtime->spawn(sender, "sender", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env);
    AlignedBuffer mem(64);
    auto reg = env.transport->register_memory(mem.data(), 64, kLocalOnly);
    if (!reg.is_ok()) return es.fail(reg.status().to_string());
    std::memset(mem.data(), 0xAB, 64);
    while (step.load() != 1) env.clock->sleep_for(kMillisecond);
    for (int i = 0; i < 2; ++i) {
      WorkRequest wr;
      wr.wr_id = ep.next_wr_id();
      wr.op = Opcode::kSend;
      wr.remote.node = client;
      wr.local = {mem.data(), 48, reg->lkey};
      if (Status st = ep.execute(wr); !st.is_ok()) return es.fail("send: " + st.to_string());
    }
    step.store(2);
    (void)env.transport->deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(es.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(es.failures.empty(), es.failures.first());
  BOOST_TEST(stats.stray == 2u);
  BOOST_TEST(stats.unclaimed == 0u);
  BOOST_TEST(error.find("names no receive buffer") != std::string::npos, error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
