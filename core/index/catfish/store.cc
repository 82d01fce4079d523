// Store set-up, node slots, the move epoch, local search and invariant
// checks. See store.h.
#include "core/index/catfish/store.h"

#include <string>

#include "core/common/prefetch.h"

namespace locus::catfish {

Store::Store(const StoreOptions& options)
    : g_(options.geometry),
      capacity_(g_.capacity()),
      min_fill_(g_.min_fill()),
      reinsert_count_(0),
      next_fresh_(g_.node_bytes) {
  const double p = options.reinsert_fraction * capacity_ + 0.5;
  // At least one entry moves, and the node keeps its minimum fill.
  reinsert_count_ = std::clamp<uint32_t>(static_cast<uint32_t>(p), 1, capacity_ + 1 - min_fill_);
}

StatusOr<std::unique_ptr<Store>> Store::create(const StoreOptions& options) {
  LOCUS_RETURN_IF_ERROR(options.geometry.validate());
  if (!(options.reinsert_fraction >= 0.0 && options.reinsert_fraction <= 0.5)) {
    return invalid_argument("catfish store: reinsert_fraction must be in [0, 0.5]");
  }
  std::unique_ptr<Store> s(new Store(options));
  s->region_ = AlignedBuffer(options.geometry.region_bytes());
  if (!s->region_.valid()) {
    return resource_exhausted("catfish store: cannot allocate a " + std::to_string(options.geometry.region_bytes()) +
                              "-byte node region");
  }
  s->free_slots_.reserve(options.geometry.node_slots);
  s->orphans_.reserve(size_t{kMaxLevels} * (kMaxEntries + 1));
  LOCUS_ASSIGN_OR_RETURN(const uint64_t root, s->allocate_slot());
  NodeData empty;
  s->store(root, empty);
  s->header_.root = root;
  s->header_.root_level = 0;
  s->header_.node_bytes = options.geometry.node_bytes;
  s->write_header();
  return s;
}

StatusOr<uint64_t> Store::allocate_slot() {
  if (!free_slots_.empty()) {
    const uint64_t off = free_slots_.back();
    free_slots_.pop_back();
    ++stats_.nodes_in_use;
    return off;
  }
  if (next_fresh_ >= g_.region_bytes()) {
    return resource_exhausted("catfish store: node region full (" + std::to_string(g_.node_slots) + " slots of " +
                              std::to_string(g_.node_bytes) + " bytes); give the store more node_slots");
  }
  const uint64_t off = next_fresh_;
  next_fresh_ += g_.node_bytes;
  ++stats_.nodes_in_use;
  return off;
}

void Store::free_slot(uint64_t off) {
  encode_free(region_.data() + off, g_);
  free_slots_.push_back(off);  // within the reserved capacity: one entry per slot at most
  --stats_.nodes_in_use;
  ++stats_.nodes_freed;
}

void Store::load(uint64_t off, NodeData* out) const {
  const NodeView v(region_.data() + off, g_.lines_per_field());
  out->level = v.level();
  out->count = v.count();
  for (uint32_t i = 0; i < out->count; ++i) out->entries[i] = {v.rect(i), v.ptr(i)};
}

void Store::write_header() { encode_header(region_.data() + kHeaderOffset, header_); }

void Store::begin_moves() {
  if (moving_) return;
  moving_ = true;
  ++header_.epoch;  // odd: clients that overlap this operation restart
  write_header();
}

void Store::finish_op() {
  reinserted_levels_ = 0;
  if (!moving_) return;
  moving_ = false;
  ++header_.epoch;
  write_header();
}

void Store::search(const Rect& q, std::vector<Hit>* out) const {
  out->clear();
  // Depth-first with an explicit stack: a node pushes at most capacity
  // children and is popped before its children, so height * capacity bounds it.
  uint32_t stack[kMaxLevels * kMaxEntries];
  uint32_t sp = 0;
  const std::byte* base = region_.data();
  const uint32_t lpf = g_.lines_per_field();
  // The lines a scan of a full node touches: the header and the columns.
  const uint32_t lines = 1 + kFields * lpf;
  const uint32_t shift = static_cast<uint32_t>(__builtin_ctz(g_.node_bytes));
  const bool pow2 = (g_.node_bytes & (g_.node_bytes - 1)) == 0;
  auto slot_of = [&](uint64_t off) { return static_cast<uint32_t>(pow2 ? off >> shift : off / g_.node_bytes); };
  auto off_of = [&](uint32_t slot) { return pow2 ? uint64_t{slot} << shift : uint64_t{slot} * g_.node_bytes; };
  stack[sp++] = slot_of(header_.root);
  while (sp > 0) {
    const std::byte* node = base + off_of(stack[--sp]);
    const NodeView v(node, lpf);
    const uint64_t meta = v.word(0, 1);
    const bool leaf = static_cast<uint16_t>(meta >> 16) == 0;
    const uint32_t count = static_cast<uint16_t>(meta >> 32);
    scan_intersecting(v, count, q, [&](const Rect& r, uint64_t ptr) {
      if (leaf) {
        out->push_back({r, ptr});
      } else {
        prefetch_lines(base + ptr, size_t{lines} * kLineBytes);
        stack[sp++] = slot_of(ptr);
      }
      return true;
    });
  }
}

Status Store::check_node(uint64_t off, uint32_t level, bool is_root, const Rect* parent_rect, uint64_t* rects,
                         uint64_t* nodes) const {
  const std::string where = "catfish invariants: node at offset " + std::to_string(off);
  if (!g_.is_node_offset(off)) return corruption(where + " is not a node slot");
  const NodeView v(region_.data() + off, g_.lines_per_field());
  if (v.check(g_.lines(), capacity_) != CopyState::kConsistent) return corruption(where + " is locked or malformed");
  if (v.level() != level) return corruption(where + " has level " + std::to_string(v.level()));
  NodeData n;
  load(off, &n);
  ++*nodes;
  const uint32_t min = is_root ? (level > 0 ? 2 : 0) : min_fill_;
  if (n.count < min || n.count > capacity_) {
    return corruption(where + " holds " + std::to_string(n.count) + " entries, outside [" + std::to_string(min) +
                      ", " + std::to_string(capacity_) + "]");
  }
  if (parent_rect != nullptr && !(n.mbr() == *parent_rect)) {
    return corruption(where + ": the parent's rectangle is not this node's MBR");
  }
  if (level == 0) {
    *rects += n.count;
    return Status();
  }
  for (uint32_t i = 0; i < n.count; ++i) {
    LOCUS_RETURN_IF_ERROR(check_node(n.entries[i].ptr, level - 1, false, &n.entries[i].rect, rects, nodes));
  }
  return Status();
}

Status Store::check_invariants() const {
  HeaderInfo h;
  LOCUS_RETURN_IF_ERROR(decode_header(region_.data(), &h));
  if (h.root != header_.root || h.root_level != header_.root_level || (h.epoch & 1) != 0) {
    return corruption("catfish invariants: published header differs from the store's");
  }
  uint64_t rects = 0, nodes = 0;
  LOCUS_RETURN_IF_ERROR(check_node(header_.root, header_.root_level, true, nullptr, &rects, &nodes));
  if (rects != stats_.rectangles) {
    return corruption("catfish invariants: " + std::to_string(rects) + " rectangles reachable, " +
                      std::to_string(stats_.rectangles) + " stored");
  }
  if (nodes != stats_.nodes_in_use) {
    return corruption("catfish invariants: " + std::to_string(nodes) + " nodes reachable, " +
                      std::to_string(stats_.nodes_in_use) + " allocated");
  }
  return Status();
}

StoreStats Store::stats() const {
  StoreStats s = stats_;
  s.height = header_.root_level + 1;
  s.epoch = header_.epoch;
  return s;
}

}  // namespace locus::catfish
