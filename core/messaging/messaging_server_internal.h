// Internals of MessagingServer shared by its set-up and data-path files:
// a connection slot, a worker and the counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/messaging/messaging.h"

namespace locus::messaging {

// Send wr_ids carry kSendTag, the connection id (low 32 bits) and the
// send slot whose memory the WRITE reads (bits 32..47, slot + 1; 0: none);
// receives carry kRecvTag.
constexpr uint64_t kRecvTag = 1ULL << 63;
constexpr uint64_t kSendTag = 1ULL << 62;
constexpr uint32_t kNoSlot = 0;
inline uint64_t send_wr_id(uint32_t connection, uint32_t slot_tag) {
  return kSendTag | (uint64_t{slot_tag} << 32) | connection;
}
inline uint32_t wr_connection(uint64_t wr_id) { return static_cast<uint32_t>(wr_id); }
inline uint32_t wr_slot_tag(uint64_t wr_id) { return static_cast<uint32_t>((wr_id >> 32) & 0xFFFF); }

// Responses are posted without waiting for their WRITEs: each goes out of
// its own send slot (local memory the NIC reads until the WRITE completes),
// and completions are reaped lazily. At most this many sends are in flight
// per worker (also bounded by the send queue depth); a worker waits only
// when every slot is still in flight.
constexpr uint32_t kMaxSendsInFlight = 16;
// Of them, at most this many for one connection, so that a client whose
// WRITEs hang (a dead peer: its queue pair retries for seconds) holds a
// bounded share and the worker's other clients are served meanwhile.
constexpr uint32_t kMaxSlotsPerConnection = kMaxSendsInFlight / 4;
// Heartbeats are written from one of these buffers per round, each reused
// once every WRITE that read it completed; a connection whose last
// heartbeat is still in flight gets none that round. Their wr_ids carry
// slot tag kHeartbeatTag + buffer.
constexpr uint32_t kHeartbeatBuffers = 4;
constexpr uint32_t kHeartbeatTag = 0x8000;
// request_id of a kError that ends the connection rather than answering a call.
constexpr uint64_t kConnectionErrorId = UINT64_MAX;

// kAwaiting: accepted with await_first_message; its ring is read, nothing
// is written to its client until the first message makes it kConnected.
// kDropped: its worker reclaims it (MessagingServer::reclaim) on a scan
// once no WRITE to its client is in flight, and it turns kFree for the
// next accept().
enum SlotState : uint8_t { kFree, kClaimed, kAwaiting, kConnected, kDropped };
inline bool is_served(uint8_t state) { return state == kAwaiting || state == kConnected; }

struct MessagingServer::Connection {
  uint32_t id = 0;
  uint32_t worker = 0;
  std::atomic<uint8_t> state{kFree};
  // The request ring and its control word: one region per connection.
  AlignedBuffer memory;
  Region region;
  bool registered = false;
  std::byte* control = nullptr;  // the client's response-ring head lands here
  // Set by accept() before the state turns kConnected.
  NodeId client = kInvalidNode;
  RemoteRegion response_ring;
  uint32_t response_ring_bytes = 0;
  RingWriter writer;  // into the client's response ring
  // The worker's.
  RingReader reader;
  uint64_t published_head = 0;
  Nanos partial_since = -1;  // since when the message at the read position looks incomplete or malformed
  Nanos awaiting_since = -1;  // when the worker first saw it kAwaiting
  bool dirty = false;        // a WRITE_WITH_IMM named it (kEvent)
  // retire(): the client and response ring it was asked for (the ring's
  // address stored first); its worker retires the connection only if
  // they are still its own (kInvalidNode: none asked).
  std::atomic<NodeId> retire_for{kInvalidNode};
  std::atomic<uint64_t> retire_ring{0};
  bool send_failed = false;  // a WRITE to the client failed
  uint32_t sends_pending = 0;  // WRITEs to the client posted and not yet completed
  uint32_t slots_held = 0;     // send slots with WRITEs to the client in flight
  bool heartbeat_in_flight = false;
  // The rest of a response that could not be sent at once (no room in the
  // client's response ring, or the connection's share of send slots in
  // flight): sent by later scans, before any more of its requests are
  // read, so the worker never waits for one client. Grown on first use.
  std::vector<std::byte> outbox;
  size_t outbox_bytes = 0;     // payload bytes in it
  size_t outbox_sent = 0;      // of them, sent
  MessageHeader outbox_header; // type, request id, status (kind set per segment)
  bool outbox_error = false;   // a kError, else kCont ... kEnd segments
  bool outbox_pending = false;
  Nanos stalled_since = -1;    // since when the outbox has not moved
  Status send_error;
  Status problem;            // why it was last dropped (until accepted again); under problems_mu_
};

// Local memory one posted batch reads: the request ring's head word, a
// wrap marker and one message of up to segment_bytes of payload. Reused
// only once every WRITE of its batch has completed.
struct SendSlot {
  std::byte* head_word = nullptr;
  std::byte* wrap_word = nullptr;
  std::byte* message = nullptr;
  uint32_t pending = 0;  // WRITEs posted from it and not yet completed
};

struct MessagingServer::Worker {
  Worker(Env e, const BusyMeter& meter, uint32_t threads, Nanos interval)
      : env(e), sampler(meter, threads, interval) {}
  Env env;                  // replaced by the serving actor's in serve()
  NodeId node = kInvalidNode;  // fixed at set-up; accept() reads it from other threads
  uint32_t index = 0;
  uint32_t first_connection = 0;
  uint32_t connection_count = 0;
  AlignedBuffer local;
  Region local_region;
  bool registered = false;
  std::byte* response_buf = nullptr;  // header + max_response_bytes + trailer
  std::vector<SendSlot> slots;        // kMaxSendsInFlight of them
  uint32_t next_slot = 0;
  uint32_t max_send_wr = 1;           // the transport's send queue depth
  std::byte* heartbeat_bufs[kHeartbeatBuffers] = {};
  uint32_t heartbeat_pending[kHeartbeatBuffers] = {};  // WRITEs reading each
  std::byte* recv_buf = nullptr;
  std::vector<Completion> scratch;
  std::vector<WorkRequest> heartbeat_batch;
  HeartbeatSampler sampler;
  bool started = false;
  uint32_t awaiting = 0;  // sends posted and not yet completed
};

struct MessagingServer::Counters {
  std::atomic<uint64_t> requests{0}, handler_errors{0}, unknown_type{0}, malformed{0},
      incomplete{0}, dropped_connections{0}, disconnected{0}, response_segments{0}, response_stalls{0},
      send_failures{0}, heartbeats{0}, send_slot_waits{0}, rescans_after_heartbeat{0}, reclaimed{0}, retired{0};
};

inline void bump(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

// An 8-byte WRITE of a control word (a head or a wrap marker).
inline WorkRequest small_write(uint64_t wr_id, const RemoteAddr& to, std::byte* from, uint32_t lkey) {
  WorkRequest wr;
  wr.wr_id = wr_id;
  wr.op = Opcode::kWrite;
  wr.remote = to;
  wr.local = {from, 8, lkey};
  return wr;
}

inline uint64_t load_head_word(const std::byte* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}

}  // namespace locus::messaging
