// Server-driven operations of NessieSD and NessieHY (paper section 5,
// HERD-style): a client RDMA-WRITEs its request into a ring of its own in
// the owning node's memory; the node's server thread (a daemon on an
// endpoint of its own) runs it on its tables (node_store.h) and
// RDMA-WRITEs the response into the client's response ring for that node.
// The message format and the ring bookkeeping are the shared rings below
// the designs (core/rpc/ring_buffer.h), which Catfish's messaging uses too.
//
// Each request is a WRITE_WITH_IMM (imm: the ring number) and each
// response too, so both sides block in wait() instead of spinning, and a
// ring is read only once its WRITE has landed: the paper's server threads
// poll request memory, which is sound only where a WRITE's bytes land in
// address order (Soft-RoCE does not promise it; see Catfish's event mode).
// A client has at most one request in flight, so the ring a response
// arrives in tells it which node answered, and a ring whose response came
// back has been consumed: each side's writer takes its own tail as the
// peer's head.
//
// Every ring is registered on its own, so only the client it was granted
// to holds its rkey. Hostile input: a request whose bytes break the ring
// format is answered with one kError message and its ring is dropped
// (never read again: no resync, as in Catfish); a well-formed request with
// a bad body (unknown type, lengths that do not add up, a key or value
// over the limits) gets a kError response and the ring goes on. Nothing a
// client writes stops the server thread or touches another ring.
//
// A call of unknown fate (its request WRITE failed, or no response came
// within the wait) leaves the two sides' positions in doubt: the client
// asks the node (layout RPC) to start its ring over (reset()), and the
// server thread acknowledges at the start of the emptied rings.
//
// A client in this process beside the node (run.clients_on_servers, the
// paper's section 5: "request and response are optimized to be written
// directly, without using RDMA") attaches its ring (attach_local()): it
// writes its requests into the ring by CPU stores and rings the ring's
// doorbell, an atomic the server thread reads with acquire before it
// reads the ring (as it reads a remote ring only after the WRITE's
// notification), and the server thread writes the response into the
// client's response ring by CPU stores and bumps the client's doorbell
// with release. No verb on either side; the same ring format, positions,
// handler, resets and order of service. While a ring is attached the
// server thread, idle, looks at its doorbells every kLocalPollNs (it
// cannot be woken from the transport's wait by a store).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/short_mutex.h"
#include "core/index/nessie/layout.h"
#include "core/index/nessie/node_store.h"
#include "core/rpc/ring_buffer.h"
#include "core/transport/env.h"

namespace locus::nessie {

// Request message types; the payload is u32 key bytes, the key, the value.
inline constexpr uint16_t kRequestGet = 1;
inline constexpr uint16_t kRequestPut = 2;
inline constexpr uint16_t kRequestDelete = 3;
// The longest error text a response carries (longer ones are cut).
inline constexpr uint32_t kMaxErrorBytes = 240;
// Work names the server thread charges (Cpu::charge_work).
inline constexpr const char* kServerGetWork = "nessie.server.get";
inline constexpr const char* kServerPutWork = "nessie.server.put";
inline constexpr const char* kServerDeleteWork = "nessie.server.delete";
// The server thread's copy of a response into a local client's response
// ring (bytes: the message's).
inline constexpr const char* kServerLocalResponseWork = "nessie.server.local_response";
// How often an idle server thread with a local ring attached, and a local
// client awaiting its response, look at their doorbells: a protocol
// parameter, 1 us, as NAM's local lock waits (nam/local_access.cc); it
// adds half of it, on average, to a local call on either side.
inline constexpr Nanos kLocalPollNs = 1 * kMicrosecond;

// The largest payload of a request or response for these sizes, and the
// bytes of a ring: two of the largest message, so one always fits after a
// wrap (ring_buffer.h).
uint32_t max_payload_bytes(uint32_t key_bytes, uint32_t value_bytes);
uint32_t ring_bytes_for(uint32_t key_bytes, uint32_t value_bytes);

// A client's wait for a reset's acknowledgement (a kEnd of request id 0 at
// the start of the response ring it emptied), one notification at a time:
// true once `reader` has consumed it, after which the rest of the ring
// (`ring`, `ring_bytes`) is emptied again. Responses the node wrote before
// the acknowledgement (to the call of unknown fate, or an error for a ring
// it dropped) may land after the client emptied the ring, at its start
// too, until the acknowledgement overwrites them: they come from the same
// server thread on the same connection, so they land, and notify, before
// it. Whatever the ring holds before the acknowledgement is passed over.
bool take_reset_ack(ring::RingReader& reader, std::byte* ring, uint32_t ring_bytes);

struct RequestServerStats {
  uint64_t requests = 0;
  uint64_t bad_requests = 0;   // well-formed messages with a bad body: kError, ring kept
  uint64_t dropped_rings = 0;  // rings whose bytes broke the format: kError, ring dropped
  uint64_t stray_notifications = 0;
  uint64_t send_failures = 0;
  uint64_t resets = 0;           // rings started over at their client's request
  uint64_t released = 0;         // rings given back by their clients, free for the next
  uint64_t local_responses = 0;  // responses written by CPU stores to a client in this process
};

// A ring attached by a client in this process (attach_local()): where it
// writes its requests, and the doorbell it rings after each.
struct LocalRing {
  std::byte* requests = nullptr;
  std::atomic<uint64_t>* doorbell = nullptr;
};

// Thread t's share of a node's `rings` rings among `threads` server
// threads (threads <= rings): consecutive numbers, as even as can be, each
// share at least one ring.
struct RingShare {
  uint32_t first = 0;
  uint32_t count = 0;
};
RingShare ring_share(uint32_t rings, uint32_t threads, uint32_t t);

class RequestServer {
 public:
  // Registers `count` rings of g.ring_bytes on `env`'s node (0: g.rings),
  // numbered first_ring on: a node's server threads each serve a share of
  // its rings, and a ring's number (a request's immediate, a reset's
  // argument) says whose it is.
  static StatusOr<std::unique_ptr<RequestServer>> create(Env env, const Geometry& g, uint32_t first_ring = 0,
                                                         uint32_t count = 0);
  ~RequestServer();
  RequestServer(const RequestServer&) = delete;
  RequestServer& operator=(const RequestServer&) = delete;

