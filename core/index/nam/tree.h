// The NAM index's B-link tree algorithm (Listings 1 and 2 of the paper),
// written once over NodeAccess: the coarse-grained design runs it on a
// memory server over its own arena (local_access.h: optimistic lock
// coupling on local words), the fine-grained one on a compute server over
// one-sided RDMA (remote_access.h). What differs is only how a node is
// read, locked, installed and unlocked.
//
// Lookups take no locks: they read consistent copies and follow sibling
// pointers when a key lies past a node's high key (a split they did not
// see). Inserts and deletes lock only the leaf they change, by CAS of the
// version word they read (so the copy they change is the node's current
// content), install the new body and unlock by CAS(held -> held + 1). A
// split writes the new right node first, then the left node in place, and
// then inserts the separator into the parent level by the general B-link
// rule (insert_separator), so a separator that is late or lost never
// blocks a later split: the level above is only a shortcut.
//
// The hybrid design (section 5) splits the tree across both: a memory
// server runs it over its inner levels (find_child, add_separator) and a
// compute server over the leaf level alone, with an UpperLevels that asks
// the memory server by RPC where a leaf is and tells it of a leaf split.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/index/nam/epoch.h"
#include "core/index/nam/layout.h"

namespace locus::nam {

// One arena's pages in this process's memory: the node a pointer names,
// or nullptr for a pointer to another server, outside the pages, or not at
// a page's start. LocalAccess::in_place answers with it too.
struct InPlaceMap {
  const std::byte* base = nullptr;  // nullptr: an empty map
  uint32_t server = 0;
  uint32_t page_bytes = 0;
  uint64_t first = 0, end = 0;  // the arena's first page and its size
  uint64_t page_mask = 0;  // page_bytes - 1 when a power of two (else 0: a division)
  uint64_t* root = nullptr;  // the catalog's root pointer word (acquire loads)

