// OffloadClient: connecting, header reads and the multi-issue traversal.
// See client_offload.h.
#include "core/index/catfish/client_offload.h"

#include <algorithm>
#include <string>

namespace locus::catfish {

namespace {
// Charges the batch's examination however the loop over it ends.
class ChargeOnExit {
 public:
  ChargeOnExit(Env& env, uint64_t bytes) : env_(env), timer_(env), bytes_(bytes) {}
  ~ChargeOnExit() { env_.cpu->charge_work(kClientNodeWork, timer_.elapsed(), bytes_); }
  ChargeOnExit(const ChargeOnExit&) = delete;
  ChargeOnExit& operator=(const ChargeOnExit&) = delete;

 private:
  Env& env_;
  WorkTimer timer_;
  uint64_t bytes_;
};

// Why a copy stays torn: its writer holds the node's lock word odd.
constexpr const char* kLockedTooLong =
    "the server kept it locked: a writer descheduled mid-write, or writing it continuously";
}  // namespace

OffloadClient::OffloadClient(Endpoint& endpoint, const RemoteRegion& region, OffloadOptions options)
    : endpoint_(endpoint), remote_(region), options_(options) {}

OffloadClient::~OffloadClient() {
  if (registered_) (void)endpoint_.transport().deregister_memory(region_);
}

StatusOr<std::unique_ptr<OffloadClient>> OffloadClient::connect(Endpoint& endpoint, const RemoteRegion& region,
                                                                OffloadOptions options) {
  if (options.torn.max_attempts == 0 || options.max_restarts == 0 || options.max_batch == 0) {
    return invalid_argument("catfish client: torn.max_attempts, max_restarts and max_batch must be positive");
  }
  std::unique_ptr<OffloadClient> c(new OffloadClient(endpoint, region, options));
  const uint32_t send_wr = endpoint.transport().limits().max_send_wr;
  if (send_wr == 0) return invalid_argument("catfish client: transport allows no outstanding work requests");
  c->batch_limit_ = std::min({kMaxReadsPerBatch, send_wr, options.max_batch});
  const uint64_t bytes = kLineBytes + uint64_t{kMaxReadsPerBatch} * kMaxNodeBytes;
  c->buffer_ = AlignedBuffer(bytes);
  if (!c->buffer_.valid()) return resource_exhausted("catfish client: cannot allocate its READ buffers");
  LOCUS_ASSIGN_OR_RETURN(c->region_, endpoint.transport().register_memory(c->buffer_.data(), bytes, kLocalOnly));
  c->registered_ = true;
  HeaderInfo h;
  LOCUS_RETURN_IF_ERROR(c->read_header(&h));
  c->g_.node_bytes = h.node_bytes;
  c->g_.node_slots = static_cast<uint32_t>(std::min<uint64_t>(region.length / std::max(h.node_bytes, 1u), UINT32_MAX));
  if (Status st = c->g_.validate(); !st.is_ok()) return corruption("catfish client: server header: " + st.message());
  c->pending_.reserve(size_t{kMaxLevels} * c->g_.capacity());
  for (WorkRequest& wr : c->wrs_) {
    wr.op = Opcode::kRead;
    wr.local.lkey = c->region_.lkey;
  }
  return c;
}

Status OffloadClient::read_header(HeaderInfo* out) {
  WorkRequest wr;
  wr.wr_id = endpoint_.next_wr_id();
  wr.op = Opcode::kRead;
  wr.remote = remote_at(remote_, kHeaderOffset);
  wr.local = {buffer_.data(), kLineBytes, region_.lkey};
  TornRetry retry(options_.torn, *endpoint_.env().clock);
  do {
    wr.wr_id = endpoint_.next_wr_id();
    LOCUS_RETURN_IF_ERROR(endpoint_.execute(wr));
    const Status st = decode_header(buffer_.data(), out);
    if (st.code() != StatusCode::kAborted) return st;
    ++stats_.torn_reads;
  } while (retry.again());
  return Status(StatusCode::kAborted, "catfish client: header torn in " + std::to_string(retry.torn_in_a_row()) +
                                          " READs in a row (" + kLockedTooLong + ")");
}

Status OffloadClient::search(const Rect& query, std::vector<Hit>* out) {
  ++stats_.searches;
  uint32_t odd_epochs = 0;  // in a row
  for (uint32_t attempt = 0; attempt < options_.max_restarts; ++attempt) {
    HeaderInfo before, after;
    LOCUS_RETURN_IF_ERROR(read_header(&before));
    if ((before.epoch & 1) != 0) {
      options_.torn.back_off(*endpoint_.env().clock, ++odd_epochs);
    } else {
      odd_epochs = 0;
      LOCUS_ASSIGN_OR_RETURN(const Pass pass, traverse(query, before, out));
      if (pass == Pass::kDone) {
        LOCUS_RETURN_IF_ERROR(read_header(&after));
        if (after.epoch == before.epoch) return Status();
      }
    }
    ++stats_.restarts;
  }
  out->clear();
  return Status(StatusCode::kAborted, "catfish search: the tree moved under " + std::to_string(options_.max_restarts) +
                                          " traversals in a row");
}

StatusOr<OffloadClient::Pass> OffloadClient::traverse(const Rect& q, const HeaderInfo& h, std::vector<Hit>* out) {
  out->clear();
  pending_.clear();
  if (!g_.is_node_offset(h.root) || h.root_level >= kMaxLevels) return Pass::kMoved;
  pending_.push_back({h.root, h.root_level, 0});
  const uint32_t lpf = g_.lines_per_field(), lines = g_.lines(), capacity = g_.capacity();
  std::byte* images = buffer_.data() + kLineBytes;
  while (!pending_.empty()) {
    // Multi-issue: the top of the stack, up to one batch, in one post.
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(batch_limit_, pending_.size()));
    for (uint32_t i = 0; i < n; ++i) {
      inflight_[i] = pending_.back();
      pending_.pop_back();
      WorkRequest& wr = wrs_[i];
      wr.wr_id = endpoint_.next_wr_id();
      wr.remote = remote_at(remote_, inflight_[i].off);
      wr.local.addr = images + uint64_t{i} * g_.node_bytes;
      wr.local.length = g_.node_bytes;
    }
    LOCUS_RETURN_IF_ERROR(endpoint_.execute(std::span<const WorkRequest>(wrs_.data(), n)));
    ++stats_.batches;
    stats_.node_reads += n;
    // The client's CPU for the batch (checking each copy, scanning its
    // entries): timed natively here (`locus calibrate` measures it on
    // loopback) and charged as named work, which the simulator costs from
    // [platform.cpu.handler_cost_us] "catfish.client_node" by the bytes
    // examined, before the next batch is issued. Torn copies back off once
    // the batch is examined, so the sleep is not counted as CPU.
    uint32_t torn_run = 0;  // the most torn READs in a row of a node here
    {
      ChargeOnExit charge(endpoint_.env(), uint64_t{n} * g_.node_bytes);
      for (uint32_t i = 0; i < n; ++i) {
        const Pending& p = inflight_[i];
        const NodeView v(images + uint64_t{i} * g_.node_bytes, lpf);
        const CopyState state = v.check(lines, capacity);
        if (state == CopyState::kTorn) {
          ++stats_.torn_reads;
          // Nodes of one batch are torn independently: each keeps its own
          // count in its Pending, so this uses the policy, not a TornRetry.
          if (!options_.torn.allows_another(p.torn + 1)) {
            return Status(StatusCode::kAborted, "catfish client: node at offset " + std::to_string(p.off) +
                                                    " torn in " + std::to_string(p.torn + 1) + " READs in a row (" +
                                                    kLockedTooLong + ")");
          }
          torn_run = std::max(torn_run, p.torn + 1);
          pending_.push_back({p.off, p.level, p.torn + 1});
          continue;
        }
        if (state == CopyState::kMalformed || v.level() != p.level) return Pass::kMoved;
        const bool leaf = p.level == 0;
        const bool complete = scan_intersecting(v, v.count(), q, [&](const Rect& r, uint64_t ptr) {
          if (leaf) {
            out->push_back({r, ptr});
            return true;
          }
          if (!g_.is_node_offset(ptr)) return false;
          pending_.push_back({ptr, p.level - 1, 0});
          return true;
        });
        if (!complete) return Pass::kMoved;
      }
    }
    if (torn_run > 0) options_.torn.back_off(*endpoint_.env().clock, torn_run);
  }
  return Pass::kDone;
}

}  // namespace locus::catfish
