// The NAM tree index's node layout (SIGMOD'19, "Designing Distributed
// Tree-based Index Structures for Fast RDMA-capable Networks", sections 3.1
// and 4.1): B-link nodes of a configurable page size, the same bytes in a
// memory server's arena and in a compute server's copy, so one RDMA READ
// fetches a node and one WRITE installs it.
//
//   0   word: version << 1 | lock bit (the paper's (version, lock-bit));
//       while a compute server holds the lock, bits 40-63 name it (its
//       NodeId + 1, for the fence a lock breaker asks for; 0 for a memory
//       server's own lock), so versions wrap at 2^39 lock cycles of a node
//   8   level (u8, 0 = leaf), flags (u8: bit 0 high key is +inf, bit 1 head
//       node, bit 2 merged away), count (u16), magic (u32)
//   16  high key (key, payload): the node holds entries <= it
//   32  sibling: RemotePtr of the right neighbour (null at the right end)
//   40  entries: leaf (key, payload) x cap; inner (key, payload, child) x cap
//   ... leaf: delete bits, one per entry
//   -16 CRC-64 of bytes [8, page - 16)
//   -8  trailer: the version word the body was written for
//
// Keys are non-unique, so entries are ordered by the pair (key, payload)
// and separators are pairs too; a node never splits between two equal
// pairs, so every copy of a pair lives in one leaf. An inner entry i
// covers (sep[i-1], sep[i]] and its last separator is the node's high key.
// A copy is consistent when its word is unlocked and equals the trailer and
// the CRC matches: a one-sided READ torn by a concurrent WRITE, in whatever
// order the NIC copied, fails that check.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace locus::nam {

// (null bit, memory-server id, offset) in 8 bytes (section 4.1): bit 63 set
// for a valid pointer (so zeroed memory holds null pointers), 7 bits of
// server, 56 of byte offset into that server's arena.
struct RemotePtr {
  uint64_t raw = 0;
  static constexpr uint64_t kValid = 1ull << 63;
  static constexpr uint64_t kOffsetMask = (1ull << 56) - 1;
  static constexpr uint32_t kMaxServers = 128;
  static RemotePtr make(uint32_t server, uint64_t offset) {
    return {kValid | (uint64_t{server & 0x7f} << 56) | (offset & kOffsetMask)};
  }
  bool null() const { return (raw & kValid) == 0; }
  uint32_t server() const { return static_cast<uint32_t>((raw >> 56) & 0x7f); }
  uint64_t offset() const { return raw & kOffsetMask; }
  bool operator==(const RemotePtr&) const = default;
};

// An entry's order: key, then payload.
struct Pair {
  uint64_t key = 0;
  uint64_t payload = 0;
  auto operator<=>(const Pair&) const = default;
};

// The largest payload: (key, kMaxPayload) is the high key of a leaf that
// holds every pair of `key` (Node::split_into).
inline constexpr uint64_t kMaxPayload = ~uint64_t{0};

inline constexpr uint64_t kLockBit = 1;
// The lock holder's field of a locked word (layout above).
inline constexpr int kHolderShift = 40;
inline constexpr uint32_t kMaxHolder = (1u << (64 - kHolderShift)) - 1;
inline constexpr uint64_t holder_bits(uint32_t holder) { return uint64_t{holder} << kHolderShift; }
inline constexpr uint32_t holder_of(uint64_t word) { return static_cast<uint32_t>(word >> kHolderShift); }
inline constexpr uint64_t without_holder(uint64_t word) { return word & ((uint64_t{1} << kHolderShift) - 1); }
inline constexpr uint32_t kMagic = 0x4e414d31;  // "NAM1"
inline constexpr uint32_t kHeaderBytes = 40;
inline constexpr uint32_t kFooterBytes = 16;
inline constexpr uint32_t kMinPageBytes = 128;
inline constexpr uint32_t kMaxPageBytes = 64 * 1024;