  bool empty() const { return base == nullptr; }
  const uint64_t* words(RemotePtr p) const {
    const uint64_t offset = p.offset();
    if (p.null() || p.server() != server || offset < first || offset + page_bytes > end) return nullptr;
    const uint64_t rel = offset - first;
    if (page_mask != 0 ? (rel & page_mask) != 0 : rel % page_bytes != 0) return nullptr;
    return reinterpret_cast<const uint64_t*>(base + offset);
  }
};

class NodeAccess {
 public:
  virtual ~NodeAccess() = default;
  virtual uint32_t page_bytes() const = 0;
  // readLockOrRestart: a consistent copy of the node at p, not locked.
  virtual Status read(RemotePtr p, Node& out) = 0;
  // upgradeToWriteLockOrRestart: CAS of the word from `version` to
  // version | lock; kAborted when the word was no longer `version`.
  virtual Status lock(RemotePtr p, uint64_t version) = 0;
  // Installs a locked node's new body (bytes 8 on). kAborted: the lock may
  // have been broken (its lease ran out); nothing was written.
  virtual Status install(RemotePtr p, const Node& n) = 0;
  // Writes a new node, not yet reachable, whole.
  virtual Status create(RemotePtr p, const Node& n) = 0;
  // writeUnlock: CAS(held -> held + 1), which fails harmlessly when the
  // lock was broken.
  virtual Status unlock(RemotePtr p, uint64_t held) = 0;
  virtual StatusOr<RemotePtr> allocate(uint8_t level) = 0;
  // The catalog's root pointer, and its CAS when the root splits.
  virtual StatusOr<RemotePtr> root() = 0;
  virtual StatusOr<bool> swap_root(RemotePtr old_root, RemotePtr new_root) = 0;
  // Head-node prefetch: copies of the nodes at `at`, all requests posted
  // at once, into pages[i * page_bytes()]; usable[i] says which copies are
  // consistent (the caller reads the others again one by one). The
  // default reads each in turn (a memory server's own arena).
  virtual Status read_batch(std::span<const RemotePtr> at, std::byte* pages, std::vector<uint8_t>* usable);
  // A traversal found the root it was given no longer the top (it had to
  // move right there): an access that caches the catalog re-reads it.
  virtual void forget_root() {}
  // The node's words in this process's memory, for a lookup that searches
  // them in place and re-checks the version word afterwards (Listing 3's
  // readLockOrRestart and checkOrRestart, without a copy of the page);
  // nullptr when p is no page here, or when nodes can only be copied
  // (one-sided READs). The default: copies only.
  virtual const uint64_t* in_place(RemotePtr) const { return nullptr; }
  // Where in_place() finds every node, when that is one arena of this
  // process: the in-place lookup then translates pointers and reads the
  // root itself, without a virtual call per node. Empty (the default):
  // call in_place() and root(). Asked once, when a tree is made on the
  // access: the map must not change while the access lives.
  virtual InPlaceMap in_place_map() const { return {}; }
  // Whether in_place() can answer at all: asked before a lookup tries it,
  // so that an access that only copies pays nothing (not even a catalog
  // READ, whose failure the copying path would then meet again).
  virtual bool searches_in_place() const { return false; }
};

// The levels above the leaves when another party keeps them (hybrid).
class UpperLevels {
 public:
  virtual ~UpperLevels() = default;
  // A leaf at or left of the one covering x (a B-link walk moves right).
  virtual StatusOr<RemotePtr> find_leaf(Pair x) = 0;
  // A leaf split: `right` now holds the pairs above `sep`.
  virtual Status add_separator(Pair sep, RemotePtr right) = 0;
  // A leaf merge (garbage collection): where one inner node's entry i names
  // `left` with key `high` (left's high key) and entry i + 1 names `right`,
  // drops entry i and lets entry i + 1 name `left`, so that left covers
  // right's pairs too; true when it did. false (nothing changed) when the
  // two are not such neighbours: right's separator not in yet, or the
  // entries under different parents. The caller holds both leaves' locks.
  virtual StatusOr<bool> join_leaves(Pair high, RemotePtr left, RemotePtr right) = 0;
};

struct TreeStats {
  uint64_t restarts = 0;  // lock CAS lost, or a lease ran out
  uint64_t splits = 0;
  uint64_t root_splits = 0;
  uint64_t moved_right = 0;  // sibling pointers followed past a high key
  uint64_t in_place_lookups = 0;  // lookups the in-place search answered (the rest copied nodes)
  uint64_t range_rereads = 0;     // leaves atomic ranges read a second time (their double collect)
  // Head nodes (fine-grained and hybrid range scans).
  uint64_t head_prefetches = 0;   // head nodes whose leaves a scan prefetched
  uint64_t prefetch_hits = 0;     // leaves a scan took from a prefetch
  uint64_t stale_head_reads = 0;  // leaf READs an up-to-date head would have saved
  uint64_t head_rebuilds = 0;     // passes over the leaf level
  uint64_t heads_added = 0;
  uint64_t heads_refreshed = 0;
  // Garbage collection (gc.cc).
  uint64_t gc_passes = 0;
  uint64_t gc_leaves_read = 0;     // leaves the passes' compaction walked (the bytes of their work)
  uint64_t gc_inner_read = 0;      // inner nodes collect_inner_garbage's merges read (its bytes of work)
  uint64_t entries_collected = 0;  // deleted entries removed from leaves
  uint64_t merges = 0;             // nodes merged into their left neighbour
  uint64_t inner_merges = 0;       // of them, nodes above the leaves
  uint64_t parents_repaired = 0;   // parents still naming a merged node, fixed
  uint64_t merges_undone = 0;      // merges left half done (merger gave up or died), undone
  uint64_t pages_freed = 0;        // merged nodes' pages freed after their epoch
  uint64_t pages_reused = 0;       // freed pages allocation took again
  uint64_t dead_forwards = 0;      // traversals that met a merged node and went left
};

class BlinkTree {
 public:
  // With `upper`, this tree works on the leaf level only and leaves the
  // levels above to it.
  explicit BlinkTree(NodeAccess& access, UpperLevels* upper = nullptr);

