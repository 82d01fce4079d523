// DteCache: a client's small LRU cache of data entries keyed by the ITE
// that named them (paper sections 4.1.3 and 4.3.1). An ITE names one
// immutable DTE for at least an expiry period after it was read (the DTE
// cannot be recycled sooner), so a cached (ITE, key, value) is good while
// its expiry time, set from the ITE read that fetched it, has not passed;
// a hit comes with a fresh read of the same ITE and extends it. An
// expired entry is a miss and is dropped. Fixed capacity, set up once:
// the data path allocates nothing (open addressing with linear probing
// over twice the capacity, an intrusive LRU list).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/common/lru_list.h"
#include "core/common/time.h"

namespace locus::nessie {

class DteCache {
 public:
  DteCache(uint32_t capacity, uint32_t key_bytes, uint32_t value_bytes);

  uint32_t capacity() const { return capacity_; }
  // The value cached for `ite` if it is `key`'s and unexpired at `now`;
  // a hit's expiry becomes `extend_to`. The view lasts until the next insert.
  std::optional<std::string_view> find(uint64_t ite, std::string_view key, Nanos now, Nanos extend_to);
  // Caches (ite, key, value) until `expires`, evicting the least recently used.
  void insert(uint64_t ite, std::string_view key, std::string_view value, Nanos expires);

 private:
  static constexpr uint32_t kNone = LruList::kNone;
  struct Entry {
    uint64_t ite = 0;
    Nanos expires = 0;
    uint32_t key_bytes = 0;
    uint32_t value_bytes = 0;
    bool used = false;
  };
  uint32_t bucket_of(uint64_t ite) const;
  uint32_t lookup(uint64_t ite) const;  // entry index or kNone
  void erase(uint32_t e);               // from the table and the list
  char* key_at(uint32_t e) { return storage_.data() + uint64_t{e} * (key_bytes_ + value_bytes_); }

  uint32_t capacity_;
  uint32_t key_bytes_, value_bytes_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> table_;  // entry index or kNone; size a power of two >= 2 x capacity
  std::vector<char> storage_;
  std::vector<uint32_t> free_;  // entries not in use
  LruList lru_;
  uint32_t size_ = 0;
};

}  // namespace locus::nessie
