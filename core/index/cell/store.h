// Store: one Cell server's memory. A node region of meganodes (each a local
// B-link tree of fixed-size nodes) and an extents region of key-value
// extents under a buddy allocator, both readable by clients with RDMA; the
// superblock if this server owns region 0; and the server-only bookkeeping
// (free nodes per meganode, split state).
//
// Within a meganode it follows Sagiv's B-link algorithm: searches take no
// lock, an insert locks one node at a time (splits are propagated upward as
// separate steps, moving right when a parent split meanwhile), a delete
// locks one leaf, nothing merges. All of it runs on the server's one RPC
// thread, so the "lock" is that thread itself: each node write is one
// versioned write and no two are interleaved. A server that ran several
// worker actors would need a lock word per node taken through Env mutexes
// or CAS; see server.h.
//
// Every node write is bracketed by NodeWriter begin/end (versions odd, then
// even) so concurrent RDMA readers see a consistent image or retry, and is
// ordered so that a reader always finds every key that is present: a new
// node is written before anything links to it, extents before the entries
// that point to them.
//
// Meganode splits are steps driven from outside (split_driver.h) so that
// they interleave with ordinary requests: split_begin locks the right half
// X_right of meganode X against writes (busy replies), split_scan streams
// its entries to a new meganode Y built by meganode_create/append/seal
// (here or on another server), split_finish relinks X_left's right edge to
// Y's root, invalidates and frees X_right. Updates in X_left go on
// throughout; searches (server or RDMA) are correct at every step. Each
// step names its split by id and is idempotent (protocol.h), and a
// meganode built by a split can be abandoned only until that split
// declares it live (meganode_live, right after linking it), never after.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/index/cell/layout.h"
#include "core/memory/buddy_allocator.h"
#include "core/rpc/message.h"

namespace locus::cell {

struct StoreOptions {
  Geometry geometry;
  uint64_t extents_bytes = 64ull << 20;  // power of two
  uint32_t min_extent_block_bytes = 32;
  uint32_t max_kv_bytes = 8192;      // largest extent (header + key + value)
  double split_fill_fraction = 0.6;  // ask for a meganode split at this share of its nodes
  double bulk_fill_fraction = 0.7;   // fill of nodes built by a meganode split

  Status validate() const;
};

enum class Outcome : uint8_t {
  kDone = 0,      // finished here
  kRedirect = 1,  // continue at `next` (a node on another server)
  kRestart = 2,   // the start pointer led nowhere valid: start again from the root
  kBusy = 3,      // the key range is locked by a meganode split or the meganode is full: retry
};

// The meganode a traversal ended in (for clients' path caches). Views are
// into node memory, valid until the next mutation.
struct MeganodeInfo {
  uint64_t root = kNullPtr;
  uint8_t level = 0;
  uint8_t height = 0;  // local levels
  Bound min, max;
};

struct OpResult {
  Outcome outcome = Outcome::kDone;
  uint64_t next = kNullPtr;  // kRedirect
  bool found = false;        // contains, get, delete: the key was there
  std::string_view value;    // get
  MeganodeInfo meganode;     // kDone
  uint32_t nodes_visited = 0;
};

struct RangeQuery {
  std::string_view start;
  bool start_exclusive = false;
  std::string_view end;  // exclusive
  bool has_end = false;
  uint32_t limit = 0;
};

struct RangeResult {
  Outcome outcome = Outcome::kDone;  // kDone: finished; kRedirect: continue at next from resume
  uint64_t next = kNullPtr;
  std::string_view resume;
  bool resume_exclusive = false;
  uint32_t returned = 0;
  uint32_t nodes_visited = 0;
};

// Where a server asks for a meganode split (its split worker's queue).
class SplitScheduler {
 public:
  virtual ~SplitScheduler() = default;
  virtual void request_split(uint32_t meganode) = 0;
};

struct SplitPlan {
  uint32_t meganode = 0;
  uint64_t root = kNullPtr;
  uint8_t level = 0;
  std::string split_key;
  bool min_inf = false;
  std::string min_key;
  bool max_inf = false;
  std::string max_key;
  uint64_t right = kNullPtr;  // X's right edge: the next meganode's root
};

struct StoreStats {
  uint64_t keys = 0;
  uint64_t node_splits = 0;
  uint64_t root_splits = 0;      // local roots split by copying
  uint64_t meganode_splits = 0;  // finished as the source
  uint64_t meganodes_built = 0;  // sealed as the target
  uint64_t meganodes_in_use = 0;
  uint64_t nodes_in_use = 0;
  uint64_t busy_replies = 0;
  uint64_t extent_bytes_in_use = 0;
  // Node levels inside the meganodes, by meganode level (0: the leaf
  // meganodes): the fewest and most of any live meganode of that level
  // here; 0 where this store has none.
  std::array<uint8_t, kMaxLevels> min_height{};
  std::array<uint8_t, kMaxLevels> max_height{};
};

class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> create(CellRegionId node_region, CellRegionId extent_region,
                                                 const StoreOptions& options);