  // Every live payload under `key`, appended in ascending order. Atomic
  // even when the key's pairs span several leaves: such a walk is read
  // twice (a double collect) until no leaf's version word changed between
  // the two, so all its copies were the leaves' content at one instant.
  Status lookup(uint64_t key, std::vector<uint64_t>* payloads);
  // The live pairs >= from whose key is <= to_key, ascending, at most
  // `limit` of them (0: no limit), appended to `out`. Not atomic across
  // leaves (as in the paper) unless set_atomic_ranges(true): then a range
  // over several leaves is a double collect like lookup(), every leaf read
  // twice, so that a history checker can hold its result to one instant.
  Status range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out);
  void set_atomic_ranges(bool atomic) { atomic_ranges_ = atomic; }
  Status insert(Pair x);
  // Sets the delete bit of one live copy of x; false if there is none.
  StatusOr<bool> remove(Pair x);

  // Head nodes every `interval` leaves (0: none, the default). Scans use
  // the ones they meet to prefetch; range() runs a rebuild pass once its
  // scans have paid `interval` READs that up-to-date head nodes would
  // have saved (leaves split since the last pass).
  void set_head_interval(uint32_t interval);
  // One pass along the leaf level from its leftmost leaf (of this tree's
  // partition, for hybrid): a head node after every `interval` leaves, each
  // holding the pointers of the leaves up to the next head node. Heads are
  // never removed (leaves never merge), so a pass only adds heads where
  // splits made a group longer than `interval` and rewrites heads whose
  // group changed. Concurrent passes and writers are safe: every change
  // is a locked install of a node read at the version it locks.
  Status rebuild_head_nodes();

  // Epoch-based reclamation: this tree object takes a slot of `r` and
  // announces the epoch during each of its operations; its allocations
  // reuse the pages `r` has freed. Set before the object's first operation.
  Status set_reclaimer(Reclaimer* r);
  // One garbage-collection pass (the paper's epoch-based pass, sections 3.2
  // and 4.2): removes the leaves' deleted entries, then level by level from
  // the leaves up merges a node into its left neighbour under the same
  // parent when both fit in half a node, and removes it from the parent;
  // with a reclaimer, retires the merged nodes' pages and frees those no
  // reader can still hold. Concurrent readers and writers are safe: each
  // change is a locked install of nodes read at the versions it locks, and
  // a traversal that reaches a merged node through an old pointer follows
  // it to the node that took its entries. A leaf-level tree (with
  // UpperLevels, hybrid) merges leaves only, each merge joined in the
  // upper levels by their keeper (merge_leaves). Run by one tree object at
  // a time.
  Status collect_garbage();
  // A hybrid memory server's pass over the levels it keeps (1 and up):
  // merges as collect_garbage() does there, never reading a leaf (the
  // compute servers' passes merge those).
  Status collect_inner_garbage();
  // Entries whose delete bit is set, along the leaf level from its
  // leftmost leaf (what a garbage-collection pass would remove). For
  // reports after a run; not atomic against writers.
  StatusOr<uint64_t> count_deleted_entries();
  // Levels from the root to the leaves (1: the root is a leaf), for
  // reports after a run.
  StatusOr<uint32_t> levels();

  // The levels above the leaves, run by their keeper (a hybrid memory
  // server): the child pointer the node of `level` (>= 1) holds for x, and
  // the separator insert of a split of level - 1.
  StatusOr<RemotePtr> find_child(Pair x, uint8_t level);
  Status add_separator(uint8_t level, Pair sep, RemotePtr right) { return insert_separator(level, sep, right); }
  // UpperLevels::join_leaves on the node of `level` covering `high`.
  StatusOr<bool> join_children(uint8_t level, Pair high, RemotePtr left, RemotePtr right);

