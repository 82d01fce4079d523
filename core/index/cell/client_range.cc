// CellClient: range queries. Like a point operation, a range walks
// meganode by meganode with a selector choice at each; once at a leaf it
// goes on along right links. Server-side, one RPC returns as many entries
// as fit in a message and where to continue. Client-side, the client reads
// the leaf, fetches the extents of the keys it wants in one batch of READs,
// verifies every CRC64 before delivering anything (re-reading the leaf if
// one changed), then follows the leaf's right link with its max key as the
// next start. Leaves are read atomically; the range as a whole is not a
// snapshot (as in the paper).
#include <algorithm>

#include "core/common/crc64.h"
#include "core/index/cell/client.h"
#include "core/memory/extent.h"

namespace locus::cell {
namespace {
constexpr uint32_t kMaxSteps = 1u << 20;
}  // namespace

StatusOr<bool> CellClient::range_server_step(uint64_t* ptr, bool* exclusive, std::optional<std::string_view> end,
                                             uint32_t limit, RangeSink& sink, uint64_t* delivered) {
  rpc::Writer w(rpc_.payload_buffer());
  RangeRequest q;
  q.start = *ptr;
  q.query.start = resume_;
  q.query.start_exclusive = *exclusive;
  q.query.has_end = end.has_value();
  q.query.end = end.value_or(std::string_view());
  q.query.limit = static_cast<uint32_t>(limit - *delivered);
  encode_range_request(q, w);
  if (!w.ok()) return invalid_argument("cell range: request exceeds one message");
  const NodeId server = layout_.server_of(*ptr);
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(server, kRange, w.size()));
  rpc::Reader r(body);
  RangeResult head;
  if (!decode_range_header(r, &head)) return corruption("cell range: malformed response");
  for (uint32_t i = 0; i < head.returned; ++i) {
    std::string_view k, v;
    if (!r.blob(&k) || !r.blob(&v)) return corruption("cell range: truncated entries");
    ++*delivered;
    if (!sink.accept(k, v)) return true;
  }
  if (!r.at_end()) return corruption("cell range: trailing bytes");
  switch (head.outcome) {
    case Outcome::kDone:
      return true;
    case Outcome::kRedirect:
      ++stats_.redirects;
      resume_.assign(head.resume);  // views the response: copy before the next call
      *exclusive = head.resume_exclusive;
      *ptr = head.next;
      return false;
    case Outcome::kRestart:
    case Outcome::kBusy:
      resume_.assign(head.resume);
      *exclusive = head.resume_exclusive;
      LOCUS_RETURN_IF_ERROR(restart(resume_, ptr));
      return false;
  }
  return false;
}

