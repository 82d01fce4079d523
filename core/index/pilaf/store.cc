// Store: see store.h. The cuckoo insert path is in store_cuckoo.cc.
#include "core/index/pilaf/store.h"

#include <atomic>
#include <bit>
#include <string>

namespace locus::pilaf {

StatusOr<std::unique_ptr<Store>> Store::create(const StoreOptions& options) {
  if (options.max_kv_bytes < kExtentHeaderBytes + 1 || options.max_load_factor <= 0.0 ||
      options.max_load_factor > 0.95 || options.max_search_slots < kWays) {
    return invalid_argument("pilaf store: max_kv_bytes, max_load_factor (0, 0.95] or "
                            "max_search_slots out of range");
  }
  const uint64_t extent_bytes =
      std::bit_ceil(std::max<uint64_t>(options.initial_extent_bytes, options.max_kv_bytes));
  LOCUS_ASSIGN_OR_RETURN(auto allocator,
                         memory::BuddyAllocator::create(extent_bytes, options.min_extent_block_bytes));
  std::unique_ptr<Store> store(new Store(options, std::move(allocator)));
  LOCUS_RETURN_IF_ERROR(store->init());
  return store;
}

Store::Store(const StoreOptions& options, memory::BuddyAllocator allocator)
    : options_(options), allocator_(std::move(allocator)) {}

Status Store::init() {
  bucket_count_ = std::bit_ceil(std::max<uint64_t>(options_.initial_buckets, 8));
  table_ = AlignedBuffer(bucket_count_ * kEntryBytes);
  extents_ = AlignedBuffer(allocator_.capacity_bytes());
  meta_ = AlignedBuffer(kMetaBytes);
  if (!table_.valid() || !extents_.valid() || !meta_.valid()) {
    return resource_exhausted("pilaf store: cannot allocate " +
                              std::to_string(table_bytes() + allocator_.capacity_bytes()) +
                              " bytes");
  }
  const Entry empty = empty_entry();
  for (uint64_t s = 0; s < bucket_count_; ++s) std::memcpy(table_.data() + s * kEntryBytes, &empty, kEntryBytes);
  slot_hash_.assign(bucket_count_, Hash128{});
  search_.reserve(options_.max_search_slots);
  path_.reserve(options_.max_search_slots);
  return Status();
}

uint64_t Store::epoch() const {
  return __atomic_load_n(&reinterpret_cast<const Meta*>(meta_.data())->epoch, __ATOMIC_ACQUIRE);
}

void Store::bump_epoch() {
  __atomic_store_n(&reinterpret_cast<Meta*>(meta_.data())->epoch, epoch() + 1, __ATOMIC_RELEASE);
}

void Store::set_epoch(uint64_t epoch) {
  __atomic_store_n(&reinterpret_cast<Meta*>(meta_.data())->epoch, epoch, __ATOMIC_RELEASE);
}

Status Store::for_each(const std::function<Status(std::string_view, std::string_view)>& fn) const {
  for (uint64_t s = 0; s < bucket_count_; ++s) {
    const Entry& e = entry(s);
    if (e.empty()) continue;
    std::string_view k, v;
    if (!parse_extent(extents_.data() + e.kv_offset, e.kv_length, &k, &v)) {
      return corruption("pilaf store: slot " + std::to_string(s) + " points at a damaged extent");
    }
    LOCUS_RETURN_IF_ERROR(fn(k, v));
  }
  return Status();
}

void Store::set_move_seq(uint64_t v) {
  move_seq_ = v;
  __atomic_store_n(&reinterpret_cast<Meta*>(meta_.data())->move_seq, v, __ATOMIC_RELEASE);
}

StoreStats Store::stats() const {
  return StoreStats{keys_, bucket_count_, kicks_, table_grows_, extent_grows_,
                    allocator_.bytes_in_use()};
}

void Store::publish(uint64_t slot, const Entry& e) {
  // Everything written before (the extent, the previous move) must be
  // visible no later than this entry.
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(table_.data() + slot * kEntryBytes, &e, kEntryBytes);
}

int64_t Store::locate(std::string_view key, const KeyHash& kh) const {
  for (int w = 0; w < kWays; ++w) {
    const uint64_t s = kh.slot[w];
    const Entry& e = entry(s);
    if (e.empty() || e.key_tag != kh.tag) continue;
    std::string_view k, v;
    if (parse_extent(extents_.data() + e.kv_offset, e.kv_length, &k, &v) && k == key) {
      return static_cast<int64_t>(s);
    }
  }
  return -1;
}

bool Store::find(std::string_view key, std::string_view* value) const {
  const KeyHash kh = hash_key(key, bucket_count_ - 1);
  const int64_t s = locate(key, kh);
  if (s < 0) return false;
  const Entry& e = entry(static_cast<uint64_t>(s));
  std::string_view k;
  return parse_extent(extents_.data() + e.kv_offset, e.kv_length, &k, value);
}

StatusOr<uint64_t> Store::allocate_extent(uint32_t bytes) {
  auto off = allocator_.allocate(bytes);
  if (off.is_ok()) return off;
  if (off.status().code() != StatusCode::kResourceExhausted) return off.status();
  LOCUS_RETURN_IF_ERROR(grow_extents(bytes));
  return allocator_.allocate(bytes);
}

Status Store::put(std::string_view key, std::string_view value) {
  if (key.empty()) return invalid_argument("pilaf put: empty key");
  const uint64_t bytes = uint64_t{kExtentHeaderBytes} + key.size() + value.size();
  if (bytes > options_.max_kv_bytes) {
    return invalid_argument("pilaf put: key+value of " + std::to_string(bytes) +
                            " bytes exceeds max_kv_bytes " + std::to_string(options_.max_kv_bytes));
  }
  const Hash128 h = hash128(key);
  LOCUS_ASSIGN_OR_RETURN(uint64_t offset, allocate_extent(static_cast<uint32_t>(bytes)));
  std::byte* extent = extents_.data() + offset;
  write_extent(extent, key, value);
  // Computed after any growth: slots depend on the bucket count.
  const KeyHash kh = slots_of(h, bucket_count_ - 1);
  Entry e;
  e.kv_offset = offset;
  e.kv_length = static_cast<uint32_t>(bytes);
  e.key_tag = kh.tag;
  e.kv_crc = crc64(extent, bytes);
  e = seal(e);

  const int64_t existing = locate(key, kh);
  if (existing >= 0) {
    const uint64_t old_offset = entry(static_cast<uint64_t>(existing)).kv_offset;
    publish(static_cast<uint64_t>(existing), e);
    return allocator_.free(old_offset);
  }
  // A failed growth must not leak the extent this put took (defect 5).
  auto fail = [&](Status st) {
    (void)allocator_.free(offset);
    return st;
  };
  if (static_cast<double>(keys_ + 1) > options_.max_load_factor * static_cast<double>(bucket_count_)) {
    if (Status st = grow_table(); !st.is_ok()) return fail(st);
  }
  while (true) {
    Entry placed = e;
    placed.key_tag = slots_of(h, bucket_count_ - 1).tag;
    Status st = cuckoo_insert(seal(placed), h);
    if (st.is_ok()) break;
    if (st.code() != StatusCode::kAborted) return fail(st);
    if (Status grown = grow_table(); !grown.is_ok()) return fail(grown);
  }
  ++keys_;
  return Status();
}

Status Store::remove(std::string_view key) {
  const KeyHash kh = hash_key(key, bucket_count_ - 1);
  const int64_t s = locate(key, kh);
  if (s < 0) return not_found("pilaf delete: no such key");
  const uint64_t offset = entry(static_cast<uint64_t>(s)).kv_offset;
  publish(static_cast<uint64_t>(s), empty_entry());
  slot_hash_[static_cast<uint64_t>(s)] = Hash128{};
  --keys_;
  return allocator_.free(offset);
}

Status Store::grow_extents(uint64_t needed_bytes) {
  const uint64_t old_bytes = allocator_.capacity_bytes();
  uint64_t new_bytes = old_bytes * 2;
  while (new_bytes - allocator_.bytes_in_use() < 2 * needed_bytes) new_bytes *= 2;
  AlignedBuffer bigger(new_bytes);
  if (!bigger.valid()) {
    return resource_exhausted("pilaf: cannot grow extents to " + std::to_string(new_bytes) + " bytes");
  }
  // Offsets stay valid: the old bytes are copied to the same offsets.
  std::memcpy(bigger.data(), extents_.data(), old_bytes);
  if (publisher_ != nullptr) {
    if (Status st = publisher_->region_moving(RegionKind::kExtents, bigger.data(), new_bytes); !st.is_ok()) {
      return Status(st.code(), "pilaf: cannot publish extents of " + std::to_string(new_bytes) + " bytes: " +
                                   st.message());
    }
  }
  if (Status st = allocator_.grow(new_bytes); !st.is_ok()) {
    if (publisher_ != nullptr) publisher_->region_move_abandoned(RegionKind::kExtents);
    return st;
  }
  AlignedBuffer old = std::exchange(extents_, std::move(bigger));
  ++extent_grows_;
  bump_epoch();
  if (publisher_ != nullptr) LOCUS_RETURN_IF_ERROR(publisher_->region_replaced(RegionKind::kExtents));
  return Status();  // `old` is freed only now, after it became unreachable
}

}  // namespace locus::pilaf
