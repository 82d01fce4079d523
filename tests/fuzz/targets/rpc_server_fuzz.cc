// Fuzz target: the RPC server's request framing and dispatch
// (core/rpc/rpc_server.cc, RpcServer::on_request) and the bounds-checked
// Reader/Writer handlers use. A client node SENDs the fuzzed frames to a
// server on the fake fabric; the server must answer each with a
// well-formed response or count it as rejected, and never read or write
// outside its buffers.
//
// Input: a sequence of frames, each
//   u8 flags   bit 0: fix the header up (magic, kind, payload length) so the
//              frame reaches a handler; bits 4-7: the type (fixed-up frames)
//   u16 length (mod 320: a little more than the server's 256-byte limit)
//   bytes      the frame as sent (header included)
// Handlers: 1 echoes every blob it reads; 2 fails; 3 writes u16 count
// words (overflowing the response on purpose).
#include <vector>

#include "core/rpc/rpc_server.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"
#include "tests/fuzz/support/rpc_peer.h"

using namespace locus;

namespace {
constexpr NodeId kServer = 0, kClient = 1;
constexpr uint32_t kMaxMessage = 256;
constexpr uint32_t kClientRecvs = 8;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  fuzz::FakeFabric fabric;
  fabric.add_node(kServer);
  fuzz::FakeTransport& client = fabric.add_node(kClient);
  auto server = fuzz::make_rpc_server(fabric, kServer, kMaxMessage, 4, 8);
  rpc::RpcServer& rpc = *server;
  FUZZ_CHECK(rpc.handle(1, "echo", [](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
                  std::string_view s;
                  while (!r.at_end() && r.blob(&s)) w.blob(s);
                  return r.ok() ? Status() : invalid_argument("echo: malformed");
                }).is_ok(), "handle");
  FUZZ_CHECK(rpc.handle(2, "fail", [](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
                  w.put<uint64_t>(7);
                  return internal_error("fails on purpose");
                }).is_ok(), "handle");
  FUZZ_CHECK(rpc.handle(3, "fill", [](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
                  uint16_t n = 0;
                  if (!r.get(&n)) return invalid_argument("fill: malformed");
                  for (uint32_t i = 0; i < n; ++i) w.put<uint64_t>(i);
                  return Status();
                }).is_ok(), "handle");

  // The client: one send buffer and kClientRecvs response buffers.
  std::vector<std::byte> mem(kMaxMessage * 2 + kClientRecvs * kMaxMessage);
  auto region = client.register_memory(mem.data(), mem.size(), kLocalOnly);
  FUZZ_CHECK(region.is_ok(), "register");
  std::byte* send_buf = mem.data();
  auto post_recv = [&](uint64_t i) {
    RecvRequest r;
    r.wr_id = i;
    r.local = {mem.data() + 2 * kMaxMessage + i * kMaxMessage, kMaxMessage, region->lkey};
    FUZZ_CHECK(client.post_recv(std::span<const RecvRequest>(&r, 1)).is_ok(), "post_recv");
  };
  for (uint64_t i = 0; i < kClientRecvs; ++i) post_recv(i);

  uint64_t sent = 0, responses = 0;
  for (int frames = 0; frames < 64 && !in.empty(); ++frames) {
    const auto flags = in.get<uint8_t>();
    const uint32_t len = in.get<uint16_t>() % (kMaxMessage + 64);
    const auto body = in.bytes(len);
    uint32_t n = static_cast<uint32_t>(body.size());
    if (n > 2 * kMaxMessage) n = 2 * kMaxMessage;
    std::memcpy(send_buf, body.data(), n);
    if ((flags & 1) != 0) {
      if (n < rpc::kHeaderBytes) n = rpc::kHeaderBytes;
      rpc::MessageHeader h = n <= body.size() ? rpc::read_header(send_buf) : rpc::MessageHeader{};
      h.magic = rpc::kMagic;
      h.kind = rpc::kKindRequest;
      h.type = flags >> 4;
      h.payload_bytes = n - rpc::kHeaderBytes;
      rpc::write_header(send_buf, h);
    }
    WorkRequest wr;
    wr.wr_id = 1000 + frames;
    wr.op = Opcode::kSend;
    wr.remote.node = kServer;
    wr.local = {send_buf, n, region->lkey};
    FUZZ_CHECK(client.post(std::span<const WorkRequest>(&wr, 1)).is_ok(), "client post");
    ++sent;
    rpc.serve_once(0);
    // Every response that reached the client is well formed.
    Completion cs[16];
    size_t got;
    while ((got = client.poll(cs)) > 0) {
      for (size_t i = 0; i < got; ++i) {
        if (cs[i].op != Opcode::kRecv) continue;
        FUZZ_CHECK(cs[i].ok() && cs[i].byte_len >= rpc::kHeaderBytes && cs[i].byte_len <= kMaxMessage,
                   "response of %u bytes", cs[i].byte_len);
        const std::byte* at = mem.data() + 2 * kMaxMessage + cs[i].wr_id * kMaxMessage;
        const rpc::MessageHeader h = rpc::read_header(at);
        FUZZ_CHECK(h.magic == rpc::kMagic && h.kind == rpc::kKindResponse &&
                       h.payload_bytes == cs[i].byte_len - rpc::kHeaderBytes,
                   "malformed response");
        ++responses;
        post_recv(cs[i].wr_id);
      }
    }
  }
  const rpc::RpcServerStats st = rpc.stats();
  FUZZ_CHECK(st.requests + st.rejected() <= sent, "more requests counted than sent");
  FUZZ_CHECK(responses <= sent, "more responses than requests");
  return 0;
}
