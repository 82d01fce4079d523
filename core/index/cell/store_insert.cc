// Store: Sagiv's insertion within one meganode. The leaf takes the new
// entry if it has room; a full node is split by writing the new right
// sibling first (unreachable until linked), then rewriting the node with
// its lower half, the separator as its max and the sibling as its right
// link, in one versioned write. The separator then goes into the parent as
// a separate step, moving right there if the parent split meanwhile, and
// may split the parent in turn. A full meganode root is split by copying:
// its two halves go to two new nodes and the root, which never moves,
// becomes their parent one level up.
#include <cstring>

#include "core/common/check.h"
#include "core/index/cell/store.h"

namespace locus::cell {

uint64_t Store::descend_local(uint32_t m, std::string_view key, uint32_t level) const {
  uint64_t off = root_of(m);
  while (true) {
    NodeView v = view(off);
    while (v.at_or_above_max(key)) {
      LOCUS_CHECK(local_node(v.right()) && g_.meganode_of(ptr_offset(v.right())) == m);
      off = ptr_offset(v.right());
      v = view(off);
    }
    if (v.local_level() == level) return off;
    LOCUS_CHECK(v.local_level() > level && v.count() > 0);
    off = ptr_offset(v.child(v.child_index(key)));
  }
}

uint64_t Store::find_parent(uint32_t m, uint32_t level, std::string_view key) const {
  // The descent that reached the child did not start at the root (a client
  // located the leaf itself), so there is no remembered path: descend again.
  return descend_local(m, key, level);
}

void Store::insert_entry(uint32_t m, uint64_t off, std::string_view key, const std::byte* value,
                         Cursor& c) {
  std::string_view k = key;
  const std::byte* val = value;
  uint64_t child_value = 0;
  int sep_index = 0;
  while (true) {
    NodeView v = view(off);
    // Sagiv's move-right: the node may have split since it was found.
    while (v.at_or_above_max(k)) {
      LOCUS_CHECK(local_node(v.right()) && g_.meganode_of(ptr_offset(v.right())) == m);
      off = ptr_offset(v.right());
      v = view(off);
    }
    const uint32_t pos = v.extent_entries() ? v.lower_bound(k) : v.child_index(k) + 1;
    if (v.count() < v.capacity()) {
      NodeWriter w = writer(off);
      w.begin();
      w.open_gap(pos);
      w.set_entry(pos, k, val);
      w.set_count(v.count() + 1);
      w.end();
      return;
    }
    std::string* separator = &separators_[sep_index];
    sep_index ^= 1;
    uint64_t right_off = 0;
    const uint32_t level = v.local_level();
    if (split_node(m, off, pos, k, val, separator, &right_off)) return;  // the root: done
    // Propagate (separator -> new sibling) one level up.
    off = c.depth > 0 ? c.path[--c.depth] : find_parent(m, level + 1, *separator);
    k = *separator;
    child_value = ptr(right_off);
    val = reinterpret_cast<const std::byte*>(&child_value);
  }
}

bool Store::split_node(uint32_t m, uint64_t off, uint32_t pos, std::string_view key,
                       const std::byte* value, std::string* separator, uint64_t* right_off) {
  const NodeView v = view(off);
  const bool extents = v.extent_entries();
  const uint32_t stride = g_.stride(extents);
  const uint32_t value_bytes = Geometry::value_bytes(extents);
  const uint32_t n = v.count();
  // The node's entries with the new one in place, in the scratch buffer.
  std::byte* s = split_scratch_.data();
  std::memcpy(s, v.entry(0), uint64_t{pos} * stride);
  std::byte* fresh = s + uint64_t{pos} * stride;
  std::memset(fresh, 0, stride);
  std::memcpy(fresh, value, value_bytes);
  const uint16_t klen = static_cast<uint16_t>(key.size());
  std::memcpy(fresh + value_bytes, &klen, 2);
  std::memcpy(fresh + value_bytes + 2, key.data(), klen);
  std::memcpy(s + uint64_t{pos + 1} * stride, v.entry(pos), uint64_t{n - pos} * stride);
  const uint32_t total = n + 1;
  const uint32_t left_count = total / 2;
  auto scratch_key = [&](uint32_t i) {
    const std::byte* e = s + uint64_t{i} * stride + value_bytes;
    uint16_t len;
    std::memcpy(&len, e, 2);
    return std::string_view(reinterpret_cast<const char*>(e + 2), len);
  };
  separator->assign(scratch_key(left_count));
  const Bound sep{*separator, false};
  const Bound old_min = v.min();
  const Bound old_max = v.max();
  const uint32_t local_level = v.local_level();
  const uint32_t meganode_level = v.meganode_level();
  const uint64_t old_right = v.right();
  ++stats_.node_splits;

  auto fill = [&](uint64_t target, Bound min, Bound max, uint64_t right, uint32_t first, uint32_t count) {
    NodeWriter w = writer(target);
    w.begin();
    w.init(local_level, meganode_level, min, max, right);
    std::memcpy(w.entry(0), s + uint64_t{first} * stride, uint64_t{count} * stride);
    w.set_count(count);
    w.end();
  };
  const uint64_t right = alloc_node(m);
  *right_off = right;
  const bool is_root = g_.node_index(off) == 0;
  if (!is_root) {
    fill(right, sep, old_max, old_right, left_count, total - left_count);
    fill(off, old_min, sep, ptr(right), 0, left_count);
    return false;
  }
  // Root split by copying: both halves move down, the root stays put.
  const uint64_t left = alloc_node(m);
  fill(right, sep, old_max, old_right, left_count, total - left_count);
  fill(left, old_min, sep, ptr(right), 0, left_count);
  // The root keeps its bounds (init() copies them onto themselves).
  NodeWriter w = writer(off);
  w.begin();
  w.init(local_level + 1, meganode_level, old_min, old_max, old_right);
  const uint64_t left_ptr = ptr(left), right_ptr = ptr(right);
  w.set_entry(0, old_min.inf ? std::string_view() : old_min.key,
              reinterpret_cast<const std::byte*>(&left_ptr));
  w.set_entry(1, *separator, reinterpret_cast<const std::byte*>(&right_ptr));
  w.set_count(2);
  w.end();
  ++stats_.root_splits;
  return true;
}

}  // namespace locus::cell
