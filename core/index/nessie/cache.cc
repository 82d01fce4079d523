// DteCache: see cache.h.
#include "core/index/nessie/cache.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace locus::nessie {

DteCache::DteCache(uint32_t capacity, uint32_t key_bytes, uint32_t value_bytes)
    : capacity_(capacity), key_bytes_(key_bytes), value_bytes_(value_bytes), entries_(capacity), lru_(capacity) {
  if (capacity == 0) return;
  table_.assign(std::bit_ceil(uint64_t{capacity} * 2), kNone);
  storage_.resize(uint64_t{capacity} * (key_bytes + value_bytes));
  free_.reserve(capacity);
  for (uint32_t e = capacity; e > 0; --e) free_.push_back(e - 1);
}

uint32_t DteCache::bucket_of(uint64_t ite) const {
  return static_cast<uint32_t>((ite * 0x9E3779B97F4A7C15ULL) >> 32) & static_cast<uint32_t>(table_.size() - 1);
}

uint32_t DteCache::lookup(uint64_t ite) const {
  const uint32_t mask = static_cast<uint32_t>(table_.size() - 1);
  for (uint32_t b = bucket_of(ite);; b = (b + 1) & mask) {
    const uint32_t e = table_[b];
    if (e == kNone) return kNone;
    if (entries_[e].ite == ite) return e;
  }
}

void DteCache::erase(uint32_t e) {
  // Backward-shift deletion keeps every probe chain unbroken.
  const uint32_t mask = static_cast<uint32_t>(table_.size() - 1);
  uint32_t hole = bucket_of(entries_[e].ite);
  while (table_[hole] != e) hole = (hole + 1) & mask;
  for (uint32_t b = (hole + 1) & mask; table_[b] != kNone; b = (b + 1) & mask) {
    const uint32_t home = bucket_of(entries_[table_[b]].ite);
    // Move it into the hole unless its home lies cyclically in (hole, b].
    const bool stays = hole <= b ? (home > hole && home <= b) : (home > hole || home <= b);
    if (stays) continue;
    table_[hole] = table_[b];
    hole = b;
  }
  table_[hole] = kNone;
  lru_.remove(e);
  entries_[e].used = false;
  free_.push_back(e);
  --size_;
}

std::optional<std::string_view> DteCache::find(uint64_t ite, std::string_view key, Nanos now, Nanos extend_to) {
  if (capacity_ == 0) return std::nullopt;
  const uint32_t e = lookup(ite);
  if (e == kNone) return std::nullopt;
  Entry& x = entries_[e];
  if (now >= x.expires) {
    erase(e);
    return std::nullopt;
  }
  const char* k = key_at(e);
  if (std::string_view(k, x.key_bytes) != key) return std::nullopt;
  x.expires = std::max(x.expires, extend_to);
  lru_.touch(e);
  return std::string_view(k + key_bytes_, x.value_bytes);
}

void DteCache::insert(uint64_t ite, std::string_view key, std::string_view value, Nanos expires) {
  if (capacity_ == 0 || key.size() > key_bytes_ || value.size() > value_bytes_) return;
  if (const uint32_t old = lookup(ite); old != kNone) erase(old);
  if (free_.empty()) erase(lru_.back());
  const uint32_t e = free_.back();
  free_.pop_back();
  Entry& x = entries_[e];
  x.ite = ite;
  x.expires = expires;
  x.key_bytes = static_cast<uint32_t>(key.size());
  x.value_bytes = static_cast<uint32_t>(value.size());
  x.used = true;
  char* k = key_at(e);
  std::memcpy(k, key.data(), key.size());
  if (!value.empty()) std::memcpy(k + key_bytes_, value.data(), value.size());
  const uint32_t mask = static_cast<uint32_t>(table_.size() - 1);
  uint32_t b = bucket_of(ite);
  while (table_[b] != kNone) b = (b + 1) & mask;
  table_[b] = e;
  lru_.push_front(e);
  ++size_;
}

}  // namespace locus::nessie
