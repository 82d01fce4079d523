// NodeCache: see node_cache.h. Linear probing with backward-shift deletion,
// so the index never fills with tombstones.
#include "core/index/cell/node_cache.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace locus::cell {

NodeCache::NodeCache(uint64_t capacity_bytes, uint32_t node_bytes)
    : node_bytes_(node_bytes),
      // Slot numbers are 32-bit, with kNone and the index's slot + 1 above them.
      max_slots_(static_cast<uint32_t>(std::min<uint64_t>(capacity_bytes / node_bytes, UINT32_MAX - 1))),
      first_chunk_(std::min(max_slots_, kFirstChunkSlots)) {}

void NodeCache::grow() {
  const uint32_t old_slots = slots_;
  const uint32_t new_slots =
      old_slots == 0 ? first_chunk_ : static_cast<uint32_t>(std::min<uint64_t>(uint64_t{old_slots} * 2, max_slots_));
  chunks_.emplace_back(new std::byte[uint64_t{new_slots - old_slots} * node_bytes_]);  // not zeroed: committed as used
  key_.resize(new_slots, 0);
  prev_.resize(new_slots, kNone);
  next_.resize(new_slots, kNone);
  free_.reserve(new_slots);
  for (uint32_t s = new_slots; s > old_slots; --s) free_.push_back(s - 1);
  slots_ = new_slots;
  const uint64_t table = std::bit_ceil(uint64_t{slots_} * 2);
  index_.assign(table, 0);
  shift_ = 64 - std::countr_zero(table);
  // Every cached slot is on the LRU list: index them again.
  for (uint32_t s = head_; s != kNone; s = next_[s]) index_insert(s);
}

void NodeCache::index_insert(uint32_t s) {
  const uint64_t mask = index_.size() - 1;
  uint64_t i = home(key_[s]) & mask;
  while (index_[i] != 0) i = (i + 1) & mask;
  index_[i] = s + 1;
}

uint32_t NodeCache::position(uint64_t ptr) const {
  const uint64_t mask = index_.size() - 1;
  for (uint64_t i = home(ptr) & mask;; i = (i + 1) & mask) {
    if (index_[i] == 0) return kNone;
    if (key_[index_[i] - 1] == ptr) return static_cast<uint32_t>(i);
  }
}

void NodeCache::unlink(uint32_t s) {
  if (prev_[s] != kNone) next_[prev_[s]] = next_[s];
  else head_ = next_[s];
  if (next_[s] != kNone) prev_[next_[s]] = prev_[s];
  else tail_ = prev_[s];
  prev_[s] = next_[s] = kNone;
}

void NodeCache::push_front(uint32_t s) {
  prev_[s] = kNone;
  next_[s] = head_;
  if (head_ != kNone) prev_[head_] = s;
  head_ = s;
  if (tail_ == kNone) tail_ = s;
}

const std::byte* NodeCache::lookup(uint64_t ptr) {
  if (used_ == 0) return nullptr;
  const uint32_t pos = position(ptr);
  if (pos == kNone) return nullptr;
  const uint32_t s = index_[pos] - 1;
  unlink(s);
  push_front(s);
  return slot_data(s);
}

void NodeCache::erase_position(uint32_t pos) {
  const uint32_t s = index_[pos] - 1;
  unlink(s);
  free_.push_back(s);
  --used_;
  // Backward shift: pull later entries of the probe run into the hole.
  const uint64_t mask = index_.size() - 1;
  uint64_t hole = pos;
  for (uint64_t j = (hole + 1) & mask; index_[j] != 0; j = (j + 1) & mask) {
    const uint64_t h = home(key_[index_[j] - 1]) & mask;
    // Entry j may move to the hole unless its home lies cyclically in (hole, j].
    const bool stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
    if (stays) continue;
    index_[hole] = index_[j];
    hole = j;
  }
  index_[hole] = 0;
}

void NodeCache::erase(uint64_t ptr) {
  if (used_ == 0) return;
  const uint32_t pos = position(ptr);
  if (pos != kNone) erase_position(pos);
}

void NodeCache::insert(uint64_t ptr, const std::byte* node) {
  if (max_slots_ == 0) return;
  uint32_t pos = used_ == 0 ? kNone : position(ptr);
  if (pos != kNone) {
    const uint32_t s = index_[pos] - 1;
    std::memcpy(slot_data(s), node, node_bytes_);
    unlink(s);
    push_front(s);
    return;
  }
  if (free_.empty()) {
    if (slots_ < max_slots_) {
      grow();
    } else {
      erase_position(position(key_[tail_]));
    }
  }
  const uint32_t s = free_.back();
  free_.pop_back();
  ++used_;
  key_[s] = ptr;
  std::memcpy(slot_data(s), node, node_bytes_);
  push_front(s);
  index_insert(s);
}

}  // namespace locus::cell
