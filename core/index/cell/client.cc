// CellClient: connecting, the per-meganode loop of point operations and
// the server-side steps. Client-side steps are in client_rdma.cc, ranges in
// client_range.cc.
#include "core/index/cell/client.h"

#include <algorithm>

namespace locus::cell {
namespace {
constexpr uint32_t kMaxTrail = 32;        // node images kept for caching after a traversal
constexpr uint32_t kMaxExtentBatch = 32;  // extent READs posted at once by a range
constexpr uint32_t kMaxCachedUsed = 256;  // cached nodes remembered per attempt
constexpr uint32_t kMaxSteps = 1u << 20;  // bound on meganode steps of one operation
static_assert(kMaxExtentBatch <= 64, "a batch must fit the smallest send queue we run with");
}  // namespace

StatusOr<std::unique_ptr<CellClient>> CellClient::connect(Endpoint& endpoint, rpc::RpcClient& rpc, NodeId bootstrap,
                                                          selector::Selector& selector, const ClientOptions& options) {
  std::unique_ptr<CellClient> c(new CellClient(endpoint, rpc, bootstrap, selector, options));
  LOCUS_RETURN_IF_ERROR(c->init());
  return c;
}

CellClient::CellClient(Endpoint& endpoint, rpc::RpcClient& rpc, NodeId bootstrap, selector::Selector& selector,
                       const ClientOptions& options)
    : endpoint_(endpoint),
      rpc_(rpc),
      bootstrap_(bootstrap),
      selector_(selector),
      options_(options),
      node_cache_(0, 1),
      path_cache_(0, 1) {
  // A cached leaf would answer from a stale snapshot: never cache leaves.
  options_.cache_min_distance = std::max<uint32_t>(options_.cache_min_distance, 1);
}

CellClient::~CellClient() {
  if (registered_) (void)endpoint_.transport().deregister_memory(region_);
}

Status CellClient::init() {
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(bootstrap_, kGetLayout, 0));
  rpc::Reader r(body);
  if (!decode_layout(r, &layout_)) {
    return corruption("cell: server " + std::to_string(bootstrap_) + " sent an invalid layout");
  }
  const Geometry& g = layout_.geometry;
  node_cache_ = NodeCache(options_.node_cache_bytes, g.node_bytes);
  path_cache_ = PathCache(options_.path_cache_entries, g.key_capacity_bytes);
  extent_slots_ = std::min({kMaxExtentBatch, g.capacity(true), endpoint_.transport().limits().max_send_wr});
  const uint64_t bytes =
      kSuperblockBytes + uint64_t{kMaxTrail + 1} * g.node_bytes + uint64_t{extent_slots_} * layout_.max_kv_bytes;
  buffer_ = AlignedBuffer(bytes);
  if (!buffer_.valid()) return resource_exhausted("cell client: cannot allocate read buffers");
  LOCUS_ASSIGN_OR_RETURN(region_, endpoint_.transport().register_memory(buffer_.data(), bytes, kLocalOnly));
  registered_ = true;
  superblock_buf_ = buffer_.data();
  trail_buf_ = superblock_buf_ + kSuperblockBytes;
  extent_buf_ = trail_buf_ + uint64_t{kMaxTrail + 1} * g.node_bytes;
  trail_.reserve(kMaxTrail);
  cached_used_.reserve(kMaxCachedUsed);
  batch_.reserve(extent_slots_);
  batch_index_.reserve(extent_slots_);
  resume_.reserve(g.key_capacity_bytes);
  return Status();
}

uint64_t CellClient::start_pointer(std::string_view key) {
  used_path_cache_ = false;
  if (use_cache_) {
    const uint64_t p = path_cache_.lookup(key);
    if (p != kNullPtr) {
      ++stats_.path_cache_hits;
      used_path_cache_ = true;
      return p;
    }
  }
  return root_hint_;
}

void CellClient::forget_cached() {
  for (uint64_t p : cached_used_) node_cache_.erase(p);
  cached_used_.clear();
}

