// Store: the steps of a meganode split (paper section 2.2). On the source
// server: split_begin picks the split key s (a separator of the meganode
// root, hence a node boundary on every local level) and locks X_right =
// [s, max) against writes; split_scan streams X_right's entries;
// split_finish points the right links of X_left's right edge (one node per
// level, the one whose max is s) and then the root's at the new meganode's
// root, truncating the root at s, and only then invalidates X_right's nodes
// and frees them and their extents. Until the relink X_right is still
// whole and valid, and after it every search for a key >= s that reaches
// X_left is sent right into the copy; a client holding a pointer into a
// freed (maybe already reused) node sees the valid flag or the min/max
// keys disagree and restarts.
// On the target server, meganode_create/append/seal build the copy bottom
// up in key order (a right spine per level, nodes filled to
// bulk_fill_fraction), unreachable until split_finish links it;
// meganode_live then ends the building split's hold on it (until then it
// may be abandoned, and it may not split).
// Every step names its split and answers a re-sent request as it answered
// the first (protocol.h): the driver sends again what got no reply.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/common/check.h"
#include "core/index/cell/store.h"

namespace locus::cell {

SplitPlan Store::plan_of(uint32_t m) const {
  // While X splits, writes into X_left may split its root locally, but
  // neither its bounds nor its right link change: the plan is the same.
  const NodeView root = view(root_of(m));
  SplitPlan plan;
  plan.meganode = m;
  plan.root = ptr(root_of(m));
  plan.level = static_cast<uint8_t>(root.meganode_level());
  plan.split_key.assign(meganodes_[m].split_key);
  plan.min_inf = root.min_is_inf();
  plan.min_key.assign(root.min_key());
  plan.max_inf = root.max_is_inf();
  plan.max_key.assign(root.max_key());
  plan.right = root.right();
  return plan;
}

StatusOr<SplitPlan> Store::split_begin(uint32_t meganode, uint64_t split_id) {
  if (meganode >= meganodes_.size() || !meganodes_[meganode].in_use || meganodes_[meganode].building ||
      split_id == 0) {
    return invalid_argument("cell split_begin: no meganode " + std::to_string(meganode) + " or no split id");
  }
  Meganode& mn = meganodes_[meganode];
  mn.split_requested = false;
  if (mn.splitting) {
    if (mn.split_id == split_id) return plan_of(meganode);  // re-sent
    return Status(StatusCode::kAborted, "cell split_begin: already splitting");
  }
  if (split_id <= mn.split_id) return Status(StatusCode::kAborted, "cell split_begin: a late copy of an old split");
  if (mn.built_by != 0) return Status(StatusCode::kAborted, "cell split_begin: not yet declared live");
  const NodeView root = view(root_of(meganode));
  if (root.local_level() == 0 || root.count() < 2) {
    return Status(StatusCode::kAborted, "cell split_begin: meganode too small to split");
  }
  mn.splitting = true;
  mn.split_id = split_id;
  mn.split_key.assign(root.key(root.count() / 2));
  return plan_of(meganode);
}

Status Store::split_scan(uint32_t meganode, std::string_view cursor, bool exclusive, rpc::Writer& out,
                         size_t budget_bytes, bool* done, std::string_view* last_key) {
  if (meganode >= meganodes_.size() || !meganodes_[meganode].splitting) {
    return invalid_argument("cell split_scan: meganode " + std::to_string(meganode) + " is not splitting");
  }
  const Meganode& mn = meganodes_[meganode];
  std::string_view from = cursor;
  if (from < mn.split_key) {
    from = mn.split_key;
    exclusive = false;
  }
  // Only a peer in error sends a cursor at or past the meganode's upper
  // bound (the last key it was given lies below it): descend_local would
  // leave the meganode.
  if (view(root_of(meganode)).at_or_above_max(from)) {
    return invalid_argument("cell split_scan: cursor at or past the upper bound of meganode " +
                            std::to_string(meganode));
  }
  *done = false;
  uint64_t off = descend_local(meganode, from, 0);
  bool whole_node = false;
  while (true) {
    const NodeView v = view(off);
    const bool extents = v.extent_entries();
    for (uint32_t i = whole_node ? 0 : v.lower_bound(from, exclusive); i < v.count(); ++i) {
      const std::string_view k = v.key(i);
      const std::string_view value = extents ? extent_value(v.extent(i)) : std::string_view();
      const size_t need = 4 + k.size() + (extents ? 4 + value.size() : 8);
      if (out.size() + need > budget_bytes) {
        if (out.size() == 0) return internal_error("cell split_scan: budget below one entry");
        return Status();
      }
      out.blob(k);
      if (extents) {
        out.blob(value);
      } else {
        out.put<uint64_t>(v.child(i));
      }
      *last_key = k;
    }
    const uint64_t r = v.right();
    if (!local_node(r) || g_.meganode_of(ptr_offset(r)) != meganode || g_.node_index(ptr_offset(r)) == 0) {
      *done = true;
      return Status();
    }
    off = ptr_offset(r);
    whole_node = true;
  }
}

Status Store::split_finish(uint32_t meganode, uint64_t new_root, uint64_t split_id) {
  if (meganode >= meganodes_.size() || new_root == kNullPtr) {
    return invalid_argument("cell split_finish: no meganode " + std::to_string(meganode));
  }
  Meganode& mn = meganodes_[meganode];
  if (!mn.splitting || mn.split_id != split_id) {
    if (split_id != 0 && mn.finished_split == split_id && mn.finished_root == new_root) return Status();  // re-sent
    return invalid_argument("cell split_finish: meganode " + std::to_string(meganode) +
                            " is not splitting under split " + std::to_string(split_id));
  }
  const std::string_view s = mn.split_key;
  const uint64_t root_off = root_of(meganode);
  const NodeView root = view(root_off);
  const uint32_t i = root.child_index(s);
  if (i == 0 || root.key(i) != s || root.local_level() == 0) {
    return internal_error("cell split_finish: the split key left the root");
  }
  const uint32_t h = root.local_level();
  auto in_meganode = [&](uint64_t p) {
    return local_node(p) && g_.meganode_of(ptr_offset(p)) == meganode && g_.node_index(ptr_offset(p)) != 0;
  };
  // X_left's right edge: on each level the node whose max is s; X_right
  // starts at its right sibling.
  uint64_t boundary[kMaxLevels], first_right[kMaxLevels];
  uint64_t b = ptr_offset(root.child(i - 1));
  for (int j = static_cast<int>(h) - 1; j >= 0; --j) {
    if (j < static_cast<int>(h) - 1) {
      const NodeView up = view(boundary[j + 1]);
      b = ptr_offset(up.child(up.count() - 1));
    }
    for (uint32_t hops = 0; view(b).max_is_inf() || view(b).max_key() != s; ++hops) {
      LOCUS_CHECK(hops < g_.meganode_nodes && in_meganode(view(b).right()));
      b = ptr_offset(view(b).right());
    }
    boundary[j] = b;
    first_right[j] = view(b).right();
    LOCUS_CHECK(in_meganode(first_right[j]));
  }
  // Relink, leaves first, then the root (truncated at s) last.
  for (uint32_t j = 0; j < h; ++j) {
    NodeWriter w = writer(boundary[j]);
    w.begin();
    w.set_right(new_root);
    w.end();
  }
  {
    NodeWriter w = writer(root_off);
    w.begin();
    w.set_count(i);
    w.set_max(Bound{s, false});
    w.set_right(new_root);
    w.end();
  }
  // Only now may X_right's nodes go: invalid first, then free for reuse.
  for (uint32_t j = 0; j < h; ++j) {
    uint64_t off = ptr_offset(first_right[j]);
    while (true) {
      const NodeView v = view(off);
      const uint64_t next = v.right();
      if (v.extent_entries()) {
        for (uint32_t e = 0; e < v.count(); ++e) free_extent(v.extent(e));
        stats_.keys -= v.count();
      }
      NodeWriter w = writer(off);
      w.begin();
      w.set_valid(false);
      w.end();
      free_node(meganode, off);
      if (!in_meganode(next)) break;
      off = ptr_offset(next);
    }
  }
  // A root left with one child (it had two or three) is a level that only
  // costs hops and would stop the next split: lift the child into it.
  while (view(root_off).local_level() > 0 && view(root_off).count() == 1) {
    const uint64_t child = ptr_offset(view(root_off).child(0));
    NodeWriter w = writer(root_off);
    w.begin();
    std::memcpy(at(root_off) + 8, at(child) + 8, g_.node_bytes - 16);
    w.end();
    NodeWriter c = writer(child);
    c.begin();
    c.set_valid(false);
    c.end();
    free_node(meganode, child);
  }
  mn.splitting = false;
  mn.split_key.clear();
  mn.finished_split = split_id;
  mn.finished_root = new_root;
  ++stats_.meganode_splits;
  return Status();
}

Status Store::split_abort(uint32_t meganode, uint64_t split_id) {
  if (meganode >= meganodes_.size() || split_id == 0 || meganodes_[meganode].split_id != split_id) {
    return invalid_argument("cell split_abort: split " + std::to_string(split_id) + " is not the latest of meganode " +
                            std::to_string(meganode));
  }
  Meganode& mn = meganodes_[meganode];
  if (mn.finished_split == split_id) {
    return Status(StatusCode::kAlreadyExists, "cell split_abort: split " + std::to_string(split_id) + " finished");
  }
  // Still under way, or aborted already (a re-sent abort): either way not linked.
  mn.splitting = false;
  mn.split_key.clear();
  return Status();
}

int64_t Store::built_meganode(uint64_t root, uint64_t split_id) const {
  if (!local_node(root) || g_.node_index(ptr_offset(root)) != 0) return -1;
  const uint32_t m = g_.meganode_of(ptr_offset(root));
  const Meganode& mn = meganodes_[m];
  return mn.in_use && split_id != 0 && mn.built_by == split_id ? static_cast<int64_t>(m) : -1;
}

StatusOr<uint64_t> Store::meganode_create(uint64_t split_id, uint32_t level, Bound min, Bound max, uint64_t right) {
  if (split_id == 0 || level >= kMaxLevels || min.key.size() > g_.key_capacity_bytes ||
      max.key.size() > g_.key_capacity_bytes) {
    return invalid_argument("cell meganode_create: bad split id, level or bounds");
  }
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    if (meganodes_[m].in_use && meganodes_[m].built_by == split_id) return ptr(root_of(m));  // re-sent
  }
  const int64_t m = alloc_meganode();
  if (m < 0) return resource_exhausted("cell: no free meganode on region " + std::to_string(node_region_));
  Meganode& mn = meganodes_[static_cast<size_t>(m)];
  mn.building = true;
  mn.built_by = split_id;
  mn.build = std::make_unique<BuildState>();
  BuildState& b = *mn.build;
  b.meganode_level = level;
  b.min_inf = min.inf;
  b.min_key.assign(min.inf ? std::string_view() : min.key);
  b.max_inf = max.inf;
  b.max_key.assign(max.inf ? std::string_view() : max.key);
  b.right = right;
  b.last_key.reserve(g_.key_capacity_bytes);
  // The root slot stays invalid until sealed (nothing links to it before).
  NodeWriter w = writer(root_of(static_cast<uint32_t>(m)));
  w.begin();
  w.init(0, level, b.min(), b.max(), right);
  w.set_valid(false);
  w.end();
  return ptr(root_of(static_cast<uint32_t>(m)));
}

