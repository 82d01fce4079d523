// Store: traversal and the per-key operations. A descent follows child
// pointers and right links through the local meganodes until it reaches a
// node of the wanted level covering the key, or a pointer into another
// server's memory (a redirect the client follows). Any node that is
// invalid, or whose range starts after the key, means the start pointer
// was stale: the caller restarts from the root.
//
// The descent is the server's hot path (every search RPC runs it): the key
// is prepared once (SearchKey), a node's image is prefetched as soon as its
// pointer is known so that its cache lines arrive in parallel rather than
// one per binary-search probe, and nothing is copied or allocated.
#include <algorithm>

#include "core/common/check.h"
#include "core/index/cell/store.h"

namespace locus::cell {
namespace {
// Bounds a descent through corrupted or cyclic links; a healthy tree needs
// a few hops per level.
constexpr uint32_t kMaxHops = 1u << 16;
}  // namespace

Outcome Store::descend(std::string_view key, uint64_t start, uint32_t target_level, Cursor* c) const {
  uint64_t p = start;
  if (p == kNullPtr) {
    if (!owns_superblock()) return Outcome::kRestart;
    p = root();
  }
  c->depth = 0;
  c->visited = 0;
  const SearchKey sk(key);
  const uint64_t region_bytes = g_.region_bytes();
  // A prefetch never faults; the bound only keeps the address arithmetic
  // inside the buffer. The pointer is checked properly when it is visited.
  auto prefetch = [&](uint64_t next) {
    if (ptr_region(next) == node_region_ && ptr_offset(next) + g_.node_bytes <= region_bytes) {
      view(ptr_offset(next)).prefetch();
    }
  };
  uint32_t current = UINT32_MAX;
  for (uint32_t hops = 0; hops < kMaxHops; ++hops) {
    if (p == kNullPtr) return Outcome::kRestart;
    if (ptr_region(p) != node_region_) {
      c->next = p;
      return Outcome::kRedirect;
    }
    const uint64_t off = ptr_offset(p);
    if (!g_.is_node_offset(off)) return Outcome::kRestart;
    const uint32_t m = g_.meganode_of(off);
    if (m != current) {
      c->depth = 0;  // the path is kept within one meganode only
      current = m;
    }
    const NodeView v = view(off);
    ++c->visited;
    if (!v.valid()) return Outcome::kRestart;
    const int position = v.position(sk);
    if (position < 0) return Outcome::kRestart;
    if (position > 0) {
      p = v.right();
      prefetch(p);
      continue;
    }
    if (v.meganode_level() < target_level) return Outcome::kRestart;
    if (v.local_level() == 0 && v.meganode_level() == target_level) {
      c->leaf = off;
      c->meganode = m;
      return Outcome::kDone;
    }
    if (v.count() == 0) return Outcome::kRestart;
    if (v.local_level() > 0 && c->depth < kMaxLevels) c->path[c->depth++] = off;
    p = v.child(v.child_index(sk));
    prefetch(p);
  }
  return Outcome::kRestart;
}

MeganodeInfo Store::meganode_info(uint32_t m) const {
  const NodeView r = view(root_of(m));
  MeganodeInfo info;
  info.root = ptr(root_of(m));
  info.level = static_cast<uint8_t>(r.meganode_level());
  info.height = static_cast<uint8_t>(r.local_level() + 1);
  info.min = r.min();
  info.max = r.max();
  return info;
}

bool Store::reach_leaf(std::string_view key, uint64_t start, OpResult* r, Cursor* c) const {
  r->outcome = descend(key, start, 0, c);
  r->nodes_visited = c->visited;
  if (r->outcome == Outcome::kRedirect) r->next = c->next;
  return r->outcome == Outcome::kDone;
}

OpResult Store::contains(std::string_view key, uint64_t start) {
  OpResult r;
  Cursor c;
  if (!reach_leaf(key, start, &r, &c)) return r;
  r.found = view(c.leaf).find(SearchKey(key)) >= 0;
  r.meganode = meganode_info(c.meganode);
  return r;
}

OpResult Store::get(std::string_view key, uint64_t start) {
  OpResult r;
  Cursor c;
  if (!reach_leaf(key, start, &r, &c)) return r;
  const NodeView v = view(c.leaf);
  const int32_t i = v.find(key);
  if (i >= 0) {
    r.found = true;
    r.value = extent_value(v.extent(static_cast<uint32_t>(i)));
  }
  r.meganode = meganode_info(c.meganode);
  return r;
}

// Decides whether a write may proceed at the leaf the cursor reached: not
// in a range a meganode split has locked, and (when it may split nodes)
// with enough free nodes for a split propagating to the root.
Outcome Store::write_gate(const Cursor& c, std::string_view key, bool may_split) {
  Meganode& mn = meganodes_[c.meganode];
  Outcome o = Outcome::kDone;
  if (mn.splitting && key >= mn.split_key) {
    o = Outcome::kBusy;
  } else if (may_split) {
    const NodeView leaf = view(c.leaf);
    const NodeView root = view(root_of(c.meganode));
    if (leaf.count() >= leaf.capacity()) {
      if (free_nodes(mn) < root.local_level() + 3) {
        maybe_request_split(c.meganode);
        o = Outcome::kBusy;
      } else if (mn.splitting && root.count() >= root.capacity()) {
        // The root must keep X_right's entries until the split finishes.
        o = Outcome::kBusy;
      }
    }
  }
  if (o == Outcome::kBusy) ++stats_.busy_replies;
  return o;
}

StatusOr<OpResult> Store::put(std::string_view key, std::string_view value, uint64_t start) {
  if (key.empty() || key.size() > g_.key_capacity_bytes) {
    return invalid_argument("cell put: key of " + std::to_string(key.size()) + " bytes outside [1, " +
                            std::to_string(g_.key_capacity_bytes) + "]");
  }
  OpResult r;
  Cursor c;
  if (!reach_leaf(key, start, &r, &c)) return r;
  const NodeView leaf = view(c.leaf);
  const int32_t existing = leaf.find(key);
  r.outcome = write_gate(c, key, existing < 0);
  if (r.outcome != Outcome::kDone) return r;
  LOCUS_ASSIGN_OR_RETURN(ExtentRef ref, write_extent(key, value));
  if (existing >= 0) {
    const ExtentRef old = leaf.extent(static_cast<uint32_t>(existing));
    NodeWriter w = writer(c.leaf);
    w.begin();
    w.set_value(static_cast<uint32_t>(existing), reinterpret_cast<const std::byte*>(&ref));
    w.end();
    free_extent(old);
    r.found = true;
  } else {
    insert_entry(c.meganode, c.leaf, key, reinterpret_cast<const std::byte*>(&ref), c);
    ++stats_.keys;
    maybe_request_split(c.meganode);
  }
  r.meganode = meganode_info(c.meganode);
  return r;
}

OpResult Store::remove(std::string_view key, uint64_t start) {
  OpResult r;
  Cursor c;
  if (!reach_leaf(key, start, &r, &c)) return r;
  r.outcome = write_gate(c, key, false);
  if (r.outcome != Outcome::kDone) return r;
  const NodeView leaf = view(c.leaf);
  const int32_t i = leaf.find(key);
  r.meganode = meganode_info(c.meganode);
  if (i < 0) return r;
  const ExtentRef old = leaf.extent(static_cast<uint32_t>(i));
  NodeWriter w = writer(c.leaf);
  w.begin();
  w.close_gap(static_cast<uint32_t>(i));
  w.set_count(leaf.count() - 1);
  w.end();
  free_extent(old);  // after the entry is gone: no new reader can find it
  --stats_.keys;
  r.found = true;
  return r;
}

StatusOr<OpResult> Store::insert_child(std::string_view key, uint64_t child, uint32_t level,
                                       uint64_t start) {
  if (level == 0 || level >= kMaxLevels || key.empty() || key.size() > g_.key_capacity_bytes) {
    return invalid_argument("cell insert_child: bad level or separator");
  }
  OpResult r;
  Cursor c;
  r.outcome = descend(key, start, level, &c);
  r.nodes_visited = c.visited;
  if (r.outcome == Outcome::kRedirect) r.next = c.next;
  if (r.outcome != Outcome::kDone) return r;
  const NodeView leaf = view(c.leaf);
  const int32_t existing = leaf.find(key);
  r.outcome = write_gate(c, key, existing < 0);
  if (r.outcome != Outcome::kDone) return r;
  if (existing >= 0) {
    // A retried parent insert: the separator is already there.
    NodeWriter w = writer(c.leaf);
    w.begin();
    w.set_value(static_cast<uint32_t>(existing), reinterpret_cast<const std::byte*>(&child));
    w.end();
  } else {
    insert_entry(c.meganode, c.leaf, key, reinterpret_cast<const std::byte*>(&child), c);
    maybe_request_split(c.meganode);
  }
  r.found = existing >= 0;
  r.meganode = meganode_info(c.meganode);
  return r;
}

RangeResult Store::range(const RangeQuery& q, uint64_t start, rpc::Writer& out, size_t budget_bytes) {
  RangeResult r;
  r.resume = q.start;
  r.resume_exclusive = q.start_exclusive;
  Cursor c;
  Outcome o = descend(q.start, start, 0, &c);
  r.nodes_visited = c.visited;
  std::string_view from = q.start;
  bool exclusive = q.start_exclusive;
  while (true) {
    if (o != Outcome::kDone) {
      // Continue (or restart) from `from`, which views a node this server
      // may change later: copy it.
      r.outcome = o;
      r.next = c.next;
      resume_.assign(from);
      r.resume = resume_;
      r.resume_exclusive = exclusive;
      return r;
    }
    const NodeView v = view(c.leaf);
    const uint32_t first = v.lower_bound(from, exclusive);
    for (uint32_t i = first; i < v.count(); ++i) {
      const std::string_view k = v.key(i);
      if ((q.has_end && k >= q.end) || r.returned >= q.limit) {
        r.outcome = Outcome::kDone;
        return r;
      }
      const std::string_view value = extent_value(v.extent(i));
      if (out.size() + 8 + k.size() + value.size() > budget_bytes) {
        // The message is full: continue at this leaf after the last key sent.
        r.outcome = Outcome::kRedirect;
        r.next = ptr(c.leaf);
        resume_.assign(i > first ? v.key(i - 1) : from);
        r.resume = resume_;
        r.resume_exclusive = i > first ? true : exclusive;
        return r;
      }
      out.blob(k);
      out.blob(value);
      ++r.returned;
    }
    if (v.max_is_inf() || (q.has_end && v.max_key() >= q.end) || r.returned >= q.limit) {
      r.outcome = Outcome::kDone;
      return r;
    }
    // On to the next leaf: same meganode, the next local meganode (by its
    // root), or another server (a redirect with the resume key).
    from = v.max_key();
    exclusive = false;
    o = descend(from, v.right(), 0, &c);
    r.nodes_visited += c.visited;
  }
}

}  // namespace locus::cell
