// The B-link tree algorithm of the NAM index (tree.h), over any NodeAccess.
#include "core/index/nam/tree.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace locus::nam {
namespace {

constexpr Pair kMaxPair{std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};

bool aborted(const Status& s) { return s.code() == StatusCode::kAborted; }

}  // namespace

Status NodeAccess::read_batch(std::span<const RemotePtr> at, std::byte* pages, std::vector<uint8_t>* usable) {
  usable->assign(at.size(), 0);
  for (size_t i = 0; i < at.size(); ++i) {
    Node n(pages + i * page_bytes(), page_bytes());
    LOCUS_RETURN_IF_ERROR(read(at[i], n));
    (*usable)[i] = 1;
  }
  return Status();
}

BlinkTree::BlinkTree(NodeAccess& access, UpperLevels* upper)
    : access_(access),
      upper_(upper),
      leaf_cap_(leaf_capacity(access.page_bytes())),
      inner_cap_(inner_capacity(access.page_bytes())),
      page_bytes_(access.page_bytes()),
      searches_in_place_(access.searches_in_place()),
      in_place_map_(access.in_place_map()),
      scratch_(4 * size_t{access.page_bytes()}),
      node_(scratch_.data(), access.page_bytes()),
      right_(scratch_.data() + access.page_bytes(), access.page_bytes()),
      extra_(scratch_.data() + 2 * size_t{access.page_bytes()}, access.page_bytes()),
      undo_(scratch_.data() + 3 * size_t{access.page_bytes()}, access.page_bytes()),
      head_page_(access.page_bytes()),
      head_(head_page_.data(), access.page_bytes()) {}

Status BlinkTree::create_empty(NodeAccess& access, bool inner_root) {
  std::vector<std::byte> page(access.page_bytes());
  Node n(page.data(), access.page_bytes());
  n.init(0);
  n.seal(0);
  LOCUS_ASSIGN_OR_RETURN(RemotePtr p, access.allocate(0));
  LOCUS_RETURN_IF_ERROR(access.create(p, n));
  if (inner_root) {
    n.init(1);
    n.insert_at(0, kMaxPair, p);
    n.seal(0);
    LOCUS_ASSIGN_OR_RETURN(p, access.allocate(1));
    LOCUS_RETURN_IF_ERROR(access.create(p, n));
  }
  LOCUS_ASSIGN_OR_RETURN(bool swapped, access.swap_root(RemotePtr{}, p));
  if (!swapped) return Status(StatusCode::kAlreadyExists, "nam: the index already has a root");
  return Status();
}

Status BlinkTree::move_right(Pair x, RemotePtr* ptr, Node& n) {
  while (!n.covers(x)) {
    const RemotePtr next = n.sibling();
    if (next.null()) return corruption("nam: a node short of +inf has no sibling");
    ++stats_.moved_right;
    const RemotePtr from = *ptr;
    *ptr = next;
    LOCUS_RETURN_IF_ERROR(access_.read(*ptr, n));
    if (n.dead()) {
      LOCUS_RETURN_IF_ERROR(undo_half_merge(from, *ptr, n));
      LOCUS_RETURN_IF_ERROR(follow_merges(ptr, n));
    }
  }
  return Status();
}

Status BlinkTree::read_live(RemotePtr* p, Node& n) {
  LOCUS_RETURN_IF_ERROR(access_.read(*p, n));
  return follow_merges(p, n);
}

Status BlinkTree::follow_merges(RemotePtr* p, Node& n) {
  // The node it went into covers everything it covered (and it is retired
  // no earlier than this one, so the page is still ours to read).
  while (n.dead()) {
    ++stats_.dead_forwards;
    *p = n.sibling();
    LOCUS_RETURN_IF_ERROR(access_.read(*p, n));
  }
  return Status();
}

Status BlinkTree::set_reclaimer(Reclaimer* r) {
  LOCUS_ASSIGN_OR_RETURN(slot_, r->join());
  reclaimer_ = r;
  return Status();
}

StatusOr<RemotePtr> BlinkTree::allocate(uint8_t level) {
  if (!spare_.page.null() && spare_.level == level) return std::exchange(spare_.page, RemotePtr{});
  if (reclaimer_ != nullptr) {
    if (const RemotePtr p = reclaimer_->take(level); !p.null()) {
      ++stats_.pages_reused;
      return p;
    }
  }
  return access_.allocate(level);
}

