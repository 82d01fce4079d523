// PilafServer: see server.h.
#include "core/index/pilaf/server.h"

#include <utility>

#include "core/index/pilaf/protocol.h"

namespace locus::pilaf {

StatusOr<std::unique_ptr<PilafServer>> PilafServer::create(Env env, const StoreOptions& options,
                                                           const LogSettings& log) {
  LOCUS_ASSIGN_OR_RETURN(auto store, Store::create(options));
  std::unique_ptr<PilafServer> server(new PilafServer(env, std::move(store), options, log));
  LOCUS_RETURN_IF_ERROR(server->open_log());
  LOCUS_RETURN_IF_ERROR(server->register_all());
  return server;
}

PilafServer::PilafServer(Env env, std::unique_ptr<Store> store, StoreOptions options, LogSettings log)
    : env_(env),
      store_(std::move(store)),
      store_options_(options),
      log_settings_(std::move(log)),
      mu_(env.sync->new_mutex()) {
  store_->set_publisher(this);
}

PilafServer::~PilafServer() {
  Transport& t = *env_.transport;
  (void)t.deregister_memory(meta_region_);
  (void)t.deregister_memory(extents_region_);
  (void)t.deregister_memory(table_region_);
}

Status PilafServer::open_log() {
  if (!logged()) return Status();
  // Replay goes to the store before it is published: no publisher yet, and
  // a growth during replay only swaps memory nobody reads.
  store_->set_publisher(nullptr);
  auto opened = StoreLog::open(env_, log_settings_, *store_, &recovery_);
  store_->set_publisher(this);
  if (!opened.is_ok())
    return Status(opened.status().code(), "pilaf log " + log_settings_.dir + ": " + opened.status().message());
  log_ = std::move(opened).value();
  return Status();
}

Status PilafServer::register_all() {
  Transport& t = *env_.transport;
  LOCUS_ASSIGN_OR_RETURN(table_region_, t.register_memory(store_->table_memory(), store_->table_bytes(), kRemoteRead));
  LOCUS_ASSIGN_OR_RETURN(extents_region_,
                         t.register_memory(store_->extents_memory(), store_->extents_bytes(), kRemoteRead));
  LOCUS_ASSIGN_OR_RETURN(meta_region_, t.register_memory(store_->meta_memory(), kMetaBytes, kRemoteRead));
  layout_.epoch = store_->epoch();
  layout_.bucket_count = store_->bucket_count();
  layout_.max_kv_bytes = store_->max_kv_bytes();
  layout_.table = table_region_.remote();
  layout_.extents = extents_region_.remote();
  layout_.meta = meta_region_.remote();
  return Status();
}

Status PilafServer::put(std::string_view key, std::string_view value) {
  MutexLock lock(*mu_);
  return put_locked(key, value);
}

Status PilafServer::put_locked(std::string_view key, std::string_view value) {
  if (logged()) {
    if (log_ == nullptr) return unavailable("pilaf put: the server's log is closed (a restart failed)");
    // What the store rejects for its shape is rejected before it is logged,
    // so replay never meets a put that was refused.
    if (key.empty()) return invalid_argument("pilaf put: empty key");
    const uint64_t bytes = uint64_t{kExtentHeaderBytes} + key.size() + value.size();
    if (bytes > store_->max_kv_bytes()) {
      return invalid_argument("pilaf put: key+value of " + std::to_string(bytes) + " bytes exceeds max_kv_bytes " +
                              std::to_string(store_->max_kv_bytes()));
    }
    if (Status st = log_->log_put(key, value); !st.is_ok()) return unavailable("pilaf put: " + st.message());
  }
  LOCUS_RETURN_IF_ERROR(store_->put(key, value));
  // The put is logged and applied; a checkpoint that fails leaves the log
  // as it was (or broken, failing the next put), so it is not this put's error.
  if (log_ != nullptr) (void)log_->maybe_checkpoint(*store_);
  return Status();
}

Status PilafServer::remove(std::string_view key) {
  MutexLock lock(*mu_);
  return remove_locked(key);
}

Status PilafServer::remove_locked(std::string_view key) {
  std::string_view value;
  if (!store_->find(key, &value)) return not_found("pilaf delete: no such key");
  if (logged()) {
    if (log_ == nullptr) return unavailable("pilaf delete: the server's log is closed (a restart failed)");
    if (Status st = log_->log_delete(key); !st.is_ok()) return unavailable("pilaf delete: " + st.message());
  }
  return store_->remove(key);
}

StatusOr<log::RecoveryReport> PilafServer::restart() {
  if (!logged()) return invalid_argument("pilaf restart: the server has no log directory to recover from");
  MutexLock lock(*mu_);
  const uint64_t epoch = store_->epoch();
  // The old process's memory goes: unreachable first, then freed.
  Transport& t = *env_.transport;
  (void)t.deregister_memory(meta_region_);
  (void)t.deregister_memory(extents_region_);
  (void)t.deregister_memory(table_region_);
  table_region_ = extents_region_ = meta_region_ = Region{};
  log_.reset();
  store_.reset();
  LOCUS_ASSIGN_OR_RETURN(store_, Store::create(store_options_));
  store_->set_epoch(epoch + 1);
  LOCUS_RETURN_IF_ERROR(open_log());
  LOCUS_RETURN_IF_ERROR(register_all());
  return recovery_;
}

Status PilafServer::tick() {
  MutexLock lock(*mu_);
  return log_ != nullptr ? log_->tick() : Status();
}
Status PilafServer::region_moving(RegionKind kind, void* mem, uint64_t bytes) {
  LOCUS_ASSIGN_OR_RETURN(Region fresh, env_.transport->register_memory(mem, bytes, kRemoteRead));
  (kind == RegionKind::kTable ? moving_table_ : moving_extents_) = fresh;
  return Status();
}

void PilafServer::region_move_abandoned(RegionKind kind) {
  Region& moving = kind == RegionKind::kTable ? moving_table_ : moving_extents_;
  (void)env_.transport->deregister_memory(moving);
  moving = Region{};
}

Status PilafServer::region_replaced(RegionKind kind) {
  Region& old = kind == RegionKind::kTable ? table_region_ : extents_region_;
  Region& fresh = kind == RegionKind::kTable ? moving_table_ : moving_extents_;
  const Region previous = old;
  old = std::exchange(fresh, Region{});
  layout_.epoch = store_->epoch();
  layout_.bucket_count = store_->bucket_count();
  (kind == RegionKind::kTable ? layout_.table : layout_.extents) = old.remote();
  // The old registration goes before the old memory is freed; reads of it
  // from now on fail with a remote access error, and clients fetch the
  // layout again. A failure here leaves the new region published.
  return env_.transport->deregister_memory(previous);
}

Status PilafServer::attach(rpc::RpcServer& rpc) {
  LOCUS_RETURN_IF_ERROR(
      rpc.handle(kGetLayout, "pilaf.layout", [this](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
        MutexLock lock(*mu_);
        encode_layout(layout_, w);
        return Status();
      }));
  LOCUS_RETURN_IF_ERROR(rpc.handle(kPut, "pilaf.put", [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) {
    std::string_view key, value;
    if (!r.blob(&key) || !r.blob(&value) || !r.at_end()) {
      return invalid_argument("pilaf put: malformed request");
    }
    MutexLock lock(*mu_);
    return put_locked(key, value);
  }));
  LOCUS_RETURN_IF_ERROR(
      rpc.handle(kDelete, "pilaf.delete", [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) {
        std::string_view key;
        if (!r.blob(&key) || !r.at_end()) return invalid_argument("pilaf delete: malformed request");
        MutexLock lock(*mu_);
        return remove_locked(key);
      }));
  return rpc.handle(kGet, "pilaf.get", [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
    std::string_view key, value;
    if (!r.blob(&key) || !r.at_end()) {
      return invalid_argument("pilaf get: malformed request");
    }
    MutexLock lock(*mu_);
    if (!store_->find(key, &value)) return not_found("pilaf get: no such key");
    w.blob(value);
    return Status();
  });
}

}  // namespace locus::pilaf
