// RDMA-WRITE messaging: requests and responses over RDMA WRITE into
// per-connection ring buffers (mailboxes), below the designs because more
// than one uses it: Catfish's fast messaging (its paper's sections III-A
// and IV-B, whose terms this file uses) and the NAM index's mailbox
// transport for its coarse-grained and hybrid RPCs (index.rpc_transport =
// "mailbox"; the NAM paper's first author's rewrite replaced the shared
// receive queue with such mailboxes). Handlers are registered by type
// and charged to the CPU by name, as RpcServer's.
//
// Each connection has a request ring in the server's memory, registered as
// its own region so only that client holds its rkey, and a response ring
// in the client's memory. Senders write whole messages (ring_buffer.h) with
// RDMA WRITE; receivers consume them in place, zero them and RDMA-WRITE
// their head (bytes consumed) back into a control word beside the sender's
// view of the ring, so a sender never overwrites unconsumed bytes: when
// the ring is full it sleeps (client) or waits on its completion queue
// (server) until the head moves. Responses larger than the server's
// segment size travel as CONT ... END segments the client reassembles.
// The server posts response WRITEs without waiting for them: each batch
// goes out of one of a few send slots (kMaxSendsInFlight), reused only
// once its WRITEs completed, so a worker goes on to the next request and
// its busy time is its handlers' time.
//
// Server threads ("workers") are separate endpoints, each with its own
// completion queue, serving the connections assigned to it in one of two
// modes: kPolling scans its rings (waiting poll_idle_ns on the completion
// queue when all are empty, never spinning without progress); kEvent
// sleeps in Transport::wait() until a WRITE_WITH_IMM (the client's last
// write of each request, imm = connection id) wakes it. Response segments
// are always WRITE_WITH_IMM, so clients block in wait() too.
//
// Hostile input: a request ring whose bytes break the format (bad size
// field: zero, unaligned, larger than the ring, past its end; a sequence
// or trailer that does not match; a message begun but never completed;
// a head word that moves back) is counted,
// answered with one kError message when the client's ring has room, and
// that connection is dropped: its ring is never read again, so nothing of
// it can spill into other connections, and the worker goes on serving the
// others. Rule: no resync; the client must reconnect. A dropped or
// disconnected connection's slot is reused for a later client once the
// WRITEs to the old one completed (MessagingServer::reclaim gives its ring
// a new rkey first, so a request the old client writes after that fails,
// and its call returns the kError it was sent). A message the
// reader finds malformed or incomplete may still be landing (a WRITE's DMA
// is not atomic per word: Soft-RoCE under load shows words half-written),
// so both verdicts stand only once they held for incomplete_timeout_ns on
// the server, landing_timeout_ns on the client.
//
// Connecting: the client registers its memory (MessagingClient::create,
// in its actor), passes client_info() to MessagingServer::accept (thread
// safe; over RPC or in-process) and hands the returned ConnectionInfo to
// connect(). A connection accepted with await_first_message (the connect
// RPC's) goes live with the client's first message: until then the worker
// reads its ring but writes nothing to the client (no heartbeat, no error
// message), because on verbs it has no queue pair to a client before that
// client first posts to it (clients connect on first use), so connect()
// sends a one-way hello (kHelloType) at once. A connection that sends
// nothing within first_message_timeout_ns is dropped. The data path does
// not allocate.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/short_mutex.h"
#include "core/common/status.h"
#include "core/messaging/heartbeat.h"
#include "core/rpc/message.h"
#include "core/rpc/ring_buffer.h"
#include "core/transport/endpoint.h"

