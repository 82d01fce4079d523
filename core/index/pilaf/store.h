// Store: the server's Pilaf hash table in local memory: the cuckoo table of
// self-verifying entries, the key-value extents under a buddy allocator,
// and the meta object. Only the server mutates it, from one thread; remote
// clients read the same bytes concurrently through the NIC, which is why
// every mutation is ordered so that a reader sees a key in one or two
// slots and never in none (see put()).
//
// When a region must be replaced (the table or the extents are full), the
// Store builds the new one and asks its RegionPublisher to register it
// (region_moving); only if that succeeds does it switch to it, bump the
// epoch and let the publisher publish it and deregister the old one
// (region_replaced) before the old memory is freed. A growth that fails
// anywhere leaves the store, its registrations and what clients read as
// they were, and the put that needed it fails with a clear error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/index/pilaf/layout.h"
#include "core/memory/buddy_allocator.h"

namespace locus::pilaf {

struct StoreOptions {
  uint64_t initial_buckets = 1 << 16;           // rounded up to a power of two
  uint64_t initial_extent_bytes = 16ull << 20;  // rounded up to a power of two
  uint32_t min_extent_block_bytes = 32;
  uint32_t max_kv_bytes = 64 * 1024;  // largest key+value extent accepted
  double max_load_factor = 0.85;      // grow the table beyond this fill
  uint32_t max_search_slots = 512;    // bound of the kick-chain search (BFS)
};

enum class RegionKind { kTable, kExtents };

class RegionPublisher {
 public:
  virtual ~RegionPublisher() = default;
  // The store's `kind` region is about to move to [mem, mem + bytes):
  // register it. On failure the store stays where it is.
  virtual Status region_moving(RegionKind kind, void* mem, uint64_t bytes) = 0;
  // The move is off (the store could not complete it): forget what
  // region_moving registered.
  virtual void region_move_abandoned(RegionKind kind) = 0;
  // The store's `kind` region now lives at the memory of region_moving;
  // make clients use it and make the old memory unreachable before this
  // returns.
  virtual Status region_replaced(RegionKind kind) = 0;
};

struct StoreStats {
  uint64_t keys = 0;
  uint64_t bucket_count = 0;
  uint64_t kicks = 0;           // entries moved by cuckoo inserts
  uint64_t table_grows = 0;
  uint64_t extent_grows = 0;
  uint64_t extent_bytes_in_use = 0;
};

class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> create(const StoreOptions& options);

  void set_publisher(RegionPublisher* publisher) { publisher_ = publisher; }

  // Local lookup on the server's memory (server-side gets, benchmarks).
  bool find(std::string_view key, std::string_view* value) const;
  // Insert or update. Ordering for concurrent RDMA readers: the new extent
  // is written before the entry that points at it; a cuckoo insert computes
  // the whole kick chain first and moves entries from its empty end back to
  // the front, so a moving key is always present in one or two slots.
  Status put(std::string_view key, std::string_view value);
  // NotFound if the key is absent.
  Status remove(std::string_view key);

  std::byte* table_memory() { return table_.data(); }
  const std::byte* table_memory() const { return table_.data(); }
  uint64_t table_bytes() const { return bucket_count_ * kEntryBytes; }
  std::byte* extents_memory() { return extents_.data(); }
  const std::byte* extents_memory() const { return extents_.data(); }
  uint64_t extents_bytes() const { return allocator_.capacity_bytes(); }
  std::byte* meta_memory() { return meta_.data(); }
  uint64_t bucket_count() const { return bucket_count_; }
  uint32_t max_kv_bytes() const { return options_.max_kv_bytes; }
  uint64_t epoch() const;
  // Bumps the epoch in the meta object (the publisher calls this).
  void bump_epoch();
  // A restarted server's store starts past the epoch clients last saw.
  void set_epoch(uint64_t epoch);
  // Calls fn(key, value) for every key, in table order (checkpoints);
  // stops at fn's first error.
  Status for_each(const std::function<Status(std::string_view, std::string_view)>& fn) const;
  StoreStats stats() const;

 private:
  Store(const StoreOptions& options, memory::BuddyAllocator allocator);
  Status init();

  const Entry& entry(uint64_t slot) const {
    return reinterpret_cast<const Entry*>(table_.data())[slot];
  }
  // Writes one entry as the NIC will see it: a plain 32-byte store ordered
  // after every earlier store.
  void publish(uint64_t slot, const Entry& e);
  // Slot holding `key`, or -1.
  int64_t locate(std::string_view key, const KeyHash& kh) const;
  // Places a new entry (hash h) by cuckoo kicks. kAborted if no chain fits.
  Status cuckoo_insert(const Entry& e, Hash128 h);
  // Finds a chain of slots ending in an empty one; fills path_ (front = a
  // slot of the new key). False if none within max_search_slots.
  bool find_kick_path(Hash128 h);
  Status grow_table();
  Status grow_extents(uint64_t needed_bytes);
  StatusOr<uint64_t> allocate_extent(uint32_t bytes);
  void set_move_seq(uint64_t v);

  StoreOptions options_;
  memory::BuddyAllocator allocator_;
  RegionPublisher* publisher_ = nullptr;
  AlignedBuffer table_;
  AlignedBuffer extents_;
  AlignedBuffer meta_;
  uint64_t bucket_count_ = 0;
  std::vector<Hash128> slot_hash_;  // server-side: the hash of each slot's key
  uint64_t keys_ = 0;
  uint64_t move_seq_ = 0;
  uint64_t kicks_ = 0;
  uint64_t table_grows_ = 0;
  uint64_t extent_grows_ = 0;

  struct SearchNode {
    uint64_t slot;
    int32_t parent;
  };
  std::vector<SearchNode> search_;  // BFS scratch, capacity max_search_slots
  std::vector<uint64_t> path_;
};

}  // namespace locus::pilaf
