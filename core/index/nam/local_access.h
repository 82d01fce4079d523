// NodeAccess on arenas in this process: the coarse-grained design's
// server-side traversal of its own arena with optimistic lock coupling
// (Listing 3), and the fine-grained design's loader, which builds the one
// global tree over every memory server's arena before any client runs
// (new nodes round-robin over the arenas per level, as the clients place
// theirs).
// readLockOrRestart waits while the lock bit is set, the copy is checked
// against the version afterwards (checkOrRestart) and retried when a
// writer got in; upgradeToWriteLockOrRestart is a CAS on the word, and
// writeUnlock a CAS(held -> held + 1) (the paper's fetch-and-add, made a
// CAS so that both designs share one unlock; no server thread dies on its
// own, so its locks need no lease). Word-wise relaxed atomic copies and
// stores with acquire/release on the version word: a seqlock, so readers
// racing a writer are well-defined.
#pragma once

#include <array>
#include <atomic>
#include <vector>

#include "core/index/nam/arena.h"
#include "core/index/nam/tree.h"

namespace locus::nam {

class LocalAccess final : public NodeAccess {
 public:
  LocalAccess(Arena& arena, Clock& clock) : LocalAccess(std::vector<Arena*>{&arena}, clock) {}
  // Arena i must be memory server i's; the root lives in arena 0.
  LocalAccess(std::vector<Arena*> arenas, Clock& clock)
      : arenas_(std::move(arenas)),
        page_(arenas_[0]->page_bytes()),
        page_mask_((page_ & (page_ - 1)) == 0 ? page_ - 1 : 0),
        clock_(clock) {}
  uint32_t page_bytes() const override { return page_; }
  Status read(RemotePtr p, Node& out) override;
  Status lock(RemotePtr p, uint64_t version) override;
  Status install(RemotePtr p, const Node& n) override;
  Status create(RemotePtr p, const Node& n) override;
  Status unlock(RemotePtr p, uint64_t held) override;
  StatusOr<RemotePtr> allocate(uint8_t level) override;
  StatusOr<RemotePtr> root() override {
    return RemotePtr{arenas_[0]->word(kRootOffset).load(std::memory_order_acquire)};
  }
  StatusOr<bool> swap_root(RemotePtr old_root, RemotePtr new_root) override;
  const uint64_t* in_place(RemotePtr p) const override;
  InPlaceMap in_place_map() const override { return arenas_.size() == 1 ? map_of(*arenas_[0]) : InPlaceMap{}; }
  bool searches_in_place() const override { return true; }

  uint64_t read_retries() const { return read_retries_.load(std::memory_order_relaxed); }

 private:
  // The node's words, or kCorruption for a pointer outside every arena.
  StatusOr<uint64_t*> words(RemotePtr p) const;
  InPlaceMap map_of(Arena& a) const {
    return {a.at(0), a.server(), page_, kFirstPageOffset, a.bytes(), page_mask_,
            a.server() == arenas_[0]->server() ? reinterpret_cast<uint64_t*>(a.at(kRootOffset)) : nullptr};
  }
  Status store_words(RemotePtr p, const Node& n, uint32_t from);

  std::vector<Arena*> arenas_;
  uint32_t page_;
  uint64_t page_mask_;  // page_ - 1 when page_ is a power of two (else 0: a division)
  // Per level; atomics because several tree objects may share one access
  // (a coarse memory server's request trees, a GC pass beside them).
  std::array<std::atomic<uint32_t>, 256> next_server_{};
  Clock& clock_;
  std::atomic<uint64_t> read_retries_{0};
};

}  // namespace locus::nam
