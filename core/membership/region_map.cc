// Region map encoding and takeover; see region_map.h.
#include "core/membership/region_map.h"

#include <charconv>
#include <sstream>

namespace locus::membership {

std::string encode_region_map(const RegionMap& map) {
  std::string text;
  for (const auto& [region, server] : map) text += std::to_string(region) + " " + server + "\n";
  return text;
}

StatusOr<RegionMap> decode_region_map(const std::string& text) {
  RegionMap map;
  std::istringstream in(text);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty()) continue;
    const auto bad = [&](const std::string& what) {
      return corruption("region map line " + std::to_string(line_number) + " '" + line + "': " + what);
    };
    const size_t space = line.find(' ');
    if (space == std::string::npos) return bad("expected 'REGION SERVER'");
    uint32_t region = 0;
    const char* end = line.data() + space;
    const auto [ptr, ec] = std::from_chars(line.data(), end, region);
    if (ec != std::errc() || ptr != end) return bad("the region id is not an integer in [0, 2^32)");
    const std::string server = line.substr(space + 1);
    if (!check_key(server).is_ok()) return bad("'" + server + "' is not a member name");
    if (!map.emplace(region, server).second) return bad("region " + std::to_string(region) + " appears twice");
  }
  return map;
}

StatusOr<VersionedRegionMap> read_region_map(Membership& membership) {
  LOCUS_ASSIGN_OR_RETURN(Versioned stored, membership.get(kRegionMapKey));
  VersionedRegionMap out;
  out.version = stored.version;
  if (stored.version != Versioned::kAbsent) {
    LOCUS_ASSIGN_OR_RETURN(out.regions, decode_region_map(stored.value));
  }
  return out;
}

StatusOr<int64_t> write_region_map(Membership& membership, const RegionMap& map, int64_t expected_version) {
  for (const auto& [region, server] : map) LOCUS_RETURN_IF_ERROR(check_key(server));
  return membership.compare_and_set(kRegionMapKey, encode_region_map(map), expected_version);
}

StatusOr<VersionedRegionMap> take_over(Membership& membership, const std::string& dead,
                                       const std::vector<std::string>& survivors) {
  if (survivors.empty()) return invalid_argument("takeover of " + dead + ": no surviving server to take its regions");
  for (const std::string& s : survivors) {
    if (s == dead) return invalid_argument("takeover of " + dead + ": it is named among the survivors");
  }
  // Each retry follows another writer's successful write, so this ends
  // unless writers keep racing; the bound turns a livelock into an error.
  constexpr int kAttempts = 100;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    LOCUS_ASSIGN_OR_RETURN(VersionedRegionMap current, read_region_map(membership));
    VersionedRegionMap next = current;
    size_t dealt = 0;
    for (auto& [region, server] : next.regions) {
      if (server == dead) server = survivors[dealt++ % survivors.size()];
    }
    if (dealt == 0) return current;
    StatusOr<int64_t> written = write_region_map(membership, next.regions, current.version);
    if (written.is_ok()) {
      next.version = *written;
      return next;
    }
    if (written.status().code() != StatusCode::kAborted) return written.status();
  }
  return aborted_error("takeover of " + dead + ": the region map kept changing under " + std::to_string(kAttempts) +
                       " attempts");
}

}  // namespace locus::membership
