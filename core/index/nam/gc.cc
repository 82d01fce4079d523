// The NAM tree's garbage collection (BlinkTree::collect_garbage, tree.h):
// the epoch-based pass of the paper's sections 3.2 and 4.2 that removes the
// entries deletes only marked and rebalances by merging underfull nodes.
//
// A merge of R into its left neighbour L (same level, same parent P, L's
// sibling R) locks P, L and R at the versions read, then installs R marked
// merged, its sibling naming L; L with R's entries, high key and sibling;
// and P without the entry that separated them (R's entry now points at
// L); then unlocks the three. Readers spin on locked nodes, so they see
// the three before or after. A traversal that still reaches R (a pointer
// read before the merge) goes on at L, which covers all R covered; a scan
// that meets R along the siblings starts over. R's page is retired once P
// no longer names it and freed when the reclaimer's epochs say no
// operation can hold it (epoch.h). Locks are CAS try-locks that never wait,
// so taking P before L and R, against a split's leaf-then-parent order,
// cannot deadlock: a lost CAS restarts the merge.
//
// R is installed first. If L's install then gives up (the fine-grained
// lock's lease ran half out between the installs) or the merger dies, R is
// merged while L, live, still names it and lacks its entries: a state no
// finished merge leaves (L's sibling is then R's old one), so the first
// operation to follow L's sibling pointer to a merged R makes R live again
// (BlinkTree::undo_half_merge: R keeps its entries and its old sibling)
// and starts over. Installed the other way round (before 2026-11-29), a
// merge whose R install gave up left R live beside L's copy of its
// entries, and nothing could tell: a delete through P's entry for R went
// to R while scans read the pair, still live, in L. A merged R whose
// parent install gave up stays named by P; a later pass finds P naming a
// merged node and repairs P (or undoes the merge, if L lacks R's
// entries).
#include <string>

#include "core/index/nam/tree.h"

namespace locus::nam {
namespace {

bool aborted(const Status& s) { return s.code() == StatusCode::kAborted; }

// A merge at most fills half a node: a node that had just merged would
// otherwise split again on the next insert.
bool fits(const Node& l, const Node& r) {
  const uint32_t half = l.capacity() / 2;
  return l.leaf() ? l.live() + r.live() <= half : l.count() + r.count() <= half;
}

}  // namespace

Status BlinkTree::collect_garbage() { return gc_pass(true); }

Status BlinkTree::collect_inner_garbage() {
  if (upper_ != nullptr) return internal_error("nam: a leaf-level tree has no inner levels of its own");
  return gc_pass(false);
}

Status BlinkTree::gc_pass(bool leaves) {
  ++stats_.gc_passes;
  {
    EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
    LOCUS_RETURN_IF_ERROR(epoch.status());
    if (leaves) LOCUS_RETURN_IF_ERROR(restarting("garbage collection", [&] { return compact_leaves(); }));
    if (upper_ != nullptr) LOCUS_RETURN_IF_ERROR(restarting("merge", [&] { return merge_leaves(); }));
    for (uint8_t level = leaves ? 0 : 1; upper_ == nullptr; ++level) {
      LOCUS_ASSIGN_OR_RETURN(bool above, restarting("merge", [&] { return merge_level(level); }));
      if (!above) break;
    }
  }
  // Out of our own epoch: our pass holds no pointer now.
  if (reclaimer_ != nullptr) stats_.pages_freed += reclaimer_->advance();
  return Status();
}

Status BlinkTree::compact_leaves() {
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend({0, 0}, 0, &p, node_));  // the leftmost leaf
  ++stats_.gc_leaves_read;
  constexpr uint32_t kTriesPerLeaf = 64;                 // then the leaf is left to the next pass
  for (uint32_t tries = 0;;) {
    if (!node_.head() && node_.live() < node_.count() && tries < kTriesPerLeaf) {
      const uint64_t version = node_.word();
      const Status locked = access_.lock(p, version);
      if (aborted(locked)) {
        // A writer changed the leaf since it was read: read it again and
        // retry it, not the whole pass from the leftmost leaf (which under
        // 80 writers made a fine-grained pass over 340 leaves take 32 to 67
        // ms in scenarios/nam/gc.toml, against 15 to 22 ms so).
        ++stats_.restarts, ++tries;
        LOCUS_RETURN_IF_ERROR(access_.read(p, node_));
        if (node_.dead()) return Status(StatusCode::kAborted, "nam: a leaf merged during compaction");
        continue;
      }
      LOCUS_RETURN_IF_ERROR(locked);
      const uint32_t removed = node_.compact();
      LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, version | kLockBit, RemotePtr{}, right_));
      stats_.entries_collected += removed;
    }
    if (node_.sibling().null()) return Status();
    const RemotePtr from = p;
    p = node_.sibling();
    tries = 0;
    LOCUS_RETURN_IF_ERROR(access_.read(p, node_));
    ++stats_.gc_leaves_read;
    LOCUS_RETURN_IF_ERROR(restart_if_merged(from, p, node_, "nam: a leaf merged during compaction"));
  }
}

