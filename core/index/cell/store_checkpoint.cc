// Store checkpoints: the whole store as log records, so a store's log can
// restart after one (server_log.cc) and recovery reads a checkpoint and the
// log's tail instead of every request since the store began.
//
// The records are images, not requests: pointers name a region id and an
// offset, so recovery must put every node where it was. Each meganode's
// bookkeeping (free list in order, split and build state) and its nodes up
// to the most it ever allocated are copied byte for byte, so replaying the
// tail after restore() allocates the same nodes the live store did.
//
// Extents are copied as the allocator's live blocks. The buddy allocator's
// free lists are not visible outside it, so both sides rebuild it in one
// canonical form: allocate every block of the region in address order (the
// live ones and the largest aligned blocks filling the gaps), then free the
// gap blocks in address order. From a fresh allocator that hands out every
// block at the offset asked for (each allocation takes the smallest free
// block, which begins where the last one ended), and the frees leave the
// same free lists on both sides. The live store adopts that form right
// after writing the checkpoint (adopt_checkpoint), so the log's tail puts
// each extent at the same offset in the live store and in a recovered one.
#include <algorithm>
#include <bit>
#include <cstring>

#include "core/index/cell/store.h"

namespace locus::cell {
namespace {

constexpr uint32_t kFormat = 1;
constexpr size_t kChunkBytes = 1u << 20;  // node and extent images per record

void emit_blob(std::string& out, std::string_view s) {
  const auto n = static_cast<uint32_t>(s.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(s);
}
template <typename T>
void emit(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
std::string record_of(uint16_t type) {
  std::string r;
  emit(r, type);
  return r;
}

}  // namespace

std::vector<Store::Block> Store::live_extents() const {
  std::vector<Block> live;
  const uint64_t step = allocator_.min_block_bytes();
  for (uint64_t off = 0; off < allocator_.capacity_bytes();) {
    const uint64_t bytes = allocator_.block_size(off);
    if (bytes == 0) {
      off += step;
      continue;
    }
    live.push_back({off, bytes});
    off += bytes;
  }
  return live;
}

Status Store::rebuild_allocator(const std::vector<Block>& live) {
  LOCUS_ASSIGN_OR_RETURN(auto fresh,
                         memory::BuddyAllocator::create(allocator_.capacity_bytes(), options_.min_extent_block_bytes));
  std::vector<uint64_t> gaps;
  uint64_t at = 0;
  auto take = [&](uint64_t bytes) -> Status {
    LOCUS_ASSIGN_OR_RETURN(uint64_t got, fresh.allocate(bytes));
    if (got != at) {
      return internal_error("cell checkpoint: the extent allocator placed a " + std::to_string(bytes) +
                            "-byte block at " + std::to_string(got) + ", not " + std::to_string(at));
    }
    at += bytes;
    return Status();
  };
  auto fill_to = [&](uint64_t end) -> Status {
    while (at < end) {
      // The largest block aligned at `at` that ends by `end` (at > 0 limits
      // it to at's lowest set bit).
      uint64_t bytes = std::bit_floor(end - at);
      if (at != 0) bytes = std::min(bytes, at & (~at + 1));
      gaps.push_back(at);
      LOCUS_RETURN_IF_ERROR(take(bytes));
    }
    return Status();
  };
  for (const Block& b : live) {
    if (b.offset < at || !std::has_single_bit(b.bytes) || b.offset % b.bytes != 0 ||
        b.offset + b.bytes > fresh.capacity_bytes()) {
      return corruption("cell checkpoint: extent block of " + std::to_string(b.bytes) + " bytes at " +
                        std::to_string(b.offset) + " overlaps, is misaligned or lies outside the region");
    }
    LOCUS_RETURN_IF_ERROR(fill_to(b.offset));
    LOCUS_RETURN_IF_ERROR(take(b.bytes));
  }
  LOCUS_RETURN_IF_ERROR(fill_to(fresh.capacity_bytes()));
  for (uint64_t g : gaps) LOCUS_RETURN_IF_ERROR(fresh.free(g));
  allocator_ = std::move(fresh);
  return Status();
}

Status Store::adopt_checkpoint() { return rebuild_allocator(live_extents()); }

Status Store::write_checkpoint(const std::function<Status(std::string_view record)>& sink) {
  std::string r = record_of(kCheckpointStore);
  emit(r, kFormat);
  emit(r, node_region_);
  emit(r, g_.node_bytes);
  emit(r, g_.key_capacity_bytes);
  emit(r, g_.meganode_nodes);
  emit(r, g_.meganodes_per_server);
  emit(r, allocator_.capacity_bytes());
  emit(r, allocator_.min_block_bytes());
  for (uint64_t root : installed_roots_) emit(r, root);
  emit(r, stats_);
  LOCUS_RETURN_IF_ERROR(sink(r));
  // The superblock slot (region 0's root pointer; unused elsewhere).
  r = record_of(kCheckpointNodes);
  emit(r, uint64_t{0});
  r.append(reinterpret_cast<const char*>(at(0)), g_.node_bytes);
  LOCUS_RETURN_IF_ERROR(sink(r));
  for (uint32_t m = 0; m < meganodes_.size(); ++m) {
    const Meganode& mn = meganodes_[m];
    if (mn.high_water == 0) continue;  // never used: as a fresh store has it
    r = record_of(kCheckpointMeganode);
    emit(r, m);
    emit<uint8_t>(r, (mn.in_use ? 1 : 0) | (mn.splitting ? 2 : 0) | (mn.split_requested ? 4 : 0) |
                         (mn.building ? 8 : 0) | (mn.build ? 16 : 0));
    emit(r, mn.next_unused);
    emit(r, mn.used);
    emit(r, mn.high_water);
    emit(r, static_cast<uint32_t>(mn.free.size()));
    r.append(reinterpret_cast<const char*>(mn.free.data()), mn.free.size() * sizeof(uint32_t));
    emit_blob(r, mn.split_key);
    emit(r, mn.split_id);
    emit(r, mn.finished_split);
    emit(r, mn.finished_root);
    emit(r, mn.built_by);
    if (mn.build) {
      const BuildState& b = *mn.build;
      emit(r, b.meganode_level);
      emit(r, b.levels);
      for (uint64_t p : b.rightmost) emit(r, p);
      emit_blob(r, b.min_key);
      emit_blob(r, b.max_key);
      emit_blob(r, b.last_key);
      emit<uint8_t>(r, (b.min_inf ? 1 : 0) | (b.max_inf ? 2 : 0) | (b.any ? 4 : 0));
      emit(r, b.chunks);
      emit(r, b.right);
    }
    LOCUS_RETURN_IF_ERROR(sink(r));
    const uint64_t end = root_of(m) + uint64_t{mn.high_water} * g_.node_bytes;
    for (uint64_t off = root_of(m); off < end; off += kChunkBytes) {
      r = record_of(kCheckpointNodes);
      emit(r, off);
      r.append(reinterpret_cast<const char*>(at(off)), std::min<uint64_t>(kChunkBytes, end - off));
      LOCUS_RETURN_IF_ERROR(sink(r));
    }
  }
  r = record_of(kCheckpointExtents);
  for (const Block& b : live_extents()) {
    if (r.size() + b.bytes > kChunkBytes && r.size() > sizeof(uint16_t)) {
      LOCUS_RETURN_IF_ERROR(sink(r));
      r = record_of(kCheckpointExtents);
    }
    emit(r, b.offset);
    emit(r, b.bytes);
    r.append(reinterpret_cast<const char*>(extents_.data() + b.offset), b.bytes);
  }
  if (r.size() > sizeof(uint16_t)) LOCUS_RETURN_IF_ERROR(sink(r));
  return sink(record_of(kCheckpointEnd));
}

Status Store::restore_meganode(rpc::Reader& r) {
  uint32_t m = 0, n_free = 0;
  uint8_t flags = 0;
  if (!(r.get(&m) && r.get(&flags)) || m >= meganodes_.size()) return corruption("cell checkpoint: bad meganode");
  Meganode& mn = meganodes_[m];
  mn.free.clear();
  mn.free.reserve(g_.meganode_nodes);  // free_node() never allocates
  mn.split_key.reserve(g_.key_capacity_bytes);
  std::string_view split_key;
  bool ok = r.get(&mn.next_unused) && r.get(&mn.used) && r.get(&mn.high_water) && r.get(&n_free) &&
            n_free <= g_.meganode_nodes;
  for (uint32_t i = 0; ok && i < n_free; ++i) ok = r.get(&mn.free.emplace_back());
  ok = ok && r.blob(&split_key) && r.get(&mn.split_id) && r.get(&mn.finished_split) && r.get(&mn.finished_root) &&
       r.get(&mn.built_by);
  mn.in_use = flags & 1;
  mn.splitting = flags & 2;
  mn.split_requested = flags & 4;
  mn.building = flags & 8;
  mn.split_key.assign(split_key);
  mn.build.reset();
  if (ok && (flags & 16)) {
    mn.build = std::make_unique<BuildState>();
    BuildState& b = *mn.build;
    std::string_view min_key, max_key, last_key;
    uint8_t bflags = 0;
    ok = r.get(&b.meganode_level) && r.get(&b.levels);
    for (uint64_t& p : b.rightmost) ok = ok && r.get(&p);
    ok = ok && r.blob(&min_key) && r.blob(&max_key) && r.blob(&last_key) && r.get(&bflags) && r.get(&b.chunks) &&
         r.get(&b.right);
    b.min_key.assign(min_key);
    b.max_key.assign(max_key);
    b.last_key.assign(last_key);
    b.min_inf = bflags & 1;
    b.max_inf = bflags & 2;
    b.any = bflags & 4;
  }
  if (!ok || !r.at_end() || mn.next_unused > g_.meganode_nodes || mn.high_water > g_.meganode_nodes) {
    return corruption("cell checkpoint: meganode " + std::to_string(m) + "'s record is malformed");
  }
  return Status();
}

Status Store::restore(uint16_t type, rpc::Reader& r) {
  switch (type) {
    case kCheckpointStore: {
      uint32_t format = 0, node_bytes = 0, key_bytes = 0, mn_nodes = 0, mn_count = 0;
      CellRegionId region = 0;
      uint64_t extents = 0, min_block = 0;
      bool ok = r.get(&format) && r.get(&region) && r.get(&node_bytes) && r.get(&key_bytes) && r.get(&mn_nodes) &&
                r.get(&mn_count) && r.get(&extents) && r.get(&min_block);
      for (uint64_t& root : installed_roots_) ok = ok && r.get(&root);
      ok = ok && r.get(&stats_) && r.at_end();
      if (!ok || format != kFormat) return corruption("cell checkpoint: unknown format or malformed header");
      if (region != node_region_ || node_bytes != g_.node_bytes || key_bytes != g_.key_capacity_bytes ||
          mn_nodes != g_.meganode_nodes || mn_count != g_.meganodes_per_server ||
          extents != allocator_.capacity_bytes() || min_block != allocator_.min_block_bytes()) {
        return invalid_argument("cell checkpoint: written by a store of another shape (region " +
                                std::to_string(region) + ", " + std::to_string(node_bytes) + "-byte nodes, " +
                                std::to_string(mn_nodes) + " per meganode, " + std::to_string(mn_count) +
                                " meganodes, " + std::to_string(extents) +
                                " bytes of extents): start it with the geometry it was written with");
      }
      restored_extents_.clear();
      return Status();
    }
    case kCheckpointMeganode:
      return restore_meganode(r);
    case kCheckpointNodes: {
      uint64_t off = 0;
      if (!r.get(&off)) return corruption("cell checkpoint: node image without an offset");
      const std::span<const std::byte> bytes = r.rest();
      if (off > g_.region_bytes() || bytes.size() > g_.region_bytes() - off) {
        return corruption("cell checkpoint: node image outside the region");
      }
      std::memcpy(at(off), bytes.data(), bytes.size());
      return Status();
    }
    case kCheckpointExtents:
      while (!r.at_end()) {
        Block b;
        if (!(r.get(&b.offset) && r.get(&b.bytes)) || b.offset > extents_bytes() ||
            b.bytes > extents_bytes() - b.offset || r.rest().size() < b.bytes) {
          return corruption("cell checkpoint: extent image outside the region");
        }
        std::memcpy(extents_.data() + b.offset, r.rest().data(), b.bytes);
        r = rpc::Reader(r.rest().subspan(b.bytes));
        restored_extents_.push_back(b);
      }
      return Status();
    case kCheckpointEnd: {
      LOCUS_RETURN_IF_ERROR(rebuild_allocator(restored_extents_));
      restored_extents_.clear();
      restored_extents_.shrink_to_fit();
      // The split worker's queue is not in the checkpoint: the meganodes'
      // flags are, and queue_needed_splits() rebuilds it from them once
      // recovery has aborted the splits it must.
      return Status();
    }
    default:
      return corruption("cell checkpoint: unknown record type " + std::to_string(type));
  }
}

}  // namespace locus::cell
