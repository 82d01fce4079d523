// PilafServer: the server side of Pilaf. It owns the Store, registers its
// three regions with the least rights clients need (remote READ only; all
// writes are the server's), and serves put, delete, layout and (VO mode)
// get requests over RPC. It is the Store's RegionPublisher: a replaced
// region is registered, the epoch bumped and the old region deregistered,
// so a client still holding the old layout gets a remote access error and
// re-fetches the layout instead of reading stale memory.
#pragma once

#include <memory>

#include "core/index/pilaf/store.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/env.h"

namespace locus::pilaf {

class PilafServer final : public RegionPublisher {
 public:
  static StatusOr<std::unique_ptr<PilafServer>> create(Env env, const StoreOptions& options);
  ~PilafServer() override;

  // Adds Pilaf's handlers to `rpc` (which may serve other things too).
  Status attach(rpc::RpcServer& rpc);

  Store& store() { return *store_; }
  Layout layout() const { return layout_; }
  Status region_moving(RegionKind kind, void* mem, uint64_t bytes) override;
  void region_move_abandoned(RegionKind kind) override;
  Status region_replaced(RegionKind kind) override;

 private:
  PilafServer(Env env, std::unique_ptr<Store> store);
  Status register_all();

  Env env_;
  std::unique_ptr<Store> store_;
  Region table_region_, extents_region_, meta_region_;
  Region moving_table_, moving_extents_;  // registered by region_moving, not yet published
  Layout layout_;
};

}  // namespace locus::pilaf