StatusOr<uint64_t> BlinkTree::count_deleted_entries() {
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend({0, 0}, 0, &p, node_));
  uint64_t marked = 0;
  for (;;) {
    if (!node_.head()) marked += node_.count() - node_.live();
    if (node_.sibling().null()) return marked;
    LOCUS_RETURN_IF_ERROR(access_.read(node_.sibling(), node_));
  }
}

StatusOr<bool> BlinkTree::merge_level(uint8_t level) {
  RemotePtr pp;
  const Status s = descend({0, 0}, level + 1, &pp, node_);  // the leftmost parent
  if (s.code() == StatusCode::kNotFound) return false;
  LOCUS_RETURN_IF_ERROR(s);
  ++stats_.gc_inner_read;
  constexpr uint32_t kTriesPerPair = 64;  // then the pair is left to the next pass
  uint32_t i = 0, tries = 0;
  for (;;) {
    if (i + 1 < node_.count()) {
      auto merged = merge_once(pp, i);
      if (!merged.is_ok() && !aborted(merged.status())) return merged.status();
      if (!merged.is_ok()) ++stats_.restarts;
      if (!merged.is_ok() || *merged) {
        // The parent changed (or we lost a race): read it again.
        LOCUS_RETURN_IF_ERROR(access_.read(pp, node_));
        ++stats_.gc_inner_read;
        if (node_.dead()) return Status(StatusCode::kAborted, "nam: a parent merged during the pass");
        if (!merged.is_ok() && ++tries >= kTriesPerPair) ++i, tries = 0;
        continue;
      }
      ++i, tries = 0;
      continue;
    }
    if (node_.sibling().null()) return true;
    const RemotePtr from = pp;
    pp = node_.sibling();
    LOCUS_RETURN_IF_ERROR(access_.read(pp, node_));
    ++stats_.gc_inner_read;
    LOCUS_RETURN_IF_ERROR(restart_if_merged(from, pp, node_, "nam: a parent merged during the pass"));
    i = 0, tries = 0;
  }
}

