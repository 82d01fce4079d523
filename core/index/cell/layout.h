// Cell's remotely readable layout: what a client finds in a server's node
// region and how it checks what it read. Shared by the server (which
// writes nodes), the client (which reads them with RDMA) and the split
// protocol.
//
//  * Pointers are (region id, offset) packed in 64 bits: a 16-bit Cell
//    region id, which the region table maps to a server and a registered
//    region, and a 48-bit byte offset. Nothing else names remote memory.
//  * A node region is a superblock slot (one node; in region 0 it holds the
//    root pointer, the well-known location every search starts from) and
//    then meganodes_per_server meganodes of meganode_nodes fixed-size
//    nodes. Node 0 of a meganode is its root and never moves: a local root
//    split copies the root's entries into two new nodes, so every pointer
//    to a meganode (child pointers, right links across meganodes) stays
//    valid for the meganode's life.
//  * A node is a version at the start (odd while the server writes it), a
//    valid flag, its local level (0 = local leaf) and its
//    meganode level (0 = leaf meganode), min and max key (or infinities),
//    a right link and sorted fixed-stride entries. Local leaves of leaf
//    meganodes hold ExtentRefs (self-verifying pointers to key-value
//    extents, CRC64 over the extent); every other node holds child
//    pointers, entry i covering [key_i, key_i+1) and entry 0 everything
//    from the node's min key. Its last 8 bytes are a CRC64 of the rest,
//    written when a write ends: a READ may copy a node's cache lines in
//    any order (nothing in the verbs specification orders them, and the
//    fault transport's split READs copy them backwards or at random), so
//    a version at each end proves nothing about the middle; the checksum
//    does, whatever the order (issue 16, defect 6). The superblock is
//    checked the same way.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/common/prefetch.h"
#include "core/common/status.h"

namespace locus::cell {

using CellRegionId = uint16_t;
constexpr uint64_t kNullPtr = ~uint64_t{0};
constexpr int kOffsetBits = 48;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
constexpr CellRegionId kSuperblockRegion = 0;  // the lowest region id in the cluster
constexpr uint32_t kMaxLevels = 24;            // local levels per meganode, meganode levels per tree

constexpr uint64_t make_ptr(CellRegionId region, uint64_t offset) {
  return (uint64_t{region} << kOffsetBits) | (offset & kOffsetMask);
}
constexpr CellRegionId ptr_region(uint64_t p) { return static_cast<CellRegionId>(p >> kOffsetBits); }
constexpr uint64_t ptr_offset(uint64_t p) { return p & kOffsetMask; }

// A self-verifying pointer to a key-value extent (Pilaf's technique): the
// client checks the CRC64 of what it fetched against `crc`.
struct ExtentRef {
  uint64_t ptr = kNullPtr;
  uint32_t length = 0;
  uint32_t reserved = 0;
  uint64_t crc = 0;
};
static_assert(sizeof(ExtentRef) == 24);

struct NodeHeader {
  uint64_t version_front = 0;
  uint16_t count = 0;
  uint8_t valid = 0;
  uint8_t local_level = 0;
  uint8_t meganode_level = 0;
  uint8_t flags = 0;
  uint16_t min_len = 0;
  uint16_t max_len = 0;
  uint16_t reserved0 = 0;
  uint32_t reserved1 = 0;
  uint64_t right = kNullPtr;
};
static_assert(sizeof(NodeHeader) == 32);
constexpr uint8_t kMinIsNegInf = 1;
constexpr uint8_t kMaxIsPosInf = 2;

// At offset 0 of region 0, versioned and checksummed like a node.
struct Superblock {
  uint64_t version_front = 0;
  uint64_t root = kNullPtr;  // root node of the root meganode
  uint32_t root_level = 0;   // meganode level of the root meganode
  uint32_t reserved = 0;
  uint64_t pad[4] = {};
  uint64_t checksum = 0;     // CRC64 of the bytes before it
};
static_assert(sizeof(Superblock) == 64);
// Version even and checksum right: no write overlapped the READ.
bool superblock_stable(const Superblock& sb);
void seal_superblock(Superblock& sb);
constexpr uint32_t kSuperblockBytes = sizeof(Superblock);

// A key or an infinity: the min (-inf) or max (+inf) bound of a node.
struct Bound {
  std::string_view key;
  bool inf = false;
};

// The shape of every node region in one tree; clients get it with the layout.
struct Geometry {
  uint32_t node_bytes = 1024;
  uint32_t key_capacity_bytes = 64;   // longest key
  uint32_t meganode_nodes = 65536;    // 64 MB meganodes of 1 KB nodes, as in the paper
  uint32_t meganodes_per_server = 16;

