// R* insertion: choose-subtree, overflow treatment (forced reinsertion once
// per level per insertion, else split) and the R* split. See store.h.
#include <algorithm>
#include <string>

#include "core/index/catfish/store.h"

namespace locus::catfish {

uint64_t Store::free_slot_count() const {
  return free_slots_.size() + (g_.region_bytes() - next_fresh_) / g_.node_bytes;
}

Status Store::ensure_room() const {
  // Every level splits and a new root appears, for the entry itself and for
  // each entry a forced reinsertion or a dissolved node sends back in.
  const uint64_t levels = header_.root_level + 2;
  const uint64_t worst = (1 + levels * (reinsert_count_ + min_fill_)) * levels;
  if (free_slot_count() < worst) {
    return resource_exhausted("catfish store: node region full (" + std::to_string(free_slot_count()) +
                              " free slots of " + std::to_string(g_.node_slots) + ", an update may need " +
                              std::to_string(worst) + "); give the store more node_slots");
  }
  return Status();
}

Status Store::insert(const Rect& rect, uint64_t id) {
  if (!(rect.x_min <= rect.x_max && rect.y_min <= rect.y_max)) {
    return invalid_argument("catfish insert: rectangle with min above max (or NaN)");
  }
  LOCUS_RETURN_IF_ERROR(ensure_room());
  const Status st = insert_entry({rect, id}, 0);
  if (st.is_ok()) ++stats_.rectangles;
  finish_op();
  return st;
}

Status Store::insert_entry(const Entry& e, uint32_t level) {
  Path path;
  choose_path(e.rect, level, &path);
  NodeData node;
  load(path.off[path.depth], &node);
  node.entries[node.count++] = e;
  return settle(path, node);
}

void Store::choose_path(const Rect& r, uint32_t level, Path* path) const {
  NodeData n;
  path->depth = 0;
  path->off[0] = header_.root;
  for (uint32_t l = header_.root_level; l > level; --l) {
    load(path->off[path->depth], &n);
    const uint32_t k = choose_subtree(n, r);
    ++path->depth;
    path->off[path->depth] = n.entries[k].ptr;
    path->idx[path->depth] = k;
  }
}

uint32_t Store::choose_subtree(const NodeData& n, const Rect& r) const {
  uint32_t best = 0;
  double best_overlap = 0, best_enlarge = 0, best_area = 0;
  for (uint32_t k = 0; k < n.count; ++k) {
    const Rect& cur = n.entries[k].rect;
    const Rect grown = cur.united(r);
    const double area = cur.area();
    const double enlarge = grown.area() - area;
    double overlap = 0;
    if (n.level == 1) {  // children are leaves: least overlap enlargement first
      for (uint32_t j = 0; j < n.count; ++j) {
        if (j != k) overlap += grown.overlap_area(n.entries[j].rect) - cur.overlap_area(n.entries[j].rect);
      }
    }
    const bool better = k == 0 || overlap < best_overlap ||
                        (overlap == best_overlap &&
                         (enlarge < best_enlarge || (enlarge == best_enlarge && area < best_area)));
    if (better) best = k, best_overlap = overlap, best_enlarge = enlarge, best_area = area;
  }
  return best;
}

void Store::adjust_upwards(const Path& path, uint32_t depth, Rect mbr) {
  NodeData parent;
  for (uint32_t k = depth; k > 0; --k) {
    const NodeView v(region_.data() + path.off[k - 1], g_.lines_per_field());
    if (v.rect(path.idx[k]) == mbr) return;  // unchanged here, so unchanged above
    load(path.off[k - 1], &parent);
    parent.entries[path.idx[k]].rect = mbr;
    store(path.off[k - 1], parent);
    mbr = parent.mbr();
  }
}

Status Store::settle(Path& path, NodeData& node) {
  NodeData right;
  while (true) {
    const uint32_t d = path.depth;
    if (node.count <= capacity_) {
      store(path.off[d], node);
      adjust_upwards(path, d, node.mbr());
      return Status();
    }
    if (d > 0 && (reinserted_levels_ & (1u << node.level)) == 0) return reinsert_some(path, node);
    LOCUS_ASSIGN_OR_RETURN(const uint64_t right_off, allocate_slot());
    begin_moves();
    ++stats_.splits;
    split(node, &right);
    store(right_off, right);
    store(path.off[d], node);
    if (d == 0) {
      LOCUS_ASSIGN_OR_RETURN(const uint64_t root_off, allocate_slot());
      NodeData root;
      root.level = node.level + 1;
      root.count = 2;
      root.entries[0] = {node.mbr(), path.off[0]};
      root.entries[1] = {right.mbr(), right_off};
      store(root_off, root);
      header_.root = root_off;
      header_.root_level = root.level;
      write_header();
      return Status();
    }
    const Rect left_mbr = node.mbr();
    load(path.off[d - 1], &node);  // continue with the parent, which gains the new node
    node.entries[path.idx[d]].rect = left_mbr;
    node.entries[node.count++] = {right.mbr(), right_off};
    path.depth = d - 1;
  }
}

Status Store::reinsert_some(Path& path, NodeData& node) {
  reinserted_levels_ |= 1u << node.level;
  begin_moves();
  ++stats_.forced_reinserts;
  const Rect box = node.mbr();
  const double cx = box.center_x(), cy = box.center_y();
  double dist[kMaxEntries + 1];
  uint16_t order[kMaxEntries + 1];
  for (uint32_t i = 0; i < node.count; ++i) {
    const double dx = node.entries[i].rect.center_x() - cx, dy = node.entries[i].rect.center_y() - cy;
    dist[i] = dx * dx + dy * dy;
    order[i] = static_cast<uint16_t>(i);
  }
  std::sort(order, order + node.count, [&](uint16_t a, uint16_t b) { return dist[a] > dist[b]; });
  Entry removed[kMaxEntries + 1];
  bool gone[kMaxEntries + 1] = {};
  const uint32_t p = reinsert_count_;
  for (uint32_t i = 0; i < p; ++i) {
    removed[i] = node.entries[order[i]];
    gone[order[i]] = true;
  }
  uint32_t kept = 0;
  for (uint32_t i = 0; i < node.count; ++i) {
    if (!gone[i]) node.entries[kept++] = node.entries[i];
  }
  node.count = kept;
  store(path.off[path.depth], node);
  adjust_upwards(path, path.depth, node.mbr());
  const uint32_t level = node.level;
  for (uint32_t i = p; i-- > 0;) {  // close reinsert: nearest to the centre first
    LOCUS_RETURN_IF_ERROR(insert_entry(removed[i], level));
  }
  return Status();
}

// R* split of an overflowing node: the axis whose distributions have the
// least total margin, then the distribution with least overlap, then least
// total area. `node` keeps the first group, `right` gets the second.
void Store::split(NodeData& node, NodeData* right) const {
  const uint32_t n = node.count, m = min_fill_;
  uint16_t order[2][2][kMaxEntries + 1];  // [axis][by lower, by upper]
  auto key = [&](uint32_t i, uint32_t axis, uint32_t upper) {
    const Rect& r = node.entries[i].rect;
    return axis == 0 ? (upper ? r.x_max : r.x_min) : (upper ? r.y_max : r.y_min);
  };
  Rect pre[kMaxEntries + 1], suf[kMaxEntries + 1];
  auto prepare = [&](const uint16_t* ord) {
    pre[0] = node.entries[ord[0]].rect;
    for (uint32_t i = 1; i < n; ++i) pre[i] = pre[i - 1].united(node.entries[ord[i]].rect);
    suf[n - 1] = node.entries[ord[n - 1]].rect;
    for (uint32_t i = n - 1; i-- > 0;) suf[i] = suf[i + 1].united(node.entries[ord[i]].rect);
  };
  double margin[2] = {0, 0};
  for (uint32_t axis = 0; axis < 2; ++axis) {
    for (uint32_t upper = 0; upper < 2; ++upper) {
      uint16_t* ord = order[axis][upper];
      for (uint32_t i = 0; i < n; ++i) ord[i] = static_cast<uint16_t>(i);
      std::sort(ord, ord + n, [&](uint16_t a, uint16_t b) {
        const double ka = key(a, axis, upper), kb = key(b, axis, upper);
        return ka < kb || (ka == kb && key(a, axis, 1 - upper) < key(b, axis, 1 - upper));
      });
      prepare(ord);
      for (uint32_t k = m; k <= n - m; ++k) margin[axis] += pre[k - 1].margin() + suf[k].margin();
    }
  }
  const uint32_t axis = margin[1] < margin[0] ? 1 : 0;
  const uint16_t* best_order = nullptr;
  uint32_t best_k = m;
  double best_overlap = 0, best_area = 0;
  for (uint32_t upper = 0; upper < 2; ++upper) {
    prepare(order[axis][upper]);
    for (uint32_t k = m; k <= n - m; ++k) {
      const double overlap = pre[k - 1].overlap_area(suf[k]);
      const double area = pre[k - 1].area() + suf[k].area();
      if (best_order == nullptr || overlap < best_overlap || (overlap == best_overlap && area < best_area)) {
        best_order = order[axis][upper], best_k = k, best_overlap = overlap, best_area = area;
      }
    }
  }
  Entry all[kMaxEntries + 1];
  std::copy(node.entries, node.entries + n, all);
  right->level = node.level;
  right->count = n - best_k;
  node.count = best_k;
  for (uint32_t i = 0; i < best_k; ++i) node.entries[i] = all[best_order[i]];
  for (uint32_t i = best_k; i < n; ++i) right->entries[i - best_k] = all[best_order[i]];
}

}  // namespace locus::catfish