void Store::build_append(uint32_t m, uint32_t level, std::string_view key, const std::byte* value) {
  BuildState& b = *meganodes_[m].build;
  auto fill_limit = [&](uint32_t lvl) {
    const uint32_t cap = g_.capacity(lvl == 0 && b.meganode_level == 0);
    const uint32_t floor = lvl == 0 && b.meganode_level == 0 ? 1 : 2;
    return std::max(floor, std::min(cap, static_cast<uint32_t>(cap * options_.bulk_fill_fraction)));
  };
  if (level == b.levels) {
    const uint64_t off = alloc_node(m);
    NodeWriter w = writer(off);
    w.begin();
    w.init(level, b.meganode_level, b.min(), b.max(), b.right);
    w.end();
    b.rightmost[level] = off;
    ++b.levels;
  }
  uint64_t off = b.rightmost[level];
  if (view(off).count() >= fill_limit(level)) {
    const uint64_t sibling = alloc_node(m);
    {
      NodeWriter w = writer(sibling);
      w.begin();
      w.init(level, b.meganode_level, Bound{key, false}, b.max(), b.right);
      w.end();
    }
    {
      NodeWriter w = writer(off);
      w.begin();
      w.set_max(Bound{key, false});
      w.set_right(ptr(sibling));
      w.end();
    }
    b.rightmost[level] = sibling;
    if (level + 1 == b.levels) {
      // The level's first node gets a parent (entry 0 covers from the min).
      const uint64_t parent = alloc_node(m);
      NodeWriter w = writer(parent);
      w.begin();
      w.init(level + 1, b.meganode_level, b.min(), b.max(), b.right);
      const uint64_t first = ptr(off);
      w.set_entry(0, b.min_key, reinterpret_cast<const std::byte*>(&first));
      w.set_count(1);
      w.end();
      b.rightmost[level + 1] = parent;
      ++b.levels;
    }
    const uint64_t sibling_ptr = ptr(sibling);
    build_append(m, level + 1, key, reinterpret_cast<const std::byte*>(&sibling_ptr));
    off = sibling;
  }
  NodeWriter w = writer(off);
  const uint32_t n = view(off).count();
  w.begin();
  w.set_entry(n, key, value);
  w.set_count(n + 1);
  w.end();
}

