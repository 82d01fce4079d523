// Fuzz target: the Catfish messaging worker's request path
// (core/index/catfish/messaging_server_datapath.cc: ring scan, validation,
// dispatch, segmented responses, head and heartbeat writes, drop and
// reclaim) and the R-tree handlers behind it (catfish_server.cc: search,
// insert, delete) on the fake fabric. The client side is played by the
// target: it writes into its request ring what the input says - well-formed
// messages through a RingWriter, or raw bytes anywhere in the ring and its
// control words - and consumes responses from its own ring, publishing its
// head. The worker must drop a connection whose ring breaks the format,
// never read or write outside the rings, and leave its tree consistent.
//
// Input: operations until the input ends, each a u8 op (mod 4):
//   0 message: u8 type (mod 5), u8 flags (bit 0: one-way), u16 payload
//     length (mod 512), payload bytes
//   1 raw write: u16 offset (mod ring + control bytes), u8 length, bytes
//   2 serve: the worker runs one round
//   3 consume: the client reads its responses and publishes its head
#include <vector>

#include "tests/fuzz/support/catfish_fixture.h"

using namespace locus;
using namespace locus::catfish;

namespace {
constexpr NodeId kClient = 5;
constexpr uint32_t kResponseRing = 1024;
constexpr uint32_t kClientRecvs = 64;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  fuzz::FakeFabric fabric;
  fuzz::FakeTransport& client = fabric.add_node(kClient);
  auto server = fuzz::make_catfish_server(fabric);
  MessagingServer& messaging = server->messaging();

  // The client's response ring and control words (the server writes there),
  // 8-byte aligned, and receives for the WRITE_WITH_IMM notifications.
  std::vector<uint64_t> ring_words((kResponseRing + kControlBytes) / 8);
  auto* ring = reinterpret_cast<std::byte*>(ring_words.data());
  auto ring_region = client.register_memory(ring, kResponseRing + kControlBytes, kRemoteWrite);
  FUZZ_CHECK(ring_region.is_ok(), "register");
  std::vector<uint64_t> recv_words(1);
  auto recv_region = client.register_memory(recv_words.data(), 8, kLocalOnly);
  FUZZ_CHECK(recv_region.is_ok(), "register");
  auto post_recvs = [&] {
    while (client.posted_recvs() < kClientRecvs) {
      RecvRequest r;
      r.wr_id = 1;
      r.local = {recv_words.data(), 8, recv_region->lkey};
      FUZZ_CHECK(client.post_recv(std::span<const RecvRequest>(&r, 1)).is_ok(), "post_recv");
    }
    Completion cs[32];
    while (client.poll(cs) > 0) {
    }
  };
  post_recvs();

  ClientInfo info;
  info.node = kClient;
  info.response_ring = ring_region->remote();
  info.response_ring_bytes = kResponseRing;
  auto conn = server->accept(info);
  FUZZ_CHECK(conn.is_ok(), "%s", conn.status().to_string().c_str());
  // The request ring as the server registered it: the target writes there
  // directly (what the client's RDMA WRITEs would do).
  const fuzz::FakeTransport* worker = fabric.node(fuzz::kCatfishWorker);
  const Region* request_region = worker->region(conn->request_ring.region);
  FUZZ_CHECK(request_region != nullptr, "request ring region");
  std::byte* request_ring = request_region->base;
  const uint32_t request_bytes = conn->request_ring_bytes;
  const uint64_t request_region_bytes = request_region->length;

  RingWriter writer;
  writer.reset(request_bytes);
  RingReader responses;
  responses.reset(ring, kResponseRing);
  auto request_head = [&] {
    uint64_t head;
    std::memcpy(&head, ring + kResponseRing + kHeadWordOffset, 8);
    return head;
  };
  std::vector<std::byte> payload;
  uint64_t next_id = 1;
  // A client that forges its response head lets the server overwrite
  // responses it has not read: its own ring may then look bad to it.
  bool head_forged = false;
  for (int n = 0; n < 96 && !in.empty(); ++n) {
    switch (in.get<uint8_t>() % 4) {
      case 0: {
        MessageHeader h;
        h.type = in.get<uint8_t>() % 5;
        const auto flags = in.get<uint8_t>();
        h.kind = (flags & 1) != 0 ? MessageKind::kOneWay : MessageKind::kRequest;
        h.request_id = next_id++;
        const auto body = in.bytes(in.get<uint16_t>() % 512);
        h.payload_bytes = static_cast<uint32_t>(body.size());
        const uint32_t size_bytes = message_bytes(h.payload_bytes);
        const uint64_t head = request_head();
        if (size_bytes > request_bytes || !writer.head_valid(head)) break;
        const auto p = writer.place(size_bytes, head);
        if (!p) break;
        if (p->wrap) {
          const uint64_t w = wrap_word(p->wrap_seq, p->wrap_bytes);
          std::memcpy(request_ring + p->wrap_offset, &w, 8);
        }
        h.seq = p->seq;
        if (!body.empty()) std::memcpy(request_ring + p->offset + kMessageHeaderBytes, body.data(), body.size());
        encode_message(request_ring + p->offset, h);
        writer.commit(*p, size_bytes);
        break;
      }
      case 1: {
        const uint32_t at = in.get<uint16_t>() % request_region_bytes;
        const auto bytes = in.bytes(in.get<uint8_t>());
        const size_t len = std::min<size_t>(bytes.size(), request_region_bytes - at);
        if (len > 0) std::memcpy(request_ring + at, bytes.data(), len);
        if (at < request_bytes + kHeadWordOffset + 8 && at + len > request_bytes + kHeadWordOffset) head_forged = true;
        break;
      }
      case 2:
        messaging.serve_once(0, 0);
        break;
      case 3: {
        for (int k = 0; k < 64; ++k) {
          RingReader::View v;
          Status problem;
          const RingReader::Poll p = responses.poll(&v, &problem);
          // The server's own writes must always be well formed.
          FUZZ_CHECK(head_forged || p != RingReader::Poll::kBad, "server wrote a bad response: %s", problem.to_string().c_str());
          if (p != RingReader::Poll::kMessage) break;
          responses.consume(v);
        }
        const uint64_t consumed = responses.consumed_bytes();
        std::memcpy(request_ring + request_bytes + kHeadWordOffset, &consumed, 8);
        break;
      }
    }
    post_recvs();
  }
  messaging.serve_once(0, 0);
  FUZZ_CHECK(server->check_invariants().is_ok(), "tree invariants: %s", server->check_invariants().to_string().c_str());
  return 0;
}