  Status validate() const;

  static constexpr uint32_t align8(uint64_t x) { return static_cast<uint32_t>((x + 7) & ~uint64_t{7}); }
  uint32_t header_bytes() const { return align8(sizeof(NodeHeader) + 2ull * key_capacity_bytes); }
  static constexpr uint32_t value_bytes(bool extents) { return extents ? sizeof(ExtentRef) : 8; }
  // Entry: [value][u16 key length][key bytes], padded to 8.
  uint32_t stride(bool extents) const { return align8(value_bytes(extents) + 2ull + key_capacity_bytes); }
  uint32_t capacity(bool extents) const { return (node_bytes - 8 - header_bytes()) / stride(extents); }
  uint32_t max_stride() const { return stride(true); }
  uint32_t max_capacity() const { return capacity(false); }

  uint64_t meganode_bytes() const { return uint64_t{meganode_nodes} * node_bytes; }
  uint64_t region_bytes() const { return node_bytes + uint64_t{meganodes_per_server} * meganode_bytes(); }
  uint64_t meganode_base(uint32_t m) const { return node_bytes + uint64_t{m} * meganode_bytes(); }
  uint64_t node_offset(uint32_t m, uint32_t index) const {
    return meganode_base(m) + uint64_t{index} * node_bytes;
  }
  // Every descent step asks these: powers of two (the usual sizes) avoid a division.
  bool is_node_offset(uint64_t off) const {
    const bool aligned = power_of_two(node_bytes) ? (off & (node_bytes - 1)) == 0 : off % node_bytes == 0;
    return off >= node_bytes && off < region_bytes() && aligned;
  }
  uint32_t meganode_of(uint64_t off) const {
    const uint64_t mb = meganode_bytes();
    return static_cast<uint32_t>(power_of_two(mb) ? (off - node_bytes) >> std::countr_zero(mb)
                                                  : (off - node_bytes) / mb);
  }
  // Not std::has_single_bit: without -mpopcnt that is a library call.
  static constexpr bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
  uint32_t node_index(uint64_t off) const {
    return static_cast<uint32_t>(((off - node_bytes) % meganode_bytes()) / node_bytes);
  }
};

// A search key prepared once for the many comparisons of a descent: its
// first 8 bytes as a big-endian number (zero-padded), which decides most
// comparisons with one integer compare; ties fall back to the bytes.
struct SearchKey {
  explicit SearchKey(std::string_view k) : key(k), prefix(prefix_of(k.data(), k.size() < 8 ? k.size() : 8)) {}
  // `len` bytes at `p` (at most 8) as the high bytes of a big-endian number.
  static uint64_t prefix_of(const void* p, size_t len) {
    uint64_t raw = 0;
    std::memcpy(&raw, p, len);
    return to_big_endian(raw);
  }
  static uint64_t to_big_endian(uint64_t raw) {
    if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(raw);
    return raw;
  }
  std::string_view key;
  uint64_t prefix;
};

// Read-only view of one node image: the server's own memory, or a copy a
// client fetched (check stable() and well_formed() before anything else).
// Accessors clamp lengths, so even a garbled image never reads outside it.
class NodeView {
 public:
  NodeView(const std::byte* base, const Geometry& g) : p_(base), g_(&g) {}