Status BlinkTree::descend(Pair x, uint8_t level, RemotePtr* ptr, Node& n) {
  if (upper_ != nullptr) {
    if (level != 0) return internal_error("nam: a leaf-level tree asked for level " + std::to_string(level));
    LOCUS_ASSIGN_OR_RETURN(*ptr, upper_->find_leaf(x));
    LOCUS_RETURN_IF_ERROR(read_live(ptr, n));
    if (!n.leaf()) return corruption("nam: the upper levels named a node that is not a leaf");
    return move_right(x, ptr, n);
  }
  LOCUS_ASSIGN_OR_RETURN(RemotePtr p, access_.root());
  if (p.null()) return Status(StatusCode::kInternal, "nam: the index has no root");
  LOCUS_RETURN_IF_ERROR(read_live(&p, n));
  if (n.level() < level) return not_found("nam: the tree is lower than level " + std::to_string(level));
  if (!n.covers(x)) access_.forget_root();
  for (;;) {
    LOCUS_RETURN_IF_ERROR(move_right(x, &p, n));
    if (n.level() == level) {
      *ptr = p;
      return Status();
    }
    const uint8_t below = n.level() - 1;
    p = n.child(n.child_index(x));
    LOCUS_RETURN_IF_ERROR(read_live(&p, n));
    if (n.level() != below) return corruption("nam: a child is not one level down");
  }
}

StatusOr<uint32_t> BlinkTree::levels() {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  // Restarted as every operation is: a READ fenced off (this client's
  // epoch slot broken after its lease) fails with kAborted.
  return restarting("levels", [&]() -> StatusOr<uint32_t> {
    LOCUS_ASSIGN_OR_RETURN(RemotePtr p, access_.root());
    LOCUS_RETURN_IF_ERROR(read_live(&p, node_));
    return uint32_t{node_.level()} + 1;
  });
}

StatusOr<RemotePtr> BlinkTree::find_child(Pair x, uint8_t level) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  if (level == 0) return internal_error("nam: leaves have no children");
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend(x, level, &p, node_));
  return node_.child(node_.child_index(x));
}

Status BlinkTree::lookup(uint64_t key, std::vector<uint64_t>* payloads) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  if (!epoch.status().is_ok()) return epoch.status();
  if (upper_ == nullptr && searches_in_place_ && lookup_in_place(key, payloads)) return Status();
  LOCUS_RETURN_IF_ERROR(restarting("lookup", [&] { return collect({key, 0}, key, 0); }));
  for (const Pair& x : pairs_) payloads->push_back(x.payload);
  return Status();
}

Status BlinkTree::collect(Pair from, uint64_t to_key, uint32_t limit) {
  pairs_.clear();
  visited_.clear();
  LOCUS_RETURN_IF_ERROR(scan(from, to_key, limit, &pairs_, &visited_));
  if (visited_.size() < 2) return Status();  // one copy of one leaf is atomic
  for (const auto& [p, version] : visited_) {
    ++stats_.range_rereads;
    LOCUS_RETURN_IF_ERROR(access_.read(p, extra_));
    if (extra_.word() != version) return Status(StatusCode::kAborted, "nam: a leaf changed during the walk");
  }
  return Status();
}

Status BlinkTree::range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  // A scan that meets a merged node along the siblings starts over (the
  // node that took its entries is one it has read already).
  const size_t base = out->size();
  if (atomic_ranges_) {
    LOCUS_RETURN_IF_ERROR(restarting("range", [&] { return collect(from, to_key, limit); }));
    out->insert(out->end(), pairs_.begin(), pairs_.end());
  } else {
    LOCUS_RETURN_IF_ERROR(restarting("range", [&] {
      out->resize(base);
      return scan(from, to_key, limit, out, nullptr);
    }));
  }
  // Rebuilt lazily, as the paper's epoch-based pass: by the client whose
  // scans paid for outdated heads. A pass that gives up is tried again
  // after as many more stale READs.
  if (head_interval_ > 0 && stale_since_rebuild_ >= head_interval_) {
    const Status s = rebuild_head_nodes();
    if (s.code() != StatusCode::kUnavailable) return s;
  }
  return Status();
}

