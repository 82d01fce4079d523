// BlinkTree::lookup on an access whose nodes are in this process's memory
// (a coarse-grained memory server's arena): optimistic lock coupling as
// the paper's Listing 3 has it, searching each node where it lies instead
// of copying the page first. Per node: read the version word
// (readLockOrRestart; a locked node sends the lookup to the general path,
// which waits), search the words, and check the version word again before
// anything read there is used (checkOrRestart): a child or sibling pointer
// before it is followed, the payloads before they are returned. Every word
// is read with a relaxed atomic load and the re-check is ordered after
// them by an acquire fence (a seqlock, as LocalAccess::read), so a reader
// racing a writer is well-defined and discards what it saw.
//
// Anything unusual is left to the copying path (tree.cc), which handles
// it: a node locked or changed under the search, a merged node, a key
// whose pairs may continue past the leaf's end (its atomic double
// collect), an inconsistent header.
#include <atomic>

#include "core/common/prefetch.h"
#include "core/index/nam/tree.h"

namespace locus::nam {
namespace {

// A node's words in place, read one at a time.
class PageWords {
 public:
  PageWords(const uint64_t* w, uint32_t page_bytes) : w_(const_cast<uint64_t*>(w)), page_bytes_(page_bytes) {}

  // Asks for all the page's lines at once, as soon as the page is known
  // and before its header is read, so that the search's loads, each
  // depending on the last, find them cached: a page of a large tree is
  // otherwise a cache miss for the header, then for the entries the header
  // says are there, then for the leaf's delete bits at the page's end.
  // (core/common/prefetch.h: not a bare __builtin_prefetch loop, which GCC
  // may delete.)
  void prefetch() const { prefetch_lines(w_, page_bytes_); }
  uint64_t at(uint32_t i) const { return std::atomic_ref<uint64_t>(w_[i]).load(std::memory_order_relaxed); }
  uint64_t version() const { return std::atomic_ref<uint64_t>(w_[0]).load(std::memory_order_acquire); }
  // checkOrRestart: the words read since `v` was read are a copy of one
  // version of the node.
  bool still(uint64_t v) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return std::atomic_ref<uint64_t>(w_[0]).load(std::memory_order_relaxed) == v;
  }
  // Leaf pair i's key and payload; inner entry i's key and child.
  uint64_t leaf_key(uint32_t i) const { return at(5 + 2 * i); }
  uint64_t leaf_payload(uint32_t i) const { return at(6 + 2 * i); }
  uint64_t inner_key(uint32_t i) const { return at(5 + 3 * i); }
  RemotePtr inner_child(uint32_t i) const { return {at(7 + 3 * i)}; }
  // Leaf entry i's delete bit, from the word holding its bitmap byte.
  bool deleted(uint32_t i, uint32_t leaf_cap) const {
    const uint32_t byte = page_bytes_ - kFooterBytes - (leaf_cap + 7) / 8 + i / 8;
    return (at(byte / 8) >> ((byte % 8) * 8 + i % 8) & 1) != 0;
  }

 private:
  uint64_t* w_;
  uint32_t page_bytes_;
};

}  // namespace

bool BlinkTree::lookup_in_place(uint64_t key, std::vector<uint64_t>* payloads) {
  const uint32_t page = page_bytes_;
  const uint32_t leaf_cap = leaf_cap_, inner_cap = inner_cap_;
  // Pointers to pages here, and the root, without a virtual call when the
  // pages are one arena's (LocalAccess::in_place_map).
  const InPlaceMap& map = in_place_map_;
  RemotePtr root;
  if (map.root != nullptr) {
    root = RemotePtr{std::atomic_ref<uint64_t>(*map.root).load(std::memory_order_acquire)};
  } else {
    auto r = access_.root();
    if (!r.is_ok()) return false;
    root = *r;
  }
  if (root.null()) return false;
  auto in_place = [&](RemotePtr p) { return map.empty() ? access_.in_place(p) : map.words(p); };
  const uint64_t* words = in_place(root);
  if (words == nullptr) return false;
  PageWords n(words, page);
  n.prefetch();
  uint64_t v = n.version();
  int expected_level = -1;  // the root's level is whatever it is
  uint64_t moved_right = 0;
  // A bound on the steps: levels plus the siblings moved past; a search
  // that takes more leaves it to the general path.
  for (uint32_t steps = 0; steps < 1024; ++steps) {
    if ((v & kLockBit) != 0) return false;
    const uint64_t header = n.at(1);
    const uint32_t level = header & 0xff, flags = (header >> 8) & 0xff, count = (header >> 16) & 0xffff;
    if ((header >> 32) != kMagic || (flags & (Node::kDead | Node::kHead)) != 0 ||
        (expected_level >= 0 && level != static_cast<uint32_t>(expected_level))) {
      return false;
    }
    // Move right while the node holds only pairs below (key, 0): its high
    // key is below key.
    if ((flags & Node::kHighInf) == 0 && n.at(2) < key) {
      const RemotePtr next{n.at(4)};
      if (!n.still(v) || next.null()) return false;
      const uint64_t* w = in_place(next);
      if (w == nullptr) return false;
      ++moved_right;
      n = PageWords(w, page);
      n.prefetch();
      v = n.version();
      expected_level = static_cast<int>(level);
      continue;
    }
    if (level == 0) {
      if (count > leaf_cap) return false;
      const size_t before = payloads->size();
      uint32_t i = first_key_at_least(count, key, [&](uint32_t j) { return n.leaf_key(j); });
      for (; i < count && n.leaf_key(i) == key; ++i) {
        if (!n.deleted(i, leaf_cap)) payloads->push_back(n.leaf_payload(i));
      }
      // The key's pairs may go on in the next leaf when this one's high key
      // is a pair of the key itself, short of (key, kMaxPayload)
      // (Node::pairs_may_follow): the general path's double collect reads them.
      const bool may_continue =
          i == count && (flags & Node::kHighInf) == 0 && n.at(2) == key && n.at(3) != kMaxPayload;
      if (may_continue || !n.still(v)) {
        payloads->resize(before);
        return false;
      }
      stats_.moved_right += moved_right;
      ++stats_.in_place_lookups;
      return true;
    }
    if (count == 0 || count > inner_cap) return false;
    const uint32_t i = first_key_at_least(count, key, [&](uint32_t j) { return n.inner_key(j); });
    const RemotePtr child = n.inner_child(i < count ? i : count - 1);
    if (!n.still(v)) return false;
    const uint64_t* w = in_place(child);
    if (w == nullptr) return false;
    n = PageWords(w, page);
    n.prefetch();
    v = n.version();
    expected_level = static_cast<int>(level) - 1;
  }
  return false;
}

}  // namespace locus::nam
