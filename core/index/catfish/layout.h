// Catfish's remotely readable R-tree layout: what a client finds in a
// server's node region and how it checks a copy it fetched by RDMA READ.
// Shared by the store (which writes nodes) and the offloading client.
//
//  * One registered region per server, cut into fixed-size node slots
//    (1 KB by default: the paper gives no size, 1 KB is what Cell and the
//    NAM index use). Slot 0 is the header node; a node pointer is the byte
//    offset of its slot in the region.
//  * Every 64-byte cache line ends with a line version (FaRM style); word 0
//    of line 0 is the node's version, the lock word. A writer makes the lock
//    word and every line version odd, writes, then makes them all the next
//    even value. A copy is consistent iff every line version equals the
//    lock word and is even: the NIC reads each cache line atomically with
//    respect to CPU writes (the paper's premise; core/transport/transport.h)
//    in any order, and a write that overlapped the copy leaves some line
//    version odd or newer.
//  * The payload is column-wise so a node scan is a flat loop over
//    contiguous doubles: after the header line come lines_per_field lines
//    of x_min, then of y_min, x_max, y_max and finally the 64-bit pointers
//    (child offset, or the user's id in a leaf), 7 per line.
//  * The header node's line 0 holds the root offset, the root level and the
//    move epoch. Entries only ever move between nodes (splits, forced
//    reinsertion, condense-tree, node reuse) with the epoch odd; a client
//    search that saw the same even epoch before and after its traversal
//    cannot have missed an entry that stayed in the tree throughout.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/common/status.h"

namespace locus::catfish {

constexpr uint32_t kLineBytes = 64;
constexpr uint32_t kWordsPerLine = kLineBytes / 8;
constexpr uint32_t kSlotsPerLine = kWordsPerLine - 1;  // the last word is the line version
constexpr uint32_t kFields = 5;                        // x_min, y_min, x_max, y_max, ptr
constexpr uint32_t kMaxNodeBytes = 4096;
constexpr uint32_t kMaxEntries = (kMaxNodeBytes / kLineBytes - 1) / kFields * kSlotsPerLine;  // 84
constexpr uint32_t kMaxLevels = 32;
constexpr uint16_t kNodeMagic = 0xCA75;
constexpr uint16_t kHeaderMagic = 0xCA70;
constexpr uint64_t kHeaderOffset = 0;

// A closed axis-aligned rectangle; touching rectangles intersect.
struct Rect {
  double x_min = 0, y_min = 0, x_max = 0, y_max = 0;

  bool intersects(const Rect& o) const {
    return x_min <= o.x_max && o.x_min <= x_max && y_min <= o.y_max && o.y_min <= y_max;
  }
  bool contains(const Rect& o) const {
    return x_min <= o.x_min && y_min <= o.y_min && o.x_max <= x_max && o.y_max <= y_max;
  }
  double area() const { return (x_max - x_min) * (y_max - y_min); }
  double margin() const { return (x_max - x_min) + (y_max - y_min); }
  double center_x() const { return 0.5 * (x_min + x_max); }
  double center_y() const { return 0.5 * (y_min + y_max); }
  Rect united(const Rect& o) const {
    return {std::min(x_min, o.x_min), std::min(y_min, o.y_min), std::max(x_max, o.x_max),
            std::max(y_max, o.y_max)};
  }
  double overlap_area(const Rect& o) const {
    const double w = std::min(x_max, o.x_max) - std::max(x_min, o.x_min);
    const double h = std::min(y_max, o.y_max) - std::max(y_min, o.y_min);
    return w > 0 && h > 0 ? w * h : 0;
  }
  bool operator==(const Rect&) const = default;
};

// One node entry: a child's MBR and offset, or a stored rectangle and id.
struct Entry {
  Rect rect;
  uint64_t ptr = 0;
};

// A node decoded into plain arrays (one spare slot for the overflowing
// entry an insertion adds before it splits or reinserts).
struct NodeData {
  uint32_t level = 0;  // 0 = leaf
  uint32_t count = 0;
  Entry entries[kMaxEntries + 1];

  Rect mbr() const;
};

// The shape of a node region.
struct Geometry {
  uint32_t node_bytes = 1024;
  uint32_t node_slots = 1u << 16;  // including the header slot: 64 MB of 1 KB nodes

  Status validate() const;
  uint32_t lines() const { return node_bytes / kLineBytes; }
  uint32_t lines_per_field() const { return (lines() - 1) / kFields; }
  uint32_t capacity() const { return lines_per_field() * kSlotsPerLine; }
  // R*'s minimum fill, 40% of the capacity (its authors' best setting).
  uint32_t min_fill() const { return std::max<uint32_t>(2, capacity() * 2 / 5); }
  uint64_t region_bytes() const { return uint64_t{node_slots} * node_bytes; }
  bool is_node_offset(uint64_t off) const {
    return off >= node_bytes && off < region_bytes() && off % node_bytes == 0;
  }
};

// What line 0 of the header node says (words 2..5).
struct HeaderInfo {
  uint64_t root = 0;
  uint64_t epoch = 0;  // odd while entries move between nodes
  uint32_t root_level = 0;
  uint32_t node_bytes = 0;
};

enum class CopyState { kConsistent, kTorn, kMalformed };

// Read-only view of a node image: the server's own memory or a client's
// copy (call check() on a copy before anything else).
class NodeView {
 public:
  NodeView(const std::byte* base, uint32_t lines_per_field) : p_(base), lpf_(lines_per_field) {}

