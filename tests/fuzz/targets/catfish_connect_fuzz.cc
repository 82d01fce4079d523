// Fuzz target: Catfish's connect RPC (core/index/catfish/connect_rpc.cc):
// the request decoder a server runs on any client's connect request
// (get_client_info), the answer decoder a client runs on the server's
// reply (get_connect_answer), and the server's connect handler
// (CatfishServer::serve_connects: decode, claim a connection slot, answer)
// behind a real RpcServer on the fake fabric. The first byte picks which.
// What a decoder accepts must pass the checks connect_rpc.h promises and
// encode back to its bytes; every connect request gets an answer, and an
// OK answer must decode on the client side.
#include <vector>

#include "core/index/catfish/connect_rpc.h"
#include "core/rpc/rpc_server.h"
#include "tests/fuzz/support/catfish_fixture.h"
#include "tests/fuzz/support/rpc_peer.h"

using namespace locus;
using namespace locus::catfish;

namespace {

constexpr NodeId kClient = 5;
constexpr uint32_t kMaxMessage = 512;

void check_ring_region(const RemoteRegion& r, uint32_t ring_bytes) {
  FUZZ_CHECK(ring_bytes % kMessageAlignBytes == 0 && ring_bytes >= 2 * kMessageOverheadBytes &&
                 ring_bytes <= kMaxRingBytes,
             "ring of %u bytes accepted", ring_bytes);
  FUZZ_CHECK(r.length >= uint64_t{ring_bytes} + kControlBytes && r.base_addr + r.length >= r.base_addr,
             "ring region accepted");
}

void decode_request(std::span<const std::byte> in) {
  rpc::Reader r(in);
  auto info = get_client_info(r);
  if (!info.is_ok()) {
    FUZZ_CHECK(info.status().code() == StatusCode::kInvalidArgument, "%s", info.status().to_string().c_str());
    return;
  }
  FUZZ_CHECK(info->node != kInvalidNode && info->response_ring.node == info->node, "client node");
  check_ring_region(info->response_ring, info->response_ring_bytes);
  std::vector<std::byte> out(in.size() + 64);
  rpc::Writer w(out);
  put_client_info(*info, w);
  FUZZ_CHECK(w.ok() && w.size() == in.size() && std::memcmp(out.data(), in.data(), in.size()) == 0,
             "request does not encode back");
}

void decode_answer(std::span<const std::byte> in) {
  rpc::Reader r(in);
  auto a = get_connect_answer(r);
  if (!a.is_ok()) {
    FUZZ_CHECK(a.status().code() == StatusCode::kCorruption, "%s", a.status().to_string().c_str());
    return;
  }
  const ConnectionInfo& c = a->connection;
  FUZZ_CHECK(c.server != kInvalidNode && c.request_ring.node == c.server && c.heartbeat_interval_ns >= 0,
             "connection");
  check_ring_region(c.request_ring, c.request_ring_bytes);
  std::vector<std::byte> out(in.size() + 64);
  rpc::Writer w(out);
  put_connect_answer(*a, w);
  FUZZ_CHECK(w.ok() && w.size() == in.size() && std::memcmp(out.data(), in.data(), in.size()) == 0,
             "answer does not encode back");
}

// Up to three connect requests (u16 length, bytes) to a served CatfishServer.
void serve(fuzz::InputStream& in) {
  fuzz::FakeFabric fabric;
  fabric.add_node(fuzz::kCatfishConnectNode);
  fuzz::FakeTransport& client = fabric.add_node(kClient);
  auto server = fuzz::make_catfish_server(fabric);
  auto rpc = fuzz::make_rpc_server(fabric, fuzz::kCatfishConnectNode, kMaxMessage, 2, 4);
  FUZZ_CHECK(server->serve_connects(*rpc).is_ok(), "serve_connects");

  fuzz::RpcRequester requester(client, kMaxMessage);
  for (int n = 0; n < 3 && !in.empty(); ++n) {
    const auto payload = in.bytes(in.get<uint16_t>() % (kMaxMessage - rpc::kHeaderBytes));
    requester.send(fuzz::kCatfishConnectNode, kConnectRpc, static_cast<uint64_t>(n) + 1, payload);
    rpc->serve_once(0);
    if (const auto body = requester.answer(static_cast<uint64_t>(n) + 1)) {
      rpc::Reader r(*body);
      auto a = get_connect_answer(r);
      FUZZ_CHECK(a.is_ok(), "the server's own answer does not decode: %s", a.status().to_string().c_str());
      FUZZ_CHECK(a->connection.server == fuzz::kCatfishWorker, "answer names worker %u", a->connection.server);
    }
  }
  // Let the worker time out the connections that never say hello.
  fabric.clock().advance(20 * kSecond);
  server->messaging().serve_once(0, 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto in = fuzz::as_bytes(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: decode_request(in); break;
    case 1: decode_answer(in); break;
    case 2: {
      fuzz::InputStream s(data + 1, size - 1);
      serve(s);
      break;
    }
  }
  return 0;
}
