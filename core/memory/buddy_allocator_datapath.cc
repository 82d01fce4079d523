// BuddyAllocator data path: allocate, free and the free-list primitives.
// Nothing here allocates heap memory on success or grows a container; the
// side arrays were sized by create()/grow(). Only an error Status builds a
// message string, and errors are off the fast path by definition.
#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "core/common/check.h"
#include "core/memory/buddy_allocator.h"

namespace locus::memory {

void BuddyAllocator::push_free(BlockIndex block, int order) {
  control_[block] = static_cast<uint8_t>(kFreeFlag | order);
  const BlockIndex head = free_head_[order];
  next_[block] = head;
  prev_[block] = kNil;
  if (head != kNil) prev_[head] = block;
  free_head_[order] = block;
  nonempty_orders_mask_ |= uint32_t{1} << order;
}

void BuddyAllocator::unlink_free(BlockIndex block, int order) {
  const BlockIndex next = next_[block];
  const BlockIndex prev = prev_[block];
  if (prev != kNil) {
    next_[prev] = next;
  } else {
    free_head_[order] = next;
  }
  if (next != kNil) prev_[next] = prev;
  if (free_head_[order] == kNil) nonempty_orders_mask_ &= ~(uint32_t{1} << order);
}

BuddyAllocator::BlockIndex BuddyAllocator::pop_free(int order) {
  const BlockIndex block = free_head_[order];
  LOCUS_CHECK(block != kNil);
  unlink_free(block, order);
  return block;
}

void BuddyAllocator::release(BlockIndex block, int order) {
  const int top = top_order();
  while (order < top) {
    // Blocks are aligned to their size, so the buddy differs in one bit; and
    // because the capacity is a power of two, the buddy is always in range.
    const BlockIndex buddy = block ^ (BlockIndex{1} << order);
    if (control_[buddy] != (kFreeFlag | order)) break;  // in use, or split further
    unlink_free(buddy, order);
    // Only the merged block's first min block keeps a control byte, so that
    // a later free() of a stale interior offset sees 0 and is rejected.
    control_[buddy] = 0;
    control_[block] = 0;
    block = std::min(block, buddy);
    ++order;
  }
  push_free(block, order);
}

StatusOr<uint64_t> BuddyAllocator::allocate(uint64_t bytes) {
  if (bytes == 0) return invalid_argument("buddy allocator: allocate of 0 bytes");
  if (bytes > capacity_bytes()) {
    return invalid_argument(fmt::format(
        "buddy allocator: allocate of {} bytes exceeds the capacity of {} bytes", bytes,
        capacity_bytes()));
  }
  const uint64_t min_blocks_wanted = ((bytes - 1) >> min_block_shift_) + 1;
  const int order = std::bit_width(min_blocks_wanted - 1);  // ceil(log2)

  // Orders >= `order` that have a free block; the lowest one splits least.
  const uint32_t usable = nonempty_orders_mask_ & ~((uint32_t{1} << order) - 1);
  if (usable == 0) {
    ++failed_allocations_;
    return resource_exhausted(fmt::format(
        "buddy allocator: no free block of {} bytes for an allocate of {} bytes "
        "(largest free block {} bytes, {} of {} bytes free)",
        uint64_t{min_block_bytes_} << order, bytes, largest_free_block_bytes(), free_bytes(),
        capacity_bytes()));
  }
  int found_order = std::countr_zero(usable);
  const BlockIndex block = pop_free(found_order);
  // Split down, keeping the lower half and freeing each upper half.
  while (found_order > order) {
    --found_order;
    push_free(block + (BlockIndex{1} << found_order), found_order);
  }
  control_[block] = static_cast<uint8_t>(kUsedFlag | order);

  bytes_in_use_ += uint64_t{min_block_bytes_} << order;
  ++live_allocations_;
  ++total_allocations_;
  return uint64_t{block} << min_block_shift_;
}

Status BuddyAllocator::free(uint64_t offset) {
  if (offset >= capacity_bytes()) {
    return out_of_range(fmt::format("buddy allocator: free of offset {} beyond the capacity of {} bytes",
                                    offset, capacity_bytes()));
  }
  if ((offset & (min_block_bytes_ - 1)) != 0) {
    return invalid_argument(fmt::format(
        "buddy allocator: free of offset {}, which is not aligned to the {}-byte min block", offset,
        min_block_bytes_));
  }
  const auto block = static_cast<BlockIndex>(offset >> min_block_shift_);
  const uint8_t control = control_[block];
  if (control == 0) {
    return invalid_argument(fmt::format(
        "buddy allocator: free of offset {}, which lies inside a block rather than at its start",
        offset));
  }
  if ((control & kUsedFlag) == 0) {
    return invalid_argument(fmt::format(
        "buddy allocator: free of offset {}, which is not allocated (double free?)", offset));
  }
  const int order = control & kOrderMask;
  bytes_in_use_ -= uint64_t{min_block_bytes_} << order;
  --live_allocations_;
  release(block, order);
  return Status::ok();
}

uint64_t BuddyAllocator::block_size(uint64_t offset) const {
  if (offset >= capacity_bytes() || (offset & (min_block_bytes_ - 1)) != 0) return 0;
  const uint8_t control = control_[offset >> min_block_shift_];
  if ((control & kUsedFlag) == 0) return 0;
  return uint64_t{min_block_bytes_} << (control & kOrderMask);
}

}  // namespace locus::memory
