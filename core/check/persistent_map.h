// An ordered map whose versions share structure, for checker states that
// are large and change by one entry a step (RectSetModel's rectangles).
//
// The linearizability search keeps every state it reaches, in its cache
// and on its stack. A state kept as a sorted vector costs a copy of the
// whole map per step: a Catfish history of 7,400 inserts over 500 loaded
// rectangles held ~2.3 GB of states and spent most of its time copying
// and faulting in pages (2026-11-29, `perf`). Here set() and erase() copy
// only the path to the entry, O(log n) nodes, and leave the map they were
// called on unchanged.
//
// The tree is a treap whose priorities are a hash of the key (ties broken
// by the key): a set of keys has one shape whatever order it was built
// in, so two maps are equal exactly when their trees are, and a subtree
// both share compares equal without being walked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace locus::check {

template <class K, class V>
class PersistentMap {
 public:
  size_t size() const { return size_; }

  // The value under `key`, or null.
  const V* find(const K& key) const {
    for (const Node* n = root_.get(); n != nullptr;) {
      if (key < n->key)
        n = n->left.get();
      else if (n->key < key)
        n = n->right.get();
      else
        return &n->value;
    }
    return nullptr;
  }

  // This map with `key` mapped to `value` (added or replaced).
  PersistentMap set(const K& key, const V& value) const {
    PersistentMap out;
    bool added = false;
    out.root_ = insert(root_, key, value, priority(key), added);
    out.size_ = size_ + (added ? 1 : 0);
    return out;
  }

  // This map without `key` (the same map when it is absent).
  PersistentMap erase(const K& key) const {
    if (find(key) == nullptr) return *this;
    PersistentMap out;
    out.root_ = remove(root_, key);
    out.size_ = size_ - 1;
    return out;
  }

  // Calls f(key, value) for every entry, in key order.
  template <class F>
  void for_each(F&& f) const {
    walk(root_.get(), f);
  }

  bool operator==(const PersistentMap& o) const { return size_ == o.size_ && same(root_.get(), o.root_.get()); }

 private:
  struct Node;
  using Ptr = std::shared_ptr<const Node>;
  struct Node {
    K key;
    V value;
    uint64_t priority;
    Ptr left, right;
  };

  static uint64_t priority(const K& key) {
    uint64_t x = std::hash<K>{}(key) + 0x9E3779B97F4A7C15ULL;  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }
  // Whether a node of (pa, a) sits above one of (pb, b).
  static bool above(uint64_t pa, const K& a, uint64_t pb, const K& b) { return pa > pb || (pa == pb && a < b); }
  static Ptr make(const K& key, const V& value, uint64_t p, Ptr left, Ptr right) {
    return std::make_shared<const Node>(Node{key, value, p, std::move(left), std::move(right)});
  }

  // The keys of t below `key` and those above it (`key` itself is absent).
  static std::pair<Ptr, Ptr> split(const Ptr& t, const K& key) {
    if (!t) return {};
    if (t->key < key) {
      auto [l, r] = split(t->right, key);
      return {make(t->key, t->value, t->priority, t->left, std::move(l)), std::move(r)};
    }
    auto [l, r] = split(t->left, key);
    return {std::move(l), make(t->key, t->value, t->priority, std::move(r), t->right)};
  }
  // Every key of a is below every key of b.
  static Ptr merge(const Ptr& a, const Ptr& b) {
    if (!a) return b;
    if (!b) return a;
    if (above(a->priority, a->key, b->priority, b->key))
      return make(a->key, a->value, a->priority, a->left, merge(a->right, b));
    return make(b->key, b->value, b->priority, merge(a, b->left), b->right);
  }
  // An existing key's node has every ancestor above it, so the walk meets
  // it before any node the new one would sit above: reaching such a node
  // means the key is new.
  static Ptr insert(const Ptr& t, const K& key, const V& value, uint64_t p, bool& added) {
    if (!t) {
      added = true;
      return make(key, value, p, nullptr, nullptr);
    }
    if (!(key < t->key) && !(t->key < key)) return make(key, value, t->priority, t->left, t->right);
    if (above(p, key, t->priority, t->key)) {
      added = true;
      auto [l, r] = split(t, key);
      return make(key, value, p, std::move(l), std::move(r));
    }
    if (key < t->key) return make(t->key, t->value, t->priority, insert(t->left, key, value, p, added), t->right);
    return make(t->key, t->value, t->priority, t->left, insert(t->right, key, value, p, added));
  }
  static Ptr remove(const Ptr& t, const K& key) {
    if (key < t->key) return make(t->key, t->value, t->priority, remove(t->left, key), t->right);
    if (t->key < key) return make(t->key, t->value, t->priority, t->left, remove(t->right, key));
    return merge(t->left, t->right);
  }
  template <class F>
  static void walk(const Node* n, F& f) {
    if (n == nullptr) return;
    walk(n->left.get(), f);
    f(n->key, n->value);
    walk(n->right.get(), f);
  }
  static bool same(const Node* a, const Node* b) {
    if (a == b) return true;
    if (a == nullptr || b == nullptr) return false;
    return a->key == b->key && a->value == b->value && same(a->left.get(), b->left.get()) &&
           same(a->right.get(), b->right.get());
  }

  Ptr root_;
  size_t size_ = 0;
};

}  // namespace locus::check
