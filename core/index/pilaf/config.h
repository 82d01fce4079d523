// Pilaf's [index] keys (read in design.cc): how gets are done and how the
// server's table and extents are sized.
#pragma once

#include <cstdint>
#include <string>

#include "core/scenario/index_config.h"

namespace locus::pilaf {

struct PilafConfig final : scenario::IndexConfig {
  std::string mode = "rdma";     // rdma (gets by RDMA READ) | vo (verbs only: gets by RPC)
  uint64_t initial_buckets = 0;  // 0: twice the record count per server
  uint32_t max_kv_bytes = 16 * 1024;
};

}  // namespace locus::pilaf