  std::byte* node_memory() { return nodes_.data(); }
  uint64_t node_region_bytes() const { return g_.region_bytes(); }
  std::byte* extents_memory() { return extents_.data(); }
  uint64_t extents_bytes() const { return allocator_.capacity_bytes(); }
  CellRegionId node_region() const { return node_region_; }
  CellRegionId extent_region() const { return extent_region_; }
  const Geometry& geometry() const { return g_; }
  const StoreOptions& options() const { return options_; }
  void set_scheduler(SplitScheduler* s) { scheduler_ = s; }

  // Region 0 only: the first tree, one empty leaf meganode, and its root in the superblock.
  Status init_tree();
  bool owns_superblock() const { return node_region_ == kSuperblockRegion; }
  uint64_t root() const;
  uint32_t root_level() const;
  // Installs a new root meganode of `level` if the current root is
  // `expected`; true also if this one was installed before (a re-sent request).
  StatusOr<bool> set_root(uint64_t expected, uint64_t new_root, uint32_t level);

  // Operations; `start` kNullPtr means the superblock's root (region 0 only).
  OpResult contains(std::string_view key, uint64_t start);
  OpResult get(std::string_view key, uint64_t start);
  StatusOr<OpResult> put(std::string_view key, std::string_view value, uint64_t start);
  OpResult remove(std::string_view key, uint64_t start);
  // Inserts (or re-points) separator `key` -> child meganode root in the
  // meganode of level `level` covering `key` (a split's parent insert).
  StatusOr<OpResult> insert_child(std::string_view key, uint64_t child, uint32_t level, uint64_t start);
  // Appends (blob key, blob value) pairs to `out` until the query, the
  // local leaves or `budget_bytes` end.
  RangeResult range(const RangeQuery& q, uint64_t start, rpc::Writer& out, size_t budget_bytes);

  // Meganode split, source side. Split ids of a meganode increase (they
  // come from its server's SplitIds): a begin with an id at or below the
  // last one begun is a late copy and refused.
  StatusOr<SplitPlan> split_begin(uint32_t meganode, uint64_t split_id);
  // X_right's entries after `cursor` (inclusive unless `exclusive`) as
  // (blob key, blob value) or (blob key, u64 child), up to budget_bytes.
  // Sets *done when X_right is exhausted; *last_key views the last entry.
  Status split_scan(uint32_t meganode, std::string_view cursor, bool exclusive, rpc::Writer& out, size_t budget_bytes,
                    bool* done, std::string_view* last_key);
  Status split_finish(uint32_t meganode, uint64_t new_root, uint64_t split_id);
  // kAlreadyExists if the split finished.
  Status split_abort(uint32_t meganode, uint64_t split_id);
  // Meganode split, target side: an unreachable meganode filled in key order.
  StatusOr<uint64_t> meganode_create(uint64_t split_id, uint32_t level, Bound min, Bound max, uint64_t right);
  Status meganode_append(uint64_t root, uint64_t split_id, uint32_t chunk, rpc::Reader& entries);
  Status meganode_seal(uint64_t root, uint64_t split_id);
  Status meganode_abandon(uint64_t root, uint64_t split_id);
  Status meganode_live(uint64_t root, uint64_t split_id);

