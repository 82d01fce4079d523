// CellServer: see server.h.
#include "core/index/cell/server.h"

#include <algorithm>

namespace locus::cell {
namespace {
// Room kept in a response for the fields around the entries.
constexpr uint32_t kResponseOverheadBytes = 64;
}  // namespace

Status ServerOptions::validate() const {
  LOCUS_RETURN_IF_ERROR(store.validate());
  const uint64_t need = uint64_t{store.max_kv_bytes} + 2ull * store.geometry.key_capacity_bytes + rpc::kHeaderBytes +
                        2 * kResponseOverheadBytes;
  if (max_message_bytes < need) {
    return invalid_argument("cell server: max_message_bytes " + std::to_string(max_message_bytes) + " cannot carry a " +
                            std::to_string(store.max_kv_bytes) + "-byte extent");
  }
  return Status();
}

StatusOr<std::unique_ptr<CellServer>> CellServer::create(Env env, CellRegionId first_region,
                                                         const ServerOptions& options) {
  LOCUS_RETURN_IF_ERROR(options.validate());
  LOCUS_ASSIGN_OR_RETURN(auto store,
                         Store::create(first_region, static_cast<CellRegionId>(first_region + 1), options.store));
  std::unique_ptr<CellServer> s(new CellServer(env, options, std::move(store)));
  LOCUS_RETURN_IF_ERROR(s->open_log());
  LOCUS_RETURN_IF_ERROR(s->register_regions());
  return s;
}

CellServer::CellServer(Env env, const ServerOptions& options, std::unique_ptr<Store> store)
    : env_(env), options_(options), store_(std::move(store)), split_ids_(store_->node_region()) {
  store_->set_scheduler(this);
  entries_.resize(options.max_message_bytes);
  queue_mu_ = env_.sync->new_mutex();
  log_mu_ = env_.sync->new_mutex();
  queue_cv_ = env_.sync->new_condvar();
  pending_.reserve(options.store.geometry.meganodes_per_server);
}

CellServer::~CellServer() {
  if (!registered_) return;
  (void)env_.transport->deregister_memory(extent_region_);
  (void)env_.transport->deregister_memory(node_region_);
}

Status CellServer::register_regions() {
  Transport& t = *env_.transport;
  LOCUS_ASSIGN_OR_RETURN(node_region_,
                         t.register_memory(store_->node_memory(), store_->node_region_bytes(), kRemoteRead));
  auto ext = t.register_memory(store_->extents_memory(), store_->extents_bytes(), kRemoteRead);
  if (!ext.is_ok()) {
    (void)t.deregister_memory(node_region_);
    return ext.status();
  }
  extent_region_ = *ext;
  registered_ = true;
  return Status();
}

void CellServer::charge(uint32_t nodes_visited) {
  requests_charged_.fetch_add(1, std::memory_order_relaxed);
  nodes_charged_.fetch_add(nodes_visited, std::memory_order_relaxed);
  env_.cpu->charge(options_.costs.request_ns + options_.costs.node_visit_ns * nodes_visited);
}

void CellServer::request_split(uint32_t meganode) {
  // A replayed request asks again for the splits the live store asked for
  // and has long done: the queue is rebuilt from the store's state at the
  // end of recovery instead (abort_pending_splits).
  if (replaying_) return;
  MutexLock lock(*queue_mu_);
  // Once each: the store asks again for meganodes it re-queues after
  // recovery (queue_needed_splits), and a request queued twice once
  // filled the queue's room so that another meganode's was dropped and
  // that meganode never split.
  if (std::find(pending_.begin(), pending_.end(), meganode) == pending_.end()) pending_.push_back(meganode);
  queue_cv_->notify_one();
}

bool CellServer::try_take_split(uint32_t* meganode) {
  MutexLock lock(*queue_mu_);
  if (pending_.empty()) return false;
  *meganode = pending_.front();
  pending_.erase(pending_.begin());
  return true;
}

bool CellServer::take_split(Nanos timeout, uint32_t* meganode) {
  {
    MutexLock lock(*queue_mu_);
    if (pending_.empty()) (void)queue_cv_->wait_for(*queue_mu_, timeout);
  }
  return try_take_split(meganode);
}

void CellServer::set_layout(Layout layout) {
  std::lock_guard<ShortMutex> lock(layout_mu_);
  layout_ = std::move(layout);
}

Layout CellServer::layout() const {
  std::lock_guard<ShortMutex> lock(layout_mu_);
  return layout_;
}

Status CellServer::attach(rpc::RpcServer& rpc) {
  return attach_to(rpc, [this] { return this; });
}

Status CellServer::attach_to(rpc::RpcServer& rpc, std::function<CellServer*()> target) {
  auto none = [](uint16_t type) {
    return unavailable("cell: request type " + std::to_string(type) +
                       " reached a spare endpoint that has taken over no region yet");
  };
  for (uint16_t type : {kGetLayout, kOp, kRange, kGetRoot}) {
    LOCUS_RETURN_IF_ERROR(rpc.handle(type, "cell." + std::to_string(type),
                                     [target, type, none](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
                                       CellServer* s = target();
                                       return s == nullptr ? none(type) : s->handle(type, r, w);
                                     }));
  }
  return rpc.handle(
      kInternal, "cell.internal", [target, none](const rpc::RequestContext& ctx, rpc::Reader& r, rpc::Writer& w) {
        CellServer* s = target();
        if (s == nullptr) return none(kInternal);
        uint64_t key = 0;
        uint16_t type = 0;
        if (!(r.get(&key) && r.get(&type))) return invalid_argument("cell internal: malformed request");
        if (key != s->options_.tree_key) {
          ++s->refused_internal_;
          return Status(StatusCode::kPermissionDenied,
                        "cell: request type " + std::to_string(type) + " from node " + std::to_string(ctx.client) +
                            " is for the tree's own servers and lacks the tree's key: refused");
        }
        return s->handle_internal(type, r, w);
      });
}

Status CellServer::handle(uint16_t type, rpc::Reader& r, rpc::Writer& w) {
  switch (type) {
    case kOp:
      LOCUS_RETURN_IF_ERROR(log_if_write(type, r, false));
      return on_op(r, w, false);
    case kGetLayout:
    case kRange:
    case kGetRoot:
      return handle_internal(type, r, w);
    default:
      return invalid_argument("cell: unknown request type " + std::to_string(type));
  }
}

Status CellServer::handle_internal(uint16_t type, rpc::Reader& r, rpc::Writer& w) {
  LOCUS_RETURN_IF_ERROR(log_if_write(type, r, true));
  return dispatch(type, r, w);
}

Status CellServer::dispatch(uint16_t type, rpc::Reader& r, rpc::Writer& w) {
  switch (type) {
    case kGetLayout: {
      if (!r.at_end()) return invalid_argument("cell layout: unexpected payload");
      std::lock_guard<ShortMutex> lock(layout_mu_);
      encode_layout(layout_, w);
      return Status();
    }
    case kOp:
      return on_op(r, w, true);
    case kRange:
      return on_range(r, w);
    case kGetRoot:
      if (!r.at_end()) return invalid_argument("cell get_root: unexpected payload");
      if (!store_->owns_superblock()) return invalid_argument("cell: this server holds no superblock");
      w.put(store_->root());
      w.put(store_->root_level());
      return Status();
    case kSplitScan:
      return on_split_scan(r, w);
    case kSplitStatus: {
      uint64_t split_id = 0, root = kNullPtr;
      if (!(r.get(&split_id) && r.get(&root) && r.at_end())) {
        return invalid_argument("cell split_status: malformed request");
      }
      w.put<uint8_t>(split_linked(split_id, root) ? 1 : 0);
      return Status();
    }
    case kPendingBuilds: {
      CellRegionId source = 0;
      if (!(r.get(&source) && r.at_end())) return invalid_argument("cell pending_builds: malformed request");
      std::vector<Store::PendingBuild> builds = store_->pending_builds();
      std::erase_if(builds, [&](const Store::PendingBuild& b) { return SplitIds::source_of(b.split_id) != source; });
      w.put(static_cast<uint32_t>(builds.size()));
      for (const Store::PendingBuild& b : builds) {
        w.put(b.root);
        w.put(b.split_id);
      }
      return Status();
    }
    default:
      return on_split_step(type, r, w);
  }
}

Status CellServer::on_op(rpc::Reader& r, rpc::Writer& w, bool internal) {
  OpRequest q;
  if (!decode_op_request(r, &q)) return invalid_argument("cell op: malformed request");
  if (q.op == OpKind::kInsertChild && !internal) {
    ++refused_internal_;
    return Status(StatusCode::kPermissionDenied, "cell: insert_child is for the tree's own servers: refused");
  }
  StatusOr<OpResult> res = OpResult{};
  switch (q.op) {
    case OpKind::kContains:
      res = store_->contains(q.key, q.start);
      break;
    case OpKind::kGet:
      res = store_->get(q.key, q.start);
      break;
    case OpKind::kPut:
      res = store_->put(q.key, q.value, q.start);
      break;
    case OpKind::kDelete:
      res = store_->remove(q.key, q.start);
      break;
    case OpKind::kInsertChild:
      res = store_->insert_child(q.key, q.child, q.level, q.start);
      break;
  }
  if (!res.is_ok()) return res.status();
  // The value is a view into the store: copy it out before the charge,
  // which may let another worker of this server run (simulated cores),
  // free the extent and reuse it for another key (issue 16, defect 4).
  encode_op_response(*res, w);
  charge(res->nodes_visited);
  return Status();
}

Status CellServer::on_range(rpc::Reader& r, rpc::Writer& w) {
  RangeRequest q;
  if (!decode_range_request(r, &q)) return invalid_argument("cell range: malformed request");
  const size_t budget = options_.max_message_bytes - rpc::kHeaderBytes - kResponseOverheadBytes -
                        options_.store.geometry.key_capacity_bytes;
  rpc::Writer entries(std::span<std::byte>(entries_.data(), budget));
  const RangeResult res = store_->range(q.query, q.start, entries, budget);
  encode_range_header(res, w);
  w.bytes(entries_.data(), entries.size());
  // Charged once the staging buffer is copied out: a charge may let another
  // worker of this server run (simulated cores), and it would reuse the buffer.
  charge(res.nodes_visited);
  return Status();
}

Status CellServer::on_split_scan(rpc::Reader& r, rpc::Writer& w) {
  uint32_t meganode = 0, budget = 0;
  std::string_view cursor;
  uint8_t exclusive = 0;
  if (!(r.get(&meganode) && r.blob(&cursor) && r.get(&exclusive) && r.get(&budget) && r.at_end())) {
    return invalid_argument("cell split_scan: malformed request");
  }
  const size_t limit = options_.max_message_bytes - rpc::kHeaderBytes - kResponseOverheadBytes -
                       options_.store.geometry.key_capacity_bytes;
  budget = static_cast<uint32_t>(std::min<size_t>(budget, limit));
  rpc::Writer entries(std::span<std::byte>(entries_.data(), budget));
  bool done = false;
  std::string_view last;
  LOCUS_RETURN_IF_ERROR(store_->split_scan(meganode, cursor, exclusive != 0, entries, budget, &done, &last));
  w.put<uint8_t>(done ? 1 : 0);
  w.put<uint8_t>(entries.size() > 0 ? 1 : 0);
  w.blob(last);
  w.bytes(entries_.data(), entries.size());
  return Status();
}

Status CellServer::on_split_step(uint16_t type, rpc::Reader& r, rpc::Writer& w) {
  uint32_t meganode = 0;
  uint64_t root = kNullPtr, split_id = 0;
  switch (type) {
    case kSplitBegin: {
      if (!(r.get(&meganode) && r.get(&split_id) && r.at_end())) break;
      LOCUS_ASSIGN_OR_RETURN(SplitPlan plan, store_->split_begin(meganode, split_id));
      encode_plan(plan, w);
      return Status();
    }
    case kSplitFinish:
      if (!(r.get(&meganode) && r.get(&root) && r.get(&split_id) && r.at_end())) break;
      return store_->split_finish(meganode, root, split_id);
    case kSplitAbort:
      if (!(r.get(&meganode) && r.get(&split_id) && r.at_end())) break;
      return store_->split_abort(meganode, split_id);
    case kMeganodeCreate: {
      uint8_t level = 0;
      Bound min, max;
      uint64_t right = kNullPtr;
      if (!(r.get(&split_id) && r.get(&level) && get_bound(r, &min) && get_bound(r, &max) && r.get(&right) &&
            r.at_end())) {
        break;
      }
      LOCUS_ASSIGN_OR_RETURN(uint64_t created, store_->meganode_create(split_id, level, min, max, right));
      w.put(created);
      return Status();
    }
    case kMeganodeAppend: {
      uint32_t chunk = 0;
      if (!(r.get(&root) && r.get(&split_id) && r.get(&chunk))) break;
      return store_->meganode_append(root, split_id, chunk, r);
    }
    case kMeganodeSeal:
    case kMeganodeAbandon:
    case kMeganodeLive:
      if (!(r.get(&root) && r.get(&split_id) && r.at_end())) break;
      if (type == kMeganodeSeal) return store_->meganode_seal(root, split_id);
      if (type == kMeganodeAbandon) return store_->meganode_abandon(root, split_id);
      return store_->meganode_live(root, split_id);
    case kSetRoot: {
      uint64_t expected = kNullPtr;
      uint32_t level = 0;
      if (!(r.get(&expected) && r.get(&root) && r.get(&level) && r.at_end())) break;
      LOCUS_ASSIGN_OR_RETURN(bool installed, store_->set_root(expected, root, level));
      w.put<uint8_t>(installed ? 1 : 0);
      return Status();
    }
    case kMeganodeCount:
      if (!r.at_end()) break;
      w.put(store_->meganodes_in_use());
      w.put(store_->meganode_capacity());
      return Status();
    default:
      return invalid_argument("cell: unknown request type " + std::to_string(type));
  }
  return invalid_argument("cell: malformed request of type " + std::to_string(type));
}

}  // namespace locus::cell
