// BuddyAllocator set-up and inspection: creation, growth, statistics and the
// consistency walk. Everything here may allocate or take O(capacity) time;
// the data path (allocate/free) lives in buddy_allocator_datapath.cc.
#include "core/memory/buddy_allocator.h"

#include <bit>

#include <fmt/format.h>

namespace locus::memory {

BuddyAllocator::BuddyAllocator(uint64_t min_blocks, uint32_t min_block_bytes)
    : min_blocks_(min_blocks),
      min_block_bytes_(min_block_bytes),
      min_block_shift_(std::countr_zero(min_block_bytes)),
      control_(min_blocks),
      next_(min_blocks),
      prev_(min_blocks) {
  free_head_.fill(kNil);
  if (control_.size() != min_blocks || next_.size() != min_blocks || prev_.size() != min_blocks) return;
  push_free(0, top_order());
}

Status BuddyAllocator::check_geometry(uint64_t capacity_bytes, uint64_t min_block_bytes) {
  if (!is_power_of_two(min_block_bytes) || min_block_bytes < kMinBlockBytesFloor) {
    return invalid_argument(fmt::format(
        "buddy allocator: min block of {} bytes must be a power of two of at least {} bytes",
        min_block_bytes, kMinBlockBytesFloor));
  }
  if (!is_power_of_two(capacity_bytes) || capacity_bytes < min_block_bytes) {
    return invalid_argument(fmt::format(
        "buddy allocator: capacity of {} bytes must be a power of two of at least the "
        "min block ({} bytes)",
        capacity_bytes, min_block_bytes));
  }
  if (capacity_bytes / min_block_bytes > kMaxMinBlocks) {
    return invalid_argument(fmt::format(
        "buddy allocator: capacity of {} bytes is {} min blocks of {} bytes, more than the "
        "limit of {}; use a larger min block",
        capacity_bytes, capacity_bytes / min_block_bytes, min_block_bytes, kMaxMinBlocks));
  }
  return Status::ok();
}

StatusOr<BuddyAllocator> BuddyAllocator::create(uint64_t capacity_bytes, uint32_t min_block_bytes) {
  LOCUS_RETURN_IF_ERROR(check_geometry(capacity_bytes, min_block_bytes));
  BuddyAllocator a(capacity_bytes / min_block_bytes, min_block_bytes);
  if (a.control_.size() != a.min_blocks_ || a.next_.size() != a.min_blocks_ || a.prev_.size() != a.min_blocks_) {
    return resource_exhausted(fmt::format("buddy allocator: cannot allocate the bookkeeping of {} bytes ({} min blocks)",
                                          capacity_bytes, a.min_blocks_));
  }
  return a;
}

int BuddyAllocator::top_order() const { return std::countr_zero(min_blocks_); }

Status BuddyAllocator::grow(uint64_t new_capacity_bytes) {
  const uint64_t old_capacity_bytes = capacity_bytes();
  if (new_capacity_bytes <= old_capacity_bytes) {
    return invalid_argument(fmt::format(
        "buddy allocator: grow to {} bytes does not exceed the current capacity of {} bytes",
        new_capacity_bytes, old_capacity_bytes));
  }
  LOCUS_RETURN_IF_ERROR(check_geometry(new_capacity_bytes, min_block_bytes_));

  // Resize before touching any state, so that a failed allocation here
  // leaves the allocator as it was (larger side arrays are harmless).
  const uint64_t new_min_blocks = new_capacity_bytes >> min_block_shift_;
  if (!control_.grow(new_min_blocks) || !next_.grow(new_min_blocks) || !prev_.grow(new_min_blocks)) {
    return resource_exhausted(fmt::format("buddy allocator: cannot allocate the bookkeeping of {} bytes",
                                          new_capacity_bytes));
  }

  // Capacities are powers of two, so the added range is exactly the blocks
  // [n, 2n), [2n, 4n), ... Releasing them in that order lets each one merge
  // with a fully free range below it, just as if it had been freed.
  const uint64_t old_min_blocks = min_blocks_;
  min_blocks_ = new_min_blocks;
  for (uint64_t block = old_min_blocks; block < new_min_blocks; block *= 2) {
    release(static_cast<BlockIndex>(block), std::countr_zero(block));
  }
  return Status::ok();
}

uint64_t BuddyAllocator::largest_free_block_bytes() const {
  if (nonempty_orders_mask_ == 0) return 0;
  return uint64_t{min_block_bytes_} << (std::bit_width(nonempty_orders_mask_) - 1);
}

BuddyAllocator::Stats BuddyAllocator::stats() const {
  Stats s;
  s.capacity_bytes = capacity_bytes();
  s.min_block_bytes = min_block_bytes_;
  s.bytes_in_use = bytes_in_use_;
  s.free_bytes = free_bytes();
  s.live_allocations = live_allocations_;
  s.largest_free_block_bytes = largest_free_block_bytes();
  s.total_allocations = total_allocations_;
  s.failed_allocations = failed_allocations_;
  return s;
}

Status BuddyAllocator::check_consistency() const {
  auto broken = [](std::string what) { return internal_error("buddy allocator: " + what); };

  // Pass 1: the blocks tile [0, capacity) in address order.
  std::array<uint64_t, kMaxOrders> free_blocks_by_order{};
  uint64_t used_bytes = 0;
  uint64_t used_blocks = 0;
  for (uint64_t block = 0; block < min_blocks_;) {
    const uint8_t control = control_[block];
    const bool is_free = (control & kFreeFlag) != 0;
    const bool is_used = (control & kUsedFlag) != 0;
    const int order = control & kOrderMask;
    if (is_free == is_used) return broken(fmt::format("block {} has control byte {:#x}", block, control));
    const uint64_t span = uint64_t{1} << order;
    if (order > top_order() || block % span != 0 || block + span > min_blocks_) {
      return broken(fmt::format("block {} of order {} is misplaced", block, order));
    }
    for (uint64_t inner = block + 1; inner < block + span; ++inner) {
      if (control_[inner] != 0) {
        return broken(fmt::format("min block {} inside block {} has a control byte", inner, block));
      }
    }
    if (is_free) {
      ++free_blocks_by_order[order];
      // Full coalescing: a free block's buddy is never a free block of the same order.
      const uint64_t buddy = block ^ span;
      if (order < top_order() && control_[buddy] == (kFreeFlag | order)) {
        return broken(fmt::format("free buddies {} and {} of order {} not merged", block, buddy, order));
      }
    } else {
      used_bytes += span * min_block_bytes_;
      ++used_blocks;
    }
    block += span;
  }
  if (used_bytes != bytes_in_use_ || used_blocks != live_allocations_) {
    return broken(fmt::format("counters say {} bytes in {} blocks, blocks say {} in {}",
                              bytes_in_use_, live_allocations_, used_bytes, used_blocks));
  }

  // Pass 2: each free list holds exactly the free blocks of its order.
  for (int order = 0; order < kMaxOrders; ++order) {
    uint64_t listed = 0;
    BlockIndex previous = kNil;
    for (BlockIndex block = free_head_[order]; block != kNil; block = next_[block]) {
      if (block >= min_blocks_ || control_[block] != (kFreeFlag | order) || prev_[block] != previous ||
          ++listed > free_blocks_by_order[order]) {
        return broken(fmt::format("free list of order {} is corrupt at block {}", order, block));
      }
      previous = block;
    }
    const bool marked_nonempty = (nonempty_orders_mask_ >> order) & 1;
    if (listed != free_blocks_by_order[order] || marked_nonempty != (listed != 0)) {
      return broken(fmt::format("free list of order {} holds {} of {} free blocks", order, listed,
                                free_blocks_by_order[order]));
    }
  }
  return Status::ok();
}

}  // namespace locus::memory