Status BlinkTree::scan(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out,
                       std::vector<std::pair<RemotePtr, uint64_t>>* visited) {
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend(from, 0, &p, node_));
  prefetching_ = false;
  uint32_t unheaded = 0;  // leaves READ since the scan's start or its last head node
  uint32_t found = 0;
  for (;;) {
    if (node_.head()) {
      prefetch(node_);
    } else {
      if (visited != nullptr) visited->emplace_back(p, node_.word());
      for (uint32_t i = node_.lower_bound(from); i < node_.count(); ++i) {
        const Pair x = node_.pair(i);
        if (x.key > to_key) return Status();
        if (node_.deleted(i)) continue;
        out->push_back(x);
        if (limit != 0 && ++found == limit) return Status();
      }
      if (!node_.pairs_may_follow(to_key)) return Status();
    }
    if (node_.sibling().null()) return Status();
    const RemotePtr from = p;
    p = node_.sibling();
    LOCUS_RETURN_IF_ERROR(next_in_scan(p, &unheaded));
    LOCUS_RETURN_IF_ERROR(restart_if_merged(from, p, node_, "nam: a scan met a merged node"));
  }
}

void BlinkTree::prefetch(const Node& head) {
  prefetching_ = true;
  prefetched_.clear();
  next_prefetched_ = 0;
  if (head_interval_ == 0) return;
  const uint32_t n = std::min(head.count(), head_interval_);
  for (uint32_t i = 0; i < n; ++i) prefetched_.push_back(head.head_leaf(i));
  if (prefetched_.empty()) return;
  prefetched_pages_.resize(prefetched_.size() * size_t{access_.page_bytes()});
  // Prefetching is an optimisation: a batch that fails leaves the scan to
  // read each leaf itself.
  if (!access_.read_batch(prefetched_, prefetched_pages_.data(), &usable_).is_ok()) {
    prefetched_.clear();
    return;
  }
  ++stats_.head_prefetches;
}

Status BlinkTree::next_in_scan(RemotePtr p, uint32_t* unheaded) {
  bool named = false;
  for (size_t j = next_prefetched_; j < prefetched_.size(); ++j) {
    if (prefetched_[j] != p) continue;
    named = true;
    if (usable_[j] == 0) break;  // torn or locked when prefetched: READ it again
    std::memcpy(node_.data(), prefetched_pages_.data() + j * size_t{access_.page_bytes()}, access_.page_bytes());
    next_prefetched_ = j + 1;
    ++stats_.prefetch_hits;
    return Status();
  }
  LOCUS_RETURN_IF_ERROR(access_.read(p, node_));
  if (node_.head() || head_interval_ == 0 || named) return Status();
  // A leaf the last head did not name (split since the head was built),
  // or more leaves than a group before the scan's first head: outdated
  // or missing heads, an extra READ each.
  if (prefetching_ || ++*unheaded > head_interval_) {
    ++stats_.stale_head_reads;
    ++stale_since_rebuild_;
  }
  return Status();
}

void BlinkTree::set_head_interval(uint32_t interval) {
  // A head node is a leaf-level page: it names at most a leaf's capacity.
  head_interval_ = std::min(interval, leaf_capacity(access_.page_bytes()));
  prefetched_pages_.reserve(size_t{interval} * access_.page_bytes());
  prefetched_.reserve(interval);
}

Status BlinkTree::rebuild_head_nodes() {
  if (head_interval_ == 0) return Status();
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  stale_since_rebuild_ = 0;
  return restarting("head-node rebuild", [&] { return rebuild_once(); });
}

Status BlinkTree::rebuild_once() {
  ++stats_.head_rebuilds;
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend({0, 0}, 0, &p, node_));  // the leftmost leaf
  std::vector<RemotePtr> group{p};                       // the leaves after `head` so far
  RemotePtr head;                                        // null: the leaves before the first head
  for (;;) {
    const RemotePtr next = node_.sibling();
    if (next.null()) break;
    LOCUS_RETURN_IF_ERROR(access_.read(next, extra_));
    LOCUS_RETURN_IF_ERROR(restart_if_merged(p, next, extra_, "nam: a leaf merged during the head-node pass"));
    if (extra_.head()) {
      LOCUS_RETURN_IF_ERROR(refresh_head(head, group));
      head = next;
      std::memcpy(head_.data(), extra_.data(), access_.page_bytes());
      group.clear();
    } else if (group.size() >= head_interval_) {
      LOCUS_ASSIGN_OR_RETURN(RemotePtr h, add_head_after(p));
      LOCUS_RETURN_IF_ERROR(refresh_head(head, group));
      head = h;
      std::memcpy(head_.data(), right_.data(), access_.page_bytes());
      group.assign(1, next);
    } else {
      group.push_back(next);
    }
    p = next;
    std::memcpy(node_.data(), extra_.data(), access_.page_bytes());
  }
  return refresh_head(head, group);
}

