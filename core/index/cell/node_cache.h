// NodeCache: a client's LRU cache of B-link nodes it fetched, bounded in
// bytes (the paper's clients keep up to 128 MB of 1 KB nodes). The client
// only offers nodes at least a configured number of levels above the
// leaves, where updates are exponentially rare; a cached node may still be
// stale, which costs the traversal extra hops or a restart but never a
// wrong answer (see client.h). The bound counts node images; the index and
// LRU links add about 28 bytes per slot. Slots, links and the
// open-addressing index are allocated once; slot memory is committed by the
// OS only as it fills, so a large bound costs nothing until used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace locus::cell {

class NodeCache {
 public:
  NodeCache(uint64_t capacity_bytes, uint32_t node_bytes);

  bool enabled() const { return slots_ > 0; }
  // The cached image of the node at `ptr` (now most recently used), or null.
  const std::byte* lookup(uint64_t ptr);
  // Copies `node` in, evicting the least recently used node if full.
  void insert(uint64_t ptr, const std::byte* node);
  void erase(uint64_t ptr);

  size_t entries() const { return used_; }
  uint64_t bytes() const { return uint64_t{used_} * node_bytes_; }
  uint64_t capacity_bytes() const { return uint64_t{slots_} * node_bytes_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::byte* slot_data(uint32_t s) { return data_.get() + uint64_t{s} * node_bytes_; }
  uint64_t home(uint64_t ptr) const { return (ptr * 0x9E3779B97F4A7C15ULL) >> shift_; }
  // Index position holding `ptr`, or kNone.
  uint32_t position(uint64_t ptr) const;
  void erase_position(uint32_t pos);
  void unlink(uint32_t s);
  void push_front(uint32_t s);

  uint32_t node_bytes_;
  uint32_t slots_;
  std::unique_ptr<std::byte[]> data_;
  std::vector<uint64_t> key_;
  std::vector<uint32_t> prev_, next_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> index_;  // slot + 1, or 0 when empty
  int shift_ = 64;
  uint32_t head_ = kNone, tail_ = kNone;
  uint32_t used_ = 0;
};

}  // namespace locus::cell
