// Cell's [index] keys (read in design.cc): the tree's geometry, its
// servers' CPU costs and the clients' caches. max_kv_bytes bounds one
// extent (key, value and header).
#pragma once

#include <cstdint>

#include "core/log/log_keys.h"
#include "core/scenario/index_config.h"

namespace locus::cell {

struct CellConfig final : scenario::IndexConfig {
  uint32_t max_kv_bytes = 16 * 1024;
  uint32_t node_bytes = 1024;            // the paper's 1 KB nodes
  uint32_t key_capacity_bytes = 32;      // YCSB keys are up to 24 bytes
  uint64_t meganode_bytes = 2ull << 20;  // a multiple of node_bytes
  uint32_t meganodes_per_server = 32;
  uint64_t extents_bytes = 0;          // 0: sized from the records; else a power of two
  double split_fill_fraction = 0.6;    // a meganode asks to split at this share of its nodes
  double server_request_us = 3.7;      // server CPU per request (Cell testbed: 6.3 us per
  double server_node_visit_us = 0.52;  //   5-level search with messaging)
  double client_node_us = 0;           // client CPU per node examined client-side
  uint32_t cache_min_distance = 4;     // clients cache nodes this many levels above the leaves
  uint64_t node_cache_bytes = 128ull << 20;
  log::LogKeys log;  // server_log.cc: each store logs under log_dir/region<r>
  // A store's checkpoint (server_log.cc) once its log has grown by this
  // percentage of the last checkpoint's size and by at least this many MB:
  // Redis's auto-aof-rewrite defaults, as Pilaf's.
  uint32_t log_rewrite_percentage = 100;
  uint64_t log_rewrite_min_mb = 64;
  // Stores (a node region and its extents region, one endpoint each) per
  // server machine: what a takeover divides among the survivors.
  uint32_t stores_per_server = 1;
  // takeover.h: when a server machine dies (faults.crash_servers), the
  // survivors take over its stores from their logs (needs log_dir).
  bool takeover = false;
  // Spare endpoints per machine for stores taken over; 0: enough for one
  // dead machine, ceil(stores_per_server / (platform.servers - 1)).
  uint32_t spares_per_server = 0;
  // A run refuses a log_dir holding an earlier run's logs unless this is
  // set, when the stores replay them and, if they recovered records, are
  // not loaded again (driver.cc).
  bool log_replay = false;
};

}  // namespace locus::cell
