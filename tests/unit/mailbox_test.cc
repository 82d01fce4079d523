// Mailboxes (core/messaging/mailbox.h): one client's calls over RDMA-WRITE
// messaging to several servers, each set up over an RPC the server answers
// with accept_request(), on the loopback backend. Responses come from the
// server called; a handler's error comes back as its Status and leaves the
// connection usable; a broken connection (a request WRITE that failed) is
// set up again on the next call, and only that server's, and the server
// retires the connection it replaces, so reconnecting many times more
// often than the server has slots goes on working; calls to a node that is
// not one of the servers, or larger than the limit, are refused by name; a
// set-up request with trailing or missing bytes is refused; one naming a
// connection that is not the asker's retires nothing and connects.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/messaging/mailbox.h"
#include "core/messaging/wire.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "tests/support/failure_log.h"
#include "tests/support/forwarding_transport.h"

namespace locus::messaging {
namespace {

constexpr uint16_t kSetupRpc = 1;  // on each server's RpcServer
constexpr uint16_t kWhoRpc = 1;    // on its mailboxes: blob -> (server index, blob)
constexpr uint16_t kFailRpc = 2;   // NotFound
constexpr uint32_t kServers = 2;

// A transport whose next post fails (armed by the test's client).
struct FailingTransport : locus::testing::ForwardingTransport {
  using ForwardingTransport::ForwardingTransport;
  std::atomic<bool> fail_next{false};
  Status post(std::span<const WorkRequest> batch) override {
    if (fail_next.exchange(false)) return unavailable("injected: the post failed");
    return ForwardingTransport::post(batch);
  }
};

struct Servers {
  std::unique_ptr<Runtime> runtime = loopback::make_loopback_runtime({});
  std::vector<NodeId> rpc_nodes;
  std::vector<std::unique_ptr<rpc::RpcServer>> rpcs;
  std::vector<std::unique_ptr<MessagingServer>> mailboxes;
  testing::FailureLog failures;

  Servers() {
    for (uint32_t i = 0; i < kServers; ++i) {
      const NodeId node = *runtime->add_node({"server" + std::to_string(i), true});
      const NodeId worker = *runtime->add_node({"server" + std::to_string(i) + ".mailbox", true});
      rpc_nodes.push_back(node);
      MessagingServerOptions o;
      o.mode = ServerMode::kEvent;
      o.connections_per_worker = 4;
      o.request_ring_bytes = 4096;
      o.segment_bytes = 512;
      o.max_response_bytes = 512;
      o.heartbeat_interval_ns = 0;
      mailboxes.push_back(std::move(MessagingServer::create({runtime->setup_env(worker)}, o)).value());
      MessagingServer* m = mailboxes.back().get();
      BOOST_REQUIRE(m->handle(kWhoRpc, "who", [i](const MessageContext&, rpc::Reader& r, rpc::Writer& w) {
        std::string_view s;
        if (!r.blob(&s) || !r.at_end()) return invalid_argument("who: malformed");
        w.put<uint32_t>(i);
        w.blob(s);
        return Status();
      }).is_ok());
      BOOST_REQUIRE(m->handle(kFailRpc, "fail", [](const MessageContext&, rpc::Reader&, rpc::Writer&) {
        return not_found("nothing here");
      }).is_ok());
      rpcs.push_back(std::move(rpc::RpcServer::create(runtime->setup_env(node))).value());
      BOOST_REQUIRE(rpcs.back()->handle(kSetupRpc, "setup", [m](const rpc::RequestContext& ctx, rpc::Reader& r,
                                                                 rpc::Writer& w) -> Status {
        LOCUS_ASSIGN_OR_RETURN(const ConnectionInfo conn, accept_request(*m, ctx.client, r, "test setup"));
        put_connection_info(conn, w);
        return Status();
      }).is_ok());
      rpc::RpcServer* srv = rpcs.back().get();
      BOOST_REQUIRE(runtime->spawn(node, "rpc" + std::to_string(i), ActorKind::kDaemon, [srv](Env& env) {
        while (!env.stop_requested()) srv->serve_once(10 * kMillisecond);
      }).is_ok());
      BOOST_REQUIRE(runtime->spawn(worker, "mailbox" + std::to_string(i), ActorKind::kDaemon,
                                   [m](Env& env) { m->serve(0, env); }).is_ok());
    }
  }

