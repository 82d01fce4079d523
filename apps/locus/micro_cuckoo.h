// `locus bench --micro cuckoo`: the local lookup rate of Pilaf's cuckoo
// table against libcuckoo's cuckoohash_map::find on the same keys and the
// same lookup sequence, single-threaded, best of several rounds each.
#pragma once

#include <cstdint>

#include "core/common/status.h"

namespace locus::cli {

struct MicroCuckooConfig {
  uint64_t records = 1'000'000;
  uint64_t lookups = 5'000'000;
  uint32_t value_bytes = 100;
  uint32_t rounds = 5;
  uint64_t seed = 1;
};

Status run_micro_cuckoo(const MicroCuckooConfig& config);

// What run_micro_cuckoo allocates, from the sizes it allocates with: the
// key arena, the Pilaf store (table, extents, allocator bookkeeping), the
// baseline's pairs and their values, the lookup order.
uint64_t micro_cuckoo_bytes(const MicroCuckooConfig& config);

}  // namespace locus::cli