uint32_t leaf_capacity(uint32_t page_bytes);
uint32_t inner_capacity(uint32_t page_bytes);

// The first of n ascending keys that is >= key (n if none), key_at(i)
// reading key i: std::lower_bound over keys, without a branch that depends
// on them. The window halves by conditional moves until it holds eight
// keys or fewer; then the eight keys from its start (or the last eight,
// near the end) are counted below key: eight independent compares instead
// of three dependent steps, always eight so the loop unrolls and its exit
// never mispredicts. Keys before the window are below key and keys after
// it are not, so the count lands on the answer either way. The in-place
// lookup (tree_in_place.cc) searches a page's words with it; with payloads
// from 0 up, the first key >= key is the first pair >= (key, 0).
// nam_layout_test checks it against std::lower_bound.
template <typename KeyAt>
inline uint32_t first_key_at_least(uint32_t n, uint64_t key, KeyAt key_at) {
  if (n < 8) {
    uint32_t below = 0;
    for (uint32_t i = 0; i < n; ++i) below += key_at(i) < key ? 1 : 0;
    return below;
  }
  uint32_t base = 0, len = n;
  while (len > 8) {
    const uint32_t half = len / 2;
    base = key_at(base + half - 1) < key ? base + half : base;
    len -= half;
  }
  const uint32_t start = base < n - 8 ? base : n - 8;
  uint32_t below = 0;
  for (uint32_t i = 0; i < 8; ++i) below += key_at(start + i) < key ? 1 : 0;
  return start + below;
}

// A view of one node's bytes (a page in an arena or a client's copy).
class Node {
 public:
  Node(std::byte* page, uint32_t page_bytes) : p_(page), bytes_(page_bytes) {}

  // An empty node of `level` with a +inf high key and no sibling.
  void init(uint8_t level);

  uint64_t word() const { return get64(0); }
  void set_word(uint64_t w) { put64(0, w); }
  uint8_t level() const { return static_cast<uint8_t>(p_[8]); }
  bool leaf() const { return level() == 0; }
  bool high_inf() const { return (static_cast<uint8_t>(p_[9]) & kHighInf) != 0; }
  // A head node (section 4.1): a leaf-level node with no index data, in
  // the sibling chain after a leaf, holding the remote pointers of the
  // leaves that follow it (count() of them) for range scans to prefetch.
  bool head() const { return (static_cast<uint8_t>(p_[9]) & kHead) != 0; }
  // Makes this (leaf-level) node a head node over `leaves`, at most
  // leaf_capacity() of them.
  void set_head(const RemotePtr* leaves, uint32_t n);
  RemotePtr head_leaf(uint32_t i) const { return {get64(entry(i))}; }
  // Merged into its left neighbour by garbage collection (gc.cc): its
  // content lives on there, and a traversal that reaches it (through a
  // pointer read before the merge) goes on there. Its sibling field names
  // the node it went into; the page is freed once no reader can hold it.
  // A merged node keeps its entries, its high key and, in the entry slot
  // after its last (free: a merge fits both nodes in half of one, and a
  // leaf is compacted first), its sibling from before: all a later
  // operation needs to undo a merge whose merger gave up (or died) after
  // marking it merged and before its left neighbour took its entries
  // (BlinkTree::undo_half_merge).
  bool dead() const { return (static_cast<uint8_t>(p_[9]) & kDead) != 0; }
  // Requires count() < capacity().
  void set_dead(RemotePtr into);
  RemotePtr sibling_before_merge() const { return {get64(entry(count()))}; }
  // Undoes set_dead: live again, with its sibling from before the merge.
  void revive();
  // Appends right's entries (a leaf's live ones only) and takes its high
  // key and sibling: the merge of right, the next node of the same level
  // and parent, into this one (right not yet marked merged). The entries
  // must fit.
  void absorb(const Node& right);
  // Leaves: entries whose delete bit is clear.
  uint32_t live() const;
  uint32_t count() const { return get16(10); }
  uint32_t magic() const { return static_cast<uint32_t>(get64(8) >> 32); }
  Pair high() const { return {get64(16), get64(24)}; }
  void set_high(bool inf, Pair h);
  RemotePtr sibling() const { return {get64(32)}; }
  void set_sibling(RemotePtr s) { put64(32, s.raw); }
  uint32_t capacity() const { return leaf() ? leaf_capacity(bytes_) : inner_capacity(bytes_); }
  bool full() const { return count() >= capacity(); }
  // Whether `x` belongs here or to the left (else: move right).
  bool covers(Pair x) const { return high_inf() || x <= high(); }

