// Pilaf's [index] keys (read in design.cc): how gets are done and how the
// server's table and extents are sized, and where and how it logs
// (store_log.h: server k logs under log_dir/server<k>).
#pragma once

#include <cstdint>
#include <string>

#include "core/scenario/index_config.h"

namespace locus::pilaf {

struct PilafConfig final : scenario::IndexConfig {
  std::string mode = "rdma";     // rdma (gets by RDMA READ) | vo (verbs only: gets by RPC)
  uint64_t initial_buckets = 0;  // 0: twice the record count per server
  uint32_t max_kv_bytes = 16 * 1024;
  std::string log_dir;                 // empty: nothing logged, nothing survives a restart
  // A run whose log_dir holds an earlier run's logs is refused unless this
  // asks to start from them: each server replays its log, and a server that
  // recovered records is not loaded again (its records, with every update
  // and delete made before, came back from the log).
  bool log_replay = false;
  std::string log_fsync = "interval";  // every_batch | interval | never (log_writer.h)
  // Redis's appendfsync everysec (redis.conf), the asynchronous logging the
  // Pilaf paper describes.
  uint32_t log_fsync_interval_ms = 1000;
  uint32_t log_rewrite_percentage = 100;  // store_log.h: Redis's defaults
  uint64_t log_rewrite_min_mb = 64;
};

}  // namespace locus::pilaf
