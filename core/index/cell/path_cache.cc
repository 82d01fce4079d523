// PathCache: see path_cache.h.
#include "core/index/cell/path_cache.h"

#include <cstring>

namespace locus::cell {
namespace {
// a < b for lower bounds (-inf first).
bool min_less(Bound a, Bound b) {
  if (a.inf) return !b.inf;
  if (b.inf) return false;
  return a.key < b.key;
}
// key < b for an upper bound (+inf above everything).
bool below_max(Bound key, Bound max) {
  if (max.inf) return true;
  if (key.inf) return false;
  return key.key < max.key;
}
}  // namespace

PathCache::PathCache(uint32_t capacity, uint32_t key_capacity_bytes)
    : capacity_(capacity), key_capacity_(key_capacity_bytes), lru_(capacity) {
  entries_.resize(capacity);
  keys_.resize(uint64_t{capacity} * 2 * key_capacity_bytes);
  order_.reserve(capacity);
  free_.reserve(capacity);
  for (uint32_t s = capacity; s > 0; --s) free_.push_back(s - 1);
}

Bound PathCache::min_of(uint32_t s) const {
  const Entry& e = entries_[s];
  return {std::string_view(keys_.data() + uint64_t{s} * 2 * key_capacity_, e.min_len), e.min_inf};
}

Bound PathCache::max_of(uint32_t s) const {
  const Entry& e = entries_[s];
  return {std::string_view(keys_.data() + (uint64_t{s} * 2 + 1) * key_capacity_, e.max_len), e.max_inf};
}

void PathCache::set_keys(uint32_t s, Bound min, Bound max) {
  Entry& e = entries_[s];
  e.min_inf = min.inf;
  e.max_inf = max.inf;
  e.min_len = static_cast<uint16_t>(min.inf ? 0 : min.key.size());
  e.max_len = static_cast<uint16_t>(max.inf ? 0 : max.key.size());
  if (e.min_len > 0) std::memcpy(keys_.data() + uint64_t{s} * 2 * key_capacity_, min.key.data(), e.min_len);
  if (e.max_len > 0) std::memcpy(keys_.data() + (uint64_t{s} * 2 + 1) * key_capacity_, max.key.data(), e.max_len);
}

int64_t PathCache::floor_position(Bound key) const {
  int64_t lo = 0, hi = static_cast<int64_t>(order_.size());
  while (lo < hi) {  // first position whose min > key
    const int64_t mid = lo + (hi - lo) / 2;
    if (min_less(key, min_of(order_[static_cast<size_t>(mid)]))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo - 1;
}

void PathCache::remove_position(size_t pos) {
  const uint32_t s = order_[pos];
  lru_.remove(s);
  free_.push_back(s);
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(pos));
}

uint64_t PathCache::lookup(std::string_view key) {
  if (capacity_ == 0) return kNullPtr;
  const int64_t pos = floor_position(Bound{key, false});
  if (pos < 0) return kNullPtr;
  const uint32_t s = order_[static_cast<size_t>(pos)];
  if (!below_max(Bound{key, false}, max_of(s))) return kNullPtr;
  lru_.touch(s);
  return entries_[s].root;
}

void PathCache::erase_covering(std::string_view key) {
  if (capacity_ == 0) return;
  const int64_t pos = floor_position(Bound{key, false});
  if (pos >= 0 && below_max(Bound{key, false}, max_of(order_[static_cast<size_t>(pos)]))) {
    remove_position(static_cast<size_t>(pos));
  }
}

void PathCache::insert(Bound min, Bound max, uint64_t root) {
  if (capacity_ == 0 || (!min.inf && min.key.size() > key_capacity_) ||
      (!max.inf && max.key.size() > key_capacity_)) {
    return;
  }
  // Drop every entry overlapping [min, max): the one starting at or before
  // min if it reaches past min, then those starting before max.
  int64_t pos = floor_position(min);
  if (pos >= 0) {
    const Bound prev_max = max_of(order_[static_cast<size_t>(pos)]);
    const bool reaches = prev_max.inf || min.inf || min.key < prev_max.key;
    if (reaches) {
      remove_position(static_cast<size_t>(pos));
    } else {
      ++pos;
    }
  } else {
    pos = 0;
  }
  while (static_cast<size_t>(pos) < order_.size() &&
         below_max(min_of(order_[static_cast<size_t>(pos)]), max)) {
    remove_position(static_cast<size_t>(pos));
  }
  if (free_.empty()) {
    const uint32_t victim = lru_.back();
    const int64_t vpos = floor_position(min_of(victim));
    remove_position(static_cast<size_t>(vpos));
    if (vpos < pos) --pos;
  }
  const uint32_t s = free_.back();
  free_.pop_back();
  entries_[s].root = root;
  set_keys(s, min, max);
  order_.insert(order_.begin() + pos, s);  // within reserved capacity
  lru_.push_front(s);
}

}  // namespace locus::cell
