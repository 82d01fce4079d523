// NodeAccess over one-sided RDMA: the fine-grained design's compute-server
// side (Listing 4). A node is fetched with one READ and used only if its
// copy is consistent (unlocked word equal to the trailer, CRC right);
// locked copies are re-read (the remote spin on the lock bit), torn ones
// too. A lock is an RDMA CAS of the word read, a node is installed with
// an RDMA WRITE of its body and unlocked with CAS(held -> held + 1); new
// nodes come from an RDMA FAA on a memory server's allocation cursor
// (RDMA_ALLOC), round-robin over the memory servers per level; the root
// pointer is the catalog word on memory server 0, cached until a
// traversal finds it stale.
//
// Leases, for compute servers that die holding a lock (the fault campaign
// kills clients):
//  * a waiter that sees the SAME locked word for a full lease (lease_ms)
//    breaks it: CAS(word -> word + 2) takes the lock over (still locked,
//    a version the dead holder never saw), re-seals the body it finds for
//    the unlocked word it will leave, writes the body back and unlocks;
//  * a holder notes the time before it posts its locking CAS and, before
//    every install WRITE, checks that less than lease/2 has passed; if not,
//    it gives up (tries its unlock, restarts the operation);
//  * unlock is CAS(held -> held + 1), never FAA, so a holder whose lock was
//    broken fails to unlock and changes nothing; a holder that gave up
//    releases its lock as a breaker would (CAS(held -> held + 2), re-seal,
//    CAS to held + 3): held + 1 over a body sealed for the old word left
//    the node torn for every reader for good.
// Safety: a breaker's first sight of the locked word came after the
// holder's CAS, which came after the holder's start time, so the break
// happens at least a lease after the holder started; every WRITE the
// holder posts is posted before start + lease/2, and lands within the
// remaining lease/2 provided a posted WRITE is delivered within lease/2
// (the lease is chosen orders of magnitude above a round trip; a
// connection that cannot deliver for that long fails its requests with
// retry-exceeded rather than delivering them late). So no stale WRITE lands
// after a break, and the body a breaker reads is either all old or all new,
// both consistent B-link states (a split writes the right node before the
// left one). Only durations on each machine's own clock are compared.
#pragma once

#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/index/nam/tree.h"
#include "core/transport/endpoint.h"

namespace locus::nam {

struct RemoteStats {
  uint64_t reads = 0;
  uint64_t locked_copies = 0;   // the lock bit was set: re-read
  uint64_t torn_copies = 0;     // unlocked but inconsistent: re-read
  uint64_t broken_locks = 0;    // leases that ran out, taken over
  uint64_t lease_give_ups = 0;  // installs given up for want of lease
  uint64_t read_batches = 0;    // head-node prefetches: one post each
  uint64_t batched_reads = 0;   // READs in them
};

class RemoteAccess final : public NodeAccess {
 public:
  // regions[i]: memory server i's arena; leaves are allocated on the
  // cursor at `leaf_cursor` (arena.h: a hybrid arena's own for leaves).
  static StatusOr<std::unique_ptr<RemoteAccess>> create(Endpoint& ep, std::vector<RemoteRegion> regions,
                                                        uint32_t page_bytes, Nanos lease_ns, uint64_t leaf_cursor = 0);
  ~RemoteAccess() override;

  uint32_t page_bytes() const override { return page_bytes_; }
  Status read(RemotePtr p, Node& out) override;
  Status lock(RemotePtr p, uint64_t version) override;
  Status install(RemotePtr p, const Node& n) override;
  Status create(RemotePtr p, const Node& n) override;
  Status unlock(RemotePtr p, uint64_t held) override;
  StatusOr<RemotePtr> allocate(uint8_t level) override;
  StatusOr<RemotePtr> root() override;
  StatusOr<bool> swap_root(RemotePtr old_root, RemotePtr new_root) override;
  void forget_root() override { root_ = {}; }
  // One post of READs, the last one to each memory server signalled
  // (a queue pair completes in order, so its earlier unsignalled READs
  // are done by then); at most prefetch_pages() nodes.
  Status read_batch(std::span<const RemotePtr> at, std::byte* pages, std::vector<uint8_t>* usable) override;
  // Sets up the buffer for batches of up to `pages` nodes (connect time).
  Status enable_prefetch(uint32_t pages);
  uint32_t prefetch_pages() const { return prefetch_pages_; }

  const RemoteStats& stats() const { return stats_; }

 private:
  RemoteAccess(Endpoint& ep, std::vector<RemoteRegion> regions, uint32_t page_bytes, Nanos lease_ns,
               uint64_t leaf_cursor)
      : ep_(ep),
        regions_(std::move(regions)),
        page_bytes_(page_bytes),
        lease_ns_(lease_ns),
        leaf_cursor_(leaf_cursor) {}
  StatusOr<RemoteAddr> address(RemotePtr p, uint64_t bytes) const;
  Status read_page(RemotePtr p);
  StatusOr<uint64_t> atomic(Opcode op, RemoteAddr at, uint64_t compare_add, uint64_t swap);
  Status write(RemoteAddr at, const std::byte* from, uint32_t bytes);
  // Takes over the lock `held` (seen unchanged for a lease, or our own
  // given up) by CAS(held -> held + 2), re-seals the body and releases it;
  // false when the word was no longer `held`.
  StatusOr<bool> take_over(RemotePtr p, uint64_t held);

  Endpoint& ep_;
  std::vector<RemoteRegion> regions_;
  uint32_t page_bytes_;
  Nanos lease_ns_;
  uint64_t leaf_cursor_;
  AlignedBuffer buffer_;  // a page for READs, a page for WRITEs, an atomic's result
  Region local_;
  AlignedBuffer prefetch_;  // prefetch_pages_ pages
  Region prefetch_region_;
  uint32_t prefetch_pages_ = 0;
  std::vector<WorkRequest> batch_;
  std::vector<uint8_t> signalled_;  // per memory server, scratch
  RemotePtr root_;
  std::vector<uint32_t> next_server_;  // per level
  Nanos lock_started_ns_ = 0;
  bool gave_up_ = false;  // the last install gave up for want of lease
  RemoteStats stats_;
};

}  // namespace locus::nam