namespace locus::messaging {

// The ring format and its reader and writer, shared below the designs.
using namespace locus::ring;  // NOLINT(google-build-using-namespace)

enum class ServerMode : uint8_t { kPolling, kEvent };

// Control words after each ring, inside the same region.
constexpr uint64_t kHeadWordOffset = 0;        // the sender's ring head, written by the receiver
constexpr uint64_t kHeartbeatSlotOffset = 16;  // client side only
constexpr uint64_t kControlBytes = 64;

// The message type of the hello that makes an awaiting connection live;
// reserved (handlers take types from 1), answered by nothing.
constexpr uint16_t kHelloType = 0;

struct MessagingServerOptions {
  ServerMode mode = ServerMode::kPolling;
  uint32_t connections_per_worker = 16;
  uint32_t request_ring_bytes = 256 * 1024;  // per connection (Catfish's paper: 256 KB)
  uint32_t segment_bytes = 8 * 1024;         // response payload per segment
  uint32_t max_response_bytes = 1u << 20;    // payload a handler may write
  uint32_t max_handler_types = 64;
  Nanos heartbeat_interval_ns = 10 * kMillisecond;  // Inv; 0 disables heartbeats
  Nanos poll_idle_ns = 20 * kMicrosecond;           // kPolling: wait when every ring is empty
  Nanos incomplete_timeout_ns = 1 * kSecond;        // a begun message must land within this
  Nanos first_message_timeout_ns = 10 * kSecond;    // an awaiting connection's first message must land within this
  Nanos response_stall_timeout_ns = 2 * kSecond;    // a client must free response room within this
  Nanos send_timeout_ns = 5 * kSecond;              // a posted WRITE must complete within this
};

struct MessagingClientOptions {
  uint32_t response_ring_bytes = 256 * 1024;
  uint32_t max_request_bytes = 16 * 1024;   // payload
  uint32_t max_response_bytes = 1u << 20;   // reassembled payload
  uint32_t recv_buffers = 64;               // receives for response notifications (endpoint.h: pool-sized)
  Nanos space_wait_ns = 20 * kMicrosecond;  // sleep while the request ring is full
  Nanos landing_timeout_ns = 1 * kSecond;   // a response that looks malformed must settle within this
};

// What the server needs from a client to connect it.
struct ClientInfo {
  NodeId node = kInvalidNode;
  RemoteRegion response_ring;  // ring of response_ring_bytes, then kControlBytes
  uint32_t response_ring_bytes = 0;
};

// What the client needs from the server.
struct ConnectionInfo {
  NodeId server = kInvalidNode;  // the worker's endpoint
  uint32_t connection_id = 0;
  ServerMode mode = ServerMode::kPolling;
  RemoteRegion request_ring;  // ring of request_ring_bytes, then kControlBytes
  uint32_t request_ring_bytes = 0;
  Nanos heartbeat_interval_ns = 0;
  bool awaits_first_message = false;  // connect() sends the hello that makes it live
};

struct MessageContext {
  uint32_t connection_id = 0;
  NodeId client = kInvalidNode;
  uint16_t type = 0;
  uint64_t request_id = 0;
};

// Reads the request in place and writes the response payload (up to
// max_response_bytes). An error Status becomes a kError response.
using MessageHandler = std::function<Status(const MessageContext&, rpc::Reader& request, rpc::Writer& response)>;

struct MessagingServerStats {
  uint64_t requests = 0;  // dispatched to a handler
  uint64_t handler_errors = 0;
  uint64_t unknown_type = 0;         // answered with an error; the connection stays
  uint64_t malformed = 0;            // format violations; each drops its connection
  uint64_t incomplete = 0;           // messages begun but not completed in time; drop too
  uint64_t dropped_connections = 0;  // for bad input or a client that stopped consuming
  uint64_t disconnected = 0;         // a WRITE to the client failed (it is gone): no longer served
  uint64_t response_segments = 0;
  uint64_t response_stalls = 0;  // waits for room in a client's response ring
  uint64_t send_failures = 0;
  uint64_t heartbeats = 0;               // heartbeat WRITEs posted
  uint64_t send_slot_waits = 0;          // waits for an in-flight send to free its slot
  uint64_t rescans_after_heartbeat = 0;  // kEvent: rings still dirty after a round (notifications seen
                                         // while it sent or heartbeat() waited), rescanned without sleeping
  uint64_t reclaimed = 0;                // dropped or disconnected connection slots made free for new clients
  uint64_t retired = 0;                  // connections their clients replaced (retire)
};

class MessagingServer {
 public:
  // One worker per Env, each a distinct endpoint whose actor calls serve(i).
  static StatusOr<std::unique_ptr<MessagingServer>> create(std::vector<Env> worker_envs,
                                                           const MessagingServerOptions& options);
  ~MessagingServer();
  MessagingServer(const MessagingServer&) = delete;
  MessagingServer& operator=(const MessagingServer&) = delete;

