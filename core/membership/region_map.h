// The region map: which server owns each region (Cell's pointers name a
// region id and an offset, never a server, so a takeover moves regions by
// rewriting this map alone, with no pointer changed; cell paper 2.6). It is
// stored as the membership value kRegionMapKey, one "REGION SERVER" line
// per region, and rewritten only by compare-and-set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/membership/membership.h"

namespace locus::membership {

using RegionMap = std::map<uint32_t, std::string>;  // region id -> member name

struct VersionedRegionMap {
  RegionMap regions;
  int64_t version = Versioned::kAbsent;
};

std::string encode_region_map(const RegionMap& map);
// Fails naming the line on anything but "REGION SERVER" lines (a region id
// in [0, 2^32), a member name) with no region twice.
StatusOr<RegionMap> decode_region_map(const std::string& text);

StatusOr<VersionedRegionMap> read_region_map(Membership& membership);
// compare_and_set of the encoded map; kAborted when `expected_version` is stale.
StatusOr<int64_t> write_region_map(Membership& membership, const RegionMap& map, int64_t expected_version);

// Moves every region of `dead` to `survivors`, dealt round-robin in region
// order, as one compare-and-set: retried on a stale version (another
// survivor's concurrent takeover), a no-op when `dead` owns nothing any
// more. Returns the map written (or found). The survivors then recover the
// regions from their logs (docs/membership.md).
StatusOr<VersionedRegionMap> take_over(Membership& membership, const std::string& dead,
                                       const std::vector<std::string>& survivors);

}  // namespace locus::membership