Status CellClient::restart(std::string_view key, uint64_t* ptr) {
  ++stats_.restarts;
  if (++restarts_ > options_.max_restarts) {
    return corruption("cell: no consistent traversal after " + std::to_string(options_.max_restarts) + " restarts");
  }
  // Whatever led here may be stale: drop it and go without caches.
  forget_cached();
  if (used_path_cache_) path_cache_.erase_covering(key);
  used_path_cache_ = false;
  use_cache_ = false;
  trail_.clear();
  root_hint_ = kNullPtr;
  *ptr = kNullPtr;
  return Status();
}

bool CellClient::server_takes_step(NodeId server) {
  if (server_next_) {
    server_next_ = false;
    return true;
  }
  return selector_.choose(server, endpoint_.env().clock->now()) == selector::Path::kServer;
}

Status CellClient::busy_wait(Nanos* waited, Nanos* backoff) {
  ++stats_.busy_retries;
  if (*waited >= options_.busy_timeout_ns) {
    return unavailable(
        "cell: server still busy (key range locked by a meganode split, or the "
        "meganode full) after " +
        std::to_string(*waited / kMillisecond) + " ms");
  }
  endpoint_.env().clock->sleep_for(*backoff);
  *waited += *backoff;
  *backoff = std::min(2 * *backoff, options_.busy_backoff_max_ns);
  return Status();
}

void CellClient::learn_meganode(const MeganodeInfo& m) {
  if (m.root != kNullPtr && m.level == 0) path_cache_.insert(m.min, m.max, m.root);
}

StatusOr<OpResponse> CellClient::server_step(OpKind op, std::string_view key, std::string_view value, uint64_t start,
                                             bool observe) {
  rpc::Writer w(rpc_.payload_buffer());
  encode_op_request({.op = op, .start = start, .key = key, .value = value}, w);
  if (!w.ok()) return invalid_argument("cell: key and value exceed one message");
  const NodeId server = layout_.server_of(start);
  Clock& clock = *endpoint_.env().clock;
  const Nanos t0 = clock.now();
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(server, kOp, w.size()));
  const Nanos t1 = clock.now();
  rpc::Reader r(body);
  OpResponse resp;
  if (!decode_op_response(r, &resp)) {
    return corruption("cell: malformed response from server " + std::to_string(server));
  }
  // A busy or restart answer is quick and says nothing about the queue.
  if (observe && (resp.outcome == Outcome::kDone || resp.outcome == Outcome::kRedirect)) {
    selector_.observe(server, selector::Path::kServer, t1 - t0, t1);
  }
  return resp;
}

Status CellClient::point(OpKind op, std::string_view key, std::string_view value, PointResult* out) {
  return after_failure(point_once(op, key, value, out));
}

Status CellClient::after_failure(Status st) {
  if (st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kRetryExceeded) {
    // A server died, or a region moved: a takeover moves regions by the
    // map alone (same region ids and offsets, new server and rkey), so a
    // fresh layout is all the next operation needs. This one fails: a
    // write's outcome is unknown (it may have been logged and applied).
    if (refresh_layout().is_ok()) ++stats_.layout_refreshes;
  }
  return st;
}

Status CellClient::refresh_layout() {
  Status last = unavailable("cell: no server to ask for the layout");
  for (NodeId server : layout_.servers()) {
    auto body = rpc_.call(server, kGetLayout, 0);
    if (!body.is_ok()) {
      last = body.status();
      continue;
    }
    rpc::Reader r(*body);
    Layout fresh;
    if (!decode_layout(r, &fresh) || fresh.geometry.node_bytes != layout_.geometry.node_bytes ||
        fresh.regions.size() != layout_.regions.size()) {
      last = corruption("cell: server " + std::to_string(server) + " sent an invalid layout");
      continue;
    }
    layout_ = std::move(fresh);
    return Status();
  }
  return last;
}

