// `locus bench --micro namtree`: the NAM index's local B-link tree search
// (core/index/nam/tree.h over a memory server's own arena: the traversal a
// coarse-grained memory server runs for a lookup RPC, optimistic lock
// coupling on local words) against absl::btree_map<uint64_t, uint64_t>
// lookups of the same 8-byte keys, one core, the same random lookup
// sequence for both, best of several rounds. Two sizes: `records` keys (a
// tree several levels deep, mostly out of cache) and `small_records` (in
// cache). Issue 19's goal: locus/absl at least 1.0. Also timed: the same
// lookups with the epoch announcement a coarse-grained server's request
// tree makes first (server/s), which the goal leaves out.
#pragma once

#include <cstdint>

#include "core/common/status.h"

namespace locus::cli {

struct MicroNamtreeConfig {
  uint64_t records = 1'000'000;
  uint64_t small_records = 10'000;
  uint64_t lookups = 2'000'000;
  uint32_t rounds = 5;
  uint32_t page_bytes = 1024;  // calibration.md's 1 KB pages
  uint64_t seed = 1;
};

Status run_micro_namtree(const MicroNamtreeConfig& config);

}  // namespace locus::cli
