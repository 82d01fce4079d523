// Epoch-based reclamation for the NAM tree's garbage collection (gc.cc):
// a node merged away is unlinked at once but its page is freed only after
// every operation that could still hold a pointer to it has ended.
//
// Each tree object (one per client thread or server request) has a slot.
// An operation announces the global epoch in its slot when it starts and
// clears it when it ends; the collector retires a page with the epoch in
// which it was unlinked, advances the epoch and frees the pages retired
// before the oldest epoch any slot announces. An operation that announced
// epoch e started (its first read came after the announce, which is
// sequentially consistent) either before a page retired in e was unlinked
// (then it keeps e, and the page waits) or after (then it cannot reach it).
//
// Two implementations: LocalReclaimer (below) lives in one process: a
// coarse-grained memory server's request trees share one. Across compute
// servers (fine-grained), RemoteEpochs (remote_epochs.h) keeps the epoch
// and the slots in memory server 0's catalog and the freed pages on the
// memory servers, reached one-sidedly.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/status.h"
#include "core/index/nam/layout.h"

namespace locus::nam {

// A reclaimer's figures (RemoteEpochs'; the local one keeps its own).
struct EpochStats {
  uint64_t announces = 0;          // epoch READs before operations
  uint64_t announce_failures = 0;  // READs or CASes that failed (the slot kept its older epoch)
  uint64_t rejoins = 0;            // slots claimed again after a fence
  uint64_t retired = 0;            // pages handed to the collector
  uint64_t freed = 0;              // pages put on a free list
  uint64_t reused = 0;             // freed pages taken by allocation
  uint64_t held_back = 0;          // at the last advance, pages kept by an older slot
  uint64_t free_failures = 0;      // pages whose push gave up (left retired, tried again)
  uint64_t slots_broken = 0;       // stale slots whose client was fenced and the slot freed
};

class Reclaimer {
 public:
  virtual ~Reclaimer() = default;
  // A slot for one tree object; an error when none is left (a tree object
  // without a slot could hold any page: see each implementation).
  virtual StatusOr<uint32_t> join() = 0;
  // An operation of the slot's tree object starts (an error: it must not
  // run), and ends.
  virtual Status enter(uint32_t slot) = 0;
  virtual void exit(uint32_t slot) = 0;
  // The operation starts over (BlinkTree::restarting) and reads nothing it
  // read before; an error: it must not go on.
  virtual Status reenter() { return Status(); }
  // The collector's side: a page unlinked now (its node of `level`).
  virtual void retire(RemotePtr page, uint8_t level) = 0;
  // Ends the current epoch and frees every page retired before the oldest
  // announced epoch; how many it freed. Called between operations.
  virtual uint64_t advance() = 0;
  // A freed page for a node of `level`, if any (allocation reuses them).
  virtual RemotePtr take(uint8_t level) = 0;
};

class LocalReclaimer final : public Reclaimer {
 public:
  explicit LocalReclaimer(uint32_t slots);

  // kResourceExhausted when all slots are taken, and from then on nothing
  // is freed.
  StatusOr<uint32_t> join() override;
  Status enter(uint32_t slot) override {
    slots_[slot].store(epoch_.load());
    // Against the collector's fence in advance() (store buffering): either
    // it sees this slot, or this operation's reads see its unlinks.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return Status();
  }
  void exit(uint32_t slot) override { slots_[slot].store(kIdle); }
  void retire(RemotePtr page, uint8_t level) override;
  uint64_t advance() override;
  RemotePtr take(uint8_t level) override;

  uint64_t epoch() const { return epoch_.load(); }
  uint64_t retired() const;
  uint64_t freed_total() const;

 private:
  static constexpr uint64_t kIdle = ~0ull;
  struct Page {
    RemotePtr at;
    uint8_t level;
    uint64_t epoch;
  };
  std::atomic<uint64_t> epoch_{1};
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;
  uint32_t slot_count_;
  std::atomic<uint32_t> joined_{0};
  std::atomic<bool> overflow_{false};
  mutable ShortMutex mu_;
  std::vector<Page> retired_;
  std::vector<Page> free_;
  uint64_t freed_total_ = 0;
};

// Announces the epoch for one operation of a tree object (nested
// operations of the same object keep the outer announcement). The
// operation runs only if status() is OK.
class EpochGuard {
 public:
  EpochGuard(Reclaimer* r, uint32_t slot, uint32_t* depth) : r_(r), slot_(slot), depth_(depth) {
    if (r_ != nullptr && (*depth_)++ == 0) status_ = r_->enter(slot_);
  }
  ~EpochGuard() {
    if (r_ != nullptr && --*depth_ == 0) r_->exit(slot_);
  }
  EpochGuard(const EpochGuard&) = delete;
  EpochGuard& operator=(const EpochGuard&) = delete;
  const Status& status() const { return status_; }

 private:
  Reclaimer* r_;
  uint32_t slot_;
  uint32_t* depth_;
  Status status_;
};

}  // namespace locus::nam
