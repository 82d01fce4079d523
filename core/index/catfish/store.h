// Store: the server's R*-tree (Beckmann et al. 1990) of 2-D rectangles,
// laid out in one region of fixed-size node slots that clients read with
// RDMA READs (layout.h). Only the server mutates it, from one thread, and a
// local search must not run concurrently with a mutation (the messaging
// layer serialises them); remote readers run concurrently through the NIC
// and rely on the node versions and the move epoch.
//
//  * insert: choose-subtree by least overlap enlargement just above the
//    leaves and least area enlargement higher up; on overflow, forced
//    reinsertion of ~30% of the entries (farthest from the node's centre,
//    reinserted closest first) once per level per insertion, else the R*
//    split (axis by least margin sum, distribution by least overlap, then
//    least area).
//  * remove: find the leaf, take the entry out, condense the tree (nodes
//    under the minimum fill are dissolved and their entries reinserted at
//    their level), shrink the root while it has a single child.
//  * Slots come from a free list (the buddy allocator in core/memory is for
//    variable-sized extents; every slot here has the same size). A freed
//    slot is overwritten with a free marker so a stale reader sees it.
//
// Split across store.cc (set-up, search, slots, invariants),
// store_insert.cc (insertion, overflow, split) and store_remove.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/index/catfish/layout.h"

namespace locus::catfish {

struct StoreOptions {
  Geometry geometry;
  double reinsert_fraction = 0.3;  // R*'s p, as a fraction of the capacity
};

// A stored rectangle and its 64-bit id, as a search returns it.
struct Hit {
  Rect rect;
  uint64_t id = 0;
};

struct StoreStats {
  uint64_t rectangles = 0;
  uint64_t nodes_in_use = 0;
  uint32_t height = 0;  // levels, 1 for a lone leaf root
  uint64_t splits = 0;
  uint64_t forced_reinserts = 0;
  uint64_t nodes_freed = 0;  // condensed nodes and old roots
  uint64_t epoch = 0;
};

class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> create(const StoreOptions& options);

  // kResourceExhausted when the region has no free slot for a split; the
  // tree is then unchanged except for the moves already made (all of
  // its entries still present).
  Status insert(const Rect& rect, uint64_t id);
  // Removes one entry with exactly this rectangle and id; kNotFound if none.
  Status remove(const Rect& rect, uint64_t id);
  // Every stored entry intersecting `query`, into *out (cleared first;
  // reuse it across calls and nothing is allocated once it is big enough).
  void search(const Rect& query, std::vector<Hit>* out) const;

  // Structure checks (tests): levels, fill bounds, tight parent MBRs,
  // slot accounting. Walks the whole tree.
  Status check_invariants() const;
  StoreStats stats() const;

  const Geometry& geometry() const { return g_; }
  // The region to register with kRemoteRead; the header is at offset 0.
  std::byte* region() { return region_.data(); }
  uint64_t region_bytes() const { return g_.region_bytes(); }

 private:
  struct Path {
    uint64_t off[kMaxLevels];
    uint32_t idx[kMaxLevels];  // idx[k]: entry of off[k] in off[k - 1]
    uint32_t depth = 0;        // off[depth] is the node the path ends at
  };
  struct Orphan {
    Entry entry;
    uint32_t level;
  };

  explicit Store(const StoreOptions& options);

  // Slots.
  StatusOr<uint64_t> allocate_slot();
  uint64_t free_slot_count() const;
  // kResourceExhausted unless the worst case of one insertion (a split on
  // every level of every reinsertion it triggers) fits in the free slots.
  Status ensure_room() const;
  void free_slot(uint64_t off);
  void load(uint64_t off, NodeData* out) const;
  void store(uint64_t off, const NodeData& node) { encode_node(region_.data() + off, g_, node); }
  void write_header();
  // Entries are about to move between nodes: make the epoch odd (once per
  // operation); finish_op makes it even again.
  void begin_moves();
  void finish_op();

  // Insertion (store_insert.cc).
  Status insert_entry(const Entry& e, uint32_t level);
  void choose_path(const Rect& r, uint32_t level, Path* path) const;
  uint32_t choose_subtree(const NodeData& n, const Rect& r) const;
  Status settle(Path& path, NodeData& node);
  Status reinsert_some(Path& path, NodeData& node);
  void split(NodeData& node, NodeData* right) const;
  void adjust_upwards(const Path& path, uint32_t depth, Rect mbr);

  // Removal (store_remove.cc).
  bool find_leaf(uint64_t off, const Rect& r, uint64_t id, Path* path, uint32_t* slot) const;
  Status condense(Path& path, NodeData& leaf);

  Status check_node(uint64_t off, uint32_t level, bool is_root, const Rect* parent_rect, uint64_t* rects,
                    uint64_t* nodes) const;

  Geometry g_;
  uint32_t capacity_;
  uint32_t min_fill_;
  uint32_t reinsert_count_;
  AlignedBuffer region_;
  HeaderInfo header_;
  bool moving_ = false;
  uint32_t reinserted_levels_ = 0;  // bit L: level L already did its forced reinsert
  std::vector<uint64_t> free_slots_;  // capacity reserved up front
  uint64_t next_fresh_;               // first never-used slot offset
  std::vector<Orphan> orphans_;       // condense-tree scratch, capacity reserved
  StoreStats stats_;
};

}  // namespace locus::catfish