Status Store::meganode_append(uint64_t root, uint64_t split_id, uint32_t chunk, rpc::Reader& entries) {
  const int64_t found = built_meganode(root, split_id);
  if (found < 0 || !meganodes_[static_cast<uint32_t>(found)].building) {
    return invalid_argument("cell meganode_append: no meganode under construction by split " +
                            std::to_string(split_id) + " there");
  }
  const uint32_t m = static_cast<uint32_t>(found);
  Meganode& mn = meganodes_[m];
  BuildState& b = *mn.build;
  if (b.chunks > 0 && chunk == b.chunks - 1) return Status();  // re-sent
  if (chunk != b.chunks) {
    return invalid_argument("cell meganode_append: chunk " + std::to_string(chunk) + " out of order");
  }
  while (!entries.at_end()) {
    std::string_view key, value;
    uint64_t child = kNullPtr;
    const bool extents = b.meganode_level == 0;
    if (!entries.blob(&key) || (extents ? !entries.blob(&value) : !entries.get(&child))) {
      return invalid_argument("cell meganode_append: malformed entries");
    }
    // Keys strictly ascending; only an internal meganode's first entry (the
    // one covering from its min) may be empty.
    if (key.size() > g_.key_capacity_bytes || (b.any && key <= b.last_key) ||
        (key.empty() && (b.any || extents))) {
      return invalid_argument("cell meganode_append: keys out of order or too long");
    }
    if (free_nodes(mn) < b.levels + 2) return resource_exhausted("cell meganode_append: meganode full");
    if (extents) {
      LOCUS_ASSIGN_OR_RETURN(ExtentRef ref, write_extent(key, value));
      build_append(m, 0, key, reinterpret_cast<const std::byte*>(&ref));
      ++stats_.keys;
    } else {
      build_append(m, 0, key, reinterpret_cast<const std::byte*>(&child));
    }
    b.last_key.assign(key);
    b.any = true;
  }
  ++b.chunks;
  return Status();
}