Status CellClient::range_leaf_client(const std::byte* leaf, std::optional<std::string_view> end, uint32_t limit,
                                     RangeSink& sink, uint64_t* delivered, bool* exclusive, bool* finished, bool* retry,
                                     uint64_t* next) {
  const NodeView v(leaf, layout_.geometry);
  *finished = *retry = false;
  uint32_t i = v.lower_bound(resume_, *exclusive);
  while (true) {
    // One batch: the next keys of this leaf inside the range.
    batch_.clear();
    batch_index_.clear();
    bool hit_end = false;
    for (; i < v.count() && batch_.size() < extent_slots_ && *delivered + batch_.size() < limit; ++i) {
      if (end && v.key(i) >= *end) {
        hit_end = true;
        break;
      }
      const ExtentRef ref = v.extent(i);
      const RegionInfo* info = layout_.region(ptr_region(ref.ptr));
      if (info == nullptr || info->kind != RegionKind::kExtents || ref.length < memory::kExtentHeaderBytes ||
          ref.length > layout_.max_kv_bytes || ptr_offset(ref.ptr) > info->remote.length ||
          ref.length > info->remote.length - ptr_offset(ref.ptr)) {
        return corruption("cell range: a consistent leaf holds an impossible extent pointer");
      }
      WorkRequest wr;
      wr.wr_id = endpoint_.next_wr_id();
      wr.op = Opcode::kRead;
      wr.remote = remote_at(info->remote, ptr_offset(ref.ptr));
      wr.local = {extent_buf_ + uint64_t{batch_.size()} * layout_.max_kv_bytes, ref.length, region_.lkey};
      batch_.push_back(wr);
      batch_index_.push_back(i);
    }
    if (!batch_.empty()) {
      stats_.extent_reads += batch_.size();
      LOCUS_RETURN_IF_ERROR(endpoint_.execute(batch_));
      for (size_t b = 0; b < batch_.size(); ++b) {
        if (crc64(batch_[b].local.addr, batch_[b].local.length) != v.extent(batch_index_[b]).crc) {
          ++stats_.extent_retries;
          *retry = true;  // resume_ already names the last key delivered
          return Status();
        }
      }
      for (size_t b = 0; b < batch_.size(); ++b) {
        std::string_view k, val;
        const std::string_view key = v.key(batch_index_[b]);
        if (!memory::parse_extent(static_cast<const std::byte*>(batch_[b].local.addr), batch_[b].local.length, &k,
                                  &val) ||
            k != key) {
          return corruption("cell range: extent with a valid checksum holds another key");
        }
        ++*delivered;
        resume_.assign(key);
        *exclusive = true;
        if (!sink.accept(key, val)) {
          *finished = true;
          return Status();
        }
      }
    }
    if (hit_end || *delivered >= limit) {
      *finished = true;
      return Status();
    }
    if (i >= v.count()) break;
  }
  if (v.max_is_inf() || (end && v.max_key() >= *end)) {
    *finished = true;
    return Status();
  }
  resume_.assign(v.max_key());
  *exclusive = false;
  *next = v.right();
  return Status();
}

StatusOr<uint64_t> CellClient::range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                     RangeSink& sink) {
  auto delivered = range_once(start, end, limit, sink);
  if (!delivered.is_ok()) return after_failure(delivered.status());
  return delivered;
}

StatusOr<uint64_t> CellClient::range_once(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                          RangeSink& sink) {
  if (start.size() > layout_.geometry.key_capacity_bytes) return invalid_argument("cell range: start key too long");
  ++stats_.ops;
  use_cache_ = true;
  restarts_ = 0;
  server_next_ = false;
  trail_.clear();
  cached_used_.clear();
  uint64_t delivered = 0;
  if (limit == 0 || (end && *end <= start)) return delivered;
  resume_.assign(start);
  bool exclusive = false;
  uint64_t ptr = start_pointer(resume_);
  for (uint32_t steps = 0; steps < kMaxSteps; ++steps) {
    const NodeId server = layout_.server_of(ptr);
    if (server == kInvalidNode) {
      LOCUS_RETURN_IF_ERROR(restart(resume_, &ptr));
      continue;
    }
    if (server_takes_step(server)) {
      // Range RPCs are not observed: their latency grows with the entries
      // returned and would not estimate a search step.
      ++stats_.server_steps;
      trail_.clear();
      LOCUS_ASSIGN_OR_RETURN(bool finished, range_server_step(&ptr, &exclusive, end, limit, sink, &delivered));
      if (finished) return delivered;
      continue;
    }
    ++stats_.client_steps;
    // A search for the exclusive resume key lands on the leaf holding it,
    // which is where the next key lives too.
    LOCUS_ASSIGN_OR_RETURN(Step s, traverse_meganode(resume_, ptr));
    if (s.kind == StepKind::kRestart) {
      LOCUS_RETURN_IF_ERROR(restart(resume_, &ptr));
      continue;
    }
    if (s.kind == StepKind::kServer) {
      server_next_ = true;
      continue;
    }
    if (s.kind == StepKind::kNext) {
      ptr = s.ptr;
      continue;
    }
    remember_trail();
    bool finished = false, retry = false;
    uint64_t next = kNullPtr;
    LOCUS_RETURN_IF_ERROR(
        range_leaf_client(s.node, end, limit, sink, &delivered, &exclusive, &finished, &retry, &next));
    if (finished) return delivered;
    if (retry) {
      ++stats_.restarts;
      if (++restarts_ > options_.max_restarts) return corruption("cell range: extents never verified");
      ptr = s.ptr;
      continue;
    }
    ptr = next;
  }
  return internal_error("cell range: no progress");
}

}  // namespace locus::cell
