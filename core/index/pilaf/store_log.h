// StoreLog: Pilaf's operation log. The server logs every put and delete
// before applying it (pilaf-kv-atc13, "Logging": the server logs puts and
// deletes to local disk), in a DurableLog (core/log) under the server's log
// directory, and a restarted server rebuilds its table and extents by
// replaying the newest checkpoint and the log after it into a fresh Store.
//
// Logged before applied, and the put acknowledged only once its record is
// written: a value a client could read by RDMA is never one a restart
// forgets (the linearizability check of the fault campaign would see a
// read of a value that later vanished). With fsync=interval (the default)
// the record is in the kernel's cache when the put is acknowledged, so a
// killed server process loses nothing and a machine crash loses at most the
// interval; every_batch also survives the machine.
//
// Compaction as Redis rewrites its append-only file: once the log has grown
// by rewrite_percentage of the last checkpoint's size (and is at least
// rewrite_min_bytes), the server writes a new checkpoint of its live keys
// and starts an empty log, so recovery reads at most about
// (1 + rewrite_percentage/100) x the live data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/index/pilaf/store.h"
#include "core/log/durable_log.h"

namespace locus::pilaf {

struct LogSettings {
  std::string dir;  // empty: no log
  log::LogOptions options;
  // Redis's auto-aof-rewrite-percentage and auto-aof-rewrite-min-size
  // defaults (redis.conf: 100 and 64mb).
  uint32_t rewrite_percentage = 100;
  uint64_t rewrite_min_bytes = 64ull << 20;
};

class StoreLog {
 public:
  // Recovers `store` (empty) from `settings.dir` and opens its log.
  static StatusOr<std::unique_ptr<StoreLog>> open(const Env& env, const LogSettings& settings, Store& store,
                                                  log::RecoveryReport* report);

  // Logs a put or delete (written, and synced per the policy) before the
  // caller applies it. The caller holds its own lock over every use of
  // this log (or runs set-up code), so the log takes none of its own.
  Status log_put(std::string_view key, std::string_view value);
  Status log_delete(std::string_view key);
  // Writes a checkpoint of `store` if the log has grown past the rewrite
  // threshold. The caller holds its state still meanwhile.
  Status maybe_checkpoint(const Store& store);
  Status checkpoint(const Store& store);
  Status tick() { return log_->tick(); }
  uint64_t checkpoints() const { return checkpoints_; }

  // The records, exposed for tests and the benchmark.
  static void encode_put(std::string_view key, std::string_view value, std::string* out);
  static void encode_delete(std::string_view key, std::string* out);
  static Status apply(Store& store, std::string_view record);

 private:
  StoreLog(LogSettings settings, std::unique_ptr<log::DurableLog> log)
      : settings_(std::move(settings)), log_(std::move(log)) {}

  LogSettings settings_;
  std::unique_ptr<log::DurableLog> log_;
  uint64_t checkpoint_bytes_ = 0;  // the last checkpoint's size, for the rewrite threshold
  uint64_t checkpoints_ = 0;
  std::string scratch_;
};

}  // namespace locus::pilaf
