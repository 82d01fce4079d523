// Fuzz target: the mailbox set-up RPC (core/messaging/mailbox.h), which a
// server answers for any client, hostile or not: accept_request decodes a
// ClientInfo and the connection it replaces, retires that connection if it
// is the asker's, and claims a slot, behind a real RpcServer on the fake
// fabric, with a real MessagingServer (one event-mode worker, three
// slots). Up to six requests (u16 length, bytes) come from one client
// node. Every request gets an answer; an OK answer decodes as a
// ConnectionInfo naming the worker; a connection is retired only when the
// request named one this client holds with its own response ring (so never
// more retirements than accepted connections); and the worker then serves
// on, reclaiming what it retired and what never said hello.
#include <vector>

#include "core/messaging/mailbox.h"
#include "core/messaging/wire.h"
#include "core/rpc/rpc_server.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"
#include "tests/fuzz/support/rpc_peer.h"

using namespace locus;
using namespace locus::messaging;

namespace {

constexpr NodeId kServer = 0;
constexpr NodeId kWorker = 1;
constexpr NodeId kClient = 5;
constexpr uint32_t kMaxMessage = 512;
constexpr uint16_t kSetupRpc = 1;

void serve(fuzz::InputStream& in) {
  fuzz::FakeFabric fabric;
  fabric.add_node(kServer);
  fabric.add_node(kWorker);
  fuzz::FakeTransport& client = fabric.add_node(kClient);
  MessagingServerOptions o;
  o.mode = ServerMode::kEvent;
  o.connections_per_worker = 3;
  o.request_ring_bytes = 1024;
  o.segment_bytes = 256;
  o.max_response_bytes = 256;
  o.heartbeat_interval_ns = 0;
  auto mailbox = MessagingServer::create({fabric.env(kWorker)}, o);
  FUZZ_CHECK(mailbox.is_ok(), "%s", mailbox.status().to_string().c_str());
  MessagingServer& m = **mailbox;
  auto rpc = fuzz::make_rpc_server(fabric, kServer, kMaxMessage, 2, 4);
  uint64_t accepted = 0;
  FUZZ_CHECK(rpc->handle(kSetupRpc, "setup", [&](const rpc::RequestContext& ctx, rpc::Reader& r, rpc::Writer& w)
                                                 -> Status {
    LOCUS_ASSIGN_OR_RETURN(const ConnectionInfo conn, accept_request(m, ctx.client, r, "fuzz setup"));
    ++accepted;
    put_connection_info(conn, w);
    return Status();
  }).is_ok(), "handle");

  fuzz::RpcRequester requester(client, kMaxMessage);
  for (int n = 0; n < 6 && !in.empty(); ++n) {
    const auto payload = in.bytes(in.get<uint16_t>() % (kMaxMessage - rpc::kHeaderBytes));
    requester.send(kServer, kSetupRpc, static_cast<uint64_t>(n) + 1, payload);
    rpc->serve_once(0);
    if (const auto body = requester.answer(static_cast<uint64_t>(n) + 1)) {
      rpc::Reader r(*body);
      auto c = get_connection_info(r, "fuzz answer");
      FUZZ_CHECK(c.is_ok() && r.at_end(), "the server's own answer does not decode: %s",
                 c.status().to_string().c_str());
      FUZZ_CHECK(c->server == kWorker && c->connection_id < 3, "answer names worker %u, slot %u", c->server,
                 c->connection_id);
    }
    // The worker scans between requests: retired slots are reclaimed.
    m.serve_once(0, 0);
  }
  FUZZ_CHECK(m.stats().retired <= accepted, "%llu retired of %llu accepted",
             static_cast<unsigned long long>(m.stats().retired), static_cast<unsigned long long>(accepted));
  // Connections that never say hello time out; the worker serves on.
  fabric.clock().advance(20 * kSecond);
  m.serve_once(0, 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream s(data, size);
  serve(s);
  return 0;
}