  // Register before serving; `name` labels CPU charges and errors.
  Status handle(uint16_t type, std::string name, MessageHandler handler);
  // Claims a connection slot for `client`; thread-safe. With
  // await_first_message the connection goes live with its first message.
  StatusOr<ConnectionInfo> accept(const ClientInfo& client, bool await_first_message = false);
  // Retires connection `connection_id` of `client` (as this server names
  // it) whose response ring is at `response_ring_addr` (a client's own:
  // two clients one server knows by the same name have rings apart),
  // which has set up another after a call of unknown fate: a client whose
  // request WRITE failed cannot tell its worker, and would otherwise hold
  // the slot for good. Its worker stops serving it on its next scan
  // (nothing is written to the client: its ring has a new rkey) and frees
  // the slot once no WRITE to it is in flight. Thread safe.
  // kInvalidArgument if it is not a served connection of that client.
  Status retire(uint32_t connection_id, NodeId client, uint64_t response_ring_addr);

  // Runs worker `worker` until env.stop_requested(); `env` is the calling
  // actor's, on that worker's endpoint (its clock and stop flag are used).
  void serve(uint32_t worker, const Env& env);
  // One round: handles what is there (waiting up to `timeout` if nothing
  // is) and sends a heartbeat when due. Returns the requests handled.
  size_t serve_once(uint32_t worker, Nanos timeout);

  MessagingServerStats stats() const;
  // Why a connection was dropped (OK while it is served, and once its
  // slot is accepted again).
  Status connection_status(uint32_t connection_id) const;
  // Why each connection slot's last client was dropped or disconnected
  // (slots accepted again since are left out), in slot order.
  std::vector<Status> connection_problems() const;
  uint32_t workers() const { return static_cast<uint32_t>(workers_.size()); }
  const MessagingServerOptions& options() const { return options_; }

 private:
  struct Connection;
  struct Worker;
  struct Counters;
  MessagingServer(const MessagingServerOptions& options);
  Status init(std::vector<Env> worker_envs);

  // messaging_server.cc: the data path.
  size_t drain(Worker& w, Connection& c);
  void handle_request(Worker& w, Connection& c, const RingReader::View& v);
  bool respond(Worker& w, Connection& c, const MessageContext& ctx, const Status& status, size_t payload_bytes);
  enum class Sent { kSent, kBusy, kDropped };
  // Copies h.payload_bytes from `payload` into a send slot and posts it,
  // never waiting: kBusy if the client's ring has no room or no send slot
  // is free for the connection now.
  Sent send_message(Worker& w, Connection& c, const std::byte* payload, MessageHeader& h);
  // Sends `bytes` of response payload as segments from `payload`, as far
  // as it can now; the rest goes to the connection's outbox. False if the
  // connection was dropped.
  bool send_segments(Worker& w, Connection& c, const std::byte* payload, size_t bytes);
  // Sends what the outbox holds while it can; true once it is empty.
  bool flush_outbox(Worker& w, Connection& c);
  // Posts the request ring's head if the client has not been told it
  // (one-way requests are answered by nothing, so their room goes back here).
  void publish_head(Worker& w, Connection& c);
  void drop(Worker& w, Connection& c, const Status& why, bool incomplete);
  // Drops a connection retire() named, writing nothing to its client.
  void retire_now(Connection& c);
  void reclaim(Worker& w, Connection& c);
  // Drops an awaiting connection whose first message is overdue (true if it did).
  bool first_message_overdue(Worker& w, Connection& c);
  void heartbeat(Worker& w, Nanos now);
  // The WRITE of the request ring's head into the client's control word.
  WorkRequest head_write(Worker& w, Connection& c, std::byte* word, uint64_t wr_id);
  void on_completion(Worker& w, const Completion& comp);
  // A send slot free for c with room for `wrs` more WRITEs in the send
  // queue (reaping what has completed, never waiting), or -1.
  int acquire_slot(Worker& w, const Connection& c, uint32_t wrs);
  // Takes the completions that are there, without waiting.
  void reap_ready(Worker& w);
  // Posts a batch to c's client reading slot `slot` without waiting for it.
  bool post_slot(Worker& w, Connection& c, uint32_t slot, std::span<const WorkRequest> batch);
  // Waits (up to send_timeout_ns) until no send of the worker is in flight.
  void finish_sends(Worker& w);
  // Waits for completions until pred() holds or the deadline passes.
  template <typename Pred>
  bool reap_until(Worker& w, Nanos deadline, Pred pred);

