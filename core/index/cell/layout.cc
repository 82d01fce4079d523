// Node format helpers: geometry checks, in-node searches and the versioned
// writer. See layout.h.
#include "core/index/cell/layout.h"

#include <atomic>
#include <cstddef>
#include <string>

#include "core/common/crc64.h"

namespace locus::cell {

Status Geometry::validate() const {
  if (node_bytes < 128 || node_bytes % 64 != 0 || node_bytes > (1u << 20)) {
    return invalid_argument("cell geometry: node_bytes must be a multiple of 64 in [128, 1 MiB], got " +
                            std::to_string(node_bytes));
  }
  if (key_capacity_bytes == 0 || key_capacity_bytes > 1024) {
    return invalid_argument("cell geometry: key_capacity_bytes must be in [1, 1024]");
  }
  if (node_bytes <= header_bytes() + 8 || capacity(true) < 3 || capacity(false) < 3) {
    return invalid_argument("cell geometry: " + std::to_string(node_bytes) + "-byte nodes hold " +
                            "fewer than 3 entries of " + std::to_string(key_capacity_bytes) +
                            "-byte keys; use bigger nodes or shorter keys");
  }
  if (capacity(false) > UINT16_MAX) return invalid_argument("cell geometry: too many entries per node");
  if (meganode_nodes < 8) return invalid_argument("cell geometry: meganode_nodes must be at least 8");
  if (meganodes_per_server == 0) return invalid_argument("cell geometry: meganodes_per_server must be positive");
  if (region_bytes() > kOffsetMask) return invalid_argument("cell geometry: node region exceeds 2^48 bytes");
  return Status();
}

// The searches compare entry i's key slot (its length, then its bytes)
// with the prepared key; the slot of entry i is key_at + i * stride.

int NodeView::compare_tie(const std::byte* at, uint32_t len, const SearchKey& k) const {
  if (len > g_->key_capacity_bytes) len = g_->key_capacity_bytes;  // a garbled image
  if (len <= 8 && k.key.size() <= 8) return static_cast<int>(len) - static_cast<int>(k.key.size());
  return std::string_view(reinterpret_cast<const char*>(at), len).compare(k.key);
}

uint32_t NodeView::lower_bound(const SearchKey& key, bool strictly_after) const {
  const uint32_t s = stride();
  const std::byte* key_at = entry(0) + Geometry::value_bytes(extent_entries());
  if (strictly_after) {
    return partition_point(0, [&](uint32_t i) { return compare_slot(key_at + uint64_t{i} * s, key) <= 0; });
  }
  return partition_point(0, [&](uint32_t i) { return compare_slot(key_at + uint64_t{i} * s, key) < 0; });
}

int32_t NodeView::find(const SearchKey& key) const {
  const uint32_t i = lower_bound(key);
  if (i >= count()) return -1;
  const std::byte* slot = entry(i) + Geometry::value_bytes(extent_entries());
  return compare_slot(slot, key) == 0 ? static_cast<int32_t>(i) : -1;
}

uint32_t NodeView::child_index(const SearchKey& key) const {
  // First entry in [1, count) whose key is > key; the one before covers it.
  const uint32_t s = stride();
  const std::byte* key_at = entry(0) + Geometry::value_bytes(extent_entries());
  return partition_point(1, [&](uint32_t i) { return compare_slot(key_at + uint64_t{i} * s, key) <= 0; }) - 1;
}

bool NodeView::stable() const {
  return (version_front() & 1) == 0 && checksum() == crc64(p_, g_->node_bytes - 8);
}

bool superblock_stable(const Superblock& sb) {
  return (sb.version_front & 1) == 0 && sb.checksum == crc64(&sb, offsetof(Superblock, checksum));
}

void seal_superblock(Superblock& sb) {
  __atomic_store_n(&sb.checksum, crc64(&sb, offsetof(Superblock, checksum)), __ATOMIC_RELAXED);
}

void NodeWriter::begin() {
  const uint64_t v = header().version_front;
  const uint64_t odd = (v | 1) == v ? v + 2 : v + 1;  // a node left odd by a crash stays odd-safe
  __atomic_store_n(&header().version_front, odd, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_release);
}

void NodeWriter::end() {
  std::atomic_thread_fence(std::memory_order_release);
  const uint64_t even = header().version_front + 1;
  __atomic_store_n(&header().version_front, even, __ATOMIC_RELAXED);
  const uint64_t sum = crc64(p_, g_->node_bytes - 8);
  __atomic_store_n(reinterpret_cast<uint64_t*>(p_ + g_->node_bytes - 8), sum, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_release);
}

void NodeWriter::init(uint32_t local_level, uint32_t meganode_level, Bound min, Bound max,
                      uint64_t right) {
  NodeHeader& h = header();
  h.count = 0;
  h.valid = 1;
  h.local_level = static_cast<uint8_t>(local_level);
  h.meganode_level = static_cast<uint8_t>(meganode_level);
  h.flags = 0;
  h.reserved0 = 0;
  h.reserved1 = 0;
  set_min(min);
  set_max(max);
  h.right = right;
}

void NodeWriter::set_min(Bound b) {
  NodeHeader& h = header();
  h.flags = static_cast<uint8_t>((h.flags & ~kMinIsNegInf) | (b.inf ? kMinIsNegInf : 0));
  const std::string_view k = b.inf ? std::string_view() : b.key;
  h.min_len = static_cast<uint16_t>(k.size());
  // memmove: a node re-initialised from its own bounds copies onto itself.
  if (!k.empty()) std::memmove(p_ + sizeof(NodeHeader), k.data(), k.size());
}

void NodeWriter::set_max(Bound b) {
  NodeHeader& h = header();
  h.flags = static_cast<uint8_t>((h.flags & ~kMaxIsPosInf) | (b.inf ? kMaxIsPosInf : 0));
  const std::string_view k = b.inf ? std::string_view() : b.key;
  h.max_len = static_cast<uint16_t>(k.size());
  if (!k.empty()) std::memmove(p_ + sizeof(NodeHeader) + g_->key_capacity_bytes, k.data(), k.size());
}

void NodeWriter::set_entry(uint32_t i, std::string_view key, const std::byte* value) {
  std::byte* e = entry(i);
  const uint32_t vb = Geometry::value_bytes(view().extent_entries());
  std::memcpy(e, value, vb);
  const uint16_t len = static_cast<uint16_t>(key.size());
  std::memcpy(e + vb, &len, 2);
  if (len > 0) std::memcpy(e + vb + 2, key.data(), len);
}

void NodeWriter::set_value(uint32_t i, const std::byte* value) {
  std::memcpy(entry(i), value, Geometry::value_bytes(view().extent_entries()));
}

void NodeWriter::open_gap(uint32_t i) {
  const uint32_t n = header().count;
  if (i < n) std::memmove(entry(i + 1), entry(i), uint64_t{n - i} * stride());
}

void NodeWriter::close_gap(uint32_t i) {
  const uint32_t n = header().count;
  if (i + 1 < n) std::memmove(entry(i), entry(i + 1), uint64_t{n - i - 1} * stride());
}

}  // namespace locus::cell
