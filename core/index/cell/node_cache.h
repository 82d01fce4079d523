// NodeCache: a client's LRU cache of B-link nodes it fetched, bounded in
// bytes (the paper's clients keep up to 128 MB of 1 KB nodes). The client
// only offers nodes at least a configured number of levels above the
// leaves, where updates are exponentially rare; a cached node may still be
// stale, which costs the traversal extra hops or a restart but never a
// wrong answer (see client.h). The bound counts node images; the index and
// LRU links add at most kBytesPerSlot per slot. Slots, links and the
// open-addressing index grow as the cache fills (slot memory in chunks
// that never move, so a looked-up image stays where it is), doubling up
// to the bound: a client reserves in proportion to what it caches, and a
// large bound (the paper's 128 MB, for each of hundreds of clients) costs
// nothing until used.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace locus::cell {

class NodeCache {
 public:
  NodeCache(uint64_t capacity_bytes, uint32_t node_bytes);

  // Memory per slot besides the node image: its key, LRU links and free
  // list entry, and its share of the index (under four entries per slot).
  static constexpr uint64_t kBytesPerSlot = sizeof(uint64_t) + 3 * sizeof(uint32_t) + 4 * sizeof(uint32_t);

  bool enabled() const { return max_slots_ > 0; }
  // The cached image of the node at `ptr` (now most recently used), or null.
  const std::byte* lookup(uint64_t ptr);
  // Copies `node` in, evicting the least recently used node if full.
  void insert(uint64_t ptr, const std::byte* node);
  void erase(uint64_t ptr);

  size_t entries() const { return used_; }
  uint64_t bytes() const { return uint64_t{used_} * node_bytes_; }
  uint64_t capacity_bytes() const { return uint64_t{max_slots_} * node_bytes_; }
  // Node images room allocated so far.
  uint64_t allocated_bytes() const { return uint64_t{slots_} * node_bytes_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kFirstChunkSlots = 64;
  // Slot s lives in chunk 0 below first_chunk_, else in chunk k, which
  // holds slots [first_chunk_ * 2^(k-1), first_chunk_ * 2^k).
  std::byte* slot_data(uint32_t s) {
    if (s < first_chunk_) return chunks_[0].get() + uint64_t{s} * node_bytes_;
    const uint32_t k = static_cast<uint32_t>(std::bit_width(s / first_chunk_));
    const uint64_t start = uint64_t{first_chunk_} << (k - 1);
    return chunks_[k].get() + (s - start) * node_bytes_;
  }
  // Doubles the slots (up to max_slots_) and rebuilds the index for them.
  void grow();
  void index_insert(uint32_t s);
  uint64_t home(uint64_t ptr) const { return (ptr * 0x9E3779B97F4A7C15ULL) >> shift_; }
  // Index position holding `ptr`, or kNone.
  uint32_t position(uint64_t ptr) const;
  void erase_position(uint32_t pos);
  void unlink(uint32_t s);
  void push_front(uint32_t s);

  uint32_t node_bytes_;
  uint32_t max_slots_;
  uint32_t first_chunk_;
  uint32_t slots_ = 0;  // allocated so far
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::vector<uint64_t> key_;
  std::vector<uint32_t> prev_, next_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> index_;  // slot + 1, or 0 when empty
  int shift_ = 64;
  uint32_t head_ = kNone, tail_ = kNone;
  uint32_t used_ = 0;
};

}  // namespace locus::cell