Status CellClient::point_once(OpKind op, std::string_view key, std::string_view value, PointResult* out) {
  if (key.empty() || key.size() > layout_.geometry.key_capacity_bytes) {
    return invalid_argument("cell: key of " + std::to_string(key.size()) + " bytes outside [1, " +
                            std::to_string(layout_.geometry.key_capacity_bytes) + "]");
  }
  ++stats_.ops;
  use_cache_ = true;
  restarts_ = 0;
  server_next_ = false;
  trail_.clear();
  cached_used_.clear();
  uint64_t ptr = start_pointer(key);
  Nanos waited = 0, backoff = options_.busy_backoff_min_ns;
  auto finish_server = [&](const OpResponse& r, bool* done) -> Status {
    *done = false;
    switch (r.outcome) {
      case Outcome::kDone:
        learn_meganode(r.meganode);
        out->found = r.found;
        out->value = r.value;
        *done = true;
        return Status();
      case Outcome::kRedirect:
        ++stats_.redirects;
        ptr = r.next;
        return Status();
      case Outcome::kRestart:
        return restart(key, &ptr);
      case Outcome::kBusy:
        return busy_wait(&waited, &backoff);
    }
    return Status();
  };
  for (uint32_t steps = 0; steps < kMaxSteps; ++steps) {
    const NodeId server = layout_.server_of(ptr);
    if (server == kInvalidNode) {
      LOCUS_RETURN_IF_ERROR(restart(key, &ptr));
      continue;
    }
    bool done = false;
    if (server_takes_step(server)) {
      ++stats_.server_steps;
      trail_.clear();
      LOCUS_ASSIGN_OR_RETURN(OpResponse r, server_step(op, key, value, ptr, true));
      LOCUS_RETURN_IF_ERROR(finish_server(r, &done));
      if (done) return Status();
      continue;
    }
    ++stats_.client_steps;
    LOCUS_ASSIGN_OR_RETURN(Step s, traverse_meganode(key, ptr));
    if (s.kind == StepKind::kRestart) {
      LOCUS_RETURN_IF_ERROR(restart(key, &ptr));
      continue;
    }
    if (s.kind == StepKind::kServer) {
      server_next_ = true;  // this meganode, from ptr, on its server
      continue;
    }
    if (s.kind == StepKind::kNext) {
      ptr = s.ptr;
      continue;
    }
    if (op == OpKind::kContains) {
      out->found = NodeView(s.node, layout_.geometry).find(key) >= 0;
      remember_trail();
      return Status();
    }
    if (op == OpKind::kGet) {
      const Status st = read_value(key, s.node, &out->value);
      if (st.code() == StatusCode::kAborted) {
        // The extent changed under us: read the leaf again.
        ++stats_.restarts;
        if (++restarts_ > options_.max_restarts) return corruption("cell get: extent never verified");
        ptr = s.ptr;
        continue;
      }
      remember_trail();
      out->found = st.is_ok();
      return st.code() == StatusCode::kNotFound ? Status() : st;
    }
    // A write: the search was ours, the write is the server's.
    remember_trail();
    ++stats_.write_rpcs;
    LOCUS_ASSIGN_OR_RETURN(OpResponse r, server_step(op, key, value, s.ptr, false));
    LOCUS_RETURN_IF_ERROR(finish_server(r, &done));
    if (done) return Status();
    if (r.outcome == Outcome::kBusy) ptr = s.ptr;
  }
  return internal_error("cell: operation made no progress");
}

StatusOr<bool> CellClient::contains(std::string_view key) {
  PointResult r;
  LOCUS_RETURN_IF_ERROR(point(OpKind::kContains, key, {}, &r));
  return r.found;
}

StatusOr<std::string_view> CellClient::get(std::string_view key) {
  PointResult r;
  LOCUS_RETURN_IF_ERROR(point(OpKind::kGet, key, {}, &r));
  if (!r.found) return not_found("cell get: no such key");
  return r.value;
}

Status CellClient::put(std::string_view key, std::string_view value) {
  PointResult r;
  return point(OpKind::kPut, key, value, &r);
}

Status CellClient::remove(std::string_view key) {
  PointResult r;
  LOCUS_RETURN_IF_ERROR(point(OpKind::kDelete, key, {}, &r));
  return r.found ? Status() : not_found("cell delete: no such key");
}

}  // namespace locus::cell
