// PilafServer: the server side of Pilaf. It owns the Store, registers its
// three regions with the least rights clients need (remote READ only; all
// writes are the server's), and serves put, delete, layout and (VO mode)
// get requests over RPC. It is the Store's RegionPublisher: a replaced
// region is registered, the epoch bumped and the old region deregistered,
// so a client still holding the old layout gets a remote access error and
// re-fetches the layout instead of reading stale memory.
//
// With a log directory (LogSettings, store_log.h) every put and delete is
// logged before it is applied, and restart() does what a restarted server
// process does: it drops the table and extents, rebuilds them from the
// checkpoint and log, and publishes them at a higher epoch (clients holding
// the old regions get remote access errors and fetch the new layout).
// A mutex orders handlers against restart() and the checkpoints.
#pragma once

#include <memory>

#include "core/index/pilaf/store.h"
#include "core/index/pilaf/store_log.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/env.h"

namespace locus::pilaf {

class PilafServer final : public RegionPublisher {
 public:
  static StatusOr<std::unique_ptr<PilafServer>> create(Env env, const StoreOptions& options,
                                                       const LogSettings& log = {});
  ~PilafServer() override;

  // Adds Pilaf's handlers to `rpc` (which may serve other things too).
  Status attach(rpc::RpcServer& rpc);

  // A put from this process (tests, benchmarks): logged like a client's.
  Status put(std::string_view key, std::string_view value);
  // The same from set-up code before serving: takes no lock (SimGrid runs
  // set-up code outside any actor, where no Env lock may be taken).
  Status load(std::string_view key, std::string_view value) { return put_locked(key, value); }
  // The same for a delete (tests; the delete handler's path).
  Status remove(std::string_view key);
  // Rebuilds the store from the log, as a restarted process would.
  StatusOr<log::RecoveryReport> restart();
  const log::RecoveryReport& last_recovery() const { return recovery_; }
  // Interval fsync policy: syncs when the interval has passed (a daemon calls it).
  Status tick();
  bool logged() const { return !log_settings_.dir.empty(); }

  Store& store() { return *store_; }
  Layout layout() const { return layout_; }
  Status region_moving(RegionKind kind, void* mem, uint64_t bytes) override;
  void region_move_abandoned(RegionKind kind) override;
  Status region_replaced(RegionKind kind) override;

 private:
  PilafServer(Env env, std::unique_ptr<Store> store, StoreOptions options, LogSettings log);
  Status register_all();
  Status open_log();
  Status put_locked(std::string_view key, std::string_view value);
  Status remove_locked(std::string_view key);

  Env env_;
  std::unique_ptr<Store> store_;
  Region table_region_, extents_region_, meta_region_;
  Region moving_table_, moving_extents_;  // registered by region_moving, not yet published
  Layout layout_;
  StoreOptions store_options_;
  LogSettings log_settings_;
  std::unique_ptr<StoreLog> log_;
  log::RecoveryReport recovery_;
  std::unique_ptr<Mutex> mu_;
};

}  // namespace locus::pilaf
