// Transport: the seam between locus's core and an RDMA implementation.
//
// One Transport is one endpoint (a server, or one client thread/actor):
// its registered regions, its connections (one reliable connection per
// peer, created by the backend's set-up code) and one completion queue.
// It is virtual at batch granularity: one call posts a batch of work
// requests, far below the cost of an RDMA round trip.
//
// Contract every backend honours (the conformance suite checks it):
//  * Ordering. Work requests this endpoint posts to one peer are executed
//    at the target in posting order, and their completions are delivered
//    in posting order. Nothing is promised across different peers.
//    Receives complete in the order their messages arrived from a sender.
//  * Every posted signaled request yields exactly one completion with a
//    status; unsignaled requests yield one only on error. Nothing fails
//    silently.
//  * Remote checks. A one-sided request whose (region, rkey) does not name
//    a live registration on the target, whose [offset, offset+length)
//    leaves the region, or whose region lacks the right (kRemoteRead for
//    READ, kRemoteWrite for WRITE/WRITE_WITH_IMM, kRemoteAtomic for CAS/FAA)
//    completes with kRemoteAccessError and touches no target memory.
//    CAS/FAA need an 8-byte aligned target address, else
//    kRemoteOperationError.
//  * Local checks. post() and post_recv() validate every request's local
//    buffer against this endpoint's registrations (lkey and bounds), and
//    the batch against the queue bounds, before posting anything: a bad
//    batch returns an error Status and posts nothing.
//  * SEND and WRITE_WITH_IMM consume the oldest posted receive at the
//    target. A message longer than that buffer fails: kLocalLengthError at
//    the receiver, kRemoteOperationError at the sender. With no receive
//    posted, the backend waits (RNR retry) for a bounded time, then
//    completes the sender's request with kRnrRetryExceeded.
//  * Torn reads are possible. A READ runs concurrently with the target
//    CPU's writes, like a real NIC, and may see a mix of old and new bytes;
//    each 64-byte-aligned cache line is read atomically with respect to
//    CPU writes (as a PCIe NIC reads a line; loopback: dma_read in
//    core/common/dma_copy.h), lines in no promised order. CAS and FAA are
//    atomic with respect to each other, not to CPU writes of the same word.
//  * A dead or unreachable peer: requests to it complete with
//    kRetryExceeded.
//
// A Transport is used by one actor at a time (not thread-safe), except that
// the memory it registered is written by the owning CPU while the NIC reads.
#pragma once

#include <cstddef>
#include <span>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/transport/types.h"

namespace locus {

struct TransportLimits {
  uint32_t max_send_wr = 0;   // outstanding work requests (signaled or not)
  uint32_t max_recv_wr = 0;   // posted receives
  uint32_t max_message_bytes = 0;  // largest SEND the backend carries
  // Whether an RDMA WRITE into this node's memory lands in address order
  // as seen by its CPU, so that a reader polling the target sees a
  // message's last word only after the rest. RDMA promises no such order
  // (a NIC may place a WRITE's data in any order); a device may (verbs:
  // ibv_query_qp_data_in_order(3)). A design that polls memory for
  // messages needs it; one woken by a completion does not.
  bool writes_land_in_order = false;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual NodeId node_id() const = 0;
  virtual TransportLimits limits() const = 0;

  // Registers [addr, addr+length) with the given remote rights. CAS/FAA
  // targets must be 8-byte aligned, so regions used with atomics should be.
  virtual StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) = 0;
  // After this returns, no remote access reaches the region (in-flight ones
  // have finished) and any later one completes with kRemoteAccessError.
  virtual Status deregister_memory(const Region& region) = 0;

  virtual Status post(std::span<const WorkRequest> batch) = 0;
  virtual Status post_recv(std::span<const RecvRequest> batch) = 0;

  // Non-blocking: copies up to out.size() completions; returns how many.
  virtual size_t poll(std::span<Completion> out) = 0;
  // Blocks until at least one completion is available or `timeout` has
  // passed (simulated time on SimGrid); returns how many were copied.
  virtual size_t wait(std::span<Completion> out, Nanos timeout) = 0;
  // The caller gave up on a request to `peer`: no completion came within
  // its wait. On a reliable connection everything posted behind a stuck
  // request is stuck too, so a backend with connections drops this one:
  // what is outstanding on it completes kFlushed, and the next post to
  // `peer` connects afresh (to a peer that came back, or fails fast to one
  // that did not). Backends without connections have nothing to drop.
  virtual void reset_peer(NodeId peer) { (void)peer; }

  // Fencing, for leases: a client that stalled past the lease of a lock it
  // held must not write after its lock was broken, and a WRITE, once
  // posted, cannot be made conditional on the lock. So the lock's breaker
  // has the memory's owner fence the holder first.
  //  * fence_peer(p), called on the endpoint that owns the memory: when it
  //    returns, no request from p touches this endpoint's memory or
  //    receives, neither one executing now (it has finished), nor one
  //    queued or in flight, nor one posted later. Each completes at p with
  //    an error (kRetryExceeded; kFlushed for what was outstanding on a
  //    connection the fence broke), until p rejoins.
  //  * rejoin(q), called by a fenced endpoint after a request to q failed:
  //    acknowledges q's fences and returns whether there was one (false:
  //    the failure had another cause, or the backend has not learnt of the
  //    fence yet and a later request will fail again). From then on p's
  //    requests reach q again. The caller must first give up everything
  //    it did under the fenced connection (locks it held in q's memory)
  //    and have nothing outstanding to q.
  // Fences are rare (a lease ran out); they cost a connection, not the
  // data path.
  virtual Status fence_peer(NodeId peer) {
    (void)peer;
    return Status(StatusCode::kUnimplemented, "this transport cannot fence a peer");
  }
  virtual bool rejoin(NodeId peer) {
    (void)peer;
    return false;
  }
};

}  // namespace locus
