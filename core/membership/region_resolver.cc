// RegionResolver: see region_resolver.h.
#include "core/membership/region_resolver.h"

namespace locus::membership {

RegionResolver::RegionResolver(Membership& membership) : membership_(membership) {
  listener_ = membership_.add_listener([this](const Change& change) {
    if (change.kind != Change::Kind::kValue || change.key == kRegionMapKey) {
      stale_.store(true, std::memory_order_release);
    }
  });
}

RegionResolver::~RegionResolver() { membership_.remove_listener(listener_); }

Status RegionResolver::reload() {
  // Marked fresh before reading: a change signalled during the read marks
  // it stale again, so it is never lost.
  stale_.store(false, std::memory_order_release);
  Status st = membership_.watch(kRegionMapKey);
  StatusOr<VersionedRegionMap> map = st.is_ok() ? read_region_map(membership_) : StatusOr<VersionedRegionMap>(st);
  StatusOr<std::vector<Member>> members = map.is_ok() ? membership_.members() : map.status();
  if (!members.is_ok()) {
    stale_.store(true, std::memory_order_release);
    return members.status();
  }
  std::map<std::string, std::string> addresses;
  for (const Member& m : *members) addresses[m.name] = m.address;
  std::lock_guard lock(mu_);
  regions_ = std::move(map->regions);
  addresses_ = std::move(addresses);
  reloads_.fetch_add(1, std::memory_order_relaxed);
  return Status();
}

StatusOr<RegionOwner> RegionResolver::resolve(uint32_t region) {
  if (stale_.load(std::memory_order_acquire)) LOCUS_RETURN_IF_ERROR(reload());
  std::lock_guard lock(mu_);
  auto it = regions_.find(region);
  if (it == regions_.end()) return not_found("region " + std::to_string(region) + " is not in the region map");
  auto at = addresses_.find(it->second);
  if (at == addresses_.end()) {
    return unavailable("region " + std::to_string(region) + " belongs to " + it->second +
                       ", which is not a registered member (it died and its regions are not taken over yet)");
  }
  return RegionOwner{it->second, at->second};
}

void RegionResolver::report_unreachable(const std::string& /*member*/) {
  stale_.store(true, std::memory_order_release);
}

}  // namespace locus::membership