  // What a crash can leave half done (recovery, server_log.cc): meganodes
  // locked by a split that neither finished nor aborted, meganodes built by
  // a split not yet declared live, whether split `split_id` linked `root`
  // here, and the highest split id of `server` begun here.
  struct PendingSplit {
    uint32_t meganode;
    uint64_t split_id;
  };
  struct PendingBuild {
    uint64_t root;
    uint64_t split_id;
  };
  std::vector<PendingSplit> pending_splits() const;
  std::vector<PendingBuild> pending_builds() const;
  // After a recovery (replay, and the aborts of splits whose drivers died):
  // queues the meganodes the live store's queue would hold, those that
  // asked for a split not yet begun and those that need one by the live
  // store's own test (maybe_request_split), not every one that ever asked.
  // And a split the crash left without its new root: the tree's root
  // meganode that finished a split (so the new root meganode its driver
  // was to install never was) splits again, and that split grows the
  // tree; until it does, a split of its new right sibling waits for ever
  // for a level above. `is_tree_root(ptr)` says whether a meganode's root
  // is the tree's; without it (a takeover of a store that does not hold
  // the superblock) every leftmost meganode of its level that split before
  // is taken for one: at most one per level splits again.
  void queue_needed_splits(const std::function<bool(uint64_t root)>& is_tree_root);
  bool split_finished(uint64_t split_id, uint64_t root) const;
  uint64_t last_split_id() const;

  // Checkpoints (store_checkpoint.cc): the store as log records of its own
  // types (kCheckpoint*: geometry, meganode states, node images, live
  // extents), which restore() applies to a fresh store in order. After
  // writing one the store must adopt_checkpoint(): it rebuilds the extent
  // allocator in the canonical form restore() gives it, so the records
  // after the checkpoint place every extent where they did the first time.
  Status write_checkpoint(const std::function<Status(std::string_view record)>& sink);
  Status adopt_checkpoint();
  Status restore(uint16_t type, rpc::Reader& body);
  // The extent allocator's live blocks, in address order.
  struct Block {
    uint64_t offset = 0, bytes = 0;
  };
  std::vector<Block> live_extents() const;

  uint32_t meganodes_in_use() const;
  uint32_t meganode_capacity() const { return g_.meganodes_per_server; }
  StoreStats stats() const;
  // Walks every meganode in use and checks the B-link invariants (sorted
  // entries inside [min, max), right links chaining equal bounds). For
  // tests; not the data path.
  Status check_invariants() const;

 private:
  friend class StoreTestPeer;  // tests hold a node locked

  // The right spine of a meganode being built by a split, per local level.
  struct BuildState {
    uint32_t meganode_level = 0;
    uint32_t levels = 0;
    uint64_t rightmost[kMaxLevels] = {};
    std::string min_key, max_key, last_key;
    bool min_inf = false, max_inf = false;
    bool any = false;
    uint32_t chunks = 0;  // appended so far
    uint64_t right = kNullPtr;
    Bound min() const { return {min_key, min_inf}; }
    Bound max() const { return {max_key, max_inf}; }
  };
  struct Meganode {
    bool in_use = false;
    bool splitting = false;
    bool split_requested = false;
    bool building = false;
    uint32_t next_unused = 1;  // node 0 is the root
    uint32_t used = 0;
    std::vector<uint32_t> free;
    std::string split_key;
    std::unique_ptr<BuildState> build;
    uint64_t split_id = 0;        // the split under way, else the last one begun
    uint64_t finished_split = 0;  // the last split finished, and its new meganode
    uint64_t finished_root = kNullPtr;
    uint64_t built_by = 0;    // the split building it, until it declares it live; 0: live
    uint32_t high_water = 0;  // nodes ever allocated here (what a checkpoint copies)
  };
  // Ancestors, within the leaf's meganode, of the node a descent ended at.
  struct Cursor {
    uint64_t leaf = 0;  // offset
    uint32_t meganode = 0;
    uint64_t next = kNullPtr;
    uint64_t path[kMaxLevels];
    uint32_t depth = 0;
    uint32_t visited = 0;
  };

  Store(CellRegionId node_region, CellRegionId extent_region, const StoreOptions& options,
        memory::BuddyAllocator allocator);
  Status init();