  // Whether ring number `ring` is one of this thread's.
  bool owns(uint32_t ring) const { return ring >= first_ && ring - first_ < count_; }
  // Grants a ring to a client whose response ring for this node is at
  // `response` (g.ring_bytes there); thread safe (the layout RPC's
  // workers call it). Its number and its region, or kNoRing if none is left.
  RingGrant grant(const RemoteAddr& response);
  // Starts over ring `ring` of client node `client` (after a call of
  // unknown fate: a lost request, a lost or late response): the server
  // thread empties it, resets both sides' positions and answers with a
  // kEnd of request id 0 at the start of the client's response ring,
  // which the client has emptied before asking. Thread safe.
  Status reset(uint32_t ring, NodeId client);
  // Rings grant() could hand out now: never granted, or given back and
  // freed. Thread safe.
  uint32_t rings_left();
  // Client `client` gives ring `ring` back (it has ended): the server
  // thread, at its next round, empties it, detaches a local client,
  // registers it again (the old rkey dies with the old registration) and
  // lets grant() hand it to another client. Thread safe.
  Status release(uint32_t ring, NodeId client);
  // Ring `ring`, granted to a client in this process, is served by CPU
  // stores from now on (see above): its responses go to `responses`
  // (g.ring_bytes, the client's response ring for this node), each
  // followed by a release increment of `response_doorbell`. Call before
  // the ring's first request; both must outlive the ring's use. The
  // ring's memory and doorbell, or an error if the ring is not granted
  // or not this thread's.
  StatusOr<LocalRing> attach_local(uint32_t ring, std::byte* responses, std::atomic<uint64_t>* response_doorbell);
  // The server thread, an actor on the rings' node: serves until
  // env.stop_requested(). `store` runs the operations (the node's tables).
  void serve(Env& env, NodeStore& store);
  // One pass of serve() without waiting: start over the rings asked to,
  // run the request of each ring a notification named, take completions
  // if any ran. How many rings it acted on. (serve() loops over it; the
  // fuzz target calls it and poll_completions(), with the Env given to
  // create().)
  size_t serve_round(NodeStore& store);
  // Takes the completions queued (notifications mark their rings).
  void poll_completions();

  const RequestServerStats& stats() const { return stats_; }

 private:
  enum : uint8_t { kFree = 0, kLive = 1, kDropped = 2 };
  struct Ring {
    std::atomic<uint8_t> state{kFree};
    std::atomic<bool> reset_requested{false};
    std::atomic<bool> release_requested{false};
    RemoteAddr response;  // set before state turns kLive
    Region region;
    bool registered = false;
    bool dirty = false;  // a notification named it since it was last read
    ring::RingReader reader;
    ring::RingWriter writer;
    // A local client's (attach_local): set before its first request, read
    // by the server thread only after the doorbell's acquire.
    std::byte* local_responses = nullptr;
    std::atomic<uint64_t>* local_doorbell = nullptr;
    std::atomic<uint64_t> doorbell{0};  // rung by a local client after each request
    uint64_t doorbell_seen = 0;         // the server thread's last look
  };

  RequestServer(Env env, const Geometry& g, uint32_t first, uint32_t count)
      : env_(env), g_(g), first_(first), count_(count) {}
  Status init();
  void handle(NodeStore& store, Ring& r, uint32_t id, const ring::RingReader::View& v);
  // Writes a response (kEnd with `payload`, or kError with `error`) into
  // the ring's client; false if it could not be sent.
  bool respond(Ring& r, uint32_t id, const ring::MessageHeader& request, const Status& error, std::string_view payload);
  void drop(Ring& r, uint32_t id, const Status& why);
  void take(const Completion& c);
  void start_over(Ring& r, uint32_t id);
  // Ring `id` zeroed, both positions at its start; its memory.
  std::byte* empty_ring(Ring& r, uint32_t id);
  // Ring number `ring` if it is this thread's, granted, and to `client`.
  Ring* held_by(uint32_t ring, NodeId client);
  // The server thread's part of release(): the ring, empty and registered
  // anew, back on free_rings_.
  void free_ring(Ring& r, uint32_t id);
  void repost(uint64_t wr_id);

  Env env_;
  Geometry g_;
  std::string value_;   // a get's value, copied out of the store (capacity kept: no allocation per get)
  uint32_t first_ = 0;  // this thread's rings are numbers first_ to first_ + count_ - 1
  uint32_t count_ = 0;
  AlignedBuffer memory_;   // the rings, each registered on its own
  AlignedBuffer staging_;  // per ring a response (and a wrap word), then the receive words
  Region local_;           // staging_
  bool local_registered_ = false;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::atomic<uint32_t> next_ring_{0};  // rings never granted: next_ring_ on
  ShortMutex free_mu_;                  // the RPC workers' grants, the server thread's frees, rings_left()
  std::vector<uint32_t> free_rings_;    // given back and emptied
  std::atomic<bool> any_local_{false};  // a ring is attached: poll its doorbell when idle
  uint32_t staging_bytes_ = 0;
  uint32_t awaiting_ = 0;  // WRITEs posted and not completed
  uint64_t last_wr_id_ = 0;
  std::vector<Completion> scratch_;
  RequestServerStats stats_;
};

}  // namespace locus::nessie
