// LruList: the recency order of a fixed set of slots 0 .. capacity-1, a
// doubly linked list over slot numbers, sized once: what a fixed-capacity
// cache keeps to find its least recently used slot without allocating on
// the data path (Cell's path cache, Nessie's DTE cache).
#pragma once

#include <cstdint>
#include <vector>

namespace locus {

class LruList {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit LruList(uint32_t capacity = 0) : links_(capacity) {}

  // Makes `s` (not in the list) the most recently used.
  void push_front(uint32_t s) {
    Link& l = links_[s];
    l.prev = kNone;
    l.next = head_;
    if (head_ != kNone) links_[head_].prev = s;
    head_ = s;
    if (tail_ == kNone) tail_ = s;
  }
  // Takes `s` (in the list) out.
  void remove(uint32_t s) {
    Link& l = links_[s];
    if (l.prev != kNone)
      links_[l.prev].next = l.next;
    else
      head_ = l.next;
    if (l.next != kNone)
      links_[l.next].prev = l.prev;
    else
      tail_ = l.prev;
    l.prev = l.next = kNone;
  }
  // Makes `s` (in the list) the most recently used.
  void touch(uint32_t s) {
    remove(s);
    push_front(s);
  }
  // The least recently used slot, or kNone.
  uint32_t back() const { return tail_; }

 private:
  struct Link {
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };
  std::vector<Link> links_;
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
};

}  // namespace locus
