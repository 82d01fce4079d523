// The micro index's [index] keys (read in design.cc). Each operation is one
// RPC (handler "micro.op") with probability rpc_fraction, otherwise
// reads_per_op dependent READs of read_bytes.
#pragma once

#include <cstdint>

#include "core/scenario/index_config.h"

namespace locus::micro {

struct MicroConfig final : scenario::IndexConfig {
  double rpc_fraction = 1.0;
  uint32_t reads_per_op = 5;
  uint32_t read_bytes = 1024;
  uint32_t rpc_request_bytes = 64;
  uint32_t rpc_response_bytes = 64;
  // Bytes the server registers for READs. READs land in its first MiB;
  // what the size changes is what a NIC's address-translation cache must
  // cover (the simulator's [platform.nic] atc_*). Untouched pages cost no
  // memory.
  uint64_t region_bytes = 1 << 20;
};

}  // namespace locus::micro
