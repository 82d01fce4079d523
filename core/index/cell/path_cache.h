// PathCache: a client's LRU cache of server-side traversal results (the
// paper keeps up to 4K of them): for each leaf meganode it reached, the key
// range the meganode covered and its root pointer, so that a later
// operation on a key in that range starts right there instead of at the
// tree root. Ranges kept are disjoint: a newer one replaces the entries it
// overlaps. A stale entry (the meganode split and shrank meanwhile) only
// costs hops: the server follows right links from the cached root, or
// answers "restart" and the client drops the entry.
//
// Fixed capacity, keys stored inline, sorted index and LRU links allocated
// once: lookups and inserts do not allocate.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/common/lru_list.h"
#include "core/index/cell/layout.h"

namespace locus::cell {

class PathCache {
 public:
  PathCache(uint32_t capacity, uint32_t key_capacity_bytes);

  bool enabled() const { return capacity_ > 0; }
  // The root of the cached leaf meganode covering `key`, or kNullPtr.
  uint64_t lookup(std::string_view key);
  void insert(Bound min, Bound max, uint64_t root);
  // Drops the entry covering `key` (after it led to a restart).
  void erase_covering(std::string_view key);
  size_t size() const { return order_.size(); }

 private:
  struct Entry {
    uint64_t root = kNullPtr;
    bool min_inf = false;
    bool max_inf = false;
    uint16_t min_len = 0;
    uint16_t max_len = 0;
  };
  Bound min_of(uint32_t s) const;
  Bound max_of(uint32_t s) const;
  void set_keys(uint32_t s, Bound min, Bound max);
  // Position in order_ of the last entry whose min <= key, or -1.
  int64_t floor_position(Bound key) const;
  void remove_position(size_t pos);

  uint32_t capacity_;
  uint32_t key_capacity_;
  std::vector<Entry> entries_;
  std::vector<char> keys_;       // per slot: min key, then max key
  std::vector<uint32_t> order_;  // slots sorted by min key
  std::vector<uint32_t> free_;
  LruList lru_;
};

}  // namespace locus::cell
