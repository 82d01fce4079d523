// Epoch-based reclamation (epoch.h): slots, retirement and free pages.
#include "core/index/nam/epoch.h"

#include <algorithm>
#include <string>

namespace locus::nam {

LocalReclaimer::LocalReclaimer(uint32_t slots) : slots_(new std::atomic<uint64_t>[slots]), slot_count_(slots) {
  for (uint32_t i = 0; i < slots; ++i) slots_[i].store(kIdle);
}

StatusOr<uint32_t> LocalReclaimer::join() {
  const uint32_t slot = joined_.fetch_add(1);
  if (slot >= slot_count_) {
    overflow_.store(true);
    return resource_exhausted("nam: more tree objects than the reclaimer's " + std::to_string(slot_count_) +
                              " epoch slots");
  }
  return slot;
}

void LocalReclaimer::retire(RemotePtr page, uint8_t level) {
  std::lock_guard lock(mu_);
  retired_.push_back({page, level, epoch_.load()});
}

uint64_t LocalReclaimer::advance() {
  // Pages retired so far were unlinked before this increment: an operation
  // announcing the new epoch cannot reach them.
  epoch_.fetch_add(1);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint64_t oldest = epoch_.load();
  const uint32_t n = std::min(joined_.load(), slot_count_);
  for (uint32_t i = 0; i < n; ++i) oldest = std::min(oldest, slots_[i].load());
  std::lock_guard lock(mu_);
  uint64_t moved = 0;
  if (overflow_.load()) return 0;
  std::erase_if(retired_, [&](const Page& p) {
    if (p.epoch >= oldest) return false;
    free_.push_back(p);
    ++moved;
    return true;
  });
  freed_total_ += moved;
  return moved;
}

RemotePtr LocalReclaimer::take(uint8_t level) {
  std::lock_guard lock(mu_);
  for (size_t i = free_.size(); i-- > 0;) {
    if (free_[i].level != level) continue;
    const RemotePtr p = free_[i].at;
    free_.erase(free_.begin() + static_cast<long>(i));
    return p;
  }
  return {};
}

uint64_t LocalReclaimer::retired() const {
  std::lock_guard lock(mu_);
  return retired_.size();
}

uint64_t LocalReclaimer::freed_total() const {
  std::lock_guard lock(mu_);
  return freed_total_;
}

}  // namespace locus::nam
