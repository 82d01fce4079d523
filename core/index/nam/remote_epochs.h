// Epoch-based reclamation across compute servers (fine-grained and hybrid
// clients; epoch.h says what the epochs guarantee). Every word lives on the memory servers
// and is reached one-sidedly, so the compute servers' clients and a
// collector on any of them share it without a message between them:
//
//  * memory server 0's catalog (arena.h) holds the global epoch and a
//    table of slots, one per client tree object; a slot holds the epoch
//    its client last announced and the client's node (as a lock word
//    names its holder; 0: free). A client claims a slot when it connects
//    (READ the table, CAS a free slot) and gives it back when it closes;
//  * a client announces, before an operation and once every
//    `refresh_every_ops` operations, the epoch it READs then (a CAS of its
//    slot, only when the epoch moved). An announced epoch e means "every
//    operation I start from now on starts after e was current"; between
//    two announcements the slot keeps the older epoch, which only holds
//    pages back longer (one 8-byte READ a `refresh_every_ops` operations,
//    where the local reclaimer writes twice an operation);
//  * the collector keeps the pages it unlinked; after its pass it
//    increments the epoch by FAA (every unlink happened before, so the
//    epoch it returns is at least the one current at each unlink: the
//    pages' retirement epoch), announces the new one in its own slot,
//    READs the table and frees every page retired before the oldest epoch
//    a slot holds. A client whose slot holds more than a page's epoch read
//    it after the increment, which came after the unlink: it started its
//    operations after the page left the tree;
//  * freed pages go on their memory server's free list (arena.h: a head
//    word with a tag against ABA, each page linking the next at its byte
//    8), pushed by CAS; allocation pops one by READ, READ, CAS before it
//    takes a fresh page off the cursor.
//
// A client that dies keeps its slot. A slot that holds back a retired page
// and has not changed for a lease (index.gc_epoch_lease_ms, on the
// collector's clock) is broken, as a lock is (remote_access.h): the
// collector has every memory server fence its client off, then CASes the
// slot free. Safety rests on the fence, not on the lease: once fenced, the
// client reads nothing more until it rejoins a server, and rejoining fails
// the request (kAborted) and so restarts the operation, which first claims
// a new slot (reenter) and then reads from the root. A live client broken
// so (idle for a lease) pays one restart.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/index/nam/config.h"
#include "core/index/nam/epoch.h"
#include "core/index/nam/remote_access.h"

namespace locus::nam {

class RemoteEpochs final : public Reclaimer {
 public:
  // The reclaimer of `access`'s memory servers; nullptr when memory server
  // 0 keeps no epoch slots (index.gc_epoch_slots = 0).
  static StatusOr<std::unique_ptr<RemoteEpochs>> attach(RemoteAccess& access, uint32_t refresh_every_ops,
                                                       Nanos lease_ns);
  // A client's tree on `access` (fine-grained or hybrid): attaches with the
  // config's gc_epoch_* settings and makes the result the tree's
  // reclaimer; nullptr as attach().
  static StatusOr<std::unique_ptr<RemoteEpochs>> attach_tree(RemoteAccess& access, BlinkTree& tree,
                                                            const NamConfig& config);

  // Claims a free slot; kResourceExhausted naming index.gc_epoch_slots
  // when every slot is taken (this client must not run then: the
  // collector would not wait for it).
  StatusOr<uint32_t> join() override;
  // Announces every refresh_every_ops operations; first claims a new slot
  // if a memory server fenced this client since (its slot may be broken).
  Status enter(uint32_t slot) override;
  Status reenter() override;
  void exit(uint32_t) override {}
  void retire(RemotePtr page, uint8_t level) override;
  uint64_t advance() override;
  RemotePtr take(uint8_t level) override;
  // Gives the slot back (the client closes; no operation runs after).
  Status release();

  const EpochStats& stats() const { return stats_; }

 private:
  RemoteEpochs(RemoteAccess& access, uint64_t table, uint32_t slots, uint32_t refresh_every_ops, Nanos lease_ns)
      : access_(access),
        table_(table),
        slots_(slots),
        refresh_every_ops_(refresh_every_ops),
        lease_ns_(lease_ns),
        mine_(holder_bits(access.node_id() + 1)) {}
  // A free slot, CASed to the current epoch.
  Status claim();
  // After a fence: gives the old slot back if still ours, claims another.
  Status rejoin();
  // READs the epoch and, if it moved past what the slot holds, CASes it in.
  Status announce();
  // Breaks the slots that hold back a retired page, unchanged for a lease.
  void break_stale(std::vector<uint64_t>& slots);
  // Puts `page` on its memory server's free list.
  Status push(RemotePtr page);

  RemoteAccess& access_;
  uint64_t table_;  // the slots' offset in memory server 0's arena
  uint32_t slots_;
  uint32_t refresh_every_ops_;
  Nanos lease_ns_;
  uint64_t mine_;  // this client's holder bits in a slot
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  uint64_t rejoins_seen_ = 0;  // RemoteAccess::rejoins() when the slot was claimed
  struct Seen {
    uint64_t value = 0;
    Nanos since = 0;
  };
  std::vector<Seen> seen_;  // the collector's: each slot's value, and since when
  uint32_t slot_ = kNoSlot;
  uint64_t announced_ = 0;  // what our slot holds
  uint32_t ops_since_ = 0;
  struct Retired {
    RemotePtr page;
    uint64_t epoch;  // 0: unlinked in the pass not yet ended
  };
  std::vector<Retired> retired_;
  std::array<uint32_t, 64> next_server_{};  // allocation's round robin per level
  // Per memory server: the epoch this client had announced when it last
  // found the server's free list empty. Pages are pushed only after an
  // epoch ends, so the list is not READ again until this client announces
  // a newer one (an allocation on an empty list costs no READ).
  std::vector<uint64_t> empty_at_;
  EpochStats stats_;
};

}  // namespace locus::nam
