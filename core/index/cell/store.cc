// Store: creation, node and meganode allocation, extents, the superblock,
// statistics and the invariant checker. Traversal and updates are in
// store_ops.cc and store_insert.cc, meganode splits in store_split.cc.
#include "core/index/cell/store.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

#include "core/common/check.h"
#include "core/common/crc64.h"
#include "core/memory/extent.h"

namespace locus::cell {

Status StoreOptions::validate() const {
  LOCUS_RETURN_IF_ERROR(geometry.validate());
  if (!std::has_single_bit(extents_bytes) || extents_bytes < max_kv_bytes) {
    return invalid_argument("cell store: extents_bytes must be a power of two >= max_kv_bytes");
  }
  if (max_kv_bytes < memory::kExtentHeaderBytes + 1 + geometry.key_capacity_bytes) {
    return invalid_argument("cell store: max_kv_bytes must hold the longest key");
  }
  if (!(split_fill_fraction > 0.1 && split_fill_fraction <= 0.9)) {
    return invalid_argument("cell store: split_fill_fraction must be in (0.1, 0.9]");
  }
  if (!(bulk_fill_fraction > 0.2 && bulk_fill_fraction <= 1.0)) {
    return invalid_argument("cell store: bulk_fill_fraction must be in (0.2, 1]");
  }
  // A split must leave room for the inserts that go on meanwhile.
  const double threshold = split_fill_fraction * geometry.meganode_nodes;
  if (geometry.meganode_nodes - threshold < 8) {
    return invalid_argument("cell store: meganodes too small for split_fill_fraction (raise "
                            "meganode_nodes or lower the fraction)");
  }
  return Status();
}

StatusOr<std::unique_ptr<Store>> Store::create(CellRegionId node_region, CellRegionId extent_region,
                                               const StoreOptions& options) {
  LOCUS_RETURN_IF_ERROR(options.validate());
  LOCUS_ASSIGN_OR_RETURN(auto allocator, memory::BuddyAllocator::create(
                                             options.extents_bytes, options.min_extent_block_bytes));
  std::unique_ptr<Store> s(new Store(node_region, extent_region, options, std::move(allocator)));
  LOCUS_RETURN_IF_ERROR(s->init());
  return s;
}

Store::Store(CellRegionId node_region, CellRegionId extent_region, const StoreOptions& options,
             memory::BuddyAllocator allocator)
    : node_region_(node_region),
      extent_region_(extent_region),
      options_(options),
      g_(options.geometry),
      allocator_(std::move(allocator)) {}

Status Store::init() {
  nodes_ = AlignedBuffer(g_.region_bytes());
  extents_ = AlignedBuffer(allocator_.capacity_bytes());
  if (!nodes_.valid() || !extents_.valid()) {
    return resource_exhausted("cell store: cannot allocate " +
                              std::to_string(g_.region_bytes() + allocator_.capacity_bytes()) + " bytes");
  }
  meganodes_.resize(g_.meganodes_per_server);
  split_threshold_nodes_ = static_cast<uint32_t>(options_.split_fill_fraction * g_.meganode_nodes);
  split_scratch_.resize(uint64_t{g_.max_capacity() + 1} * g_.max_stride());
  for (auto& s : separators_) s.reserve(g_.key_capacity_bytes);
  resume_.reserve(g_.key_capacity_bytes);
  return Status();
}

// ---- nodes and meganodes ----

uint32_t Store::free_nodes(const Meganode& mn) const {
  return static_cast<uint32_t>(mn.free.size()) + (g_.meganode_nodes - mn.next_unused);
}

uint64_t Store::alloc_node(uint32_t m) {
  Meganode& mn = meganodes_[m];
  uint32_t index;
  if (!mn.free.empty()) {
    index = mn.free.back();
    mn.free.pop_back();
  } else {
    LOCUS_CHECK_MSG(mn.next_unused < g_.meganode_nodes, "meganode full: callers check free_nodes first");
    index = mn.next_unused++;
    mn.high_water = std::max(mn.high_water, mn.next_unused);
  }
  ++mn.used;
  return g_.node_offset(m, index);
}

void Store::free_node(uint32_t m, uint64_t off) {
  Meganode& mn = meganodes_[m];
  mn.free.push_back(g_.node_index(off));  // capacity reserved at activation: no allocation
  --mn.used;
}

int64_t Store::alloc_meganode() {
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    Meganode& mn = meganodes_[m];
    if (mn.in_use) continue;
    mn.in_use = true;
    mn.splitting = mn.split_requested = mn.building = false;
    mn.split_id = mn.finished_split = mn.built_by = 0;
    mn.finished_root = kNullPtr;
    mn.next_unused = 1;
    mn.used = 1;  // the root slot
    mn.high_water = std::max(mn.high_water, 1u);
    mn.free.clear();
    mn.free.reserve(g_.meganode_nodes);
    mn.split_key.reserve(g_.key_capacity_bytes);
    return m;
  }
  return -1;
}

