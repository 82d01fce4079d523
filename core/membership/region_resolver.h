// RegionResolver: a client's cache of the region map and the members'
// addresses. Lookups are served from the cache; it is read again from the
// membership after a change is signalled (a ZooKeeper watch: a member came
// or went, the map was rewritten by a takeover) or after the client reports
// that a server stopped answering, which covers a change the client has not
// been told of yet (docs/membership.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "core/membership/region_map.h"

namespace locus::membership {

struct RegionOwner {
  std::string member;
  std::string address;
};

class RegionResolver {
 public:
  // Watches the region map and listens to `membership`, which must outlive this.
  explicit RegionResolver(Membership& membership);
  ~RegionResolver();
  RegionResolver(const RegionResolver&) = delete;
  RegionResolver& operator=(const RegionResolver&) = delete;

  // The owner of `region`: kNotFound when the map has no such region,
  // kUnavailable when its owner is not a registered member (it died and its
  // regions are not taken over yet: retry later).
  StatusOr<RegionOwner> resolve(uint32_t region);
  // The server `member` did not answer: the next resolve reads the map and
  // the members again.
  void report_unreachable(const std::string& member);
  // How many times the cache was filled (tests: a re-resolve really read).
  uint64_t reloads() const { return reloads_.load(std::memory_order_relaxed); }

 private:
  Status reload();

  Membership& membership_;
  int listener_ = -1;
  std::atomic<bool> stale_{true};
  std::atomic<uint64_t> reloads_{0};
  ShortMutex mu_;
  RegionMap regions_;
  std::map<std::string, std::string> addresses_;  // member -> address
};

}  // namespace locus::membership