  // Runs `body` as one client with a MailboxCaller connected to every
  // server, on a transport the body can make fail.
  void run_client(const std::function<void(MailboxCaller&, rpc::RpcClient&, FailingTransport&)>& body,
                  const MailboxOptions& mailbox = {}) {
    const NodeId node = *runtime->add_node({"client", false});
    BOOST_REQUIRE(runtime->spawn(node, "client", ActorKind::kWorker, [this, body, mailbox](Env& env) {
      FailingTransport failing(*env.transport);
      env.transport = &failing;
      Endpoint ep(env);
      auto rpc = rpc::RpcClient::create(ep);
      if (!rpc.is_ok()) return failures.fail("rpc client: " + rpc.status().to_string());
      MessagingClientOptions o;
      o.response_ring_bytes = 4096;
      o.max_request_bytes = 256;
      o.max_response_bytes = 512;
      o.recv_buffers = 4;
      rpc::RpcClient* rc = rpc->get();
      auto caller = MailboxCaller::connect(ep, rpc_nodes, o, [this, rc](uint32_t i, const ClientInfo& info,
                                                                        uint32_t replaces) -> StatusOr<ConnectionInfo> {
        rpc::Writer w(rc->payload_buffer());
        put_setup_request(info, replaces, w);
        LOCUS_ASSIGN_OR_RETURN(auto body, rc->call(rpc_nodes[i], kSetupRpc, w.size()));
        rpc::Reader r(body);
        return get_connection_info(r, "test setup answer");
      }, mailbox);
      if (!caller.is_ok()) return failures.fail("connect: " + caller.status().to_string());
      body(**caller, *rc, failing);
    }).is_ok());
    BOOST_REQUIRE(runtime->run().is_ok());
    BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());
  }
};

// The server index and text a kWhoRpc call to `server` came back with.
StatusOr<std::pair<uint32_t, std::string>> who(MailboxCaller& c, NodeId server, const std::string& text) {
  rpc::Writer w(c.payload_buffer());
  w.blob(text);
  LOCUS_ASSIGN_OR_RETURN(auto body, c.call(server, kWhoRpc, w.size()));
  rpc::Reader r(body);
  uint32_t index = 0;
  std::string_view got;
  if (!r.get(&index) || !r.blob(&got) || !r.at_end()) return corruption("who: malformed response");
  return std::make_pair(index, std::string(got));
}

BOOST_AUTO_TEST_SUITE(mailbox)

BOOST_AUTO_TEST_CASE(calls_reach_the_server_called_and_errors_come_back) {
  Servers s;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient&, FailingTransport&) {
    for (int round = 0; round < 50; ++round) {
      for (uint32_t i = 0; i < kServers; ++i) {
        const std::string text = "call " + std::to_string(round) + " to " + std::to_string(i);
        auto got = who(c, s.rpc_nodes[i], text);
        if (!got.is_ok()) return s.failures.fail(text + ": " + got.status().to_string());
        if (got->first != i || got->second != text) return s.failures.fail(text + ": answered by the wrong server");
      }
    }
    auto failed = c.call(s.rpc_nodes[1], kFailRpc, 0);
    if (failed.is_ok() || failed.status().code() != StatusCode::kNotFound ||
        failed.status().message() != "nothing here") {
      return s.failures.fail("a handler's error did not come back as its Status");
    }
    if (!who(c, s.rpc_nodes[1], "after the error").is_ok() || c.stats().reconnects != 0) {
      return s.failures.fail("an error response broke the connection");
    }
    auto stranger = c.call(12345, kWhoRpc, 0);
    if (stranger.is_ok() || stranger.status().message().find("not one of this client's servers") == std::string::npos) {
      return s.failures.fail("a call to an unknown node was not refused by name: " + stranger.status().to_string());
    }
    auto big = c.call(s.rpc_nodes[0], kWhoRpc, c.payload_buffer().size() + 1);
    if (big.is_ok() || big.status().message().find("limit") == std::string::npos) {
      return s.failures.fail("an oversized request was not refused: " + big.status().to_string());
    }
    if (c.stats().calls != 2 * 50 + 2) return s.failures.fail("calls miscounted");
  });
  for (const auto& m : s.mailboxes) BOOST_TEST(m->stats().requests >= 50u);
}

