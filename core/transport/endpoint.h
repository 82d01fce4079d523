// Endpoint: synchronous request/completion matching on top of a Transport.
//
// Core code is written "post, then wait", but one endpoint's completion
// queue is shared by everything that endpoint does (RPC calls and one-sided
// READs of an index client, say). Endpoint hands out wr_ids and waits for
// a particular one, parking completions that belong to someone else in a
// bounded side buffer so they are not lost. A request whose wait timed out
// is abandoned: nobody will ask for its completion, so when it arrives it
// is dropped instead of parked (else enough timeouts would fill the side
// buffer and fail every later wait). No allocation after set-up.
//
// Receives are demultiplexed too. An endpoint has one receive queue, and a
// SEND or WRITE_WITH_IMM takes its oldest posted receive, whoever posted it,
// so receive buffers cannot belong to one consumer: the endpoint owns them
// all, one pool of equal buffers, and routes each receive completion by
// what arrived. A consumer (a receiver) registers for one kind: kMessages,
// the SENDs (an RpcClient's responses), or kImmediates, the WRITE_WITH_IMM
// notifications (Catfish's MessagingClient), and brings its share of
// buffers to the pool. It gets exactly the completions of its kind, with a
// view of the buffer the message took, and hands the buffer back with
// release() when done with the view. Receivers of one kind share its
// completions, so only one of them should be waiting at a time; one that
// goes away leaves its buffers in the pool. A completion whose
// wr_id names no buffer of the pool (forged, or posted around the
// endpoint), or one of a kind nobody registered for, is dropped, counted
// and remembered as last_receive_error(); it never reaches a consumer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/transport/env.h"

namespace locus {

enum class RecvKind : uint8_t {
  kMessages,    // SENDs: data lands in the buffer
  kImmediates,  // WRITE_WITH_IMM: only the immediate arrives
};

// A receive completion handed to its receiver.
struct Received {
  Completion completion;
  std::span<const std::byte> data;  // what a SEND delivered (empty otherwise)
  uint64_t buffer = 0;              // give it back with Endpoint::release()
};

struct EndpointRecvStats {
  uint64_t stray = 0;       // wr_id names no pool buffer: dropped
  uint64_t unclaimed = 0;   // a kind no receiver registered for: dropped, buffer reposted
};

class Endpoint {
 public:
  static constexpr Nanos kDefaultTimeout = 5 * kSecond;

  explicit Endpoint(Env env, Nanos timeout = kDefaultTimeout);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  Env& env() { return env_; }
  Transport& transport() { return *env_.transport; }
  NodeId node_id() const { return env_.transport->node_id(); }
  Nanos timeout() const { return timeout_; }
  // The setting the default timeout came from ("run.wait_timeout_ms"),
  // named in the errors of waits that ran out of it.
  void set_timeout_setting(std::string name) { timeout_setting_ = std::move(name); }

  uint64_t next_wr_id() { return ++last_wr_id_; }

  // Posts `batch` and waits for each request's completion (all signaled).
  // Returns the first failure as a Status naming the peer and operation.
  Status execute(std::span<const WorkRequest> batch);
  // Posts one request and waits for it.
  Status execute(const WorkRequest& wr) { return execute(std::span<const WorkRequest>(&wr, 1)); }

  // Waits for the completion of wr_id (send side), a request to `peer`. On
  // kTimeout the request is abandoned (its completion is dropped whenever
  // it comes) and the transport resets its connection to `peer`
  // (Transport::reset_peer), where everything posted behind it is stuck.
  StatusOr<Completion> await(uint64_t wr_id, NodeId peer);
  // Registers the receiver of `kind` and posts `buffers` receive buffers of
  // `buffer_bytes` for the pool (set-up, not the data path). Every buffer
  // of the pool must hold the largest SEND any receiver expects, so
  // register the kMessages receiver first: a later one asking for larger
  // buffers than the pool's is refused.
  Status add_receiver(RecvKind kind, std::string name, uint32_t buffers, uint32_t buffer_bytes);
  void remove_receiver(RecvKind kind);
  // Waits for the next receive completion of `kind` (endpoint timeout, or
  // `timeout`: kTimeout after it).
  StatusOr<Received> await_recv(RecvKind kind);
  StatusOr<Received> await_recv_for(RecvKind kind, Nanos timeout);
  // Posts a received buffer again; its data view is gone after this.
  Status release(uint64_t buffer);
  // Completions dropped because no receiver could take them.
  const EndpointRecvStats& recv_stats() const { return recv_stats_; }
  const Status& last_receive_error() const { return last_receive_error_; }

 private:
  struct Pool {
    AlignedBuffer memory;
    Region region;
    uint32_t buffers = 0;
  };
  struct Receivers {
    uint32_t count = 0;
  };
  // The pool buffer a receive wr_id names, or nullptr (then *why says why).
  std::byte* pool_buffer(uint64_t wr_id, std::string* why);
  // Drops receive completions nobody can take (true if it did).
  bool drop_unroutable(const Completion& c);
  // Pulls completions until `match` accepts one; others are parked.
  template <typename Match>
  StatusOr<Completion> await_matching(Match match, Nanos timeout, const char* what);
  bool park(const Completion& c);
  // Remembers wr_id as abandoned (oldest forgotten first when more are
  // than could be outstanding) and drops its completion if already parked.
  void abandon(uint64_t wr_id);
  // True (and forgets it) if `c` is of an abandoned request.
  bool take_abandoned(const Completion& c);

  Env env_;
  Nanos timeout_;
  std::string timeout_setting_;
  uint64_t last_wr_id_ = 0;
  std::vector<Completion> parked_;  // capacity fixed at construction
  std::vector<Completion> scratch_;
  std::vector<uint64_t> abandoned_;  // a ring of max_send_wr wr_ids; 0: free
  size_t abandoned_next_ = 0;
  size_t abandoned_live_ = 0;  // non-zero entries: none, and parking skips the ring
  std::vector<Pool> pools_;      // one per add_receiver; a receive wr_id names (pool, index)
  uint32_t pool_buffer_bytes_ = 0;
  Receivers receivers_[2];       // by RecvKind
  EndpointRecvStats recv_stats_;
  Status last_receive_error_;
};

}  // namespace locus
