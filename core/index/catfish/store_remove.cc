// R-tree deletion: find the leaf holding the entry, remove it, condense
// the tree (dissolve nodes under the minimum fill and reinsert their
// entries at their level) and shrink a root left with one child.
#include "core/index/catfish/store.h"

namespace locus::catfish {

bool Store::find_leaf(uint64_t off, const Rect& r, uint64_t id, Path* path, uint32_t* slot) const {
  const NodeView v(region_.data() + off, g_.lines_per_field());
  const uint32_t count = v.count();
  if (v.level() == 0) {
    for (uint32_t i = 0; i < count; ++i) {
      if (v.ptr(i) == id && v.rect(i) == r) {
        *slot = i;
        return true;
      }
    }
    return false;
  }
  const uint32_t d = path->depth;
  for (uint32_t i = 0; i < count; ++i) {
    if (!v.rect(i).contains(r)) continue;
    path->depth = d + 1;
    path->off[d + 1] = v.ptr(i);
    path->idx[d + 1] = i;
    if (find_leaf(v.ptr(i), r, id, path, slot)) return true;
  }
  path->depth = d;
  return false;
}

Status Store::remove(const Rect& rect, uint64_t id) {
  Path path;
  path.depth = 0;
  path.off[0] = header_.root;
  uint32_t slot = 0;
  if (!find_leaf(header_.root, rect, id, &path, &slot)) return not_found("catfish remove: no such rectangle and id");
  LOCUS_RETURN_IF_ERROR(ensure_room());  // the reinsertion of orphans may split
  NodeData leaf;
  load(path.off[path.depth], &leaf);
  leaf.entries[slot] = leaf.entries[--leaf.count];
  const Status st = condense(path, leaf);
  if (st.is_ok()) --stats_.rectangles;
  finish_op();
  return st;
}

Status Store::condense(Path& path, NodeData& node) {
  orphans_.clear();
  NodeData parent;
  for (uint32_t d = path.depth; d > 0; --d) {
    load(path.off[d - 1], &parent);
    const uint32_t at = path.idx[d];
    if (node.count < min_fill_) {
      begin_moves();
      for (uint32_t i = 0; i < node.count; ++i) orphans_.push_back({node.entries[i], node.level});
      free_slot(path.off[d]);
      parent.entries[at] = parent.entries[--parent.count];
    } else {
      store(path.off[d], node);
      parent.entries[at].rect = node.mbr();
    }
    node = parent;
  }
  store(path.off[0], node);
  // Reinserted at their own level; the root is still above every orphan's
  // level because it only shrinks below.
  for (const Orphan& o : orphans_) LOCUS_RETURN_IF_ERROR(insert_entry(o.entry, o.level));
  NodeData root;
  while (header_.root_level > 0) {
    load(header_.root, &root);
    if (root.count != 1) break;
    begin_moves();
    const uint64_t old = header_.root;
    header_.root = root.entries[0].ptr;
    --header_.root_level;
    write_header();
    free_slot(old);
  }
  return Status();
}

}  // namespace locus::catfish