  // Makes an empty tree (before any client runs): one leaf, the root; with
  // `inner_root`, a root of level 1 over that leaf, so that a hybrid
  // memory server's tree never has its root on the leaf level.
  static Status create_empty(NodeAccess& access, bool inner_root = false);

  const TreeStats& stats() const { return stats_; }

 private:
  // lookup() searching the nodes in place (NodeAccess::in_place): true
  // when it answered (payloads appended), false when the general path must
  // (a node locked or changed under it, a merged node, pairs of the key
  // past the leaf's end, an access that only copies); it then leaves
  // `payloads` as it found them. tree_in_place.cc.
  bool lookup_in_place(uint64_t key, std::vector<uint64_t>* payloads);
  // The node of `level` covering x: its pointer in *ptr, its copy in n.
  // kNotFound when the tree has no such level yet.
  Status descend(Pair x, uint8_t level, RemotePtr* ptr, Node& n);
  Status move_right(Pair x, RemotePtr* ptr, Node& n);
  // A consistent copy of the node at *p; a merged node is followed to the
  // node that took its entries (*p becomes that node).
  Status read_live(RemotePtr* p, Node& n);
  // The same for a copy n of *p already read.
  Status follow_merges(RemotePtr* p, Node& n);
  // Called when the sibling at p of the node at `from` (as a copy named
  // it) was read merged (copy in `merged`). Either the copy of `from` was
  // old (it names another node now: nothing to do) or the merge was left
  // half done: a merge installs R merged first and then L with R's
  // entries, so a live L that still names a merged R is one whose install
  // gave up or whose merger died between the two. Such an R is made live
  // again, as it was before the merge (its entries, high key and sibling
  // are still there: layout.h), and kAborted returned so that the
  // operation starts over (gc.cc).
  Status undo_half_merge(RemotePtr from, RemotePtr p, const Node& merged);
  // For a walk along the siblings that starts over when it meets a merged
  // node: OK when n (the copy of p, the sibling `from` named) is live;
  // else undoes a half-done merge if it is one and returns kAborted
  // saying `what`.
  Status restart_if_merged(RemotePtr from, RemotePtr p, const Node& n, const char* what);
  // Garbage collection steps (gc.cc). A pass: with `leaves`, compaction
  // and merges from the leaves up; without, merges from level 1 up.
  Status gc_pass(bool leaves);
  Status compact_leaves();
  // Merges along the nodes of `level` (under parents of level + 1);
  // false when the tree has no level above it.
  StatusOr<bool> merge_level(uint8_t level);
  // Tries to merge child i + 1 of the parent at pp (copy in node_) into
  // child i: true when it changed the tree (the parent must be read
  // again), false when they do not qualify, kAborted when a lock was lost.
  StatusOr<bool> merge_once(RemotePtr pp, uint32_t i);
  // A leaf-level tree's merges (gc.cc): along the leaves, each leaf and
  // its sibling locked, joined by the upper levels' keeper, then merged.
  Status merge_leaves();
  // Installs n, locked at `version`, at p (still locked: the caller unlocks).
  Status install_locked(RemotePtr p, Node& n, uint64_t version);
  // The scan into pairs_, read twice when it spans leaves until no leaf's
  // version changed in between (lookup, atomic ranges).
  Status collect(Pair from, uint64_t to_key, uint32_t limit);
  // range(), noting each leaf read and its version word in `visited`.
  Status scan(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out,
              std::vector<std::pair<RemotePtr, uint64_t>>* visited);
  // Installs a locked node n (held word `held`) at p, writing `right` at
  // right_ptr first if it is not null; unlocks. kAborted: lease ran out.
  Status install_and_unlock(RemotePtr p, Node& n, uint64_t held, RemotePtr right_ptr, Node& right);
  Status insert_separator(uint8_t level, Pair sep, RemotePtr right);
  // Splits locked n and puts x into the half that covers it (leaves).
  Status split_leaf(RemotePtr p, Node& n, uint64_t held, Pair x);
  // One try of each change; kAborted when a lock was lost to a
  // concurrent writer or a lease ran out, and the change must start over.
  Status insert_once(Pair x);
  StatusOr<bool> remove_once(Pair x);
  // One try at putting sep into the node of `level` covering it; when
  // that node had to split, the separator and right node the level above
  // must take next.
  struct Climb {
    Pair sep;
    RemotePtr right;
  };
  StatusOr<std::optional<Climb>> separator_once(uint8_t level, Pair sep, RemotePtr right);
  // Runs `once` until it ends other than kAborted, counting restarts;
  // kUnavailable after kMaxRestarts (not kAborted: a caller's own restart
  // loop must not take it for a lost lock and run its change again).
  template <typename Once>
  auto restarting(const char* what, Once once) -> decltype(once());

