// CellClient: client-side steps. A meganode is traversed with one RDMA READ
// per node (or a cached image), checking each image before trusting it:
// versions equal and even (else re-read: the server was writing it), valid
// (else restart: a meganode split freed it), min key not above the search
// key (else restart: the node was reused elsewhere), key below max (else
// follow the right link: the node split). The image of every node read is
// kept in a trail slot until the traversal reaches its leaf, when those far
// enough above the leaves go to the node cache.
#include <algorithm>
#include <cstring>

#include "core/common/crc64.h"
#include "core/index/cell/client.h"
#include "core/memory/extent.h"

namespace locus::cell {
namespace {
constexpr uint32_t kMaxTrail = 32;  // as in client.cc: slots [0, kMaxTrail), then one overflow slot
constexpr uint32_t kMaxHops = 1u << 16;
}  // namespace

Status CellClient::read_remote(uint64_t ptr, uint32_t bytes, std::byte* into, bool observe) {
  const RegionInfo* info = layout_.region(ptr_region(ptr));
  if (info == nullptr || ptr_offset(ptr) > info->remote.length || bytes > info->remote.length - ptr_offset(ptr)) {
    return corruption("cell: pointer outside every known region");
  }
  WorkRequest wr;
  wr.wr_id = endpoint_.next_wr_id();
  wr.op = Opcode::kRead;
  wr.remote = remote_at(info->remote, ptr_offset(ptr));
  wr.local = {into, bytes, region_.lkey};
  Clock& clock = *endpoint_.env().clock;
  const Nanos t0 = clock.now();
  LOCUS_RETURN_IF_ERROR(endpoint_.execute(wr));
  const Nanos t1 = clock.now();
  if (observe) selector_.observe(info->server, selector::Path::kClient, t1 - t0, t1);
  return Status();
}

StatusOr<uint64_t> CellClient::read_root() {
  TornRetry retry(options_.torn, *endpoint_.env().clock);
  do {
    LOCUS_RETURN_IF_ERROR(read_remote(make_ptr(kSuperblockRegion, 0), kSuperblockBytes, superblock_buf_, true));
    Superblock sb;
    std::memcpy(&sb, superblock_buf_, sizeof(sb));
    if (superblock_stable(sb)) {
      root_hint_ = sb.root;
      return sb.root;
    }
    ++stats_.torn_reads;
  } while (retry.again());
  return Status(StatusCode::kAborted, "cell: superblock torn in " + std::to_string(retry.torn_in_a_row()) +
                                          " READs in a row");
}

StatusOr<const std::byte*> CellClient::fetch(uint64_t ptr, bool* from_cache) {
  if (use_cache_) {
    if (const std::byte* cached = node_cache_.lookup(ptr)) {
      *from_cache = true;
      ++stats_.node_cache_hits;
      if (cached_used_.size() < cached_used_.capacity()) cached_used_.push_back(ptr);
      return cached;
    }
  }
  *from_cache = false;
  const Geometry& g = layout_.geometry;
  const uint64_t slot = std::min<uint64_t>(trail_.size(), kMaxTrail);
  std::byte* into = trail_buf_ + slot * g.node_bytes;
  TornRetry retry(options_.torn, *endpoint_.env().clock);
  do {
    LOCUS_RETURN_IF_ERROR(read_remote(ptr, g.node_bytes, into, true));
    ++stats_.node_reads;
    if (NodeView(into, g).stable()) return into;
    ++stats_.torn_reads;
  } while (retry.again());
  return Status(StatusCode::kAborted, "cell: node torn in " + std::to_string(retry.torn_in_a_row()) +
                                          " READs in a row");
}

StatusOr<CellClient::Step> CellClient::traverse_meganode(std::string_view key, uint64_t ptr) {
  // read_root and fetch give kAborted for a copy torn too often in a row:
  // the server takes this step. Any other error ends the operation.
  auto leave_to_server = [&](const Status& st) -> StatusOr<Step> {
    if (st.code() != StatusCode::kAborted) return st;
    ++stats_.torn_fallbacks;
    return Step{StepKind::kServer, kNullPtr, nullptr};
  };
  if (ptr == kNullPtr) {
    StatusOr<uint64_t> root = read_root();
    if (!root.is_ok()) return leave_to_server(root.status());
    ptr = *root;
  }
  const Geometry& g = layout_.geometry;
  auto meganode_id = [&](uint64_t p) {
    return (uint64_t{ptr_region(p)} << 32) | g.meganode_of(ptr_offset(p));
  };
  auto is_node = [&](uint64_t p) {
    const RegionInfo* info = p == kNullPtr ? nullptr : layout_.region(ptr_region(p));
    return info != nullptr && info->kind == RegionKind::kNodes && g.is_node_offset(ptr_offset(p));
  };
  uint32_t reads = 0;
  auto finish = [&](StepKind kind, uint64_t p, const std::byte* node) {
    // What a client-side step through this meganode cost in READs (the
    // paper's m; cached nodes are free), for the selector.
    if (kind != StepKind::kRestart) selector_.observe_client_step_cost(reads);
    return Step{kind, p, node};
  };
  auto record = [&](uint64_t p, bool fetched, const NodeView& v, bool descended) {
    if (trail_.size() < kMaxTrail) {
      trail_.push_back({p, fetched ? static_cast<int32_t>(trail_.size()) : -1,
                        static_cast<uint8_t>(v.local_level()), static_cast<uint8_t>(v.meganode_level()),
                        descended});
    }
  };
  if (!is_node(ptr)) return finish(StepKind::kRestart, kNullPtr, nullptr);
  const uint64_t here = meganode_id(ptr);
  uint64_t came_from_cache = kNullPtr;  // a cached node that sent us down here
  for (uint32_t hops = 0; hops < kMaxHops; ++hops) {
    bool from_cache = false;
    StatusOr<const std::byte*> fetched = fetch(ptr, &from_cache);
    if (!fetched.is_ok()) return leave_to_server(fetched.status());
    const std::byte* image = *fetched;
    if (!from_cache) ++reads;
    if (options_.cpu_node_ns > 0) endpoint_.env().cpu->charge(options_.cpu_node_ns);
    const NodeView v(image, g);
    if (!v.well_formed() || !v.valid() || v.below_min(key)) return finish(StepKind::kRestart, kNullPtr, nullptr);
    if (v.at_or_above_max(key)) {
      // The node split (or the meganode did): the cached parent that sent
      // us here is out of date.
      if (came_from_cache != kNullPtr) node_cache_.erase(came_from_cache);
      came_from_cache = kNullPtr;
      if (ptr == root_hint_ && v.min_is_inf()) root_hint_ = kNullPtr;  // a root that split: re-read it
      record(ptr, !from_cache, v, false);
      const uint64_t next = v.right();
      if (!is_node(next)) return finish(StepKind::kRestart, kNullPtr, nullptr);
      if (meganode_id(next) != here) return finish(StepKind::kNext, next, nullptr);
      ptr = next;
      continue;
    }
    if (!from_cache && v.meganode_level() == 0 && g.node_index(ptr_offset(ptr)) == 0) {
      path_cache_.insert(v.min(), v.max(), ptr);  // a leaf meganode's root: remember its range
    }
    if (v.local_level() == 0 && v.meganode_level() == 0) {
      record(ptr, !from_cache, v, false);
      return finish(StepKind::kLeaf, ptr, image);
    }
    if (v.count() == 0) return finish(StepKind::kRestart, kNullPtr, nullptr);
    const uint64_t child = v.child(v.child_index(key));
    record(ptr, !from_cache, v, true);
    came_from_cache = from_cache ? ptr : kNullPtr;
    if (!is_node(child)) return finish(StepKind::kRestart, kNullPtr, nullptr);
    if (meganode_id(child) != here) return finish(StepKind::kNext, child, nullptr);
    ptr = child;
  }
  return finish(StepKind::kRestart, kNullPtr, nullptr);
}

void CellClient::remember_trail() {
  if (node_cache_.enabled()) {
    // A node's distance above the leaves, walking back from the leaf: in a
    // leaf meganode it is the node's local level; above, one more than the
    // node it led down to, or (after a right link inside its meganode) the
    // same as its sibling's. Across a right link into another meganode
    // the levels are not comparable: unknown, so not cached.
    const Geometry& g = layout_.geometry;
    auto meganode_id = [&](uint64_t p) { return (uint64_t{ptr_region(p)} << 32) | g.meganode_of(ptr_offset(p)); };
    int64_t next_distance = -1;
    for (size_t i = trail_.size(); i-- > 0;) {
      const TrailEntry& e = trail_[i];
      int64_t distance = -1;
      if (e.meganode_level == 0) {
        distance = e.local_level;
      } else if (i + 1 < trail_.size() && next_distance >= 0) {
        if (e.descended) {
          distance = next_distance + 1;
        } else if (meganode_id(trail_[i + 1].ptr) == meganode_id(e.ptr)) {
          distance = next_distance;
        }
      }
      if (e.slot >= 0 && distance >= static_cast<int64_t>(options_.cache_min_distance)) {
        node_cache_.insert(e.ptr, trail_buf_ + uint64_t{static_cast<uint32_t>(e.slot)} * g.node_bytes);
      }
      next_distance = distance;
    }
  }
  trail_.clear();
}

Status CellClient::read_value(std::string_view key, const std::byte* leaf, std::string_view* value) {
  const NodeView v(leaf, layout_.geometry);
  const int32_t i = v.find(key);
  if (i < 0) return not_found("cell get: no such key");
  const ExtentRef ref = v.extent(static_cast<uint32_t>(i));
  const RegionInfo* info = layout_.region(ptr_region(ref.ptr));
  if (info == nullptr || info->kind != RegionKind::kExtents || ref.length < memory::kExtentHeaderBytes ||
      ref.length > layout_.max_kv_bytes) {
    return corruption("cell: a consistent leaf holds an impossible extent pointer");
  }
  ++stats_.extent_reads;
  LOCUS_RETURN_IF_ERROR(read_remote(ref.ptr, ref.length, extent_buf_, true));
  if (crc64(extent_buf_, ref.length) != ref.crc) {
    ++stats_.extent_retries;
    return Status(StatusCode::kAborted, "extent changed");
  }
  std::string_view k;
  if (!memory::parse_extent(extent_buf_, ref.length, &k, value) || k != key) {
    return corruption("cell: extent with a valid checksum holds another key");
  }
  return Status();
}

}  // namespace locus::cell