  MessagingServerOptions options_;
  struct Slot {
    std::string name;
    MessageHandler handler;
  };
  std::vector<Slot> handlers_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::atomic<uint32_t> next_accept_{0};
  BusyMeter busy_;
  std::unique_ptr<Counters> counters_;
  mutable ShortMutex problems_mu_;  // guards Connection::problem (never held across a wait)
};

struct MessagingClientStats {
  uint64_t calls = 0;
  uint64_t error_responses = 0;
  uint64_t segments = 0;         // response messages consumed
  uint64_t stale_responses = 0;  // answers to calls that already gave up
  uint64_t space_waits = 0;      // sleeps for room in the request ring
  uint64_t wraps = 0;            // wrap markers written
};

class MessagingClient {
 public:
  static StatusOr<std::unique_ptr<MessagingClient>> create(Endpoint& endpoint,
                                                           const MessagingClientOptions& options = {});
  ~MessagingClient();
  MessagingClient(const MessagingClient&) = delete;
  MessagingClient& operator=(const MessagingClient&) = delete;

  ClientInfo client_info() const;
  Status connect(const ConnectionInfo& info);
  // True while not connected, and once the connection failed for good: a
  // request that may or may not have landed (the ring's state is then
  // unknown), the server's goodbye, a malformed response. Every call
  // returns that error until reset() and a new connect().
  bool broken() const { return !connected_ || !broken_.is_ok(); }
  // Readies the client for a new connection (to the same server or
  // another): the response ring gets a new rkey, so whatever the old
  // connection's worker still writes fails there (and the worker drops
  // that connection and frees its slot) instead of landing in the new
  // connection's ring; then the ring is zeroed and read from its start.
  // Its address, and so the heartbeat slot, stay where they were. Then
  // client_info() and connect() as the first time.
  Status reset();

  // Where to build the next request's payload.
  std::span<std::byte> payload_buffer() { return {staging_ + kMessageHeaderBytes, options_.max_request_bytes}; }
  // Sends the first payload_bytes of payload_buffer() as a `type` request
  // and waits for the whole response; the span stays valid until the next
  // call. An error response becomes its Status.
  StatusOr<std::span<const std::byte>> call(uint16_t type, size_t payload_bytes);
  StatusOr<std::span<const std::byte>> call(uint16_t type, std::span<const std::byte> payload);
  // Sends a request that gets no response (its handler's output and errors
  // are dropped). Returns once written; blocks while the ring is full.
  Status send(uint16_t type, size_t payload_bytes);

  // The server's heartbeats land here (selector::HeartbeatRecord).
  const std::byte* heartbeat_slot() const { return control_ + kHeartbeatSlotOffset; }
  const ConnectionInfo& connection() const { return conn_; }
  const MessagingClientStats& stats() const { return stats_; }

 private:
  MessagingClient(Endpoint& endpoint, const MessagingClientOptions& options);
  Status init();
  // The WRITE of the response ring's head into the server's control word.
  WorkRequest head_write();
  Status publish_head_now();
  Status check_request_bytes(size_t payload_bytes) const;
  Status wait_for_room(uint32_t size_bytes, RingWriter::Placement* out);
  Status fail(Status why);
  // The server's reason for dropping the connection, if it sent one; else `otherwise`.
  Status told_why(Status otherwise);
  // Writes one request (with a pending head publication and wrap marker).
  Status write_request(uint16_t type, MessageKind kind, size_t payload_bytes, uint64_t request_id);

  Endpoint& endpoint_;
  MessagingClientOptions options_;
  ConnectionInfo conn_;
  bool connected_ = false;
  Status broken_;              // once set, every call returns it
  AlignedBuffer ring_memory_;  // response ring + control, remote-writable by the server
  Region ring_region_;
  AlignedBuffer local_memory_;  // request staging, wrap word, head word
  Region local_region_;
  bool ring_registered_ = false, local_registered_ = false;
  bool receiving_ = false;  // registered as a receiver of its endpoint
  std::byte* control_ = nullptr;
  std::byte* staging_ = nullptr;
  std::byte* wrap_buf_ = nullptr;
  std::byte* head_buf_ = nullptr;
  std::vector<std::byte> response_;  // reassembly, sized once
  RingWriter writer_;                // into the server's request ring
  RingReader reader_;                // of the response ring
  uint64_t published_head_ = 0;
  uint64_t next_request_id_ = 1;
  MessagingClientStats stats_;
};

}  // namespace locus::messaging
