// Fuzz target: NessieSD/NessieHY's server thread (core/index/nessie/
// requests.cc: ring notification, ring scan and validation, request
// decoding, the store's gets, puts and deletes, responses, ring drop and
// start-over) on the fake fabric, with a small node so puts migrate and
// run out of room. The target plays two clients, each granted a ring: it
// writes well-formed requests through a RingWriter with a WRITE_WITH_IMM
// (what NessieClient does), raw bytes anywhere in the request rings with
// or without a notification (a notification may name any ring), asks for
// rings to start over, and reads its responses.
//
// Invariants: the server never reads or writes outside its rings (ASan,
// the fabric's checks), a response is a well-formed kEnd or kError, and,
// while only well-formed requests were written, a get answered kEnd
// returns a value some request put for that key (the store never makes a
// value up).
//
// Input: operations until the input ends, each a u8 op (mod 5), a u8
// client (mod 2) and:
//   0 request: u8 type (mod 5), u8 kind (mod 6), u8 key (mod 24), u8 value
//     length (mod 80), value bytes; written and notified
//   1 raw write: u16 offset (mod the ring), u8 length, bytes, u8 notify
//     (bit 0: notify, bits 1-7: the ring number it names)
//   2 serve: completions taken, then one round of the server thread
//   3 consume: the client reads what responses it has
//   4 start over: the client empties its response ring and asks for it
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/index/nessie/driver.h"
#include "core/index/nessie/node.h"
#include "core/index/nessie/node_store.h"
#include "core/index/nessie/requests.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"

using namespace locus;
using namespace locus::nessie;

namespace {
constexpr NodeId kTablesNode = 0;
constexpr NodeId kServerThread = 1;
constexpr NodeId kFirstClient = 4;
constexpr uint32_t kClients = 2;
constexpr uint32_t kKeyBytes = 16;
constexpr uint32_t kValueBytes = 64;

struct FuzzClient {
  NodeId node = 0;
  uint32_t ring = kNoRing;
  RemoteRegion requests;  // the server's request ring for this client (a region)
  std::vector<uint64_t> response_words;
  Region response_region;
  std::vector<uint64_t> staging_words;  // what its WRITEs send
  Region staging_region;
  std::vector<uint64_t> recv_words;
  Region recv_region;
  ring::RingWriter writer;
  ring::RingReader reader;
  std::map<uint64_t, std::string> gets_in_flight;  // request id -> key
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  fuzz::FakeFabric fabric;
  fabric.add_node(kTablesNode);
  fabric.add_node(kServerThread);

  NessieConfig config;
  config.mode = "server";
  config.key_bytes = kKeyBytes;
  config.client_data_entries = 16;
  config.index_entries = 24;  // few index entries: puts migrate and fill up
  config.max_migrate_depth = 2;
  std::string bad_key;
  auto g = make_geometry(config, 1, 8, kClients, kValueBytes, &bad_key);
  FUZZ_CHECK(g.is_ok(), "%s: %s", bad_key.c_str(), g.status().to_string().c_str());
  auto node = NessieNode::create(fabric.env(kTablesNode), 0, *g);
  FUZZ_CHECK(node.is_ok(), "%s", node.status().to_string().c_str());
  auto server = RequestServer::create(fabric.env(kServerThread), *g);
  FUZZ_CHECK(server.is_ok(), "%s", server.status().to_string().c_str());
  (*node)->set_requests({server->get()});
  NodeStore store(**node, config.max_migrate_depth);
  const uint32_t ring_bytes = g->ring_bytes;

  FuzzClient clients[kClients];
  for (uint32_t c = 0; c < kClients; ++c) {
    FuzzClient& fc = clients[c];
    fc.node = kFirstClient + c;
    fuzz::FakeTransport& t = fabric.add_node(fc.node);
    fc.response_words.assign(ring_bytes / 8, 0);
    fc.staging_words.assign(ring_bytes / 8 + 1, 0);
    fc.recv_words.assign(1, 0);
    auto resp = t.register_memory(fc.response_words.data(), ring_bytes, kRemoteWrite);
    auto stage = t.register_memory(fc.staging_words.data(), fc.staging_words.size() * 8, kLocalOnly);
    auto recv = t.register_memory(fc.recv_words.data(), 8, kLocalOnly);
    FUZZ_CHECK(resp.is_ok() && stage.is_ok() && recv.is_ok(), "register");
    fc.response_region = *resp;
    fc.staging_region = *stage;
    fc.recv_region = *recv;
    const RingGrant grant = (*server)->grant(remote_at(fc.response_region.remote(), 0));
    FUZZ_CHECK(grant.ring != kNoRing, "grant");
    fc.ring = grant.ring;
    fc.requests = grant.requests;
    fc.writer.reset(ring_bytes);
    fc.reader.reset(reinterpret_cast<std::byte*>(fc.response_words.data()), ring_bytes);
  }
  auto post_recvs = [&](FuzzClient& fc) {
    fuzz::FakeTransport& t = *fabric.node(fc.node);
    while (t.posted_recvs() < 16) {
      RecvRequest r;
      r.wr_id = 1;
      r.local = {fc.recv_words.data(), 8, fc.recv_region.lkey};
      FUZZ_CHECK(t.post_recv(std::span<const RecvRequest>(&r, 1)).is_ok(), "post_recv");
    }
    Completion cs[32];
    while (t.poll(cs) > 0) {
    }
  };
  // A WRITE (WRITE_WITH_IMM if notify) of `bytes` at `offset` of the ring.
  auto write_ring = [&](FuzzClient& fc, uint32_t offset, const void* bytes, uint32_t len, bool notify, uint32_t imm) {
    std::memcpy(fc.staging_words.data(), bytes, len);
    WorkRequest w;
    w.wr_id = 7;
    w.op = notify ? Opcode::kWriteWithImm : Opcode::kWrite;
    w.imm = imm;
    w.remote = remote_at(fc.requests, offset);  // each ring is a region of its own
    w.local = {fc.staging_words.data(), len, fc.staging_region.lkey};
    (void)fabric.node(fc.node)->post(std::span<const WorkRequest>(&w, 1));
    post_recvs(fc);
  };

