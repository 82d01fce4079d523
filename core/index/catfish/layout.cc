// Node format helpers: geometry checks, the per-cache-line versioned writer,
// and the encode/decode pair the store and the client share. See layout.h.
#include "core/index/catfish/layout.h"

#include <cstring>
#include <string>

namespace locus::catfish {

Rect NodeData::mbr() const {
  Rect r = entries[0].rect;
  for (uint32_t i = 1; i < count; ++i) r = r.united(entries[i].rect);
  return r;
}

Status Geometry::validate() const {
  if (node_bytes % kLineBytes != 0 || node_bytes < 6 * kLineBytes || node_bytes > kMaxNodeBytes) {
    return invalid_argument("catfish geometry: node_bytes must be a multiple of 64 in [384, 4096], got " +
                            std::to_string(node_bytes));
  }
  if (node_slots < 2) return invalid_argument("catfish geometry: need the header slot and at least one node");
  if (capacity() < 4) return invalid_argument("catfish geometry: nodes must hold at least 4 entries");
  return Status();
}

CopyState NodeView::check(uint32_t lines, uint32_t capacity) const {
  const uint64_t v = version();
  if ((v & 1) != 0) return CopyState::kTorn;
  for (uint32_t l = 0; l < lines; ++l) {
    if (word(l, kSlotsPerLine) != v) return CopyState::kTorn;
  }
  if (magic() != kNodeMagic || count() > capacity || level() >= kMaxLevels) return CopyState::kMalformed;
  return CopyState::kConsistent;
}

HeaderInfo NodeView::header_info() const {
  HeaderInfo h;
  h.root = word(0, 2);
  h.epoch = word(0, 3);
  h.root_level = static_cast<uint32_t>(word(0, 4));
  h.node_bytes = static_cast<uint32_t>(word(0, 4) >> 32);
  return h;
}

void NodeWriter::set_versions(uint64_t v) {
  set_word(0, 0, v);
  for (uint32_t l = 0; l < lines_; ++l) set_word(l, kSlotsPerLine, v);
}

void NodeWriter::begin() {
  const uint64_t v = NodeView(p_, 0).version();
  set_versions((v & 1) != 0 ? v + 2 : v + 1);  // a slot left odd stays odd
  std::atomic_thread_fence(std::memory_order_release);
}

void NodeWriter::end() {
  std::atomic_thread_fence(std::memory_order_release);
  set_versions(NodeView(p_, 0).version() + 1);
  std::atomic_thread_fence(std::memory_order_release);
}

namespace {
uint64_t node_word(uint16_t magic, uint32_t level, uint32_t count) {
  return uint64_t{magic} | (uint64_t{level} << 16) | (uint64_t{count} << 32);
}
}  // namespace

void encode_node(std::byte* p, const Geometry& g, const NodeData& node) {
  NodeWriter w(p, g.lines());
  const uint32_t lpf = g.lines_per_field();
  w.begin();
  w.set_word(0, 1, node_word(kNodeMagic, node.level, node.count));
  for (uint32_t i = 0; i < node.count; ++i) {
    const Entry& e = node.entries[i];
    const uint32_t b = i / kSlotsPerLine, s = i % kSlotsPerLine;
    const double coords[4] = {e.rect.x_min, e.rect.y_min, e.rect.x_max, e.rect.y_max};
    for (uint32_t f = 0; f < 4; ++f) {
      uint64_t bits;
      std::memcpy(&bits, &coords[f], 8);
      w.set_word(1 + f * lpf + b, s, bits);
    }
    w.set_word(1 + 4 * lpf + b, s, e.ptr);
  }
  w.end();
}

void encode_free(std::byte* p, const Geometry& g) {
  NodeWriter w(p, g.lines());
  w.begin();
  w.set_word(0, 1, 0);
  w.end();
}

void encode_header(std::byte* p, const HeaderInfo& h) {
  NodeWriter w(p, 1);
  w.begin();
  w.set_word(0, 1, kHeaderMagic);
  w.set_word(0, 2, h.root);
  w.set_word(0, 3, h.epoch);
  w.set_word(0, 4, uint64_t{h.root_level} | (uint64_t{h.node_bytes} << 32));
  w.end();
}

Status decode_node(const std::byte* copy, const Geometry& g, NodeData* out) {
  const NodeView v(copy, g.lines_per_field());
  switch (v.check(g.lines(), g.capacity())) {
    case CopyState::kTorn: return Status(StatusCode::kAborted, "catfish: torn node copy");
    case CopyState::kMalformed: return corruption("catfish: consistent copy is not a node");
    case CopyState::kConsistent: break;
  }
  out->level = v.level();
  out->count = v.count();
  for (uint32_t i = 0; i < out->count; ++i) out->entries[i] = {v.rect(i), v.ptr(i)};
  return Status();
}

Status decode_header(const std::byte* copy, HeaderInfo* out) {
  const NodeView v(copy, 0);
  const uint64_t ver = v.version();
  if ((ver & 1) != 0 || v.word(0, kSlotsPerLine) != ver) return Status(StatusCode::kAborted, "catfish: torn header");
  if (v.magic() != kHeaderMagic) return corruption("catfish: region has no catfish header");
  *out = v.header_info();
  return Status();
}

}  // namespace locus::catfish
