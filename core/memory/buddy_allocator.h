// BuddyAllocator: a power-of-two buddy allocator (in the spirit of SQLite's
// mem5) that hands out offsets inside a registered memory region, e.g. the
// extents region where Pilaf keeps keys and values.
//
// Why the metadata lives outside the region: clients read that region with
// RDMA READs, so it must hold nothing but data they may see. Free-list links
// written into free blocks (as mem5 does) would be visible to a client that
// follows a stale pointer, and a server bug there would corrupt what clients
// verify by CRC. So every byte of bookkeeping sits in side arrays indexed by
// minimum-block number:
//   - control_[i]: for the first min block of every current block, its order
//     (log2 of size in min blocks) and whether it is free or in use; zero for
//     every min block that is not the start of a block;
//   - next_[i] / prev_[i]: doubly linked free lists, one per order, so that a
//     buddy can be unlinked in O(1) when it coalesces.
// That costs 9 bytes per min block (14% at 64-byte min blocks), paid once.
//
// The allocator only does arithmetic on offsets; it never touches the region.
// Blocks are aligned to their size relative to the region start. allocate()
// and free() are O(log(capacity / min block)) and do not allocate heap memory
// except to build the message of an error Status. Not thread-safe: it belongs
// to the server thread that owns the region.
#pragma once

#include <array>
#include <cstdint>

#include "core/common/status.h"
#include "core/common/zeroed_array.h"

namespace locus::memory {

class BuddyAllocator {
 public:
  // Smallest block: mem5's floor, and room for a 16-byte header plus CRC.
  static constexpr uint32_t kMinBlockBytesFloor = 16;
  // Block indices are 32-bit; one value is reserved as the list terminator.
  static constexpr uint64_t kMaxMinBlocks = uint64_t{1} << 31;

  struct Stats {
    uint64_t capacity_bytes = 0;
    uint64_t min_block_bytes = 0;
    uint64_t bytes_in_use = 0;              // sum of the sizes of live blocks
    uint64_t free_bytes = 0;                // capacity_bytes - bytes_in_use
    uint64_t live_allocations = 0;          // blocks currently allocated
    uint64_t largest_free_block_bytes = 0;  // 0 when nothing is free
    uint64_t total_allocations = 0;         // successful allocate() calls ever
    uint64_t failed_allocations = 0;        // allocate() calls that found no room
  };

  // Both sizes powers of two, min_block_bytes >= 16, capacity >= min block,
  // and at most kMaxMinBlocks min blocks. The whole capacity starts free.
  static StatusOr<BuddyAllocator> create(uint64_t capacity_bytes, uint32_t min_block_bytes);

  // Offset of a block of bit_ceil(max(bytes, min block)) bytes, aligned to
  // its size. kInvalidArgument for 0 or more than the capacity;
  // kResourceExhausted when no free block is large enough.
  StatusOr<uint64_t> allocate(uint64_t bytes);

  // Returns the block starting at `offset` and merges it with free buddies.
  // An offset that is not the start of a live block (double free, interior
  // or misaligned offset, out of range) is rejected and changes nothing.
  Status free(uint64_t offset);

  // Size of the live block starting at `offset`; 0 if there is none.
  uint64_t block_size(uint64_t offset) const;

  // Extends the managed range to new_capacity_bytes (a power of two larger
  // than the current capacity) in place: existing offsets stay valid, the
  // added range becomes free and merges with a fully free old range. The
  // caller provides the bigger region (Pilaf copies the old one into it).
  // Not on the data path: the side arrays are resized here.
  Status grow(uint64_t new_capacity_bytes);

  uint64_t capacity_bytes() const { return min_blocks_ * min_block_bytes_; }
  // What the allocator itself keeps beside a managed range of
  // capacity_bytes: a control byte and two free-list links per min block
  // (for memory estimates made before creating one).
  static uint64_t bookkeeping_bytes(uint64_t capacity_bytes, uint32_t min_block_bytes) {
    return capacity_bytes / min_block_bytes * (sizeof(uint8_t) + 2 * sizeof(BlockIndex));
  }
  uint64_t min_block_bytes() const { return min_block_bytes_; }
  uint64_t bytes_in_use() const { return bytes_in_use_; }
  uint64_t free_bytes() const { return capacity_bytes() - bytes_in_use_; }
  uint64_t live_allocations() const { return live_allocations_; }
  uint64_t largest_free_block_bytes() const;
  Stats stats() const;

  // Walks every block and free list and checks that they agree with each
  // other and with the counters. O(capacity / min block): for tests and
  // debugging, never the data path.
  Status check_consistency() const;

 private:
  using BlockIndex = uint32_t;
  static constexpr BlockIndex kNil = UINT32_MAX;
  static constexpr int kMaxOrders = 32;  // orders 0..31 cover kMaxMinBlocks

  // control_ byte: the order in the low bits plus exactly one state flag on
  // the first min block of each block, 0 elsewhere. A zero byte is what lets
  // free() reject interior offsets without scanning.
  static constexpr uint8_t kOrderMask = 0x3F;
  static constexpr uint8_t kFreeFlag = 0x40;
  static constexpr uint8_t kUsedFlag = 0x80;

  BuddyAllocator(uint64_t min_blocks, uint32_t min_block_bytes);

  static bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
  static Status check_geometry(uint64_t capacity_bytes, uint64_t min_block_bytes);
  int top_order() const;  // order of a block spanning the whole capacity

  // Free-list primitives (buddy_allocator_datapath.cc).
  void push_free(BlockIndex block, int order);
  void unlink_free(BlockIndex block, int order);
  BlockIndex pop_free(int order);
  // Marks [block, order) free, merging with free buddies as far as possible.
  void release(BlockIndex block, int order);

  uint64_t min_blocks_ = 0;
  uint32_t min_block_bytes_ = 0;
  int min_block_shift_ = 0;

  // Per min block. Zeroed arrays, not vectors: a store sized for growth
  // touches the pages of only the blocks it uses. next_ and prev_ are read
  // only for blocks on a free list, which push_free() writes first.
  ZeroedArray<uint8_t> control_;
  ZeroedArray<BlockIndex> next_;
  ZeroedArray<BlockIndex> prev_;
  std::array<BlockIndex, kMaxOrders> free_head_{};
  // Bit k set iff free_head_[k] != kNil: the smallest usable order and the
  // largest free block are one bit scan away instead of a loop over orders.
  uint32_t nonempty_orders_mask_ = 0;

  uint64_t bytes_in_use_ = 0;
  uint64_t live_allocations_ = 0;
  uint64_t total_allocations_ = 0;
  uint64_t failed_allocations_ = 0;
};

}  // namespace locus::memory