  uint64_t word(uint32_t line, uint32_t w) const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(p_ + line * kLineBytes + w * 8), __ATOMIC_RELAXED);
  }
  uint64_t version() const { return word(0, 0); }
  uint16_t magic() const { return static_cast<uint16_t>(word(0, 1)); }
  uint32_t level() const { return static_cast<uint16_t>(word(0, 1) >> 16); }
  uint32_t count() const { return static_cast<uint16_t>(word(0, 1) >> 32); }
  // Consistent, torn, or consistent but not a live node of this geometry.
  CopyState check(uint32_t lines, uint32_t capacity) const;
  // The lines holding entries [7b, 7b+7) of field f: 7 contiguous values.
  const double* column(uint32_t field, uint32_t block) const {
    return reinterpret_cast<const double*>(p_ + (1 + field * lpf_ + block) * kLineBytes);
  }
  const uint64_t* ptr_column(uint32_t block) const {
    return reinterpret_cast<const uint64_t*>(p_ + (1 + 4 * lpf_ + block) * kLineBytes);
  }
  Rect rect(uint32_t i) const {
    const uint32_t b = i / kSlotsPerLine, s = i % kSlotsPerLine;
    return {column(0, b)[s], column(1, b)[s], column(2, b)[s], column(3, b)[s]};
  }
  uint64_t ptr(uint32_t i) const { return ptr_column(i / kSlotsPerLine)[i % kSlotsPerLine]; }
  HeaderInfo header_info() const;

 private:
  const std::byte* p_;
  uint32_t lpf_;
};

// Calls visit(rect, ptr) for every entry of the first `count` in `v` that
// intersects `q`, as a flat column scan; visit returns false to stop early
// (then so does this, returning false). Each line of 7 entries becomes a
// bit mask without branches (the comparisons are unpredictable), then only
// the hits are visited.
template <typename Visit>
inline bool scan_intersecting(const NodeView& v, uint32_t count, const Rect& q, Visit&& visit) {
  for (uint32_t b = 0, first = 0; first < count; ++b, first += kSlotsPerLine) {
    const double* x_min = v.column(0, b);
    const double* y_min = v.column(1, b);
    const double* x_max = v.column(2, b);
    const double* y_max = v.column(3, b);
    uint32_t mask = 0;
    for (uint32_t s = 0; s < kSlotsPerLine; ++s) {
      const bool hit = (x_min[s] <= q.x_max) & (q.x_min <= x_max[s]) & (y_min[s] <= q.y_max) & (q.y_min <= y_max[s]);
      mask |= static_cast<uint32_t>(hit) << s;
    }
    if (count - first < kSlotsPerLine) mask &= (1u << (count - first)) - 1;
    const uint64_t* ptr = v.ptr_column(b);
    while (mask != 0) {
      const uint32_t s = static_cast<uint32_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      if (!visit(Rect{x_min[s], y_min[s], x_max[s], y_max[s]}, ptr[s])) return false;
    }
  }
  return true;
}

// Versioned writes to a live node or the header: begin() locks (odd),
// end() publishes the next even version, each with a release fence.
class NodeWriter {
 public:
  NodeWriter(std::byte* base, uint32_t lines) : p_(base), lines_(lines) {}
  void begin();
  void end();
  void set_word(uint32_t line, uint32_t w, uint64_t value) {
    __atomic_store_n(reinterpret_cast<uint64_t*>(p_ + line * kLineBytes + w * 8), value, __ATOMIC_RELAXED);
  }

 private:
  void set_versions(uint64_t v);
  std::byte* p_;
  uint32_t lines_;
};

// Writes `node` into the slot at `p` as one versioned write.
void encode_node(std::byte* p, const Geometry& g, const NodeData& node);
// Writes a free (non-node) marker into the slot, versioned.
void encode_free(std::byte* p, const Geometry& g);
// Writes the header node's line 0 (the rest of the slot is unused).
void encode_header(std::byte* p, const HeaderInfo& h);
// Validates a copy a client fetched and decodes it: kAborted if torn (read
// it again), kCorruption if consistent but not a node of this geometry.
Status decode_node(const std::byte* copy, const Geometry& g, NodeData* out);
// Validates a copy of the header's line 0: kAborted if torn.
Status decode_header(const std::byte* copy, HeaderInfo* out);

}  // namespace locus::catfish