  Pair pair(uint32_t i) const { return {get64(entry(i)), get64(entry(i) + 8)}; }
  // Leaves.
  bool deleted(uint32_t i) const;
  void set_deleted(uint32_t i, bool d);
  // Inner nodes.
  RemotePtr child(uint32_t i) const { return {get64(entry(i) + 16)}; }
  void set_child(uint32_t i, RemotePtr c) { put64(entry(i) + 16, c.raw); }

  // First entry whose pair is >= x (count() if none).
  uint32_t lower_bound(Pair x) const;
  // Inner: the entry whose child covers x (the last one past every separator).
  uint32_t child_index(Pair x) const;
  // Opens a slot at i (entries from i shift right) and writes it; leaves
  // get a live entry, inner entries `child`. The node must not be full.
  void insert_at(uint32_t i, Pair x, RemotePtr child = {});
  // Removes entry i (entries after it shift left).
  void erase_at(uint32_t i);
  // Moves the entries from `from` on into the empty `right`, which takes
  // this node's high key and sibling; this node's sibling becomes
  // `right_ptr` and its high key its last pair, or, for a leaf split
  // between two keys, (its last key, kMaxPayload): every pair of that key,
  // now and later, belongs to the left, so a lookup of a leaf's last key
  // reads no further leaf (pairs_may_follow).
  void split_into(uint32_t from, Node& right, RemotePtr right_ptr);
  // Whether a pair with a key up to `key` can lie right of this node (the
  // pairs there are above its high key).
  bool pairs_may_follow(uint64_t key) const { return !high_inf() && high() < Pair{key, kMaxPayload}; }
  // Leaves: drops the entries whose delete bit is set; how many went.
  uint32_t compact();
  // Where to split a full node: near the middle, never between equal pairs;
  // a leaf between two keys where one such boundary lies in its middle
  // half; 0 if every pair is equal (cannot split).
  uint32_t split_point() const;

  // Seals a body written for version word `w` (CRC, trailer), and checks one.
  void seal(uint64_t w);
  bool consistent() const;

  std::byte* data() { return p_; }
  const std::byte* data() const { return p_; }
  uint32_t bytes() const { return bytes_; }

  // The flags byte (byte 9), for readers that decode a page's words
  // themselves (tree_in_place.cc).
  static constexpr uint8_t kHighInf = 1;
  static constexpr uint8_t kHead = 2;
  static constexpr uint8_t kDead = 4;

 private:
  uint32_t entry(uint32_t i) const { return kHeaderBytes + i * (leaf() ? 16 : 24); }
  uint32_t entry_bytes() const { return leaf() ? 16 : 24; }
  uint64_t get64(uint32_t at) const {
    uint64_t v;
    std::memcpy(&v, p_ + at, 8);
    return v;
  }
  void put64(uint32_t at, uint64_t v) { std::memcpy(p_ + at, &v, 8); }
  uint32_t get16(uint32_t at) const {
    uint16_t v;
    std::memcpy(&v, p_ + at, 2);
    return v;
  }
  void set_count(uint32_t n) {
    const uint16_t v = static_cast<uint16_t>(n);
    std::memcpy(p_ + 10, &v, 2);
  }
  uint32_t bitmap_at() const { return bytes_ - kFooterBytes - (leaf_capacity(bytes_) + 7) / 8; }

  std::byte* p_;
  uint32_t bytes_;
};

}  // namespace locus::nam