  std::byte* at(uint64_t off) { return nodes_.data() + off; }
  const std::byte* at(uint64_t off) const { return nodes_.data() + off; }
  NodeView view(uint64_t off) const { return NodeView(at(off), g_); }
  NodeWriter writer(uint64_t off) { return NodeWriter(at(off), g_); }
  uint64_t ptr(uint64_t off) const { return make_ptr(node_region_, off); }
  bool local_node(uint64_t p) const {
    return p != kNullPtr && ptr_region(p) == node_region_ && g_.is_node_offset(ptr_offset(p));
  }
  uint64_t root_of(uint32_t m) const { return g_.meganode_base(m); }

  // Node and meganode allocation (store.cc).
  uint64_t alloc_node(uint32_t m);
  void free_node(uint32_t m, uint64_t off);
  uint32_t free_nodes(const Meganode& mn) const;
  int64_t alloc_meganode();
  void maybe_request_split(uint32_t m);
  StatusOr<ExtentRef> write_extent(std::string_view key, std::string_view value);
  void free_extent(const ExtentRef& ref);
  std::string_view extent_value(const ExtentRef& ref) const;

  // Traversal and Sagiv updates (store_ops.cc, store_insert.cc).
  Outcome descend(std::string_view key, uint64_t start, uint32_t target_level, Cursor* c) const;
  // descend() to the leaf for `key`, recording the outcome, nodes visited
  // and any redirect in `r`; true if the leaf was reached here.
  bool reach_leaf(std::string_view key, uint64_t start, OpResult* r, Cursor* c) const;
  MeganodeInfo meganode_info(uint32_t m) const;
  Outcome write_gate(const Cursor& c, std::string_view key, bool may_split);
  void insert_entry(uint32_t m, uint64_t off, std::string_view key, const std::byte* value, Cursor& c);
  // Splits full node `off` around new entry (key, value) at `pos`; returns
  // true if it was the root (split by copying), else sets *right_off.
  bool split_node(uint32_t m, uint64_t off, uint32_t pos, std::string_view key, const std::byte* value,
                  std::string* separator, uint64_t* right_off);
  uint64_t find_parent(uint32_t m, uint32_t level, std::string_view key) const;
  uint64_t descend_local(uint32_t m, std::string_view key, uint32_t level) const;

  // Checkpoints (store_checkpoint.cc).
  Status rebuild_allocator(const std::vector<Block>& live);
  Status restore_meganode(rpc::Reader& r);

  // Bulk building of split targets (store_split.cc).
  void build_append(uint32_t m, uint32_t level, std::string_view key, const std::byte* value);
  SplitPlan plan_of(uint32_t m) const;
  // The meganode whose root `root` is, built by split `split_id`, or -1.
  int64_t built_meganode(uint64_t root, uint64_t split_id) const;

  CellRegionId node_region_;
  CellRegionId extent_region_;
  StoreOptions options_;
  Geometry g_;
  memory::BuddyAllocator allocator_;
  AlignedBuffer nodes_;
  AlignedBuffer extents_;
  std::vector<Meganode> meganodes_;
  SplitScheduler* scheduler_ = nullptr;
  uint32_t split_threshold_nodes_ = 0;
  std::array<uint64_t, kMaxLevels> installed_roots_{};  // by level: recognises a re-sent set_root

  // Scratch for splits: the full node's entries plus the new one, and two
  // separator buffers (a propagation step reads one while writing the other).
  std::vector<std::byte> split_scratch_;
  std::string separators_[2];
  std::string resume_;

  mutable StoreStats stats_;
  std::vector<Block> restored_extents_;  // restore(): the checkpoint's live extents, until its end
};

// Log record types of a checkpoint (beside the request types, protocol.h).
enum CheckpointRecord : uint16_t {
  kCheckpointStore = 0xC000,     // format, geometry, installed roots, statistics
  kCheckpointMeganode = 0xC001,  // one meganode's bookkeeping
  kCheckpointNodes = 0xC002,     // u64 offset, node bytes
  kCheckpointExtents = 0xC003,   // (u64 offset, u64 block bytes, the block)*
  kCheckpointEnd = 0xC004,       // the extent allocator rebuilt, split requests queued again
};

}  // namespace locus::cell