StatusOr<bool> BlinkTree::merge_once(RemotePtr pp, uint32_t i) {
  Node& parent = node_;
  Node& left = right_;
  Node& gone = extra_;
  const RemotePtr lp = parent.child(i), rp = parent.child(i + 1);
  LOCUS_RETURN_IF_ERROR(access_.read(lp, left));
  LOCUS_RETURN_IF_ERROR(access_.read(rp, gone));
  if (!left.leaf()) stats_.gc_inner_read += 2;
  const bool repair = gone.dead();  // merged before, but the parent's install gave up
  if (left.dead() || (repair && gone.sibling() != lp)) return false;
  // Merged, but L never took its entries: undone, not repaired (P's entry
  // for R dropped would send R's pairs to L, which does not hold them).
  if (repair && left.sibling() == rp) {
    LOCUS_RETURN_IF_ERROR(undo_half_merge(lp, rp, gone));
    return Status(StatusCode::kAborted, "nam: the pass's copy of a merged node's neighbour was old");
  }
  if (!repair && (left.sibling() != rp || left.head() || gone.head() || !fits(left, gone))) return false;
  const uint64_t vp = parent.word(), vl = left.word(), vr = gone.word();
  LOCUS_RETURN_IF_ERROR(access_.lock(pp, vp));
  auto unlock_all = [&](int held) {
    if (held >= 3) (void)access_.unlock(rp, vr | kLockBit);
    if (held >= 2) (void)access_.unlock(lp, vl | kLockBit);
    (void)access_.unlock(pp, vp | kLockBit);
  };
  auto install = [&](RemotePtr p, Node& n, uint64_t version) { return install_locked(p, n, version); };
  parent.erase_at(i);
  parent.set_child(i, lp);
  if (repair) {
    Status st = install(pp, parent, vp);
    unlock_all(1);
    LOCUS_RETURN_IF_ERROR(st);
    ++stats_.parents_repaired;
    if (reclaimer_ != nullptr) reclaimer_->retire(rp, gone.level());
    return true;
  }
  if (Status st = access_.lock(lp, vl); !st.is_ok()) {
    unlock_all(1);
    return st;
  }
  if (Status st = access_.lock(rp, vr); !st.is_ok()) {
    unlock_all(2);
    return st;
  }
  if (left.leaf()) left.compact(), gone.compact();
  left.absorb(gone);
  gone.set_dead(lp);
  Status st = install(rp, gone, vr);
  if (st.is_ok()) st = install(lp, left, vl);
  const bool merged = st.is_ok();
  if (merged) st = install(pp, parent, vp);
  unlock_all(3);
  if (merged) {
    ++stats_.merges;
    if (!gone.leaf()) ++stats_.inner_merges;
  }
  LOCUS_RETURN_IF_ERROR(st);
  if (reclaimer_ != nullptr) reclaimer_->retire(rp, gone.level());
  return true;
}

Status BlinkTree::install_locked(RemotePtr p, Node& n, uint64_t version) {
  n.set_word(version | kLockBit);
  n.seal((version | kLockBit) + 1);
  return access_.install(p, n);
}

// Hybrid: the levels above the leaves are the memory servers'
// (hybrid_client.h), so leaves merge along the leaf level. L and its
// sibling R, both locked at the versions read, are joined first by the
// server that keeps their parent (UpperLevels::join_leaves: L's entry
// dropped, R's now naming L, under the server's local lock), then R is
// installed marked merged, naming L, and L with R's entries, high key and
// sibling, as merge_once does; then both are unlocked. Readers the new
// parent sends to L wait on L's lock; readers holding R wait on R's and
// then go left. The server refuses (nothing changes) when R's separator
// has not reached it or R is under another parent. If R's install gives up
// after the join (a lease ran half out), R stays live: the parent sends its
// pairs to L, whose high key sends them on to R, as after a lost separator.
// If L's gives up after R's (or the merger dies between), the next to
// follow L's sibling pointer undoes the merge (the header above), with the
// same outcome.
Status BlinkTree::merge_leaves() {
  Node& left = node_;
  Node& gone = extra_;
  RemotePtr lp;
  LOCUS_RETURN_IF_ERROR(descend({0, 0}, 0, &lp, left));  // the leftmost leaf
  constexpr uint32_t kTriesPerLeaf = 64;                 // then the pair is left to the next pass
  for (uint32_t tries = 0;;) {
    const RemotePtr rp = left.sibling();
    if (rp.null()) return Status();
    LOCUS_RETURN_IF_ERROR(access_.read(rp, gone));
    LOCUS_RETURN_IF_ERROR(restart_if_merged(lp, rp, gone, "nam: a leaf merged during the pass"));
    if (left.dead()) return Status(StatusCode::kAborted, "nam: a leaf merged during the pass");
    if (left.head() || gone.head() || !fits(left, gone) || tries >= kTriesPerLeaf) {
      lp = rp;
      std::swap(node_, extra_);  // the sibling is the next left
      tries = 0;
      continue;
    }
    const uint64_t vl = left.word(), vr = gone.word();
    Status st = access_.lock(lp, vl);
    if (st.is_ok()) {
      st = access_.lock(rp, vr);
      if (!st.is_ok()) (void)access_.unlock(lp, vl | kLockBit);
    }
    if (aborted(st)) {  // a writer changed one of them since: read the left one again
      ++stats_.restarts, ++tries;
      LOCUS_RETURN_IF_ERROR(access_.read(lp, left));
      continue;
    }
    LOCUS_RETURN_IF_ERROR(st);
    auto joined = upper_->join_leaves(left.high(), lp, rp);
    bool merged = false;
    if (joined.is_ok() && *joined) {
      left.compact();
      gone.compact();
      left.absorb(gone);
      gone.set_dead(lp);
      st = install_locked(rp, gone, vr);
      if (st.is_ok()) st = install_locked(lp, left, vl);
      merged = st.is_ok();
    }
    (void)access_.unlock(rp, vr | kLockBit);
    (void)access_.unlock(lp, vl | kLockBit);
    LOCUS_RETURN_IF_ERROR(joined.status());
    if (merged) {
      ++stats_.merges;
      if (reclaimer_ != nullptr) reclaimer_->retire(rp, 0);
    }
    if (!st.is_ok() && !aborted(st)) return st;
    if (!*joined || !st.is_ok()) {  // not neighbours in one parent, or an install gave up: go on from R
      lp = rp;
      LOCUS_RETURN_IF_ERROR(access_.read(lp, left));
      tries = 0;
      continue;
    }
    LOCUS_RETURN_IF_ERROR(access_.read(lp, left));  // L again (it may take its new sibling too)
    tries = 0;
  }
}