  // A page for a new node of `level`: the spare one if it is of that
  // level, else a fresh one. A split or new root that gave up after its
  // allocation (lost the root CAS, or its lease before the install) leaves
  // its page, never made reachable, as the spare (it once leaked it).
  StatusOr<RemotePtr> allocate(uint8_t level);
  void keep_spare(uint8_t level, RemotePtr p) { spare_ = {p, level}; }

  static constexpr uint32_t kMaxRestarts = 1u << 20;

  // The scan's next node at p: from the prefetch when it was named by the
  // last head node and its copy is usable, else by READ.
  Status next_in_scan(RemotePtr p, uint32_t* unheaded);
  void prefetch(const Node& head);
  Status rebuild_once();
  // Links a new, empty head node after the leaf node_ (at p, as read).
  StatusOr<RemotePtr> add_head_after(RemotePtr p);
  // Makes the head node at h (copy in head_) name `group`, if it does not.
  Status refresh_head(RemotePtr h, const std::vector<RemotePtr>& group);

  NodeAccess& access_;
  UpperLevels* upper_;
  uint32_t leaf_cap_, inner_cap_;  // entries a page holds (layout.h), for lookup_in_place
  // The access's answers that lookup_in_place would otherwise ask of it on
  // every lookup (virtual calls are a tenth of a small tree's lookup).
  uint32_t page_bytes_;
  bool searches_in_place_;
  InPlaceMap in_place_map_;
  struct Spare {
    RemotePtr page;
    uint8_t level = 0;
  } spare_;
  std::vector<std::byte> scratch_;  // node copy, right half, new root, undo_half_merge's
  Node node_, right_, extra_, undo_;
  std::vector<Pair> pairs_;
  std::vector<std::pair<RemotePtr, uint64_t>> visited_;
  uint32_t head_interval_ = 0;
  uint64_t stale_since_rebuild_ = 0;
  std::vector<std::byte> head_page_;  // a head node's copy (rebuild)
  Node head_;
  std::vector<std::byte> prefetched_pages_;
  std::vector<RemotePtr> prefetched_;  // what the last head named
  std::vector<uint8_t> usable_;
  size_t next_prefetched_ = 0;
  bool prefetching_ = false;  // a head node was met in this scan
  TreeStats stats_;
  Reclaimer* reclaimer_ = nullptr;
  uint32_t slot_ = 0;
  uint32_t epoch_depth_ = 0;
  bool atomic_ranges_ = false;
};

namespace detail {
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const StatusOr<T>& r) {
  return r.status();
}
}  // namespace detail

template <typename Once>
auto BlinkTree::restarting(const char* what, Once once) -> decltype(once()) {
  for (uint32_t attempt = 0; attempt < kMaxRestarts; ++attempt) {
    if (attempt > 0 && reclaimer_ != nullptr) {
      // A restart after this client was fenced off a memory server may
      // need a new epoch slot before it reads again (remote_epochs.h).
      if (Status s = reclaimer_->reenter(); !s.is_ok()) return s;
    }
    auto r = once();
    if (detail::status_of(r).code() != StatusCode::kAborted) return r;
    ++stats_.restarts;
  }
  return Status(StatusCode::kUnavailable, std::string("nam: ") + what + " restarted too often");
}

}  // namespace locus::nam