uint32_t Store::meganodes_in_use() const {
  return static_cast<uint32_t>(std::count_if(meganodes_.begin(), meganodes_.end(),
                                             [](const Meganode& m) { return m.in_use; }));
}

void Store::maybe_request_split(uint32_t m) {
  Meganode& mn = meganodes_[m];
  // Not before its split declared it live: one aborted meanwhile would
  // leave its copy linked into the tree beside the original.
  if (mn.used < split_threshold_nodes_ || mn.split_requested || mn.splitting || mn.building || mn.built_by != 0) {
    return;
  }
  mn.split_requested = true;
  if (scheduler_ != nullptr) scheduler_->request_split(m);
}

void Store::queue_needed_splits(const std::function<bool(uint64_t root)>& is_tree_root) {
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    Meganode& mn = meganodes_[m];
    if (!mn.in_use) continue;
    const bool unrooted = mn.finished_split != 0 && !mn.splitting && mn.built_by == 0 && !mn.building &&
                          (is_tree_root ? is_tree_root(ptr(root_of(m))) : view(root_of(m)).min_is_inf());
    if (mn.split_requested || unrooted) {
      mn.split_requested = true;
      if (scheduler_ != nullptr) scheduler_->request_split(m);
    } else {
      maybe_request_split(m);
    }
  }
}

// ---- extents ----

StatusOr<ExtentRef> Store::write_extent(std::string_view key, std::string_view value) {
  const uint64_t bytes = memory::kExtentHeaderBytes + key.size() + value.size();
  if (bytes > options_.max_kv_bytes) {
    return invalid_argument("cell put: key+value of " + std::to_string(bytes) +
                            " bytes exceeds max_kv_bytes " + std::to_string(options_.max_kv_bytes));
  }
  LOCUS_ASSIGN_OR_RETURN(uint64_t offset, allocator_.allocate(bytes));
  std::byte* e = extents_.data() + offset;
  memory::write_extent(e, key, value);
  ExtentRef ref;
  ref.ptr = make_ptr(extent_region_, offset);
  ref.length = static_cast<uint32_t>(bytes);
  ref.crc = crc64(e, bytes);
  // The extent is complete before any entry can point to it.
  std::atomic_thread_fence(std::memory_order_release);
  return ref;
}

void Store::free_extent(const ExtentRef& ref) {
  // A reader that still holds the old ExtentRef sees the CRC mismatch once
  // the block is reused, and retries.
  LOCUS_CHECK(allocator_.free(ptr_offset(ref.ptr)).is_ok());
}

std::string_view Store::extent_value(const ExtentRef& ref) const {
  std::string_view k, v;
  LOCUS_CHECK(memory::parse_extent(extents_.data() + ptr_offset(ref.ptr), ref.length, &k, &v));
  return v;
}

// ---- superblock ----

Status Store::init_tree() {
  if (!owns_superblock()) return invalid_argument("cell: only region 0's server holds the tree root");
  const int64_t m = alloc_meganode();
  if (m < 0) return resource_exhausted("cell: no meganode for the root");
  const uint64_t root = root_of(static_cast<uint32_t>(m));
  NodeWriter w = writer(root);
  w.begin();
  w.init(0, 0, Bound{{}, true}, Bound{{}, true}, kNullPtr);
  w.end();
  auto* sb = reinterpret_cast<Superblock*>(nodes_.data());
  sb->root = ptr(root);
  sb->root_level = 0;
  seal_superblock(*sb);
  return Status();
}

uint64_t Store::root() const { return reinterpret_cast<const Superblock*>(nodes_.data())->root; }
uint32_t Store::root_level() const {
  return reinterpret_cast<const Superblock*>(nodes_.data())->root_level;
}