Status BlinkTree::restart_if_merged(RemotePtr from, RemotePtr p, const Node& n, const char* what) {
  if (!n.dead()) return Status();
  LOCUS_RETURN_IF_ERROR(undo_half_merge(from, p, n));
  return Status(StatusCode::kAborted, what);
}

Status BlinkTree::undo_half_merge(RemotePtr from, RemotePtr p, const Node& merged) {
  if (!merged.dead()) return Status();
  Node& left = undo_;
  LOCUS_RETURN_IF_ERROR(access_.read(from, left));
  if (left.dead() || left.sibling() != p) return Status();  // the copy naming p was old
  // L is unlocked (read() waits out a holder, or breaks its lock after a
  // lease and fences it): its merger gave up or is gone, and can no
  // longer install L. R, merged, changes only by this undo: lock it at the
  // version read, so that of two undoers one wins. (R's copy goes where
  // L's was: L is not needed again.)
  Node& gone = undo_;
  LOCUS_RETURN_IF_ERROR(access_.read(p, gone));
  if (!gone.dead()) return Status(StatusCode::kAborted, "nam: a merged node made live again meanwhile");
  const uint64_t version = gone.word();
  LOCUS_RETURN_IF_ERROR(access_.lock(p, version));
  gone.revive();
  const Status st = install_locked(p, gone, version);
  (void)access_.unlock(p, version | kLockBit);
  LOCUS_RETURN_IF_ERROR(st);
  ++stats_.merges_undone;
  return Status(StatusCode::kAborted, "nam: undid a merge left half done");
}

StatusOr<bool> BlinkTree::join_children(uint8_t level, Pair high, RemotePtr left, RemotePtr right) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  return restarting("join", [&]() -> StatusOr<bool> {
    RemotePtr p;
    LOCUS_RETURN_IF_ERROR(descend(high, level, &p, node_));
    const uint32_t i = node_.child_index(high);
    if (i + 1 >= node_.count() || node_.child(i) != left || node_.child(i + 1) != right) return false;
    const uint64_t version = node_.word();
    LOCUS_RETURN_IF_ERROR(access_.lock(p, version));
    node_.erase_at(i);
    node_.set_child(i, left);
    LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, version | kLockBit, RemotePtr{}, right_));
    return true;
  });
}

}  // namespace locus::nam