StatusOr<RemotePtr> BlinkTree::add_head_after(RemotePtr p) {
  LOCUS_ASSIGN_OR_RETURN(RemotePtr h, allocate(0));
  // Its high key is the leaf's: a lookup moving right past the leaf moves
  // past the head too, and no lookup or insert ever stops at it.
  right_.init(0);
  right_.set_high(node_.high_inf(), node_.high());
  right_.set_sibling(node_.sibling());
  right_.set_head(nullptr, 0);
  const uint64_t version = node_.word();
  Status s = access_.lock(p, version);
  if (!s.is_ok()) {
    keep_spare(0, h);
    return s;
  }
  node_.set_sibling(h);
  LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, version | kLockBit, h, right_));
  right_.set_word(0);  // as created
  ++stats_.heads_added;
  return h;
}

Status BlinkTree::refresh_head(RemotePtr h, const std::vector<RemotePtr>& group) {
  if (h.null()) return Status();
  bool same = head_.count() == group.size();
  for (size_t i = 0; same && i < group.size(); ++i) same = head_.head_leaf(static_cast<uint32_t>(i)) == group[i];
  if (same) return Status();
  const uint64_t version = head_.word();
  LOCUS_RETURN_IF_ERROR(access_.lock(h, version));
  head_.set_head(group.data(), static_cast<uint32_t>(group.size()));
  LOCUS_RETURN_IF_ERROR(install_and_unlock(h, head_, version | kLockBit, RemotePtr{}, extra_));
  ++stats_.heads_refreshed;
  return Status();
}

Status BlinkTree::install_and_unlock(RemotePtr p, Node& n, uint64_t held, RemotePtr right_ptr, Node& right) {
  Status s;
  if (!right_ptr.null()) {
    right.set_word(0);
    right.seal(0);
    s = access_.create(right_ptr, right);
  }
  if (s.is_ok()) {
    n.set_word(held);
    n.seal(held + 1);
    s = access_.install(p, n);
  }
  // Given up before the install (or the create) wrote: the new right node
  // is unreachable.
  if (aborted(s) && !right_ptr.null()) keep_spare(right.level(), right_ptr);
  // Unlocked even when the install gave up: a lock still ours is released,
  // one broken meanwhile is not touched (the CAS fails).
  Status u = access_.unlock(p, held);
  if (!s.is_ok()) return s;
  return u;
}

Status BlinkTree::split_leaf(RemotePtr p, Node& n, uint64_t held, Pair x) {
  const uint32_t at = n.split_point();
  if (at == 0) {
    (void)access_.unlock(p, held);
    return resource_exhausted("nam: a leaf full of one (key, payload) pair cannot split; raise index.page_bytes");
  }
  auto rp = allocate(0);
  if (!rp.is_ok()) {
    (void)access_.unlock(p, held);
    return rp.status();
  }
  n.split_into(at, right_, *rp);
  Node& half = x <= n.high() ? n : right_;
  half.insert_at(half.lower_bound(x), x);
  const Pair sep = n.high();
  LOCUS_RETURN_IF_ERROR(install_and_unlock(p, n, held, *rp, right_));
  ++stats_.splits;
  if (upper_ != nullptr) return upper_->add_separator(sep, *rp);
  return insert_separator(1, sep, *rp);
}

Status BlinkTree::insert(Pair x) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  return restarting("insert", [&] { return insert_once(x); });
}

StatusOr<bool> BlinkTree::remove(Pair x) {
  EpochGuard epoch(reclaimer_, slot_, &epoch_depth_);
  LOCUS_RETURN_IF_ERROR(epoch.status());
  return restarting("delete", [&] { return remove_once(x); });
}