Status Store::meganode_seal(uint64_t root, uint64_t split_id) {
  const int64_t found = built_meganode(root, split_id);
  if (found < 0) {
    return invalid_argument("cell meganode_seal: no meganode built by split " + std::to_string(split_id) + " there");
  }
  const uint32_t m = static_cast<uint32_t>(found);
  Meganode& mn = meganodes_[m];
  if (!mn.building) return Status();  // re-sent
  BuildState& b = *mn.build;
  NodeWriter w = writer(ptr_offset(root));
  if (b.levels == 0) {
    w.begin();
    w.init(0, b.meganode_level, b.min(), b.max(), b.right);
    w.end();
  } else {
    // The single node of the top level becomes the root (nothing links to
    // it: it has no parent and no left sibling).
    const uint64_t top = b.rightmost[b.levels - 1];
    w.begin();
    std::memcpy(at(ptr_offset(root)) + 8, at(top) + 8, g_.node_bytes - 16);
    w.end();
    free_node(m, top);
  }
  mn.building = false;
  mn.build.reset();
  ++stats_.meganodes_built;
  maybe_request_split(m);
  return Status();
}

Status Store::meganode_live(uint64_t root, uint64_t split_id) {
  const int64_t found = built_meganode(root, split_id);
  if (found >= 0 && !meganodes_[static_cast<uint32_t>(found)].building) {
    meganodes_[static_cast<uint32_t>(found)].built_by = 0;
    maybe_request_split(static_cast<uint32_t>(found));  // held back until now
    return Status();
  }
  if (local_node(root) && g_.node_index(ptr_offset(root)) == 0) {
    const Meganode& mn = meganodes_[g_.meganode_of(ptr_offset(root))];
    if (mn.in_use && !mn.building && mn.built_by == 0) return Status();  // re-sent
  }
  return invalid_argument("cell meganode_live: no sealed meganode of split " + std::to_string(split_id) + " there");
}

