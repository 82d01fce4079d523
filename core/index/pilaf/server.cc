// PilafServer: see server.h.
#include "core/index/pilaf/server.h"

#include <utility>

#include "core/index/pilaf/protocol.h"

namespace locus::pilaf {

StatusOr<std::unique_ptr<PilafServer>> PilafServer::create(Env env, const StoreOptions& options) {
  LOCUS_ASSIGN_OR_RETURN(auto store, Store::create(options));
  std::unique_ptr<PilafServer> server(new PilafServer(env, std::move(store)));
  LOCUS_RETURN_IF_ERROR(server->register_all());
  return server;
}

PilafServer::PilafServer(Env env, std::unique_ptr<Store> store)
    : env_(env), store_(std::move(store)) {
  store_->set_publisher(this);
}

PilafServer::~PilafServer() {
  Transport& t = *env_.transport;
  (void)t.deregister_memory(meta_region_);
  (void)t.deregister_memory(extents_region_);
  (void)t.deregister_memory(table_region_);
}

Status PilafServer::register_all() {
  Transport& t = *env_.transport;
  LOCUS_ASSIGN_OR_RETURN(table_region_,
                         t.register_memory(store_->table_memory(), store_->table_bytes(), kRemoteRead));
  LOCUS_ASSIGN_OR_RETURN(extents_region_, t.register_memory(store_->extents_memory(),
                                                            store_->extents_bytes(), kRemoteRead));
  LOCUS_ASSIGN_OR_RETURN(meta_region_,
                         t.register_memory(store_->meta_memory(), kMetaBytes, kRemoteRead));
  layout_.epoch = store_->epoch();
  layout_.bucket_count = store_->bucket_count();
  layout_.max_kv_bytes = store_->max_kv_bytes();
  layout_.table = table_region_.remote();
  layout_.extents = extents_region_.remote();
  layout_.meta = meta_region_.remote();
  return Status();
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
  LOCUS_RETURN_IF_ERROR(rpc.handle(kGetLayout, "pilaf.layout",
                                   [this](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
                                     encode_layout(layout_, w);
                                     return Status();
                                   }));
  LOCUS_RETURN_IF_ERROR(rpc.handle(
      kPut, "pilaf.put", [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) {
        std::string_view key, value;
        if (!r.blob(&key) || !r.blob(&value) || !r.at_end()) {
          return invalid_argument("pilaf put: malformed request");
        }
        return store_->put(key, value);
      }));
  LOCUS_RETURN_IF_ERROR(rpc.handle(
      kDelete, "pilaf.delete", [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) {
        std::string_view key;
        if (!r.blob(&key) || !r.at_end()) return invalid_argument("pilaf delete: malformed request");
        return store_->remove(key);
      }));
  return rpc.handle(kGet, "pilaf.get",
                    [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
                      std::string_view key, value;
                      if (!r.blob(&key) || !r.at_end()) {
                        return invalid_argument("pilaf get: malformed request");
                      }
                      if (!store_->find(key, &value)) return not_found("pilaf get: no such key");
                      w.blob(value);
                      return Status();
                    });
}

}  // namespace locus::pilaf
