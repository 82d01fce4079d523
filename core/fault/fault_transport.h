// FaultTransport: a Transport decorator that injects the faults a real
// fabric produces, after LevelDB's fault-injection Env: it wraps any
// backend's Transport, so one campaign runs unchanged on loopback, SimGrid
// and verbs. Faults (see FaultOptions) are drawn per request from a seeded
// stream once armed, so set-up and loading run clean.
//
// How it keeps the transport's contract while breaking everything else:
// every request it posts below is signaled and renamed with an id of its
// own; a ticket per request, queued per peer in posting order, holds what
// the caller will see. A ticket is delivered when it is done, due (a held
// completion) and first in its peer's queue: completions towards one peer
// stay in posting order, completions across peers are reordered. A failure
// injected before execution never reaches the backend; one injected after
// (the reply was lost) replaces a successful completion's status. A split
// READ is posted as several READs of pieces of the buffer, in reverse or
// random address order, and completes once all pieces have.
//
// Receives pass through untouched. Like the Transport it wraps, a
// FaultTransport is used by one actor at a time, except for registering
// memory: a restarted server registers its memory again from the actor
// that restarts it while its node's RPC worker keeps posting (Pilaf's
// faults.restart_servers), so register_memory draws its failures from a
// stream of its own under a lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common/random.h"
#include "core/common/short_mutex.h"
#include "core/fault/fault_options.h"
#include "core/transport/env.h"
#include "core/transport/transport.h"

namespace locus::fault {

// Faults injected, by kind; shared by every FaultTransport of a run.
struct FaultStats {
  std::atomic<uint64_t> delayed{0};
  std::atomic<uint64_t> retry_exceeded{0};          // not carried out
  std::atomic<uint64_t> retry_exceeded_applied{0};  // carried out, reply lost
  std::atomic<uint64_t> remote_access_error{0};
  std::atomic<uint64_t> rnr{0};
  std::atomic<uint64_t> register_failure{0};
  std::atomic<uint64_t> split_read{0};

  uint64_t total() const;
};

// The size of each piece of a split READ of `length` bytes: piece_bytes,
// or, where the send queue has room for only `max_pieces`, the least
// multiple of piece_bytes that covers the READ in that many. Pieces start
// at multiples of piece_bytes either way: at the default 64, a cache
// line, which a NIC's DMA reads whole and FaRM-style line versions
// (Catfish's nodes) rely on. A piece of 68 bytes tore lines, and a
// Catfish reader accepted a copy mixing two writes.
uint32_t split_piece_bytes(uint32_t length, uint32_t piece_bytes, uint32_t max_pieces);

class FaultTransport final : public Transport {
 public:
  // `inner` and `clock` outlive this; `armed` (shared by a run's
  // transports) turns injection on; `stats` counts what was injected.
  FaultTransport(Transport* inner, Clock* clock, const FaultOptions& options, uint64_t stream,
                 const std::atomic<bool>* armed, FaultStats* stats);

  NodeId node_id() const override { return inner_->node_id(); }
  TransportLimits limits() const override { return inner_->limits(); }
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override;
  Status deregister_memory(const Region& region) override { return inner_->deregister_memory(region); }
  Status post(std::span<const WorkRequest> batch) override;
  Status post_recv(std::span<const RecvRequest> batch) override { return inner_->post_recv(batch); }
  size_t poll(std::span<Completion> out) override;
  size_t wait(std::span<Completion> out, Nanos timeout) override;
  void reset_peer(NodeId peer) override { inner_->reset_peer(peer); }
  Status fence_peer(NodeId peer) override { return inner_->fence_peer(peer); }
  bool rejoin(NodeId peer) override { return inner_->rejoin(peer); }

  Transport* inner() const { return inner_; }

 private:
  // What the caller will see of one request it posted.
  struct Ticket {
    bool signaled = true;     // as the caller posted it
    uint32_t pieces_left = 0;  // requests below still to complete
    bool lose_reply = false;  // report kRetryExceeded even if it worked
    std::atomic<uint64_t> FaultStats::*fault = nullptr;  // what was injected, counted once posted
    bool delayed = false;
    Nanos due_ns = 0;         // a held completion is not delivered before
    Completion completion;    // the caller's wr_id, with the status to report
  };
  struct PeerQueue {
    std::deque<Ticket> tickets;  // in posting order
    uint64_t first = 0;          // number of tickets.front() (numbered per peer)
    uint64_t next = 0;           // number of the next ticket
  };
  struct Below {  // a request posted below: whose ticket it serves
    NodeId peer;
    uint64_t ticket;
  };

  bool armed() const { return armed_ != nullptr && armed_->load(std::memory_order_relaxed); }
  // Draws WR's fate: its ticket, and the requests to post below for it
  // (added to `below`, with their ids in `ids`). A split READ takes at most
  // `spare_requests` requests more than one, and uses them up.
  Ticket plan(const WorkRequest& wr, std::vector<WorkRequest>& below, std::vector<Below>& ids,
              uint32_t& spare_requests);
  // Takes one completion from below: settles its ticket, or passes a receive on.
  void settle(const Completion& c);
  // Moves deliverable tickets to ready_ and copies up to out.size() of them.
  size_t deliver(std::span<Completion> out);
  // When the earliest held (done but not yet due) ticket becomes due; 0 if none.
  Nanos next_due() const;
  void drain_below();

  Transport* inner_;
  Clock* clock_;
  FaultOptions options_;
  Random random_;
  ShortMutex register_mu_;
  Random register_random_;  // guarded by register_mu_
  const std::atomic<bool>* armed_;
  FaultStats* stats_;
  uint64_t next_below_id_ = 0;
  std::unordered_map<NodeId, PeerQueue> peers_;
  std::unordered_map<uint64_t, Below> below_;  // by the id of a request posted below
  std::deque<Completion> ready_;
  std::vector<Completion> scratch_;
};

}  // namespace locus::fault