  std::map<std::string, std::set<std::string>> written;  // key -> every value a request put
  // Raw bytes may happen to form a put of a value the map does not know.
  bool raw_written = false;
  uint64_t next_id = 1;
  for (int n = 0; n < 128 && !in.empty(); ++n) {
    const uint8_t op = in.get<uint8_t>() % 5;
    FuzzClient& fc = clients[in.get<uint8_t>() % kClients];
    switch (op) {
      case 0: {
        ring::MessageHeader h;
        h.type = in.get<uint8_t>() % 5;
        h.kind = static_cast<ring::MessageKind>(in.get<uint8_t>() % 6);
        h.request_id = next_id++;
        const std::string key = "key" + std::to_string(in.get<uint8_t>() % 24);
        const auto value = in.bytes(in.get<uint8_t>() % 80);
        std::vector<std::byte> payload(4 + key.size() + (h.type == kRequestPut ? value.size() : 0));
        const uint32_t key_len = static_cast<uint32_t>(key.size());
        std::memcpy(payload.data(), &key_len, 4);
        std::memcpy(payload.data() + 4, key.data(), key.size());
        if (h.type == kRequestPut && !value.empty())
          std::memcpy(payload.data() + 4 + key.size(), value.data(), value.size());
        h.payload_bytes = static_cast<uint32_t>(payload.size());
        const uint32_t bytes = ring::message_bytes(h.payload_bytes);
        // The server consumed what it answered; a client here may run ahead.
        const auto p = fc.writer.place(bytes, fc.writer.tail_bytes());
        if (!p) break;
        if (p->wrap) {
          const uint64_t w = ring::wrap_word(p->wrap_seq, p->wrap_bytes);
          write_ring(fc, p->wrap_offset, &w, 8, false, 0);
        }
        h.seq = p->seq;
        std::vector<std::byte> message(bytes);
        if (!payload.empty()) std::memcpy(message.data() + ring::kMessageHeaderBytes, payload.data(), payload.size());
        ring::encode_message(message.data(), h);
        fc.writer.commit(*p, bytes);
        if (h.type == kRequestPut && h.kind == ring::MessageKind::kRequest) {
          written[key].insert(std::string(reinterpret_cast<const char*>(value.data()), value.size()));
        }
        if (h.type == kRequestGet) fc.gets_in_flight[h.request_id] = key;
        write_ring(fc, p->offset, message.data(), bytes, true, fc.ring);
        break;
      }
      case 1: {
        const uint32_t at = in.get<uint16_t>() % ring_bytes;
        const auto bytes = in.bytes(in.get<uint8_t>());
        const uint8_t notify = in.get<uint8_t>();
        const uint32_t len = static_cast<uint32_t>(std::min<size_t>(bytes.size(), ring_bytes - at));
        if (len > 0) write_ring(fc, at, bytes.data(), len, (notify & 1) != 0, notify >> 1);
        raw_written = raw_written || len > 0;
        break;
      }
      case 2:
        (*server)->poll_completions();
        (void)(*server)->serve_round(store);
        break;
      case 3: {
        for (int k = 0; k < 8; ++k) {
          ring::RingReader::View v;
          Status problem;
          const auto polled = fc.reader.poll(&v, &problem);
          if (polled != ring::RingReader::Poll::kMessage) break;
          FUZZ_CHECK(v.header.kind == ring::MessageKind::kEnd || v.header.kind == ring::MessageKind::kError,
                     "response of kind %d", static_cast<int>(v.header.kind));
          auto get = fc.gets_in_flight.find(v.header.request_id);
          if (!raw_written && get != fc.gets_in_flight.end() && v.header.kind == ring::MessageKind::kEnd &&
              v.header.type == kRequestGet) {
            const std::string value(reinterpret_cast<const char*>(v.payload.data()), v.payload.size());
            FUZZ_CHECK(written[get->second].count(value) == 1, "get of %s returned %zu bytes never put",
                       get->second.c_str(), value.size());
          }
          if (get != fc.gets_in_flight.end()) fc.gets_in_flight.erase(get);
          fc.reader.consume(v);
        }
        break;
      }
      case 4:
        std::memset(fc.response_words.data(), 0, ring_bytes);
        fc.reader.reset(reinterpret_cast<std::byte*>(fc.response_words.data()), ring_bytes);
        fc.writer.reset(ring_bytes);
        FUZZ_CHECK((*server)->reset(fc.ring, fc.node).is_ok(), "reset of the client's own ring");
        FUZZ_CHECK(!(*server)->reset(fc.ring + 100, fc.node).is_ok(), "reset of a ring never granted");
        break;
    }
  }
  const RequestServerStats& st = (*server)->stats();
  FUZZ_CHECK(st.bad_requests <= st.requests, "bad requests %llu of %llu",
             static_cast<unsigned long long>(st.bad_requests), static_cast<unsigned long long>(st.requests));
  return 0;
}