Status Store::meganode_abandon(uint64_t root, uint64_t split_id) {
  // Only until its split links it (it cannot split before): freeing a
  // meganode of the tree would lose its keys.
  const int64_t found = built_meganode(root, split_id);
  if (found < 0) {
    return invalid_argument("cell meganode_abandon: refused, no meganode that split " + std::to_string(split_id) +
                            " is still building there (a live meganode is never abandoned)");
  }
  const uint32_t m = static_cast<uint32_t>(found);
  Meganode& mn = meganodes_[m];
  // Never linked, so no reader can be inside: free its extents and the slot.
  // Its leftmost leaf: down the first children from the top.
  uint64_t leaf = 0;
  if (mn.building) {
    const BuildState& b = *mn.build;
    if (b.levels > 0) {
      leaf = b.rightmost[b.levels - 1];  // the top level's only node
      for (uint32_t l = b.levels - 1; l > 0; --l) leaf = ptr_offset(view(leaf).child(0));
    }
  } else {
    leaf = ptr_offset(root);
    while (view(leaf).local_level() > 0) leaf = ptr_offset(view(leaf).child(0));
  }
  while (leaf != 0) {
    const NodeView v = view(leaf);
    if (v.extent_entries()) {
      for (uint32_t e = 0; e < v.count(); ++e) free_extent(v.extent(e));
      stats_.keys -= v.count();
    }
    const uint64_t r = v.right();
    leaf = local_node(r) && g_.meganode_of(ptr_offset(r)) == m && g_.node_index(ptr_offset(r)) != 0
               ? ptr_offset(r)
               : 0;
  }
  NodeWriter w = writer(ptr_offset(root));
  w.begin();
  w.set_valid(false);
  w.end();
  mn.in_use = mn.building = mn.splitting = false;
  mn.built_by = 0;
  mn.build.reset();
  return Status();
}

}  // namespace locus::cell

namespace locus::cell {

std::vector<Store::PendingSplit> Store::pending_splits() const {
  std::vector<PendingSplit> out;
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    if (meganodes_[m].in_use && meganodes_[m].splitting) out.push_back({m, meganodes_[m].split_id});
  }
  return out;
}

std::vector<Store::PendingBuild> Store::pending_builds() const {
  std::vector<PendingBuild> out;
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    if (meganodes_[m].in_use && meganodes_[m].built_by != 0) out.push_back({ptr(root_of(m)), meganodes_[m].built_by});
  }
  return out;
}

bool Store::split_finished(uint64_t split_id, uint64_t root) const {
  for (const Meganode& mn : meganodes_) {
    if (mn.in_use && split_id != 0 && mn.finished_split == split_id && mn.finished_root == root) return true;
  }
  return false;
}

uint64_t Store::last_split_id() const {
  uint64_t last = 0;
  for (const Meganode& mn : meganodes_) last = std::max(last, mn.split_id);
  return last;
}

}  // namespace locus::cell