BOOST_AUTO_TEST_CASE(a_broken_connection_is_set_up_again_on_the_next_call) {
  Servers s;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient&, FailingTransport& failing) {
    if (!who(c, s.rpc_nodes[0], "before").is_ok()) return s.failures.fail("first call failed");
    failing.fail_next = true;  // the request's WRITE
    if (who(c, s.rpc_nodes[0], "lost").is_ok()) return s.failures.fail("a call whose WRITE failed succeeded");
    // The other server's connection is untouched.
    auto other = who(c, s.rpc_nodes[1], "other");
    if (!other.is_ok() || other->first != 1 || c.stats().reconnects != 0) {
      return s.failures.fail("the other server's connection was disturbed");
    }
    auto again = who(c, s.rpc_nodes[0], "again");
    if (!again.is_ok() || again->first != 0 || again->second != "again") {
      return s.failures.fail("the broken connection was not set up again: " + again.status().to_string());
    }
    if (c.stats().reconnects != 1 || c.stats().reconnect_failures != 0) return s.failures.fail("reconnects miscounted");
  });
  BOOST_TEST(s.mailboxes[0]->stats().retired == 1u);
  BOOST_TEST(s.mailboxes[1]->stats().retired == 0u);
}

// A set-up that fails backs off: the next call to that server fails at
// once, naming the wait, and sends no set-up; after the wait (100 us by
// default) the next call sets the connection up. Before the back-off each
// call paid a set-up attempt (against a dead server, its timeout).
// The loopback clock is the real one: the wait is long enough that no
// scheduling delay of a loaded machine (ASan, two test binaries per core)
// ends it before the deferred call (the default 100 us did, in CI).
BOOST_AUTO_TEST_CASE(a_failed_setup_backs_off) {
  Servers s;
  MailboxOptions backoff;
  backoff.reconnect_wait_min_ns = 200 * kMillisecond;
  backoff.reconnect_wait_max_ns = 200 * kMillisecond;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient&, FailingTransport& failing) {
    if (!who(c, s.rpc_nodes[0], "before").is_ok()) return s.failures.fail("first call failed");
    failing.fail_next = true;  // the request's WRITE: the connection breaks
    if (who(c, s.rpc_nodes[0], "lost").is_ok()) return s.failures.fail("a call whose WRITE failed succeeded");
    failing.fail_next = true;  // the set-up RPC's SEND
    if (who(c, s.rpc_nodes[0], "setup fails").is_ok()) return s.failures.fail("a failed set-up succeeded");
    if (c.stats().reconnect_failures != 1) return s.failures.fail("the failed set-up was not counted");
    const uint64_t setups = s.rpcs[0]->stats().requests;
    auto deferred = who(c, s.rpc_nodes[0], "deferred");
    if (deferred.is_ok() || deferred.status().message().find("next attempt in") == std::string::npos) {
      return s.failures.fail("a call while backing off was not refused: " + deferred.status().to_string());
    }
    if (c.stats().reconnects_deferred != 1 || s.rpcs[0]->stats().requests != setups) {
      return s.failures.fail("a call while backing off sent a set-up");
    }
    if (!who(c, s.rpc_nodes[1], "other").is_ok()) return s.failures.fail("the other server's calls stopped");
    std::this_thread::sleep_for(std::chrono::milliseconds(210));
    auto again = who(c, s.rpc_nodes[0], "again");
    if (!again.is_ok() || again->second != "again") {
      return s.failures.fail("no set-up after the wait: " + again.status().to_string());
    }
    if (c.stats().reconnects != 1) return s.failures.fail("reconnects miscounted");
  }, backoff);
}