Status BlinkTree::insert_once(Pair x) {
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend(x, 0, &p, node_));
  const uint64_t version = node_.word();
  uint32_t i = node_.lower_bound(x);
  // A deleted copy of x is revived in place.
  uint32_t dead = node_.count();
  for (uint32_t j = i; j < node_.count() && node_.pair(j) == x; ++j) {
    if (node_.deleted(j)) dead = j;
  }
  LOCUS_RETURN_IF_ERROR(access_.lock(p, version));
  const uint64_t held = version | kLockBit;
  // A full leaf first drops its deleted entries (what the paper's
  // garbage collection would remove later), then splits if it must.
  if (dead == node_.count() && node_.full() && node_.compact() > 0) i = node_.lower_bound(x);
  if (dead < node_.count()) {
    node_.set_deleted(dead, false);
  } else if (!node_.full()) {
    node_.insert_at(i, x);
  } else {
    return split_leaf(p, node_, held, x);
  }
  return install_and_unlock(p, node_, held, RemotePtr{}, right_);
}

StatusOr<bool> BlinkTree::remove_once(Pair x) {
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend(x, 0, &p, node_));
  uint32_t live = node_.count();
  for (uint32_t j = node_.lower_bound(x); j < node_.count() && node_.pair(j) == x; ++j) {
    if (!node_.deleted(j)) live = j;
  }
  if (live == node_.count()) return false;
  const uint64_t version = node_.word();
  LOCUS_RETURN_IF_ERROR(access_.lock(p, version));
  node_.set_deleted(live, true);
  LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, version | kLockBit, RemotePtr{}, right_));
  return true;
}

Status BlinkTree::insert_separator(uint8_t level, Pair sep, RemotePtr right) {
  for (;;) {
    LOCUS_ASSIGN_OR_RETURN(std::optional<Climb> up,
                           restarting("separator insert", [&] { return separator_once(level, sep, right); }));
    if (!up) return Status();
    sep = up->sep;
    right = up->right;
    ++level;
  }
}

StatusOr<std::optional<BlinkTree::Climb>> BlinkTree::separator_once(uint8_t level, Pair sep, RemotePtr right) {
  LOCUS_ASSIGN_OR_RETURN(RemotePtr root, access_.root());
  LOCUS_RETURN_IF_ERROR(access_.read(root, node_));
  if (node_.level() < level) {
    // The split node's level has no parent: a new root over the old one
    // (the leftmost node of its level) and the new right node.
    LOCUS_ASSIGN_OR_RETURN(RemotePtr rp, allocate(level));
    extra_.init(level);
    extra_.insert_at(0, sep, root);
    extra_.insert_at(1, kMaxPair, right);
    extra_.seal(0);
    LOCUS_RETURN_IF_ERROR(access_.create(rp, extra_));
    LOCUS_ASSIGN_OR_RETURN(bool swapped, access_.swap_root(root, rp));
    if (!swapped) {
      keep_spare(level, rp);
      return Status(StatusCode::kAborted, "nam: another split grew the tree first");
    }
    ++stats_.root_splits;
    return std::optional<Climb>();
  }
  RemotePtr p;
  LOCUS_RETURN_IF_ERROR(descend(sep, level, &p, node_));
  const uint64_t version = node_.word();
  LOCUS_RETURN_IF_ERROR(access_.lock(p, version));
  const uint64_t held = version | kLockBit;
  // The general rule: the entry i covering sep keeps its upper bound and
  // takes the new right node; (sep, its old child) goes before it.
  auto add = [&](Node& n) {
    const uint32_t i = n.child_index(sep);
    n.insert_at(i, sep, n.child(i));
    n.set_child(i + 1, right);
  };
  if (!node_.full()) {
    add(node_);
    LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, held, RemotePtr{}, right_));
    return std::optional<Climb>();
  }
  auto rp = allocate(level);
  if (!rp.is_ok()) {
    (void)access_.unlock(p, held);
    return rp.status();
  }
  node_.split_into(node_.count() / 2, right_, *rp);
  add(sep <= node_.high() ? node_ : right_);
  const Pair up = node_.high();
  LOCUS_RETURN_IF_ERROR(install_and_unlock(p, node_, held, *rp, right_));
  ++stats_.splits;
  return std::optional<Climb>(Climb{up, *rp});
}

}  // namespace locus::nam
