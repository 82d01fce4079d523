// `locus bench --micro blink`: the server-side local search rate of Cell's
// Store (the descent a search RPC's handler runs through one meganode's
// B-link tree, without the RPC) against absl::btree_map on the same keys,
// one core, the same random lookup sequence for both, best of several
// rounds. Two sizes: `records` keys (a tree several levels deep, mostly out
// of cache) and `small_records` (in cache).
//
// Keys are random 64-bit integers; Cell stores them as 8-byte big-endian
// strings (byte order is integer order), absl::btree_map holds the
// integers themselves. Rows per size: search (contains on both sides), get
// (Cell resolves the leaf's extent and views the value; absl reads the
// mapped value), and search against absl::btree_map<std::string, ...>,
// Cell's own key type, looked up by string_view.
#pragma once

#include <cstdint>

#include "core/common/status.h"

namespace locus::cli {

struct MicroBlinkConfig {
  uint64_t records = 1'000'000;
  uint64_t small_records = 10'000;
  uint64_t lookups = 2'000'000;
  uint32_t rounds = 5;
  uint32_t node_bytes = 1024;  // the paper's node size
  uint64_t seed = 1;
};

Status run_micro_blink(const MicroBlinkConfig& config);

// Cell's local search rate on this machine (searches per second, best of
// config.rounds, over config.records keys) and the tree's levels: what
// `locus calibrate --testbed cell` sets against the Cell testbed's
// 379 K searches/s (shared/calibration.md).
struct LocalSearchRate {
  double per_s = 0;
  uint32_t levels = 0;
};
StatusOr<LocalSearchRate> cell_local_search_rate(const MicroBlinkConfig& config);

}  // namespace locus::cli