// Each server has 4 connection slots (one worker of 4). A client whose
// request WRITE fails cannot tell the worker, so without the retirement
// of the connection a reconnection replaces, the fifth set-up found every
// slot taken.
BOOST_AUTO_TEST_CASE(reconnecting_more_often_than_there_are_slots_goes_on_working) {
  Servers s;
  constexpr int kCycles = 12;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient&, FailingTransport& failing) {
    for (int i = 0; i < kCycles; ++i) {
      const std::string text = "cycle " + std::to_string(i);
      auto got = who(c, s.rpc_nodes[0], text);
      if (!got.is_ok() || got->second != text) {
        return s.failures.fail(text + ": " + got.status().to_string());
      }
      failing.fail_next = true;
      if (who(c, s.rpc_nodes[0], "lost").is_ok()) return s.failures.fail("a call whose WRITE failed succeeded");
    }
    if (!who(c, s.rpc_nodes[0], "last").is_ok()) return s.failures.fail("the last call failed");
    if (c.stats().reconnects != kCycles) return s.failures.fail("reconnects miscounted");
  });
  BOOST_TEST(s.mailboxes[0]->stats().retired == static_cast<uint64_t>(kCycles));
}

BOOST_AUTO_TEST_CASE(setup_requests_are_checked) {
  Servers s;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient& rpc, FailingTransport&) {
    ClientInfo info;
    info.node = 7;
    info.response_ring = {7, 1, 1, 4096, 8192};
    info.response_ring_bytes = 4096;
    auto refused = [&](uint32_t replaces, bool trailing, const std::string& why) {
      rpc::Writer w(rpc.payload_buffer());
      put_setup_request(info, replaces, w);
      if (trailing) w.put<uint32_t>(0xdead);
      auto r = rpc.call(s.rpc_nodes[0], kSetupRpc, w.size());
      if (r.is_ok() || r.status().message().find(why) == std::string::npos) {
        s.failures.fail("not refused with '" + why + "': " + r.status().to_string());
      }
    };
    refused(kNoConnection, true, "test setup: trailing bytes");
    {
      rpc::Writer w(rpc.payload_buffer());
      put_client_info(info, w);
      auto r = rpc.call(s.rpc_nodes[0], kSetupRpc, w.size());
      if (r.is_ok() || r.status().message().find("test setup: truncated") == std::string::npos) {
        s.failures.fail("a request without its replaced connection was not refused: " + r.status().to_string());
      }
    }
    // Naming a connection that is not the asker's (none, a free slot, and
    // the caller's own, asked for with another response ring: another
    // client the server knows by the same name) retires nothing; the new
    // connection is accepted all the same.
    for (uint32_t replaces : {999u, 3u, 0u}) {
      rpc::Writer w(rpc.payload_buffer());
      info.node = 1000 + replaces;  // the server names the asker by where the RPC came from
      info.response_ring.node = info.node;
      put_setup_request(info, replaces, w);
      if (auto r = rpc.call(s.rpc_nodes[0], kSetupRpc, w.size()); !r.is_ok()) {
        s.failures.fail("replacing connection " + std::to_string(replaces) + ": " + r.status().to_string());
      }
    }
    if (!who(c, s.rpc_nodes[0], "still").is_ok()) s.failures.fail("the caller's connection was disturbed");
  });
  BOOST_TEST(s.mailboxes[0]->stats().retired == 0u);
}

// A connection its worker dropped already (here: the client retired it,
// then names it again) is not retired twice, and the client reconnects.
BOOST_AUTO_TEST_CASE(replacing_a_connection_already_gone_still_connects) {
  Servers s;
  s.run_client([&s](MailboxCaller& c, rpc::RpcClient& rpc, FailingTransport& failing) {
    failing.fail_next = true;
    if (who(c, s.rpc_nodes[0], "lost").is_ok()) return s.failures.fail("a call whose WRITE failed succeeded");
    if (!who(c, s.rpc_nodes[0], "reconnected").is_ok()) return s.failures.fail("no reconnection");
    // Connection 0, the first, is retired by now; name it again.
    rpc::Writer w(rpc.payload_buffer());
    put_setup_request(c.client_info(0), 0, w);
    if (auto r = rpc.call(s.rpc_nodes[0], kSetupRpc, w.size()); !r.is_ok()) {
      s.failures.fail("naming a retired connection refused the set-up: " + r.status().to_string());
    }
  });
  BOOST_TEST(s.mailboxes[0]->stats().retired == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus::messaging
