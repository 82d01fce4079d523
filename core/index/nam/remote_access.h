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
// kills clients) or stall past it:
//  * a locked word names its holder (layout.h: NodeId + 1 in bits 40-63);
//  * a waiter that sees the SAME locked word for a full lease (lease_ms)
//    breaks it: it asks the node's memory server to fence the holder off
//    its memory (the nam.fence RPC: Transport::fence_peer), then CAS(word ->
//    word + 2, naming itself) takes the lock over (still locked, a version
//    the holder never saw), re-seals the body it finds for the unlocked word
//    it will leave, writes the body back and unlocks;
//  * a holder notes the time before it posts its locking CAS and, before
//    every install WRITE, checks that less than lease/2 has passed; if not,
//    it gives up (releases its lock as below, restarts the operation);
//  * unlock is CAS(held -> held + 1), never FAA, so a holder whose lock was
//    broken fails to unlock and changes nothing; a holder that installed
//    nothing under its lock (gave up, or a WRITE failed) releases it as a
//    breaker would (CAS to held + 2, re-seal, CAS to held + 3): held + 1
//    over a body sealed for the old word left the node torn for good;
//  * a fenced holder's requests to that memory server fail; it rejoins
//    (Transport::rejoin) and installs nothing more under the locks it took
//    there before. A failed install fails its operation (a failed WRITE may
//    have landed before the fence, and the breaker sealed it in: restarting
//    could apply it twice); an unlock after an install succeeded counts as
//    done; any other request restarts the operation.
// Safety rests on the fence, not on timing: the lease check bounds how long
// a live holder keeps others waiting, but a holder stalled between its
// check and its WRITE (preempted, paged out) for longer than the lease
// would otherwise have its WRITE land over the breaker's repair, and over
// the next holder's install, leaving the node torn and an update lost
// (docs/nam.md, "Leased locks": seen in CI on a loaded machine). Once the
// fence returned, nothing the holder posted, or will post before it
// rejoins, reaches the memory: the body the breaker reads is all old or all
// new (a split writes the right node before the left one), both consistent
// B-link states, and a breaker that stalls is fenced in turn.
#pragma once

#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/index/nam/client.h"
#include "core/index/nam/tree.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"

namespace locus::nam {

class RemoteAccess final : public NodeAccess {
 public:
  // regions[i]: memory server i's arena; leaves are allocated on the
  // cursor at `leaf_cursor` (arena.h: a hybrid arena's own for leaves).
  // `rpc` reaches the memory servers (regions[i].node) for fences.
  static StatusOr<std::unique_ptr<RemoteAccess>> create(Endpoint& ep, rpc::RpcClient& rpc,
                                                        std::vector<RemoteRegion> regions, uint32_t page_bytes,
                                                        Nanos lease_ns, uint64_t leaf_cursor = 0);
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

  // Words of memory server `server`'s arena outside the nodes (arena.h:
  // the catalog, the free lists, the epoch slots) and a freed page's link,
  // for RemoteEpochs (remote_epochs.h). A fence turns into kAborted as for
  // the nodes' requests.
  uint32_t servers() const { return static_cast<uint32_t>(regions_.size()); }
  NodeId node_id() const { return ep_.node_id(); }
  Clock& clock() { return *ep_.env().clock; }
  // Times a memory server had fenced this client off (each rejoined).
  uint64_t rejoins() const { return stats_.fenced; }
  // Has every memory server fence `holder` (a NodeId) off its memory.
  Status fence_everywhere(NodeId holder);
  StatusOr<uint64_t> word_atomic(uint32_t server, uint64_t offset, Opcode op, uint64_t compare_add, uint64_t swap);
  Status read_words(uint32_t server, uint64_t offset, std::span<uint64_t> out);
  Status write_word(uint32_t server, uint64_t offset, uint64_t value);

 private:
  RemoteAccess(Endpoint& ep, rpc::RpcClient& rpc, std::vector<RemoteRegion> regions, uint32_t page_bytes,
               Nanos lease_ns, uint64_t leaf_cursor)
      : ep_(ep),
        rpc_(rpc),
        regions_(std::move(regions)),
        page_bytes_(page_bytes),
        lease_ns_(lease_ns),
        leaf_cursor_(leaf_cursor) {}
  StatusOr<RemoteAddr> address(RemotePtr p, uint64_t bytes) const;
  // kInvalidArgument unless `words` words at `offset` lie in `server`'s arena.
  Status check_words(uint32_t server, uint64_t offset, size_t words) const;
  // A request to `server` failed with `s`: if it was a fence, rejoins and
  // says kAborted (the operation restarts without the locks it held there).
  Status after_failure(NodeId server, Status s);
  // Asks memory server `server` to fence `holder` (a NodeId) off its memory.
  Status fence(uint32_t server, NodeId holder);
  // Forgets the lock on p; whether a body was installed under it.
  bool release_held(RemotePtr p);
  Status read_page(RemotePtr p);
  StatusOr<uint64_t> atomic(Opcode op, RemoteAddr at, uint64_t compare_add, uint64_t swap);
  Status write(RemoteAddr at, const std::byte* from, uint32_t bytes);
  // Takes over the lock `held` (seen unchanged for a lease, or our own
  // given up) by CAS(held -> held + 2), re-seals the body and releases it;
  // false when the word was no longer `held`.
  StatusOr<bool> take_over(RemotePtr p, uint64_t held);

  Endpoint& ep_;
  rpc::RpcClient& rpc_;
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
  uint64_t mine_ = 0;  // holder_bits(our NodeId + 1)
  Nanos lock_started_ns_ = 0;
  // The locks held (a merge holds three): node, and whether a body was
  // installed under it.
  struct Held {
    uint64_t node;       // RemotePtr::raw
    uint32_t server;     // its memory server
    bool installed;      // a body was installed under it
    bool revoked;        // taken before this client was fenced there
  };
  static constexpr size_t kMaxHeld = 16;  // a merge holds 3; the rest were abandoned
  std::vector<Held> held_;
  RemoteStats stats_;
};

}  // namespace locus::nam
