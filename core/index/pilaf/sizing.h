// How a Pilaf server's store is sized for a scenario: room for twice its
// share of the records, so the load neither grows the table nor the
// extents. Shared by the driver (which builds the stores) and the model
// (which builds one the same way to count a get's probes).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/design/memory_math.h"
#include "core/index/pilaf/config.h"
#include "core/index/pilaf/store.h"
#include "core/scenario/scenario.h"

namespace locus::pilaf {

inline StoreOptions store_options_for(const scenario::Scenario& s, const PilafConfig& config) {
  using design::saturating_mul;
  const uint64_t servers = s.platform.servers;
  const uint64_t per_server = s.workload.recordcount / servers + 1;
  StoreOptions o;
  o.max_kv_bytes = config.max_kv_bytes;
  o.initial_buckets = config.initial_buckets != 0 ? config.initial_buckets : saturating_mul(2, per_server);
  const uint64_t record_bytes = uint64_t{s.workload.fieldcount} * s.workload.fieldlength + 64;
  o.initial_extent_bytes = std::max<uint64_t>(1 << 20, saturating_mul(saturating_mul(2, per_server), record_bytes));
  return o;
}

// What Store::create makes of those options (rounded up to powers of two),
// saturating instead of wrapping for sizes no machine holds, so that
// memory estimates can refuse them.
inline uint64_t table_buckets(const StoreOptions& o) {
  return design::saturating_bit_ceil(std::max<uint64_t>(o.initial_buckets, 8));
}
inline uint64_t extent_region_bytes(const StoreOptions& o) {
  return design::saturating_bit_ceil(std::max<uint64_t>(o.initial_extent_bytes, o.max_kv_bytes));
}

}  // namespace locus::pilaf
