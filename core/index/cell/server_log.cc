// CellServer's per-region log and recovery (Cell paper, section 2.6: each
// server logs the writes to its own regions and a recovering server
// replays them).
//
// What is logged: every request that changes the store (a put, delete or
// parent insert, and every split step: begin, finish, abort, a target's
// create, append, seal, abandon, live, and set_root), as it came (u16 type,
// then the request's bytes), before it is applied; the reply goes out only
// once the record is written (synced under every_batch). Replay feeds the
// records to a fresh store in log order, which is the order they were
// applied (one RPC actor serves the store). The store is deterministic, so
// replay rebuilds every node and extent at the offset it had: a pointer
// names a region id and an offset, and no pointer held elsewhere (another
// server's meganode, a parent's child, a client's cache) changes.
//
// Node splits inside a meganode need no records of their own: one put
// does all of its Sagiv steps before the next request is served, and its
// record either is in the log (replay redoes the whole put) or is not (the
// put was never acknowledged). A meganode split spans requests and servers,
// so its begin and finish (or abort) records on the source and create ...
// live (or abandon) records on the target bracket it; resolve_splits() ends
// what a crash left between them.
#include <array>
#include <cstring>

#include "core/index/cell/server.h"

namespace locus::cell {
namespace {

bool changes_store(uint16_t type) {
  switch (type) {
    case kSplitBegin:
    case kSplitFinish:
    case kSplitAbort:
    case kMeganodeCreate:
    case kMeganodeAppend:
    case kMeganodeSeal:
    case kMeganodeAbandon:
    case kMeganodeLive:
    case kSetRoot:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status CellServer::open_log() {
  if (options_.log_dir.empty()) return Status();
  Env env = env_;
  if (options_.log_files != nullptr) env.files = options_.log_files;
  if (env.files == nullptr) return invalid_argument("cell: log_dir is set but this backend gives no local files");
  const std::string dir = options_.log_dir + "/region" + std::to_string(store_->node_region());
  // Region 0's first tree is planted before the log's records, as it was
  // before the first of them was written.
  if (store_->owns_superblock()) {
    LOCUS_RETURN_IF_ERROR(store_->init_tree());
    planted_ = true;
  }
  replaying_ = true;
  auto opened = log::DurableLog::open(
      env, dir, options_.log, [this](std::string_view record) { return apply_record(record); }, &recovery_);
  replaying_ = false;
  if (!opened.is_ok()) {
    return Status(opened.status().code(), "cell log " + dir + ": " + opened.status().message());
  }
  log_ = std::move(opened).value();
  split_ids_.skip_past(store_->last_split_id());
  return Status();
}

Status CellServer::resolve_replayed_splits(const std::vector<CellServer*>& servers) {
  if (servers.empty()) return Status();
  CellServer* superblock = servers.front();
  auto finished = [&](uint64_t split_id, uint64_t root) {
    if (superblock->store().root() == root) return true;
    for (CellServer* s : servers) {
      if (s->store().node_region() == SplitIds::source_of(split_id)) return s->store().split_finished(split_id, root);
    }
    return false;
  };
  auto is_tree_root = [&](uint64_t root) { return superblock->store().root() == root; };
  for (CellServer* s : servers) LOCUS_RETURN_IF_ERROR(s->resolve_splits(finished, is_tree_root));
  return Status();
}

Status CellServer::plant_tree() {
  if (planted_) return Status();
  planted_ = true;
  return store_->init_tree();
}

Status CellServer::apply_record(std::string_view record) {
  uint16_t type = 0;
  if (record.size() < sizeof type) return internal_error("cell log: a record shorter than its type");
  std::memcpy(&type, record.data(), sizeof type);
  rpc::Reader r(std::as_bytes(std::span<const char>(record.data() + sizeof type, record.size() - sizeof type)));
  // A checkpoint's records restore the store; a bad one fails recovery.
  if (type >= kCheckpointStore) return store_->restore(type, r);
  rpc::Writer w(std::span<std::byte>(entries_.data(), entries_.size()));
  // A request refused when it came (a busy range, a late split step) is
  // refused again: the store is where it was then.
  (void)dispatch(type, r, w);
  return Status();
}

Status CellServer::log_if_write(uint16_t type, const rpc::Reader& request, bool internal) {
  if (log_ == nullptr || replaying_) return Status();
  const std::span<const std::byte> body = request.rest();
  bool write = changes_store(type);
  if (type == kOp && !body.empty()) {
    const auto op = static_cast<OpKind>(body[0]);
    write = op == OpKind::kPut || op == OpKind::kDelete || (op == OpKind::kInsertChild && internal);
  }
  if (!write) return Status();
  appending_.fetch_add(1, std::memory_order_seq_cst);
  struct Done {
    std::atomic<uint32_t>& n;
    ~Done() { n.fetch_sub(1, std::memory_order_seq_cst); }
  } done{appending_};
  if (fenced_.load(std::memory_order_seq_cst)) {
    return unavailable("cell: request type " + std::to_string(type) + " not applied: this server is dead (fenced)");
  }
  MutexLock lock(*log_mu_);  // tick()'s interval sync runs on a daemon of its own
  maybe_checkpoint();
  record_.resize(sizeof type + body.size());
  std::memcpy(record_.data(), &type, sizeof type);
  if (!body.empty()) std::memcpy(record_.data() + sizeof type, body.data(), body.size());
  if (Status st = log_->append_exclusive(record_); !st.is_ok()) {
    return unavailable("cell: request type " + std::to_string(type) + " not applied: " + st.message());
  }
  return Status();
}

void CellServer::maybe_checkpoint() {
  const uint64_t grown = log_->log_bytes();
  if (grown == 0 || grown < options_.checkpoint_min_bytes || grown < checkpoint_retry_at_ ||
      grown * 100 < log_->checkpoint_bytes() * options_.checkpoint_percentage) {
    return;
  }
  // Every record so far is applied (this runs before the next is added),
  // so the checkpoint equals the last one plus the log since it. One that
  // fails before naming itself leaves that generation in use: the request
  // goes on, and the next try waits for as many bytes again. One that
  // fails after breaks the log, and this request's append reports it.
  if (Status st = checkpoint_locked(); !st.is_ok()) {
    checkpoint_retry_at_ = grown + std::max(options_.checkpoint_min_bytes, grown);
    last_checkpoint_error_ = st.message();
    checkpoint_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string CellServer::last_checkpoint_error() const {
  if (log_ == nullptr) return {};
  MutexLock lock(*log_mu_);
  return last_checkpoint_error_;
}

Status CellServer::checkpoint() {
  if (log_ == nullptr) return invalid_argument("cell: checkpoint of a store that logs nothing (no log_dir)");
  MutexLock lock(*log_mu_);
  return checkpoint_locked();
}

Status CellServer::checkpoint_locked() {
  if (Status st = log_->checkpoint([&](const log::CheckpointSink& sink) { return store_->write_checkpoint(sink); });
      !st.is_ok()) {
    return Status(st.code(), "cell store region " + std::to_string(store_->node_region()) + ": checkpoint " +
                                 log_->checkpoint_path(log_->generation() + 1) + " failed: " + st.message());
  }
  // Recovery rebuilds the extent allocator from the checkpoint: so does the
  // live store, or the records after it would place extents elsewhere.
  LOCUS_RETURN_IF_ERROR(store_->adopt_checkpoint());
  checkpoint_retry_at_ = 0;
  checkpoints_.fetch_add(1, std::memory_order_relaxed);
  return Status();
}

void CellServer::fence(Clock& clock) {
  fenced_.store(true, std::memory_order_seq_cst);
  while (appending_.load(std::memory_order_seq_cst) > 0) clock.sleep_for(kMillisecond);
}

bool CellServer::split_linked(uint64_t split_id, uint64_t root) const {
  return store_->split_finished(split_id, root) || (store_->owns_superblock() && store_->root() == root);
}

Status CellServer::local_step(uint16_t type, uint64_t a, uint64_t split_id) {
  std::array<std::byte, 2 * sizeof(uint64_t)> buf{};
  rpc::Writer w(std::span<std::byte>(buf.data(), buf.size()));
  if (type == kSplitAbort) {
    w.put(static_cast<uint32_t>(a));
  } else {
    w.put(a);
  }
  w.put(split_id);
  rpc::Reader r(std::span<const std::byte>(buf.data(), w.size()));
  rpc::Writer out(std::span<std::byte>(entries_.data(), entries_.size()));
  return handle_internal(type, r, out);
}

Status CellServer::resolve_splits(const std::function<bool(uint64_t split_id, uint64_t root)>& finished,
                                  const std::function<bool(uint64_t root)>& is_tree_root) {
  // A target first: a meganode the source already linked is declared live
  // (abandoning it would lose its keys), any other is freed.
  for (const Store::PendingBuild& b : store_->pending_builds()) {
    LOCUS_RETURN_IF_ERROR(
        local_step(finished(b.split_id, b.root) ? kMeganodeLive : kMeganodeAbandon, b.root, b.split_id));
  }
  return abort_pending_splits(is_tree_root);
}

Status CellServer::abort_pending_splits(const std::function<bool(uint64_t root)>& is_tree_root) {
  // A source's split that began and neither finished nor aborted: its
  // driver died with the server, so nothing will finish it. Unlock X_right.
  for (const Store::PendingSplit& p : store_->pending_splits()) {
    LOCUS_RETURN_IF_ERROR(local_step(kSplitAbort, p.meganode, p.split_id));
  }
  // The last step of every recovery: the split queue the live store would
  // have (an aborted split is done anew if its meganode still needs it).
  if (is_tree_root || !store_->owns_superblock()) {
    store_->queue_needed_splits(is_tree_root);
  } else {
    store_->queue_needed_splits([this](uint64_t root) { return store_->root() == root; });
  }
  return Status();
}

}  // namespace locus::cell
