// Fuzz target: the RPC client's response framing (core/rpc/rpc_client.cc,
// RpcClient::call): stale, truncated, garbled and error responses, and
// responses from the wrong peer. A scripted server on the fake fabric
// answers each request with fuzzed frames; the client must return either
// an error or a body that lies inside what arrived, and never hang (the
// fake clock makes its timeout immediate).
//
// Input: calls until the input ends, each
//   u8 type, u8 request payload length (bytes follow)
//   u8 response count (mod 4), then per response:
//     u8 flags  bit 0: fix the header (magic, kind, request id, length);
//               bit 1: send from a third node instead of the server;
//               bits 4-7: the status code of a fixed-up header
//     u16 length (mod 320), the frame bytes
#include <vector>

#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"

using namespace locus;

namespace {
constexpr NodeId kServer = 0, kClient = 1, kStranger = 2;
constexpr uint32_t kMaxMessage = 256;
constexpr uint32_t kServerRecvs = 8;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  fuzz::FakeFabric fabric;
  fuzz::FakeTransport& server = fabric.add_node(kServer);
  fabric.add_node(kClient);
  fuzz::FakeTransport& stranger = fabric.add_node(kStranger);

  // The scripted server (and a stranger sharing its memory layout).
  std::vector<std::byte> smem(kMaxMessage * (1 + kServerRecvs) + 2 * kMaxMessage);
  auto sregion = server.register_memory(smem.data(), smem.size(), kLocalOnly);
  auto xregion = stranger.register_memory(smem.data(), smem.size(), kLocalOnly);
  FUZZ_CHECK(sregion.is_ok() && xregion.is_ok(), "register");
  auto post_server_recv = [&](uint64_t i) {
    RecvRequest r;
    r.wr_id = i;
    r.local = {smem.data() + 2 * kMaxMessage + i * kMaxMessage, kMaxMessage, sregion->lkey};
    FUZZ_CHECK(server.post_recv(std::span<const RecvRequest>(&r, 1)).is_ok(), "post_recv");
  };
  for (uint64_t i = 0; i < kServerRecvs; ++i) post_server_recv(i);

  server.on_message = [&](NodeId from) {
    Completion cs[8];
    const size_t n = server.poll(cs);
    uint64_t request_id = 0;
    for (size_t i = 0; i < n; ++i) {
      if (cs[i].op != Opcode::kRecv) continue;
      if (cs[i].ok() && cs[i].byte_len >= rpc::kHeaderBytes) {
        request_id = rpc::read_header(smem.data() + 2 * kMaxMessage + cs[i].wr_id * kMaxMessage).request_id;
      }
      post_server_recv(cs[i].wr_id);
    }
    const uint32_t count = in.get<uint8_t>() % 4;
    for (uint32_t k = 0; k < count; ++k) {
      const auto flags = in.get<uint8_t>();
      const uint32_t len = in.get<uint16_t>() % (kMaxMessage + 64);
      const auto body = in.bytes(len);
      std::byte* out = smem.data();
      uint32_t bytes = static_cast<uint32_t>(body.size());
      std::memcpy(out, body.data(), bytes);
      if ((flags & 1) != 0) {
        if (bytes < rpc::kHeaderBytes) bytes = rpc::kHeaderBytes;
        rpc::MessageHeader h;
        h.kind = rpc::kKindResponse;
        h.status = flags >> 4;
        h.request_id = request_id;
        h.payload_bytes = bytes - rpc::kHeaderBytes;
        rpc::write_header(out, h);
      }
      fuzz::FakeTransport& sender = (flags & 2) != 0 ? stranger : server;
      WorkRequest wr;
      wr.wr_id = 1;
      wr.op = Opcode::kSend;
      wr.remote.node = from;
      wr.local = {out, bytes, ((flags & 2) != 0 ? xregion : sregion)->lkey};
      FUZZ_CHECK(sender.post(std::span<const WorkRequest>(&wr, 1)).is_ok(), "server post");
    }
    Completion drain[8];
    while (server.poll(drain) > 0 || stranger.poll(drain) > 0) {
    }
  };

  Endpoint endpoint(fabric.env(kClient), 10 * kMillisecond);
  rpc::RpcClientOptions options;
  options.max_message_bytes = kMaxMessage;
  options.recv_buffers = 4;
  auto client = rpc::RpcClient::create(endpoint, options);
  FUZZ_CHECK(client.is_ok(), "%s", client.status().to_string().c_str());
  for (int calls = 0; calls < 32 && !in.empty(); ++calls) {
    const auto type = in.get<uint8_t>();
    const auto payload = in.bytes(in.get<uint8_t>());
    auto r = (*client)->call(kServer, type, payload);
    if (!r.is_ok()) continue;
    // The body must be readable in full (ASan checks) and within the limit.
    FUZZ_CHECK(r->size() <= kMaxMessage - rpc::kHeaderBytes, "body of %zu bytes", r->size());
    uint64_t sum = 0;
    for (std::byte b : *r) sum += static_cast<uint8_t>(b);
    (void)sum;
  }
  const rpc::RpcClientStats& st = (*client)->stats();
  FUZZ_CHECK(st.error_responses + st.timeouts <= st.calls, "stats");
  return 0;
}