StatusOr<bool> Store::set_root(uint64_t expected, uint64_t new_root, uint32_t level) {
  if (!owns_superblock()) return invalid_argument("cell set_root: this server holds no superblock");
  if (level >= kMaxLevels || new_root == kNullPtr) return invalid_argument("cell set_root: bad level or root");
  if (installed_roots_[level] == new_root) return true;  // re-sent: the answer it got the first time
  auto* sb = reinterpret_cast<Superblock*>(nodes_.data());
  if (sb->root != expected) return false;
  const uint64_t odd = sb->version_front + 1;
  __atomic_store_n(&sb->version_front, odd, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_release);
  sb->root = new_root;
  sb->root_level = level;
  std::atomic_thread_fence(std::memory_order_release);
  __atomic_store_n(&sb->version_front, odd + 1, __ATOMIC_RELAXED);
  seal_superblock(*sb);
  std::atomic_thread_fence(std::memory_order_release);
  installed_roots_[level] = new_root;
  return true;
}

// ---- statistics and checks ----

StoreStats Store::stats() const {
  StoreStats s = stats_;
  s.meganodes_in_use = 0;
  s.nodes_in_use = 0;
  for (uint32_t i = 0; i < meganodes_.size(); ++i) {
    const Meganode& m = meganodes_[i];
    if (!m.in_use) continue;
    ++s.meganodes_in_use;
    s.nodes_in_use += m.used;
    if (m.building) continue;
    const NodeView root = view(root_of(i));
    if (!root.valid()) continue;
    const uint32_t level = root.meganode_level();
    const auto height = static_cast<uint8_t>(root.local_level() + 1);
    if (s.min_height[level] == 0 || height < s.min_height[level]) s.min_height[level] = height;
    s.max_height[level] = std::max(s.max_height[level], height);
  }
  s.extent_bytes_in_use = allocator_.bytes_in_use();
  return s;
}

namespace {
bool same_bound(Bound a, Bound b) { return a.inf == b.inf && (a.inf || a.key == b.key); }
}  // namespace

Status Store::check_invariants() const {
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    const Meganode& mn = meganodes_[m];
    if (!mn.in_use || mn.building) continue;
    const std::string where = "meganode " + std::to_string(m) + " of region " + std::to_string(node_region_);
    const NodeView root = view(root_of(m));
    if (!root.valid()) return internal_error(where + ": invalid root");
    uint64_t leftmost = root_of(m);
    for (int level = static_cast<int>(root.local_level()); level >= 0; --level) {
      uint64_t off = leftmost;
      if (!same_bound(view(off).min(), root.min())) return internal_error(where + ": left edge min");
      while (true) {
        const NodeView v = view(off);
        if (!v.valid() || !v.stable() || v.local_level() != static_cast<uint32_t>(level) ||
            v.meganode_level() != root.meganode_level()) {
          return internal_error(where + ": bad node at level " + std::to_string(level));
        }
        const uint32_t first = v.extent_entries() ? 0 : 1;
        for (uint32_t i = first; i < v.count(); ++i) {
          if (v.below_min(v.key(i)) || v.at_or_above_max(v.key(i)) ||
              (i > first && !(v.key(i - 1) < v.key(i)))) {
            return internal_error(where + ": entry out of order or out of bounds");
          }
        }
        if (v.extent_entries()) {
          for (uint32_t i = 0; i < v.count(); ++i) {
            const ExtentRef r = v.extent(i);
            const std::byte* e = extents_.data() + ptr_offset(r.ptr);
            std::string_view k, val;
            if (crc64(e, r.length) != r.crc || !memory::parse_extent(e, r.length, &k, &val) || k != v.key(i)) {
              return internal_error(where + ": extent does not match its entry");
            }
          }
        } else if (level > 0) {
          for (uint32_t i = 0; i < v.count(); ++i) {
            if (!local_node(v.child(i)) || g_.meganode_of(ptr_offset(v.child(i))) != m) {
              return internal_error(where + ": child outside the meganode");
            }
            const NodeView c = view(ptr_offset(v.child(i)));
            if (i == 0 ? !same_bound(c.min(), v.min()) : (c.min_is_inf() || c.min_key() != v.key(i))) {
              return internal_error(where + ": child min differs from its separator");
            }
          }
        }
        const uint64_t r = v.right();
        if (!local_node(r) || g_.meganode_of(ptr_offset(r)) != m || g_.node_index(ptr_offset(r)) == 0) {
          if (!same_bound(v.max(), root.max()) || r != root.right()) {
            return internal_error(where + ": right edge at level " + std::to_string(level) +
                                  " does not match the root");
          }
          break;
        }
        if (!same_bound(view(ptr_offset(r)).min(), v.max())) {
          return internal_error(where + ": right sibling's min differs from max");
        }
        off = ptr_offset(r);
      }
      if (level > 0) leftmost = ptr_offset(view(leftmost).child(0));
    }
  }
  return Status();
}

}  // namespace locus::cell