  const std::byte* data() const { return p_; }
  const NodeHeader& header() const { return *reinterpret_cast<const NodeHeader*>(p_); }
  uint64_t version_front() const { return header().version_front; }
  uint64_t checksum() const {
    uint64_t v;
    std::memcpy(&v, p_ + g_->node_bytes - 8, 8);
    return v;
  }
  // Version even and the checksum that of the rest of the image: no
  // server write overlapped the read, in whatever order it copied.
  bool stable() const;
  bool well_formed() const {
    const NodeHeader& h = header();
    return h.valid <= 1 && h.local_level < kMaxLevels && h.meganode_level < kMaxLevels &&
           h.count <= capacity() && h.min_len <= g_->key_capacity_bytes &&
           h.max_len <= g_->key_capacity_bytes;
  }

  bool valid() const { return header().valid == 1; }
  uint32_t count() const { return header().count; }
  uint32_t local_level() const { return header().local_level; }
  uint32_t meganode_level() const { return header().meganode_level; }
  uint64_t right() const { return header().right; }
  // Local leaves of leaf meganodes point to extents; all else to nodes.
  bool extent_entries() const { return local_level() == 0 && meganode_level() == 0; }
  uint32_t capacity() const { return g_->capacity(extent_entries()); }
  uint32_t stride() const { return g_->stride(extent_entries()); }

  bool min_is_inf() const { return (header().flags & kMinIsNegInf) != 0; }
  bool max_is_inf() const { return (header().flags & kMaxIsPosInf) != 0; }
  std::string_view min_key() const { return text(p_ + sizeof(NodeHeader), header().min_len); }
  std::string_view max_key() const {
    return text(p_ + sizeof(NodeHeader) + g_->key_capacity_bytes, header().max_len);
  }
  Bound min() const { return {min_key(), min_is_inf()}; }
  Bound max() const { return {max_key(), max_is_inf()}; }
  bool below_min(std::string_view key) const { return below_min(SearchKey(key)); }
  bool at_or_above_max(std::string_view key) const { return at_or_above_max(SearchKey(key)); }
  bool below_min(const SearchKey& k) const {
    return !min_is_inf() && compare(p_ + sizeof(NodeHeader), header().min_len, k) > 0;
  }
  bool at_or_above_max(const SearchKey& k) const {
    return !max_is_inf() && compare(p_ + sizeof(NodeHeader) + g_->key_capacity_bytes, header().max_len, k) <= 0;
  }
  // Both bounds at once (a descent's per-node check): -1 below min, 1 at or
  // above max, 0 inside.
  int position(const SearchKey& k) const {
    if (below_min(k)) return -1;
    return at_or_above_max(k) ? 1 : 0;
  }

  const std::byte* entry(uint32_t i) const { return p_ + g_->header_bytes() + uint64_t{i} * stride(); }
  std::string_view key(uint32_t i) const {
    const std::byte* e = entry(i) + Geometry::value_bytes(extent_entries());
    uint16_t len;
    std::memcpy(&len, e, 2);
    return text(e + 2, len);
  }
  uint64_t child(uint32_t i) const {
    uint64_t v;
    std::memcpy(&v, entry(i), 8);
    return v;
  }
  ExtentRef extent(uint32_t i) const {
    ExtentRef r;
    std::memcpy(&r, entry(i), sizeof(r));
    return r;
  }

  // First entry whose key is >= key (> key with `strictly_after`).
  uint32_t lower_bound(std::string_view key, bool strictly_after = false) const {
    return lower_bound(SearchKey(key), strictly_after);
  }
  uint32_t lower_bound(const SearchKey& key, bool strictly_after = false) const;
  // The entry holding exactly `key`, or -1.
  int32_t find(std::string_view key) const { return find(SearchKey(key)); }
  int32_t find(const SearchKey& key) const;
  // The child entry covering `key`: the last entry whose key is <= key,
  // entry 0 standing for everything from the node's min. count() > 0.
  uint32_t child_index(std::string_view key) const { return child_index(SearchKey(key)); }
  uint32_t child_index(const SearchKey& key) const;
  // Hints the CPU to fetch the whole node image (a descent's next node):
  // its cache lines then arrive in parallel, not one per binary-search probe.
  void prefetch() const { prefetch_lines(p_, g_->node_bytes); }

 private:
  // <0, 0, >0 as the key of `len` bytes (clamped) at `at` is below, equal
  // to or above k. Reads 8 bytes at `at`: every key slot is followed by at
  // least 8 bytes of the image (more key slots, entries or the back version).
  int compare(const std::byte* at, uint32_t len, const SearchKey& k) const {
    uint64_t raw;
    std::memcpy(&raw, at, 8);
    const uint64_t mask = len >= 8 ? ~uint64_t{0} : ~(~uint64_t{0} >> (8 * len));
    const uint64_t p = SearchKey::to_big_endian(raw) & mask;
    if (p != k.prefix) [[likely]] return p < k.prefix ? -1 : 1;
    return compare_tie(at, len, k);
  }
  // compare() when the prefixes tie: the lengths or the bytes after them decide.
  int compare_tie(const std::byte* at, uint32_t len, const SearchKey& k) const;
  // compare() of the key slot (u16 length, then the bytes) at `slot`.
  int compare_slot(const std::byte* slot, const SearchKey& k) const {
    uint16_t len;
    std::memcpy(&len, slot, 2);
    return compare(slot + 2, len, k);
  }
  // First entry index in [lo, count) for which before(i) is false; before
  // must be true on a prefix of the range. Branch-free halving.
  template <typename Before>
  uint32_t partition_point(uint32_t lo, Before before) const {
    uint32_t n = count() > lo ? count() - lo : 0;
    if (n == 0) return lo;
    uint32_t base = lo;
    while (n > 1) {
      const uint32_t half = n / 2;
      base = before(base + half) ? base + half : base;
      n -= half;
    }
    return base + (before(base) ? 1 : 0);
  }

  std::string_view text(const std::byte* at, uint32_t len) const {
    if (len > g_->key_capacity_bytes) len = g_->key_capacity_bytes;
    return {reinterpret_cast<const char*>(at), len};
  }
  const std::byte* p_;
  const Geometry* g_;
};

// Writes to a live node, bracketed by begin() and end(): begin makes the
// version odd, end makes it the next even value and then writes the
// checksum of the image, each followed by a release fence; a READ
// overlapping any of it sees an odd version or a checksum that does not
// match (NodeView::stable).
class NodeWriter {
 public:
  NodeWriter(std::byte* base, const Geometry& g) : p_(base), g_(&g) {}

  NodeView view() const { return NodeView(p_, *g_); }
  NodeHeader& header() { return *reinterpret_cast<NodeHeader*>(p_); }
  void begin();
  void end();

  // Resets the header for a node (re)born with these levels and bounds.
  void init(uint32_t local_level, uint32_t meganode_level, Bound min, Bound max, uint64_t right);
  void set_count(uint32_t n) { header().count = static_cast<uint16_t>(n); }
  void set_valid(bool v) { header().valid = v ? 1 : 0; }
  void set_right(uint64_t p) { header().right = p; }
  void set_min(Bound b);
  void set_max(Bound b);
  std::byte* entry(uint32_t i) { return p_ + g_->header_bytes() + uint64_t{i} * stride(); }
  uint32_t stride() const { return view().stride(); }
  // Entry i := (key, value bytes of this node's kind).
  void set_entry(uint32_t i, std::string_view key, const std::byte* value);
  void set_value(uint32_t i, const std::byte* value);
  // Moves entries [i, count) one slot up / down; count is the caller's.
  void open_gap(uint32_t i);
  void close_gap(uint32_t i);

 private:
  std::byte* p_;
  const Geometry* g_;
};

}  // namespace locus::cell
